#!/usr/bin/env python3
"""spread.py - runs integration tests many times, idle or with the other
CPUs kept busy, and prints how often each passed and the spread of the
quantities the tests measure (stcheck.metric), so that each tolerance in
the suite comes from measured variance. Not a test: `make spread`.

  bench/spread.py [-n RUNS] [--load] TEST_NAME_SUBSTRING...
  make spread RUNS=10 [LOAD=1] [T="test_python_debian test_python_pid"]

Each run takes the integration lock for itself only, so that other users
of the machine can interleave their runs.
"""
import argparse
import collections
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "tests", "integration", "run.py")
# the lock tests/integration/run.sh (`make integration`) takes
LOCK = "/tmp/st-integration.lock"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20, help="runs (default 20)")
    ap.add_argument("--load", action="store_true",
                    help="keep all CPUs but one busy with spinning processes")
    ap.add_argument("tests", nargs="+")
    a = ap.parse_args()
    hogs = []
    if a.load:
        for _ in range(max(1, (os.cpu_count() or 2) - 1)):
            hogs.append(subprocess.Popen(["sh", "-c", "while :; do :; done"]))
    passed, failures = collections.Counter(), collections.defaultdict(list)
    metrics = collections.defaultdict(list)
    try:
        for i in range(a.n):
            fd, mpath = tempfile.mkstemp(prefix="st-metrics-")
            os.close(fd)
            env = dict(os.environ, ST_METRICS=mpath)
            p = subprocess.run(["flock", LOCK, sys.executable, RUNNER] + a.tests, env=env,
                               capture_output=True, text=True)
            for line in p.stdout.splitlines():
                m = re.match(r"(ok|FAIL) +(\S+?)(?::| \(|$)(.*)", line)
                if not m:
                    continue
                if m.group(1) == "ok":
                    passed[m.group(2)] += 1
                else:
                    failures[m.group(2)].append(m.group(3).strip()[:300])
                    print("run %d: %s" % (i + 1, line[:600]), file=sys.stderr, flush=True)
            with open(mpath) as f:
                for line in f:
                    name, value = line.rsplit(None, 1)
                    metrics[name].append(float(value))
            os.unlink(mpath)
            print("run %d/%d: %d failures" % (i + 1, a.n, sum(len(v) for v in failures.values())),
                  file=sys.stderr, flush=True)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    print("%d runs, %s" % (a.n, "other CPUs busy" if a.load else "idle"))
    for name in sorted(set(passed) | set(failures)):
        print("  %-60s %2d passed, %2d failed" % (name, passed[name], len(failures[name])))
        for msg in failures[name][:5]:
            print("      " + msg)
    for name in sorted(metrics):
        v = metrics[name]
        mean = sum(v) / len(v)
        sd = math.sqrt(sum((x - mean) ** 2 for x in v) / max(1, len(v) - 1))
        print("  %-50s n=%-3d min %-10.4g mean %-10.4g max %-10.4g sd %.3g"
              % (name, len(v), min(v), mean, max(v), sd))


if __name__ == "__main__":
    main()
