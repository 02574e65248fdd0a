#!/usr/bin/python3
"""The time axis as CF tools find it (issue 52, item 10), in every group of a result.h5 that has
one: the root, every group with time series (`GROUP/time_s` a dimension) and a serving run's gateway egress
(`/inference/gateway_egress*`, one mean per bin). Each group opened with xarray (h5netcdf) as
cf-xarray would see it: one variable with `axis: T` or `standard_name: time` (cf-xarray's criteria
for `.cf["time"]`; with cf_xarray installed, `.cf["time"]` itself), which is the group's index
coordinate in seconds (float, so `.sel` selects by it) and the first dimension of the group's time
series.

    /usr/bin/python3 tests/cli/check_cf_time.py RESULT_H5 [GROUP ...]

GROUPs named on the command line must be among those checked (e.g. inference/gateway_egress).
"""
import sys

import h5py
import numpy as np
import xarray as xr

try:
    import cf_xarray  # noqa: F401  (not in Debian 12: the attributes are checked directly then)
except ImportError:
    cf_xarray = None


def time_groups(path):
    groups = ["/"]
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            # GROUP/time_s as a dimension (a table's column of event times, /links/events/time_s, is none)
            sampled = isinstance(obj, h5py.Group) and "time_s" in obj and h5py.h5ds.is_scale(obj["time_s"].id)
            if isinstance(obj, h5py.Group) and (sampled or name.split("/")[-1].startswith("gateway_egress")):
                groups.append("/" + name)
        f.visititems(visit)
    return groups


def check(path, group):
    ds = xr.open_dataset(path, engine="h5netcdf", group=group)
    found = [n for n, v in ds.variables.items() if v.attrs.get("axis") == "T" or v.attrs.get("standard_name") == "time"]
    assert len(found) == 1, "%s: time variables %s" % (group, found)
    name = found[0]
    t = ds[name]
    assert t.attrs.get("axis") == "T" and t.attrs.get("standard_name") == "time", (group, dict(t.attrs))
    assert t.attrs.get("units") == "s" and t.dtype.kind == "f", (group, t.attrs.get("units"), t.dtype)
    assert name in ds.indexes, "%s: %s is not the index coordinate of its dimension" % (group, name)
    if cf_xarray is not None:
        assert ds.cf["time"].name == name, (group, ds.cf["time"].name)
    series = [v for v in ds.data_vars if ds[v].dims and ds[v].dims[0] == name]
    assert series or group == "/", "%s: nothing runs along %s" % (group, name)
    if t.size > 1:
        value = float(t.values[1])
        assert float(ds.sel({name: value})[name]) == value, group
    assert np.all(np.diff(t.values) > 0), "%s: %s not increasing" % (group, name)
    return name, len(series)


def main(path, wanted):
    groups = time_groups(path)
    missing = [g for g in wanted if "/" + g.strip("/") not in groups]
    assert not missing, "groups %s not found among %s" % (missing, groups)
    for g in groups:
        name, series = check(path, g)
        print("ok %s: %s (%d series)" % (g, name, series))
    print("ok: %d groups with a time axis%s" % (len(groups), "" if cf_xarray else " (cf_xarray absent: its attributes checked)"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
