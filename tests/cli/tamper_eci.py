#!/usr/bin/python3
"""Copies a run's result.h5 and alters its ECI states as a hostile or damaged file would (for the
`oem` attack tests, tests/cli/nothing_lost_test.cpp).

  /usr/bin/python3 tests/cli/tamper_eci.py SOURCE_H5 TARGET_H5 MODE
MODE: nan (a NaN position), huge_time (a time of 1e300 s), backwards (a time before the one ahead
of it), samples=N:M (N samples of M satellites, stored as chunks of a fill value: a small file that
asks for a large export).
"""
import shutil
import sys

import h5py
import numpy as np

source, target, mode = sys.argv[1:4]
shutil.copyfile(source, target)
with h5py.File(target, "r+") as f:
    if mode == "nan":
        f["formation/position_eci_m"][1, 0, 2] = np.nan
    elif mode == "huge_time":
        t = f["time_s"][...]
        t[-1] = 1e300
        f["time_s"][...] = t
    elif mode == "backwards":
        t = f["time_s"][...]
        t[2] = t[0]
        f["time_s"][...] = t
    elif mode.startswith("samples="):
        n, m = (int(x) for x in mode.split("=")[1].split(":"))
        for name in ("time_s", "formation/position_eci_m", "formation/velocity_eci_m_s"):
            del f[name]
        f.create_dataset("time_s", data=np.arange(n, dtype="f8"), chunks=(1 << 16,), compression="gzip")
        for name, fill in (("formation/position_eci_m", 7.0e6), ("formation/velocity_eci_m_s", 7.5e3)):
            f.create_dataset(name, shape=(n, m, 3), dtype="f8", chunks=(1 << 16, m, 3), compression="gzip",
                             fillvalue=fill)
    else:
        raise SystemExit("unknown mode " + mode)
