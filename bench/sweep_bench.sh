#!/usr/bin/env bash
# Times the skyfabric CLI at scale (see docs/sweeps.md):
#   1. one sweep (8 points: suncatcher-81 for one orbit, seeds 1..8) with --jobs 1 and
#      --jobs 2: wall time and speed-up;
#   2. the coupled run (nonlinear J2 dynamics + optical links + ring all-reduce training
#      on every satellite) for one orbit at N = 81, ~1,000 and ~10,000 satellites: wall
#      time and peak memory (/usr/bin/time -v, maximum resident set size);
#   3. with PHASES=1, where the 10,000-satellite run spends its time and memory: 0.02 orbit
#      with dynamics only, + links, + workload, and the workload under HCW dynamics.
#
#   bench/sweep_bench.sh [SKYFABRIC_EXE] [OUT_DIR]
#   SIZES="81 1000" bench/sweep_bench.sh        # skip the 10,000-satellite run
#   PHASES=1 SIZES= bench/sweep_bench.sh        # only the sweep and the phase breakdown
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/build/release/src/skyfabric}"
out="${2:-${TMPDIR:-/tmp}/skyfabric-sweep-bench}"
sizes="${SIZES-81 1000 10000}"
[ -x "$exe" ] || { echo "sweep_bench: no skyfabric program at $exe (build it, or pass its path)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "sweep_bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
mkdir -p "$out"
base="$root/scenarios/suncatcher-81.yaml"
now() { date +%s.%N; }
satellites_of() { sed -n 's/.*"satellites": *\([0-9]*\).*/\1/p' "$1/summary.json" | head -1; }

echo "== sweep: 8 points (suncatcher-81, one orbit, seeds 1..8), $(nproc) cores"
declare -A wall
for jobs in 1 2; do
  t0=$(now)
  "$exe" sweep "$base" --set output.vtk=false --vary seed=1,2,3,4,5,6,7,8 --jobs "$jobs" \
      --no-plot --quiet --force -o "$out/sweep-j$jobs" || echo "sweep_bench: the sweep with --jobs $jobs reported failures"
  wall[$jobs]=$(echo "$(now) - $t0" | bc -l)
  printf "  --jobs %d   %7.2f s\n" "$jobs" "${wall[$jobs]}"
done
printf "  speed-up   %7.2f x\n" "$(echo "${wall[1]} / ${wall[2]}" | bc -l)"

# Radius for about N satellites on the Suncatcher lattice (N0 = 81 at 1000 m); the
# lattice's own count is read back from summary.json.
radius_for() {
  case "$1" in
    81) echo 1000 ;;
    1000) echo 3583.3 ;;     # 1,005 satellites
    10000) echo 11276.5 ;;   # 9,997 satellites
    *) echo "1000 * sqrt($1 / 81)" | bc -l ;;
  esac
}

run_timed() {  # name, extra args...
  local name="$1"; shift
  /usr/bin/time -v "$exe" run "$base" --set output.vtk=false --set workload.parallelism.data=0 \
      --quiet --force -o "$out/$name" "$@" 2> "$out/$name.time" || { tail -5 "$out/$name.time"; return 1; }
  local elapsed rss
  elapsed=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$out/$name.time" |
            awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/$name.time")
  printf "  %-28s N = %6s   %9.1f s   peak RSS %8.1f MiB   %7.1f KiB/satellite\n" "$name" \
      "$(satellites_of "$out/$name")" "$elapsed" "$(echo "$rss / 1024" | bc -l)" \
      "$(echo "$rss / $(satellites_of "$out/$name")" | bc -l)"
}

if [ -n "$sizes" ]; then
  echo "== coupled run, one orbit (nonlinear J2 + links + ring all-reduce over every satellite)"
  for n in $sizes; do run_timed "coupled-$n" --set formation.radius_m="$(radius_for "$n")"; done
fi

if [ "${PHASES:-0}" = 1 ]; then
  echo "== 10,000 satellites, 0.02 orbit: what costs what"
  r=$(radius_for 10000)
  run_timed phase-dynamics --set formation.radius_m="$r" --set duration_orbits=0.02 \
      --set links.enabled=false --set workload.enabled=false
  run_timed phase-dynamics+links --set formation.radius_m="$r" --set duration_orbits=0.02 --set workload.enabled=false
  run_timed phase-all --set formation.radius_m="$r" --set duration_orbits=0.02
  run_timed phase-all-hcw --set formation.radius_m="$r" --set duration_orbits=0.02 --set dynamics.model=hcw
  run_timed phase-all-hcw-half --set formation.radius_m="$r" --set duration_orbits=0.01 --set dynamics.model=hcw
fi
