#!/usr/bin/env bash
# run.sh MODE SECONDS FUZZER... - runs libFuzzer targets built by the Makefile.
#   fuzz:    each target for SECONDS, from its seed corpus tests/fuzz/corpus/NAME/
#            (new inputs go to build-fuzz/corpus/NAME, crashers to build-fuzz/artifacts/);
#   regress: each target once over every committed input of its corpus.
# Prints one line per target and a closing "fuzz: N passed, N failed" line.
set -u
mode=$1 secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0
# libFuzzer's own limits: 2 GiB of memory, 20 s per input (one that takes
# longer is a finding: the daemon parses these files as root)
limits="-rss_limit_mb=2048 -timeout=20"
for bin in "$@"; do
	name=$(basename "$bin")
	seeds=$here/corpus/${name#fuzz_}
	if [ ! -d "$seeds" ] || [ -z "$(ls -A "$seeds")" ]; then
		echo "FAIL $name: no seed corpus in $seeds"; fail=$((fail + 1)); continue
	fi
	fb=$(dirname "$bin")
	log=$fb/$name.log
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
		pass=$((pass + 1)); echo "ok   $name: $what"
	else
		fail=$((fail + 1)); echo "FAIL $name (exit $rc): $what; log $log"
		grep -A 30 -E '^(==[0-9]+==ERROR|.*runtime error|SUMMARY)' "$log" | head -n 60 | sed 's/^/    /'
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
