#!/usr/bin/python3
"""Reads the provenance of a run, its trace and a sweep back (issue 28), independently of
skyfabric's code: summary.json, result.h5's root attributes, the trace's metadata and sweep.h5's
root attributes each carry skyfabric_version, git_commit (the source tree's HEAD, as git says
now; "unknown" outside git), git_dirty (a bool), command_line (the command as run),
scenario_yaml (the resolved scenario, --set overrides applied) and scenario_sha256 (hashlib's
SHA-256 of that text); each sweep point's scenario_sha256 is its --resume fingerprint.
The run's outputs also carry settings_sha256: hashlib's SHA-256 of the resolved settings that
`skyfabric validate --settings` prints (SETTINGS_JSON), re-dumped canonically here (keys sorted,
no spaces). Prints "ok" and exits 0, else raises.

  /usr/bin/python3 tests/cli/check_provenance.py SOURCE_DIR RUN_DIR TRACE SWEEP_DIR SETTINGS_JSON
"""
import glob
import hashlib
import json
import os
import subprocess
import sys

import h5py

source, run_dir, trace, sweep_dir, settings_json = sys.argv[1:6]
settings = json.load(open(settings_json))
assert settings["seed"] == 7 and settings["duration_s"] == 60.0, settings  # smoke.yaml with --set duration_s=60
settings_sha256 = hashlib.sha256(
    json.dumps(settings, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()).hexdigest()
head = subprocess.run(["git", "-C", source, "rev-parse", "HEAD"], capture_output=True, text=True)
commit = head.stdout.strip() if head.returncode == 0 else "unknown"
version = open(os.path.join(source, "CMakeLists.txt")).read().split("project(skyfabric VERSION ")[1].split()[0]


def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def check(where, p, command_words):
    assert text(p["skyfabric_version"]) == version, (where, p["skyfabric_version"], version)
    assert text(p["git_commit"]) == commit, (where, p["git_commit"], commit)
    assert bool(p["git_dirty"]) in (True, False), (where, p["git_dirty"])
    yaml = text(p["scenario_yaml"])
    assert text(p["scenario_sha256"]) == hashlib.sha256(yaml.encode()).hexdigest(), where
    if where != "sweep.h5":  # a sweep's file comes from no one set of settings
        assert text(p["settings_sha256"]) == settings_sha256, (where, p["settings_sha256"], settings_sha256)
    else:
        assert "settings_sha256" not in p, where
    line = text(p["command_line"])
    for w in command_words:
        assert w in line, (where, w, line)
    return yaml


s = json.load(open(os.path.join(run_dir, "summary.json")))
run_words = [" run ", "--set duration_s=60", "-o " + run_dir, "--trace " + trace]
yaml = check("summary.json", s, run_words)
assert "duration_s: 60" in yaml, yaml  # the resolved text, override applied
with h5py.File(os.path.join(run_dir, "result.h5"), "r") as f:
    assert check("result.h5", f.attrs, run_words) == yaml
    assert f.attrs["git_dirty"].dtype == bool, f.attrs["git_dirty"].dtype  # HDF5's boolean enum
meta = json.load(open(trace))["metadata"]
assert check("trace", meta, run_words) == yaml
with h5py.File(os.path.join(sweep_dir, "sweep.h5"), "r") as f:
    check("sweep.h5", f.attrs, [" sweep ", "--vary seed=1,2"])
points = sorted(glob.glob(os.path.join(sweep_dir, "points", "*", "summary.json")))
assert len(points) == 2, points
for p in points:
    ps = json.load(open(p))
    fingerprint = json.load(open(os.path.join(os.path.dirname(p), "point.json")))["scenario_fingerprint"]
    assert ps["scenario_sha256"] == fingerprint, (p, ps["scenario_sha256"], fingerprint)
    assert " run " in ps["command_line"], ps["command_line"]
assert len({json.load(open(p))["settings_sha256"] for p in points}) == 2, "two seeds, two settings"
print("ok", commit, "dirty" if s["git_dirty"] else "clean")
