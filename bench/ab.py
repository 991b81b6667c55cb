#!/usr/bin/env python3
"""bench/ab.py - two stacktreed builds on the same workload at the same
time: each attaches its own timers to the same process (--pid) and reports
its own programs' BPF run time per sample (the summary's kernel BPF stats
line), so both see the same stacks, the same load and the same caches in
the same seconds. Sequential rounds (bench/run.sh with STACKTREED_BASE)
move by 10-30% from one run to the next on the shared VM, more than most
changes; side by side the two figures move together.

The two sets of timers are not equal: on every tick one program runs
before the other, and the second finds the stack's lines warm. Measured
with one build against itself the daemon started first came out 10-15%
cheaper, so each round starts the other build first, and a pair of
rounds (one in each order) gives one figure, the geometric mean of its
two ratios. Prints each round, then per workload the pairs' median and
the median of each order's ratios (their gap is the order effect).

Usage: bench/ab.py NEW BASE [ROUNDS] [WORKLOADS]
  NEW, BASE   stacktreed binaries (this build, the one before a change)
  ROUNDS      rounds per workload, an even number (default 6)
  WORKLOADS   comma-separated, of: xint, jit (Ledger's recursion, as the
              bench's java row), xint_mix, jit_mix (its recursion, inlined
              loop, nested class and stream phases: many methods), native
              (deep), bench_cpu (default xint,native,jit)
  AB_ARGS     more stacktreed options for both (say "--unwind fp")
Root only; prints numbers, exits 0 whatever they are, 1 when a build or
a workload cannot run."""
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import DEEP, JAVA, JAVA_CLASSES, JAVA_DEPTH, WORKLOAD, end_runs  # noqa: E402

SECONDS = 6


def start(kind, go):
    """The workload, waiting for go; None when it could not start."""
    env = dict(os.environ, WL_START_FILE=go, WL_GO=go)
    if kind == "native":
        return subprocess.Popen([DEEP, str(SECONDS)], env=env)
    if kind == "bench_cpu":
        return subprocess.Popen([WORKLOAD], env=env)
    phases = "recurse=1,inline=0,matrix=0,stream=0,deflate=0,worker=0"
    if kind.endswith("_mix"):	# many methods, not one recursion
        phases = "recurse=1,inline=1,matrix=1,stream=1,deflate=0,worker=0"
    wl = subprocess.Popen([JAVA, "-Xmx128m"] + (["-Xint"] if kind.startswith("xint") else []) +
                          ["-cp", JAVA_CLASSES, "Ledger", str(SECONDS), phases,
                           str(JAVA_DEPTH)], env=env, stdout=subprocess.PIPE, text=True)
    if wl.stdout.readline().strip() != "ready":
        end_runs((wl,), go)
        return None
    return wl


def one_round(kind, builds, extra):
    """Both builds (in the order given) on one run of kind: {name: ns}
    (a build without a figure left out), or None when the workload did not
    start."""
    go = f"/tmp/ab.{os.getpid()}.go"
    wl = start(kind, go)
    if wl is None:
        return None
    sts = {}
    try:
        for name, binary in builds:
            p = subprocess.Popen([binary, "-F", "999"] + extra +
                                 ["-o", f"{go}.{name}.d", "--pid", str(wl.pid)],
                                 stderr=subprocess.PIPE, text=True)
            sts[name] = p
            for line in p.stderr:
                if "sampling at" in line:
                    break
        open(go, "w").close()
        wl.wait()
        out = {}
        for name, p in sts.items():
            err = p.stderr.read()
            p.wait()
            m = re.search(r"BPF run time (\d+) ns per sample", err)
            if m:
                out[name] = int(m.group(1))
        return out
    finally:
        end_runs([wl] + list(sts.values()), go)
        for name in ("new", "base"):
            shutil.rmtree(f"{go}.{name}.d", ignore_errors=True)


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else float("nan")


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    new, base = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    kinds = sys.argv[4].split(",") if len(sys.argv) > 4 else ["xint", "native", "jit"]
    extra = os.environ.get("AB_ARGS", "").split()
    for b in (new, base):
        if not os.access(b, os.X_OK):
            print(f"ab: {b} is no stacktreed binary to run", file=sys.stderr)
            return 1
    subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=1"], check=False)
    for kind in kinds:
        ratios = []	# (new first?, new / base)
        for r in range(rounds):
            order = [("new", new), ("base", base)]
            if r % 2:
                order.reverse()
            v = one_round(kind, order, extra)
            if v is None:
                print(f"ab: cannot start the {kind} workload (built? `make build-tests`)",
                      file=sys.stderr)
                return 1
            if "new" in v and "base" in v:
                ratios.append((r % 2 == 0, v["new"] / v["base"]))
                print(f"  {kind} round {r}: new {v['new']} ns, base {v['base']} ns "
                      f"({order[0][0]} started first): {v['new'] / v['base']:.3f}", flush=True)
            else:
                print(f"  {kind} round {r}: no figure from one of the builds", flush=True)
        pairs = [math.sqrt(a[1] * b[1]) for a, b in zip(ratios[0::2], ratios[1::2])
                 if a[0] != b[0]]
        print(f"{kind}: new / base {median(pairs):.3f} (pairs of rounds, one in each order: "
              f"{', '.join(f'{x:.3f}' for x in sorted(pairs))}); new started first "
              f"{median([x for f, x in ratios if f]):.3f}, base first "
              f"{median([x for f, x in ratios if not f]):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
