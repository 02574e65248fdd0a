#!/usr/bin/python3
"""Plots a skyfabric sweep's metrics against the swept parameter(s) (matplotlib, Agg).

    scripts/plot --sweep SWEEP_DIR [--out DIR] [--param NAME ...] [--metric NAME ...] [--all]
                 [--format png|pdf|svg]
    /usr/bin/python3 viz/plot_sweep.py SWEEP_DIR ...

Reads SWEEP_DIR/sweep.csv (or a path to a .csv), one row per run; the swept keys come from
SWEEP_DIR/sweep.json (its `axes`), or --param; units from SWEEP_DIR/sweep.h5 when present.
Writes into SWEEP_DIR/plots (or --out):

  sweep_overview.png  one panel per headline metric that varies across the runs (satellites,
                      neighbour distance, separation, link and bisection capacity, step time,
                      throughput, MFU, goodput, a serving run's TTFT / TPOT p99, SLO attainment
                      and output tokens/s per routing, ...; else the first varying metrics), each against
                      the first swept key, one line per value of a second swept key, readable names
                      and units; further keys are averaged over (spread as error bars).
  sweep_<metric>.png  with --all, every varying metric; with --metric NAME, those named.

For a paper: --format pdf or svg writes vector figures (PDFs with TrueType, Type 42, fonts). An axis whose (positive) values span a
decade or more is logarithmic; ticks carry SI prefixes (9.6T on a [bit/s] axis); a metric with a
Monte Carlo interval (COLUMN_interval.0/.1 in sweep.csv) has it as error bars, else the spread of
points averaged together; reference lines where one exists: the fault-free goodput beside
goodput, the bandwidth bound beside bus bandwidth, linear scaling from the smallest point beside
throughput against satellites or ranks.
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
# TrueType (Type 42) fonts in PDF and PostScript: publishers refuse the default Type 3.
matplotlib.rcParams.update({"pdf.fonttype": 42, "ps.fonttype": 42})
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import EngFormatter, FormatStrFormatter, NullFormatter, ScalarFormatter  # noqa: E402

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
    # Serving (workload.kind: inference): each routing's tail latency, SLO attainment and throughput.
    ("inference.routings.local.ttft_s.p99", "TTFT p99, local PD"),
    ("inference.routings.prfaas.ttft_s.p99", "TTFT p99, PrfaaS"),
    ("inference.routings.local.tpot_s.p99", "TPOT p99, local PD"),
    ("inference.routings.prfaas.tpot_s.p99", "TPOT p99, PrfaaS"),
    ("inference.routings.local.slo_attainment", "SLO attainment, local PD"),
    ("inference.routings.prfaas.slo_attainment", "SLO attainment, PrfaaS"),
    ("inference.routings.local.output_tokens_per_s", "output tokens/s, local PD"),
    ("inference.routings.prfaas.output_tokens_per_s", "output tokens/s, PrfaaS"),
    ("inference.routings.prfaas.gateway_egress_mean_bps", "gateway egress, mean (PrfaaS)"),
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
    """'name [unit]' (the tick labels carry the SI prefix: 9.6T on a [bit/s] axis)."""
    name = names.get(column, column)
    unit = units.get(column, "")
    return "%s [%s]" % (name, unit) if unit and unit != "1" else name


# metric -> (column, legend): a line the metric is bounded by or compared with, from the same run.
REFERENCE = {
    "radiation.goodput": ("radiation.fault_free_goodput", "fault-free goodput"),
    "workload.bus_bw_mean_B_s": ("workload.bus_bw_bound_B_s", "bandwidth bound"),
}
# Swept keys against which throughput has an ideal: linear in the count.
SCALES_LINEARLY_WITH = {"satellites", "workload.data_parallel", "formation.satellites"}
INTERVAL_COLUMN = re.compile(r"(_interval|\.interval|_ci95|\.mean_ci95)\.[01]$")
# Indices, not quantities (which satellites, which sample): never a figure of their own.
INDEX_COLUMN = re.compile(r"(_pair|_index|_satellite|_id|_at_sample)(\.\d+)?$")


def spans_a_decade(values):
    v = [x for x in values if x is not None]
    return bool(v) and min(v) > 0 and max(v) / min(v) >= 10.0


def tick_format(axis, values):
    """SI prefixes (12M, 9.6T, 50n) for values that need them; plain numbers (0.9998, 400) otherwise,
    so that a fraction never reads as milli-something."""
    v = [abs(x) for x in values if x is not None and x != 0]
    if v and (max(v) >= 1e4 or max(v) < 1e-2):
        axis.set_major_formatter(EngFormatter(sep=""))
    elif axis.get_scale() == "linear":
        axis.set_major_formatter(ScalarFormatter(useOffset=False))
    else:
        axis.set_major_formatter(FormatStrFormatter("%g"))


def human_title(column):
    """'workload.step_time_median_s' -> 'workload: step time median [s]' (HEADLINE names win)."""
    if column in HEADLINE:
        return HEADLINE[column]
    element = ""
    if re.search(r"\.\d+$", column):  # one element of a vector: x, y, z for three
        column, _, index = column.rpartition(".")
        element = ", " + ("xyz"[int(index)] if int(index) < 3 else "element %s" % index)
    group, _, leaf = column.rpartition(".")
    m = re.match(r"(.*?)_(s|m|bps|B_s|B|m_s|W|J|rad_per_yr)$", leaf)
    words = (m.group(1) if m else leaf).replace("_", " ")
    unit = {"B_s": "B/s", "m_s": "m/s", "bps": "bit/s", "rad_per_yr": "rad/yr"}.get(m.group(2), m.group(2)) if m else ""
    return ("%s: " % group.replace(".", " ") if group else "") + words + element + (" [%s]" % unit if unit else "")


class Sweep:
    """A sweep's table and what to plot it against (the swept keys, units, varying metrics)."""

    def __init__(self, path, params=None):
        self.path = path
        self.dir = os.path.dirname(os.path.abspath(path))
        self.columns, self.rows = load(path)
        rows, columns = self.rows, self.columns
        self.numeric = [c for c in columns if all(to_float(r[c]) is not None for r in rows if r[c] != "")
                        and any(r[c] != "" for r in rows)]
        varying = [c for c in columns if len({r[c] for r in rows}) > 1]
        if params:
            self.params = params
        else:
            # The swept keys (sweep.json), not every dotted column: results have dotted names too.
            self.params = [c for c in swept_keys(self.dir) if c in columns and c in varying]
            if not self.params:
                self.params = [c for c in varying if c in self.numeric and not SKIP.match(c)][:1]
        self.x_name = self.params[0]
        self.x_numeric = self.x_name in self.numeric
        self.series_name = self.params[1] if len(self.params) > 1 else None

        def really_varies(c):  # beyond rounding: 1e-6 of its size
            v = [to_float(r[c]) for r in rows if to_float(r[c]) is not None]
            return bool(v) and max(v) - min(v) > 1e-6 * max(abs(x) for x in v)
        self.candidates = [c for c in self.numeric if c in varying and c not in self.params and not SKIP.match(c)
                           and not INTERVAL_COLUMN.search(c) and not INDEX_COLUMN.search(c) and really_varies(c)]
        self.units = units_of(self.dir)

    def draw(self, ax, m):
        """m against the first swept key, one line per value of the second; False if no values."""
        x_name, series_name, x_numeric, units = self.x_name, self.series_name, self.x_numeric, self.units
        lo_col, hi_col = m + "_interval.0", m + "_interval.1"
        has_interval = lo_col in self.columns and hi_col in self.columns
        reference = REFERENCE.get(m)
        groups = OrderedDict()
        for r in self.rows:
            y = to_float(r.get(m, ""))
            if y is None or (isinstance(y, float) and math.isnan(y)):
                continue
            key = r[series_name] if series_name else None
            x = to_float(r[x_name]) if x_numeric else r[x_name]
            if x_numeric and x is None:  # a point whose swept value was refused (it failed): no x to plot at
                continue
            lo = to_float(r.get(lo_col, "")) if has_interval else None
            hi = to_float(r.get(hi_col, "")) if has_interval else None
            ref = to_float(r.get(reference[0], "")) if reference and reference[0] in self.columns else None
            groups.setdefault(key, defaultdict(list))[x].append((y, lo, hi, ref))
        if not groups:
            return False
        unit = units.get(m, "")
        categories = sorted({x for g in groups.values() for x in g}, key=str) if not x_numeric else None
        series_keys = list(groups)
        try:
            series_keys.sort(key=lambda v: float(v))
        except (TypeError, ValueError):
            pass
        all_y = []
        for key in series_keys:
            g = groups[key]
            xs = [x for x in (sorted(g) if x_numeric else categories) if x in g]
            ys = [sum(p[0] for p in g[x]) / len(g[x]) for x in xs]
            if has_interval and all(p[1] is not None and p[2] is not None for x in xs for p in g[x]):
                # The trials' interval (averaged with the points when several share an x).
                lo = [y - sum(p[1] for p in g[x]) / len(g[x]) for x, y in zip(xs, ys)]
                hi = [sum(p[2] for p in g[x]) / len(g[x]) - y for x, y in zip(xs, ys)]
            else:
                lo = [y - min(p[0] for p in g[x]) for x, y in zip(xs, ys)]
                hi = [max(p[0] for p in g[x]) - y for x, y in zip(xs, ys)]
            lo = [max(0.0, v) for v in lo]
            hi = [max(0.0, v) for v in hi]
            xpos = xs if x_numeric else [categories.index(x) for x in xs]
            label = "%s = %s" % (series_name, key) if series_name else None
            if has_interval:  # say what the bars are
                label = (label + ", " if label else "") + "bars: the trials' interval"
            if any(v > 0 for v in lo + hi):
                ax.errorbar(xpos, ys, yerr=[lo, hi], marker="o", capsize=3, label=label)
            else:
                ax.plot(xpos, ys, marker="o", label=label)
            all_y += [y - l for y, l in zip(ys, lo)] + [y + h for y, h in zip(ys, hi)]
            refs = [sum(p[3] for p in g[x]) / len(g[x]) if all(p[3] is not None for p in g[x]) else None for x in xs]
            if reference and all(v is not None for v in refs):
                ax.plot(xpos, refs, linestyle="--", color="0.4", label=reference[1] + (" (%s)" % key if series_name else ""))
                all_y += refs
            if m == "workload.tokens_per_s" and x_numeric and x_name in SCALES_LINEARLY_WITH and xs and xs[0] > 0:
                ideal = [ys[0] * x / xs[0] for x in xs]
                ax.plot(xpos, ideal, linestyle=":", color="0.4", label="linear scaling" + (" (%s)" % key if series_name else ""))
        if not x_numeric:
            ax.set_xticks(range(len(categories)))
            ax.set_xticklabels(categories, rotation=30, ha="right")
        else:
            x_values = sorted({x for g in groups.values() for x in g})
            if spans_a_decade(x_values):
                ax.set_xscale("log")
                if len(x_values) <= 8:  # few points: a tick at each, not only at powers of ten
                    ax.set_xticks(x_values)
                    ax.xaxis.set_minor_formatter(NullFormatter())
            tick_format(ax.xaxis, x_values)
        if spans_a_decade(all_y) and max(all_y) / min(all_y) >= 100.0:
            ax.set_yscale("log")
        tick_format(ax.yaxis, all_y)
        ax.set_xlabel(label_of(x_name, units, {}))
        ax.set_ylabel(label_of(m, units, HEADLINE) if unit else HEADLINE.get(m, human_title(m)), fontsize=8)
        ax.grid(alpha=0.3, which="both")
        if series_name or reference or ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
        return True


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("sweep", help="sweep directory (with sweep.csv) or a .csv file")
    p.add_argument("--out")
    p.add_argument("--param", action="append", default=[])
    p.add_argument("--metric", action="append", default=[])
    p.add_argument("--all", action="store_true", help="also one figure per varying metric")
    p.add_argument("--format", choices=("png", "pdf", "svg"), default="png",
                   help="figure format: png, or pdf/svg (vector, for a paper)")
    a = p.parse_args(argv)

    path = a.sweep if os.path.isfile(a.sweep) else os.path.join(a.sweep, "sweep.csv")
    if not os.path.isfile(path):
        print("plot_sweep: no sweep.csv at %s" % a.sweep, file=sys.stderr)
        return 2
    columns, _ = load(path)
    missing = [c for c in a.param if c not in columns]
    if missing:
        print("plot_sweep: no column(s) %s in %s (columns: %s)"
              % (", ".join(missing), path, ", ".join(columns)), file=sys.stderr)
        return 2
    sw = Sweep(path, a.param)
    out_dir = a.out or os.path.join(sw.dir, "plots")
    os.makedirs(out_dir, exist_ok=True)
    headline = [c for c in HEADLINE if c in sw.candidates] or sw.candidates[:9]
    if any(c.startswith("constellation.first_algorithm.") for c in headline):
        # A constellation's workload block is its first algorithm's only when that one is ring or
        # hierarchical: its panels would show half the runs of the constellation ones.
        headline = [c for c in headline if not c.startswith("workload.")]
    print("plot_sweep: %d run(s); swept %s; %d varying metric(s), %d in the overview"
          % (len(sw.rows), ", ".join(sw.params), len(sw.candidates), len(headline)))

    def save(fig, name, dpi):
        out = os.path.join(out_dir, "%s.%s" % (name, a.format))
        fig.savefig(out, dpi=dpi)
        plt.close(fig)
        print("plot_sweep: wrote %s" % out)

    written = 0
    if headline and not a.metric:
        cols = min(3, len(headline))
        nrows = int(math.ceil(len(headline) / cols))
        fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.4 * nrows), squeeze=False)
        for ax, m in zip(axes.flat, headline):
            sw.draw(ax, m)
            ax.set_title(HEADLINE.get(m, human_title(m)), fontsize=9)
        for ax in list(axes.flat)[len(headline):]:
            ax.axis("off")
        fig.suptitle("%s: %d runs, swept %s" % (os.path.basename(sw.dir), len(sw.rows), " x ".join(sw.params)),
                     fontsize=10)
        fig.tight_layout(rect=(0, 0, 1, 0.97))
        save(fig, "sweep_overview", 120)
        written += 1
    metrics = a.metric or (sw.candidates if a.all else [])
    for m in metrics:
        fig, ax = plt.subplots(figsize=(7.5, 4.5))
        if not sw.draw(ax, m):
            plt.close(fig)
            print("plot_sweep: skipping %s: no values" % m)
            continue
        ax.set_title("%s (%d runs)" % (human_title(m), len(sw.rows)), fontsize=10)
        fig.tight_layout()
        save(fig, "sweep_%s" % safe(m), 130)
        written += 1
    print("plot_sweep: %d plot(s) in %s" % (written, out_dir))
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
