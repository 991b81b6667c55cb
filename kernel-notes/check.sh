#!/usr/bin/env bash
# Checks that the running kernel offers what stacktreed needs (see
# kernel-notes/README.md). Prints one line per requirement; exits non-zero
# if any is missing. Needs root and bpftool.
set -u
fail=0
say() { printf '%-4s %s\n' "$1" "$2"; [ "$1" = ok ] || fail=1; }

[ -r /sys/kernel/btf/vmlinux ] && say ok "BTF at /sys/kernel/btf/vmlinux (CO-RE, tp_btf)" \
	|| say MISS "BTF at /sys/kernel/btf/vmlinux: build the kernel with CONFIG_DEBUG_INFO_BTF=y"
probe=$(bpftool feature probe kernel 2>/dev/null)
if [ -z "$probe" ]; then
	say MISS "bpftool feature probe failed (run as root, install bpftool)"
	exit 1
fi
has() { grep -q -- "$1" <<<"$probe"; }
has "program_type perf_event is available" && say ok "perf_event BPF programs" \
	|| say MISS "perf_event BPF programs"
# tp_btf programs cannot be probed without an attach target: stacktreed
# attaches sched_process_fork/exec at start and says so if it cannot.
for m in hash array percpu_array lru_hash ringbuf task_storage; do
	has "map_type $m is available" && say ok "map type $m" || say MISS "map type $m"
done
# helpers available to perf_event programs (the probe lists them per type)
helpers=$(awk '/eBPF helpers supported for program type perf_event/ {on=1; next}
	       /eBPF helpers supported/ {on=0} on' <<<"$probe")
for h in bpf_get_stack bpf_loop bpf_task_storage_get bpf_get_current_task_btf \
	 bpf_ringbuf_reserve bpf_get_current_comm; do
	grep -q -- "- $h\$" <<<"$helpers" && say ok "helper $h in perf_event programs" \
		|| say MISS "helper $h in perf_event programs"
done
rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 0)
say ok "kernel.perf_event_max_sample_rate = $rate (upper bound for -F)"
stack=$(cat /proc/sys/kernel/perf_event_max_stack 2>/dev/null || echo 0)
[ "$stack" -ge 127 ] && say ok "kernel.perf_event_max_stack = $stack (>= 127 frames)" \
	|| say MISS "kernel.perf_event_max_stack = $stack: raise it to 127 for full stacks"
grep -q "cpu-clock" <(perf list sw 2>/dev/null) 2>/dev/null && say ok "software event cpu-clock" \
	|| say ok "software event cpu-clock (perf not installed; always present)"

# --force-faults (optional: a missing piece disables only that option; see
# kernel-notes/forced-faults.md). "--" lines do not fail the check.
opt() { printf '%-4s %s\n' "$1" "$2"; }
if [ -e /sys/class/zram-control/hot_add ] || modinfo zram >/dev/null 2>&1; then
	opt ok "zram (--force-faults: a swap device for the session)"
else
	opt -- "zram missing (CONFIG_ZRAM): --force-faults unavailable"
fi
[ -e /proc/swaps ] && opt ok "swap (CONFIG_SWAP)" || opt -- "no swap (CONFIG_SWAP off): --force-faults unavailable"
command -v mkswap >/dev/null && opt ok "mkswap (util-linux)" || opt -- "mkswap missing: install util-linux"
# process_madvise(2) (440 on x86-64) with no range: 0 where it exists
pm=$(python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(434, os.getpid(), 0)
print("ok" if fd >= 0 and libc.syscall(440, fd, None, 0, 21, 0) == 0 else
      os.strerror(ctypes.get_errno()))' 2>/dev/null)
[ "$pm" = ok ] && opt ok "process_madvise(MADV_PAGEOUT) (--force-faults)" \
	|| opt -- "process_madvise(MADV_PAGEOUT): ${pm:-no python3 to probe} (Linux 5.10): --force-faults unavailable"
# soft-dirty: a page this probe wrote has pagemap bit 55 set where it exists
sd=$(python3 -c 'import ctypes, mmap, struct
m = mmap.mmap(-1, 4096); m[0] = 1
a = ctypes.addressof(ctypes.c_char.from_buffer(m))
f = open("/proc/self/pagemap", "rb"); f.seek(a // 4096 * 8)
print(struct.unpack("<Q", f.read(8))[0] >> 55 & 1)' 2>/dev/null)
[ "$sd" = 1 ] && opt ok "soft-dirty bits (CONFIG_MEM_SOFT_DIRTY; not used by stacktreed)" \
	|| opt -- "soft-dirty unavailable (CONFIG_MEM_SOFT_DIRTY off): not used"
# exec in progress (optional, 6.10+): without it a /proc read in the middle of
# an exec may lend the new program's maps to the old image
bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "'btf_trace_sched_prepare_exec'" \
	&& opt ok "tracepoint sched_prepare_exec (exec in progress, 6.10)" \
	|| opt -- "tracepoint sched_prepare_exec missing (before 6.10): exec windows less exact"
opt ok "NUMA nodes: $(ls -d /sys/devices/system/node/node* 2>/dev/null | wc -l), kernel.numa_balancing = $(cat /proc/sys/kernel/numa_balancing 2>/dev/null || echo n/a) (hinting faults: not used)"
exit $fail
