#!/usr/bin/env bash
# make soak: stacktreed -a at 999 Hz for SOAK_SECONDS (default 600) while
# short-lived processes come and go; prints the daemon's RSS over time, its
# CPU use, and samples lost by reason. A benchmark, not a test: it reports.
set -u
cd "$(dirname "$0")/.."
secs=${SOAK_SECONDS:-600}
out=$(mktemp -d /tmp/st-soak-XXXXXX)
wl=build/workloads
[ "$(id -u)" -eq 0 ] || { echo "soak: run as root" >&2; exit 1; }

build/stacktreed -a -F 999 --interval 30 --keep 4 -o "$out/snap" 2>"$out/daemon.log" &
daemon=$!
sleep 1
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$daemon/stat"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$daemon/status"; }

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
