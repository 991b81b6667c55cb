#!/usr/bin/env bash
# `make demo`: profile the bundled demo workload and show its reports.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-stacktree.out/demo}
if [ "$(id -u)" -ne 0 ]; then
	echo "stacktreed loads BPF programs: run the demo as root (sudo make demo)" >&2
	exit 1
fi
echo "== build/stacktreed -F 499 -o $out -- build/workloads/demo"
build/stacktreed -F 499 -o "$out" -- build/workloads/demo
echo
echo "== top of $out/xtree.txt (BASE CUM %CUM CALLS, then the frame)"
sed -n '/^===/,$p' "$out/xtree.txt" | head -32
echo
echo "== top of $out/arcflow.txt"
awk '/^SOURCE/ {n++} n >= 1 && n <= 4' "$out/arcflow.txt" | head -40
echo
echo "full reports: $out/xtree.txt $out/arcflow.txt $out/profile.json"
