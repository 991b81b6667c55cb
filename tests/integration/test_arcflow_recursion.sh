#!/usr/bin/env bash
# test_arcflow_recursion.sh - arcflow on a real recursive program.
#
# 1. offline: `stacktree report --folded` on the seed's 19-sample vector gives
#    the issue's rows; a malformed folded file fails naming its line.
# 2. as root: stacktreed profiles build/workloads/recursive; in profile.json
#    the recursive functions have rPARENT rows, CUM_ALL > CUM (close to the
#    workload's known depths) and every entry keeps the five invariants;
#    `stacktree report --input ... --merge-threads` re-renders it with the
#    same total samples.
# Self-contained; exit 0 on pass, 1 on failure (each failure printed),
# 77 when the profiling part cannot run (not root).
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${STACKTREE_BUILD:-$ROOT/build}
STACKTREE=$B/stacktree
STACKTREED=$B/stacktreed
WORKLOAD=$B/workloads/recursive
NAME=test_arcflow_recursion
failures=0

af_fail() {
	echo "FAIL $NAME: $*" >&2
	failures=$((failures + 1))
}

# af: profile.json version 5's "arcflow" (rows of numbers, names in
# .strings) in version 4's shape, as stcheck.arcflow() gives it: entries
# {index, function, calls, base, cum, cum_all, parents, children}, rows
# {function, calls, base, cum, recursive}, names resolved through .strings
# (a name that is not UTF-8 by its text). Every filter below can use it.
AF_DEFS='
def af:
  .strings as $s
  | def name: $s[.] | if type == "object" then .text else . end;
  [.arcflow[][0] | name] as $n
  | def rows: map({function: $n[.[0]], calls: .[1], base: .[2], cum: .[3],
                   recursive: (.[4] == 1)});
  [.arcflow | to_entries[] | .key as $i | .value
   | {index: $i, function: $n[$i], calls: .[1], base: .[2], cum: .[3], cum_all: .[4],
      parents: (.[5] | rows), children: (.[6] | rows)}];'

# af_jq DESCRIPTION FILE JQ-FILTER [jq args]: the filter (af defined) must
# output true.
af_jq() {
	local desc=$1 file=$2 filter=$3 out
	shift 3
	if ! out=$(jq -e "$@" "$AF_DEFS $filter" "$file" 2>&1); then
		af_fail "$desc (jq said: $(echo "$out" | tr '\n' ' ' | cut -c1-300))"
	fi
}

for tool in jq "$STACKTREE"; do
	command -v "$tool" >/dev/null || { echo "FAIL $NAME: missing $tool" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/$NAME.XXXXXX) || exit 1
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT

# Entries breaking an invariant, as "function: which" strings. Thread roots
# ("[pid ...") have no PARENT rows; the CHILD invariant holds for them too.
INVARIANTS='
def s(f): (map(f) | add) // 0;
[ af[]
  | . as $e
  | (.function | startswith("[pid ")) as $root
  | [ (if $root then (if (.parents | length) == 0 then empty else "root has parents" end)
       else
         (if (.parents | s(.calls)) != $e.calls then "1 sum PARENT CALLS != CALLS" else empty end),
         (if (.parents | s(.base)) != $e.base then "2 sum PARENT BASE != BASE" else empty end),
         (if (.parents | map(select(.recursive | not)) | s(.cum)) != $e.cum
          then "3 sum PARENT CUM != CUM" else empty end),
         (if (.parents | s(.cum)) != $e.cum_all then "4 sum all PARENT CUM != CUM_ALL"
          else empty end)
       end),
      (if (.children | s(.cum)) != ($e.cum_all - $e.base)
       then "5 sum CHILD CUM != CUM_ALL - BASE" else empty end) ]
  | select(length > 0) | "\($e.function): \(join(", "))" ]'

check_invariants() {
	local file=$1 bad
	if ! bad=$(jq -r "$AF_DEFS $INVARIANTS | .[]" "$file" 2>&1); then
		af_fail "cannot check invariants of $file: $bad"
	elif [ -n "$bad" ]; then
		af_fail "arcflow invariants broken in $file: $(echo "$bad" | head -5 | tr '\n' ';')"
	fi
	af_jq "$file: no arcflow entries" "$file" '(.arcflow | length) > 0'
	# version 5's shape: entries of 7 numbers and row lists, rows of 5 numbers
	af_jq "$file: arcflow rows not [entry, calls, base, cum, 0|1]" "$file" \
		'(.arcflow | length) as $n
		 | all(.arcflow[]; length == 7 and (.[:5] | all(type == "number"))
		       and all(.[5][], .[6][]; length == 5 and all(.[]; type == "number")
			       and .[0] < $n and (.[4] == 0 or .[4] == 1)))'
}

# ---- 1. offline, folded input ------------------------------------------------
printf '%s\n' C 'C;A' 'C;A;B' 'C;A' 'C;A;B' 'C;A;B;B' 'C;A;B' 'C;A' C 'C;B' 'C;B;A' \
	'C;B;A;B' 'C;B;A;B;A' 'C;B;A;B' 'C;B;A' 'C;B;A;X' 'C;B;A' 'C;B' C > "$TMP/seed.folded"
if "$STACKTREE" report --folded "$TMP/seed.folded" -o "$TMP/seed" 2>"$TMP/seed.err"; then
	J=$TMP/seed/profile.json
	for f in xtree.txt arcflow.txt profile.json; do
		[ -s "$TMP/seed/$f" ] || af_fail "folded: $f missing or empty"
	done
	af_jq "folded: B's SELF row is 5 8 13 (CUM_ALL 17)" "$J" \
		'af[] | select(.function == "B") | [.calls, .base, .cum, .cum_all] == [5, 8, 13, 17]'
	af_jq "folded: B's PARENT rows" "$J" \
		'af[] | select(.function == "B") | [.parents[] | [.function, .recursive, .calls, .base, .cum]]
		 | sort == ([["A", false, 2, 3, 4], ["A", true, 1, 2, 3], ["B", true, 1, 1, 1], ["C", false, 1, 2, 9]] | sort)'
	af_jq "folded: A's rPARENT B 1 1 1" "$J" \
		'af[] | select(.function == "A") | any(.parents[]; . == {"function": "B", "calls": 1, "base": 1, "cum": 1, "recursive": true})'
	# the names straight from version 5's rows: an entry's function indexes .strings
	af_jq "folded: entries in CUM order" "$J" \
		'[.arcflow[][0] as $i | .strings[$i]] == ["[pid 0 tid 0 seed.folded]", "C", "A", "B", "X"]'
	grep -q '^rPARENT  *1  *1  *1 .* B \[3\]$' "$TMP/seed/arcflow.txt" ||
		af_fail "folded: arcflow.txt lacks the rPARENT B row"
	check_invariants "$J"
else
	af_fail "stacktree report --folded failed: $(cat "$TMP/seed.err")"
fi

printf 'main;work 3\nmain;;work 2\n' > "$TMP/bad.folded"
"$STACKTREE" report --folded "$TMP/bad.folded" -o "$TMP/bad" 2>"$TMP/bad.err"
rc=$?
[ "$rc" -ne 0 ] || af_fail "malformed folded input: exit status 0"
grep -q "bad.folded:2: empty frame 2" "$TMP/bad.err" ||
	af_fail "malformed folded input: message '$(cat "$TMP/bad.err")' does not name line 2"
[ "$(wc -l < "$TMP/bad.err")" -eq 1 ] || af_fail "malformed folded input: not one line on stderr"

# ---- 2. a real recursive program under stacktreed ----------------------------
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP $NAME: profiling needs root (offline part: $failures failures)" >&2
	[ "$failures" -eq 0 ] && exit 77
	exit 1
fi
for f in "$STACKTREED" "$WORKLOAD"; do
	[ -x "$f" ] || { af_fail "missing $f (make all $WORKLOAD)"; exit 1; }
done

OUT=$TMP/out OUT2=$TMP/out2
if ! "$STACKTREED" -F 999 -o "$OUT" -- "$WORKLOAD" >"$TMP/daemon.log" 2>&1; then
	af_fail "stacktreed failed: $(tail -5 "$TMP/daemon.log" | tr '\n' ' ')"
	exit 1
fi
J=$OUT/profile.json
[ -s "$J" ] || { af_fail "no $J"; exit 1; }

af_jq "at least 500 samples in ~2 s at 999 Hz" "$J" '.samples >= 500'
# recursive functions: rPARENT rows, CUM_ALL > CUM, ratio near the known depth
# (rec_self: levels 1..10, ratio 5.5; rec_ping/rec_pong: 8 levels, ratio 2.5)
for spec in rec_self:rec_self:4.5:6.5 rec_ping:rec_pong:2.0:3.0 rec_pong:rec_ping:1.8:3.0; do
	IFS=: read -r fn caller lo hi <<< "$spec"
	af_jq "$fn has an arcflow entry" "$J" 'any(af[]; .function == $f)' --arg f "$fn"
	af_jq "$fn has an rPARENT $caller row" "$J" \
		'af[] | select(.function == $f) | any(.parents[]; .recursive and .function == $c)' \
		--arg f "$fn" --arg c "$caller"
	af_jq "$fn: CUM_ALL > CUM" "$J" 'af[] | select(.function == $f) | .cum_all > .cum' \
		--arg f "$fn"
	af_jq "$fn: CUM_ALL / CUM in [$lo, $hi]" "$J" \
		'af[] | select(.function == $f) | (.cum_all / .cum) as $r | $r >= ($lo | tonumber) and $r <= ($hi | tonumber)' \
		--arg f "$fn" --arg lo "$lo" --arg hi "$hi"
done
af_jq "rec_self and rec_ping chains each take 30..70% of the samples" "$J" \
	'([af[] | select(.function | startswith("[pid ")) | .cum] | add) as $all
	 | [af[] | select(.function == "rec_self" or .function == "rec_ping") | .cum / $all]
	 | length == 2 and all(. >= 0.3 and . <= 0.7)'
grep -q '^rPARENT' "$OUT/arcflow.txt" 2>/dev/null || af_fail "$OUT/arcflow.txt has no rPARENT row"
check_invariants "$J"

# ---- re-render offline with merged threads -----------------------------------
if "$STACKTREE" report --input "$J" -o "$OUT2" --merge-threads 2>"$TMP/report.err"; then
	J2=$OUT2/profile.json
	s1=$(jq '.samples' "$J") s2=$(jq '.samples' "$J2")
	[ "$s1" = "$s2" ] || af_fail "re-rendered samples $s2 != $s1"
	t1=$(jq '[.threads[].samples] | add // 0' "$J") t2=$(jq '[.threads[].samples] | add // 0' "$J2")
	[ "$t1" = "$t2" ] || af_fail "re-rendered thread samples $t2 != $t1"
	af_jq "merged: tid == pid in every thread" "$J2" 'all(.threads[]; .tid == .pid)'
	af_jq "merged: root entries total the thread samples" "$J2" \
		'([af[] | select(.function | startswith("[pid ")) | .cum] | add) == ([.threads[].samples] | add)'
	for fn in rec_self rec_ping; do
		a=$(jq --arg f "$fn" "$AF_DEFS"' af[] | select(.function == $f) | [.cum, .cum_all, .base]' -c "$J")
		b=$(jq --arg f "$fn" "$AF_DEFS"' af[] | select(.function == $f) | [.cum, .cum_all, .base]' -c "$J2")
		[ "$a" = "$b" ] || af_fail "$fn: merged [cum,cum_all,base] $b != $a"
	done
	check_invariants "$J2"
else
	af_fail "stacktree report --input --merge-threads failed: $(cat "$TMP/report.err")"
fi

if [ "$failures" -ne 0 ]; then
	echo "$NAME: $failures failures" >&2
	exit 1
fi
echo "ok $NAME"
