#!/usr/bin/env bash
# All-to-all at scale (issue 19): whole-process wall time of `skyfabric collective --op all_to_all`
# for 1 GiB on switch:p=P and torus2d (X×Y = P), P = 64 … 1024, median of REPEATS runs, and the
# growth exponent between the smallest and the largest P (time ∝ P^k).
#
#   bench/all_to_all.sh [SKYFABRIC_EXE]        REPEATS=3 SIZES="64 128 256 512 1024"
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/build/release/src/skyfabric}"
repeats="${REPEATS:-3}"
sizes="${SIZES:-64 128 256 512 1024}"
[ -x "$exe" ] || { echo "all_to_all: no skyfabric program at $exe" >&2; exit 2; }
torus_of() { case "$1" in 64) echo "x=8,y=8";; 128) echo "x=16,y=8";; 256) echo "x=16,y=16";;
                          512) echo "x=32,y=16";; 1024) echo "x=32,y=32";; *) echo "x=$1,y=1";; esac; }
for fabric in switch torus2d; do
  echo "== 1 GiB all-to-all (pairwise) on $fabric, $(nproc) cores, median of $repeats"
  first_p=""; first_t=""; last_p=""; last_t=""
  for p in $sizes; do
    spec="switch:p=$p,bw_gbps=400,latency_ns=500"
    [ "$fabric" = torus2d ] && spec="torus2d:$(torus_of "$p"),bw_gbps=400,latency_ns=500"
    times=()
    for _ in $(seq 1 "$repeats"); do
      t0=$(date +%s.%N)
      out=$("$exe" collective --topology "$spec" --op all_to_all --sizes 1GiB | tail -1)
      times+=("$(echo "$(date +%s.%N) - $t0" | bc -l)")
    done
    med=$(printf "%s\n" "${times[@]}" | sort -g | sed -n "$(( (repeats + 1) / 2 ))p")
    sim_us=$(echo "$out" | awk '{print $2}')
    printf "  p=%-5s wall %7.3f s   (collective time %s us)\n" "$p" "$med" "$sim_us"
    [ -z "$first_p" ] && { first_p=$p; first_t=$med; }
    last_p=$p; last_t=$med
  done
  printf "  growth exponent p=%s..%s: %.2f\n" "$first_p" "$last_p" \
    "$(echo "l($last_t / $first_t) / l($last_p / $first_p)" | bc -l)"
done

# The MoE training step on the moving fabric: one orbit of scenarios/suncatcher-81-moe.yaml
# (240 all-to-alls per step in 9 groups of 9) against the dense suncatcher-81, whole process.
echo "== one orbit, suncatcher-81 dense vs MoE (radiation off, no VTK), median of $repeats"
for sc in suncatcher-81 suncatcher-81-moe; do
  times=()
  for _ in $(seq 1 "$repeats"); do
    t0=$(date +%s.%N)
    "$exe" run -q "$root/scenarios/$sc.yaml" --set radiation.enabled=false --set output.vtk=false \
        --force -o "${TMPDIR:-/tmp}/skyfabric-a2a-bench-$sc"
    times+=("$(echo "$(date +%s.%N) - $t0" | bc -l)")
  done
  med=$(printf "%s\n" "${times[@]}" | sort -g | sed -n "$(( (repeats + 1) / 2 ))p")
  steps=$(sed -n 's/.*"steps": *\([0-9]*\).*/\1/p' "${TMPDIR:-/tmp}/skyfabric-a2a-bench-$sc/summary.json" | head -1)
  printf "  %-20s wall %6.2f s   %s steps\n" "$sc" "$med" "$steps"
done
