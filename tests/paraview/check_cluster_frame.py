"""A constellation's cluster in its own chief's frame (issue 52, item 14), under pvbatch:

    scripts/render --pvbatch tests/paraview/check_cluster_frame.py RUN_DIR CLUSTER

RUN_DIR is a constellation run written in LVLH (cluster 0's chief frame) with VTK frames. In its
first formation frame:
- cluster CLUSTER lies far from the frame's origin (it flies 100 km or more from cluster 0), yet
  its point data position_cluster_lvlh_m lies within a few km of its own chief, with every pairwise
  distance as in the run's frame (a rigid change of frame, to 1 mm);
- cluster 0's own-frame positions are the frame's points (its chief's frame is the run's);
- what scripts/render --cluster CLUSTER plans: an LVLH view whose grid spans the cluster's own
  few km, not the millions of metres around cluster 0's chief;
- the zoomed-out series' clock names each cluster's distance from cluster 0.
Exit status 0 when every check passes, 1 otherwise.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "viz", "paraview"))

import numpy as np  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402

import render_formation  # noqa: E402
from skyrender.camera import plan_series  # noqa: E402
from skyrender.scene import cluster_distances_text  # noqa: E402
from skyrender.series import new_reader, read_frame, read_pvd  # noqa: E402


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main(run, cluster):
    pvd = os.path.join(run, "vtk", "formation.pvd")
    first = read_pvd(pvd)[0][1]
    reader = new_reader()
    pd, pts, _, _, _ = read_frame(reader, first)
    own_all = pd.GetPointData().GetArray("position_cluster_lvlh_m")
    if own_all is None:
        fail("no point data position_cluster_lvlh_m in " + first)
    own_all = vtk_to_numpy(own_all).reshape(-1, 3)
    cluster_of = vtk_to_numpy(pd.GetPointData().GetArray("cluster_of"))
    keep = cluster_of == cluster
    far = np.linalg.norm(pts[keep].mean(axis=0))
    if far < 50e3:
        fail("cluster %d is only %.0f m from cluster 0's chief: nothing to tell apart" % (cluster, far))
    own = own_all[keep]
    if np.abs(own).max() > 5e3:
        fail("cluster %d's own-frame positions reach %.0f m from its chief" % (cluster, np.abs(own).max()))
    d_run = np.linalg.norm(pts[keep][:, None, :] - pts[keep][None, :, :], axis=2)
    d_own = np.linalg.norm(own[:, None, :] - own[None, :, :], axis=2)
    if np.abs(d_run - d_own).max() > 1e-3:
        fail("pairwise distances differ by %.3g m between the frames" % np.abs(d_run - d_own).max())
    zero = cluster_of == 0
    if np.abs(own_all[zero] - pts[zero]).max() > 1e-6:
        fail("cluster 0's own frame is not the run's: %.3g m apart" % np.abs(own_all[zero] - pts[zero]).max())
    # read_frame(cluster=N) gives the renderer those positions.
    _, drawn, _, _, _ = read_frame(reader, first, cluster=cluster)
    if not np.array_equal(drawn, own):
        fail("read_frame(cluster=%d) does not draw the own-frame positions" % cluster)
    args = render_formation.parse_args([run, "--cluster", str(cluster), "--jobs", "1", "--last", "0"])
    plan = plan_series(pvd, os.path.join(run, "render"), run, args)
    box = plan["grid_box"]
    if plan["kind"] != "lvlh" or max(abs(v) for v in box) > 5e3:
        fail("render plan: kind %s, grid box %s" % (plan["kind"], box))
    if "in its chief's frame" not in plan["title"]:
        fail("title does not say the frame: " + plan["title"])
    cpd, cpts, _, _, _ = read_frame(reader, read_pvd(os.path.join(run, "vtk", "constellation.pvd"))[0][1])
    text = cluster_distances_text(cpd, cpts)
    want = "%d at %s km" % (cluster, "{:,.0f}".format(far / 1e3))
    if not text.startswith("from cluster 0: ") or want not in text:
        fail("constellation clock %r lacks %r" % (text, want))
    print("ok: cluster %d %.0f km from cluster 0's chief, within %.0f m of its own; %s" % (cluster, far / 1e3, np.abs(own).max(), text))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
