#!/usr/bin/env python3
"""churn.py - process churn under -a beside perf (issue 35 item 3): runs
test_shortlived's churn (ls, perl, python3.11, sh and a C workload started
at RATE a second, both CPUs busy) for SECONDS under stacktreed -a -F 999
and perf record -a -g on the same run, and prints each one's share of the
churn's samples with an [unknown] frame, where stacktreed's are, and the
daemon's counters of the mappings it kept and placed.
usage: sudo bench/churn.py [SECONDS [RATE [STACKTREED OPTIONS]]]  (build first: make build-tests)"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
import test_shortlived as ts  # noqa: E402

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10
rate = float(sys.argv[2]) if len(sys.argv) > 2 else ts.CHURN_RATE
args = sys.argv[3:]	# stacktreed's further options
os.environ.setdefault("ST_METRICS", "/dev/stderr")	# the run's and the stop's times
t0 = time.time()
[(prof, err)], data, pids = ts.churn_beside_perf(seconds, rate, daemons=(args,))
t1 = time.time()
total, unknown, where = ts.stacktreed_unknown(prof, pids)
ptotal, punknown, pby = ts.perf_unknown(data, pids)
started = len(pids) - 1
print("churn: %d processes started in %.0f s (%.0f/s); run %.0f s, perf script %.0f s"
      % (started, seconds, started / seconds, t1 - t0, time.time() - t1))
print("stacktreed: %d of %d samples with an [unknown] frame (%.2f%%)"
      % (unknown, total, 100.0 * unknown / max(total, 1)))
print("perf:       %d of %d samples with an [unknown] frame (%.2f%%)"
      % (punknown, ptotal, 100.0 * punknown / max(ptotal, 1)))
comms = {}
for t in prof["threads"]:
    if t["pid"] in pids:
        comms[t["comm"]] = comms.get(t["comm"], 0) + t["samples"]
print("stacktreed per comm:", comms)
print("perf's [unknown] by comm:", pby)
cut = {}
for t in prof["threads"]:
    if t["pid"] in pids:
        for c in t["root"]["children"]:
            if c["function"] == "[truncated]":
                cut[t["comm"]] = cut.get(t["comm"], 0) + c["cum"]
print("stacktreed's stacks cut short ([truncated]) by comm:", cut)
print("stacktreed's [unknown] samples, where (comm, the frame's place):")
for (comm, w), n in sorted(where.items(), key=lambda kv: -kv[1]):
    print("  %6d  %-12s %s" % (n, comm, w))
print("daemon's summary:")
for line in err.splitlines():
    if any(k in line for k in ("kept", "mapping", "deferred", "lost", "unknown", "exec",
                               "placed", "gone", "left out", "tables")):
        print("  " + line.strip())
