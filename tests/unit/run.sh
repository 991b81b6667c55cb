#!/usr/bin/env bash
# Runs every cmocka unit-test binary given; shows each binary's result, the
# tests it skipped with the reason each printed (a test that skips prints
# one line saying why before cmocka's skip()), and one closing line that
# counts test cases: "unit: N passed, N failed, N skipped". A binary that
# ends without cmocka's summary (a crash) counts as one failed test.
set -u
pass=0 fail=0 skipped=0
# cmocka's count on its summary line "[  WORD  ] N test(s)...", or 0
count() { sed -n "s/^\[  $1 *\] \([0-9][0-9]*\) test(s).*/\1/p" | head -n 1 | grep . || echo 0; }
for t in "$@"; do
	name=$(basename "$t")
	if out=$("$t" 2>&1); then status=ok; else status=FAIL; fi
	p=$(echo "$out" | count PASSED)
	f=$(echo "$out" | count FAILED)
	s=$(echo "$out" | count SKIPPED)
	if [ "$status" = FAIL ] && [ "$f" -eq 0 ]; then
		f=1	# crashed, or failed outside a test
	fi
	pass=$((pass + p)); fail=$((fail + f)); skipped=$((skipped + s))
	line="$name: $p passed"
	[ "$f" -gt 0 ] && line="$line, $f failed"
	[ "$s" -gt 0 ] && line="$line, $s skipped"
	printf '%-4s %s\n' "$status" "$line"
	if [ "$status" = FAIL ]; then
		echo "$out" | sed 's/^/    /'
		continue
	fi
	# each skipped test and what it printed between its RUN and SKIPPED lines
	echo "$out" | awk '
		/^\[ RUN      \] / { name = $4; why = ""; next }
		/^\[  SKIPPED \] / && $4 == name && NF == 4 {
			printf "    SKIPPED %s%s\n", name, why ? ": " why : " (no reason given)"
			name = ""; next }
		name != "" && !/^\[/ { sub(/^ *(skipped:? *)?/, ""); why = why ? why "; " $0 : $0 }'
done
"$(dirname "$0")/../sanlogs.sh" || fail=$((fail + 1))
echo "unit: $pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
