#!/usr/bin/env bash
# Installs what stacktreed needs to build, test and benchmark (Debian 12).
# Idempotent: does nothing when everything is there.
set -euo pipefail
pkgs=(make gcc clang llvm pkg-config bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev
      libjson-c-dev libcmocka-dev elfutils binutils linux-perf python3 jq
      python3.11 python3.11-dbg
      protobuf-c-compiler libprotobuf-c-dev golang-go libxml2-utils
      libclang-rt-14-dev	# libFuzzer and the sanitizer runtimes for clang (make fuzz)
      libiberty-dev g++	# the demangler (binutils' own); a C++ compiler to profile
      libdebuginfod-dev debuginfod	# debuginfod client (dlopen()ed); a server for the tests
      util-linux kmod	# mkswap, modprobe zram (--force-faults)
      libc6-dbg	# libc6-dbg: names for libc's internal functions (.symtab)
      sqlite3	# a real database program to profile (test_real_programs.py)
      bpftrace	# a peer profiler the tests compare with (test_peers.py)
      lld-14	# lld: its layouts (file offset != address; test_loadmap, test_layouts.py)
      prometheus	# scrapes the live endpoint's /metrics (test_endpoint.py)
      chromium	# headless: speedscope reads stacks.folded (test_outputs.py)
      python3-jsonschema	# validates every profile.json against schema/ (stcheck.py)
      nodejs)	# a real JIT writing /tmp/perf-PID.map (--perf-basic-prof, test_jit.py)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
# npm installs speedscope into build/npm (test_outputs.py); Debian's nodejs
# comes without it, NodeSource's nodejs has it built in
command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "stacktreed: missing packages: ${missing[*]}; run as root: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "stacktreed: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
