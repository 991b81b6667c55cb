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
exit $fail
