#!/bin/sh
# The figures a paper takes (issue 52, item 11), on the stressed constellation (one orbit, VTK off)
# and on serving-4x81 (600 s), plotted --format pdf:
# - every PDF embeds TrueType fonts, no Type 3 (pdffonts, from poppler-utils, when present; the
#   PDF's own font dictionaries always);
# - skip messages name the figure in the format asked for (step_time.pdf, not .png);
# - goodput.pdf exists for the constellation: each algorithm's trials with the median, the trials'
#   interval and the mean's 95 % confidence interval as error bars, the fault-free goodput;
# - step_time.pdf: a logarithmic axis over steps that span a decade;
# - aggregation.pdf: gateway capacity and gateway links in panels of their own;
# - serving.pdf: TTFT on a logarithmic axis, the TTFT and TPOT objectives marked;
# - a serving sweep's overview: its serving figures (TTFT p99, SLO attainment, ...), not only wall time.
#   tests/plots/check_paper_figures.sh SKYFABRIC_EXE SOURCE_DIR OUT_DIR
set -eu
exe=$1 src=$2 out=$3
rm -rf "$out"
"$exe" run "$src/scenarios/constellation-4x81-stress.yaml" --set output.vtk=false --quiet --force -o "$out/stress"
"$exe" run "$src/scenarios/serving-4x81.yaml" --set duration_s=600 --set output.vtk=false --quiet --force -o "$out/serving"
for run in stress serving; do
  log=$("$src/scripts/plot" "$out/$run" --format pdf)
  echo "$log"
  if echo "$log" | grep "skipping" | grep -q "[.]png"; then echo "FAIL: a skip message names .png under --format pdf"; exit 1; fi
  test -z "$(ls "$out/$run/plots" | grep -v '[.]pdf$')" || { echo "FAIL: --format pdf wrote other formats"; exit 1; }
done
echo "$log" | grep -q "skipping step_time.pdf" || { echo "FAIL: no skip message for step_time.pdf"; exit 1; }
for f in "$out/stress/plots/goodput.pdf" "$out/stress/plots/step_time.pdf" "$out/stress/plots/aggregation.pdf" \
         "$out/serving/plots/serving.pdf"; do
  test -s "$f" || { echo "FAIL: $f not written"; exit 1; }
done
if command -v pdffonts >/dev/null; then
  for f in "$out"/*/plots/*.pdf; do
    if pdffonts "$f" | grep -q "Type 3"; then pdffonts "$f"; echo "FAIL: $f embeds a Type 3 font"; exit 1; fi
    pdffonts "$f" | grep -q "TrueType" || { pdffonts "$f"; echo "FAIL: $f embeds no TrueType font"; exit 1; }
  done
else
  echo "note: pdffonts (poppler-utils, scripts/setup) missing: checking the PDFs' font dictionaries only"
fi
/usr/bin/python3 - "$src/viz" "$out" <<'PY'
import glob, os, sys
sys.path.insert(0, sys.argv[1])
import h5py
import matplotlib.pyplot as plt
from matplotlib.container import ErrorbarContainer
import plot_run
out = sys.argv[2]
for path in glob.glob(os.path.join(out, "*", "plots", "*.pdf")):
    with open(path, "rb") as fh:
        assert b"/Type3" not in fh.read(), path + ": a Type 3 font"
# Draw the figures again, keeping them open to read their axes.
figures = {}
def keep(fig, out_dir, name):
    figures[name] = fig
    return name
plot_run.save = keep
with h5py.File(os.path.join(out, "stress", "result.h5"), "r") as f:
    tx = plot_run.TimeAxis(f)
    assert plot_run.plot_goodput(f, out, tx) == "goodput.png"
    assert plot_run.plot_steps(f, out) == "step_time.png"
    assert plot_run.plot_aggregation(f, out, tx) == "aggregation.png"
    algorithms = plot_run.algorithm_names(f["radiation/constellation/algorithm"])
ax = figures["goodput.png"].axes[0]
bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
assert len(bars) == 2 * len(algorithms), (len(bars), algorithms)  # median with interval, mean with its CI
labels = ax.get_legend_handles_labels()[1]
assert any("min-max" in l or "nearest rank" in l for l in labels), labels
assert any("95 % confidence" in l for l in labels), labels
assert "fault-free goodput" in labels, labels
assert [t.get_text() for t in ax.get_xticklabels()] == algorithms
step = figures["step_time.png"].axes[0]
assert step.get_yscale() == "log", step.get_yscale()
agg = figures["aggregation.png"].axes
assert len(agg) == 3, len(agg)
assert "capacity" in agg[0].get_ylabel() and "links" in agg[1].get_ylabel(), [a.get_ylabel() for a in agg]
with h5py.File(os.path.join(out, "serving", "result.h5"), "r") as f:
    tx = plot_run.TimeAxis(f)
    assert plot_run.plot_serving(f, out, tx) == "serving.png"
    slo = (float(f["inference/requests"].attrs["ttft_slo_s"]), float(f["inference/requests"].attrs["tpot_slo_s"]))
ttft, tpot = figures["serving.png"].axes[:2]
assert ttft.get_xscale() == "log", ttft.get_xscale()
for ax, want in ((ttft, slo[0]), (tpot, slo[1] * 1e3)):
    marks = [l for l in ax.get_lines() if l.get_label().startswith("objective")]
    assert len(marks) == 1 and abs(marks[0].get_xdata()[0] - want) < 1e-9 * want, (ax.get_xlabel(), want)
print("ok", sorted(figures))
PY
# A serving sweep's overview shows the serving figures (it showed only the wall time).
"$exe" sweep "$src/scenarios/serving-4x81.yaml" --vary workload.inference.arrivals.rate_per_s=5,10 --set duration_s=300 \
    --set output.vtk=false --jobs 2 --quiet --force --no-plot -o "$out/serving_sweep"
"$src/scripts/plot" --sweep "$out/serving_sweep" --format pdf >/dev/null
/usr/bin/python3 - "$src/viz" "$out/serving_sweep" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
import plot_sweep
sw = plot_sweep.Sweep(os.path.join(sys.argv[2], "sweep.csv"))
headline = [c for c in plot_sweep.HEADLINE if c in sw.candidates]
serving = [c for c in headline if c.startswith("inference.")]
assert len(serving) >= 4 and any(".ttft_s.p99" in c for c in serving), headline
with open(os.path.join(sys.argv[2], "plots", "sweep_overview.pdf"), "rb") as fh:
    assert b"/Type3" not in fh.read(), "sweep_overview.pdf: a Type 3 font"
print("ok overview", serving)
PY
echo ok
