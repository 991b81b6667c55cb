"""Integration tests of deep stacks (issue 35, item 2): merged stacks of up
to ST_MAX_USER (768) user frames walked whole in BPF, in every walker
(--unwind fp past the kernel's 127-frame walk, dwarf, auto) and every
sampling program (the timer's, the page-fault one, the off-CPU one), and
deeper ones cut under [truncated] and counted. Workloads: a C recursion
300 frames deep (tests/workloads/deeprec.c, -O2 with and without frame
pointers), 1,000 deep for the cut, and a Python recursion 150 levels deep
that goes through C (sorted()'s key) every fifth level (~500 merged
frames). Numbers checked: >= 99% of the samples inside the recursion
reach main (<module> for Python), with no [truncated] on their way; before
the limit was raised none did (127 frames)."""
import re

from stcheck import (check, check_invariants, load, main_thread, metric, nodes,
                     run_profiled, workload)

# Share of the recursion's samples that must be whole. Measured (10 runs,
# both CPUs busy): 100% in every C mode; Python 99.6-100% (a sample
# between the interpreter's push of a frame and its link is short).
MIN_WHOLE = 0.99
PY_SCRIPT = r"""
import sys, time
sys.setrecursionlimit(10000)
def level(n):
    if n == 0:
        end = time.thread_time() + 0.02
        while time.thread_time() < end:
            pass
        return 0
    if n % 5 == 0:   # through C: sorted() calls the key back
        return sorted([n], key=lambda x: level(x - 1))[0]
    return level(n - 1) + 1
end = time.thread_time() + 1.0
while time.thread_time() < end:
    level(150)
"""


def recursion_samples(t, inside, top, starts=None):
    """(samples whose path goes through a frame inside(name) says is in the
    recursion, those of them whose path also has a frame top(name) says is
    its top and no [truncated], the deepest such path). inside, top: a
    function name, or a predicate on one. starts: a dict, given the samples
    that are not whole by their path's start (its two outermost frames),
    for a failed check's message."""
    is_in = inside if callable(inside) else (lambda f: f == inside)
    is_top = top if callable(top) else (lambda f: f == top)
    total = whole = deepest = 0
    stack = [(t["root"], 0, False, False, False, ())]
    while stack:
        n, d, inrec, at_top, cut, start = stack.pop()
        f = n["function"] or ""
        inrec = inrec or is_in(f)
        at_top = at_top or is_top(f)
        cut = cut or f == "[truncated]"
        if n["base"] and inrec:
            total += n["base"]
            if at_top and not cut:
                whole += n["base"]
                deepest = max(deepest, d)
            elif starts is not None:
                starts[start] = starts.get(start, 0) + n["base"]
        stack.extend((c, d + 1, inrec, at_top, cut,
                      start if len(start) == 2 else start + (c["function"] or "?",))
                     for c in n["children"])
    return total, whole, deepest


def summary_count(err, label):
    m = re.search(re.escape(label) + r": (\d+)", err)
    return int(m.group(1)) if m else 0


def check_c(prog, mode, event="cpu", leaf="spin", depth=300, seconds=0.8):
    args = ["--unwind", mode, "-F", "499"] + (["--event", event] if event != "cpu" else [])
    out, err, _ = run_profiled(args + ["--", workload(prog), str(depth), str(seconds), leaf],
                               env_extra={"WL_SCALE": "1"})
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, prog)
    total, whole, deepest = recursion_samples(t, "deep_rec", "main")
    what = "%s --unwind %s --event %s" % (prog, mode, event)
    check(total > 0, "%s: no sample inside deep_rec" % what)
    metric("deep.%s.%s.%s.whole" % (prog, mode, event), whole / total)
    check(whole >= MIN_WHOLE * total, "%s: %d of %d (%.2f%%) samples in the %d-deep recursion "
          "reach main: %s" % (what, whole, total, 100.0 * whole / total, depth,
                              "; ".join(l for l in err.splitlines() if "trunc" in l)))
    check(deepest >= depth, "%s: the deepest whole path is %d frames" % (what, deepest))
    return prof, err


def test_deep_c_fp():
    """--unwind fp: the kernel walks 127 frames, BPF the rest."""
    check_c("deeprec_o2", "fp")


def test_deep_c_dwarf_auto():
    """-O2 without frame pointers, by CFI (dwarf; auto the same)."""
    check_c("deeprec_o2_nofp", "dwarf")
    check_c("deeprec_o2_nofp", "auto")


def test_deep_c_faults():
    """The page-fault program walks as deep."""
    check_c("deeprec_o2", "fp", event="faults", leaf="fault", seconds=0.4)
    check_c("deeprec_o2_nofp", "dwarf", event="faults", leaf="fault", seconds=0.4)


def test_deep_c_offcpu():
    """The off-CPU program walks as deep."""
    check_c("deeprec_o2", "fp", event="offcpu", leaf="sleep")
    check_c("deeprec_o2_nofp", "dwarf", event="offcpu", leaf="sleep")


def test_deep_c_over_the_limit_is_truncated():
    """1,000 frames: cut at 768 under [truncated], leaf side kept, counted."""
    for prog, mode in (("deeprec_o2", "fp"), ("deeprec_o2_nofp", "dwarf")):
        out, err, _ = run_profiled(["--unwind", mode, "-F", "499", "--", workload(prog),
                                    "1000", "1"])
        prof = load(out)
        t = main_thread(prof, prog)
        total, whole, _ = recursion_samples(t, "deep_rec", "main")
        cut = sum(c["cum"] for c in t["root"]["children"] if c["function"] == "[truncated]")
        counted = summary_count(err, "stacks truncated at 768 frames")
        # (a sample while the recursion is built or unwound is shallower
        # and reaches main: 1 of 499 in 3 runs of 3 on 2026-11-29, the
        # run's samples then unwound by the daemon; a path deeper than the
        # limit is what deepest below refuses)
        check(total > 0 and whole <= 0.01 * total,
              "%s %s: %d of %d samples reach main 1,000 frames up" % (prog, mode, whole, total))
        check(cut >= 0.95 * total and counted >= 0.95 * total,
              "%s %s: %d of %d samples under [truncated], %d counted: %s"
              % (prog, mode, cut, total, counted, err))
        deepest = max(d for _, d, _ in nodes(t["root"]))
        check(deepest <= 768 + 2, "%s %s: a path %d frames deep" % (prog, mode, deepest))


def test_deep_python_through_c():
    """150 Python levels, through sorted() every fifth: ~500 merged frames."""
    import os
    import tempfile
    d = tempfile.mkdtemp(prefix="st-it-deeppy-")
    script = os.path.join(d, "deep.py")
    with open(script, "w") as f:
        f.write(PY_SCRIPT)
    # "late": every sample deferred, unwound by the daemon from its copy of
    # the stack (as a process's first milliseconds are, before its tables
    # are in): 154 KiB deep at level 0, past the 128 KiB copied before,
    # so that every late sample was cut (and 30 of a run's ~500 in CI)
    for mode_name, mode, env in (("dwarf", "dwarf", None), ("auto", "auto", None),
                                 ("late", "dwarf", {"STACKTREED_TEST_DEFER": "all"})):
        out, err, _ = run_profiled(["--unwind", mode, "-F", "499", "--",
                                    "/usr/bin/python3.11", script], env_extra=env)
        prof = load(out)
        check_invariants(prof)
        t = main_thread(prof, "python3.11")
        total, whole, deepest = recursion_samples(t, "level", "<module>")
        metric("deep.python.%s.whole" % mode_name, whole / max(total, 1))
        # 1 s of the thread's CPU time in level() at 499 Hz: ~499 samples
        # (499 and 521 seen); 80% of them leaves 1% of the rest at >= 4
        check(total >= 400, "%s: %d samples in level(), of ~499" % (mode_name, total))
        check(whole >= MIN_WHOLE * total, "%s: %d of %d (%.2f%%) samples in the 150-level "
              "recursion reach <module>: %s" % (mode_name, whole, total, 100.0 * whole / total,
                                                "; ".join(l for l in err.splitlines()
                                                          if "trunc" in l or "cut" in l)))
        check(deepest >= 300, "%s: the deepest whole path is %d frames" % (mode_name, deepest))


def test_deep_java():
    """Ledger's recurse phase alone, 200 Java frames deep (Ledger.descend),
    as the JIT runs it (interpreted, then compiled): whole up to Ledger.main
    (the HotSpot walk shares the 768-frame budget; 127 cut it before).
    Measured: 100% of 109 samples (JIT), 100% of 120 with -Xint (left out:
    each run costs ~30 s of the suite's time)."""
    import os
    java = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
    classes = os.path.join(os.path.dirname(workload("x")), "java")
    for opts in ([],):
        out, err, _ = run_profiled(["-F", "499", "--", java] + opts + [
            "-Xmx64m", "-cp", classes, "Ledger", "2",
            "recurse=1,inline=0,matrix=0,stream=0,deflate=0,worker=0", "200"])
        prof = load(out)
        total = whole = deepest = 0
        starts = {}
        for t in prof["threads"]:
            n, w, d = recursion_samples(t, lambda f: "descend" in f,
                                        lambda f: f.startswith("Ledger.main"), starts)
            total, whole, deepest = total + n, whole + w, max(deepest, d)
        what = "java %s" % (" ".join(opts) or "(JIT)")
        metric("deep.java.%s.whole" % ("xint" if opts else "jit"), whole / max(total, 1))
        check(total >= 50, "%s: %d samples in Ledger.descend" % (what, total))
        if whole < 0.97 * total:
            # (where the others' paths start, and the summary's lines on
            # cut stacks, Java walks and late walks: once in a loaded CI
            # run of 2026-12-01, 226 of 240, 23 stacks cut short)
            check(False, "%s: %d of %d samples 200 Java frames deep reach Ledger.main; the "
                  "others start %s: %s" % (
                      what, whole, total, sorted(starts.items(), key=lambda kv: -kv[1])[:5],
                      "; ".join(l for l in err.splitlines()
                                if any(k in l for k in ("trunc", "cut short", "java", "late",
                                                        "deferred")))))
        check(deepest >= 200, "%s: the deepest whole path is %d frames" % (what, deepest))
