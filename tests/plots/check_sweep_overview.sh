#!/bin/sh
# A 3-point sweep of the smoke scenario over formation.radius_m (its own overview drawn), then scripts/plot --sweep:
# the swept key is the one sweep.json names (not the result columns with dotted names), the
# overview figure exists and is not blank, and it is the only PNG unless --all is given.
# Then a sweep over a decade of formation sizes under radiation, plotted --format pdf: vector PDFs,
# a logarithmic axis for the swept size, the trials' interval as goodput's error bars, the
# fault-free goodput beside it, and no figure for an index column.
#   tests/plots/check_sweep_overview.sh SKYFABRIC_EXE SOURCE_DIR OUT_DIR
set -eu
exe=$1 src=$2 out=$3
rm -rf "$out"
# The sweep draws its own overview, from any working folder, finding viz/plot_sweep.py beside the
# binary's source tree (no SKYFABRIC_PLOT_SWEEP).
(cd / && env -u SKYFABRIC_PLOT_SWEEP "$exe" sweep "$src/scenarios/smoke.yaml" --vary formation.radius_m=200,300,400 \
    --set output.vtk=false --jobs 2 --quiet --force -o "$out/sweep")
test -s "$out/sweep/plots/sweep_overview.png" || { echo "FAIL: the sweep drew no overview"; exit 1; }
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
# A failed point whose swept value is empty in the table is left out of the plots, not a crash.
cp -r "$out/sweep" "$out/failed"
/usr/bin/python3 - "$out/failed/sweep.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
failed = list(rows[1])
failed[rows[0].index("status")] = "failed"
failed[rows[0].index("formation.radius_m")] = ""
rows.append(failed)
csv.writer(open(sys.argv[1], "w", newline="")).writerows(rows)
PY
"$src/scripts/plot" --sweep "$out/failed" >/dev/null || { echo "FAIL: a failed point's empty value broke the plot"; exit 1; }
test "$(ls "$out/sweep/plots" | wc -l)" -gt 3 || { echo "FAIL: --all wrote no per-metric plots"; exit 1; }
"$exe" sweep "$src/scenarios/smoke.yaml" --vary formation.radius_m=200,700,2000 --set duration_s=7200 \
    --set radiation.trials=12 --set radiation.rate_scale=100 --set output.vtk=false \
    --jobs 2 --quiet --force --no-plot -o "$out/decade"
"$src/scripts/plot" --sweep "$out/decade" --all --format pdf >/dev/null
test -z "$(ls "$out/decade/plots" | grep -v '[.]pdf$')" || { echo "FAIL: --format pdf wrote other formats"; exit 1; }
! ls "$out/decade/plots" | grep -q "_pair" || { echo "FAIL: an index column was plotted"; exit 1; }
/usr/bin/python3 - "$src/viz" "$out/decade" <<'PY'
import glob, os, sys
sys.path.insert(0, sys.argv[1])
import matplotlib.pyplot as plt
from matplotlib.container import ErrorbarContainer
import plot_sweep
pdfs = glob.glob(os.path.join(sys.argv[2], "plots", "*.pdf"))
assert len(pdfs) > 3, pdfs
for p in pdfs:
    with open(p, "rb") as fh:
        assert fh.read(5) == b"%PDF-", p
sw = plot_sweep.Sweep(os.path.join(sys.argv[2], "sweep.csv"))
assert sw.x_name == "formation.radius_m", sw.x_name
fig, ax = plt.subplots()
assert sw.draw(ax, "radiation.goodput")
assert ax.get_xscale() == "log", ax.get_xscale()            # 200..2000 m: a decade
bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
assert bars, "goodput has no error bars"
labels = ax.get_legend_handles_labels()[1]
assert "fault-free goodput" in labels, labels
fig, ax = plt.subplots()
assert sw.draw(ax, "formation.nearest_neighbour_min_m")
assert ax.get_xscale() == "log"
print("ok pdf", len(pdfs))
PY
echo ok
