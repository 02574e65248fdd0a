#!/usr/bin/env bash
# scripts/fuzz on a fresh clone (no build/ folder): it must get as far as running the fuzzer.
# clang, cmake and the fuzzer binary are stubs here (the real fuzz build takes minutes): the
# test is about the script's own steps, which once wrote into build/ before it existed.
# Usage: fuzz_fresh_clone.sh SOURCE_DIR WORKDIR
set -uo pipefail
src=$1 work=$2
rm -rf "$work"; mkdir -p "$work/clone/scripts" "$work/bin"
cp "$src/scripts/fuzz" "$work/clone/scripts/fuzz"
# Stubs: `cmake --build` leaves a fuzzer that reports success; clang++ and the runtime check pass.
cat >"$work/bin/cmake" <<'STUB'
#!/usr/bin/env bash
if [ "$1" = --build ]; then
  mkdir -p "$2/tests/fuzz" && printf '#!/bin/sh\necho "stub fuzzer $*"\n' >"$2/tests/fuzz/fuzz_scenario" && chmod +x "$2/tests/fuzz/fuzz_scenario"
fi
exit 0
STUB
printf '#!/bin/sh\nexit 0\n' >"$work/bin/clang++"
printf '#!/bin/sh\necho "apt-get stub: not installing $*"\nexit 0\n' >"$work/bin/apt-get"
printf '#!/bin/sh\n"$@"\n' >"$work/bin/sudo"
chmod +x "$work/bin/"*
cd "$work/clone" || exit 1
PATH="$work/bin:$PATH" bash scripts/fuzz 1 >"$work/log" 2>&1
status=$?
cat "$work/log"
if [ "$status" -ne 0 ]; then echo "FAIL: scripts/fuzz exited $status on a fresh clone"; exit 1; fi
grep -q "stub fuzzer" "$work/clone/build/fuzz/fuzz.log" || { echo "FAIL: the fuzzer was not run"; exit 1; }
rm -rf "$work"
echo "ok"
