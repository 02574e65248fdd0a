"""Headless check of a constellation run's zoomed-out ParaView series (run under pvbatch):

    scripts/render --pvbatch tests/paraview/check_constellation.py RUN_DIR --out DIR

Opens RUN_DIR/vtk/constellation.pvd with ParaView's PVD reader and, at every time step,
checks one point per cluster (satellites per cluster as in /constellation/cluster_of), one
line per pair of clusters joined by a gateway link at that sample (counted from /links/class,
/links/source, /links/target of RUN_DIR/result.h5 by tests/paraview/hdf5_counts.py under
/usr/bin/python3), the gateway links summed over the lines, and the formation frames'
link_class against /links/class. Then renders the series with
viz/paraview/render_formation.py (labelled, and plain) and checks the PNGs are not blank and
show the clusters. Exit status 0 when every check passes, 1 otherwise.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from paraview import servermanager  # noqa: E402
from paraview.simple import PVDReader  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402

import check_render  # noqa: E402  (its fail(), image_stats(), load_png() and h5_counts())
import render_formation  # noqa: E402  (on the path check_render set)

fail = check_render.fail


def frames(pvd):
    """[(time, vtkPolyData)] of every time step of pvd."""
    reader = PVDReader(FileName=os.path.abspath(pvd))
    reader.UpdatePipelineInformation()
    out = []
    for t in [float(v) for v in reader.TimestepValues]:
        reader.UpdatePipeline(t)
        out.append((t, servermanager.Fetch(reader)))
    return out


def sample_of(counts, t):
    k = min(range(len(counts["time_s"])), key=lambda i: abs(counts["time_s"][i] - t))
    if abs(counts["time_s"][k] - t) > 1e-6 * max(1.0, abs(t)):
        fail(".pvd time %.9g s has no matching /time_s entry" % t)
        return None
    return k


def check_series(run, counts):
    series = frames(os.path.join(run, "vtk", "constellation.pvd"))
    main = dict(frames(os.path.join(run, "vtk", "formation.pvd")))
    if not series or len(series) != len(main):
        fail("constellation.pvd has %d time steps, formation.pvd %d" % (len(series), len(main)))
    for t, data in series:
        k = sample_of(counts, t)
        if k is None:
            continue
        n, nv, nl = data.GetNumberOfPoints(), data.GetNumberOfVerts(), data.GetNumberOfLines()
        cd, pd = data.GetCellData(), data.GetPointData()
        gw = cd.GetArray("gateway_links")
        gw_sum = int(vtk_to_numpy(gw)[nv:].sum()) if gw is not None else -1
        sats = pd.GetArray("satellites")
        sats = [int(v) for v in vtk_to_numpy(sats)] if sats is not None else None
        print("check_constellation: t = %g s: %d clusters, %d pairs joined, %d gateway links "
              "(result.h5: %d, %d, %d)" % (t, n, nl, gw_sum, counts["clusters"],
                                            counts["cluster_pairs"][k], counts["gateway_links"][k]))
        if n != counts["clusters"] or nv != n:
            fail("t = %g s: %d points, %d verts, expected %d clusters" % (t, n, nv, counts["clusters"]))
        if nl != counts["cluster_pairs"][k]:
            fail("t = %g s: %d lines, expected %d joined cluster pairs" % (t, nl, counts["cluster_pairs"][k]))
        if gw_sum != counts["gateway_links"][k]:
            fail("t = %g s: lines carry %d gateway links, result.h5 has %d" % (t, gw_sum, counts["gateway_links"][k]))
        if sats != counts["satellites_per_cluster"]:
            fail("t = %g s: satellites per cluster %s, expected %s" % (t, sats, counts["satellites_per_cluster"]))
        for name in ("capacity_bps", "latency_s", "link_source", "link_target"):
            if cd.GetArray(name) is None or cd.GetArray(name).GetNumberOfTuples() != nv + nl:
                fail("t = %g s: cell array %s missing or wrong length" % (t, name))
        cls = main[t].GetCellData().GetArray("link_class") if t in main else None
        if cls is None:
            fail("t = %g s: formation frame has no link_class" % t)
        elif int((vtk_to_numpy(cls) == 1).sum()) != counts["gateway_links"][k]:
            fail("t = %g s: formation link_class marks %d gateway links, result.h5 %d"
                 % (t, int((vtk_to_numpy(cls) == 1).sum()), counts["gateway_links"][k]))


def check_render_pngs(run, out):
    pvd = os.path.join(run, "vtk", "constellation.pvd")
    for plain in (False, True):
        opts = [pvd, os.path.join(out, "plain" if plain else "labelled"), "--size", "640x360",
                "--jobs", "1", "--no-state", "--quiet"] + (["--plain"] if plain else [])
        args = render_formation.parse_args(opts)
        pngs = render_formation.render_series(pvd, args.output, args, run)
        if not pngs:
            fail("no constellation frames rendered (%s)" % ("plain" if plain else "labelled"))
        for png in pngs:
            frac, count, colours = check_render.image_stats(png)
            px = check_render.load_png(png)
            green = int(((px[:, :, 1] > 150) & (px[:, :, 0] < 120) & (px[:, :, 2] < 140)).sum())
            print("check_constellation: %s: %.2f%% drawn, %d colours, %d cluster pixels"
                  % (png, 100 * frac, colours, green))
            if count < 200 or colours < 8:
                fail("%s is blank (%d pixels drawn, %d colours)" % (png, count, colours))
            if green < 4 * 50:
                fail("%s shows no clusters (%d green pixels)" % (png, green))


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("run")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    counts = check_render.h5_counts(os.path.join(a.run, "result.h5"))
    if counts is None or "clusters" not in counts:
        fail("%s/result.h5 is not a constellation run" % a.run)
        return 1
    check_series(a.run, counts)
    check_render_pngs(a.run, os.path.abspath(a.out))
    failures = check_render.failures
    print("check_constellation: %s" % ("PASSED" if not failures else "%d FAILURE(S)" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    check_render.run_checks(main)
