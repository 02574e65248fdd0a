#!/bin/sh
# A 3-point sweep of the smoke scenario over formation.radius_m, then scripts/plot --sweep:
# the swept key is the one sweep.json names (not the result columns with dotted names), the
# overview figure exists and is not blank, and it is the only PNG unless --all is given.
#   tests/plots/check_sweep_overview.sh SKYFABRIC_EXE SOURCE_DIR OUT_DIR
set -eu
exe=$1 src=$2 out=$3
rm -rf "$out"
"$exe" sweep "$src/scenarios/smoke.yaml" --vary formation.radius_m=200,300,400 --set output.vtk=false \
    --jobs 2 --quiet --force --no-plot -o "$out/sweep"
log=$("$src/scripts/plot" --sweep "$out/sweep")
echo "$log"
echo "$log" | grep -q "swept formation.radius_m;" || { echo "FAIL: swept keys not from sweep.json"; exit 1; }
test "$(ls "$out/sweep/plots" | wc -l)" -eq 1 || { echo "FAIL: more than the overview without --all"; exit 1; }
/usr/bin/python3 - "$out/sweep/plots/sweep_overview.png" <<'PY'
import sys
import matplotlib.image as mpimg
img = mpimg.imread(sys.argv[1])
assert img.shape[0] > 500 and img.shape[1] > 500, img.shape
assert img[..., :3].std() > 0.05, "blank figure"
print("ok", img.shape)
PY
"$src/scripts/plot" --sweep "$out/sweep" --all >/dev/null
test "$(ls "$out/sweep/plots" | wc -l)" -gt 3 || { echo "FAIL: --all wrote no per-metric plots"; exit 1; }
echo ok
