#!/usr/bin/env bash
# make soak: stacktreed -a at 999 Hz for SOAK_SECONDS (default 600; 0:
# skipped) while short-lived processes come and go; prints the daemon's RSS
# over time, its CPU use, and samples lost by reason. Then the churn soak
# (issue 23; `make soak SOAK_SECONDS=0 SOAK_CHURN_SECONDS=1800` runs only
# issue 34's 30 minutes at 300 processes a second):
# stacktreed -a --interval 2 while SOAK_CHURN (default 300; 0: skipped)
# processes a second start and exit for SOAK_CHURN_SECONDS (default 600);
# prints RSS every 30 s (all of it, and the daemon's own: less the BPF
# maps' pages, bounded by --unwind-memory and the deferred ring) and the
# own memory's slope after the first minute (KiB/min; a leak per process
# shows as a steady slope, flat is ~0). A benchmark, not
# a test: it reports (test_memory_flat_under_process_churn is the test).
set -u
cd "$(dirname "$0")/.."
secs=${SOAK_SECONDS:-600}
out=$(mktemp -d /tmp/st-soak-XXXXXX)
wl=build/workloads
[ "$(id -u)" -eq 0 ] || { echo "soak: run as root" >&2; exit 1; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$daemon/status"; }
if [ "$secs" -gt 0 ]; then

build/stacktreed -a -F 999 --interval 30 --keep 4 -o "$out/snap" 2>"$out/daemon.log" &
daemon=$!
sleep 1
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$daemon/stat"; }

start=$(date +%s)
t0_ticks=$(cpu_ticks)
spawned=0
next_report=0
echo "soak: ${secs}s, daemon pid $daemon, snapshots in $out/snap"
printf '%8s %10s %8s\n' "elapsed" "RSS(KiB)" "spawned"
while :; do
	now=$(( $(date +%s) - start ))
	[ "$now" -ge "$secs" ] && break
	# a few short-lived programs per second, some multi-threaded
	WL_SCALE=0.05 "$wl/threads" 2>/dev/null &
	p1=$!
	"$wl/shortlived" 0.1 &
	p2=$!
	sh -c 'for i in 1 2 3; do /bin/true; done' &
	p3=$!
	spawned=$((spawned + 5))
	wait "$p1" "$p2" "$p3"	# not the daemon
	if [ "$now" -ge "$next_report" ]; then
		printf '%8d %10d %8d\n' "$now" "$(rss_kib)" "$spawned" | tee -a "$out/rss.txt"
		next_report=$((now + 30))
	fi
	sleep 0.5
done
t1_ticks=$(cpu_ticks)
final_rss=$(rss_kib)
kill -INT "$daemon"
wait "$daemon"
elapsed=$(( $(date +%s) - start ))
python3 - "$out" "$elapsed" "$t0_ticks" "$t1_ticks" "$hz" "$spawned" "$final_rss" <<'PY'
import json, os, sys
out, elapsed, t0, t1, hz, spawned, final_rss = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
rss = [int(l.split()[1]) for l in open(os.path.join(out, "rss.txt"))]
warm = rss[len(rss) // 4:] if len(rss) >= 4 else rss
snapdir = os.path.join(out, "snap")
lost, samples = {}, 0
for n in sorted(os.listdir(snapdir)):
    p = os.path.join(snapdir, n, "profile.json")
    if n[0].isdigit() and os.path.exists(p):
        prof = json.load(open(p))
        samples += prof["samples"]
        for k, v in prof.get("lost_by", {}).items():
            if isinstance(v, dict):     # profile.json version 2: {id: {value, text}}
                k, v = v["text"], v["value"]
            lost[k] = lost.get(k, 0) + v
cpu_s = (t1 - t0) / hz
print()
print("soak: %d s, %d processes spawned" % (elapsed, spawned))
print("soak: daemon RSS after warm-up: min %d KiB, max %d KiB (growth %d KiB); at the end %d KiB"
      % (min(warm), max(warm), max(warm) - min(warm), final_rss))
print("soak: daemon CPU %.2f s = %.2f%% of one core (target < 1%%)" % (cpu_s, 100.0 * cpu_s / elapsed))
print("soak: samples in the kept snapshots: %d; lost by reason: %s" % (samples, lost or "none"))
full = sum(v for k, v in lost.items() if "full" in k)
print("soak: samples lost to a full map: %d" % full)
PY
fi

churn=${SOAK_CHURN:-300}
csecs=${SOAK_CHURN_SECONDS:-600}
[ "$churn" -gt 0 ] || exit 0
cout=$(mktemp -d /tmp/st-soak-churn-XXXXXX)
build/stacktreed -a --interval 2 --keep 3 -o "$cout/snap" 2>"$cout/daemon.log" &
daemon=$!
sleep 1.5
"$wl/churn" "$churn" "$csecs" >"$cout/started" &
ch=$!
echo
echo "soak churn: ${csecs}s of $churn processes/s under -a --interval 2, daemon pid $daemon"
printf '%8s %10s %10s\n' "elapsed" "RSS(KiB)" "own(KiB)"
own_kib() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { bpf = ($6 ~ /^anon_inode:bpf-map/) }
	     /^Rss:/ { if (!bpf) own += $2 } END { print own }' "/proc/$daemon/smaps"
}
start=$(date +%s)
: >"$cout/rss.txt"
while kill -0 "$ch" 2>/dev/null; do
	sleep 10
	now=$(( $(date +%s) - start ))
	r=$(rss_kib)
	o=$(own_kib)
	echo "$now $o $r" >>"$cout/rss.txt"
	[ $((now % 30)) -lt 10 ] && printf '%8d %10d %10d\n' "$now" "$r" "$o"
done
wait "$ch"
kill -INT "$daemon"
wait "$daemon"
python3 - "$cout" <<'PY'
import os, sys
pts = [tuple(map(int, l.split()[:2])) for l in open(os.path.join(sys.argv[1], "rss.txt"))]
started = open(os.path.join(sys.argv[1], "started")).read().strip() or "?"
warm = [(t, r) for t, r in pts if t >= 60] or pts
n = len(warm)
mt = sum(t for t, _ in warm) / n
mr = sum(r for _, r in warm) / n
var = sum((t - mt) ** 2 for t, _ in warm)
slope = sum((t - mt) * (r - mr) for t, r in warm) / var * 60 if var else 0.0
print("soak churn: %s processes started; own RSS after 1 min %d KiB, at the end %d KiB (%+.1f%%)"
      % (started, warm[0][1], warm[-1][1], 100.0 * (warm[-1][1] - warm[0][1]) / warm[0][1]))
print("soak churn: own RSS slope after the first minute: %+.0f KiB/min (%+.2f MiB/min)"
      % (slope, slope / 1024))
PY
rm -rf "$cout"
