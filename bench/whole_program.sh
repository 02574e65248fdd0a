#!/usr/bin/env bash
# The whole program's figures in one run (issue 26; docs/benchmarks.md "The whole program"),
# each the wall time of whole `skyfabric` processes on this machine:
#   day     the default scenario for a day with its default outputs (HDF5 + VTK) and with none,
#           RUNS times each, interleaved: medians and their ratio (target <= 5 s, ratio <= 1.5);
#   10k     10,005 satellites (formation.radius_m=11285), one orbit, links + training + radiation
#           + HDF5 (VTK off): wall time and peak memory (target <= 60 s, <= 2 GB);
#   trials  10,000 coupled trials of the x100 day on 2 threads, the Monte Carlo part (summary.json
#           radiation.monte_carlo.wall_s; target <= 50 s);
#   startup `skyfabric --version`, 200 runs: mean per run, beside /bin/true's (target <= 10 ms);
#   a2a     1 GiB all-to-all on switch:p=1024 (and p=4096) and direct on torus2d 32x32 (targets 0.4 s,
#           10 s), with peak memory;
#   stress  scenarios/constellation-4x81-stress.yaml as shipped (one orbit, 20 trials) and for a day
#           with 100 trials (issue 25's target: <= 60 s), every output on: wall, peak memory and
#           the trials' share (summary.json radiation.constellation_wall_s).
# A part that runs past LIMIT seconds (default 600) is killed (a collective stops on SIGTERM only
# between sizes) and reported as not finished.
#
#   bench/whole_program.sh [SKYFABRIC_EXE] [OUT_DIR]
#   ONLY="day startup" RUNS=3 LIMIT=600 bench/whole_program.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/build/release/src/skyfabric}"
out="${2:-${TMPDIR:-/tmp}/skyfabric-whole}"
runs="${RUNS:-3}"
limit="${LIMIT:-600}"
only="${ONLY:-day 10k trials startup a2a stress}"
want() { [[ " $only " == *" $1 "* ]]; }
[ -x "$exe" ] || { echo "whole_program: no skyfabric program at $exe (build it, or pass its path)" >&2; exit 2; }
py=/usr/bin/python3
scenario="$root/scenarios/suncatcher-81.yaml"
mkdir -p "$out"
echo "== $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# Runs a command under /usr/bin/time and the time limit; prints "WALL_S PEAK_KB", or "- -" when
# it failed or ran past the limit.
timed() {
  local log="$out/time.log"
  if /usr/bin/time -f "%e %M" -o "$log" timeout -s KILL "$limit" "$@" >/dev/null 2>"$out/stderr.log"; then
    tail -1 "$log"
  else
    echo "- -"
  fi
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

if want day; then
  all=() none=()
  for k in $(seq 1 "$runs"); do
    read -r w _ < <(timed "$exe" run -q "$scenario" --set duration_s=86400 -o "$out/day" --force); all+=("$w")
    read -r w _ < <(timed "$exe" run -q "$scenario" --set duration_s=86400 --set output.hdf5=false \
        --set output.vtk=false -o "$out/day" --force); none+=("$w")
  done
  a=$(median "${all[@]}"); n=$(median "${none[@]}")
  printf "day      all outputs %s s median (%s), none %s s median (%s), ratio %s\n" "$a" "${all[*]}" "$n" \
      "${none[*]}" "$(awk -v a="$a" -v n="$n" 'BEGIN {printf "%.2f", a / n}')"
fi

if want 10k; then
  read -r w kb < <(timed "$exe" run -q "$scenario" --set formation.radius_m=11285 --set output.vtk=false \
      -o "$out/k10" --force)
  printf "10k      one orbit of 10,005 satellites, HDF5 on: %s s, peak %s MB, result.h5 %s\n" "$w" \
      "$([ "$kb" = - ] && echo - || echo $((kb / 1024)))" "$(du -h "$out/k10/result.h5" 2>/dev/null | cut -f1)"
fi

if want trials; then
  read -r w _ < <(timed "$exe" run -q "$scenario" --set duration_s=86400 --set radiation.rate_scale=100 \
      --set radiation.trials=10000 --set radiation.threads=2 --set output.vtk=false --set output.hdf5=false \
      -o "$out/trials" --force)
  mc=$("$py" -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["radiation"]["monte_carlo"]["wall_s"])' \
      "$out/trials/summary.json" 2>/dev/null || echo -)
  printf "trials   10,000 coupled trials of the x100 day, 2 threads: Monte Carlo %s s (whole run %s s)\n" "$mc" "$w"
fi

if want startup; then
  per_run() {  # mean milliseconds per run of "$@" over 200 runs
    local t0 t1
    t0=$(date +%s%N)
    for _ in $(seq 200); do "$@" >/dev/null; done
    t1=$(date +%s%N)
    awk -v d=$((t1 - t0)) 'BEGIN {printf "%.2f", d / 200 / 1e6}'
  }
  printf "startup  skyfabric --version %s ms per run (/bin/true %s ms)\n" "$(per_run "$exe" --version)" \
      "$(per_run /bin/true)"
fi

if want a2a; then
  mb() { [ "$1" = - ] && echo - || echo $(($1 / 1024)); }
  read -r s skb < <(timed "$exe" collective --topology switch:p=1024,bw_gbps=400,latency_ns=500 --op all_to_all --sizes 1GiB)
  read -r s4 s4kb < <(timed "$exe" collective --topology switch:p=4096,bw_gbps=400,latency_ns=500 --op all_to_all --sizes 1GiB)
  read -r t tkb < <(timed "$exe" collective --topology torus2d:x=32,y=32,bw_gbps=400,latency_ns=500 --op all_to_all \
      --algorithm direct --sizes 1GiB)
  printf "a2a      1 GiB all-to-all: switch p=1024 %s s %s MB, p=4096 %s s %s MB; torus2d 32x32 direct %s s %s MB (- : failed or past %s s)\n" \
      "$s" "$(mb "$skb")" "$s4" "$(mb "$s4kb")" "$t" "$(mb "$tkb")" "$limit"
fi

if want stress; then
  stress="$root/scenarios/constellation-4x81-stress.yaml"
  trials_s() { "$py" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["radiation"]["constellation_wall_s"])' \
      "$1/summary.json" 2>/dev/null || echo -; }
  read -r w kb < <(timed "$exe" run -q "$stress" -o "$out/stress" --force)
  printf "stress   4x81 stressed, one orbit, 20 trials: %s s (trials %s s), peak %s MB\n" "$w" "$(trials_s "$out/stress")" \
      "$([ "$kb" = - ] && echo - || echo $((kb / 1024)))"
  read -r w kb < <(timed "$exe" run -q "$stress" --set duration_s=86400 --set radiation.trials=100 -o "$out/stress-day" --force)
  printf "stress   4x81 stressed, a day, 100 trials: %s s (trials %s s), peak %s MB (- : past %s s)\n" "$w" \
      "$(trials_s "$out/stress-day")" "$([ "$kb" = - ] && echo - || echo $((kb / 1024)))" "$limit"
fi
