#!/usr/bin/env bash
# Serving (issue 27): a day of scenarios/serving-4x81.yaml (four clusters of 81 satellites, 10 requests/s,
# ≈ 864,000 requests, local PD and PrfaaS each) as one whole `skyfabric run` process: wall time, the
# serving phase's share, peak memory. Target: ≤ 60 s on 2 cores.
#
#   bench/serving.sh [SKYFABRIC_EXE]        DURATION_S=86400 OUT=/tmp/skyfabric-bench-serving
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/build/release/src/skyfabric}"
duration="${DURATION_S:-86400}"
out="${OUT:-/tmp/skyfabric-bench-serving}"
[ -x "$exe" ] || { echo "serving: no skyfabric program at $exe" >&2; exit 2; }
echo "== serving-4x81, ${duration} s at 10 requests/s, both routings, $(nproc) cores"
/usr/bin/time -f "  whole process: wall %e s, CPU %U s user + %S s system, peak memory %M KiB" \
  "$exe" run "$root/scenarios/serving-4x81.yaml" -o "$out" --force --yes --set "duration_s=$duration" \
  | grep -E "requests \(done|throughput \(requests|TTFT|SLO|wall time"
rm -rf "$out"
