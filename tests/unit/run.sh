#!/usr/bin/env bash
# Runs every cmocka unit-test binary given; prints one closing line.
set -u
pass=0 fail=0
for t in "$@"; do
	name=$(basename "$t")
	if out=$("$t" 2>&1); then
		pass=$((pass + 1)); echo "ok   $name"
	else
		fail=$((fail + 1)); echo "FAIL $name"; echo "$out" | sed 's/^/    /'
	fi
	echo "$out" | grep -E '^\[  (PASSED|FAILED)  \]' | sed 's/^/    /'
done
"$(dirname "$0")/../sanlogs.sh" || fail=$((fail + 1))
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
