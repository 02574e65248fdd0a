"""Where the camera looks: the views per frame kind (LVLH or ECI), the grid's faces and
labelled edges per view, the parallel camera that fits a box into the picture, and the plan
of a series (frames, camera, grid, titles, colour range) that every render process reads as
JSON."""

import math
import os

from .series import has_cluster_frame, read_pvd, scan_series, scenario_title
from .style import AXIS_TITLES, LINK_QUANTITIES, PLAIN_BOX, SCENE_BOX, STATUS_NAMES

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
    """Everything a render process needs for one series, as JSON-able values: the frames
    and their PNG paths, the frame kind, camera, grid, titles and the links' colour range."""
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
    # 0's chief) in LVLH too. A cluster drawn in its own chief's LVLH frame (frames that carry it)
    # is LVLH, about its own chief, whatever frame the run wrote.
    own_frame = args.cluster is not None and bool(frames) and has_cluster_frame(frames[0][2])
    whole = scan_series(frames[:1], link_array) if frames and args.cluster is not None else info
    centre = whole.get("first_centre") or [0.0, 0.0, 0.0]
    far = math.sqrt(sum(c * c for c in centre))
    is_eci = not own_frame and ("eci" in name.lower() or (far > 1.0e5 and far > 10.0 * whole.get("first_span", 0)))
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
                                          (", cluster %d in its chief's frame" if own_frame else ", cluster %d")
                                          % args.cluster if args.cluster is not None else "",
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
        "status_names": info.get("status_names", list(STATUS_NAMES)),
        # A constellation's zoomed-out series (vtk/constellation.pvd): each point a cluster,
        # each line the gateway links between two clusters.
        "clusters": clusters,
    }
