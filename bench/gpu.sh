#!/usr/bin/env bash
# The CUDA backend's figures on a machine with a GPU (issue 20; docs/benchmarks.md "On a GPU").
# Prints, for this machine:
#   info     `skyfabric info` (names the device the backend will use);
#   batches  the Google Benchmark batches, CPU (one thread) beside CUDA, median of REPS runs each:
#            fault events of 256 / 4,096 / 65,536 Monte Carlo trials (81 satellites, a day), and
#            drains of 64 / 256 / 1,000 / 10,000 independent flow problems (one 81-rank ring step
#            each): where the GPU starts to pay (device_batch_min_problems, flow_solver.hpp);
#   one      one large max-min problem (issue 48 item 3): a pairwise all-to-all step over 5,184 ranks
#            (64 clusters of 81; BM_OnePhase in workloads_bench) drained by the one-thread solver,
#            spread over 1 and N CPU threads (THREADS' first, default every core; SpreadMaxMin) and
#            spread over the GPU: N threads over 1, and the GPU over N threads (goal ≥ 10×);
#   trials   TRIALS coupled fault trials of suncatcher-81's x100 day (bench/coupled_trials.sh's
#            run), workload.backend cpu and cuda, on each of THREADS (default: every core, and 2):
#            the Monte Carlo part's wall time (summary.json radiation.monte_carlo.wall_s);
#   day      the default scenario for a day with workload.backend=cuda: it must complete.
#   stress   #25's stressed constellation day (100 trials, every thread), workload.backend cpu and
#            cuda: wall time, peak memory, the trials' share and each algorithm's goodput median
#            (the two backends must agree).
# Run on an otherwise idle machine; without a CUDA device the CUDA rows say so and are skipped.
#
#   bench/gpu.sh [BUILD_DIR] [OUT_DIR]
#   ONLY="info batches" REPS=3 TRIALS=10000 THREADS=16 bench/gpu.sh build/release
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build/release}"
out="${2:-${TMPDIR:-/tmp}/skyfabric-gpu-bench}"
reps="${REPS:-3}"
trials="${TRIALS:-10000}"
only="${ONLY:-info batches one trials day stress}"
want() { [[ " $only " == *" $1 "* ]]; }
exe="$build/src/skyfabric"
bench="$build/bench/workloads_bench"
[ -x "$exe" ] || { echo "gpu.sh: no skyfabric program at $exe (build it, or pass the build folder)" >&2; exit 2; }
py=$(command -v /usr/bin/python3 || command -v python3)
mkdir -p "$out"
cores=$(nproc)
echo "== $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $cores cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load $(cut -d' ' -f1-3 /proc/loadavg)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

if want info; then
  echo "== skyfabric info"
  "$exe" info
fi

if want batches; then
  [ -x "$bench" ] || { echo "gpu.sh: no benchmark program at $bench (configure with SKYFABRIC_BENCH=ON)" >&2; exit 2; }
  echo "== batches: median of $reps repetitions (CPU: one thread)"
  "$bench" --benchmark_filter='BM_(FaultBatch|DrainBatch)_' --benchmark_repetitions="$reps" \
      --benchmark_report_aggregates_only=true --benchmark_out="$out/batches.json" --benchmark_out_format=json \
      >"$out/batches.txt" 2>&1 || { cat "$out/batches.txt"; exit 1; }
  "$py" - "$out/batches.json" <<'PY'
import json, sys
rows = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    name = b["run_name"]                      # BM_FaultBatch_Cuda/4096
    kind, arg = name.split("/")
    family, backend = kind[3:].rsplit("_", 1)
    rows.setdefault((family, int(arg)), {})[backend] = b["real_time"]  # ms
for (family, arg), t in sorted(rows.items()):
    cpu, gpu = t.get("Cpu"), t.get("Cuda")
    ratio = "%.1fx" % (cpu / gpu) if cpu and gpu else "-"
    print("  %-11s %6d   cpu %10.2f ms   cuda %10s ms   cpu/cuda %s"
          % (family, arg, cpu or float("nan"), "%.2f" % gpu if gpu else "-", ratio))
PY
fi

if want one; then
  [ -x "$bench" ] || { echo "gpu.sh: no benchmark program at $bench (configure with SKYFABRIC_BENCH=ON)" >&2; exit 2; }
  n=$(set -- ${THREADS:-$cores}; echo "$1")
  case " 1 2 4 8 16 " in *" $n "*) ;; *) n=16 ;; esac  # the thread counts BM_OnePhase_Cpu registers
  echo "== one 5,184-rank all-to-all phase: median of $reps repetitions (one thread, $n threads, CUDA)"
  "$bench" --benchmark_filter="BM_OnePhase_(Cpu/ranks:5184/threads:(0|1|$n)\$|Cuda)" --benchmark_repetitions="$reps" \
      --benchmark_report_aggregates_only=true --benchmark_out="$out/one.json" --benchmark_out_format=json \
      >"$out/one.txt" 2>&1 || { cat "$out/one.txt"; exit 1; }
  "$py" - "$out/one.json" "$n" <<'PY'
import json, sys
t, single = {}, {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("error_occurred"):
        continue
    if b.get("aggregate_name") == "median":
        t[b["run_name"]] = b["real_time"]  # ms
    elif b.get("run_type") == "iteration":
        single.setdefault(b["run_name"], b["real_time"])  # REPS=1: no median
t = t or single
n = sys.argv[2]
one = t.get("BM_OnePhase_Cpu/ranks:5184/threads:0")
spread1 = t.get("BM_OnePhase_Cpu/ranks:5184/threads:1")
spreadn = t.get("BM_OnePhase_Cpu/ranks:5184/threads:%s" % n)
gpu = t.get("BM_OnePhase_Cuda/ranks:5184")
fmt = lambda v: "%.3f ms" % v if v else "-"
ratio = lambda a, b: "%.1fx" % (a / b) if a and b else "-"
print("  one-thread solver   %s" % fmt(one))
print("  spread, 1 thread    %s   (its cost beside the one-thread solver: %s)" % (fmt(spread1), ratio(spread1, one)))
print("  spread, %2s threads  %s   over the one-thread solver: %s" % (n, fmt(spreadn), ratio(one, spreadn)))
print("  spread, CUDA        %s   over %s CPU threads: %s (goal >= 10x)   over one thread: %s"
      % (fmt(gpu), n, ratio(spreadn, gpu), ratio(one, gpu)))
PY
fi

if want trials; then
  echo "== $trials coupled trials of suncatcher-81's x100 day (Monte Carlo part, one run each)"
  for threads in ${THREADS:-$cores 2}; do
    for backend in cpu cuda; do
      dir="$out/trials-$backend-$threads"
      if "$exe" run -q "$root/scenarios/suncatcher-81.yaml" --set duration_s=86400 --set radiation.rate_scale=100 \
          --set radiation.trials="$trials" --set radiation.threads="$threads" --set workload.backend="$backend" \
          --set output.vtk=false --set output.hdf5=false --force -o "$dir" >"$out/trials.log" 2>&1; then
        "$py" - "$dir/summary.json" "$backend" "$threads" "$trials" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
m = s["radiation"]["monte_carlo"]
print("  %-4s %2s threads: trials %8.2f s  %9.1f trials/s   whole run %7.2f s   goodput median %.4f (backend %s)"
      % (sys.argv[2], sys.argv[3], m["wall_s"], int(sys.argv[4]) / m["wall_s"], s["wall_s"],
         m["goodput"]["median"], m["backend"]))
PY
      else
        echo "  $backend $threads threads: failed: $(tail -1 "$out/trials.log")"
      fi
    done
  done
fi

if want day; then
  echo "== the default scenario for a day, workload.backend=cuda"
  TIMEFORMAT="  wall %R s"
  time "$exe" run -q "$root/scenarios/suncatcher-81.yaml" \
      --set workload.backend=cuda --force -o "$out/day-cuda"
  "$py" -c "import json,sys; s=json.load(open(sys.argv[1])); print('  Monte Carlo backend', s['radiation']['monte_carlo']['backend'], '  wall_s', s['wall_s'])" "$out/day-cuda/summary.json"
fi

if want stress; then
  echo "== #25's stressed constellation day, 100 trials, $cores threads"
  for backend in cpu cuda; do
    dir="$out/stress-$backend"
    if /usr/bin/time -f "%e %M" -o "$out/stress-$backend.time" "$exe" run -q "$root/scenarios/constellation-4x81-stress.yaml" \
        --set duration_s=86400 --set radiation.trials=100 --set workload.backend="$backend" \
        --yes --force -o "$dir" >"$out/stress.log" 2>&1; then
      "$py" - "$dir/summary.json" "$backend" "$out/stress-$backend.time" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
wall, kb = open(sys.argv[3]).read().split()[-2:]
r = s["radiation"]
medians = "  ".join("%s %.6f" % (k, v["goodput"]["median"])
                    for k, v in sorted(r["constellation"].items()) if isinstance(v, dict) and "goodput" in v)
print("  %-4s wall %7.2f s  peak %5.2f GB  trials %6.2f s   %s" % (sys.argv[2], float(wall), int(kb) / 1e6,
      r["constellation_wall_s"], medians))
PY
    else
      echo "  $backend: failed: $(tail -1 "$out/stress.log")"
    fi
  done
fi
