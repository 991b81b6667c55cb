#!/usr/bin/env bash
# run.sh MODE SECONDS FUZZER... - runs libFuzzer targets built by the Makefile.
#   fuzz:    each target for SECONDS, from its seed corpus tests/fuzz/corpus/NAME/
#            (new inputs go to build-fuzz/corpus/NAME, crashers to build-fuzz/artifacts/),
#            as many targets at once as there are CPUs (FUZZ_JOBS overrides):
#            each is one process on one CPU, so the time is SECONDS x targets / CPUs;
#   regress: each target once over every committed input of its corpus.
# Prints one line per target, in the order given, and a closing
# "fuzz: N passed, N failed" line.
set -u
mode=$1 secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
jobs=${FUZZ_JOBS:-$(nproc)}
[ "$mode" = regress ] && jobs=1
# libFuzzer's own limits: 2 GiB of memory, 20 s per input (one that takes
# longer is a finding: the daemon parses these files as root)
limits="-rss_limit_mb=2048 -timeout=20"

# one target: its log in build-fuzz/NAME.log, its result line in NAME.result
# (first word ok or FAIL)
one() {
	local bin=$1 name seeds fb log rc what execs rate
	name=$(basename "$bin")
	seeds=$here/corpus/${name#fuzz_}
	fb=$(dirname "$bin")
	log=$fb/$name.log
	if [ ! -d "$seeds" ] || [ -z "$(ls -A "$seeds")" ]; then
		echo "FAIL $name: no seed corpus in $seeds" >"$fb/$name.result"; return
	fi
	if [ "$mode" = regress ]; then
		"$bin" $limits -runs=1 "$seeds"/* >"$log" 2>&1
		rc=$?
		what="$(ls "$seeds" | wc -l) corpus inputs"
	else
		mkdir -p "$fb/corpus/$name" "$fb/artifacts"
		ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64} \
		"$bin" $limits -max_total_time="$secs" -print_final_stats=1 \
			-artifact_prefix="$fb/artifacts/$name-" "$fb/corpus/$name" "$seeds" >"$log" 2>&1
		rc=$?
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
		what="${execs:-?} executions in ${secs} s (${rate:-?}/s)"
	fi
	if [ $rc -eq 0 ]; then
		echo "ok   $name: $what" >"$fb/$name.result"
	else
		{ echo "FAIL $name (exit $rc): $what; log $log"
		  grep -A 30 -E '^(==[0-9]+==ERROR|.*runtime error|SUMMARY)' "$log" | head -n 60 | sed 's/^/    /'
		} >"$fb/$name.result"
	fi
}

for bin in "$@"; do
	rm -f "$(dirname "$bin")/$(basename "$bin").result"
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	one "$bin" &
done
wait
pass=0 fail=0
for bin in "$@"; do
	r=$(dirname "$bin")/$(basename "$bin").result
	if [ -s "$r" ] && [ "$(head -c 2 "$r")" = ok ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		[ -s "$r" ] || echo "FAIL $(basename "$bin"): no result" >"$r"
	fi
	cat "$r"
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
