#!/bin/sh
# A short serving run on the 4x81 constellation (both routings), then scripts/plot: serving.png
# exists, is not blank, and result.h5's gateway egress series averages to the summary's mean.
#   tests/plots/check_serving_plot.sh SKYFABRIC_EXE SOURCE_DIR OUT_DIR
set -eu
exe=$1 src=$2 out=$3
rm -rf "$out"
"$exe" run "$src/scenarios/serving-4x81.yaml" --set duration_s=600 --set output.vtk=false --quiet --force -o "$out"
log=$("$src/scripts/plot" "$out")
echo "$log" | grep -q "wrote .*serving.png" || { echo "FAIL: no serving.png"; exit 1; }
/usr/bin/python3 - "$out" <<'PY'
import json, sys
import h5py
import matplotlib.image as mpimg
out = sys.argv[1]
img = mpimg.imread(out + "/plots/serving.png")
assert img[..., :3].std() > 0.05, "blank figure"
s = json.load(open(out + "/summary.json"))["inference"]["routings"]
f = h5py.File(out + "/result.h5", "r")
for group in ("gateway_egress", "gateway_egress_local", "gateway_egress_prfaas"):
    if "inference/" + group not in f:
        continue
    bins = f["inference/" + group]
    routing = bins.attrs["routing"]
    routing = routing.decode() if isinstance(routing, bytes) else str(routing)
    egress = bins["egress_bps"][...]
    starts = bins["start_s"][...]
    span = f.attrs["simulated_s"]
    widths = [min(starts[1] - starts[0], span - t) for t in starts]
    mean = sum(e * w for e, w in zip(egress, widths)) / span
    want = s[routing]["gateway_egress_mean_bps"]
    assert want > 0 and abs(mean - want) <= 1e-9 * want, (mean, want)
    assert egress.max() <= s[routing]["gateway_egress_peak_bps"] * (1 + 1e-12)
    checked = routing
print("ok", checked)
PY
echo ok
