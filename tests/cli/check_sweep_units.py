#!/usr/bin/python3
"""Units in a sweep's sweep.h5 (issue 52, item 12): every numeric column whose quantity carries a
unit in its name has a `units` attribute, also when the column is a statistic or an element of that
quantity (`ttft_s.p99`, `envelope_max_m.0`, `lost_s.faults.median`, `goodput.mean_ci95.0`) or a
byte count (`gateway_bytes`, `kv_bytes_moved`); and some columns' units, written out by hand.

    /usr/bin/python3 tests/cli/check_sweep_units.py SWEEP_H5 [COLUMN=UNIT ...]

The rule here is written independently of src/sweep/sweep_table.cpp: a column needs a unit when,
after dropping its statistic and element components, its own name or the name of the quantity it
breaks down ends in one of the unit suffixes the naming convention uses (docs/architecture.md).
"""
import re
import sys

import h5py

STATISTIC = re.compile(r"^(\d+|p\d+|mean|median|stddev|min|max|interval|mean_ci95)$")
UNIT_NAME = re.compile(r"(_s|_m|_m_s|_bps|_B_s|_bytes|_deg|_k|_w|_h|_km|_per_day|_per_yr|_mm_al)$|^bytes_|_bytes_|^dose.*_rad$")


def needs_unit(column):
    parts = column.split(".")
    while len(parts) > 1 and STATISTIC.match(parts[-1]):
        parts.pop()
    names = [re.sub(r"_interval$", "", parts[-1])] + parts[-2:-1]
    return any(UNIT_NAME.search(n) for n in names)


def main(path, expected):
    t = h5py.File(path, "r")["table"]
    units = {}
    for name in t:
        u = t[name].attrs.get("units")
        units[name] = (u.decode() if isinstance(u, bytes) else str(u)) if u is not None else ""
    numeric = [c for c in t if t[c].dtype.kind == "f"]
    missing = [c for c in numeric if needs_unit(c) and not units[c]]
    assert not missing, "no units on %d column(s): %s" % (len(missing), ", ".join(missing))
    for item in expected:
        column, _, want = item.partition("=")
        assert column in t, "no column " + column
        assert units[column] == want, "%s: units %r, expected %r" % (column, units[column], want)
    with_units = sum(1 for c in numeric if units[c])
    print("ok: %d of %d numeric columns with units, %d checked by hand" % (with_units, len(numeric), len(expected)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
