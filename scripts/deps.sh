#!/usr/bin/env bash
# Installs the Debian 12 packages stacktreed needs; idempotent (does nothing
# when everything is there).
# Usage: scripts/deps.sh [build|test] [--list]
#   build  building and running stacktreed: `make`, `make demo`
#   test   that and everything the test suite, fuzzing and benchmarks use:
#          `make test`, .ci/run (the default)
#   --list print the packages of the set instead of installing them
set -euo pipefail

# Building and running: only these (`make demo` on a fresh machine).
build_pkgs=(make gcc clang pkg-config bpftool
      libbpf-dev libelf-dev libdw-dev zlib1g-dev libjson-c-dev	# the daemon's libraries
      protobuf-c-compiler libprotobuf-c-dev	# pprof output (profile.proto)
      libiberty-dev	# the demangler (binutils' own)
      libssl-dev	# TLS for the live endpoint (--listen-tls-cert)
      libdebuginfod-dev	# debuginfod client header (the library is dlopen()ed)
      util-linux kmod)	# mkswap, modprobe zram (--force-faults)

# The tests, fuzzing and benchmarks: add a test's package here, with what
# needs it.
test_pkgs=(llvm libcmocka-dev elfutils binutils linux-perf python3 jq
      python3.11 python3.11-dbg
      golang-go libxml2-utils
      libclang-rt-14-dev	# libFuzzer and the sanitizer runtimes for clang (make fuzz)
      g++	# a C++ compiler to profile (fixtures, test_demangle, test_inline)
      debuginfod	# a server for the tests
      libc6-dbg	# libc6-dbg: names for libc's internal functions (.symtab)
      sqlite3	# a real database program to profile (test_real_programs.py)
      ffmpeg	# a real encoder with libx264's assembly to profile (test_real_programs.py)
      bpftrace	# a peer profiler the tests compare with (test_peers.py)
      lld-14	# lld: its layouts (file offset != address; test_loadmap, test_layouts.py)
      prometheus	# scrapes the live endpoint's /metrics (test_endpoint.py)
      chromium	# headless: speedscope reads stacks.folded (test_outputs.py)
      tmux	# a terminal for stacktreed top (test_top.py)
      openssl curl	# a certificate and a TLS client for the endpoint (test_endpoint.py)
      python3-jsonschema	# validates every profile.json against schema/ (stcheck.py)
      openjdk-17-jdk-headless	# javac and a HotSpot JVM: the Java workloads and tests (test_java*.py)
      ant	# a real Java program to profile (test_java_accuracy.py)
      nodejs)	# a real JIT writing /tmp/perf-PID.map (--perf-basic-prof, test_jit.py)

set_=test list=
for a in "$@"; do
	case $a in
	build | test) set_=$a ;;
	--list) list=1 ;;
	*) echo "usage: scripts/deps.sh [build|test] [--list]" >&2; exit 64 ;;
	esac
done
pkgs=("${build_pkgs[@]}")
[ "$set_" = test ] && pkgs+=("${test_pkgs[@]}")
if [ -n "$list" ]; then
	printf '%s\n' "${pkgs[@]}"
	exit 0
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
# npm installs speedscope into build/npm (test_outputs.py); Debian's nodejs
# comes without it, NodeSource's nodejs has it built in
[ "$set_" = test ] && ! command -v npm >/dev/null && missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "stacktreed: missing packages: ${missing[*]}; run as root: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "stacktreed: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# apt-get, waiting up to 10 minutes for another apt-get or dpkg at work
# (unattended upgrades, a second terminal) rather than failing at once:
# DPkg::Lock::Timeout covers dpkg's lock, the loop the lists' lock that
# `apt-get update` takes (apt 2.6 fails on it at once)
apt_wait() {
	local err end=$((SECONDS + 600))

	err=$(mktemp)
	until apt-get -o DPkg::Lock::Timeout=600 "$@" 2>"$err"; do
		if ! grep -q 'Could not get lock' "$err" || [ "$SECONDS" -ge "$end" ]; then
			cat "$err" >&2
			rm -f "$err"
			return 1
		fi
		[ -n "${said:-}" ] || echo "stacktreed: waiting for another apt-get or dpkg to finish" >&2
		said=1
		sleep 3
	done
	rm -f "$err"
}
apt_wait update -qq
apt_wait install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
