"""Render a skyfabric run's formation to PNG frames, headless, with ParaView's pvbatch.

    scripts/render RUN_DIR [options]                      (the usual way)
    xvfb-run -a pvbatch viz/paraview/render_formation.py RUN_DIR_or_PVD [OUT_DIR] [options]

RUN_DIR is a run's output directory; every RUN_DIR/vtk/*.pvd is rendered (e.g.
formation.pvd), each into OUT_DIR/<pvd name>/frame_NNNNNN.png.
A single .pvd path renders just that series. OUT_DIR defaults to RUN_DIR/render.

What is drawn: satellites as sphere-shaded points coloured by status (ok / faulted /
rebooting / spare, with a legend), links as lines coloured by capacity_bps (a colour bar,
range fixed over the series so frames compare), the time and frame in a label, and the
LVLH axes (x radial, y along-track, z orbit normal) as a labelled grid.

Options:
  --stride N          render every Nth time step (default 1)
  --size WxH          image size in pixels (default 1280x720)
  --first N --last N  restrict to time-step indices [first, last]
  --view iso|xy|xz|yz camera direction (default iso); xy looks down the orbit normal
  --camera auto|fixed|follow
                      fixed: one camera fitted to every rendered frame (LVLH default);
                      follow: refit each frame (ECI default, the formation moves ~7000 km;
                      a series is taken as ECI when its name contains "eci" or its first
                      frame lies more than 100 km from the origin)
  --movie             also write <series>.avi (or .ogv) where this ParaView can
  --plain             no labels, colour bars or axes: satellites and links only
  --no-state          do not write OUT_DIR/<series>.pvsm

A ParaView state OUT_DIR/<series>.pvsm is written beside the frames for GUI users:
    paraview --state=RUN_DIR/render/formation_lvlh.pvsm
"""

import argparse
import glob
import math
import os
import sys

from paraview.simple import (  # noqa: F401  (pvbatch provides these)
    ColorBy, CreateView, Delete, GetColorTransferFunction, GetOpacityTransferFunction,
    GetScalarBar, GetParaViewVersion, Hide, PVDReader, Render, SaveScreenshot, SaveState,
    SetActiveView, Show, Text, Threshold,
)

STATUS_NAMES = ["ok", "faulted", "rebooting", "spare"]
STATUS_COLOURS = [
    0.20, 0.80, 0.30,   # ok: green
    0.90, 0.15, 0.15,   # faulted: red
    1.00, 0.70, 0.00,   # rebooting: amber
    0.55, 0.55, 0.60,   # spare: grey
]
BACKGROUND = [0.08, 0.09, 0.13]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("input", help="run directory (uses vtk/*.pvd) or a .pvd file")
    p.add_argument("output", nargs="?", help="output directory (default RUN_DIR/render)")
    p.add_argument("--stride", type=int, default=1)
    p.add_argument("--size", default="1280x720")
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--last", type=int, default=None)
    p.add_argument("--view", choices=["iso", "xy", "xz", "yz"], default="iso")
    p.add_argument("--camera", choices=["auto", "fixed", "follow"], default="auto")
    p.add_argument("--movie", action="store_true")
    p.add_argument("--plain", action="store_true")
    p.add_argument("--no-state", action="store_true")
    a = p.parse_args(argv)
    if a.stride < 1:
        p.error("--stride must be >= 1")
    try:
        w, h = (int(v) for v in a.size.lower().split("x"))
        a.size = [w, h]
    except ValueError:
        p.error("--size must look like 1280x720")
    return a


def find_series(path):
    """Returns (run_dir, [pvd paths])."""
    path = os.path.abspath(path)
    if os.path.isfile(path) and path.endswith(".pvd"):
        vtk_dir = os.path.dirname(path)
        run_dir = os.path.dirname(vtk_dir) if os.path.basename(vtk_dir) == "vtk" else vtk_dir
        return run_dir, [path]
    if os.path.isdir(path):
        found = sorted(glob.glob(os.path.join(path, "vtk", "*.pvd"))) or \
            sorted(glob.glob(os.path.join(path, "*.pvd")))
        if found:
            return path, found
    sys.exit("render_formation: no .pvd found at %s (expected RUN_DIR/vtk/*.pvd or a .pvd file)"
             % path)


def union_bounds(source, times):
    lo = [math.inf] * 3
    hi = [-math.inf] * 3
    for t in times:
        source.UpdatePipeline(t)
        b = source.GetDataInformation().GetBounds()
        if b[0] > b[1]:
            continue
        for k in range(3):
            lo[k] = min(lo[k], b[2 * k])
            hi[k] = max(hi[k], b[2 * k + 1])
    if lo[0] > hi[0]:
        return None
    return [lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]]


def capacity_range(links, times):
    lo, hi = math.inf, -math.inf
    for t in times:
        links.UpdatePipeline(t)
        info = links.GetCellDataInformation().GetArray("capacity_bps")
        if info is None:
            continue
        r = info.GetRange(0)
        if r[0] <= r[1] and math.isfinite(r[0]) and math.isfinite(r[1]):
            lo, hi = min(lo, r[0]), max(hi, r[1])
    if lo > hi:
        return None
    if lo == hi:
        lo, hi = (0.0, hi) if hi > 0 else (0.0, 1.0)
    return lo, hi


def place_camera(view, bounds, direction, up):
    cx, cy, cz = [(bounds[2 * k] + bounds[2 * k + 1]) / 2 for k in range(3)]
    span = max(bounds[1] - bounds[0], bounds[3] - bounds[2], bounds[5] - bounds[4], 1.0)
    n = math.sqrt(sum(d * d for d in direction))
    d = [v / n for v in direction]
    dist = 3.0 * span
    view.CameraFocalPoint = [cx, cy, cz]
    view.CameraPosition = [cx + dist * d[0], cy + dist * d[1], cz + dist * d[2]]
    view.CameraViewUp = up
    view.CameraParallelProjection = 0
    view.ResetCamera(bounds[0], bounds[1], bounds[2], bounds[3], bounds[4], bounds[5])


VIEWS = {
    # direction from the focal point to the camera, view-up
    "iso": ([1.0, -1.6, 1.2], [0.0, 0.0, 1.0]),
    "xy": ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0]),   # down the orbit normal: radial up, along-track across
    "xz": ([0.0, -1.0, 0.0], [0.0, 0.0, 1.0]),
    "yz": ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),   # from above (zenith)
}


def render_series(pvd, out_dir, args):
    name = os.path.splitext(os.path.basename(pvd))[0]
    series_dir = os.path.join(out_dir, name)
    os.makedirs(series_dir, exist_ok=True)

    reader = PVDReader(registrationName=name, FileName=pvd)
    reader.UpdatePipelineInformation()
    times = [float(t) for t in reader.TimestepValues] or [0.0]
    # ECI when the name says so, or when the formation sits far from the origin (LVLH
    # positions are metres to kilometres about the chief; ECI ones ~7000 km from Earth).
    reader.UpdatePipeline(times[0])
    b0 = reader.GetDataInformation().GetBounds()
    centre = [(b0[2 * k] + b0[2 * k + 1]) / 2 for k in range(3)] if b0[0] <= b0[1] else [0] * 3
    span0 = max(b0[1] - b0[0], b0[3] - b0[2], b0[5] - b0[4]) if b0[0] <= b0[1] else 0.0
    far = math.sqrt(sum(c * c for c in centre))
    is_eci = "eci" in name.lower() or (far > 1.0e5 and far > 10.0 * span0)
    follow = args.camera == "follow" or (args.camera == "auto" and is_eci)
    last = len(times) - 1 if args.last is None else min(args.last, len(times) - 1)
    indices = list(range(max(args.first, 0), last + 1, args.stride))
    if not indices:
        print("render_formation: %s: no time steps selected" % pvd)
        return []
    chosen = [times[i] for i in indices]

    # Links only: the line cells carry link_source >= 0 (vertex cells carry -1).
    links = Threshold(registrationName=name + "_links", Input=reader)
    links.Scalars = ["CELLS", "link_source"]
    links.LowerThreshold = 0
    links.UpperThreshold = 2 ** 31 - 1
    if hasattr(links, "ThresholdMethod"):
        links.ThresholdMethod = "Between"

    view = CreateView("RenderView")
    SetActiveView(view)
    view.ViewSize = args.size
    view.Background = BACKGROUND
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0
    view.OrientationAxesVisibility = 0 if args.plain else 1
    view.OrientationAxesLabelColor = [1, 1, 1]

    # Satellites: the reader's points, drawn as shaded spheres, coloured by status.
    sats = Show(reader, view)
    sats.SetRepresentationType("Points")
    sats.RenderPointsAsSpheres = 1
    sats.PointSize = max(8, args.size[1] // 55)
    ColorBy(sats, ("POINTS", "status"))
    status_lut = GetColorTransferFunction("status")
    status_lut.InterpretValuesAsCategories = 1
    status_lut.Annotations = [v for i, s in enumerate(STATUS_NAMES) for v in (str(i), s)]
    status_lut.IndexedColors = STATUS_COLOURS
    status_bar = GetScalarBar(status_lut, view)
    status_bar.Title = "satellite status"
    status_bar.ComponentTitle = ""
    status_bar.WindowLocation = "Any Location"
    status_bar.Position = [0.85, 0.05]
    status_bar.ScalarBarLength = 0.25
    status_bar.TitleColor = [1, 1, 1]
    status_bar.LabelColor = [1, 1, 1]
    sats.SetScalarBarVisibility(view, not args.plain)

    # Links: lines (drawn as tubes) coloured by capacity.
    link_disp = Show(links, view)
    link_disp.SetRepresentationType("Surface")
    link_disp.LineWidth = max(2.0, args.size[1] / 360.0)
    link_disp.RenderLinesAsTubes = 1
    ColorBy(link_disp, ("CELLS", "capacity_bps"))
    cap_lut = GetColorTransferFunction("capacity_bps")
    cap_lut.ApplyPreset("Viridis (matplotlib)", True)
    cap_range = capacity_range(links, chosen)
    if cap_range:
        cap_lut.RescaleTransferFunction(cap_range[0], cap_range[1])
        GetOpacityTransferFunction("capacity_bps").RescaleTransferFunction(*cap_range)
        cap_lut.AutomaticRescaleRangeMode = "Never"
    cap_bar = GetScalarBar(cap_lut, view)
    cap_bar.Title = "link capacity [bit/s]"
    cap_bar.ComponentTitle = ""
    cap_bar.RangeLabelFormat = "%-#.3g"
    cap_bar.WindowLocation = "Any Location"
    cap_bar.Position = [0.85, 0.40]
    cap_bar.ScalarBarLength = 0.5
    cap_bar.TitleColor = [1, 1, 1]
    cap_bar.LabelColor = [1, 1, 1]
    link_disp.SetScalarBarVisibility(view, not args.plain)

    # Labels: title and time.
    title = Text(registrationName=name + "_title")
    title.Text = "skyfabric  %s  (%s)" % (os.path.basename(os.path.dirname(os.path.dirname(pvd)))
                                         or name, "ECI" if is_eci else "LVLH")
    title_disp = Show(title, view)
    title_disp.WindowLocation = "Upper Left Corner"
    title_disp.FontSize = 16
    title_disp.Color = [1, 1, 1]
    clock = Text(registrationName=name + "_clock")
    clock_disp = Show(clock, view)
    clock_disp.WindowLocation = "Lower Left Corner"
    clock_disp.FontSize = 14
    clock_disp.Color = [0.9, 0.9, 0.9]

    direction, up = VIEWS[args.view]
    if args.plain:
        Hide(title, view)
        Hide(clock, view)
    elif not is_eci:
        # Axis grid labelled with the LVLH axes (metres).
        grid = view.AxesGrid
        grid.Visibility = 1
        grid.XTitle = "x radial [m]"
        grid.YTitle = "y along-track [m]"
        grid.ZTitle = "z orbit normal [m]"
        for attr in ("XTitleColor", "YTitleColor", "ZTitleColor", "XLabelColor",
                     "YLabelColor", "ZLabelColor", "GridColor"):
            setattr(grid, attr, [0.8, 0.8, 0.8])

    if not follow:
        bounds = union_bounds(reader, chosen)
        if bounds:
            place_camera(view, bounds, direction, up)

    written = []
    for frame_no, (i, t) in enumerate(zip(indices, chosen)):
        view.ViewTime = t
        reader.UpdatePipeline(t)
        links.UpdatePipeline(t)
        n_sats = reader.GetDataInformation().GetNumberOfPoints()
        n_links = links.GetDataInformation().GetNumberOfCells()
        clock.Text = "t = %.1f s  (%.2f min)   step %d/%d   satellites %d   links %d" % (
            t, t / 60.0, i, len(times) - 1, n_sats, n_links)
        if follow:
            b = reader.GetDataInformation().GetBounds()
            if b[0] <= b[1]:
                place_camera(view, list(b), direction, up)
        Render(view)
        png = os.path.join(series_dir, "frame_%06d.png" % i)
        SaveScreenshot(png, view, ImageResolution=args.size)
        written.append(png)
        print("render_formation: wrote %s" % png)

    if not args.no_state:
        state = os.path.join(out_dir, name + ".pvsm")
        SaveState(state)
        print("render_formation: wrote ParaView state %s (paraview --state=%s)" % (state, state))
    if args.movie:
        write_movie(written, os.path.join(out_dir, name))
    return written


def write_movie(pngs, stem):
    """Assembles PNG frames into a movie with VTK's movie writers, where this build has one."""
    if not pngs:
        return
    try:
        from vtkmodules.vtkIOImage import vtkPNGReader
    except ImportError:
        print("render_formation: no vtkPNGReader; no movie")
        return
    writer, path = None, None
    try:
        from vtkmodules.vtkIOFFMPEG import vtkFFMPEGWriter
        writer, path = vtkFFMPEGWriter(), stem + ".avi"
    except ImportError:
        try:
            from vtkmodules.vtkIOOggTheora import vtkOggTheoraWriter
            writer, path = vtkOggTheoraWriter(), stem + ".ogv"
        except ImportError:
            pass
    if writer is None:
        print("render_formation: this ParaView has neither FFMPEG nor Ogg Theora; "
              "no movie (the PNG frames are written)")
        return
    reader = vtkPNGReader()
    writer.SetInputConnection(reader.GetOutputPort())
    writer.SetFileName(path)
    if hasattr(writer, "SetRate"):
        writer.SetRate(10)
    reader.SetFileName(pngs[0])
    reader.Update()
    writer.Start()
    for png in pngs:
        reader.SetFileName(png)
        reader.Modified()
        reader.Update()
        writer.Write()
    writer.End()
    print("render_formation: wrote movie %s" % path)


def main(argv):
    args = parse_args(argv)
    run_dir, series = find_series(args.input)
    out_dir = os.path.abspath(args.output or os.path.join(run_dir, "render"))
    os.makedirs(out_dir, exist_ok=True)
    total = 0
    for pvd in series:
        total += len(render_series(pvd, out_dir, args))
    print("render_formation: %d PNG frame(s) under %s (ParaView %s)" % (
        total, out_dir, GetParaViewVersion()))
    return 0 if total else 1


def exit_now(code):
    """Leaves pvbatch with CODE. sys.exit() inside pvbatch 5.11 tears the X/GLX context down
    in the wrong order (GLXBadContext, status 1), so: return normally on success, and on
    failure flush and leave with os._exit, after every file has been closed."""
    if code == 0:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    try:
        status = main(sys.argv[1:])
    except SystemExit as e:  # argparse errors, sys.exit("message")
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            status = 2
        else:
            status = e.code or 0
    except Exception:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        status = 1
    exit_now(status)
