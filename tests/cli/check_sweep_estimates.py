#!/usr/bin/python3
"""Checks a rate-scale sweep's headline figures against the trials themselves (issue 28),
reading every point's result.h5 independently of skyfabric's own statistics:

- sweep.csv's `radiation.goodput` is, at every point, the median of that point's
  /radiation/trials/goodput (numpy's median), and `radiation.goodput_interval.0/1` are the
  trials' min and max (fewer than 40 trials: `radiation.interval` is "min_max");
- sweep.h5 holds the same column;
- trial 0's goodput is under `radiation.trial0.goodput` and equals trial 0 of the trials;
- in every point's summary.json no field that is a loss (a key path naming `lost` or `loss`)
  is negative.
Prints "ok" and exits 0, else raises.

  /usr/bin/python3 tests/cli/check_sweep_estimates.py SWEEP_DIR POINTS
"""
import csv
import json
import os
import sys

import h5py
import numpy as np

sweep_dir, expected_points = sys.argv[1], int(sys.argv[2])
with open(os.path.join(sweep_dir, "sweep.csv"), newline="") as fh:
    rows = list(csv.DictReader(fh))
assert len(rows) == expected_points, len(rows)
with h5py.File(os.path.join(sweep_dir, "sweep.h5"), "r") as f:
    h5_goodput = f["table/radiation.goodput"][:]


def losses(node, path=""):
    """Every numeric leaf under a key path that names a loss."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from losses(v, path + "." + k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from losses(v, "%s.%d" % (path, i))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        if "lost" in path or "loss" in path:
            yield path, node


differs_from_trial0 = 0
spread = 0
for k, row in enumerate(rows):
    assert row["status"] == "ok", row
    point = os.path.join(sweep_dir, "points", row["name"])
    with h5py.File(os.path.join(point, "result.h5"), "r") as f:
        g = f["radiation/trials/goodput"][:]
    assert len(g) >= 2, len(g)
    median = float(np.median(g))
    csv_goodput = float(row["radiation.goodput"])
    assert abs(csv_goodput - median) <= 1e-12, (row["name"], csv_goodput, median, g)
    assert abs(h5_goodput[k] - median) <= 1e-12, (row["name"], h5_goodput[k], median)
    assert float(row["radiation.goodput_interval.0"]) == g.min(), (row, g)
    assert float(row["radiation.goodput_interval.1"]) == g.max(), (row, g)
    s = json.load(open(os.path.join(point, "summary.json")))
    r = s["radiation"]
    assert r["interval"] == "min_max" and r["trials"] == len(g), (r["interval"], r["trials"])
    assert abs(r["trial0"]["goodput"] - g[0]) <= 1e-9, (r["trial0"]["goodput"], g[0])
    differs_from_trial0 += r["trial0"]["goodput"] != r["goodput"]
    spread += g.max() > g.min()
    negative = [(p, v) for p, v in losses(s) if v < 0]
    assert not negative, (row["name"], negative)
    assert len(list(losses(s))) > 0
# The sweep must exercise what it checks: trials that differ, and a median that is not trial 0's.
assert spread > 0 and differs_from_trial0 > 0, (spread, differs_from_trial0)
print("ok", len(rows), "points;", differs_from_trial0, "with a median other than trial 0's")
