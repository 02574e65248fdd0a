#!/usr/bin/python3
"""Draws `skyfabric season --csv FILE` as one PNG (matplotlib, Agg; Debian's python3).

    scripts/plot --season SEASON.csv [--out season.png]

Three panels over the year: the beta angle; minutes of shadow per orbit (penumbra or umbra, and
umbra); and the energy per orbit (array output and the full-compute load, Wh) with the compute share
the power system sustains on the right axis.
"""
import argparse
import csv
import datetime
import os
import sys

import matplotlib

matplotlib.use("Agg")
# TrueType (Type 42) fonts in PDF and PostScript: publishers refuse the default Type 3.
matplotlib.rcParams.update({"pdf.fonttype": 42, "ps.fonttype": 42})
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", help="CSV written by skyfabric season --csv")
    parser.add_argument("--out", help="PNG to write (default: beside the CSV, .png)")
    args = parser.parse_args()
    try:
        with open(args.csv, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit("plot_season: cannot read %s: %s" % (args.csv, e.strerror))
    needed = {"date", "beta_deg", "shadow_min", "umbra_min", "array_wh_per_orbit", "load_full_wh_per_orbit", "sustainable_compute"}
    if not rows or not needed <= set(rows[0]):
        sys.exit("plot_season: %s is not a skyfabric season CSV (columns %s)" % (args.csv, ", ".join(sorted(needed))))
    dates = [datetime.date.fromisoformat(r["date"]) for r in rows]
    col = lambda name: [float(r[name]) for r in rows]  # noqa: E731
    fig, (ax_beta, ax_shadow, ax_energy) = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    ax_beta.plot(dates, col("beta_deg"), color="tab:orange")
    ax_beta.set_ylabel("beta angle (deg)")
    ax_beta.set_title("Season: %s to %s (one orbit a day)" % (dates[0], dates[-1]))
    ax_shadow.plot(dates, col("shadow_min"), label="shadow (penumbra or umbra)", color="tab:blue")
    ax_shadow.plot(dates, col("umbra_min"), label="umbra", color="tab:purple", linestyle="--")
    ax_shadow.set_ylabel("shadow per orbit (min)")
    ax_shadow.legend(loc="upper center")
    ax_energy.plot(dates, col("array_wh_per_orbit"), label="array output", color="tab:green")
    ax_energy.plot(dates, col("load_full_wh_per_orbit"), label="load at full compute", color="tab:red")
    ax_energy.set_ylabel("energy per orbit (Wh)")
    ax_energy.legend(loc="upper left")
    ax_compute = ax_energy.twinx()
    ax_compute.plot(dates, col("sustainable_compute"), color="black", linewidth=1.0, label="sustainable compute")
    ax_compute.set_ylim(-0.05, 1.05)
    ax_compute.set_ylabel("sustainable compute (share of full)")
    ax_compute.legend(loc="upper right")
    ax_energy.xaxis.set_major_locator(mdates.MonthLocator())
    ax_energy.xaxis.set_major_formatter(mdates.DateFormatter("%b"))
    for ax in (ax_beta, ax_shadow, ax_energy):
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    out = args.out or os.path.splitext(args.csv)[0] + ".png"
    fig.savefig(out, dpi=110)
    print("plot_season: wrote %s" % out)


if __name__ == "__main__":
    main()
