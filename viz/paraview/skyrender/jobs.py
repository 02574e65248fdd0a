"""Rendering a series: the plan written for the worker processes, frames claimed in chunks
by whichever process is free (this one and the workers, each pvbatch under its own Xvfb
display), the ParaView state, and the movie assembled from the frames once all are written."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from .camera import plan_series
from .scene import Scene
from .series import find_series
from .state import write_state

# The workers run the command-line script again, with --worker PLAN.json.
SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "render_formation.py")


def chunk_size(n_frames, jobs):
    # Small chunks when several processes share the frames, so none is left holding many.
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
    """A worker process (render_formation.py --worker PLAN.json): renders unclaimed chunks."""
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
               pvbatch, SCRIPT, "--worker", plan_path]
        # (In this process group: Ctrl-C in a terminal stops the workers too.)
        procs.append(subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL))
    return procs


def render_series(pvd, out_dir, args, run_dir=None):
    """Renders one .pvd series; returns the PNG paths in frame order."""
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
