#!/usr/bin/env bash
# bench/run.sh - `make bench`: stacktreed's overhead on a CPU-bound program
# with deep stacks, next to `perf record -g` and a bare BPF stack walk, and
# its DWARF unwinding next to `perf record --call-graph dwarf`, in one
# run, after the start-up of a whole `stacktreed -- true` next to
# `perf record -g -- true` (`bench/run.sh startup`: only that), and the RSS of
# a default `stacktreed -a` (`bench/run.sh rss`: only that); then real compilers (gcc and clang-14 -O2 on a generated C file: the
# cost per sample on cc1 and on clang-14 with libLLVM, the compile's slowdown
# and bytes written, next to perf's DWARF mode), and the BPF run time per
# sample on a Python workload with and without Python frames
# (`bench/run.sh python`: only that), a context-switch storm under
# --event offcpu next to bpftrace's sched_switch script (`bench/run.sh
# storm`: only that), and the BPF time per sample of a Java thread
# against a native stack of the same depth (`bench/run.sh java`: only
# that; 7 rounds of JIT, native, -Xint back to back, the median of the
# rounds' ratios with their spread, STACKTREED_BASE's build in the same
# rounds; the Java thread's own samples (Ledger's main thread, by the tid
# it prints: STACKTREED_BENCH_PARTS_TID) beside the whole JVM's, and the
# native workload's one thread, by --pid, timed from the filter's pass to the fold's end
# by bpf/parts.bpf.h's clock, STACKTREED_BENCH_PARTS, read with bpftool
# while the daemon runs; not the summary's BPF run time, which divides
# the CPU's whole BPF time by its samples, other processes' filtered
# ones included, and so moves with the machine's load), and the bytes of a system-wide build profile next to perf.data's
# (`bench/run.sh bytes`: only that), and the BPF time per sample of --unwind fp
# over the bare walk and of 100 processes over 2, by part (`bench/run.sh walk`:
# only that). Prints numbers; exits 0 whatever they are (benchmarks are not tests),
# non-zero only if something could not run. See bench/bench.py for the knobs
# (BENCH_STARTUP_ROUNDS, STACKTREED_BASE, BENCH_RSS_ROUNDS, BENCH_RSS_SECONDS, BENCH_ROUNDS, BENCH_ITERS, BENCH_COPIES, BENCH_FREQ, BENCH_OUT, STACKTREED,
# BENCH_DWARF, BENCH_CC_ROUNDS, BENCH_CC_FUNCS, BENCH_COMPILERS, BENCH_PY_ROUNDS,
# BENCH_STORM_ROUNDS, BENCH_STORM_TRIPS, BENCH_JAVA_ROUNDS, BENCH_JAVA_BUSY, BENCH_BYTES_JOBS,
# BENCH_WALK_ROUNDS, BENCH_WALK_ITERS, BENCH_WALK_LOADS).
set -u
cd "$(dirname "$0")/.." || exit 1
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: stacktreed and perf -a need root: run it as root (sudo make bench)" >&2
	exit 1
fi
if ! command -v python3 >/dev/null; then
	echo "bench: python3 is needed" >&2
	exit 1
fi
for f in "${STACKTREED:-build/stacktreed}" build/workloads/bench_cpu build/workloads/switchstorm; do
	if [ ! -x "$f" ]; then
		echo "bench: $f is missing: run 'make all build/workloads/bench_cpu' (or 'make bench')" >&2
		exit 1
	fi
done
if ! command -v perf >/dev/null || ! perf --version >/dev/null 2>&1; then
	echo "bench: perf is not installed (Debian: apt-get install linux-perf, or" \
	     "scripts/deps.sh): skipping the perf comparison" >&2
fi
exec python3 bench/bench.py "$@"
