"""Checks what viz/paraview/render_formation.py draws, by reading the PNGs it writes (run
under pvbatch):

    scripts/render --pvbatch tests/paraview/check_render_frames.py \\
        --lvlh RUN_DIR --eci RUN_ECI_DIR --out DIR

RUN_DIR: a run with LVLH frames (the smoke scenario); RUN_ECI_DIR: the same with
output.vtk_frame: eci. Checks (each failure printed; exit status 1 if any):

  eci        every ECI frame shows every satellite, with --camera auto and follow, plain
             and labelled (they were empty after the first: the view's clipping range
             came from stale bounds ~1000 km away);
  orientation  a synthetic LVLH series with one satellite ahead along-track (faulted),
             one radial up (rebooting), one orbit-normal (spare): in the xy view
             along-track points right and radial up; xz: radial up, orbit normal right;
             yz: along-track right, orbit normal up;
  faults     the faulted / rebooting satellites cover several times the pixels of an ok
             one, and a link with fault_down = 1 shows in its colour;
  labels     each axis title is drawn exactly once (found by blanking one title at a time
             and counting the clusters of pixels that change), the along-track title
             under the picture in the xy view and radial at its left;
  title      the title follows summary.json's "scenario", not the run folder's name;
  parallel   --jobs 3 writes the same pixels as --jobs 1, and --movie writes a movie.

Renders are small (320x180 to 480x270) and in this process except the parallel ones.
"""
import argparse
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "viz", "paraview"))

import numpy as np  # noqa: E402

import render_formation as rf  # noqa: E402

failures = []


def fail(message):
    failures.append(message)
    print("check_render_frames: FAIL: " + message, flush=True)


def note(message):
    print("check_render_frames: " + message, flush=True)


def load_png(path):
    """(h, w, 3) int array, top row first."""
    from vtkmodules.vtkIOImage import vtkPNGReader
    from vtkmodules.util.numpy_support import vtk_to_numpy
    r = vtkPNGReader()
    r.SetFileName(path)
    r.Update()
    img = r.GetOutput()
    w, h, _ = img.GetDimensions()
    px = vtk_to_numpy(img.GetPointData().GetScalars()).reshape(h, w, -1)[:, :, :3]
    return px[::-1].astype(int)


# Pixel classes by hue (the spheres are shaded, so ratios, not exact colours).
def green(px):      # ok
    r, g, b = px[..., 0], px[..., 1], px[..., 2]
    return (g > 60) & (g > 1.6 * r) & (g > 1.6 * b)


def red(px):        # faulted (and its halo)
    r, g, b = px[..., 0], px[..., 1], px[..., 2]
    return (r > 60) & (r > 2.5 * g) & (r > 2.5 * b)


def amber(px):      # rebooting (yellow links have g/r ~0.9, amber ~0.7)
    r, g, b = px[..., 0], px[..., 1], px[..., 2]
    return (r > 80) & (g > 0.55 * r) & (g < 0.8 * r) & (b < 0.15 * r)


def grey(px):       # spare
    r, g, b = px[..., 0], px[..., 1], px[..., 2]
    return (r > 70) & (abs(r - g) < 14) & (b >= r - 4) & (b < r + 34)


def magenta(px):    # link down
    r, g, b = px[..., 0], px[..., 1], px[..., 2]
    return (r > 100) & (b > 0.6 * r) & (g < 0.5 * r)


def non_background(px):
    bg = np.array([round(c * 255) for c in rf.BACKGROUND])
    return np.abs(px - bg).sum(axis=2) > 24


def centroid(mask):
    ys, xs = np.nonzero(mask)
    return (float(xs.mean()), float(ys.mean())) if len(xs) else None


def scene_region(px, plain):
    """The part of the picture the formation is drawn in (not the legend or colour bar)."""
    if plain:
        return px
    h, w, _ = px.shape
    x0, y0, x1, y1 = rf.SCENE_BOX
    return px[int((1 - y1) * h) - 2:int((1 - y0) * h) + 2, int(x0 * w) - 2:int(x1 * w) + 2]


def clusters(mask, cell=6):
    """Groups of set pixels: the mask on a grid of cell x cell blocks, 8-connected."""
    h, w = mask.shape
    hh, ww = (h + cell - 1) // cell, (w + cell - 1) // cell
    padded = np.zeros((hh * cell, ww * cell), bool)
    padded[:h, :w] = mask
    coarse = padded.reshape(hh, cell, ww, cell).any(axis=(1, 3))
    seen = np.zeros_like(coarse)
    out = []
    for y0, x0 in zip(*np.nonzero(coarse)):
        if seen[y0, x0]:
            continue
        stack, cells = [(y0, x0)], []
        seen[y0, x0] = True
        while stack:
            y, x = stack.pop()
            cells.append((y, x))
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    yy, xx = y + dy, x + dx
                    if 0 <= yy < hh and 0 <= xx < ww and coarse[yy, xx] and not seen[yy, xx]:
                        seen[yy, xx] = True
                        stack.append((yy, xx))
        cy = (np.mean([c[0] for c in cells]) + 0.5) * cell
        cx = (np.mean([c[1] for c in cells]) + 0.5) * cell
        out.append((cx, cy, len(cells)))
    return out


def render(run_or_pvd, out, *options):
    args = rf.parse_args([run_or_pvd, out, "--no-state", "--quiet"] + list(options))
    run_dir, series = rf.find_series(args.input)
    pngs = []
    for pvd in series:
        pngs += rf.render_series(pvd, os.path.abspath(out), args, run_dir)
    return pngs


# --------------------------------------------------------------------------------------

def check_eci(run_eci, out):
    n_sats = None
    for camera in ("auto", "follow"):
        for plain in (True, False):
            tag = "%s%s" % (camera, "-plain" if plain else "")
            opts = ["--size", "320x180", "--camera", camera, "--jobs", "1"]
            pngs = render(run_eci, os.path.join(out, "eci-" + tag), *(opts + (["--plain"] if plain else [])))
            if not pngs:
                fail("eci %s: no frames rendered" % tag)
                continue
            for png in pngs:
                px = scene_region(load_png(png), plain)
                g = green(px)
                blobs = clusters(g, cell=2)
                n_sats = n_sats or len(blobs)
                note("eci %s %s: %d satellite blob(s), %d satellite pixels, %d drawn"
                     % (tag, os.path.basename(png), len(blobs), int(g.sum()),
                        int(non_background(px).sum())))
                if g.sum() < 5 * 4 or len(blobs) < 1:
                    fail("eci %s: %s shows no satellites (empty frame)" % (tag, png))
            counts = [len(clusters(green(scene_region(load_png(p), plain)), cell=2)) for p in pngs]
            if min(counts) < max(counts) // 2:
                fail("eci %s: satellites seen per frame %s: frames lose the formation" % (tag, counts))


def write_series(run_dir, scenario, frames):
    """A synthetic LVLH run: RUN_DIR/vtk/formation.pvd, its .vtp frames and summary.json.
    frames: [(t, points [N x 3], status [N], links [(a, b)], down [bool per link])]."""
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
    from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter
    from vtkmodules.util.numpy_support import numpy_to_vtk
    vtk_dir = os.path.join(run_dir, "vtk")
    os.makedirs(vtk_dir, exist_ok=True)
    entries = []
    for k, (t, pts, status, links, down) in enumerate(frames):
        pts = np.asarray(pts, float)
        n, m = len(pts), len(links)
        pd = vtkPolyData()
        p = vtkPoints()
        p.SetData(numpy_to_vtk(pts, deep=1))
        pd.SetPoints(p)
        verts, lines = vtkCellArray(), vtkCellArray()
        for i in range(n):
            verts.InsertNextCell(1, [i])
        for a, b in links:
            lines.InsertNextCell(2, [a, b])
        pd.SetVerts(verts)
        pd.SetLines(lines)

        def arr(name, values, kind):
            a = numpy_to_vtk(np.asarray(values, kind), deep=1)
            a.SetName(name)
            return a
        pd.GetPointData().AddArray(arr("id", range(n), np.int32))
        pd.GetPointData().AddArray(arr("status", status, np.int32))
        for name in ("dose_rad", "delta_v_m_s", "nearest_neighbour_m"):
            pd.GetPointData().AddArray(arr(name, np.zeros(n), np.float64))
        pd.GetPointData().SetActiveScalars("status")
        cap = [np.nan] * n + [4.0e12 + 1.0e12 * (j % 3) for j in range(m)]
        dist = [np.nan] * n + [float(np.linalg.norm(pts[a] - pts[b])) for a, b in links]
        cells = {
            "capacity_bps": cap, "margin_db": [np.nan] * n + [3.0] * m,
            "utilisation": [np.nan] * n + [0.5] * m, "distance_m": dist,
            "link_source": [-1] * n + [a for a, _ in links],
            "link_target": [-1] * n + [b for _, b in links],
            "fault_down": [0] * n + [int(d) for d in down],
        }
        for name, values in cells.items():
            kind = np.int32 if name in ("link_source", "link_target", "fault_down") else np.float64
            pd.GetCellData().AddArray(arr(name, values, kind))
        tv = arr("TimeValue", [t], np.float64)
        pd.GetFieldData().AddArray(tv)
        name = "formation_%06d.vtp" % k
        w = vtkXMLPolyDataWriter()
        w.SetFileName(os.path.join(vtk_dir, name))
        w.SetInputData(pd)
        w.Write()
        entries.append('    <DataSet timestep="%g" group="" part="0" file="%s"/>' % (t, name))
    with open(os.path.join(vtk_dir, "formation.pvd"), "w") as f:
        f.write('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1">\n'
                '  <Collection>\n%s\n  </Collection>\n</VTKFile>\n' % "\n".join(entries))
    with open(os.path.join(run_dir, "summary.json"), "w") as f:
        json.dump({"scenario": scenario, "complete": True}, f)


# Satellites: 0 centre ok, 1 ahead along-track (+y) faulted, 2 radial up (+x) rebooting,
# 3 orbit normal (+z) spare, 4..7 ok around the centre.
SYNTH_POINTS = [[0, 0, 0], [0, 300, 0], [150, 0, 0], [0, 0, 120],
                [-150, 0, 0], [0, -300, 0], [-75, -150, -60], [75, -150, 60]]
SYNTH_STATUS = [0, 1, 2, 3, 0, 0, 0, 0]
SYNTH_LINKS = [(0, 4), (0, 5), (4, 6), (5, 7), (6, 7), (0, 6), (4, 5)]
SYNTH_DOWN = [False, False, False, False, False, False, True]


def synth_frames(n=2):
    return [(30.0 * k, SYNTH_POINTS, SYNTH_STATUS, SYNTH_LINKS, SYNTH_DOWN) for k in range(n)]


def check_orientation_and_faults(out):
    run = os.path.join(out, "synthetic-run")
    write_series(run, "orientation-check", synth_frames())
    expect = {  # view: (class that must be right of centre, class that must be above)
        "xy": ("red", "amber"),     # along-track right, radial up
        "xz": ("grey", "amber"),    # orbit normal right, radial up
        "yz": ("red", "grey"),      # along-track right, orbit normal up
    }
    classes = {"red": red, "amber": amber, "grey": grey, "green": green}
    for view, (right_cls, up_cls) in expect.items():
        png = render(run, os.path.join(out, "orient-" + view), "--view", view, "--plain",
                     "--size", "480x270", "--jobs", "1", "--last", "0")[0]
        px = load_png(png)
        h, w, _ = px.shape
        oks = [(x, y) for x, y, _ in clusters(green(px), cell=2)]
        r = centroid(classes[right_cls](px))
        u = centroid(classes[up_cls](px))
        note("%s: ok satellites at %s, %s at %s, %s at %s" % (
            view, [(round(x), round(y)) for x, y in oks], right_cls, r, up_cls, u))
        if len(oks) < 3 or r is None or u is None:
            fail("%s view: satellites missing (ok %d, %s %s, %s %s)"
                 % (view, len(oks), right_cls, r, up_cls, u))
            continue
        # The satellite on +axis lies beyond every ok one (they all sit at or below +60 m
        # on each axis, the special ones at +120 m or more).
        if not r[0] > max(x for x, _ in oks) + 0.03 * w:
            fail("%s view: the %s satellite (+%s) is at %s, not right of the others %s"
                 % (view, right_cls, {"red": "y along-track", "grey": "z orbit normal"}[right_cls],
                    r, oks))
        if not u[1] < min(y for _, y in oks) - 0.03 * h:
            fail("%s view: the %s satellite (+%s) is at %s, not above the others %s"
                 % (view, up_cls, {"amber": "x radial", "grey": "z orbit normal"}[up_cls], u, oks))
        if view == "xy":
            # Faults: the faulted and rebooting satellites stand out from an ok one.
            ok_blobs = clusters(green(px), cell=2)
            ok_area = float(green(px).sum()) / max(1, len(ok_blobs))
            for name, fn in (("faulted", red), ("rebooting", amber)):
                area = float(fn(px).sum())
                note("xy: %s satellite %d pixels, an ok one %.0f" % (name, area, ok_area))
                if area < 3.0 * ok_area:
                    fail("the %s satellite covers %d pixels, an ok one %.0f: not clearly visible"
                         % (name, area, ok_area))
            down = int(magenta(px).sum())
            note("xy: link down %d pixels" % down)
            if down < 40:
                fail("the link with fault_down = 1 is not drawn in its colour (%d pixels)" % down)
    return run


def check_labels(run, out):
    """Each axis title drawn once: blank one title at a time, cluster the changed pixels."""
    saved = {k: list(v) for k, v in rf.AXIS_TITLES.items()}
    base_opts = ["--size", "480x270", "--jobs", "1", "--last", "0"]
    try:
        for view, n_axes in (("iso", 3), ("xy", 2)):
            ref = load_png(render(run, os.path.join(out, "labels-%s" % view), "--view", view,
                                  *base_opts)[0])
            h, w, _ = ref.shape
            seen = []
            for k in range(3):
                titles = list(saved["lvlh"])
                titles[k] = ""
                rf.AXIS_TITLES["lvlh"] = titles
                png = render(run, os.path.join(out, "labels-%s-%d" % (view, k)), "--view", view,
                             *base_opts)[0]
                rf.AXIS_TITLES["lvlh"] = list(saved["lvlh"])
                diff = np.abs(load_png(png) - ref).sum(axis=2) > 30
                found = clusters(diff, cell=6)
                note("%s view: title %r drawn %d time(s) at %s" % (
                    view, saved["lvlh"][k], len(found), [(round(x), round(y)) for x, y, _ in found]))
                if len(found) > 1:
                    fail("%s view: the axis title %r is drawn %d times" % (view, saved["lvlh"][k], len(found)))
                seen.append(found)
            drawn = sum(1 for f in seen if f)
            if drawn != n_axes:
                fail("%s view: %d axis titles drawn, expected %d" % (view, drawn, n_axes))
            if view == "xy" and seen[0] and seen[1]:
                (xx, xy_, _), (yx, yy, _) = seen[0][0], seen[1][0]
                x0, y0, x1, y1 = rf.SCENE_BOX
                cx, cy = (x0 + x1) / 2 * w, (1 - (y0 + y1) / 2) * h
                if not (yy > cy + 0.2 * h and abs(yx - cx) < 0.2 * w):
                    fail("xy view: the along-track title is at (%d, %d), not under the picture"
                         % (yx, yy))
                if not (xx < cx - 0.2 * w and abs(xy_ - cy) < 0.2 * h):
                    fail("xy view: the radial title is at (%d, %d), not at its left" % (xx, xy_))
    finally:
        rf.AXIS_TITLES.clear()
        rf.AXIS_TITLES.update(saved)


def check_title(run, out):
    """The title is the scenario's name: a copy of the run in a folder of another name draws
    the same title; the same frames with another scenario name draw another."""
    h_title = 0.08
    other_folder = os.path.join(out, "a-folder-with-another-name")
    other_scenario = os.path.join(out, "synthetic-run-renamed")
    for d in (other_folder, other_scenario):
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(run, d)
    with open(os.path.join(other_scenario, "summary.json"), "w") as f:
        json.dump({"scenario": "some-other-scenario"}, f)
    opts = ["--size", "480x270", "--jobs", "1", "--last", "0", "--view", "xy"]
    imgs = [load_png(render(d, os.path.join(out, "title-%d" % k), *opts)[0])
            for k, d in enumerate((run, other_folder, other_scenario))]
    h, w, _ = imgs[0].shape
    region = (slice(0, int(h_title * h)), slice(0, int(0.7 * w)))
    a, b, c = (im[region] for im in imgs)
    if not non_background(a).any():
        fail("no title drawn")
    if (np.abs(a - b).sum(axis=2) > 30).any():
        fail("the title changes with the run folder's name (it should be the scenario's)")
    if not (np.abs(a - c).sum(axis=2) > 30).any():
        fail("the title does not change with summary.json's scenario name")


def check_parallel(run, out):
    one = os.path.join(out, "jobs1")
    three = os.path.join(out, "jobs3")
    for d in (one, three):
        shutil.rmtree(d, ignore_errors=True)
    t = time.time()
    a = render(run, one, "--size", "320x180", "--jobs", "1")
    t1 = time.time() - t
    t = time.time()
    b = render(run, three, "--size", "320x180", "--jobs", "3", "--movie", "--fps", "5")
    t3 = time.time() - t
    note("parallel: %d frames with --jobs 1 in %.2f s, %d with --jobs 3 (+ movie) in %.2f s"
         % (len(a), t1, len(b), t3))
    if [os.path.basename(p) for p in a] != [os.path.basename(p) for p in b] or not a:
        fail("--jobs 3 wrote %d frames, --jobs 1 %d" % (len(b), len(a)))
    for p, q in zip(a, b):
        if not np.array_equal(load_png(p), load_png(q)):
            fail("%s differs between --jobs 1 and --jobs 3" % os.path.basename(p))
    movies = [f for f in os.listdir(three) if f.endswith((".avi", ".ogv"))]
    if not movies or os.path.getsize(os.path.join(three, movies[0])) < 1000:
        fail("--movie wrote no movie (%s)" % os.listdir(three))
    leftovers = [f for f in os.listdir(three) if f.startswith(".render-")]
    if leftovers:
        fail("the parallel render left its work folder behind: %s" % leftovers)


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--lvlh", required=True, help="a run directory with LVLH frames")
    p.add_argument("--eci", required=True, help="a run directory with ECI frames")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    out = os.path.abspath(a.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    started = time.time()
    check_eci(a.eci, out)
    run = check_orientation_and_faults(out)
    check_labels(run, out)
    check_title(run, out)
    check_parallel(a.lvlh, out)
    note("%s in %.1f s" % ("PASSED" if not failures else "%d FAILURE(S)" % len(failures),
                           time.time() - started))
    return 1 if failures else 0


if __name__ == "__main__":
    import check_render  # noqa: E402  (pvbatch's exit and status handling, shared)
    check_render.run_checks(main)
