#!/usr/bin/env bash
# Builds the benchmark programs and skyfabric (release preset by default) and runs every benchmark
# (docs/benchmarks.md explains each figure):
#   1. every Google Benchmark program in bench/ (--benchmark_repetitions=3, aggregates only; JSON
#      kept), and propagation_bench's scaled lattices again pinned to one core (taskset -c 0);
#   2. the SciPy comparison (bench/scipy_propagation.py: C++ vs solve_ivp DOP853, same run);
#   3. the independent check (tests/reference/check_against_scipy.py: one-day run vs SciPy, < 1 cm);
#   4. the whole `skyfabric run` of scenarios/suncatcher-81.yaml for one day with its HDF5 output
#      (and everything else the scenario writes: VTK, links, workload), wall time and peak memory
#      from /usr/bin/time -v, RUNS times (default 3);
# then writes OUT_DIR/summary.md (medians) beside the raw outputs.
#
#   bench/run_benchmarks.sh [OUT_DIR]                  # default OUT_DIR: /tmp/skyfabric-bench
#   BUILD_DIR=build/bench bench/run_benchmarks.sh      # configure/build there instead of the preset
#   SKIP_BUILD=1 ... | ONLY="propagation scipy" ...    # parts: gbench propagation scipy check run
#   PYTHON=/usr/bin/python3 (needs numpy, scipy, h5py)  RUNS=3
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mkdir -p "${1:-${TMPDIR:-/tmp}/skyfabric-bench}" && cd "${1:-${TMPDIR:-/tmp}/skyfabric-bench}" && pwd)"
py="${PYTHON:-/usr/bin/python3}"
runs="${RUNS:-3}"
only="${ONLY:-gbench propagation scipy check run}"
want() { [[ " $only " == *" $1 "* ]]; }
benches=()
for f in "$root"/bench/*_bench.cpp; do benches+=("$(basename "$f" .cpp)"); done

if [ -n "${BUILD_DIR:-}" ]; then
  build="$(cd "$root" && mkdir -p "$BUILD_DIR" && cd "$BUILD_DIR" && pwd)"
  configure=(cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release)
else
  build="$root/build/release"
  configure=(cmake --preset release)
fi
if [ -z "${SKIP_BUILD:-}" ]; then
  (cd "$root" && "${configure[@]}" >/dev/null)
  cmake --build "$build" -j"$(nproc)" --target "${benches[@]}" skyfabric
fi
exe="$build/src/skyfabric"

{
  echo "# skyfabric benchmarks, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "- commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- . 2>/dev/null || echo ' (with local changes)')"
  echo "- $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(free -g | awk '/Mem:/{print $2}') GiB"
  echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
} >"$out/summary.md"

# Median aggregate rows of a Google Benchmark JSON file as a markdown table.
gbench_table() {
  "$py" - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
skip = {"name", "run_name", "run_type", "aggregate_name", "aggregate_unit", "family_index",
        "per_family_instance_index", "repetitions", "repetition_index", "threads", "iterations",
        "real_time", "cpu_time", "time_unit"}
print("| benchmark | wall (median) | cpu | counters |")
print("|---|---|---|---|")
for b in d["benchmarks"]:
    if b.get("aggregate_name", "median" if b.get("run_type") == "iteration" else "") != "median":
        continue
    c = ", ".join(f"{k}={v:.4g}" for k, v in b.items() if k not in skip and isinstance(v, (int, float)))
    print(f"| {b['run_name']} | {b['real_time']:.4g} {b['time_unit']} | {b['cpu_time']:.4g} {b['time_unit']} | {c} |")
EOF
}

if want gbench; then
  for b in "${benches[@]}"; do
    echo "== $b"
    "$build/bench/$b" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        --benchmark_out="$out/$b.json" --benchmark_out_format=json | tee "$out/$b.txt"
    { echo "## $b"; echo; echo '```'; echo "$build/bench/$b --benchmark_repetitions=3 --benchmark_report_aggregates_only=true"; echo '```'; echo
      gbench_table "$out/$b.json"; echo; } >>"$out/summary.md"
  done
fi

if want propagation; then
  echo "== propagation_bench, scaled lattices pinned to one core (taskset -c 0)"
  taskset -c 0 "$build/bench/propagation_bench" --benchmark_filter='ScaledLattice' --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true --benchmark_out="$out/propagation_bench_core0.json" \
      --benchmark_out_format=json | tee "$out/propagation_bench_core0.txt"
  { echo "## propagation_bench on one core"; echo; echo '```'
    echo "taskset -c 0 $build/bench/propagation_bench --benchmark_filter=ScaledLattice --benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
    echo '```'; echo; gbench_table "$out/propagation_bench_core0.json"; echo; } >>"$out/summary.md"
fi

if want scipy; then
  echo "== SciPy comparison"
  "$py" "$root/bench/scipy_propagation.py" --bench "$build/bench/propagation_bench" --json "$out/scipy.json" \
      | tee "$out/scipy.txt"
  { echo "## C++ vs SciPy solve_ivp DOP853 (81 satellites, one day, 10 s samples)"; echo; echo '```'
    echo "$py bench/scipy_propagation.py --bench $build/bench/propagation_bench"; echo; cat "$out/scipy.txt"; echo '```'; echo
  } >>"$out/summary.md"
fi

if want check; then
  echo "== independent check against SciPy"
  t0=$(date +%s.%N)
  status=0
  "$py" "$root/tests/reference/check_against_scipy.py" --skyfabric "$exe" | tee "$out/check.txt" || status=$?
  t1=$(date +%s.%N)
  { echo "## Independent check (one-day run vs SciPy DOP853 1e-12)"; echo; echo '```'
    echo "$py tests/reference/check_against_scipy.py --skyfabric $exe"; echo; cat "$out/check.txt"
    printf 'exit status %d, %.1f s in all\n' "$status" "$(echo "$t1 - $t0" | bc -l)"; echo '```'; echo; } >>"$out/summary.md"
fi

if want run; then
  echo "== skyfabric run suncatcher-81, one day, full output ($runs runs)"
  cmd=("$exe" run "$root/scenarios/suncatcher-81.yaml" -o "$out/suncatcher-81-day" --set duration_s=86400 --force -q)
  walls=() rss=()
  for r in $(seq "$runs"); do
    /usr/bin/time -v "${cmd[@]}" >"$out/run.stdout" 2>"$out/run-$r.time"
    w=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$out/run-$r.time" | awk -F: '{s=0; for(i=1;i<=NF;i++) s=s*60+$i; print s}')
    m=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/run-$r.time")
    walls+=("$w") rss+=("$m")
    echo "  run $r: wall $w s, peak RSS $((m / 1024)) MiB"
  done
  med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
  size=$(du -sh "$out/suncatcher-81-day/result.h5" | cut -f1)
  { echo "## skyfabric run suncatcher-81, one day, HDF5 + everything the scenario writes"; echo; echo '```'
    echo "/usr/bin/time -v ${cmd[*]}"; echo '```'; echo
    echo "wall (s): ${walls[*]} -> median $(med "${walls[@]}") s; peak RSS (KiB): ${rss[*]} -> median $(med "${rss[@]}") KiB; result.h5 $size"
    echo; } >>"$out/summary.md"
fi

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/summary.md"
echo "summary: $out/summary.md"
