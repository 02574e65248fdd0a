#!/usr/bin/python3
"""Independent check of the `nonlinear` model (issue 2): every neighbour distance of a one-day
`skyfabric run` must agree within 1 cm with SciPy DOP853 (rtol = atol = 1e-12, absolute ECI,
two-body + J2: mu = 3.986004418e14, R_E = 6378137, J2 = 1.08262668e-3) propagating the same
initial ECI states read from the run's result.h5 (t = 0 of /formation/position_eci_m and
/formation/velocity_eci_m_s), sampled at the file's /time_s.

Neighbour pairs: each satellite's 8 nearest at t = 0, together with every pair within 300 m.
Exit status 0 when the largest disagreement is below the tolerance, 1 when not, 2 on bad input.

  /usr/bin/python3 tests/reference/check_against_scipy.py [--skyfabric build/release/src/skyfabric]
      [--scenario scenarios/suncatcher-81.yaml] [--out DIR] [--h5 result.h5] [--per-satellite]

By default it runs `skyfabric run SCENARIO --set duration_s=86400 --set output.vtk=false
--set workload.enabled=false --set links.enabled=false --force -q -o DIR` (DIR a temporary
folder unless --out) and checks DIR/result.h5; --h5 checks an existing file instead (its
scenario must be a drag-free, station-keeping-free nonlinear J2 run). The SciPy propagation
stacks all satellites in one solve_ivp; --per-satellite integrates each one on its own.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
from scipy.integrate import solve_ivp

# The two-body + J2 right-hand side and constants, written apart from the C++ force model.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from j2_two_body import rhs_stacked as rhs  # noqa: E402


def propagate(states, times, rtol, per_satellite):
    """Positions [T, N, 3] at `times` from initial ECI states [N, 6] at times[0]."""
    span = (float(times[0]), float(times[-1]))
    groups = [[i] for i in range(len(states))] if per_satellite else [list(range(len(states)))]
    pos = np.empty((len(times), len(states), 3))
    for g in groups:
        sol = solve_ivp(rhs, span, states[g].reshape(-1), method="DOP853", t_eval=times, rtol=rtol, atol=rtol)
        if not sol.success:
            raise RuntimeError(f"solve_ivp failed: {sol.message}")
        y = sol.y.reshape(len(g), 6, len(times))
        pos[:, g, :] = np.transpose(y[:, 0:3, :], (2, 0, 1))
    return pos


def neighbour_pairs(p0, k=8, radius_m=300.0):
    d = np.linalg.norm(p0[:, None, :] - p0[None, :, :], axis=2)
    pairs = set()
    for i in range(len(p0)):
        for j in np.argsort(d[i])[1:k + 1]:
            pairs.add((min(i, int(j)), max(i, int(j))))
    i, j = np.nonzero(np.triu(d <= radius_m, k=1))
    pairs.update(zip(i.tolist(), j.tolist()))
    pairs = sorted(pairs)
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skyfabric", default=os.environ.get("SKYFABRIC", os.path.join(root, "build/release/src/skyfabric")))
    ap.add_argument("--scenario", default=os.path.join(root, "scenarios/suncatcher-81.yaml"))
    ap.add_argument("--duration-s", type=float, default=86400.0)
    ap.add_argument("--out", help="run folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--h5", help="check this result.h5 instead of running skyfabric")
    ap.add_argument("--rtol", type=float, default=1e-12, help="SciPy rtol = atol (default 1e-12)")
    ap.add_argument("--tolerance-m", type=float, default=0.01)
    ap.add_argument("--per-satellite", action="store_true", help="one solve_ivp per satellite")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="extra scenario override for the run (repeatable), e.g. dynamics.relative_tolerance=1e-10")
    args = ap.parse_args()

    tmp = None
    h5_path = args.h5
    if h5_path is None:
        if not os.access(args.skyfabric, os.X_OK):
            print(f"check_against_scipy: no skyfabric program at {args.skyfabric} (build it or pass --skyfabric)",
                  file=sys.stderr)
            return 2
        out = args.out
        if out is None:
            tmp = tempfile.TemporaryDirectory(prefix="skyfabric-scipy-check-")
            out = tmp.name
        cmd = [args.skyfabric, "run", args.scenario, "-o", out, "--set", f"duration_s={args.duration_s:g}",
               "--set", "output.vtk=false", "--set", "workload.enabled=false", "--set", "links.enabled=false",
               "--force", "-q"]
        for kv in args.set:
            cmd += ["--set", kv]
        t0 = time.perf_counter()
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"check_against_scipy: {' '.join(cmd)} exited {run.returncode}\n{run.stderr}", file=sys.stderr)
            return 2
        print(f"skyfabric run: {time.perf_counter() - t0:.2f} s ({' '.join(cmd[1:])})")
        h5_path = os.path.join(out, "result.h5")

    with h5py.File(h5_path, "r") as f:
        times = np.asarray(f["/time_s"][:], dtype=np.float64)
        if "/formation/position_eci_m" not in f:
            print("check_against_scipy: the file has no /formation/position_eci_m (output.eci: false?)",
                  file=sys.stderr)
            return 2
        pos = np.asarray(f["/formation/position_eci_m"][:], dtype=np.float64)
        vel0 = np.asarray(f["/formation/velocity_eci_m_s"][0], dtype=np.float64)
    n = pos.shape[1]
    states = np.hstack([pos[0], vel0])
    i, j = neighbour_pairs(pos[0])

    t0 = time.perf_counter()
    ref = propagate(states, times, args.rtol, args.per_satellite)
    wall = time.perf_counter() - t0

    d_run = np.linalg.norm(pos[:, i, :] - pos[:, j, :], axis=2)
    d_ref = np.linalg.norm(ref[:, i, :] - ref[:, j, :], axis=2)
    err = np.abs(d_run - d_ref)
    worst = np.unravel_index(np.argmax(err), err.shape)
    max_err = float(err[worst])
    abs_err = float(np.max(np.linalg.norm(pos - ref, axis=2)))
    print(f"{n} satellites, {len(i)} neighbour pairs, {len(times)} samples over {times[-1] - times[0]:.0f} s; "
          f"SciPy DOP853 rtol = atol = {args.rtol:g} ({'per satellite' if args.per_satellite else 'stacked'}), "
          f"{wall:.2f} s")
    print(f"max neighbour-distance disagreement: {max_err:.3e} m (pair {i[worst[1]]}-{j[worst[1]]}, "
          f"t = {times[worst[0]]:.0f} s); tolerance {args.tolerance_m:g} m")
    print(f"max absolute ECI position disagreement: {abs_err:.3e} m (informational)")
    ok = max_err < args.tolerance_m
    print("PASS" if ok else "FAIL")
    if tmp is not None:
        tmp.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
