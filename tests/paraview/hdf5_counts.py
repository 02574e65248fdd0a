#!/usr/bin/python3
"""Prints the satellite and link counts per output instant of a skyfabric result.h5, as JSON:
    {"time_s": [...], "points": N, "lines": [L0, L1, ...]}
Run with Debian's /usr/bin/python3 (h5py). check_render.py calls it in a subprocess so
that pvbatch never loads a second HDF5 library into its own process.

Reads /time_s [T], /formation/position_lvlh_m [T x N x 3] (N; /formation/position_eci_m as
a fallback) and /links/offsets [T+1] (CSR over time: links of instant k are
offsets[k] .. offsets[k+1]-1). Without /links the line counts are null.

A constellation (/constellation/cluster_of) adds "clusters": C, "satellites_per_cluster",
"cluster_pairs": [P0, ...] (pairs of clusters joined by at least one gateway link, /links/class 1,
at each instant) and "gateway_links": [G0, ...].
"""
import json
import sys

import h5py


def counts(path):
    with h5py.File(path, "r") as f:
        if "time_s" not in f:
            sys.exit("hdf5_counts: %s has no /time_s" % path)
        time_s = [float(t) for t in f["time_s"][...]]
        points = None
        for name in ("formation/position_lvlh_m", "formation/position_eci_m"):
            if name in f:
                points = int(f[name].shape[1])
                break
        if points is None:
            sys.exit("hdf5_counts: %s has no /formation/position_lvlh_m" % path)
        lines = None
        if "links/offsets" in f:
            off = f["links/offsets"][...]
            if len(off) != len(time_s) + 1:
                sys.exit("hdf5_counts: /links/offsets has %d entries, expected T+1 = %d"
                         % (len(off), len(time_s) + 1))
            lines = [int(off[k + 1] - off[k]) for k in range(len(time_s))]
        out = {"time_s": time_s, "points": points, "lines": lines}
        if "constellation/cluster_of" in f and "links/class" in f:
            cluster_of = f["constellation/cluster_of"][...]
            cls, src, dst = (f["links/" + k][...] for k in ("class", "source", "target"))
            off = f["links/offsets"][...]
            out["clusters"] = int(cluster_of.max()) + 1
            out["satellites_per_cluster"] = [int((cluster_of == c).sum()) for c in range(out["clusters"])]
            out["cluster_pairs"], out["gateway_links"] = [], []
            for k in range(len(time_s)):
                s = slice(off[k], off[k + 1])
                gw = cls[s] == 1
                a, b = cluster_of[src[s][gw]], cluster_of[dst[s][gw]]
                out["cluster_pairs"].append(len({(min(x, y), max(x, y)) for x, y in zip(a, b)}))
                out["gateway_links"].append(int(gw.sum()))
        return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: hdf5_counts.py RESULT.h5")
    json.dump(counts(sys.argv[1]), sys.stdout)
    print()
