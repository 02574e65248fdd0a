#!/usr/bin/env bash
# Coupled fault trials per second (issue 13): suncatcher-81 over one day with every fault rate
# scaled x100 (radiation.rate_scale=100: crashes, UECCs and terminal outages in every trial),
# each trial played over the formation's links as its faults damage them (on_rank_loss: shrink).
# For each thread count: REPEATS runs of TRIALS trials; prints the Monte Carlo part's median
# wall time (summary.json radiation.monte_carlo.wall_s: drawing + playing the trials, the
# physics excluded), trials per second, the whole run's median wall time and the damaged steps
# solved. Run on an otherwise idle machine.
#
#   bench/coupled_trials.sh [SKYFABRIC_EXE] [OUT_DIR]
#   TRIALS=10000 THREADS="2" REPEATS=1 bench/coupled_trials.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/build/release/src/skyfabric}"
out="${2:-${TMPDIR:-/tmp}/skyfabric-coupled-bench}"
trials="${TRIALS:-1000}"
threads_list="${THREADS:-1 2}"
repeats="${REPEATS:-3}"
[ -x "$exe" ] || { echo "coupled_trials: no skyfabric program at $exe (build it, or pass its path)" >&2; exit 2; }
py=/usr/bin/python3
mkdir -p "$out"
echo "== suncatcher-81, one day, rate_scale 100, $trials coupled trials, $(nproc) cores, $repeats runs each"
for threads in $threads_list; do
  for k in $(seq 1 "$repeats"); do
    dir="$out/t$threads-$k"
    "$exe" run -q "$root/scenarios/suncatcher-81.yaml" --set duration_s=86400 --set radiation.rate_scale=100 \
        --set radiation.trials="$trials" --set radiation.threads="$threads" \
        --set output.vtk=false --set output.hdf5=false --force -o "$dir"
  done
  "$py" - "$out" "$threads" "$repeats" "$trials" <<'PY'
import json, statistics, sys
out, threads, repeats, trials = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runs = [json.load(open("%s/t%s-%d/summary.json" % (out, threads, k))) for k in range(1, repeats + 1)]
mc = [r["radiation"]["monte_carlo"]["wall_s"] for r in runs]
whole = [r["wall_s"] for r in runs]
med = statistics.median(mc)
r0 = runs[0]["radiation"]
print("  threads %s: trials %8.2f s median (%s)  %8.1f trials/s   whole run %6.2f s median   "
      "goodput median %.4f   %d damaged steps solved, %d keyframes"
      % (threads, med, ", ".join("%.2f" % x for x in mc), trials / med, statistics.median(whole),
         r0["monte_carlo"]["goodput"]["median"], r0["fabric"]["damaged_steps_solved"], r0["fabric"]["keyframes"]))
PY
done
