#!/bin/sh
# scripts/render --cluster N --color-by Q on a constellation run's formation frames (issue 28):
# one cluster alone at its own scale, in its own chief's frame, links coloured by the chosen quantity; the zoomed-out
# constellation series is skipped; a cluster the run does not have is refused (exit 2).
# Exit 3 (skipped) without ParaView, as scripts/render.
#   tests/paraview/check_render_cluster.sh SOURCE_DIR CONSTELLATION_RUN_DIR OUT_DIR
set -u
src=$1 run=$2 out=$3
rm -rf "$out"
log=$("$src/scripts/render" "$run" "$out" --cluster 1 --color-by utilisation --jobs 1 --no-state 2>&1)
status=$?
[ $status -eq 3 ] && { echo "$log"; exit 3; }
echo "$log"
[ $status -eq 0 ] || { echo "FAIL: render --cluster exited $status"; exit 1; }
echo "$log" | grep -q "skipping .*constellation.pvd" || { echo "FAIL: the constellation series was not skipped"; exit 1; }
frames=$(ls "$out/formation_cluster1"/frame_*.png 2>/dev/null | wc -l)
[ "$frames" -ge 2 ] || { echo "FAIL: $frames frames"; exit 1; }
/usr/bin/python3 - "$out/formation_cluster1" <<'PY' || exit 1
import glob, sys
import matplotlib.image as mpimg
import numpy as np
for path in sorted(glob.glob(sys.argv[1] + "/frame_*.png")):
    img = mpimg.imread(path)[..., :3]
    # Satellites are drawn green (status ok): one cluster of 81 fills the scene at its own scale,
    # so a good share of the scene's pixels are satellite green.
    green = (img[..., 1] > 0.6) & (img[..., 0] < 0.4) & (img[..., 2] < 0.45)
    assert green.mean() > 0.002, (path, green.mean())
print("ok")
PY
# Cluster 1 in its own chief's frame, not cluster 0's 100 km away (tests/paraview/check_cluster_frame.py).
"$src/scripts/render" --pvbatch "$src/tests/paraview/check_cluster_frame.py" "$run" 1 || { echo "FAIL: cluster frame"; exit 1; }
"$src/scripts/render" "$run" "$out" --cluster 9 --jobs 1 > "$out/refused.log" 2>&1
status=$?
[ $status -eq 2 ] || { cat "$out/refused.log"; echo "FAIL: --cluster 9 exited $status, not 2"; exit 1; }
grep -q "clusters 0..3" "$out/refused.log" || { cat "$out/refused.log"; echo "FAIL: no range named"; exit 1; }
echo ok
