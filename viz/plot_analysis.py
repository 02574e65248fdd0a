#!/usr/bin/python3
"""Draws `skyfabric analyze`'s figures as SVG (matplotlib, Agg); the command embeds them in report.html.

    /usr/bin/python3 viz/plot_analysis.py RUN_DIR --out DIR

Reads RUN_DIR/analysis.json (the analysis just written) and RUN_DIR/result.h5, and writes into DIR
(each staged beside its name and renamed into place; a figure the run's data does not allow is
removed if an earlier analysis left one):

  breakdown.svg         each breakdown of analysis.json as a stacked bar, its parts in seconds
                        (a part subtracted from the total, such as time gained, stacks leftwards).
  link_heatmap.svg      links x time: each of the busiest links' utilisation per time bin, from
                        /workload/link_epochs (written with output.trace or output.vtk).
  link_utilisation.svg  without that series: the links ranked by their utilisation over the run
                        (/workload/link_utilisation), gateway links (ends in different clusters) marked.
  stragglers.svg        the straggler timeline, where per-cluster data exists (/power or /sun with
                        /constellation/cluster_of): the step time per step, each cluster's lowest
                        state of charge and its mean shadow fraction over time.

Fonts: TrueType (Type 42) in PDF and PostScript as the repository's other plots; in SVG the glyphs
are paths, so the figure needs no font. Element ids are prefixed with the figure's name, so that
several figures inlined in one HTML page do not share ids. No metadata that names a URL or a date.
Exit status 0 when every figure the data allows was drawn; 3 when h5py or matplotlib is missing.
"""
import argparse
import io
import json
import os
import re
import sys

try:
    import h5py
    import matplotlib
    import numpy as np
except ImportError as e:  # pragma: no cover - reported to the caller
    print("plot_analysis: %s (run scripts/setup)" % e, file=sys.stderr)
    sys.exit(3)

matplotlib.use("Agg")
# TrueType (Type 42) fonts in PDF and PostScript, as viz/plot_*.py; SVG glyphs as paths.
matplotlib.rcParams.update({"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "path", "svg.hashsalt": "skyfabric"})
import matplotlib.pyplot as plt  # noqa: E402

FIGURES = ("breakdown", "link_heatmap", "link_utilisation", "stragglers")
MAX_LINKS = 40
MAX_BINS = 240


def save(fig, out, name):
    """The figure as SVG, ids prefixed with `name`, staged and renamed into out/name.svg."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight",
                metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    plt.close(fig)
    text = buffer.getvalue()
    ids = set(re.findall(r'\bid="([^"]+)"', text))
    if ids:
        pattern = re.compile(r'(\bid=")([^"]+)(")|(url\(#)([^)]+)(\))|(href="#)([^"]+)(")')

        def rename(m):
            for first in (1, 4, 7):
                if m.group(first) is not None:
                    ident = m.group(first + 1)
                    ident = name + "-" + ident if ident in ids else ident
                    return m.group(first) + ident + m.group(first + 2)
            return m.group(0)

        text = pattern.sub(rename, text)
    path = os.path.join(out, name + ".svg")
    staged = "%s.tmp-%d" % (path, os.getpid())
    with open(staged, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(staged, path)
    return path


def dataset(h5, path):
    return np.asarray(h5[path][()], dtype=float) if path in h5 else None


def draw_breakdown(analysis, out):
    breakdowns = [b for b in analysis.get("breakdowns", []) if b.get("parts")]
    if not breakdowns:
        return False
    fig, axes = plt.subplots(len(breakdowns), 1, figsize=(9.0, 0.4 + 1.25 * len(breakdowns)), squeeze=False)
    colours = plt.get_cmap("tab20").colors
    for ax, b in zip(axes[:, 0], breakdowns):
        right, left = 0.0, 0.0
        for i, part in enumerate(b["parts"]):
            s = float(part["seconds"])
            if s == 0.0:
                continue
            if s > 0:
                ax.barh(0, s, left=right, color=colours[i % len(colours)], label="%s: %.4g s" % (part["name"], s))
                right += s
            else:
                ax.barh(0, s, left=left, color=colours[i % len(colours)], hatch="//", label="%s: %.4g s" % (part["name"], s))
                left += s
        ax.set_yticks([])
        ax.set_title("%s: %s %.4g s" % (b["subject"], b["total_name"], b["total_s"]), fontsize=9, loc="left")
        ax.set_xlabel("seconds", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.tight_layout()
    save(fig, out, "breakdown")
    return True


def link_names(source, target):
    return ["%d-%d" % (int(s), int(t)) for s, t in zip(source, target)]


def draw_heatmap(h5, out):
    start = dataset(h5, "/workload/link_epochs/start_s")
    if start is None or start.size == 0:
        return False
    end = dataset(h5, "/workload/link_epochs/end_s")
    source = dataset(h5, "/workload/link_epochs/source").astype(np.int64)
    target = dataset(h5, "/workload/link_epochs/target").astype(np.int64)
    util = dataset(h5, "/workload/link_epochs/utilisation")
    span = np.maximum(end - start, 0.0)
    key = source * (int(max(source.max(), target.max())) + 1) + target
    links, inverse = np.unique(key, return_inverse=True)
    busy = np.zeros(links.size)
    np.add.at(busy, inverse, util * span)
    top = np.argsort(-busy, kind="stable")[:MAX_LINKS]
    t0, t1 = float(start.min()), float(end.max())
    if not t1 > t0:
        return False
    bins = min(MAX_BINS, max(1, np.unique(start).size))
    edges = np.linspace(t0, t1, bins + 1)
    grid = np.zeros((top.size, bins))
    names = []
    for row, link in enumerate(top):
        pick = inverse == link
        s, e, u = start[pick], end[pick], util[pick]
        names.append("%d-%d" % (source[pick][0], target[pick][0]))
        # ∫ utilisation dt up to each edge: Σ u·((x − s)+ − (x − e)+), then the bins' means.
        x = edges[:, None]
        integral = (u * (np.clip(x - s, 0.0, None) - np.clip(x - e, 0.0, None))).sum(axis=1)
        grid[row] = np.diff(integral) / np.diff(edges)
    fig, ax = plt.subplots(figsize=(9.0, 1.2 + 0.18 * top.size))
    mesh = ax.pcolormesh(edges, np.arange(top.size + 1), grid, cmap="magma", vmin=0.0, vmax=max(1e-12, float(grid.max())),
                         shading="flat", rasterized=False)
    ax.set_yticks(np.arange(top.size) + 0.5)
    ax.set_yticklabels(names, fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("time since the epoch [s]")
    ax.set_ylabel("link (busiest first)")
    ax.set_title("link utilisation over time (%d busiest of %d links, %d time bins)" % (top.size, links.size, bins), fontsize=9)
    fig.colorbar(mesh, ax=ax, label="utilisation")
    fig.tight_layout()
    save(fig, out, "link_heatmap")
    return True


def cluster_of(h5, satellites):
    c = dataset(h5, "/constellation/cluster_of")
    return c.astype(int) if c is not None and c.size == satellites else np.zeros(satellites, dtype=int)


def draw_link_ranking(h5, out):
    util = dataset(h5, "/workload/link_utilisation/utilisation")
    if util is None or util.size == 0:
        return False
    source = dataset(h5, "/workload/link_utilisation/source").astype(int)
    target = dataset(h5, "/workload/link_utilisation/target").astype(int)
    c = dataset(h5, "/constellation/cluster_of")
    gateway = np.zeros(util.size, dtype=bool)
    if c is not None:
        ok = (source < c.size) & (target < c.size)
        gateway[ok] = c[source[ok]] != c[target[ok]]
    order = np.argsort(-util, kind="stable")[:MAX_LINKS]
    fig, ax = plt.subplots(figsize=(9.0, 1.2 + 0.18 * order.size))
    ax.barh(np.arange(order.size), util[order], color=["tab:red" if gateway[i] else "tab:blue" for i in order])
    ax.set_yticks(np.arange(order.size))
    ax.set_yticklabels(link_names(source[order], target[order]), fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("utilisation over the run (bytes / capacity x time)")
    ax.set_title("links ranked by utilisation (%d of %d%s)" % (order.size, util.size, "; red: gateway links" if gateway.any() else ""),
                 fontsize=9)
    fig.tight_layout()
    save(fig, out, "link_utilisation")
    return True


def draw_stragglers(h5, out):
    time = dataset(h5, "/time_s")
    shadow = dataset(h5, "/sun/shadow_fraction")
    soc = dataset(h5, "/power/state_of_charge")
    if time is None or time.size < 2 or (shadow is None and soc is None):
        return False
    satellites = (soc if soc is not None else shadow).size // time.size
    clusters = cluster_of(h5, satellites)
    count = int(clusters.max()) + 1
    start = dataset(h5, "/workload/steps/start_s")
    end = dataset(h5, "/workload/steps/end_s")
    panels = [p for p in ("steps" if start is not None and start.size else None, "soc" if soc is not None else None,
                          "shadow" if shadow is not None else None) if p]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9.0, 1.0 + 1.9 * len(panels)), sharex=True, squeeze=False)
    colours = plt.get_cmap("tab10").colors
    for ax, panel in zip(axes[:, 0], panels):
        if panel == "steps":
            ax.plot(start, end - start, ".", markersize=2, color="black")
            ax.set_ylabel("step time [s]", fontsize=8)
            ax.set_title("straggler timeline: the step time and each cluster's battery and shadow", fontsize=9, loc="left")
            continue
        values = (soc if panel == "soc" else shadow).reshape(time.size, satellites)
        for c in range(count):
            member = clusters == c
            if not member.any():
                continue
            series = values[:, member].min(axis=1) if panel == "soc" else values[:, member].mean(axis=1)
            ax.plot(time, series, color=colours[c % len(colours)], linewidth=1.0, label="cluster %d" % c)
        ax.set_ylabel("lowest state of charge" if panel == "soc" else "mean shadow fraction", fontsize=8)
        if count > 1:
            ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    for ax in axes[:, 0]:
        ax.tick_params(labelsize=8)
    axes[-1, 0].set_xlabel("time since the epoch [s]")
    fig.tight_layout()
    save(fig, out, "stragglers")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with open(os.path.join(args.run_dir, "analysis.json"), encoding="utf-8") as fh:
        analysis = json.load(fh)
    os.makedirs(args.out, exist_ok=True)
    drawn = {"breakdown": draw_breakdown(analysis, args.out)}
    with h5py.File(os.path.join(args.run_dir, "result.h5"), "r") as h5:
        drawn["link_heatmap"] = draw_heatmap(h5, args.out)
        drawn["link_utilisation"] = not drawn["link_heatmap"] and draw_link_ranking(h5, args.out)
        drawn["stragglers"] = draw_stragglers(h5, args.out)
    for name in FIGURES:
        path = os.path.join(args.out, name + ".svg")
        if not drawn.get(name) and os.path.exists(path):
            os.remove(path)
    print(" ".join(name for name in FIGURES if drawn.get(name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
