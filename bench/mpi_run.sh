#!/usr/bin/env bash
# One run on one process against the same run under `mpirun -n 2` and `-n 3` (issue 48 item 4):
# the stressed 4 x 81 constellation for DURATION_S (default 2 h), with radiation and TRIALS fault
# trials (split among the ranks by index), then without radiation (its four algorithms split among
# the ranks). Each rank --threads 1, against one process with 1 and 2 threads. Prints each run's
# wall time, the trials' wall time (summary.json radiation.constellation_wall_s) and whether its
# summary's ring goodput (or ring tokens/s) equals the one process's. Run on an otherwise idle machine
# with at least 3 cores; on fewer, ranks share cores and every rank repeats the physics.
#
#   bench/mpi_run.sh [SKYFABRIC_EXE] [OUT_DIR]
#   TRIALS=100 DURATION_S=86400 RADIATION=true bench/mpi_run.sh   (RADIATION: true, false or both)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/build/release/src/skyfabric}"
out="${2:-${TMPDIR:-/tmp}/skyfabric-mpi-bench}"
trials="${TRIALS:-40}"
duration="${DURATION_S:-7200}"
[ -x "$exe" ] || { echo "mpi_run: no skyfabric program at $exe (build it, or pass its path)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "mpi_run: mpirun is not on PATH" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi="mpirun --allow-run-as-root --oversubscribe"
py=/usr/bin/python3
mkdir -p "$out"
scenario="$root/scenarios/constellation-4x81-stress.yaml"
echo "== constellation-4x81-stress, $duration s, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for radiation in ${RADIATION:-true false}; do
  args="--set duration_s=$duration --set radiation.enabled=$radiation --set radiation.trials=$trials --set output.vtk=false -q --force"
  echo "-- radiation $radiation$([ "$radiation" = true ] && echo ", $trials trials")"
  for run in p1t1 p1t2 n2 n3; do
    case $run in
      p1t1) cmd="$exe run $scenario $args --threads 1 -o $out/$radiation-$run" ;;
      p1t2) cmd="$exe run $scenario $args --threads 2 -o $out/$radiation-$run" ;;
      n2) cmd="$mpi -n 2 $exe run $scenario $args --threads 1 -o $out/$radiation-$run" ;;
      n3) cmd="$mpi -n 3 $exe run $scenario $args --threads 1 -o $out/$radiation-$run" ;;
    esac
    start=$(date +%s.%N)
    $cmd
    end=$(date +%s.%N)
    "$py" - "$out" "$radiation" "$run" "$start" "$end" <<'PY'
import json, sys
out, radiation, run, start, end = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
label = {"p1t1": "1 process, 1 thread", "p1t2": "1 process, 2 threads", "n2": "mpirun -n 2", "n3": "mpirun -n 3"}[run]
s = json.load(open("%s/%s-%s/summary.json" % (out, radiation, run)))
ref = json.load(open("%s/%s-p1t1/summary.json" % (out, radiation)))
if radiation == "true":
    key = lambda j: j["radiation"]["constellation"]["ring"]["goodput"]
    trials = "trials %6.2f s" % s["radiation"]["constellation_wall_s"]
else:
    key = lambda j: j["constellation"]["algorithms"]
    trials = ""
print("  %-22s %7.2f s wall  %s  same as one process: %s" % (label, end - start, trials, key(s) == key(ref)))
PY
  done
done
