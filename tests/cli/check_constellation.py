#!/usr/bin/python3
"""Checks a constellation run (issue 17) independently of skyfabric's code:

- the clusters' chiefs fly `spacing_km` apart along one orbit (chord of the arc), at every sample;
- cluster 1's satellites are where a single-formation run of the same scenario, its chief moved
  along the orbit by the spacing, puts them (per-cluster physics is the single-cluster physics);
- /links/class marks exactly the links whose ends lie in different clusters; those join gateway
  satellites, their distance is |r_i - r_j| in ECI, their light time d/c, and their count per sample
  is /constellation/gateway_links;
- a gateway link exists exactly when the straight line between its ends clears the Earth by the
  grazing altitude (computed here from the ECI positions);
- summary.json lists every algorithm with positive throughput, and the table in result.h5 agrees;
  ring and hierarchical route nothing outside their own clusters (all of them), and with the Earth
  blocking the outer pairs NoLoCo reports bytes detoured through other clusters.
Prints "ok" and exits 0, else raises.

  /usr/bin/python3 tests/cli/check_constellation.py RUN_DIR SINGLE_CLUSTER_1_RUN_DIR SPACING_KM
"""
import json
import sys

import h5py
import numpy as np

run_dir, single_dir, spacing_km = sys.argv[1], sys.argv[2], float(sys.argv[3])
R_EARTH = 6378137.0
C = 299792458.0
GRAZING_M = 100e3

s = json.load(open(run_dir + "/summary.json"))
con = s["constellation"]
# The algorithms the run trained, each one of the result file's algorithm_names.
names = list(con["algorithms"])
with h5py.File(run_dir + "/result.h5", "r") as f:
    numbered = f["constellation/algorithms/algorithm"].attrs["algorithm_names"]
    numbered = numbered.decode() if isinstance(numbered, bytes) else numbered
    by_code = {int(code): name for code, name in (entry.split("=") for entry in numbered.split(","))}
assert names and set(names) <= set(by_code.values()), (names, by_code)
for name in names:
    a = con["algorithms"][name]
    assert a["tokens_per_s"] > 0 and a["steps"] > 0 and not a["truncated"], (name, a)

with h5py.File(run_dir + "/result.h5", "r") as f:
    clusters = len(f["constellation/cluster"])
    cluster_of = f["constellation/cluster_of"][:]
    gateways = f["constellation/gateway_nodes"][:]
    chiefs = f["constellation/chief_position_eci_m"][:]
    eci = f["formation/position_eci_m"][:]
    # Chiefs: arc `spacing` apart on a near-circular orbit, so the chord 2 r sin(s / 2a) (a = |r|).
    for k in range(1, clusters):
        d = np.linalg.norm(chiefs[:, k] - chiefs[:, k - 1], axis=1)
        r = np.linalg.norm(chiefs[:, k - 1], axis=1)
        chord = 2 * r * np.sin(spacing_km * 1e3 / (2 * r))
        assert np.all(np.abs(d - chord) < 0.01 * chord), (k, d.min(), d.max(), chord.mean())
    # Cluster 1 against its own single-formation run.
    with h5py.File(single_dir + "/result.h5", "r") as g:
        alone = g["formation/position_eci_m"][:]
    ones = np.flatnonzero(cluster_of == 1)
    err = np.abs(eci[:, ones] - alone).max()
    assert err < 1e-3, err
    # Links, sample by sample.
    offsets = f["links/offsets"][:]
    src, dst, cls = f["links/source"][:], f["links/target"][:], f["links/class"][:]
    dist, cap = f["links/distance_m"][:], f["links/capacity_bps"][:]
    counts = f["constellation/gateway_links"][:]
    blocked = f["constellation/gateway_blocked"][:]
    gateway_set = set(int(x) for x in gateways.ravel())
    pairs_seen = 0
    for t in range(len(offsets) - 1):
        lo, hi = offsets[t], offsets[t + 1]
        a, b, c = src[lo:hi], dst[lo:hi], cls[lo:hi]
        cross = cluster_of[a] != cluster_of[b]
        assert np.array_equal(cross, c == 1), t
        assert int(c.sum()) == counts[t], (t, c.sum(), counts[t])
        for i in np.flatnonzero(cross):
            x, y = int(a[i]), int(b[i])
            assert x in gateway_set and y in gateway_set, (x, y)
            d = np.linalg.norm(eci[t, x] - eci[t, y])
            assert abs(d - dist[lo + i]) < 1e-3 * d, (d, dist[lo + i])
            assert cap[lo + i] > 0
        # Line of sight: every gateway pair of the pattern is up iff its segment clears the Earth.
        up = {(int(x), int(y)) for x, y in zip(a[cross], b[cross])}
        expected_up, expected_blocked = 0, 0
        for ca in range(clusters):
            for cb in range(ca + 1, clusters):
                for k in range(gateways.shape[1]):
                    p, q = eci[t, gateways[ca, k]], eci[t, gateways[cb, k]]  # planar: same index
                    u = q - p
                    h = np.clip(-p.dot(u) / u.dot(u), 0.0, 1.0)
                    clear = np.linalg.norm(p + h * u) - R_EARTH > GRAZING_M
                    key = (min(gateways[ca, k], gateways[cb, k]), max(gateways[ca, k], gateways[cb, k]))
                    assert (key in up) == clear, (t, key, clear)
                    expected_up += clear
                    expected_blocked += not clear
        assert expected_blocked == blocked[t], (t, expected_blocked, blocked[t])
        pairs_seen += expected_up
    # Every cluster in one collective: nothing is outside its own clusters. NoLoCo's pairs, when the
    # Earth hides the outer clusters' direct links, go round through the others (and say so).
    outside = {n: con["algorithms"][n]["bytes_outside_own_clusters"] for n in names}
    assert outside["ring"] == 0 and outside["hierarchical"] == 0, outside
    if blocked.max() > 0:
        assert outside["noloco"] > 0, outside
    table = f["constellation/algorithms"]
    for row, code in enumerate(table["algorithm"][:]):
        name = by_code[int(code)]
        assert abs(table["tokens_per_s"][row] - con["algorithms"][name]["tokens_per_s"]) <= 1e-9 * table["tokens_per_s"][row]
print("ok", clusters, "clusters,", pairs_seen, "gateway link-samples, blocked", int(blocked.max()), "at most")
