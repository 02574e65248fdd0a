#!/usr/bin/env bash
# Serving (issue 27): a day of scenarios/serving-4x81.yaml (four clusters of 81 satellites, 10 requests/s,
# ≈ 864,000 requests, local PD and PrfaaS each) as one whole `skyfabric run` process: wall time, the
# serving phase's share, peak memory. Target: ≤ 60 s on 2 cores.
#
# BACKLOG=1 instead (issue 51): a trace of 10^6 requests at 30/s (33,300 s) on serving-two-datacentres,
# whose KV caches pile up behind the datacentres' 100 Gbit/s link (thousands in flight at once): the
# estimate `validate` prints, then the run's CPU time and peak memory beside it.
#
#   bench/serving.sh [SKYFABRIC_EXE]        DURATION_S=86400 OUT=/tmp/skyfabric-bench-serving BACKLOG=0
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/build/release/src/skyfabric}"
duration="${DURATION_S:-86400}"
out="${OUT:-/tmp/skyfabric-bench-serving}"
[ -x "$exe" ] || { echo "serving: no skyfabric program at $exe" >&2; exit 2; }
if [ "${BACKLOG:-0}" = 1 ]; then
  work="$out-backlog"
  rm -rf "$work" && mkdir -p "$work"
  /usr/bin/python3 - "$work/trace.csv" <<'PY'
import random, sys
random.seed(1)
t = 0.0
with open(sys.argv[1], "w") as f:
    f.write("arrival_s,prompt_tokens,output_tokens\n")
    for _ in range(10**6):
        t += random.expovariate(30.0)
        f.write(f"{t:.6f},{random.randint(1000, 60000)},{random.randint(100, 2000)}\n")
PY
  sed -e "s#topology: file:two-datacentres.csv#topology: file:$root/scenarios/two-datacentres.csv#" \
      -e 's#arrivals: { rate_per_s: 1 }#arrivals: { trace: trace.csv }#' -e '/prompt_tokens:/d' -e '/output_tokens:/d' \
      -e 's/duration_s: 3600/duration_s: 33300/' "$root/scenarios/serving-two-datacentres.yaml" > "$work/backlog.yaml"
  echo "== 10^6-request trace at 30/s behind one 100 Gbit/s link, both routings, $(nproc) cores"
  "$exe" validate "$work/backlog.yaml" | tail -1
  /usr/bin/time -f "  whole process: wall %e s, CPU %U s user + %S s system, peak memory %M KiB" \
    "$exe" run "$work/backlog.yaml" -o "$work/run" --force --yes | grep -E "requests \(done|dropped|wall time"
  rm -rf "$work"
  exit 0
fi
echo "== serving-4x81, ${duration} s at 10 requests/s, both routings, $(nproc) cores"
/usr/bin/time -f "  whole process: wall %e s, CPU %U s user + %S s system, peak memory %M KiB" \
  "$exe" run "$root/scenarios/serving-4x81.yaml" -o "$out" --force --yes --set "duration_s=$duration" \
  | grep -E "requests \(done|throughput \(requests|TTFT|SLO|wall time"
rm -rf "$out"
