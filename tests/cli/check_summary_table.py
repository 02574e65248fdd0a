#!/usr/bin/python3
"""The summary table `run` prints against the run's own files (issue 52, item 13).

    /usr/bin/python3 tests/cli/check_summary_table.py RUN_DIR TABLE_TXT

- A constellation with radiation: the goodput column says what its interval is ("min–max of N
  trials", or nearest-rank percentiles from 40 trials), and each algorithm's row prints the median
  with the trials' interval and the mean with its 95 % confidence interval, as summary.json holds
  them; no "goodput median (interval)" header a reader would take for a confidence interval.
- A constellation: no envelope row (cluster 0's LVLH frame over every cluster).
- Links: summary.json's link_samples and link_samples_acquiring are the link-samples of result.h5
  and those of capacity 0 in it; when some are, the table says they were re-acquiring, with the
  minimum over the others.
"""
import json
import sys

import h5py
import numpy as np


def main(run, table_path):
    table = open(table_path, encoding="utf-8").read()
    s = json.load(open(run + "/summary.json"))
    if "constellation" in s:
        assert "envelope |x|,|y|,|z| max" not in table, "envelope row on a constellation"
    rc = s.get("radiation", {}).get("constellation")
    if rc:
        assert "goodput median (interval)" not in table, "the old header"
        trials = next(iter(rc.values()))["trials"]
        kind = "min–max" if s["radiation"]["interval"] == "min_max" else "2.5–97.5 %"
        assert "(%s of %d trials)" % (kind, trials) in table, "no '%s of %d trials'" % (kind, trials)
        assert "mean (95 % CI)" in table, "no mean (95 % CI) column"
        for name, a in rc.items():
            g = a["goodput"]
            want = "%s %s" % (name, "%.4f (%.4f–%.4f)" % (g["median"], g["interval"][0], g["interval"][1]))
            line = [l for l in table.splitlines() if l.strip().startswith(name + " ") and "(" in l and "–" in l]
            assert line, "no goodput row for " + name
            row = " ".join(line[0].split())
            assert row.startswith(want), (row, want)
            mean = "%.4f (%.4f–%.4f)" % (g["mean"], g["mean_ci95"][0], g["mean_ci95"][1])
            assert mean in row, (row, mean)
            assert g["mean_ci95"][0] <= g["mean"] <= g["mean_ci95"][1], g
    links = s.get("links")
    if links:
        f = h5py.File(run + "/result.h5", "r")
        capacity = f["links/capacity_bps"][:]
        assert links["link_samples"] == capacity.size, (links["link_samples"], capacity.size)
        zero = int(np.count_nonzero(capacity == 0.0))
        assert links["link_samples_acquiring"] == zero, (links["link_samples_acquiring"], zero)
        carrying = capacity[capacity > 0]
        assert carrying.size == 0 or links["capacity_min_carrying_bps"] == carrying.min()
        if zero:
            assert links["capacity_min_bps"] == 0.0
            want = "%d of %d link-samples (pointed, not yet carrying)" % (zero, capacity.size)
            assert "capacity 0: re-acquiring" in table and want in table, want
        print("link-samples %d, re-acquiring %d" % (capacity.size, zero))
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
