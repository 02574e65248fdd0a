#!/usr/bin/python3
"""Plots a skyfabric sweep's metrics against the swept parameter(s) (matplotlib, Agg).

    scripts/plot --sweep SWEEP_DIR [--out DIR] [--param NAME ...] [--metric NAME ...] [--all]
    /usr/bin/python3 viz/plot_sweep.py SWEEP_DIR ...

Reads SWEEP_DIR/sweep.csv (or a path to a .csv), one row per run; the swept keys come from
SWEEP_DIR/sweep.json (its `axes`), or --param; units from SWEEP_DIR/sweep.h5 when present.
Writes into SWEEP_DIR/plots (or --out):

  sweep_overview.png  one panel per headline metric that varies across the runs (satellites,
                      neighbour distance, separation, link and bisection capacity, step time,
                      throughput, MFU, goodput, ...; else the first varying metrics), each against
                      the first swept key, one line per value of a second swept key, readable names
                      and units; further keys are averaged over (spread as error bars).
  sweep_<metric>.png  with --all, every varying metric; with --metric NAME, those named.
"""
import argparse
import csv
import math
import os
import json
import re
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SKIP = re.compile(r"^(run|run_id|index|id|seed|status|path|dir|output|name|scenario|rank|"
                  r"error|message|complete|stop_reason|wall_s|simulation_wall_s|host)$", re.I)


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


# Headline metrics for the overview, in order, with readable names (units come from sweep.h5).
HEADLINE = OrderedDict([
    ("satellites", "satellites"),
    ("formation.nearest_neighbour_min_m", "nearest neighbour, min"),
    ("formation.min_separation_m", "closest pair"),
    ("links.links_per_satellite_mean", "links per satellite"),
    ("links.capacity_mean_bps", "link capacity, mean"),
    ("links.bisection_capacity_min_bps", "bisection capacity, min"),
    # A constellation: the first algorithm listed (one per run when the sweep varies it).
    ("constellation.first_algorithm.tokens_per_s", "throughput (constellation)"),
    ("constellation.first_algorithm.step_time_mean_s", "step time, mean (constellation)"),
    ("constellation.first_algorithm.idle_fraction", "idle fraction (constellation)"),
    ("constellation.first_algorithm.gateway_bytes", "bytes over gateway links"),
    ("constellation.gateway_capacity_min_bps", "gateway capacity, min"),
    ("constellation.oversubscription_mean", "oversubscription, mean"),
    ("workload.step_time_median_s", "step time, median"),
    ("workload.tokens_per_s", "throughput"),
    ("workload.mfu", "MFU"),
    ("workload.bus_bw_mean_B_s", "bus bandwidth, mean"),
    ("radiation.goodput", "goodput, median of trials"),
    ("radiation.goodput_vs_fault_free", "goodput / fault-free goodput"),
    ("radiation.annual_dose_rad_per_yr", "annual dose"),
    ("station_keeping.delta_v_per_satellite_per_year_m_s", "station keeping"),
    ("point_wall_s", "wall time per point"),
])


def units_of(sweep_dir):
    """Column -> units from sweep.h5's /table datasets (empty without h5py or the file)."""
    path = os.path.join(sweep_dir, "sweep.h5")
    try:
        import h5py
        with h5py.File(path, "r") as f:
            t = f["table"]
            return {k: (t[k].attrs["units"].decode() if isinstance(t[k].attrs.get("units"), bytes)
                        else str(t[k].attrs.get("units", ""))) for k in t}
    except Exception:  # noqa: BLE001 (no h5py, no file, an older layout: plain names then)
        return {}


def swept_keys(sweep_dir):
    """The swept keys in sweep.json's axes order, or [] without one."""
    try:
        with open(os.path.join(sweep_dir, "sweep.json")) as fh:
            return [axis["key"] for axis in json.load(fh).get("axes", [])]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def label_of(column, units, names):
    name = names.get(column, column)
    unit = units.get(column, "")
    scale, unit = (1e12, "Tbit/s") if unit == "bit/s" else (1e9, "GB/s") if unit == "B/s" else (1.0, unit)
    return ("%s [%s]" % (name, unit) if unit and unit != "1" else name), scale


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("sweep", help="sweep directory (with sweep.csv) or a .csv file")
    p.add_argument("--out")
    p.add_argument("--param", action="append", default=[])
    p.add_argument("--metric", action="append", default=[])
    p.add_argument("--all", action="store_true", help="also one PNG per varying metric")
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

    sweep_dir = os.path.dirname(os.path.abspath(path))
    if a.param:
        missing = [c for c in a.param if c not in columns]
        if missing:
            print("plot_sweep: no column(s) %s in %s (columns: %s)"
                  % (", ".join(missing), path, ", ".join(columns)), file=sys.stderr)
            return 2
        params = a.param
    else:
        # The swept keys (sweep.json), not every dotted column: results have dotted names too.
        params = [c for c in swept_keys(sweep_dir) if c in columns and c in varying]
        if not params:
            params = [c for c in varying if c in numeric and not SKIP.match(c)][:1]
    x_name = params[0]
    x_numeric = x_name in numeric
    series_name = params[1] if len(params) > 1 else None

    def really_varies(c):  # beyond rounding: 1e-6 of its size
        v = [to_float(r[c]) for r in rows if to_float(r[c]) is not None]
        return bool(v) and max(v) - min(v) > 1e-6 * max(abs(x) for x in v)
    candidates = [c for c in numeric if c in varying and c not in params and not SKIP.match(c) and really_varies(c)]
    units = units_of(sweep_dir)
    headline = [c for c in HEADLINE if c in candidates] or candidates[:9]
    if any(c.startswith("constellation.first_algorithm.") for c in headline):
        # A constellation's workload block is its first algorithm's only when that one is ring or
        # hierarchical: its panels would show half the runs of the constellation ones.
        headline = [c for c in headline if not c.startswith("workload.")]
    print("plot_sweep: %d run(s); swept %s; %d varying metric(s), %d in the overview"
          % (len(rows), ", ".join(params), len(candidates), len(headline)))

    def draw(ax, m):
        """m against the first swept key, one line per value of the second; False if no values."""
        groups = OrderedDict()
        for r in rows:
            y = to_float(r.get(m, ""))
            if y is None or (isinstance(y, float) and math.isnan(y)):
                continue
            key = r[series_name] if series_name else None
            x = to_float(r[x_name]) if x_numeric else r[x_name]
            groups.setdefault(key, defaultdict(list))[x].append(y)
        if not groups:
            return False
        ylabel, scale = label_of(m, units, HEADLINE)
        categories = sorted({x for g in groups.values() for x in g}, key=str) if not x_numeric else None
        series_keys = list(groups)
        try:
            series_keys.sort(key=lambda v: float(v))
        except (TypeError, ValueError):
            pass
        for key in series_keys:
            g = groups[key]
            xs = [x for x in (sorted(g) if x_numeric else categories) if x in g]
            ys = [sum(g[x]) / len(g[x]) / scale for x in xs]
            lo = [y - min(g[x]) / scale for x, y in zip(xs, ys)]
            hi = [max(g[x]) / scale - y for x, y in zip(xs, ys)]
            xpos = xs if x_numeric else [categories.index(x) for x in xs]
            label = "%s = %s" % (series_name, key) if series_name else None
            if any(v > 0 for v in lo + hi):
                ax.errorbar(xpos, ys, yerr=[lo, hi], marker="o", capsize=3, label=label)
            else:
                ax.plot(xpos, ys, marker="o", label=label)
        if not x_numeric:
            ax.set_xticks(range(len(categories)))
            ax.set_xticklabels(categories, rotation=30, ha="right")
        xlabel, _ = label_of(x_name, units, {})
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.ticklabel_format(axis="y", useOffset=False, style="plain")
        ax.grid(alpha=0.3)
        if series_name:
            ax.legend(fontsize=7)
        return True

    written = 0
    if headline and not a.metric:
        cols = min(3, len(headline))
        nrows = int(math.ceil(len(headline) / cols))
        fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.4 * nrows), squeeze=False)
        for ax, m in zip(axes.flat, headline):
            draw(ax, m)
            ax.set_title(HEADLINE.get(m, m), fontsize=9)
        for ax in list(axes.flat)[len(headline):]:
            ax.axis("off")
        fig.suptitle("%s: %d runs, swept %s" % (os.path.basename(sweep_dir), len(rows), " x ".join(params)),
                     fontsize=10)
        fig.tight_layout(rect=(0, 0, 1, 0.97))
        out = os.path.join(out_dir, "sweep_overview.png")
        fig.savefig(out, dpi=120)
        plt.close(fig)
        print("plot_sweep: wrote %s" % out)
        written += 1
    metrics = a.metric or (candidates if a.all else [])
    for m in metrics:
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        if not draw(ax, m):
            plt.close(fig)
            print("plot_sweep: skipping %s: no values" % m)
            continue
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
