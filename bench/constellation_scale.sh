#!/usr/bin/env bash
# Constellations at scale (issue 48; docs/benchmarks.md "Constellations at scale"): whole
# `skyfabric run` processes on scenarios/constellation-4x81.yaml with more clusters, 100 km apart.
#   growth  4, 16 and 64 clusters for 600 s, no radiation and no output files: wall and CPU seconds
#           (medians of RUNS, the programs interleaved) and the 64/4 ratio (target <= 20, the
#           satellites' ratio being 16);
#   orbit   the issue's command: 64 clusters, one orbit, the four algorithms, radiation with 20
#           trials, HDF5 on, VTK off (target <= 60 s wall on 2 cores), with `validate`'s estimate.
# With BASE set to another build (the main before this work), each part runs it too, side by side.
# A run past LIMIT seconds (default 600) is killed and reported as not finished ("-").
#
#   bench/constellation_scale.sh [SKYFABRIC_EXE] [OUT_DIR]
#   BASE=/path/to/old/skyfabric ONLY="growth" RUNS=3 LIMIT=600 bench/constellation_scale.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/build/release/src/skyfabric}"
out="${2:-${TMPDIR:-/tmp}/skyfabric-constellation-scale}"
runs="${RUNS:-3}"
limit="${LIMIT:-600}"
only="${ONLY:-growth orbit}"
want() { [[ " $only " == *" $1 "* ]]; }
[ -x "$exe" ] || { echo "constellation_scale: no skyfabric program at $exe (build it, or pass its path)" >&2; exit 2; }
programs=("$exe")
[ -n "${BASE:-}" ] && programs+=("$BASE")
scenario="$root/scenarios/constellation-4x81.yaml"
mkdir -p "$out"
echo "== $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# Runs a command under /usr/bin/time and the time limit; prints "WALL_S CPU_S PEAK_KB", or "- - -".
timed() {
  local log="$out/time.log"
  if /usr/bin/time -f "%e %U %S %M" -o "$log" timeout -s KILL "$limit" "$@" >/dev/null 2>"$out/stderr.log"; then
    awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$log" | tail -1
  else
    echo "- - -"
  fi
}
median() { printf '%s\n' "$@" | grep -v '^-$' | sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

if want growth; then
  for p in "${programs[@]}"; do
    declare -A wall=() cpu=()
    for c in 4 16 64; do
      ws=() cs=()
      for _ in $(seq 1 "$runs"); do
        read -r w u _ < <(timed "$p" run -q "$scenario" --set constellation.clusters=$c --set constellation.spacing_km=100 \
            --set duration_s=600 --set output.hdf5=false --set output.vtk=false --yes -o "$out/growth" --force)
        ws+=("$w"); cs+=("$u")
      done
      wall[$c]=$(median "${ws[@]}"); cpu[$c]=$(median "${cs[@]}")
      printf "growth   %-40s %2d clusters (%5d satellites), 600 s: wall %s s (%s), CPU %s s\n" "$p" "$c" $((81 * c)) \
          "${wall[$c]}" "${ws[*]}" "${cpu[$c]}"
    done
    printf "growth   %-40s 64 / 4 clusters: wall x%s, CPU x%s (satellites x16)\n" "$p" \
        "$(awk -v a="${wall[64]}" -v b="${wall[4]}" 'BEGIN {if (a == "-" || b == "-") print "-"; else printf "%.1f", a / b}')" \
        "$(awk -v a="${cpu[64]}" -v b="${cpu[4]}" 'BEGIN {if (a == "-" || b == "-") print "-"; else printf "%.1f", a / b}')"
  done
fi

if want orbit; then
  sets=(--set constellation.clusters=64 --set constellation.spacing_km=100 --set radiation.enabled=true --set output.vtk=false)
  for p in "${programs[@]}"; do
    estimate=$("$p" validate "$scenario" "${sets[@]}" --yes 2>&1 | grep -i -m1 -E "estimat|cpu" || true)
    read -r w u kb < <(timed "$p" run -q "$scenario" "${sets[@]}" --yes -o "$out/orbit" --force)
    printf "orbit    %-40s 64 clusters, one orbit, 20 trials, HDF5: wall %s s, CPU %s s, peak %s MB\n" "$p" "$w" "$u" \
        "$([ "$kb" = - ] && echo - || echo $((kb / 1024)))"
    printf "orbit    %-40s validate: %s\n" "$p" "$estimate"
  done
fi
