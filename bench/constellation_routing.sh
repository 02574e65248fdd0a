#!/usr/bin/env bash
# What weighted multipath (UCMP) gains over single-path routing on the aggregation layer:
# DiLoCo's outer sync (28 GB of fp32 outer gradients averaged over four clusters 100 km apart)
# on planar and spread gateway topologies, a quarter orbit of constellation-4x81.
#   bench/constellation_routing.sh [BUILD_DIR]   (default build/release)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-$root/build/release}/src/skyfabric"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
printf '%-8s %-17s %14s %14s %14s\n' topology routing outer_sync_s gateway_TB step_s
for topology in planar spread; do
  for routing in shortest_latency ucmp; do
    "$exe" run "$root/scenarios/constellation-4x81.yaml" -o "$out/run" --force --set duration_orbits=0.25 \
      --set constellation.algorithms=diloco --set workload.local_steps=10 --set output.vtk=false \
      --set constellation.gateways.topology=$topology --set workload.routing=$routing >/dev/null
    /usr/bin/python3 - "$out/run/summary.json" "$topology" "$routing" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["constellation"]["algorithms"]["diloco"]
print(f"{sys.argv[2]:<8} {sys.argv[3]:<17} {a['outer_sync_mean_s']:14.4f} {a['gateway_bytes'] / 1e12:14.3f} {a['step_time_mean_s']:14.4f}")
PY
  done
done
