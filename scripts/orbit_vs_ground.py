#!/usr/bin/python3
"""Orbit against the ground (issue 53, docs/faults.md "Orbit against the ground"): the same job on
the Suncatcher formation and on a ground cluster, and a table of goodput, tokens per day, time lost
by cause and energy per token for each.

Runs three `skyfabric run`s over DAYS days:
  orbit         scenarios/suncatcher-81.yaml: radiation faults (and its terminal outages)
  orbit + ops   the same with faults.preset llama3_405b beside radiation (terrestrial failures too)
  ground        scenarios/suncatcher-81-ground.yaml: the Llama 3 operational faults, no radiation

Energy per token = power per rank x ranks / tokens kept per second. Per rank: the power preset's
chip (300 W) and host (150 W) (docs/power.md, assumptions there); in orbit plus 20 W per active
terminal (the run's mean links per satellite) and 100 W housekeeping, from the Sun; on the ground
times a PUE of 1.10 (docs/references.md "Failures on the ground"), from the grid.
"""
import argparse
import json
import os
import subprocess
import sys

CHIP_W, HOST_W, TERMINAL_W, HOUSEKEEPING_W, GROUND_PUE = 300.0, 150.0, 20.0, 100.0, 1.10


def run(exe, scenario, out, sets, threads):
    cmd = [exe, "run", "-q", scenario, "-o", out, "--force", "--yes"] + (["--threads", str(threads)] if threads else [])
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def orbit_row(name, s):
    r, w = s["radiation"], s["workload"]
    m = r["monte_carlo"]
    lost = {k: v["mean"] for k, v in m["lost_s"].items()}
    links = s["links"]["links_per_satellite_mean"]
    watts = CHIP_W + HOST_W + TERMINAL_W * links + HOUSEKEEPING_W
    return {
        "name": name, "ranks": w["data_parallel"], "elapsed_s": s["simulated_s"],
        "goodput": r["goodput"], "goodput_interval": r["goodput_interval"],
        "interruptions_per_day": m["interruptions_per_day"]["mean"],
        "tokens_per_s": w["tokens_per_s"], "lost": lost, "watts_per_rank": watts, "pue": 1.0,
        "causes": r.get("operational", {}).get("causes", {}),
    }


def ground_row(name, s):
    f, w = s["faults"], s["workload"]
    lost = dict(f["lost_s"])
    lost["fabric"] = 0.0
    return {
        "name": name, "ranks": f["ranks"], "elapsed_s": s["simulated_s"],
        "goodput": f["goodput"], "goodput_interval": f["goodput_interval"],
        "interruptions_per_day": f["interruptions_per_day_mean"],
        "tokens_per_s": w["tokens_per_s"], "lost": lost, "watts_per_rank": CHIP_W + HOST_W, "pue": GROUND_PUE,
        "causes": f["causes"],
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="orbit-vs-ground", help="folder for the three runs")
    p.add_argument("--days", type=float, default=7.0)
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--skyfabric", default=os.environ.get("SKYFABRIC", os.path.join(root, "build/release/src/skyfabric")))
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    orbits = round(a.days * 86400.0 / 5870.0)  # the 650 km orbit's period, about 5,870 s
    common = ["output.hdf5=false", "output.vtk=false"]
    orbit_sets = common + [f"duration_orbits={orbits}", f"radiation.trials={a.trials}"]
    rows = [
        orbit_row("orbit (radiation)", run(a.skyfabric, os.path.join(root, "scenarios/suncatcher-81.yaml"),
                                           os.path.join(a.out, "orbit"), orbit_sets, a.threads)),
        orbit_row("orbit (radiation + Llama 3 operational)",
                  run(a.skyfabric, os.path.join(root, "scenarios/suncatcher-81.yaml"), os.path.join(a.out, "orbit-ops"),
                      orbit_sets + ["faults.preset=llama3_405b"], a.threads)),
        ground_row("ground (Llama 3 operational)",
                   run(a.skyfabric, os.path.join(root, "scenarios/suncatcher-81-ground.yaml"), os.path.join(a.out, "ground"),
                       common + [f"duration_s={a.days * 86400.0:.0f}", f"faults.trials={a.trials}"], a.threads)),
    ]
    print(f"| run | ranks | days | interruptions/day (mean) | goodput (median, 2.5–97.5 %) | tokens/day | "
          f"lost to faults h/day | restarts h/day | checkpoints h/day | fabric h/day | energy per 1M tokens (kWh) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        days = r["elapsed_s"] / 86400.0
        tokens_per_day = r["tokens_per_s"] * 86400.0 * r["goodput"]
        power_w = r["watts_per_rank"] * r["ranks"] * r["pue"]
        kwh_per_mtok = power_w * 86400.0 / tokens_per_day * 1e6 / 3.6e6
        per_day = lambda k: r["lost"].get(k, 0.0) / days / 3600.0
        print(f"| {r['name']} | {r['ranks']} | {days:.2f} | {r['interruptions_per_day']:.3f} | {r['goodput']:.4f} "
              f"({r['goodput_interval'][0]:.4f}–{r['goodput_interval'][1]:.4f}) | {tokens_per_day:.4g} | "
              f"{per_day('faults'):.3f} | {per_day('restarts'):.3f} | {per_day('checkpoints'):.3f} | {per_day('fabric'):.2g} | "
              f"{kwh_per_mtok:.4f} |")
    for r in rows:
        if r["causes"]:
            top = sorted(r["causes"].items(), key=lambda kv: -kv[1]["lost_s"])[:4]
            days = r["elapsed_s"] / 86400.0
            print(f"\n{r['name']}, operational time lost by cause (h/day, mean over trials): " +
                  ", ".join(f"{k} {v['lost_s'] / days / 3600.0:.3f}" for k, v in top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
