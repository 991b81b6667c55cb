#!/usr/bin/env python3
"""bench/java_parts.py - where the BPF time of a Java sample goes: runs
Ledger's recursion (the bench's java row: bench/bench.py java_steady) under
`stacktreed --pid`, JIT and -Xint, with a bench build of the BPF object
(`make BPF_DEFS=-DST_JAVA_PARTS`: bpf/java.bpf.h's per-part timers), reads
the java_parts map with bpftool while it runs and prints the calls and
nanoseconds of each part (the HotSpot rule's frames, interpreted ones
among them, the method reports), less the timers' own cost, and where
the code blobs came from (the walk's memo, the cache, read). Root only.
Usage: bench/java_parts.py [jit|xint ...] (STACKTREED: the bench build's
stacktreed, default build/stacktreed)."""
import json
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import STACKTREED, end_runs, ledger_jvm, until_sampling  # noqa: E402 (the java row's run)

SECONDS = 6
PARTS = ["hs_calls", "hs_ns", "interp", "interp_ns", "report", "report_ns", "clock",
         "clock_ns", "memo_hit", "cache_hit", "blob_read", "memo_start"]  # enum st_java_part


def parts_now():
    """The java_parts map summed over CPUs, or None."""
    p = subprocess.run(["bpftool", "map", "dump", "name", "java_parts", "-j"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None
    tot = [0] * 16
    for e in json.loads(p.stdout):
        for c in e.get("values", []):
            vals = struct.unpack("<16Q", bytes(int(x, 16) for x in c["value"]))
            tot = [a + b for a, b in zip(tot, vals)]
    return dict(zip(PARTS, tot))


def run(mode):
    """One run: the parts' totals and the summary's BPF ns per sample."""
    go = f"/tmp/java_parts.{os.getpid()}.go"
    jvm = ledger_jvm(SECONDS, mode == "xint", go)
    st = None
    try:
        if jvm.stdout.readline().strip() != "ready":
            return None, None
        st = subprocess.Popen([STACKTREED, "-F", "999", "-o", go + ".d", "--pid",
                               str(jvm.pid)], stderr=subprocess.PIPE, text=True)
        err = until_sampling(st)
        open(go, "w").close()
        time.sleep(SECONDS - 1)
        parts = parts_now()
        jvm.communicate(timeout=120)
        err += st.communicate(timeout=120)[1]
    finally:
        end_runs((jvm, st), go)
    ns = [ln for ln in err.splitlines() if "BPF run time" in ln]
    return parts, ns[0] if ns else "no BPF run time"


def main():
    for mode in sys.argv[1:] or ["jit", "xint"]:
        parts, ns = run(mode)
        if not parts:
            print(f"{mode}: no java_parts map (not a BPF_DEFS=-DST_JAVA_PARTS build?)")
            continue
        clock = parts["clock_ns"] / max(parts["clock"], 1)
        hs = parts["hs_calls"]
        interp = parts["interp"]
        blob = hs - interp
        print(f"{mode}: {ns.strip()}")
        print(f"  clock pair {clock:.0f} ns (subtracted below)")
        print(f"  rule frames {hs}: interpreted {interp}, "
              f"{parts['interp_ns'] / max(interp, 1) - clock:.0f} ns each; others (blobs) {blob}, "
              f"{(parts['hs_ns'] - parts['interp_ns']) / max(blob, 1) - clock:.0f} ns each")
        print(f"  blobs: from the walk's memo {parts['memo_hit']}, from the cache "
              f"{parts['cache_hit']}, read {parts['blob_read']}; walks with a memo "
              f"{parts['memo_start']}")
        print(f"  method reports (entries unlike the last) {parts['report']}, "
              f"{parts['report_ns'] / max(parts['report'], 1) - clock:.0f} ns each")


if __name__ == "__main__":
    main()
