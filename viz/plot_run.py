#!/usr/bin/python3
"""Plots a skyfabric run's result.h5 as PNGs (matplotlib, Agg; Debian's python3).

    scripts/plot RUN_DIR [--out DIR] [--satellite I] [--neighbours K] [--sorted]
    /usr/bin/python3 viz/plot_run.py RUN_DIR ...

Reads RUN_DIR/result.h5 (or, for a run still going, the result.h5 it stages in
PARENT/.NAME.staging.PID; or a path to an .h5)
and writes into RUN_DIR/plots (or --out):

  neighbours.png   distances from satellite I (default 0) to its K (default 8) nearest
                   neighbours over time, from /formation/position_lvlh_m [T x N x 3] and
                   /time_s [T]; the Suncatcher paper's Fig. 3 (100-275 m, two cycles per
                   orbit for the reference lattice): the K satellites nearest on average
                   over the run (for a lattice, the adjacent cells); --sorted plots the k-th
                   nearest at each instant instead (100-255 m, four cycles per orbit).
  formation.png    closest-pair distance and the LVLH envelope, when present.
  link_capacity.png  links over time from /links/offsets [T+1] (CSR over time) and
                   /links/capacity_bps: aggregate capacity, per-link min/mean/max, link count.
  step_time.png    /workload/steps (compound dataset or group with compute_s,
                   communication_s, exposed_communication_s): per-step breakdown, on a
                   logarithmic axis when the steps span a decade or more.
  goodput.png      with radiation and a workload: the trials' goodput distribution
                   (/radiation/trials/goodput), the time each trial lost by cause
                   (/radiation/trials/lost_*), and trial 0's goodput over the run
                   (/radiation/job_timeline). A constellation (/radiation/constellation):
                   each algorithm's trials, median with the trials' interval, the mean's 95 %
                   confidence interval (summary.json) and the fault-free goodput, and the
                   median time lost per trial by cause.
  power.png        with a power section: shadow fraction, array output and load, battery state of
                   charge (min / mean over satellites) and the compute share the power allowed.
  constellation.png  with /constellation/algorithms (a constellation run): the training
                   algorithms side by side, one bar each: tokens/s, mean step time (compute
                   per step marked), idle fraction, and bytes by link class (gateway vs
                   intra-cluster).
  aggregation.png  with /constellation/gateway_capacity_bps: the gateway layer's capacity and,
                   in a panel of its own, the links up (and the pairs the Earth blocks) over
                   time, and the worst cluster's oversubscription (its bisection over its
                   gateway capacity) from /constellation/oversubscription [T x C].

  serving.png      with /inference/requests (workload.kind: inference): the TTFT and TPOT
                   distributions (complementary CDFs on log-log axes, one line per routing, p90
                   and p99 marked, the objectives from the attributes ttft_slo_s and tpot_slo_s
                   as dashed lines) and, for a constellation, the gateway egress over the run
                   (/inference/gateway_egress).

Each plot whose data is absent is skipped with a message; the exit status is 0 when at
least one plot was written, 1 when none could be, 2 for bad arguments or a missing file.
PDF and PostScript figures embed TrueType (Type 42) fonts, not Type 3.
"""
import argparse
import glob
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
# TrueType (Type 42) fonts in PDF and PostScript: publishers refuse the default Type 3.
matplotlib.rcParams.update({"pdf.fonttype": 42, "ps.fonttype": 42})
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

try:
    import h5py  # noqa: E402
except ImportError:  # pragma: no cover
    sys.exit("plot_run: h5py is missing; run with Debian's /usr/bin/python3 (scripts/plot)")

MU_EARTH_M3_S2 = 3.986004418e14


def skip(name, why):
    print("plot_run: skipping %s: %s" % (figure_name(name), why))


def find_h5(path):
    if os.path.isfile(path):
        return path
    candidate = os.path.join(path, "result.h5")
    if os.path.isfile(candidate):
        return candidate
    # A run in progress stages its files beside the folder (docs/output-format.md).
    folder = os.path.normpath(path)
    staged = glob.glob(os.path.join(os.path.dirname(folder), "." + os.path.basename(folder) + ".staging.*", "result.h5"))
    return max(staged, key=os.path.getmtime) if staged else None


def orbital_period_s(f):
    """The run's orbit (nodal period, root attribute orbit_period_s); older files: vis-viva, or None."""
    if "orbit_period_s" in f.attrs:
        return float(f.attrs["orbit_period_s"])
    try:
        r = np.linalg.norm(f["orbit/chief_position_eci_m"][0])
        v = np.linalg.norm(f["orbit/chief_velocity_eci_m_s"][0])
    except (KeyError, IndexError, ValueError):
        return None
    inv_a = 2.0 / r - v * v / MU_EARTH_M3_S2
    if inv_a <= 0:
        return None
    return 2 * math.pi * math.sqrt((1.0 / inv_a) ** 3 / MU_EARTH_M3_S2)


class TimeAxis:
    """Time since the first sample, in orbits when the period is known, else minutes."""

    def __init__(self, f):
        self.period_s = orbital_period_s(f)
        self.t0 = float(f["time_s"][0]) if "time_s" in f and f["time_s"].shape[0] else 0.0

    def __call__(self, t):
        t = np.asarray(t, dtype=float) - self.t0
        return t / self.period_s if self.period_s else t / 60.0

    @property
    def label(self):
        if self.period_s:
            return "time [orbits of %.1f min]" % (self.period_s / 60.0)
        return "time [min]"

    def ticks(self, ax):
        # Whole or quarter orbits, at most about a dozen ticks whatever the run length.
        if self.period_s:
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=12, steps=[1, 2, 2.5, 5, 10]))


FIGURE_FORMAT = "png"  # --format: png, or pdf/svg (vector)


def figure_name(name):
    """A figure's file name in the format asked for (goodput.png -> goodput.pdf under --format pdf)."""
    return os.path.splitext(name)[0] + "." + FIGURE_FORMAT


def save(fig, out_dir, name):
    path = os.path.join(out_dir, figure_name(name))
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    print("plot_run: wrote %s" % path)
    return path


def title_of(f):
    name = f.attrs.get("scenario_name", "")
    if isinstance(name, bytes):
        name = name.decode()
    incomplete = "complete" in f.attrs and not bool(f.attrs["complete"])
    return (str(name) or "skyfabric run") + ("  (incomplete run)" if incomplete else "")


def plot_neighbours(f, out_dir, tx, satellite, k, sorted_rank):
    name = "neighbours.png"
    if "formation/position_lvlh_m" not in f or "time_s" not in f:
        return skip(name, "no /formation/position_lvlh_m or /time_s")
    pos = f["formation/position_lvlh_m"][...]
    t = f["time_s"][...]
    if pos.ndim != 3 or pos.shape[2] != 3 or pos.shape[0] != t.shape[0]:
        return skip(name, "/formation/position_lvlh_m has shape %s, /time_s %s"
                    % (pos.shape, t.shape))
    n = pos.shape[1]
    if not 0 <= satellite < n:
        return skip(name, "satellite %d outside 0..%d" % (satellite, n - 1))
    if n < 2:
        return skip(name, "only one satellite")
    k = min(k, n - 1)
    d = np.linalg.norm(pos - pos[:, satellite:satellite + 1, :], axis=2)  # [T x N]
    d[:, satellite] = np.inf
    fig, ax = plt.subplots(figsize=(9, 4.8))
    x = tx(t)
    if sorted_rank:
        ranks = np.sort(d, axis=1)[:, :k]
        for j in range(k):
            ax.plot(x, ranks[:, j], lw=1.3, label="%d%s nearest" % (j + 1, "st" if j == 0 else
                                                                        "nd" if j == 1 else
                                                                        "rd" if j == 2 else "th"))
        shown = ranks
    else:
        # The K neighbours closest on average over the run: for a lattice these are the
        # adjacent cells, whose distances the paper's Fig. 3 follows (two cycles per orbit).
        first = np.argsort(np.mean(d, axis=0))[:k]
        for j in first:
            ax.plot(x, d[:, j], lw=1.3, label="satellite %d" % j)
        shown = d[:, first]
    lo, hi = float(np.min(shown)), float(np.max(shown))
    ax.set_xlabel(tx.label)
    ax.set_ylabel("distance [m]")
    ax.set_title("%s: satellite %d to its %d nearest neighbours (%.0f-%.0f m)"
                 % (title_of(f), satellite, k, lo, hi), fontsize=10)
    tx.ticks(ax)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2 if k > 4 else 1, loc="best")
    return save(fig, out_dir, name)


def plot_formation(f, out_dir, tx):
    name = "formation.png"
    have_sep = "formation/min_separation_m" in f
    have_env = "formation/envelope_m" in f
    if not (have_sep or have_env) or "time_s" not in f:
        return skip(name, "no /formation/min_separation_m or /formation/envelope_m")
    x = tx(f["time_s"][...])
    fig, axes = plt.subplots(1 + int(have_sep and have_env), 1, figsize=(9, 6 if have_sep and
                                                                        have_env else 3.6),
                             sharex=True, squeeze=False)
    axes = axes[:, 0]
    i = 0
    if have_sep:
        axes[i].plot(x, f["formation/min_separation_m"][...], color="C3")
        axes[i].set_ylabel("closest pair [m]")
        axes[i].grid(alpha=0.3)
        i += 1
    if have_env:
        env = f["formation/envelope_m"][...]
        for c, lab in enumerate(["|x| radial", "|y| along-track", "|z| normal"]):
            axes[i].plot(x, env[:, c], label=lab)
        axes[i].set_ylabel("envelope [m]")
        axes[i].legend(fontsize=8)
        axes[i].grid(alpha=0.3)
    axes[-1].set_xlabel(tx.label)
    tx.ticks(axes[-1])
    axes[0].set_title(title_of(f) + ": formation", fontsize=10)
    return save(fig, out_dir, name)


def plot_links(f, out_dir, tx):
    name = "link_capacity.png"
    if "links/offsets" not in f or "links/capacity_bps" not in f:
        return skip(name, "no /links/offsets and /links/capacity_bps")
    off = f["links/offsets"][...].astype(np.int64)
    cap = f["links/capacity_bps"][...]
    if "links/time_s" in f:
        t = f["links/time_s"][...]
    elif "time_s" in f:
        t = f["time_s"][...]
    else:
        return skip(name, "no /time_s")
    if off.shape[0] != t.shape[0] + 1 or off[-1] > cap.shape[0]:
        return skip(name, "/links/offsets has %d entries for %d samples and %d links"
                    % (off.shape[0], t.shape[0], cap.shape[0]))
    count = np.diff(off)
    total = np.add.reduceat(cap, off[:-1]) if cap.size else np.zeros(len(t))
    total = np.where(count > 0, total, 0.0)
    mn = np.array([cap[a:b].min() if b > a else np.nan for a, b in zip(off[:-1], off[1:])])
    mean = np.array([cap[a:b].mean() if b > a else np.nan for a, b in zip(off[:-1], off[1:])])
    mx = np.array([cap[a:b].max() if b > a else np.nan for a, b in zip(off[:-1], off[1:])])
    x = tx(t)
    fig, axes = plt.subplots(3, 1, figsize=(9, 7.5), sharex=True)
    axes[0].plot(x, total / 1e12, color="C0")
    axes[0].set_ylabel("aggregate [Tbit/s]")
    axes[1].fill_between(x, mn / 1e9, mx / 1e9, alpha=0.25, color="C2", label="min-max")
    axes[1].plot(x, mean / 1e9, color="C2", label="mean")
    axes[1].set_ylabel("per link [Gbit/s]")
    axes[1].legend(fontsize=8)
    axes[2].step(x, count, where="post", color="C1")
    axes[2].set_ylabel("links")
    axes[2].set_xlabel(tx.label)
    for ax in axes:
        ax.grid(alpha=0.3)
    tx.ticks(axes[-1])
    axes[0].set_title(title_of(f) + ": inter-satellite link capacity (per direction)", fontsize=10)
    return save(fig, out_dir, name)


def read_columns(obj, names):
    """Columns from a compound dataset or a group of datasets; missing ones are None."""
    out = {}
    if isinstance(obj, h5py.Dataset):
        fields = obj.dtype.names or ()
        data = obj[...]
        for n in names:
            out[n] = np.asarray(data[n], dtype=float) if n in fields else None
    else:
        for n in names:
            out[n] = np.asarray(obj[n][...], dtype=float) if n in obj else None
    return out


def log_scale_fits(values):
    """Whether positive values span a decade or more (a logarithmic axis reads them better)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return v.size > 1 and float(v.max()) >= 10.0 * float(v.min())


def plot_steps(f, out_dir):
    name = "step_time.png"
    if "workload/steps" not in f:
        return skip(name, "no /workload/steps")
    cols = read_columns(f["workload/steps"], ["compute_s", "communication_s", "all_to_all_s",
                                              "exposed_communication_s", "time_s", "step"])
    if cols["compute_s"] is None:
        return skip(name, "/workload/steps has no compute_s")
    compute = cols["compute_s"]
    if compute.size == 0:
        return skip(name, "/workload/steps is empty")
    exposed = cols["exposed_communication_s"]
    comm = cols["communication_s"]
    if exposed is None:
        exposed = comm if comm is not None else np.zeros_like(compute)
    x = cols["step"] if cols["step"] is not None else np.arange(compute.size)
    fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), gridspec_kw={"height_ratios": [2, 1]})
    ax = axes[0]
    a2a = cols["all_to_all_s"]
    moe = a2a is not None and float(np.max(a2a)) > 0.0  # MoE dispatch/combine on the critical path
    layers = [compute] + ([a2a] if moe else []) + [exposed]
    names = ["compute"] + (["MoE all-to-all"] if moe else []) + ["exposed all-reduce" if moe else "exposed communication"]
    ax.stackplot(x, *layers, labels=names, colors=["C0", "C1", "C3"][:1] + (["C1"] if moe else []) + ["C3"],
                 alpha=0.8, step="post" if compute.size < 200 else None)
    if comm is not None:
        ax.plot(x, comm, color="k", lw=0.8, label="communication (incl. overlapped)")
    ax.set_xlabel("training step")
    # Steps that span a decade or more (an eclipse-throttled step beside full-speed ones) on a
    # logarithmic axis, so that one long step does not flatten the others.
    total = np.sum(layers, axis=0)
    if log_scale_fits(total):
        ax.set_yscale("log")
        ax.set_ylim(0.5 * float(np.min(total[total > 0])), 2.0 * float(np.max(total)))
    ax.set_ylabel("time per step [s]" + (", log scale" if ax.get_yscale() == "log" else ""))
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)
    ax.set_title(title_of(f) + ": step-time breakdown", fontsize=10)
    # Mean breakdown as one bar.
    means = [float(np.mean(compute))] + ([float(np.mean(a2a))] if moe else []) + [float(np.mean(exposed))]
    labels = ["compute"] + (["MoE all-to-all"] if moe else []) + ["exposed comm."]
    if comm is not None:
        means.append(float(np.mean(comm)))
        labels.append("comm. total")
    axes[1].barh(labels, means, color=(["C0", "C1", "C3", "0.4"] if moe else ["C0", "C3", "0.4"])[:len(means)])
    for i, m in enumerate(means):
        axes[1].text(m, i, " %.4g s" % m, va="center", fontsize=8)
    axes[1].set_xlabel("mean per step [s]")
    return save(fig, out_dir, name)


LOSS_COLUMNS = (("lost_faults_s", "faults (rework, waits, SDC)"), ("lost_restarts_s", "restarts"),
                ("lost_checkpoints_s", "checkpoints"), ("lost_fabric_s", "damaged fabric"),
                ("lost_shrunk_ring_s", "shrunk ring"))


def plot_goodput(f, out_dir, tx):
    """The Monte Carlo trials' goodput distribution, where each trial's time went, and trial 0's
    goodput as the run went (its job timeline: kept steps over elapsed time)."""
    name = "goodput.png"
    trials = f.get("radiation/trials")
    timeline = f.get("radiation/job_timeline")
    if trials is None and timeline is None and "radiation/constellation/algorithm" in f:
        return plot_constellation_goodput(f, out_dir)
    if trials is None and timeline is None:
        return skip(name, "no /radiation/trials, /radiation/job_timeline or /radiation/constellation "
                          "(radiation with a workload)")
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.5))
    if trials is not None:
        g = trials["goodput"][...]
        axes[0].hist(g, bins=max(5, min(50, int(np.sqrt(len(g))) * 2)), color="C0", alpha=0.8)
        axes[0].axvline(np.median(g), color="k", label="median %.4f" % np.median(g))
        # Where the trials lie, as summary.json's goodput_interval: two trials' own values (nearest rank,
        # which below 40 trials is the min and max), never an interpolated one.
        s = np.sort(g)
        n = len(s)
        lo, hi = s[max(math.ceil(0.025 * n - 1e-9), 1) - 1], s[max(math.ceil(0.975 * n - 1e-9), 1) - 1]
        kind = "min-max" if n < 40 else "2.5-97.5 % (nearest rank)"
        axes[0].axvspan(lo, hi, color="0.8", alpha=0.5, label="%s of trials %.4f-%.4f" % (kind, lo, hi))
        axes[0].set_xlabel("goodput (useful / elapsed)")
        axes[0].set_ylabel("trials")
        axes[0].legend(fontsize=8)
        present = [(k, label) for k, label in LOSS_COLUMNS if k in trials]
        data = [trials[k][...] / 3600.0 for k, _ in present]
        # Labels set as ticks: boxplot's labels= became tick_labels= (matplotlib 3.9) and its
        # vert= became orientation= (3.10); Debian 12 ships 3.6.
        try:
            axes[1].boxplot(data, orientation="horizontal")
        except TypeError:
            axes[1].boxplot(data, vert=False)
        axes[1].set_yticks(range(1, len(present) + 1), [label for _, label in present])
        axes[1].set_xlabel("time lost per trial [h]")
        axes[1].set_title("%d trials" % len(g), fontsize=9)
    else:
        for ax in axes[:2]:
            ax.text(0.5, 0.5, "one trial (radiation.trials: 1)", ha="center", va="center", transform=ax.transAxes)
    if timeline is not None:
        start, end, phase = timeline["start_s"][...], timeline["end_s"][...], timeline["phase"][...]
        kept = (phase == 0) | (phase == 1)
        useful = np.cumsum(np.where(kept, end - start, 0.0))
        axes[2].plot(tx(end), useful / np.maximum(end, 1e-9), color="C1")
        axes[2].set_xlabel(tx.label)
        axes[2].set_ylabel("kept steps / elapsed so far (trial 0)")
        axes[2].set_ylim(0, 1.05)
        tx.ticks(axes[2])
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle(title_of(f) + ": goodput under radiation faults", fontsize=10)
    fig.tight_layout()
    return save(fig, out_dir, name)


def summary_beside(f):
    """summary.json beside result.h5 as a dict, or {} when there is none."""
    try:
        import json
        with open(os.path.join(os.path.dirname(os.path.abspath(f.filename)), "summary.json")) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def plot_constellation_goodput(f, out_dir):
    """A constellation's Monte Carlo trials, per algorithm (the same draws for each): every trial's
    goodput, the median with the trials' interval (/radiation/constellation, its kind in the
    attribute `interval`), the mean's 95 % confidence interval (summary.json) and the fault-free
    goodput; beside it, the median time lost per trial by cause."""
    name = "goodput.png"
    g = f["radiation/constellation"]
    names = algorithm_names(g["algorithm"])
    kind = g.attrs.get("interval", "")
    kind = kind.decode() if isinstance(kind, bytes) else str(kind)
    kind_words = {"min_max": "min-max of the trials"}.get(kind, "2.5-97.5 % of the trials (nearest rank)")
    ci = summary_beside(f).get("radiation", {}).get("constellation", {})
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    ax = axes[0]
    rng = np.random.default_rng(0)  # the dots' horizontal jitter only
    count = 0
    for k, algorithm in enumerate(names):
        per_trial = g[algorithm]["goodput"][...] if algorithm in g else np.zeros(0)
        count = max(count, per_trial.size)
        ax.scatter(k - 0.22 + 0.1 * rng.random(per_trial.size), per_trial, s=8, color="C%d" % k, alpha=0.5,
                   label="each trial" if k == 0 else None)
        median = float(g["goodput_median"][k])
        low, high = float(g["goodput_interval_low"][k]), float(g["goodput_interval_high"][k])
        ax.errorbar([k], [median], yerr=[[median - low], [high - median]], fmt="o", color="C%d" % k, capsize=5,
                    label="median, bars: %s" % kind_words if k == 0 else None)
        mean_ci = ci.get(algorithm, {}).get("goodput", {}).get("mean_ci95")
        if mean_ci and per_trial.size:
            mean = float(np.mean(per_trial))
            ax.errorbar([k + 0.2], [mean], yerr=[[mean - mean_ci[0]], [mean_ci[1] - mean]], fmt="s", color="k",
                        markersize=4, capsize=3, label="mean, bars: its 95 % confidence interval" if k == 0 else None)
        ax.scatter([k], [float(g["fault_free_goodput"][k])], marker="_", s=900, color="0.3", linewidths=1.5, zorder=3,
                   label="fault-free goodput" if k == 0 else None)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel("goodput (useful / elapsed)")
    ax.set_title("%d trials per algorithm, the same fault draws for each" % count, fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3, axis="y")
    # Time lost by cause: each algorithm's median over its trials.
    causes = [(k, label) for k, label in LOSS_COLUMNS + (("lost_waiting_s", "waiting for replicas"),)]
    bottom = np.zeros(len(names))
    for c, (column, label) in enumerate(causes):
        values = np.array([float(np.median(g[a][column][...])) / 3600.0 if a in g and column in g[a] else 0.0
                           for a in names])
        if not values.any():
            continue
        axes[1].bar(range(len(names)), values, bottom=bottom, color="C%d" % c, label=label)
        bottom += values
    axes[1].set_xticks(range(len(names)))
    axes[1].set_xticklabels(names)
    axes[1].set_ylabel("time lost per trial, median [h]")
    axes[1].legend(fontsize=7)
    axes[1].grid(alpha=0.3, axis="y")
    fig.suptitle(title_of(f) + ": goodput under radiation faults, per training algorithm", fontsize=10)
    return save(fig, out_dir, name)


def plot_power(f, out_dir, tx):
    name = "power.png"
    if "power/state_of_charge" not in f or "time_s" not in f:
        return skip(name, "no /power series (the scenario has no power section)")
    x = tx(f["time_s"][...])
    soc = f["power/state_of_charge"][...]
    fig, axes = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    if "sun/shadow_fraction" in f:
        axes[0].fill_between(x, f["sun/shadow_fraction"][...].mean(axis=1), color="0.6", step="post",
                             label="Earth's shadow (mean over satellites)")
        axes[0].set_ylabel("shadow fraction")
        axes[0].set_ylim(-0.05, 1.05)
        axes[0].legend(fontsize=8, loc="upper right")
    axes[1].plot(x, f["power/solar_w"][...].mean(axis=1), color="C2", label="array output")
    axes[1].plot(x, f["power/load_w"][...].mean(axis=1), color="C3", label="load")
    axes[1].set_ylabel("power per satellite [W]")
    axes[1].legend(fontsize=8, loc="upper right")
    axes[2].plot(x, soc.min(axis=1), color="C0", label="battery state of charge (min)")
    axes[2].plot(x, soc.mean(axis=1), color="C0", linestyle=":", label="battery state of charge (mean)")
    axes[2].plot(x, f["power/compute_fraction"][...], color="k", linewidth=0.8, label="compute allowed")
    axes[2].set_ylabel("share")
    axes[2].set_ylim(-0.05, 1.05)
    axes[2].legend(fontsize=8, loc="lower right")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel(tx.label)
    tx.ticks(axes[-1])
    axes[0].set_title(title_of(f) + ": power", fontsize=10)
    return save(fig, out_dir, name)


def algorithm_names(ds):
    """Names by code from the attribute algorithm_names ("0=ring,1=hierarchical,...")."""
    text = ds.attrs.get("algorithm_names", "")
    if isinstance(text, bytes):
        text = text.decode()
    names = dict(item.split("=", 1) for item in str(text).split(",") if "=" in item)
    return [names.get(str(int(c)), "algorithm %d" % int(c)) for c in ds[...]]


def plot_constellation(f, out_dir):
    name = "constellation.png"
    if "constellation/algorithms/algorithm" not in f:
        return skip(name, "no /constellation/algorithms (not a constellation run)")
    g = f["constellation/algorithms"]
    labels = algorithm_names(g["algorithm"])
    if "truncated" in g:  # a run cut short: its figures cover fewer steps
        labels = [n + ("*" if t else "") for n, t in zip(labels, g["truncated"][...])]
    x = np.arange(len(labels))
    colours = ["C%d" % k for k in range(len(labels))]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    ax = axes[0, 0]
    ax.bar(x, g["tokens_per_s"][...] / 1e6, color=colours)
    ax.set_ylabel("throughput [Mtokens/s]")
    ax = axes[0, 1]
    ax.bar(x, g["step_time_mean_s"][...], color=colours, label="mean step time")
    ax.scatter(x, g["compute_per_step_s"][...], marker="_", s=900, color="k", linewidths=2, zorder=3,
               label="compute per step")
    ax.set_ylabel("time per step [s]")
    ax.set_ylim(0, 1.3 * float(np.nanmax(np.r_[g["step_time_mean_s"][...], g["compute_per_step_s"][...], 1e-9])))
    ax.legend(fontsize=8, loc="upper right", ncol=2)
    ax = axes[1, 0]
    ax.bar(x, g["idle_fraction"][...], color=colours)
    ax.set_ylabel("idle fraction (chips waiting)")
    ax.set_ylim(0, max(1e-3, 1.15 * float(np.nanmax(g["idle_fraction"][...]))))
    ax = axes[1, 1]
    w = 0.38
    ax.bar(x - w / 2, g["intra_cluster_bytes"][...], w, color="C0", label="intra-cluster")
    ax.bar(x + w / 2, g["gateway_bytes"][...], w, color="C3", label="gateway")
    ax.set_yscale("log")
    ax.set_ylabel("bytes over the run")
    ax.legend(fontsize=8)
    for ax in axes.ravel():
        ax.set_xticks(x)
        ax.set_xticklabels(labels)
        ax.grid(alpha=0.3, axis="y")
    note = "  (* truncated)" if any(n.endswith("*") for n in labels) else ""
    fig.suptitle(title_of(f) + ": training algorithms across the constellation" + note, fontsize=10)
    return save(fig, out_dir, name)


def serving_objectives(f):
    """The serving objectives {"ttft_s": s, "tpot_s": s}: /inference/requests' attributes
    ttft_slo_s and tpot_slo_s, or for older files summary.json beside result.h5; {} if neither."""
    attrs = f["inference/requests"].attrs
    if "ttft_slo_s" in attrs and "tpot_slo_s" in attrs:
        return {"ttft_s": float(attrs["ttft_slo_s"]), "tpot_s": float(attrs["tpot_slo_s"])}
    try:
        import json
        with open(os.path.join(os.path.dirname(os.path.abspath(f.filename)), "summary.json")) as fh:
            inference = json.load(fh)["inference"]
        return {"ttft_s": float(inference["ttft_slo_s"]), "tpot_s": float(inference["tpot_slo_s"])}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


# The sections of the serving intervals (workloads::serving_interval_sections; docs/inference.md
# "Intervals"): the run cut into equal spans of arrival time, each span's CCDF taken alone.
SERVING_INTERVAL_SECTIONS = 20
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093]


def ccdf_band(sorted_values, values, arrival_s, run_s):
    """The 95 % sectioning band of the CCDF at sorted_values (at most 400 of them): the whole run's
    fraction slower ± t(0.975, n-1) · the spans' standard deviation / √n, clipped to [0, 1]; None where
    fewer than two spans have requests."""
    if not run_s > 0 or values.size < 2:
        return None
    section = np.clip(np.floor(arrival_s / run_s * SERVING_INTERVAL_SECTIONS), 0, SERVING_INTERVAL_SECTIONS - 1).astype(int)
    grid = sorted_values[np.unique(np.linspace(0, sorted_values.size - 1, min(400, sorted_values.size)).astype(int))]
    per_section = []
    for s in range(SERVING_INTERVAL_SECTIONS):
        v = np.sort(values[section == s])
        if v.size:
            per_section.append(1.0 - np.searchsorted(v, grid, side="left") / v.size)
    n = len(per_section)
    if n < 2:
        return None
    whole = 1.0 - np.searchsorted(sorted_values, grid, side="left") / sorted_values.size
    half = T975[n - 2] * np.std(np.array(per_section), axis=0, ddof=1) / np.sqrt(n)
    return grid, np.clip(whole - half, 1e-12, 1.0), np.clip(whole + half, 1e-12, 1.0)


def plot_serving(f, out_dir, tx):
    name = "serving.png"
    if "inference/requests/ttft_s" not in f:
        return skip(name, "no /inference/requests (not a serving run)")
    groups = [g for g in ("requests", "requests_local", "requests_prfaas") if "inference/%s/ttft_s" % g in f]
    egress = [g for g in ("gateway_egress", "gateway_egress_local", "gateway_egress_prfaas")
              if "inference/%s/egress_bps" % g in f]
    fig, axes = plt.subplots(1, 3 if egress else 2, figsize=(14 if egress else 10, 4.2))

    def routing(g):
        r = f["inference/" + g].attrs.get("routing", g)
        r = r.decode() if isinstance(r, bytes) else str(r)
        return {"local": "local PD", "prfaas": "PrfaaS"}.get(r, r)

    # Complementary CDFs on log-log axes: TTFT spans decades, and the tail (p90 at 0.1, p99 at 0.01),
    # where the routings differ, gets as much room as the body. The objectives are marked.
    slo = serving_objectives(f)
    run_s = float(f.attrs.get("simulated_s", 0.0))
    for k, (ax, column, scale, unit) in enumerate(((axes[0], "ttft_s", 1.0, "s"), (axes[1], "tpot_s", 1e3, "ms"))):
        floor, shown = 1.0, []
        for g in groups:
            raw = f["inference/%s/%s" % (g, column)][...] * scale
            keep = np.isfinite(raw) & (raw > 0)
            v = np.sort(raw[keep])
            shown.append(v)
            if v.size:
                # fraction of requests slower than v[i]: 1 - i/n (the slowest one: 1/n)
                line, = ax.step(v, 1.0 - np.arange(v.size) / v.size, where="post", label="%s (%d)" % (routing(g), v.size))
                floor = min(floor, 1.0 / v.size)
                band = ccdf_band(v, raw[keep], f["inference/%s/arrival_s" % g][...][keep], run_s)
                if band is not None:
                    ax.fill_between(band[0], band[1], band[2], step="post", color=line.get_color(), alpha=0.2, linewidth=0,
                                    label="95 %% interval (%d sections)" % SERVING_INTERVAL_SECTIONS if g == groups[0] else None)
        objective = slo.get(column)
        if objective:
            ax.axvline(objective * scale, color="k", linestyle="--", linewidth=0.9,
                       label="objective %.3g %s" % (objective * scale, unit))
        for q in (0.1, 0.01):  # p90, p99
            if q >= floor:
                ax.axhline(q, color="0.6", linewidth=0.6, linestyle=":")
                ax.text(1.0, q, " p%d" % round(100 * (1 - q)), transform=ax.get_yaxis_transform(), fontsize=7,
                        va="center", ha="left", color="0.4")
        # A logarithmic time axis where the times span a decade or more (TTFT: queueing to prefill).
        log_x = log_scale_fits(np.concatenate(shown + [np.zeros(0)]))
        if log_x:
            ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(0.5 * floor, 1.5)
        ax.set_xlabel(("time to first token" if k == 0 else "time per output token") + " [%s]%s"
                      % (unit, ", log scale" if log_x else ""))
        ax.set_ylabel("fraction of requests slower (CCDF)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8, loc="lower left")
    for g in egress:
        d = f["inference/" + g]
        axes[2].step(tx(d["start_s"][...]), d["egress_bps"][...] / 1e9, where="post", label=routing(g))
    if egress:
        axes[2].set_xlabel(tx.label)
        axes[2].set_ylabel("gateway egress [Gbit/s], mean per output step")
        axes[2].grid(alpha=0.3)
        axes[2].legend(fontsize=8)
        tx.ticks(axes[2])
    fig.suptitle(title_of(f) + ": serving", fontsize=10)
    return save(fig, out_dir, name)


def plot_aggregation(f, out_dir, tx):
    name = "aggregation.png"
    if "constellation/gateway_capacity_bps" not in f or "time_s" not in f:
        return skip(name, "no /constellation/gateway_capacity_bps (not a constellation run)")
    x = tx(f["time_s"][...])
    # Capacity and links each in a panel of its own: on one axis pair, scaled alike, the links'
    # step hid the capacity line under it.
    links = "constellation/gateway_links" in f
    fig, axes = plt.subplots(3 if links else 2, 1, figsize=(9, 8.5 if links else 6.5), sharex=True)
    capacity = f["constellation/gateway_capacity_bps"][...] / 1e12
    axes[0].plot(x, capacity, color="C3", label="gateway capacity")
    axes[0].set_ylabel("gateway capacity [Tbit/s]")
    axes[0].set_ylim(0, 1.15 * max(1e-9, float(np.nanmax(capacity))))
    if links:
        up = f["constellation/gateway_links"][...]
        axes[1].step(x, up, where="post", color="0.3", linewidth=1.0, label="gateway links up")
        if "constellation/gateway_blocked" in f:
            axes[1].step(x, f["constellation/gateway_blocked"][...], where="post", color="C0", linewidth=0.8,
                         linestyle="--", label="gateway pairs the Earth blocks")
        axes[1].set_ylabel("gateway links")
        axes[1].set_ylim(0, 1.15 * max(1, int(up.max())))
        axes[1].legend(fontsize=8, loc="lower right")
    if "constellation/oversubscription" in f:
        over = f["constellation/oversubscription"][...]
        worst = over.max(axis=1)
        cut = ~np.isfinite(worst)  # inf: a cluster with no gateway link up
        axes[-1].plot(x, np.where(cut, np.nan, worst), color="C1", label="worst cluster")
        axes[-1].plot(x, np.where(np.isfinite(over), over, np.nan).min(axis=1), color="C2", linewidth=0.8,
                      label="best cluster")
        if cut.any():
            axes[-1].scatter(x[cut], np.full(cut.sum(), np.nanmax(np.r_[worst[~cut], 1.0])), marker="x",
                             color="C3", label="a cluster cut off")
        axes[-1].axhline(1.0, color="k", linewidth=0.6, linestyle=":")
        axes[-1].legend(fontsize=8)
    axes[-1].set_ylabel("oversubscription\n(bisection / gateway capacity)")
    axes[-1].set_xlabel(tx.label)
    for ax in axes:
        ax.grid(alpha=0.3)
    tx.ticks(axes[-1])
    axes[0].set_title(title_of(f) + ": aggregation layer (per direction)", fontsize=10)
    return save(fig, out_dir, name)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run", help="run directory (with result.h5) or an .h5 file")
    p.add_argument("--out", help="output directory (default RUN_DIR/plots)")
    p.add_argument("--satellite", type=int, default=0)
    p.add_argument("--neighbours", type=int, default=8)
    p.add_argument("--sorted", action="store_true",
                   help="plot the k-th nearest at each instant rather than the K nearest on average")
    p.add_argument("--format", choices=("png", "pdf", "svg"), default="png",
                   help="figure format: png, or pdf/svg (vector, for a paper)")
    a = p.parse_args(argv)
    global FIGURE_FORMAT
    FIGURE_FORMAT = a.format
    h5 = find_h5(a.run)
    if h5 is None:
        print("plot_run: no result.h5 in %s" % a.run, file=sys.stderr)
        return 2
    run_dir = os.path.dirname(os.path.abspath(h5))
    out_dir = a.out or os.path.join(run_dir, "plots")
    os.makedirs(out_dir, exist_ok=True)
    written = []
    with h5py.File(h5, "r") as f:
        tx = TimeAxis(f)
        for fn in (lambda: plot_neighbours(f, out_dir, tx, a.satellite, a.neighbours, a.sorted),
                   lambda: plot_formation(f, out_dir, tx),
                   lambda: plot_links(f, out_dir, tx),
                   lambda: plot_steps(f, out_dir),
                   lambda: plot_goodput(f, out_dir, tx),
                   lambda: plot_power(f, out_dir, tx),
                   lambda: plot_constellation(f, out_dir),
                   lambda: plot_aggregation(f, out_dir, tx),
                   lambda: plot_serving(f, out_dir, tx)):
            try:
                path = fn()
            except (KeyError, ValueError, TypeError, IndexError) as e:
                path = None
                print("plot_run: a plot failed on unexpected data: %s: %s"
                      % (type(e).__name__, e))
            if path:
                written.append(path)
    print("plot_run: %d plot(s) in %s" % (len(written), out_dir))
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
