#!/usr/bin/python3
"""Plots a skyfabric sweep's metrics against the swept parameter(s) (matplotlib, Agg).

    scripts/plot --sweep SWEEP_DIR [--out DIR] [--param NAME ...] [--metric NAME ...]
    /usr/bin/python3 viz/plot_sweep.py SWEEP_DIR ...

Reads SWEEP_DIR/sweep.csv (or a path to a .csv), one row per run, and writes one PNG per
numeric metric into SWEEP_DIR/plots (or --out): the metric against the first swept
parameter, one line per value of a second swept parameter, if any (further parameters are
averaged over, with their spread drawn as error bars).

Which columns are parameters: --param names them; otherwise the columns that vary across
rows and are scenario keys (dotted names such as formation.radius_m, or a `set:`/`param:`
prefix), else the first varying numeric column. Everything else numeric that varies is a
metric; identifiers (run, index, seed, status, path, name, ...) are skipped.
"""
import argparse
import csv
import math
import os
import re
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SKIP = re.compile(r"^(run|run_id|index|id|seed|status|path|dir|output|name|scenario|rank|"
                  r"error|message|complete|stop_reason|wall_s|host)$", re.I)


def to_float(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        if isinstance(text, str) and text.strip().lower() in ("true", "false"):
            return 1.0 if text.strip().lower() == "true" else 0.0
        return None
    return v


def load(path):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        sys.exit("plot_sweep: %s has no rows" % path)
    return list(rows[0].keys()), rows


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "metric"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("sweep", help="sweep directory (with sweep.csv) or a .csv file")
    p.add_argument("--out")
    p.add_argument("--param", action="append", default=[])
    p.add_argument("--metric", action="append", default=[])
    a = p.parse_args(argv)

    path = a.sweep if os.path.isfile(a.sweep) else os.path.join(a.sweep, "sweep.csv")
    if not os.path.isfile(path):
        print("plot_sweep: no sweep.csv at %s" % a.sweep, file=sys.stderr)
        return 2
    columns, rows = load(path)
    out_dir = a.out or os.path.join(os.path.dirname(os.path.abspath(path)), "plots")
    os.makedirs(out_dir, exist_ok=True)

    numeric = [c for c in columns if all(to_float(r[c]) is not None for r in rows if r[c] != "")
               and any(r[c] != "" for r in rows)]
    varying = [c for c in columns if len({r[c] for r in rows}) > 1]

    if a.param:
        missing = [c for c in a.param if c not in columns]
        if missing:
            print("plot_sweep: no column(s) %s in %s (columns: %s)"
                  % (", ".join(missing), path, ", ".join(columns)), file=sys.stderr)
            return 2
        params = a.param
    else:
        params = [c for c in varying if not SKIP.match(c) and
                  ("." in c or c.startswith(("set:", "param:", "param.")))]
        if not params:
            params = [c for c in varying if c in numeric and not SKIP.match(c)][:1]
    if not params:
        print("plot_sweep: no column varies; nothing to plot against", file=sys.stderr)
        return 1
    x_name = params[0]
    x_numeric = x_name in numeric
    series_name = params[1] if len(params) > 1 else None

    metrics = a.metric or [c for c in numeric if c in varying and c not in params
                           and not SKIP.match(c)]
    print("plot_sweep: %d run(s); parameter(s) %s; %d metric(s)"
          % (len(rows), ", ".join(params), len(metrics)))

    written = 0
    for m in metrics:
        # group: series value -> x -> [values]
        groups = OrderedDict()
        for r in rows:
            y = to_float(r.get(m, ""))
            if y is None or (isinstance(y, float) and math.isnan(y)):
                continue
            key = r[series_name] if series_name else None
            x = to_float(r[x_name]) if x_numeric else r[x_name]
            groups.setdefault(key, defaultdict(list))[x].append(y)
        if not groups:
            print("plot_sweep: skipping %s: no values" % m)
            continue
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        categories = sorted({x for g in groups.values() for x in g}, key=str) if not x_numeric \
            else None
        series_keys = list(groups)
        try:
            series_keys.sort(key=lambda s: float(s))
        except (TypeError, ValueError):
            pass
        for key in series_keys:
            g = groups[key]
            xs = sorted(g) if x_numeric else categories
            xs = [x for x in xs if x in g]
            ys = [sum(g[x]) / len(g[x]) for x in xs]
            lo = [y - min(g[x]) for x, y in zip(xs, ys)]
            hi = [max(g[x]) - y for x, y in zip(xs, ys)]
            xpos = xs if x_numeric else [categories.index(x) for x in xs]
            label = "%s = %s" % (series_name, key) if series_name else None
            if any(v > 0 for v in lo + hi):
                ax.errorbar(xpos, ys, yerr=[lo, hi], marker="o", capsize=3, label=label)
            else:
                ax.plot(xpos, ys, marker="o", label=label)
        if not x_numeric:
            ax.set_xticks(range(len(categories)))
            ax.set_xticklabels(categories, rotation=30, ha="right")
        ax.set_xlabel(x_name)
        ax.set_ylabel(m)
        ax.grid(alpha=0.3)
        if series_name:
            ax.legend(fontsize=8)
        ax.set_title("%s vs %s (%d runs)" % (m, x_name, len(rows)), fontsize=10)
        fig.tight_layout()
        out = os.path.join(out_dir, "sweep_%s.png" % safe(m))
        fig.savefig(out, dpi=130)
        plt.close(fig)
        print("plot_sweep: wrote %s" % out)
        written += 1
    print("plot_sweep: %d plot(s) in %s" % (written, out_dir))
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
