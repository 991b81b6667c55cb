#!/usr/bin/env python3
"""bench/java_parts.py - where the BPF time of a Java sample goes: runs
Ledger's recursion (the bench's java row: bench/bench.py java_steady) under
`stacktreed --pid`, JIT and -Xint, with a bench build of the BPF object
(`make BPF_DEFS=-DST_JAVA_PARTS`: bpf/java.bpf.h's per-part timers), reads
the java_parts map with bpftool while it runs and prints the calls and
nanoseconds of each part (the HotSpot rule's frames, interpreted ones
among them, the method reports), less the timers' own cost, and where
the code blobs came from (the walk's memo, the cache, read). Root only.
Usage: bench/java_parts.py [jit|xint|native ...] (native: the deep
workload, the window reads alone; STACKTREED: the bench build's
stacktreed, default build/stacktreed)."""
import json
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import DEEP, STACKTREED, end_runs, ledger_jvm, until_sampling  # noqa: E402

SECONDS = 6
NPARTS = 24  # ST_JAVA_PART__MAX
PARTS = ["hs_calls", "hs_ns", "interp", "interp_ns", "report", "report_ns", "clock",
         "clock_ns", "memo_hit", "cache_hit", "blob_read", "memo_start", "win_fill", "win_fill_ns",
         "win_bytes", "walks", "walk_ns"]  # enum st_java_part


def parts_now():
    """The java_parts map summed over CPUs, or None."""
    p = subprocess.run(["bpftool", "map", "dump", "name", "java_parts", "-j"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None
    tot = [0] * NPARTS
    for e in json.loads(p.stdout):
        for c in e.get("values", []):
            vals = struct.unpack(f"<{NPARTS}Q", bytes(int(x, 16) for x in c["value"]))
            tot = [a + b for a, b in zip(tot, vals)]
    return dict(zip(PARTS, tot))


def run(mode):
    """One run (mode jit, xint, or native: the deep workload): the parts'
    totals and the summary's BPF ns per sample."""
    go = f"/tmp/java_parts.{os.getpid()}.go"
    if mode == "native":
        wl = subprocess.Popen([DEEP, str(SECONDS)], env=dict(os.environ, WL_START_FILE=go))
    else:
        wl = ledger_jvm(SECONDS, mode == "xint", go)
        if wl.stdout.readline().strip() != "ready":
            end_runs((wl,), go)
            return None, None
    st = None
    try:
        st = subprocess.Popen([STACKTREED, "-F", "999", "-o", go + ".d", "--pid", str(wl.pid)],
                              stderr=subprocess.PIPE, text=True)
        err = until_sampling(st)
        open(go, "w").close()
        time.sleep(SECONDS - 1)
        parts = parts_now()
        wl.communicate(timeout=120)
        err += st.communicate(timeout=120)[1]
    finally:
        end_runs((wl, st), go)
    ns = [ln for ln in err.splitlines() if "BPF run time" in ln]
    return parts, ns[0] if ns else "no BPF run time"


def main():
    for mode in sys.argv[1:] or ["jit", "xint"]:
        parts, ns = run(mode)
        if not parts:
            print(f"{mode}: no java_parts map (not a BPF_DEFS=-DST_JAVA_PARTS build?)")
            continue
        clock = parts["clock_ns"] / max(parts["clock"], 1) if parts["clock"] else 25
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
        walks = max(parts["walks"], 1)
        print(f"  walks {parts['walks']}, {parts['walk_ns'] / walks - clock:.0f} ns each: the "
              f"rule's frames {(parts['hs_ns'] - clock * hs) / walks:.0f} ns of it")
        fills = max(parts["win_fill"], 1)
        print(f"  stack window reads {parts['win_fill'] / max(parts['walks'], 1):.2f} a walk, "
              f"{parts['win_fill_ns'] / fills - clock:.0f} ns and "
              f"{parts['win_bytes'] / fills:.0f} bytes each")


if __name__ == "__main__":
    main()
