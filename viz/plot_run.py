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
                   communication_s, exposed_communication_s): per-step breakdown.
  goodput.png      with radiation and a workload: the trials' goodput distribution
                   (/radiation/trials/goodput), the time each trial lost by cause
                   (/radiation/trials/lost_*), and trial 0's goodput over the run
                   (/radiation/job_timeline).
  power.png        with a power section: shadow fraction, array output and load, battery state of
                   charge (min / mean over satellites) and the compute share the power allowed.
  constellation.png  with /constellation/algorithms (a constellation run): the training
                   algorithms side by side, one bar each: tokens/s, mean step time (compute
                   per step marked), idle fraction, and bytes by link class (gateway vs
                   intra-cluster).
  aggregation.png  with /constellation/gateway_capacity_bps: the gateway layer's capacity and
                   links up over time, and the worst cluster's oversubscription (its bisection
                   over its gateway capacity) from /constellation/oversubscription [T x C].

  serving.png      with /inference/requests (workload.kind: inference): the TTFT and TPOT
                   distributions (CDFs, one line per routing) and, for a
                   constellation, the gateway egress over the run (/inference/gateway_egress).

Each plot whose data is absent is skipped with a message; the exit status is 0 when at
least one plot was written, 1 when none could be, 2 for bad arguments or a missing file.
"""
import argparse
import glob
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

try:
    import h5py  # noqa: E402
except ImportError:  # pragma: no cover
    sys.exit("plot_run: h5py is missing; run with Debian's /usr/bin/python3 (scripts/plot)")

MU_EARTH_M3_S2 = 3.986004418e14


def skip(name, why):
    print("plot_run: skipping %s: %s" % (name, why))


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


def save(fig, out_dir, name):
    path = os.path.join(out_dir, os.path.splitext(name)[0] + "." + FIGURE_FORMAT)
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
    ax.set_ylabel("time per step [s]")
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
    if trials is None and timeline is None:
        return skip(name, "no /radiation/trials or /radiation/job_timeline (radiation with a workload)")
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

    for k, (ax, column, scale, unit) in enumerate(((axes[0], "ttft_s", 1.0, "s"), (axes[1], "tpot_s", 1e3, "ms"))):
        for g in groups:
            v = f["inference/%s/%s" % (g, column)][...] * scale
            v = np.sort(v[np.isfinite(v)])
            if v.size:
                ax.step(v, np.arange(1, v.size + 1) / v.size, where="post", label="%s (%d)" % (routing(g), v.size))
        ax.set_xlabel(("time to first token" if k == 0 else "time per output token") + " [%s]" % unit)
        ax.set_ylabel("fraction of requests")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
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
    fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    axes[0].plot(x, f["constellation/gateway_capacity_bps"][...] / 1e12, color="C3", label="gateway capacity")
    axes[0].set_ylabel("gateway capacity [Tbit/s]")
    axes[0].set_ylim(0, 1.15 * max(1e-9, float(np.nanmax(f["constellation/gateway_capacity_bps"][...]))) / 1e12)
    handles = axes[0].get_lines()
    if "constellation/gateway_links" in f:
        twin = axes[0].twinx()
        handles += twin.step(x, f["constellation/gateway_links"][...], where="post", color="0.4", linewidth=0.8,
                             label="gateway links (right)")
        twin.set_ylabel("gateway links")
        twin.set_ylim(0, 1.15 * max(1, int(f["constellation/gateway_links"][...].max())))
    axes[0].legend(handles=handles, fontsize=8, loc="lower right")
    if "constellation/oversubscription" in f:
        over = f["constellation/oversubscription"][...]
        worst = over.max(axis=1)
        cut = ~np.isfinite(worst)  # inf: a cluster with no gateway link up
        axes[1].plot(x, np.where(cut, np.nan, worst), color="C1", label="worst cluster")
        axes[1].plot(x, np.where(np.isfinite(over), over, np.nan).min(axis=1), color="C2", linewidth=0.8,
                     label="best cluster")
        if cut.any():
            axes[1].scatter(x[cut], np.full(cut.sum(), np.nanmax(np.r_[worst[~cut], 1.0])), marker="x",
                            color="C3", label="a cluster cut off")
        axes[1].axhline(1.0, color="k", linewidth=0.6, linestyle=":")
        axes[1].legend(fontsize=8)
    axes[1].set_ylabel("oversubscription\n(bisection / gateway capacity)")
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
