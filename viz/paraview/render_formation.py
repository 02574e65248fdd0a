"""Render a skyfabric run's formation to PNG frames, headless, in pvbatch's Python.

    scripts/render RUN_DIR [OUT_DIR] [options]            (the usual way)
    xvfb-run -a pvbatch viz/paraview/render_formation.py RUN_DIR_or_PVD [OUT_DIR] [options]

RUN_DIR is a run's output directory; every RUN_DIR/vtk/*.pvd is rendered (e.g.
formation.pvd), each into OUT_DIR/<pvd name>/frame_NNNNNN.png (NNNNNN: the time-step index).
A single .pvd path renders just that series. OUT_DIR defaults to RUN_DIR/render.

What is drawn: satellites as shaded spheres coloured by status (ok green, faulted red,
rebooting amber, spare grey; faulted and rebooting satellites twice the size inside a
halo, so a frame with faults shows them), links as tubes coloured by capacity_bps (range
fixed over the series so frames compare; a link held down by a terminal outage,
fault_down = 1, grey), a legend, the title (the scenario name from RUN_DIR/summary.json and
the frame), the time, and a grid labelled with the axes (each axis once).

A constellation's zoomed-out series (vtk/constellation.pvd, a point per cluster with point
data `cluster`) is drawn the same way with its own legend: each cluster a large sphere at its
centroid, each pair of clusters joined by gateway links a tube coloured by their summed
capacity, and the clock counting clusters, joined pairs and gateway links.

Axes and views. LVLH: x radial (away from the Earth), y along-track (the direction of
flight), z orbit normal. Every LVLH view has radial up where radial is on screen:
  xy   looking along +z (from the anti-normal side): radial up, along-track to the RIGHT
       (the direction of flight points right, as in the usual R-bar/V-bar plots)
  xz   looking along -y (from ahead, back at the formation): radial up, orbit normal right
  yz   looking down -x (from the zenith): along-track right, orbit normal up
  iso  (default) oblique: radial up, along-track to the right, from above, behind and
       the anti-normal side
ECI (x to the vernal equinox, z to the north pole): xy looks down from the north (x right,
y up), xz from -y (x right, z up), yz from +x (y right, z up), iso oblique with z up.
A series is ECI when its name contains "eci" or its first frame lies more than 100 km from
the origin (and far compared with its size); ECI frames are drawn about the formation's
centre (the grid reads metres from it), as the formation moves ~7000 km a revolution.

Options:
  --stride N          render every Nth time step (default 1)
  --size WxH          image size in pixels (default 1280x720)
  --first N --last N  restrict to time-step indices [first, last]
  --view iso|xy|xz|yz camera direction (default iso), see above
  --camera auto|fixed|follow
                      fixed: one camera fitted to every rendered frame, in the series' own
                      coordinates (LVLH default; for ECI the formation is then a dot on its
                      orbit arc); follow: centred on the formation's centre (mean position)
                      every frame, at one zoom fitted to the largest extent about the centre
                      over the rendered frames, so sizes compare (ECI default)
  --jobs N            render with N processes (default: the number of CPU cores), each
                      pvbatch under its own Xvfb display, taking chunks of frames as they
                      go; 1 renders in this process only
  --movie             also write OUT_DIR/<series>.avi (or .ogv) from the frames, once all
                      are written
  --fps N             frame rate of the movie (default 24)
  --cluster N         a constellation's formation frames: cluster N alone (its satellites and
                      the links inside it), at its own scale; series without per-satellite
                      clusters (vtk/constellation.pvd, a single formation) are skipped
  --color-by Q        what colours the links: capacity (default), utilisation (the run's
                      traffic over capacity), distance (link length) or margin (link margin)
  --plain             no labels, legend or grid: satellites and links only
  --no-state          do not write OUT_DIR/<series>.pvsm

A ParaView state OUT_DIR/<series>.pvsm is written beside the frames for GUI users
(paraview --state=RUN_DIR/render/formation.pvsm): the same series, colours and camera of
the first rendered frame, in the series' own coordinates.

The frames are drawn with VTK directly (an offscreen render window per process) rather
than through ParaView's render view, whose extra passes cost several times as much per
frame; the state file is built with paraview.simple.
"""

import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zlib

STATUS_NAMES = ["ok", "faulted", "rebooting", "spare"]
STATUS_COLOURS = [
    0.20, 0.80, 0.30,   # ok: green
    0.90, 0.15, 0.15,   # faulted: red
    1.00, 0.70, 0.00,   # rebooting: amber
    0.55, 0.55, 0.60,   # spare: grey
]
EVENT_STATUSES = (1, 2)          # drawn large, inside a halo
# --color-by: the link cell array, its words in the legend, its unit.
LINK_QUANTITIES = {
    "capacity": ("capacity_bps", "capacity", "bit/s"),
    "utilisation": ("utilisation", "utilisation", "1"),
    "distance": ("distance_m", "length", "m"),
    "margin": ("margin_db", "margin", "dB"),
}
LINK_DOWN_COLOUR = [0.95, 0.35, 0.80]   # magenta: not on the viridis scale
BACKGROUND = [0.08, 0.09, 0.13]
TEXT_COLOUR = [1.0, 1.0, 1.0]
GRID_COLOUR = [0.33, 0.35, 0.42]   # opaque: translucent grid lines z-fight and blend by draw order
VIRIDIS = [  # matplotlib's viridis at 9 stops
    (0.000, 0.267004, 0.004874, 0.329415), (0.125, 0.282623, 0.140926, 0.457517),
    (0.250, 0.253935, 0.265254, 0.529983), (0.375, 0.206756, 0.371758, 0.553117),
    (0.500, 0.163625, 0.471133, 0.558148), (0.625, 0.127568, 0.566949, 0.550556),
    (0.750, 0.134692, 0.658636, 0.517649), (0.875, 0.266941, 0.748751, 0.440573),
    (1.000, 0.993248, 0.906157, 0.143936),
]

# Camera direction (from the focal point to the camera) and view-up, per frame kind.
VIEWS = {
    "lvlh": {
        "iso": ([0.55, -0.75, -1.0], [1.0, 0.0, 0.0]),
        "xy": ([0.0, 0.0, -1.0], [1.0, 0.0, 0.0]),
        "xz": ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0]),
        "yz": ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
    },
    "eci": {
        "iso": ([1.0, -1.6, 1.2], [0.0, 0.0, 1.0]),
        "xy": ([0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
        "xz": ([0.0, -1.0, 0.0], [0.0, 0.0, 1.0]),
        "yz": ([1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
    },
}
AXIS_TITLES = {
    "lvlh": ["x radial [m]", "y along-track [m]", "z orbit normal [m]"],
    "eci": ["x ECI [m]", "y ECI [m]", "z ECI [m]"],
}
# Screen layout (fractions of the image) kept for the formation and its grid when the
# labels are drawn: the legend and colour bar take the right, title and clock the edges.
SCENE_BOX = (0.14, 0.10, 0.81, 0.90)    # x0, y0, x1, y1 (room for the axis titles)
PLAIN_BOX = (0.04, 0.04, 0.96, 0.96)


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
    p.add_argument("--jobs", type=int, default=0,
                   help="worker processes (default: the number of CPU cores)")
    p.add_argument("--movie", action="store_true")
    p.add_argument("--fps", type=float, default=24.0)
    p.add_argument("--cluster", type=int, default=None, help="a constellation's cluster N alone")
    p.add_argument("--color-by", dest="color_by", choices=sorted(LINK_QUANTITIES), default="capacity",
                   help="what colours the links (default capacity)")
    p.add_argument("--plain", action="store_true")
    p.add_argument("--no-state", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no per-frame lines")
    a = p.parse_args(argv)
    if a.stride < 1:
        p.error("--stride must be >= 1")
    if a.cluster is not None and a.cluster < 0:
        p.error("--cluster must be >= 0")
    if a.jobs < 0:
        p.error("--jobs must be >= 1")
    if a.jobs == 0:
        a.jobs = os.cpu_count() or 1
    if not a.fps > 0:
        p.error("--fps must be > 0")
    try:
        w, h = (int(v) for v in a.size.lower().split("x"))
        if w < 16 or h < 16:
            raise ValueError
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
        found = sorted(f for f in (os.path.join(d, n) for d in (os.path.join(path, "vtk"), path)
                                   if os.path.isdir(d) for n in os.listdir(d))
                       if f.endswith(".pvd"))
        vtk_found = [f for f in found if os.path.dirname(f) == os.path.join(path, "vtk")]
        found = vtk_found or found
        if found:
            return path, found
    sys.exit("render_formation: no .pvd found at %s (expected RUN_DIR/vtk/*.pvd or a .pvd file)"
             % path)


def read_pvd(pvd):
    """[(time, .vtp path)] in time order, as ParaView's PVD reader sees them."""
    root = ET.parse(pvd).getroot()
    out = []
    for ds in root.iter("DataSet"):
        f = ds.get("file")
        if not f:
            continue
        path = f if os.path.isabs(f) else os.path.join(os.path.dirname(pvd), f)
        out.append((float(ds.get("timestep", "0")), path))
    out.sort(key=lambda tf: tf[0])
    return out


def scenario_title(run_dir, pvd):
    """The scenario's name from RUN_DIR/summary.json ("scenario"), else the folder's name."""
    for d in (run_dir, os.path.dirname(os.path.dirname(pvd))):
        try:
            with open(os.path.join(d, "summary.json")) as f:
                name = json.load(f).get("scenario")
            if name:
                return str(name)
        except (OSError, ValueError, AttributeError):
            pass
    return os.path.basename(run_dir) or os.path.splitext(os.path.basename(pvd))[0]


# --------------------------------------------------------------------------------------
# Reading frames (plain VTK: cheap, no ParaView proxies)

def _vtk():
    """The VTK modules the renderer uses, imported once (pvbatch provides them)."""
    global np, vtk_to_numpy, numpy_to_vtk
    import numpy as np  # noqa: F811
    from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy  # noqa: F811
    return np


def read_frame(reader, path, link_array="capacity_bps", cluster=None):
    """Reads one .vtp: (points N x 3, status N, line connectivity polydata, the links' coloured
    quantity (link_array), fault_down of the lines). Vertex cells come first in VTK's cell order.
    With `cluster`, only the satellites of that cluster (point data cluster_of) and the links
    between two of them."""
    reader.SetFileName(path)
    reader.Update()
    pd = reader.GetOutput()
    n = pd.GetNumberOfPoints()
    pts = vtk_to_numpy(pd.GetPoints().GetData()) if n else np.zeros((0, 3))
    st = pd.GetPointData().GetArray("status")
    status = vtk_to_numpy(st).astype(np.int32) if st is not None else np.zeros(n, np.int32)
    nv, nl = pd.GetNumberOfVerts(), pd.GetNumberOfLines()
    cap = pd.GetCellData().GetArray(link_array)
    cap = vtk_to_numpy(cap)[nv:nv + nl].astype(float) if cap is not None else np.full(nl, np.nan)
    down = pd.GetCellData().GetArray("fault_down")
    down = vtk_to_numpy(down)[nv:nv + nl] != 0 if down is not None else np.zeros(nl, bool)
    if cluster is None:
        return pd, pts, status, cap, down
    keep = vtk_to_numpy(pd.GetPointData().GetArray("cluster_of")) == cluster
    new_index = np.cumsum(keep) - 1
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
    sub = vtkPolyData()
    points = vtkPoints()
    points.SetData(numpy_to_vtk(np.ascontiguousarray(pts[keep]), deep=1))
    sub.SetPoints(points)
    if nl:
        ca = pd.GetLines()
        conn = vtk_to_numpy(ca.GetConnectivityArray()).reshape(-1, 2)  # every link one 2-point line
        inside = keep[conn[:, 0]] & keep[conn[:, 1]]
        lines = vtkCellArray()
        lines.SetData(numpy_to_vtk(np.arange(0, 2 * inside.sum() + 1, 2, dtype=np.int64), deep=1),
                      numpy_to_vtk(new_index[conn[inside]].ravel().astype(np.int64), deep=1))
        sub.SetLines(lines)
        cap, down = cap[inside], down[inside]
    return sub, pts[keep], status[keep], cap, down


def has_clusters_of(path):
    """Whether a frame carries each satellite's cluster (a constellation's formation frames)."""
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
    reader = vtkXMLPolyDataReader()
    reader.SetFileName(path)
    reader.Update()
    return reader.GetOutput().GetPointData().GetArray("cluster_of") is not None


def scan_series(frames, link_array="capacity_bps", cluster=None):
    """One pass over the selected frames: union bounds, the largest extent about each
    frame's centre, the capacity range, and whether any link is down / satellite not ok."""
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
    reader = vtkXMLPolyDataReader()
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    rlo, rhi = np.full(3, np.inf), np.full(3, -np.inf)
    cap_lo, cap_hi = math.inf, -math.inf
    any_down, statuses, clusters = False, set(), False
    first_centre, first_span = None, 0.0
    for _, _, path in frames:
        pd, pts, status, cap, down = read_frame(reader, path, link_array, cluster)
        clusters = clusters or pd.GetPointData().GetArray("cluster") is not None
        if len(pts):
            c = pts.mean(axis=0)
            plo, phi = pts.min(axis=0), pts.max(axis=0)
            lo, hi = np.minimum(lo, plo), np.maximum(hi, phi)
            rlo, rhi = np.minimum(rlo, plo - c), np.maximum(rhi, phi - c)
            if first_centre is None:
                first_centre, first_span = c, float((phi - plo).max())
        statuses.update(int(s) for s in np.unique(status))
        good = cap[np.isfinite(cap) & ~down]
        if len(good):
            cap_lo, cap_hi = min(cap_lo, float(good.min())), max(cap_hi, float(good.max()))
        any_down = any_down or bool(down.any())
    if cap_lo > cap_hi:
        cap_range = None
    else:
        if cap_lo == cap_hi:
            cap_lo = 0.0 if cap_hi > 0 else cap_lo - 1.0
        cap_range = [cap_lo, cap_hi]
    ok = bool(np.all(np.isfinite(lo)))
    return {
        "bounds": [float(v) for v in np.ravel(np.column_stack([lo, hi]))] if ok else None,
        "extent": [float(v) for v in np.ravel(np.column_stack([rlo, rhi]))] if ok else None,
        "first_centre": [float(v) for v in first_centre] if first_centre is not None else None,
        "first_span": first_span,
        "capacity_range": cap_range,
        "any_down": any_down,
        "statuses": sorted(statuses),
        "clusters": clusters,
    }


# --------------------------------------------------------------------------------------
# Planning a series: everything the workers need, as JSON

def _unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def pad_box(box, fraction=0.12, margin=0.04):
    """A grid box around `box` (x0, x1, y0, y1, z0, z1): every side at least `fraction`
    of the longest (a flat formation still gets a box, so no two faces coincide), plus a
    small margin."""
    span = max(box[1] - box[0], box[3] - box[2], box[5] - box[4], 1.0)
    out = []
    for k in range(3):
        c = (box[2 * k] + box[2 * k + 1]) / 2
        half = max(box[2 * k + 1] - box[2 * k], fraction * span) / 2 + margin * span
        out += [c - half, c + half]
    return out


# vtkGridAxes3DActor masks per frame kind and view: the faces drawn (behind the formation)
# and the edges labelled, one per axis, at the bottom and left of the picture.
# Faces (vtkGridAxesHelper): MIN_YZ=1 (the x = x_min face), MIN_ZX=2, MIN_XY=4, MAX_YZ=8,
# MAX_ZX=16, MAX_XY=32. Labels: MIN_X=1 labels the edges lying in the plane x = x_min of
# the drawn faces (so on an xy face it carries the y ticks), MIN_Y=2, MIN_Z=4, MAX_X=8, ...
GRID_MASKS = {
    "lvlh": {
        "xy": (32, 1 | 2),      # face z = max; bottom edge x = min (y ticks), left y = min
        "xz": (2, 1 | 4),       # face y = min; bottom x = min (z ticks), left z = min (x)
        "yz": (1, 4 | 2),       # face x = min; bottom z = min (y ticks), left y = min (z)
        "iso": (1 | 32, 4 | 2),  # floor x = min and back wall z = max; front floor edge
                                 # z = min (y ticks), left edges y = min (z on the floor,
                                 # x on the wall)
    },
    "eci": {
        "xy": (4, 2 | 1),       # face z = min; bottom y = min (x ticks), left x = min (y)
        "xz": (16, 4 | 1),      # face y = max; bottom z = min (x ticks), left x = min (z)
        "yz": (1, 4 | 2),       # face x = min; bottom z = min (y ticks), left y = min (z)
        "iso": (4 | 1, 2 | 8),  # floor z = min and wall x = min; floor edges y = min (x
                                # ticks) and x = max (y), wall edge y = min (z)
    },
}


def camera_for(box, direction, up, size, screen_box):
    """Parallel-projection camera showing `box` inside the screen_box fraction of the image."""
    d = _unit(direction)
    view = [-x for x in d]
    right = _unit(_cross(view, up))
    upv = _cross(right, view)
    c = [(box[2 * k] + box[2 * k + 1]) / 2 for k in range(3)]
    half_w = half_h = 0.0
    radius = 0.0
    for i in range(8):
        p = [box[2 * k + ((i >> k) & 1)] - c[k] for k in range(3)]
        half_w = max(half_w, abs(_dot(p, right)))
        half_h = max(half_h, abs(_dot(p, upv)))
        radius = max(radius, math.sqrt(_dot(p, p)))
    radius = max(radius, 1.0)
    x0, y0, x1, y1 = screen_box
    aspect = size[0] / float(size[1])
    fx, fy = (x1 - x0), (y1 - y0)
    # ParallelScale = half the visible height (world units).
    scale = max(half_h / fy, half_w / (fx * aspect), 1e-3) * 1.06
    dist = 4.0 * radius
    return {
        "focal": c,
        "position": [c[k] + dist * d[k] for k in range(3)],
        "up": upv,
        "parallel_scale": scale,
        # image-space centre of screen_box, in the [-1, 1] window coordinates VTK shifts by
        "window_center": [-(x0 + x1 - 1.0), -(y0 + y1 - 1.0)],
        "clipping": [max(dist - 2.0 * radius, 1e-3 * dist), dist + 2.0 * radius],
    }


def plan_series(pvd, out_dir, run_dir, args):
    name = os.path.splitext(os.path.basename(pvd))[0]
    series_dir = os.path.join(out_dir, name)
    all_frames = read_pvd(pvd)
    n_times = len(all_frames)
    last = n_times - 1 if args.last is None else min(args.last, n_times - 1)
    indices = list(range(max(args.first, 0), last + 1, args.stride))
    frames = [(i, all_frames[i][0], all_frames[i][1]) for i in indices]
    link_array = LINK_QUANTITIES[args.color_by][0]
    if args.cluster is not None:
        series_dir += "_cluster%d" % args.cluster
    info = scan_series(frames, link_array, args.cluster) if frames else {"bounds": None}
    # LVLH or ECI from the whole first frame: one cluster lies far from the frame's origin (cluster
    # 0's chief) in LVLH too.
    whole = scan_series(frames[:1], link_array) if frames and args.cluster is not None else info
    centre = whole.get("first_centre") or [0.0, 0.0, 0.0]
    far = math.sqrt(sum(c * c for c in centre))
    is_eci = "eci" in name.lower() or (far > 1.0e5 and far > 10.0 * whole.get("first_span", 0))
    kind = "eci" if is_eci else "lvlh"
    follow = args.camera == "follow" or (args.camera == "auto" and is_eci)
    direction, up = VIEWS[kind][args.view]
    # Frames are drawn shifted by -origin: the formation's centre every frame (follow),
    # the centre of all frames for a fixed ECI camera (precision: ~7000 km from the
    # origin), nothing for a fixed LVLH camera (the grid reads LVLH metres).
    if info["bounds"] is None:
        data_box = [-1.0, 1.0] * 3
        origin = "none"
    elif follow:
        data_box = info["extent"]
        origin = "centre"
    else:
        b = info["bounds"]
        if is_eci:
            c = [(b[2 * k] + b[2 * k + 1]) / 2 for k in range(3)]
            data_box = [b[2 * k + j] - c[k] for k in range(3) for j in (0, 1)]
            origin = c
        else:
            data_box = b
            origin = "none"
    grid_box = pad_box(data_box)
    screen = PLAIN_BOX if args.plain else SCENE_BOX
    faces, labels = GRID_MASKS[kind][args.view]
    titles = list(AXIS_TITLES[kind])
    if origin != "none":
        titles = [t.replace(" [m]", ", from %s [m]" % ("centre" if follow else "view centre"))
                  for t in titles]
    clusters = info.get("clusters", False)
    title = "skyfabric  %s  (%s%s%s%s)" % (scenario_title(run_dir, pvd), kind.upper(),
                                          ", clusters" if clusters else "",
                                          ", cluster %d" % args.cluster if args.cluster is not None else "",
                                          ", following the formation" if follow else "")
    return {
        "name": name,
        "pvd": pvd,
        "series_dir": series_dir,
        "n_times": n_times,
        "frames": [[i, t, path, os.path.join(series_dir, "frame_%06d.png" % i)]
                   for i, t, path in frames],
        "kind": kind,
        "follow": follow,
        "origin": origin,
        "view": args.view,
        "size": args.size,
        "plain": args.plain,
        "quiet": args.quiet,
        "title": title,
        "axis_titles": titles,
        "grid_box": grid_box,
        "grid_faces": faces,
        "grid_labels": labels,
        "camera": camera_for(grid_box, direction, up, args.size, screen),
        "capacity_range": info.get("capacity_range"),
        "link_array": link_array,
        "link_words": LINK_QUANTITIES[args.color_by][1],
        "link_unit": LINK_QUANTITIES[args.color_by][2],
        "cluster": args.cluster,
        "any_down": info.get("any_down", False),
        # A constellation's zoomed-out series (vtk/constellation.pvd): each point a cluster,
        # each line the gateway links between two clusters.
        "clusters": clusters,
    }


# --------------------------------------------------------------------------------------
# The scene (plain VTK, offscreen)

class Scene:
    """An offscreen render window with the formation, grid and labels of a plan; render()
    draws one frame into a PNG."""

    def __init__(self, plan):
        from vtkmodules.vtkCommonCore import vtkLookupTable
        from vtkmodules.vtkCommonDataModel import vtkPolyData, vtkCellArray
        from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
        from vtkmodules.vtkRenderingCore import (
            vtkActor, vtkPolyDataMapper, vtkRenderer, vtkRenderWindow, vtkTextActor,
            vtkWindowToImageFilter, vtkColorTransferFunction)
        import vtkmodules.vtkRenderingOpenGL2  # noqa: F401  (the OpenGL factory overrides)
        import vtkmodules.vtkRenderingFreeType  # noqa: F401  (text)
        self.plan = plan
        self.PolyData, self.CellArray = vtkPolyData, vtkCellArray
        w, h = plan["size"]
        self.reader = vtkXMLPolyDataReader()

        ren = vtkRenderer()
        ren.SetBackground(*BACKGROUND)
        rw = vtkRenderWindow()
        rw.SetOffScreenRendering(1)
        rw.SetMultiSamples(0)
        rw.AddRenderer(ren)
        rw.SetSize(w, h)
        self.ren, self.rw = ren, rw

        # Satellites: every point, a shaded sphere coloured by status.
        status_lut = vtkLookupTable()
        status_lut.SetNumberOfTableValues(len(STATUS_NAMES))
        for k in range(len(STATUS_NAMES)):
            status_lut.SetTableValue(k, *STATUS_COLOURS[3 * k:3 * k + 3], 1.0)
        status_lut.SetTableRange(0, len(STATUS_NAMES) - 1)
        status_lut.Build()
        self.status_lut = status_lut
        point_px = max(6, int(round(h / 55.0))) * (3 if plan.get("clusters") else 1)

        def point_actor(size, opacity=1.0):
            m = vtkPolyDataMapper()
            m.SetLookupTable(status_lut)
            m.SetScalarRange(0, len(STATUS_NAMES) - 1)
            m.SetScalarModeToUsePointData()
            m.SetColorModeToMapScalars()
            a = vtkActor()
            a.SetMapper(m)
            p = a.GetProperty()
            p.SetRepresentationToPoints()
            p.SetPointSize(size)
            p.SetRenderPointsAsSpheres(True)
            p.SetOpacity(opacity)
            p.SetAmbient(0.25)
            p.SetDiffuse(0.85)
            ren.AddActor(a)
            return m, a

        # Links: lines drawn as tubes, coloured by capacity (scaled to a readable unit).
        cap = plan.get("capacity_range") or [0.0, 1.0]
        unit, div = plan.get("link_unit", "bit/s"), 1.0
        prefixes = {"bit/s": (("Tbit/s", 1e12), ("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)),
                    "m": (("km", 1e3),)}.get(unit, ())
        for u, f in prefixes:
            if max(abs(cap[0]), abs(cap[1])) >= f:
                unit, div = u, f
                break
        self.cap_div = div
        cap_lut = vtkColorTransferFunction()
        lo, hi = cap[0] / div, cap[1] / div
        for s, r, g, b in VIRIDIS:
            cap_lut.AddRGBPoint(lo + s * (hi - lo), r, g, b)
        self.link_mapper = vtkPolyDataMapper()
        self.link_mapper.SetLookupTable(cap_lut)
        self.link_mapper.SetScalarRange(lo, hi)
        self.link_mapper.SetScalarModeToUseCellData()
        self.link_mapper.SetColorModeToMapScalars()
        self.link_actor = vtkActor()
        self.link_actor.SetMapper(self.link_mapper)
        lp = self.link_actor.GetProperty()
        lp.SetLineWidth(max(2.0, h / 300.0))
        lp.SetRenderLinesAsTubes(True)
        lp.SetAmbient(0.3)
        ren.AddActor(self.link_actor)

        # Links held down by a terminal outage: wider, in their own colour.
        self.down_mapper = vtkPolyDataMapper()
        self.down_mapper.ScalarVisibilityOff()
        self.down_actor = vtkActor()
        self.down_actor.SetMapper(self.down_mapper)
        dp = self.down_actor.GetProperty()
        dp.SetColor(*LINK_DOWN_COLOUR)
        dp.SetLineWidth(2.0 * lp.GetLineWidth())
        dp.SetRenderLinesAsTubes(True)
        dp.SetAmbient(0.3)
        ren.AddActor(self.down_actor)

        self.sat_mapper, self.sat_actor = point_actor(point_px)
        self.event_mapper, self.event_actor = point_actor(2 * point_px)
        self.halo_mapper, self.halo_actor = point_actor(4 * point_px, opacity=0.35)
        self.actors = [self.link_actor, self.down_actor, self.sat_actor, self.event_actor,
                       self.halo_actor]

        cam = ren.GetActiveCamera()
        c = plan["camera"]
        cam.SetFocalPoint(*c["focal"])
        cam.SetPosition(*c["position"])
        cam.SetViewUp(*c["up"])
        cam.ParallelProjectionOn()
        cam.SetParallelScale(c["parallel_scale"])
        cam.SetWindowCenter(*c["window_center"])
        cam.SetClippingRange(*c["clipping"])
        ren.SetAutomaticLightCreation(True)

        self.w2i = vtkWindowToImageFilter()
        self.w2i.SetInput(rw)
        self.w2i.ReadFrontBufferOff()
        self.w2i.ShouldRerenderOff()
        self.w2i.SetInputBufferTypeToRGB()

        self.clock = None
        self.bake_index = None
        if not plan["plain"]:
            before = self._props()
            self._labels(ren, w, h, unit, cap_lut, vtkTextActor)
            self._bake([p for p in self._props() if p not in before and p is not self.clock])
        # (The first render compiles the shaders; keep that out of the frame loop.)
        rw.Render()

    def _props(self):
        props = self.ren.GetViewProps()
        return [props.GetItemAsObject(k) for k in range(props.GetNumberOfItems())]

    def _grab(self):
        """The window's pixels, (h, w, 3) uint8, bottom row first."""
        self.w2i.Modified()
        self.w2i.Update()
        img = self.w2i.GetOutput()
        w, h, _ = img.GetDimensions()
        return vtk_to_numpy(img.GetPointData().GetScalars()).reshape(h, w, 3)

    def _bake(self, static):
        """The camera and the grid, title, colour bar and legend are the same in every
        frame: draw them once, keep the pixels they cover, and paint those pixels into each
        frame wherever the formation left the background. The grid axes alone cost ~25 ms
        a frame in llvmpipe (and a background texture ~12 ms); the paint ~1 ms."""
        dynamic = [p for p in self._props() if p not in static]
        for p in dynamic:
            p.VisibilityOff()
        self.rw.Render()
        layer = self._grab().copy()
        for p in static:
            p.VisibilityOff()
        self.rw.Render()
        bg = self._grab()[-1, -1].copy()
        flat = layer.reshape(-1, 3)
        self.bake_index = np.nonzero((flat != bg).any(axis=1))[0]
        self.bake_rgb = flat[self.bake_index]
        self.bake_bg = bg
        for p in static:
            self.ren.RemoveViewProp(p)
        for p in dynamic:
            p.VisibilityOn()

    def _labels(self, ren, w, h, unit, cap_lut, vtkTextActor):
        from vtkmodules.vtkRenderingAnnotation import vtkScalarBarActor
        from vtkmodules.vtkRenderingCore import vtkActor2D, vtkPolyDataMapper2D, vtkProperty
        from vtkmodules.vtkFiltersSources import vtkRegularPolygonSource, vtkLineSource
        from paraview.modules.vtkRemotingViews import vtkGridAxes3DActor
        plan = self.plan
        font = h / 720.0

        def text(size, colour=TEXT_COLOUR, bold=False):
            a = vtkTextActor()
            tp = a.GetTextProperty()
            tp.SetFontSize(max(8, int(round(size * font))))
            tp.SetColor(*colour)
            tp.SetBold(bold)
            tp.SetFontFamilyToArial()
            ren.AddActor2D(a)
            return a

        title = text(20, bold=True)
        title.SetInput(plan["title"])
        title.GetTextProperty().SetVerticalJustificationToTop()
        title.SetDisplayPosition(int(12 * font), h - int(10 * font))
        self.title_actor = title
        self.clock = text(15, colour=[0.9, 0.9, 0.9])
        self.clock.SetDisplayPosition(int(12 * font), int(10 * font))

        # The grid: faces behind the formation, each axis labelled once.
        g = vtkGridAxes3DActor()
        g.SetGridBounds(*plan["grid_box"])
        g.SetFaceMask(plan["grid_faces"])
        g.SetLabelMask(plan["grid_labels"])
        g.SetLabelUniqueEdgesOnly(True)
        g.SetGenerateGrid(True)
        g.SetGenerateEdges(True)
        g.SetGenerateTicks(True)
        # A property of our own: setting the default one's colour reaches only some faces.
        gp = vtkProperty()
        gp.SetColor(*GRID_COLOUR)
        gp.SetLineWidth(1.0)
        g.SetProperty(gp)
        for k, t in enumerate(plan["axis_titles"]):
            g.SetTitle(k, t)
            tp = g.GetTitleTextProperty(k)
            tp.SetColor(0.92, 0.92, 0.92)
            tp.SetFontSize(max(8, int(round(14 * font))))
            tp.SetBold(True)
            lp = g.GetLabelTextProperty(k)
            lp.SetColor(0.75, 0.75, 0.78)
            lp.SetFontSize(max(8, int(round(12 * font))))
        ren.AddViewProp(g)
        self.grid = g
        self.grid_box = plan["grid_box"]

        # Capacity colour bar: its own title above it (the bar's title would sit on the top
        # label).
        bar = vtkScalarBarActor()
        bar.SetLookupTable(cap_lut)
        bar.SetTitle(" ")
        bar.SetNumberOfLabels(5)
        bar.SetLabelFormat("%-#.3g")
        bar.SetMaximumNumberOfColors(256)
        bar.GetPositionCoordinate().SetCoordinateSystemToNormalizedViewport()
        bar.GetPositionCoordinate().SetValue(0.86, 0.40)
        bar.SetWidth(0.12)
        bar.SetHeight(0.46)
        bar.SetBarRatio(0.25)
        bar.SetDrawTickLabels(True)
        bar.UnconstrainedFontSizeOn()
        lp = bar.GetLabelTextProperty()
        lp.SetColor(*TEXT_COLOUR)
        lp.SetFontSize(max(8, int(round(13 * font))))
        lp.SetItalic(False)
        lp.SetShadow(False)
        lp.SetBold(False)
        lp.SetFontFamilyToArial()
        bar.GetTitleTextProperty().SetFontSize(2)
        ren.AddActor2D(bar)
        heading = text(14, bold=True)
        heading.SetInput("%s %s%s" % ("gateway" if plan.get("clusters") else "link", plan.get("link_words", "capacity"),
                                      "\n[%s]" % unit if unit != "1" else ""))
        heading.GetTextProperty().SetVerticalJustificationToTop()
        heading.SetDisplayPosition(int(0.86 * w), h - int(52 * font))

        # Status legend: a disk of each colour and its name.
        entries = [(s, STATUS_COLOURS[3 * k:3 * k + 3], "disk")
                   for k, s in enumerate(STATUS_NAMES)]
        if plan.get("clusters"):
            entries = [("cluster centroid", STATUS_COLOURS[0:3], "disk"),
                       ("gateway links", VIRIDIS[-1][1:], "line")]
        if plan.get("any_down"):
            entries.append(("link down", LINK_DOWN_COLOUR, "line"))
        row = 22 * font
        y0 = 18 * font + row * len(entries)
        heading = text(14, bold=True)
        heading.SetInput("constellation" if plan.get("clusters") else "satellite status")
        heading.SetDisplayPosition(int(0.86 * w), int(y0 + 6 * font))
        for k, (label, colour, shape) in enumerate(entries):
            y = y0 - (k + 1) * row
            cx, cy = 0.86 * w + 7 * font, y + 6 * font
            if shape == "disk":
                src = vtkRegularPolygonSource()
                src.SetNumberOfSides(24)
                src.SetRadius(6 * font)
                src.SetCenter(cx, cy, 0)
            else:
                src = vtkLineSource()
                src.SetPoint1(cx - 7 * font, cy, 0)
                src.SetPoint2(cx + 7 * font, cy, 0)
            m = vtkPolyDataMapper2D()
            m.SetInputConnection(src.GetOutputPort())
            a = vtkActor2D()
            a.SetMapper(m)
            a.GetProperty().SetColor(*colour)
            a.GetProperty().SetLineWidth(max(2.0, 3 * font))
            ren.AddActor2D(a)
            t = text(14)
            t.SetInput(label)
            t.SetDisplayPosition(int(cx + 14 * font), int(y))

    def _points(self, pts_vtk, ids, status_vtk):
        """A polydata of the points `ids` (all when None), one vertex each."""
        pd = self.PolyData()
        pd.SetPoints(pts_vtk)
        n = pts_vtk.GetNumberOfPoints() if ids is None else len(ids)
        conn = np.arange(n, dtype=np.int64) if ids is None else np.asarray(ids, np.int64)
        verts = self.CellArray()
        verts.SetData(numpy_to_vtk(np.arange(n + 1, dtype=np.int64), deep=1),
                      numpy_to_vtk(conn, deep=1))
        pd.SetVerts(verts)
        pd.GetPointData().SetScalars(status_vtk)
        return pd

    def render(self, index, t, path, png):
        plan = self.plan
        pd, pts, status, cap, down = read_frame(self.reader, path, plan.get("link_array", "capacity_bps"),
                                                plan.get("cluster"))
        n = len(pts)
        status_vtk = numpy_to_vtk(status.astype(np.int32), deep=1)
        status_vtk.SetName("status")
        self.sat_mapper.SetInputData(self._points(pd.GetPoints(), None, status_vtk)
                                     if n else self.PolyData())
        events = np.nonzero(np.isin(status, EVENT_STATUSES))[0]
        ev = self._points(pd.GetPoints(), events, status_vtk) if len(events) else self.PolyData()
        self.event_mapper.SetInputData(ev)
        self.halo_mapper.SetInputData(ev)
        up, dn = self.PolyData(), self.PolyData()
        if n and pd.GetNumberOfLines():
            ca = pd.GetLines()
            offsets = vtk_to_numpy(ca.GetOffsetsArray())
            conn = vtk_to_numpy(ca.GetConnectivityArray())
            c = cap / self.cap_div
            for out, sel in ((up, ~down), (dn, down)):
                if not sel.any():
                    continue
                cells = np.nonzero(sel)[0]
                starts, ends = offsets[cells], offsets[cells + 1]
                lens = ends - starts
                idx = np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(lens.sum())
                lines = self.CellArray()
                lines.SetData(numpy_to_vtk(np.r_[0, np.cumsum(lens)].astype(np.int64), deep=1),
                              numpy_to_vtk(conn[idx].astype(np.int64), deep=1))
                out.SetPoints(pd.GetPoints())
                out.SetLines(lines)
                arr = numpy_to_vtk(np.ascontiguousarray(c[cells]), deep=1)
                arr.SetName("capacity")
                out.GetCellData().SetScalars(arr)
        self.link_mapper.SetInputData(up)
        self.down_mapper.SetInputData(dn)

        if plan["origin"] == "centre":
            off = -pts.mean(axis=0) if n else np.zeros(3)
        elif plan["origin"] == "none":
            off = np.zeros(3)
        else:
            off = -np.asarray(plan["origin"])
        for a in self.actors:
            a.SetPosition(*off)

        if self.clock is not None:
            text = "t = %.1f s  (%.2f min)   step %d/%d   satellites %d   links %d" % (
                t, t / 60.0, index, plan["n_times"] - 1, n, pd.GetNumberOfLines())
            if plan.get("clusters"):
                gw = pd.GetCellData().GetArray("gateway_links")
                gw = vtk_to_numpy(gw)[pd.GetNumberOfVerts():] if gw is not None else np.zeros(0)
                sats = pd.GetPointData().GetArray("satellites")
                text = ("t = %.1f s  (%.2f min)   step %d/%d   clusters %d (%d satellites)   "
                        "cluster pairs joined %d   gateway links %d" % (
                            t, t / 60.0, index, plan["n_times"] - 1, n,
                            int(vtk_to_numpy(sats).sum()) if sats is not None else 0,
                            pd.GetNumberOfLines(), int(gw.sum())))
            counts = [(int((status == k).sum()), STATUS_NAMES[k]) for k in EVENT_STATUSES]
            extra = ["%d %s" % c for c in counts if c[0]]
            if down.any():
                extra.append("%d link%s down" % (int(down.sum()), "" if down.sum() == 1 else "s"))
            if extra:
                text += "   (" + ", ".join(extra) + ")"
            self.clock.SetInput(text)

        self.rw.Render()
        px = self._grab()
        if self.bake_index is not None:
            flat = px.reshape(-1, 3)
            under = flat[self.bake_index]
            clear = (under == self.bake_bg).all(axis=1)
            flat[self.bake_index[clear]] = self.bake_rgb[clear]
        write_png(png, px[::-1])


def write_png(path, rgb, level=3):
    """Writes an 8-bit RGB array (rows top to bottom) as a PNG: no row filters, a fast
    zlib level — ~3x quicker than vtkPNGWriter's adaptive filtering on these frames."""
    h, w, _ = rgb.shape
    raw = np.empty((h, w * 3 + 1), np.uint8)
    raw[:, 0] = 0
    raw[:, 1:] = rgb.reshape(h, w * 3)

    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))
    blob = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), level)) + chunk(b"IEND", b""))
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)


# --------------------------------------------------------------------------------------
# Frames in chunks, claimed by whichever process is free (this one and the workers)

def chunk_size(n_frames, jobs):
    return max(1, min(8, n_frames // (4 * jobs) if jobs > 1 else n_frames))


def render_chunks(plan, claims_dir, scene=None):
    """Renders every chunk of the plan's frames that no other process has claimed;
    returns the PNGs written."""
    frames = plan["frames"]
    size = plan["chunk"]
    scene = scene or Scene(plan)
    written = []
    for c in range(0, len(frames), size):
        if claims_dir and not coordinator_alive(plan, claims_dir):
            break
        if claims_dir:
            try:
                os.close(os.open(os.path.join(claims_dir, "chunk_%06d" % c),
                                 os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                continue
        for i, t, path, png in frames[c:c + size]:
            scene.render(i, t, path, png)
            written.append(png)
            if not plan["quiet"]:
                print("render_formation: wrote %s" % png, flush=True)
    return written


def coordinator_alive(plan, claims_dir):
    """Whether the process that planned this render still wants it: its work folder is
    there (removed when it stops) and it runs (pvbatch dies on a signal without unwinding)."""
    if not os.path.isdir(claims_dir):
        return False
    try:
        os.kill(plan["coordinator"], 0)
    except ProcessLookupError:
        return False
    except (KeyError, PermissionError):
        pass
    return True


def worker_main(plan_path):
    _vtk()
    try:
        with open(plan_path) as f:
            plan = json.load(f)
    except FileNotFoundError:
        return 0    # the render was stopped before this worker started
    render_chunks(plan, plan["claims_dir"])
    return 0


def spawn_workers(plan_path, n):
    """Starts n worker pvbatch processes, each under its own Xvfb display."""
    pvbatch, xvfb = shutil.which("pvbatch"), shutil.which("xvfb-run")
    if n < 1:
        return []
    if not pvbatch or not xvfb:
        print("render_formation: no pvbatch/xvfb-run on PATH: rendering in one process")
        return []
    procs = []
    env = dict(os.environ)
    for k in range(n):
        # Different start numbers so the workers (and other renders) do not race for one
        # display; xvfb-run -a moves on from a display in use.
        display = 1000 + (os.getpid() * 7 + k * 37) % 6000
        cmd = [xvfb, "-a", "-n", str(display), "-s", "-screen 0 640x480x24",
               pvbatch, os.path.abspath(__file__), "--worker", plan_path]
        # (In this process group: Ctrl-C in a terminal stops the workers too.)
        procs.append(subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL))
    return procs


def render_series(pvd, out_dir, args, run_dir=None):
    """Renders one .pvd series; returns the PNG paths in frame order."""
    _vtk()
    run_dir = run_dir or find_series(pvd)[0]
    started = time.time()
    plan = plan_series(os.path.abspath(pvd), out_dir, run_dir, args)
    frames = plan["frames"]
    if not frames:
        print("render_formation: %s: no time steps selected" % pvd)
        return []
    os.makedirs(plan["series_dir"], exist_ok=True)
    for f in frames:   # a frame left from an earlier render must not pass for a new one
        if os.path.exists(f[3]):
            os.remove(f[3])
    jobs = max(1, min(args.jobs, len(frames)))
    plan["chunk"] = chunk_size(len(frames), jobs)
    procs, work = [], None
    if jobs > 1:
        # One llvmpipe thread per process: the processes already fill the cores.
        os.environ.setdefault("LP_NUM_THREADS", "1")
        work = tempfile.mkdtemp(prefix=".render-", dir=out_dir)
        plan["claims_dir"] = os.path.join(work, "claims")
        plan["coordinator"] = os.getpid()
        os.makedirs(plan["claims_dir"])
        plan_path = os.path.join(work, "plan.json")
        with open(plan_path, "w") as f:
            json.dump(plan, f)
        procs = spawn_workers(plan_path, jobs - 1)
    try:
        scene = Scene(plan)
        render_chunks(plan, plan.get("claims_dir"), scene)
        failed = [p.args for p in procs if p.wait() != 0]
        for cmd in failed:
            print("render_formation: a worker failed: %s" % " ".join(cmd), file=sys.stderr)
        missing = [f for f in frames if not os.path.isfile(f[3])]
        if missing:
            print("render_formation: rendering %d frame(s) a worker left undone here"
                  % len(missing), file=sys.stderr)
            for i, t, path, png in missing:
                scene.render(i, t, path, png)
    finally:
        # Workers stop at their next chunk once the work folder is gone.
        if work:
            shutil.rmtree(work, ignore_errors=True)
        for p in procs:
            try:
                p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                p.terminate()
    pngs = [f[3] for f in frames if os.path.isfile(f[3])]
    print("render_formation: %s: %d frame(s) in %.1f s with %d process(es)" % (
        plan["name"], len(pngs), time.time() - started, jobs))
    if not args.no_state and args.cluster is None:  # the state shows the whole series
        write_state(plan, out_dir)
    if args.movie:
        write_movie(pngs, os.path.join(out_dir, plan["name"]), args.fps)
    return pngs


# --------------------------------------------------------------------------------------
# ParaView state for GUI users

def write_state(plan, out_dir):
    """A ParaView state with the same series, colours, grid and first camera."""
    from paraview.simple import (  # noqa: F401  (pvbatch provides these)
        ColorBy, CreateView, GetColorTransferFunction, GetScalarBar, PVDReader, SaveState,
        SetActiveView, Show, Text, Threshold)
    name = plan["name"]
    reader = PVDReader(registrationName=name, FileName=plan["pvd"])
    links = Threshold(registrationName=name + "_links", Input=reader)
    links.Scalars = ["CELLS", "link_source"]
    links.LowerThreshold = 0
    links.UpperThreshold = 2 ** 31 - 1
    if hasattr(links, "ThresholdMethod"):
        links.ThresholdMethod = "Between"
    view = CreateView("RenderView")
    SetActiveView(view)
    view.ViewSize = plan["size"]
    view.Background = BACKGROUND
    if hasattr(view, "UseColorPaletteForBackground"):
        view.UseColorPaletteForBackground = 0
    view.OrientationAxesVisibility = 0
    sats = Show(reader, view)
    sats.SetRepresentationType("Points")
    sats.RenderPointsAsSpheres = 1
    sats.PointSize = max(6, plan["size"][1] // 55)
    if plan.get("clusters"):   # no status on a cluster: colour the points by cluster
        ColorBy(sats, ("POINTS", "cluster"))
        sats.SetScalarBarVisibility(view, False)
    else:
        _status_colours(sats, view, plan)
    ld = Show(links, view)
    ld.SetRepresentationType("Surface")
    ld.RenderLinesAsTubes = 1
    ld.LineWidth = 2.0
    link_array = plan.get("link_array", "capacity_bps")
    ColorBy(ld, ("CELLS", link_array))
    cap = GetColorTransferFunction(link_array)
    cap.ApplyPreset("Viridis (matplotlib)", True)
    if plan.get("capacity_range"):
        cap.RescaleTransferFunction(*plan["capacity_range"])
        cap.AutomaticRescaleRangeMode = "Never"
    cap_bar = GetScalarBar(cap, view)
    unit = plan.get("link_unit", "bit/s")
    cap_bar.Title = "%s %s%s" % ("gateway" if plan.get("clusters") else "link", plan.get("link_words", "capacity"),
                                 " [%s]" % unit if unit != "1" else "")
    cap_bar.ComponentTitle = ""
    cap_bar.RangeLabelFormat = "%-#.3g"
    ld.SetScalarBarVisibility(view, not plan["plain"])
    title = Text(registrationName=name + "_title")
    title.Text = plan["title"]
    Show(title, view).WindowLocation = "Upper Left Corner"
    if plan["origin"] == "none":   # the grid reads the series' own coordinates
        grid = view.AxesGrid
        grid.Visibility = 1
        grid.XTitle, grid.YTitle, grid.ZTitle = AXIS_TITLES[plan["kind"]]
        grid.FacesToRender = plan["grid_faces"]
        grid.AxesToLabel = plan["grid_labels"]
        grid.UseCustomBounds = 1
        grid.CustomBounds = plan["grid_box"]
    c = plan["camera"]
    first = plan["frames"][0]
    view.ViewTime = first[1]
    focal = c["focal"]
    shift = [0.0, 0.0, 0.0]
    if plan["origin"] != "none":
        # The state shows the series in its own coordinates: aim at the first frame.
        if plan["origin"] == "centre":
            _, pts, _, _, _ = read_frame(_reader(), first[2])
            shift = [float(v) for v in pts.mean(axis=0)] if len(pts) else shift
        else:
            shift = plan["origin"]
    view.CameraFocalPoint = [focal[k] + shift[k] for k in range(3)]
    view.CameraPosition = [c["position"][k] + shift[k] for k in range(3)]
    view.CameraViewUp = c["up"]
    view.CameraParallelProjection = 1
    view.CameraParallelScale = c["parallel_scale"]
    state = os.path.join(out_dir, name + ".pvsm")
    SaveState(state)
    print("render_formation: wrote ParaView state %s (paraview --state=%s)" % (state, state))


def _status_colours(sats, view, plan):
    from paraview.simple import ColorBy, GetColorTransferFunction, GetScalarBar
    ColorBy(sats, ("POINTS", "status"))
    lut = GetColorTransferFunction("status")
    lut.InterpretValuesAsCategories = 1
    lut.Annotations = [v for i, s in enumerate(STATUS_NAMES) for v in (str(i), s)]
    lut.IndexedColors = STATUS_COLOURS
    status_bar = GetScalarBar(lut, view)
    status_bar.Title = "satellite status"
    status_bar.ComponentTitle = ""
    sats.SetScalarBarVisibility(view, not plan["plain"])


def _reader():
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
    return vtkXMLPolyDataReader()


# --------------------------------------------------------------------------------------
# Movie

def write_movie(pngs, stem, fps=24.0):
    """Assembles the PNG frames, in order, into a movie with VTK's movie writers, where
    this build has one."""
    if not pngs:
        return None
    try:
        from vtkmodules.vtkIOImage import vtkPNGReader
    except ImportError:
        print("render_formation: no vtkPNGReader; no movie")
        return None
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
        return None
    started = time.time()
    reader = vtkPNGReader()
    writer.SetInputConnection(reader.GetOutputPort())
    writer.SetFileName(path)
    if hasattr(writer, "SetRate"):
        writer.SetRate(max(1, int(round(fps))))
    reader.SetFileName(pngs[0])
    reader.Update()
    writer.Start()
    for png in pngs:
        reader.SetFileName(png)
        reader.Modified()
        reader.Update()
        writer.Write()
    writer.End()
    print("render_formation: wrote movie %s (%d frames at %g fps, %.1f s)" % (
        path, len(pngs), fps, time.time() - started))
    return path


def main(argv):
    if len(argv) == 2 and argv[0] == "--worker":
        return worker_main(argv[1])
    args = parse_args(argv)
    run_dir, series = find_series(args.input)
    out_dir = os.path.abspath(args.output or os.path.join(run_dir, "render"))
    os.makedirs(out_dir, exist_ok=True)
    if args.cluster is not None:
        # Only a constellation's formation frames know each satellite's cluster.
        kept = []
        for pvd in series:
            frames = read_pvd(pvd)
            if frames and has_clusters_of(frames[0][1]):
                kept.append(pvd)
            else:
                print("render_formation: --cluster: skipping %s (no per-satellite cluster_of)" % pvd)
        if not kept:
            print("render_formation: --cluster %d: no constellation formation frames in %s"
                  % (args.cluster, args.input), file=sys.stderr)
            return 2
        _vtk()
        reader = _reader()
        frames = read_pvd(kept[0])
        reader.SetFileName(frames[0][1])
        reader.Update()
        count = int(vtk_to_numpy(reader.GetOutput().GetPointData().GetArray("cluster_of")).max()) + 1
        if args.cluster >= count:
            print("render_formation: --cluster %d: this constellation has clusters 0..%d"
                  % (args.cluster, count - 1), file=sys.stderr)
            return 2
        series = kept
    total = 0
    for pvd in series:
        total += len(render_series(pvd, out_dir, args, run_dir))
    print("render_formation: %d PNG frame(s) under %s" % (total, out_dir))
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


def _interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    # pvbatch's logger catches SIGINT/SIGTERM in C and can hang there; take them back so
    # that an interrupted render stops its workers and leaves no work folder behind.
    import signal
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        status = main(sys.argv[1:])
    except SystemExit as e:  # argparse errors, sys.exit("message")
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            status = 2
        else:
            status = e.code or 0
    except KeyboardInterrupt:
        print("render_formation: interrupted", file=sys.stderr)
        status = 130
    except Exception:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        status = 1
    exit_now(status)
