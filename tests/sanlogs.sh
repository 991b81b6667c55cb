#!/usr/bin/env bash
# sanlogs.sh - under `make test SANITIZE=1`, every ASan/UBSan/LSan report is
# also written under $ST_SANITIZER_LOGS (see the Makefile): print them all and
# fail when there is any, so that a report from a process whose exit status a
# test expects to be non-zero is not lost. Without SANITIZE it does nothing.
set -u
dir=${ST_SANITIZER_LOGS:-}
[ -n "$dir" ] && [ -d "$dir" ] || exit 0
logs=$(find "$dir" -type f -size +0 | sort)
[ -z "$logs" ] && { echo "sanitizers: no reports"; exit 0; }
for f in $logs; do
	echo "== sanitizer report $f"
	cat "$f"
done
echo "sanitizers: $(echo "$logs" | wc -l) reports"
exit 1
