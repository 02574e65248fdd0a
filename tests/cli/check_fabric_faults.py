#!/usr/bin/python3
"""Checks a run whose faults act on the fabric (issue 13), independently of skyfabric's code:

- summary.json says the faults were coupled and trial 0 lost links; the trials lost ranks and ran
  steps on a damaged fabric;
- /radiation/trials has one row per trial, its goodput median is the summary's headline goodput,
  no loss is negative, and each trial's time lost less its fabric gain adds up below the run's length;
- /radiation/link_outages (trial 0) lie in the run, each link joined two satellites;
- every VTK frame marks `fault_down` on exactly the links trial 0's outages hold down at its time.
Prints "ok" and exits 0, else raises.

  /usr/bin/python3 tests/cli/check_fabric_faults.py RUN_DIR
"""
import glob
import json
import sys

import h5py
import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOXML import vtkXMLPolyDataReader

run_dir = sys.argv[1]
s = json.load(open(run_dir + "/summary.json"))
r = s["radiation"]
assert r["fabric"]["coupled"], r["fabric"]
assert r["trial0"]["links_lost"] > 0, r  # trial 0 (the frames' outages)
with h5py.File(run_dir + "/result.h5", "r") as f:
    T = float(f.attrs["simulated_s"])
    n = int(f.attrs["satellite_count"])
    tr = f["radiation/trials"]
    goodput = tr["goodput"][:]
    assert len(goodput) == r["monte_carlo"]["trials"], len(goodput)
    assert abs(np.median(goodput) - r["monte_carlo"]["goodput"]["median"]) < 1e-12
    assert abs(np.median(goodput) - r["goodput"]) < 1e-12  # the headline is the estimate, not trial 0
    assert r["goodput_interval"] == [goodput.min(), goodput.max()] and r["interval"] == "min_max"
    losses = ("lost_faults_s", "lost_restarts_s", "lost_checkpoints_s", "lost_fabric_s", "lost_shrunk_ring_s")
    assert all(np.all(tr[k][:] >= 0) for k in losses + ("gained_fabric_s",))
    lost = sum(tr[k][:] for k in losses) - tr["gained_fabric_s"][:]
    assert np.all(goodput * T + lost <= T * (1 + 1e-9)), (goodput * T + lost).max()
    # Over the trials ranks were lost and steps ran on a damaged fabric.
    assert tr["ranks_lost"][:].sum() > 0 and tr["links_lost"][:].sum() > 0 and tr["damaged_steps"][:].sum() > 0
    lo = f["radiation/link_outages"]
    start, end, src, dst = lo["start_s"][:], lo["end_s"][:], lo["source"][:], lo["target"][:]
    assert len(start) == r["trial0"]["links_lost"], (len(start), r["trial0"]["links_lost"])
    assert np.all((start >= 0) & (start <= T) & (end > start) & (src < dst) & (dst < n))
marked = 0
for name in sorted(glob.glob(run_dir + "/vtk/formation_*.vtp")):
    reader = vtkXMLPolyDataReader()
    reader.SetFileName(name)
    reader.Update()
    out = reader.GetOutput()
    t = out.GetFieldData().GetArray("TimeValue").GetValue(0)
    cd = out.GetCellData()
    down = vtk_to_numpy(cd.GetArray("fault_down"))
    a, b = vtk_to_numpy(cd.GetArray("link_source")), vtk_to_numpy(cd.GetArray("link_target"))
    held = {(int(x), int(y)) for x, y, t0, t1 in zip(src, dst, start, end) if t0 <= t < t1}
    want = np.array([(int(x), int(y)) in held for x, y in zip(a, b)])
    assert np.array_equal(down == 1, want), (name, np.flatnonzero(down), held)
    marked += int(want.sum())
assert marked > 0, "no frame shows a link down"
print("ok", len(goodput), "trials,", len(start), "outages,", marked, "link-frames down")
