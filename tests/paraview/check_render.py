"""Headless check that a skyfabric run opens and renders in ParaView (run under pvbatch).

    scripts/render --pvbatch tests/paraview/check_render.py PVD [options]
    (= xvfb-run -a pvbatch tests/paraview/check_render.py PVD [options], with the private
       python3-paraview first on PYTHONPATH)

Loads PVD with ParaView's PVD reader and, at several time steps (first, middle, last by
default), checks the number of points (satellites) and lines (links), the arrays the
output contract promises, and that TimeValue matches the .pvd time. Then renders those
steps with viz/paraview/render_formation.py (plain: satellites and links only, no labels
or colour bars) and checks each PNG is not blank: enough pixels that are not background,
and enough distinct colours.

Expected counts come from
  --h5 RESULT.h5     the run's HDF5 file: counts are read by tests/paraview/hdf5_counts.py
                     under Debian's /usr/bin/python3 (h5py) in a subprocess, matched to
                     each .pvd time by /time_s; pvbatch itself has no h5py, and loading a
                     second HDF5 library into pvbatch is avoided on purpose;
  --points N --lines L[,L...]   or given directly (one L for all checked steps, or one each).
With neither, only the internal consistency and the render are checked.

Options: --steps K (number of time steps to check, default 3), --frames N (expected number
of datasets in the .pvd), --out DIR (where PNGs go; default a temp dir), --size WxH.
Exit status 0 when every check passes, 1 otherwise (each failure is printed).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "viz", "paraview"))

from paraview import servermanager  # noqa: E402
from paraview.simple import PVDReader  # noqa: E402

import render_formation  # noqa: E402

POINT_ARRAYS = ["id", "status", "dose_rad", "delta_v_m_s", "nearest_neighbour_m"]
CELL_ARRAYS = ["capacity_bps", "margin_db", "utilisation", "distance_m"]
failures = []


def fail(message):
    failures.append(message)
    print("check_render: FAIL: " + message)


def h5_counts(h5):
    """tests/paraview/hdf5_counts.py's JSON for h5, or None (a failure is recorded)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    out = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "hdf5_counts.py"), h5],
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        fail("reading %s: %s" % (h5, out.stderr.strip() or out.stdout.strip()))
        return None
    return json.loads(out.stdout)


def expected_from_h5(h5, pvd_times):
    c = h5_counts(h5)
    if c is None:
        return None, {}
    lines = {}
    for t in pvd_times:
        k = min(range(len(c["time_s"])), key=lambda i: abs(c["time_s"][i] - t), default=None)
        if k is None or abs(c["time_s"][k] - t) > 1e-6 * max(1.0, abs(t)):
            fail(".pvd time %.9g s has no matching /time_s entry in %s" % (t, h5))
            continue
        if c["lines"] is not None:
            lines[t] = c["lines"][k]
    return c["points"], lines


def load_png(png):
    """The PNG's RGB pixels as an int array (h, w, 3), bottom row first."""
    from vtkmodules.vtkIOImage import vtkPNGReader
    from vtkmodules.util.numpy_support import vtk_to_numpy
    r = vtkPNGReader()
    r.SetFileName(png)
    r.Update()
    img = r.GetOutput()
    w, h, _ = img.GetDimensions()
    return vtk_to_numpy(img.GetPointData().GetScalars()).reshape(h, w, -1)[:, :, :3].astype(int)


def image_stats(png):
    import numpy as np
    px = load_png(png)
    bg = np.array([round(c * 255) for c in render_formation.BACKGROUND])
    differs = np.abs(px - bg).sum(axis=2) > 24
    colours = len(np.unique(px.reshape(-1, 3), axis=0))
    return float(differs.mean()), int(differs.sum()), colours


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("pvd")
    p.add_argument("--h5")
    p.add_argument("--points", type=int)
    p.add_argument("--lines")
    p.add_argument("--frames", type=int)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--out")
    p.add_argument("--size", default="640x480")
    a = p.parse_args(argv)

    if not os.path.isfile(a.pvd):
        fail("no such .pvd: %s" % a.pvd)
        return 1
    reader = PVDReader(FileName=os.path.abspath(a.pvd))
    reader.UpdatePipelineInformation()
    times = [float(t) for t in reader.TimestepValues]
    print("check_render: %s: %d time step(s)" % (a.pvd, len(times)))
    if not times:
        fail("the .pvd lists no time steps")
        return 1
    if a.frames is not None and len(times) != a.frames:
        fail("the .pvd lists %d time steps, expected %d" % (len(times), a.frames))

    k = max(1, min(a.steps, len(times)))
    indices = sorted({round(i * (len(times) - 1) / max(k - 1, 1)) for i in range(k)})
    chosen = [times[i] for i in indices]

    exp_points, exp_lines = a.points, {}
    if a.h5:
        exp_points, exp_lines = expected_from_h5(a.h5, chosen)
        if a.points is not None:
            exp_points = a.points
    if a.lines:
        given = [int(v) for v in a.lines.split(",")]
        if len(given) not in (1, len(chosen)):
            fail("--lines gives %d values for %d checked steps" % (len(given), len(chosen)))
        else:
            exp_lines = {t: given[0 if len(given) == 1 else j] for j, t in enumerate(chosen)}

    for i, t in zip(indices, chosen):
        reader.UpdatePipeline(t)
        data = servermanager.Fetch(reader)
        if data is None or not data.IsA("vtkPolyData"):
            fail("step %d (t = %g s): reader output is %s, not vtkPolyData"
                 % (i, t, data.GetClassName() if data else None))
            continue
        n_pts, n_verts, n_lines = data.GetNumberOfPoints(), data.GetNumberOfVerts(), data.GetNumberOfLines()
        print("check_render: step %d t = %g s: %d points, %d verts, %d lines"
              % (i, t, n_pts, n_verts, n_lines))
        if exp_points is not None and n_pts != exp_points:
            fail("step %d (t = %g s): %d points, expected %d" % (i, t, n_pts, exp_points))
        if n_verts != n_pts:
            fail("step %d: %d vertex cells for %d points" % (i, n_verts, n_pts))
        if t in exp_lines and n_lines != exp_lines[t]:
            fail("step %d (t = %g s): %d lines, expected %d" % (i, t, n_lines, exp_lines[t]))
        for name in POINT_ARRAYS:
            arr = data.GetPointData().GetArray(name)
            if arr is None or arr.GetNumberOfTuples() != n_pts:
                fail("step %d: point array %s missing or wrong length" % (i, name))
        for name in CELL_ARRAYS:
            arr = data.GetCellData().GetArray(name)
            if arr is None or arr.GetNumberOfTuples() != n_verts + n_lines:
                fail("step %d: cell array %s missing or wrong length" % (i, name))
        tv = data.GetFieldData().GetArray("TimeValue")
        if tv is None or abs(tv.GetTuple1(0) - t) > 1e-9 * max(1.0, abs(t)):
            fail("step %d: field TimeValue %s does not match .pvd time %g"
                 % (i, tv.GetTuple1(0) if tv else None, t))

    out = a.out or tempfile.mkdtemp(prefix="skyfabric_check_render_")
    args = render_formation.parse_args(
        [os.path.abspath(a.pvd), out, "--size", a.size, "--plain", "--no-state"])
    pngs = []
    for i in indices:
        args.first, args.last = i, i
        pngs += render_formation.render_series(os.path.abspath(a.pvd), out, args)
    if len(pngs) != len(indices):
        fail("rendered %d PNG(s) for %d steps" % (len(pngs), len(indices)))
    for png in pngs:
        frac, count, colours = image_stats(png)
        print("check_render: %s: %.2f%% non-background pixels (%d), %d distinct colours"
              % (png, 100 * frac, count, colours))
        if count < 50 or frac < 0.001:
            fail("%s is blank: only %d non-background pixels" % (png, count))
        if colours < 8:
            fail("%s has only %d distinct colours" % (png, colours))

    print("check_render: %s" % ("PASSED" if not failures else "%d FAILURE(S)" % len(failures)))
    return 1 if failures else 0


def run_checks(main):
    """Runs main(argv) as a pvbatch check script and leaves with its status (also used by
    tests/paraview/check_constellation.py and check_render_frames.py)."""
    try:
        status = main(sys.argv[1:])
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 2
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
    except Exception:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        status = 1
    render_formation.exit_now(status)


if __name__ == "__main__":
    run_checks(main)
