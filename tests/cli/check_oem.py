#!/usr/bin/python3
"""Reads a CCSDS OEM written by `skyfabric oem` with a parser written from the standard (CCSDS
502.0-B-3, "Orbit Data Messages", section 5: KVN Orbit Ephemeris Message), not from skyfabric's
code, and checks it against the run's result.h5 read by h5py:
- the header: CCSDS_OEM_VERS first, COMMENTs only before CREATION_DATE, CREATION_DATE and
  ORIGINATOR present;
- each segment: META_START ... META_STOP with every mandatory key (OBJECT_NAME, OBJECT_ID,
  CENTER_NAME, REF_FRAME, TIME_SYSTEM, START_TIME, STOP_TIME), then data lines "epoch x y z vx vy
  vz" in km and km/s with epochs increasing inside [START_TIME, STOP_TIME];
- the frame and time system are named (TOD, UTC), one segment per satellite asked for;
- every state equals result.h5's /formation/position_eci_m and velocity_eci_m_s to the printed
  precision, at the epoch epoch_utc + /time_s (datetime arithmetic, not skyfabric's).
Prints "ok N" and exits 0, else raises.

  /usr/bin/python3 tests/cli/check_oem.py OEM_FILE RESULT_H5 [SATELLITE ...]
"""
import datetime
import re
import sys

import h5py
import numpy as np

MANDATORY_META = ["OBJECT_NAME", "OBJECT_ID", "CENTER_NAME", "REF_FRAME", "TIME_SYSTEM", "START_TIME", "STOP_TIME"]
KVN = re.compile(r"^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$")


def epoch(text):
    # CCSDS ASCII time code A (YYYY-MM-DDThh:mm:ss[.d->d]), UTC, no zone suffix.
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?", text)
    assert m, "not a CCSDS ASCII time: %r" % text
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    frac = float(m.group(7) or 0.0)
    return datetime.datetime(y, mo, d, h, mi, s, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=frac)


def parse(path):
    lines = [l.rstrip("\n") for l in open(path, encoding="ascii")]
    lines = [l for l in lines if l.strip()]  # blank lines are allowed anywhere
    first = KVN.match(lines[0])
    assert first and first.group(1) == "CCSDS_OEM_VERS" and first.group(2) in ("2.0", "3.0"), lines[0]
    header, i = {}, 1
    while i < len(lines) and not lines[i].startswith("META_START"):
        if lines[i].startswith("COMMENT"):
            assert "CREATION_DATE" not in header, "header COMMENT after CREATION_DATE"
        else:
            m = KVN.match(lines[i])
            assert m, lines[i]
            header[m.group(1)] = m.group(2)
        i += 1
    assert "CREATION_DATE" in header and "ORIGINATOR" in header, header
    segments = []
    while i < len(lines):
        assert lines[i].strip() == "META_START", lines[i]
        i += 1
        meta = {}
        while lines[i].strip() != "META_STOP":
            if not lines[i].startswith("COMMENT"):
                m = KVN.match(lines[i])
                assert m, lines[i]
                meta[m.group(1)] = m.group(2)
            i += 1
        i += 1
        for key in MANDATORY_META:
            assert key in meta, "segment lacks %s" % key
        states = []
        while i < len(lines) and lines[i].strip() != "META_START":
            if lines[i].startswith("COMMENT"):
                assert not states, "COMMENT inside the data lines"
                i += 1
                continue
            fields = lines[i].split()
            assert len(fields) in (7, 10), "a state is epoch + 6 (or 9) numbers: %r" % lines[i]
            states.append((epoch(fields[0]), [float(x) for x in fields[1:7]]))
            i += 1
        segments.append((meta, states))
    return header, segments


def main():
    oem, h5, wanted = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
    header, segments = parse(oem)
    f = h5py.File(h5, "r")
    t = f["time_s"][:]
    pos = f["formation/position_eci_m"][:]
    vel = f["formation/velocity_eci_m_s"][:]
    t0 = datetime.datetime.fromisoformat(f.attrs["epoch_utc"].replace("Z", "+00:00"))
    wanted = wanted or list(range(pos.shape[1]))
    assert len(segments) == len(wanted), (len(segments), wanted)
    for (meta, states), sat in zip(segments, wanted):
        assert meta["CENTER_NAME"] == "EARTH" and meta["REF_FRAME"] == "TOD" and meta["TIME_SYSTEM"] == "UTC", meta
        assert meta["OBJECT_NAME"].endswith("-%d" % sat), (meta["OBJECT_NAME"], sat)
        start, stop = epoch(meta["START_TIME"]), epoch(meta["STOP_TIME"])
        assert len(states) == len(t), (len(states), len(t))
        for k, (when, state) in enumerate(states):
            assert start <= when <= stop
            assert k == 0 or when > states[k - 1][0], "epochs must increase"
            expected = t0 + datetime.timedelta(seconds=float(t[k]))
            assert abs((when - expected).total_seconds()) <= 1e-6, (when, expected)
            # km, km/s; printed to 1e-10 km and 1e-13 km/s.
            assert np.allclose(np.array(state[:3]) * 1e3, pos[k, sat], rtol=0, atol=2e-7), (k, sat, state, pos[k, sat])
            assert np.allclose(np.array(state[3:]) * 1e3, vel[k, sat], rtol=0, atol=2e-10), (k, sat, state, vel[k, sat])
    print("ok", len(segments))


main()
