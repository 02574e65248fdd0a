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
capacity, and the clock counting clusters, joined pairs and gateway links, with each cluster's
distance from cluster 0 (clusters 100 km apart share a spot beside one thousands of km away).

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
                      the links inside it), at its own scale, in its own chief's LVLH frame
                      (point data position_cluster_lvlh_m; older frames: the run's frame);
                      series without per-satellite clusters (vtk/constellation.pvd, a single
                      formation) are skipped
  --color-by Q        what colours the links: capacity (default), utilisation (the run's
                      traffic over capacity), distance (link length) or margin (link margin)
  --plain             no labels, legend or grid: satellites and links only
  --no-state          do not write OUT_DIR/<series>.pvsm

A ParaView state OUT_DIR/<series>.pvsm is written beside the frames for GUI users
(paraview --state=RUN_DIR/render/formation.pvsm): the same series, colours and camera of
the first rendered frame, in the series' own coordinates.

The frames are drawn with VTK directly (an offscreen render window per process) rather
than through ParaView's render view, whose extra passes cost several times as much per
frame; the state file is built with paraview.simple. The parts live in skyrender/ beside
this script (style, series, camera, scene, jobs, state); this file is the command line.
"""

import argparse
import os
import sys

# pvbatch does not put the script's folder on sys.path; the skyrender package lives here.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# Re-exported: the tests (tests/paraview/check_render*.py) use these names from here.
from skyrender.jobs import render_series, worker_main  # noqa: E402
from skyrender.series import cluster_count, find_series, has_clusters_of, read_pvd  # noqa: E402
from skyrender.style import AXIS_TITLES, BACKGROUND, LINK_QUANTITIES, SCENE_BOX  # noqa: E402,F401


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
        count = cluster_count(read_pvd(kept[0])[0][1])
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
