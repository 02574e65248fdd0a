#!/usr/bin/env bash
# One malformed-scenario case through the real program: `skyfabric validate` and
# `skyfabric run` must both end with exit status 2 (bad input) within 60 s, print
# "skyfabric: error: CASE:LINE:COLUMN: ..." (or "skyfabric: error: --set KEY...") and the
# text of the case's `# expect:` line, and write no result.
# A case may give extra arguments on a `# args:` line (e.g. --set key=value).
# Usage: check_case.sh SKYFABRIC CASE.yaml WORKDIR
set -uo pipefail
exe=$1 case_file=$2 work=$3
expect=$(sed -n 's/^# expect: //p' "$case_file" | head -n 1)
args=$(sed -n 's/^# args: //p' "$case_file" | head -n 1)
if [ -z "$expect" ]; then echo "FAIL $case_file: no '# expect:' line"; exit 1; fi
rm -rf "$work"; mkdir -p "$work"
failed=0
for command in validate run; do
  extra=()
  [ "$command" = run ] && extra=(-o "$work/out" --quiet)
  # shellcheck disable=SC2086  # args are whitespace-separated on purpose
  timeout -s KILL 60 "$exe" "$command" "$case_file" $args "${extra[@]}" >"$work/stdout" 2>"$work/stderr"
  status=$?
  message=$(cat "$work/stderr")
  if [ "$status" -ne 2 ]; then
    echo "FAIL $command: exit status $status, expected 2 (137 = hang killed after 60 s, 134/139 = crash)"; failed=1
  fi
  first=$(head -n 1 "$work/stderr")
  located=0
  case "$first" in
    "skyfabric: error: --set "*) located=1 ;;
    "skyfabric: error: $case_file:"*)
      rest=${first#"skyfabric: error: $case_file:"}
      [[ "$rest" =~ ^[0-9]+:[0-9]+:\  ]] && located=1 ;;
  esac
  if [ "$located" -ne 1 ]; then
    echo "FAIL $command: message has no $case_file:LINE:COLUMN or --set location"; failed=1
  fi
  if ! grep -qF -- "$expect" <<<"$message"; then
    echo "FAIL $command: message lacks '$expect'"; failed=1
  fi
  if [ -e "$work/out/result.h5" ] || [ -e "$work/out/result.h5.partial" ]; then
    echo "FAIL $command: wrote a result for bad input"; failed=1
  fi
  echo "$command -> $status: $message"
done
rm -rf "$work"
exit $failed
