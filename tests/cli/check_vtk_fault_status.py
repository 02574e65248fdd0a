#!/usr/bin/python3
"""Checks the VTK frames' satellite `status` of a run against its /radiation/events.

Independently of skyfabric's code: a satellite is rebooting (2) at frame time t when a chip or host
crash hit it in (t - reboot_s, t]; else faulted (1) when any event hit it since the previous frame;
otherwise ok (0) or spare (3). Frame 0 must show the highest-numbered satellite as a spare (or hit).
Prints "ok" and exits 0, else raises.

  /usr/bin/python3 tests/cli/check_vtk_fault_status.py RUN_DIR REBOOT_S
"""
import glob
import sys

import h5py
import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOXML import vtkXMLPolyDataReader

run_dir, reboot_s = sys.argv[1], float(sys.argv[2])
with h5py.File(run_dir + "/result.h5", "r") as f:
    n = int(f.attrs["satellite_count"])
    ev = f["radiation/events"]
    times, sats, kinds = ev["time_s"][:], ev["satellite"][:], ev["kind"][:]
crash = (kinds == 2) | (kinds == 3)
files = sorted(glob.glob(run_dir + "/vtk/formation_*.vtp"))
assert files, "no frames"
seen = set()
previous = -1.0
for k, name in enumerate(files):
    reader = vtkXMLPolyDataReader()
    reader.SetFileName(name)
    reader.Update()
    out = reader.GetOutput()
    status = vtk_to_numpy(out.GetPointData().GetArray("status"))
    t = out.GetFieldData().GetArray("TimeValue").GetValue(0)
    assert len(status) == n, (name, len(status), n)
    for s in range(n):
        mine = sats == s
        if np.any(mine & crash & (times <= t) & (times + reboot_s > t)):
            want = {2}
        elif np.any(mine & (times > previous) & (times <= t)):
            want = {1}
        else:
            want = {0, 3}
        assert int(status[s]) in want, f"frame {k} (t = {t} s) satellite {s}: status {status[s]}, expected {want}"
        seen.add(int(status[s]))
    if k == 0:
        assert status[n - 1] in (1, 2, 3), f"frame 0: the spare shows {status[n - 1]}"
    previous = t
assert {1, 2, 3} <= seen, f"statuses seen: {sorted(seen)}"
print("ok", len(files), "frames,", len(times), "events, statuses", sorted(seen))
