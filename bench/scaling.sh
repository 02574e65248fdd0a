#!/usr/bin/env bash
# Thread scaling (issue 48, docs/benchmarks.md "Constellations at scale"): one constellation run at
# 1, 2, 4, 8 and 16 threads (`run --threads N`; counts above the machine's cores are skipped), wall
# time as the median of RUNS, speed-up over 1 thread and efficiency (speed-up / threads). The
# summaries must not depend on the thread count: each run's constellation figures are compared
# with the 1-thread run's and a difference is reported.
#
#   bench/scaling.sh [SKYFABRIC_EXE] [OUT_DIR]
#   CLUSTERS=64 DURATION_S=600 RUNS=3 THREADS="1 2 4 8 16" bench/scaling.sh
# The issue's figure is CLUSTERS=64 over one orbit (DURATION_S=orbit); the default, 600 s, keeps a
# 2-core run within minutes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/build/release/src/skyfabric}"
out="${2:-${TMPDIR:-/tmp}/skyfabric-scaling}"
runs="${RUNS:-3}"
clusters="${CLUSTERS:-64}"
duration="${DURATION_S:-600}"
threads="${THREADS:-1 2 4 8 16}"
[ -x "$exe" ] || { echo "scaling: no skyfabric program at $exe (build it, or pass its path)" >&2; exit 2; }
cores=$(nproc)
mkdir -p "$out"
echo "== $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $cores cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== constellation-4x81, $clusters clusters 100 km apart, duration $duration, radiation off, no output files"
sets=(--set constellation.clusters="$clusters" --set constellation.spacing_km=100 --set output.hdf5=false --set output.vtk=false)
[ "$duration" = orbit ] || sets+=(--set duration_s="$duration")
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
one=""
printf "%8s %10s %9s %10s  %s\n" threads "wall (s)" speed-up efficiency "runs"
for n in $threads; do
  if [ "$n" -gt "$cores" ]; then
    printf "%8s %10s\n" "$n" "skipped ($cores cores)"
    continue
  fi
  walls=()
  for _ in $(seq 1 "$runs"); do
    /usr/bin/time -f "%e" -o "$out/time.log" "$exe" run -q "$root/scenarios/constellation-4x81.yaml" "${sets[@]}" \
        --threads "$n" --yes -o "$out/t$n" --force >/dev/null 2>"$out/stderr.log"
    walls+=("$(tail -1 "$out/time.log")")
  done
  w=$(median "${walls[@]}")
  [ -z "$one" ] && one=$w
  printf "%8s %10s %9s %10s  %s\n" "$n" "$w" "$(awk -v a="$one" -v b="$w" 'BEGIN {printf "%.2f", a / b}')" \
      "$(awk -v a="$one" -v b="$w" -v n="$n" 'BEGIN {printf "%.2f", a / b / n}')" "${walls[*]}"
  if [ "$n" != "$(echo $threads | cut -d' ' -f1)" ]; then
    /usr/bin/python3 - "$out/t$(echo $threads | cut -d' ' -f1)/summary.json" "$out/t$n/summary.json" <<'EOF'
import json, sys
a, b = (json.load(open(p))["constellation"]["algorithms"] for p in sys.argv[1:3])
if a != b:
    print("   DIFFERENT from the first thread count's figures:", sys.argv[2])
EOF
  fi
done
