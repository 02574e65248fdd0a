#!/bin/sh
# scripts/plot on a short constellation run (the constellation_run fixture): the algorithm
# comparison constellation.png and the aggregation layer over time aggregation.png exist and
# are not blank, beside the plots every run gets.
#   tests/plots/check_constellation_plots.sh SOURCE_DIR RUN_DIR
set -eu
src=$1 run=$2
rm -rf "$run/plots"
"$src/scripts/plot" "$run"
/usr/bin/python3 - "$run/plots" <<'PY'
import os
import sys
import matplotlib.image as mpimg
for name in ("constellation.png", "aggregation.png", "link_capacity.png"):
    path = os.path.join(sys.argv[1], name)
    assert os.path.getsize(path) > 10000, (path, os.path.getsize(path))
    img = mpimg.imread(path)
    assert img.shape[0] > 500 and img.shape[1] > 500, (name, img.shape)
    assert img[..., :3].std() > 0.05, name + ": blank figure"
    print("ok", name, img.shape)
PY
echo ok
