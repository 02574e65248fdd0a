"""Kill `skyfabric run --force` with SIGKILL at many instants over its life, end-of-run swap included,
and check after every kill that the output folder is a whole complete run: the one that was there
before, or the new one -- never a mix, never half-written (issue 15).

Usage: kill_at_instants.py SKYFABRIC SCENARIO WORK_DIR [INSTANTS]
Each attempt runs with its own seed, so result.h5, summary.json and the VTK frames say which run they
belong to. Exit 0 when every instant passes; prints what it saw.
"""
import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import h5py


def folder_run(out):
    """The seed of the complete run in `out`, checking every file belongs to it."""
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    assert summary["complete"] is True, summary.get("stop_reason")
    seed = summary["seed"]
    with h5py.File(os.path.join(out, "result.h5"), "r") as f:
        assert bool(f.attrs["complete"]), "result.h5 not complete"
        assert int(f.attrs["seed"]) == seed, ("result.h5 and summary.json from different runs", int(f.attrs["seed"]), seed)
        samples = len(f["time_s"])
    assert samples == summary["samples"], (samples, summary["samples"])
    pvd = os.path.join(out, "vtk", "formation.pvd")
    files = [d.attrib["file"] for d in ET.parse(pvd).getroot().iter("DataSet")]
    assert files, "no frames listed"
    for name in files:
        assert os.path.isfile(os.path.join(out, "vtk", name)), ("pvd lists a missing frame", name)
    return seed


def main():
    exe, scenario, work = sys.argv[1:4]
    instants = int(sys.argv[4]) if len(sys.argv) > 4 else 50
    out = os.path.join(work, "out")
    base = [exe, "run", "-q", "--force", scenario, "-o", out, "--set", "output.vtk=true"]
    # Time one whole run (startup to exit) to spread the kills over its life and past it (runs vary).
    start = time.monotonic()
    subprocess.run(base + ["--set", "seed=1"], check=True)
    lifetime = time.monotonic() - start
    before = folder_run(out)
    outcomes = {"old": 0, "new": 0}
    for k in range(instants):
        seed = 100 + k
        delay = lifetime * 1.5 * (k + 0.5) / instants
        proc = subprocess.Popen(base + ["--set", "seed=%d" % seed], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        now = folder_run(out)
        assert now in (before, seed), ("folder holds neither the previous run nor the new one", now, before, seed)
        outcomes["new" if now == seed else "old"] += 1
        before = now
    print("ok: %d kills over %.2f s of run life: %d left the previous run, %d the new one"
          % (instants, lifetime, outcomes["old"], outcomes["new"]))
    # Both outcomes must have happened, or the instants did not cover the run's life.
    assert outcomes["old"] > 0 and outcomes["new"] > 0, outcomes


if __name__ == "__main__":
    main()
