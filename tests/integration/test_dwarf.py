"""Integration tests of DWARF unwinding (--unwind dwarf|auto, issue 4): real
BPF unwinding of workloads built without frame pointers (nofp + libnofp.so +
a dlopen()ed libnofpdl.so), of a frame-pointer program whose time is in
libc's qsort (no frame pointers) calling back a comparator, and of the same
program without any CFI (auto mixes frame pointers and CFI). The numbers are
checked: >= 99% of the samples reach main, each phase's share of samples
matches its real CPU time within 2 points, and per-function shares agree
with `perf record --call-graph dwarf` run on the same execution (within
sampling noise, see test_perf_dwarf_agrees)."""
import math
import os
import re
import shutil
import subprocess
import tempfile

from stcheck import (check, check_cut_short_reasons, check_invariants, check_stacks_end_at_roots,
                     function_calls, function_cum, function_nodes, load, main_thread, metric,
                     nodes, perf_stacks, pid_beside_perf, run_profiled, workload,
                     STACKTREED)

# Percentage points. Measured spread of phase shares against CPU time
# (bench/spread.py, 10 runs idle, 10 with the other CPU busy): at most 0.92
# idle / 1.04 loaded; against perf on the same run at most 0.79 / 0.74.
TOL = 2.0
NOFP_PHASES = ("phase_exe", "phase_recurse", "phase_lib", "phase_callback", "phase_plt",
               "phase_aligned", "phase_signal", "phase_vdso", "phase_dlopen")
NOFP_FUNCS = NOFP_PHASES + ("main", "exe_outer", "exe_mid", "exe_leaf", "recurse",
                            "recurse_leaf", "lib_outer", "lib_inner", "lib_leaf", "lib_apply",
                            "exe_callback", "lib_tiny", "aligned_outer", "aligned_work", "on_usr1",
                            "handler_work", "dl_work", "dl_leaf")
QSORT_FUNCS = ("main", "phase_sort", "compare", "mix", "phase_scan", "scan")


def user_samples(t):
    """Samples of a thread that have user frames (not the [kernel] pseudo frame)."""
    return t["samples"] - sum(c["cum"] for c in t["root"]["children"]
                              if c["function"] == "[kernel]")


def summary_count(err, label):
    m = re.search(re.escape(label) + r": (\d+)", err)
    return int(m.group(1)) if m else 0


def unwind_notes(err):
    """The summary's unwinding lines, for failure messages."""
    return "; ".join(line[len("stacktreed: "):] for line in err.splitlines()
                     if "unwind" in line or "truncated" in line)


def check_main_and_phases(t, rep, phases, what, err, min_main=0.99):
    """>= 99% of user samples under main; phase shares vs CPU time."""
    total = user_samples(t)
    under_main = function_cum(t["root"], "main")
    metric("%s.main_share" % what.replace(" --unwind ", "."), under_main / total)
    check(total > 1000, "%s: too few samples: %d" % (what, total))
    check(under_main >= min_main * total, "%s: %d of %d user samples (%.2f%%) reach main (%s)"
          % (what, under_main, total, 100.0 * under_main / total, unwind_notes(err)))
    cpu = rep["phases"]
    check(set(phases) <= set(cpu), "%s: workload reported %s" % (what, sorted(cpu)))
    all_cpu = sum(cpu[p] for p in phases)
    for ph in phases:
        share = 100.0 * function_cum(t["root"], ph) / t["samples"]
        real = 100.0 * cpu[ph] / all_cpu
        metric("%s.%s.diff_pts" % (what.replace(" --unwind ", "."), ph), share - real)
        check(abs(share - real) <= TOL, "%s: %s has %.2f%% of samples, %.2f%% of CPU time"
              % (what, ph, share, real))


def nm_symbols(binary):
    """{function: address (low 12 bits are the load address's too)}"""
    p = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                       check=True)
    return {f[2]: int(f[0], 16) for f in (l.split() for l in p.stdout.splitlines())
            if len(f) == 3 and f[1] in "tT"}


def parents_of(t):
    """{id(node): its parent} over thread t's tree."""
    return {id(n): p for n, _, p in nodes(t["root"])}


def chain_ok(t, leaf, chain):
    """At least 99% of the samples in `leaf` have the callers in `chain`
    (nearest first) above them, in that order."""
    parents = parents_of(t)
    found = good = 0
    for n, _, _ in nodes(t["root"]):
        if n["function"] != leaf:
            continue
        found += n["cum"]
        want = list(chain)
        p = parents[id(n)]
        while p is not None and want:
            if p["function"] == want[0]:
                want.pop(0)
            p = parents.get(id(p))
        good += 0 if want else n["cum"]
    return found > 0 and good >= 0.99 * found, "%d of %d samples in %s have the callers %s" % (
        good, found, leaf, list(chain))


def under(t, pred, fn):
    """(samples of the outermost nodes matching pred, those with fn above)."""
    parents = parents_of(t)
    total = above = 0
    for n, _, _ in nodes(t["root"]):
        p = parents[id(n)]
        if not pred(n) or (p is not None and pred(p)):
            continue
        total += n["cum"]
        while p is not None and p["function"] != fn:
            p = parents.get(id(p))
        above += n["cum"] if p is not None else 0
    return total, above


def leaves_under(t, fn, n=6):
    """The n commonest leaf frames (function, else module and address) of
    the samples under fn's nodes, with their samples: what a chain check
    that found no leaf saw instead."""
    parents, got = parents_of(t), {}
    for node, _, _ in nodes(t["root"]):
        if not node["base"]:
            continue
        p = node
        while p is not None and p["function"] != fn:
            p = parents.get(id(p))
        if p is None:
            continue
        # (an unnamed frame's address is a "0x..." string in profile.json)
        where = node.get("offset") or node.get("address") or 0
        label = node["function"] or "%s+%s" % (os.path.basename(node["module"] or "?"),
                                               where if isinstance(where, str) else hex(where))
        got[label] = got.get(label, 0) + node["base"]
    return sorted(got.items(), key=lambda kv: -kv[1])[:n]


def run_nofp(mode, env=None):
    out, err, rep = run_profiled(["--unwind", mode, "-F", "999", "--", workload("nofp")],
                                 env_extra=env)
    prof = load(out)
    check_invariants(prof)
    check_stacks_end_at_roots(prof, {"nofp"})
    return prof, err, rep


def check_nofp(mode):
    prof, err, rep = run_nofp(mode)
    t = main_thread(prof, "nofp")
    check_main_and_phases(t, rep, NOFP_PHASES, "nofp --unwind " + mode, err)
    for leaf, chain in (
            ("exe_leaf", ("exe_mid", "exe_outer", "phase_exe", "main")),
            ("recurse_leaf", ("recurse",) * 41 + ("phase_recurse", "main")),
            ("lib_leaf", ("lib_inner", "lib_outer", "phase_lib", "main")),
            ("exe_callback", ("lib_apply", "phase_callback", "main")),
            ("lib_tiny", ("phase_plt", "main")),
            # the DRAP frame restores rbp from [rbp]: aligned_outer's CFA needs it
            ("aligned_work", ("aligned_outer", "phase_aligned", "main")),
            # through the signal frame (glibc's __restore_rt) into raise()
            ("handler_work", ("on_usr1", "raise", "phase_signal", "main")),
            ("dl_leaf", ("dl_work", "phase_dlopen", "main"))):
        if leaf == "lib_tiny" and function_cum(t["root"], leaf) < 20:
            # this VM's timer puts the PLT loop's samples on phase_plt's own
            # instructions in some runs (perf record -e cpu-clock does the
            # same: 3 runs in 8 with under 1% in lib_tiny): no chain to check
            metric("nofp.lib_tiny_skewed", 1)
            continue
        ok, why = chain_ok(t, leaf, chain)
        # (what its phase's samples ended in instead, and the summary's
        # unwinding and maps lines: once under load, no dl_leaf at all)
        if not ok:
            check(False, "nofp --unwind %s: %s; under %s: %s; %s" % (
                mode, why, chain[-2], leaves_under(t, chain[-2]), unwind_notes(err)))
    mods = {n["function"]: n["module"] for n, _, _ in nodes(t["root"]) if n["function"]}
    check(mods["lib_leaf"].endswith("/libnofp.so") and mods["dl_leaf"].endswith("/libnofpdl.so"),
          "library frames in %s, %s" % (mods["lib_leaf"], mods["dl_leaf"]))
    # the vDSO (its CFI is read from the daemon's own copy)
    vdso, vdso_main = under(t, lambda n: n["module"] == "[vdso]", "main")
    check(vdso > 100 and vdso_main >= 0.99 * vdso,
          "vDSO: %d samples in [vdso], %d of them under main" % (vdso, vdso_main))
    # nothing unsupported on the way but ld.so's lazy-binding resolver as a
    # caller (a sample in _dl_fixup, which it calls on a library's first
    # calls after dlopen)
    resolver = sum(c["cum"] for c in resolver_stops(t))
    check(summary_count(err, "unwind stopped: unsupported CFI") <= resolver, err)
    m = re.search(r"unwind tables: (\d+) modules, (\d+) rows compiled", err)
    check(m and int(m.group(1)) >= 6 and int(m.group(2)) > 1000,
          "no unwind tables line (or too few modules): %s" % err)
    return t


def resolver_stops(t):
    """The stacks of thread t cut at ld.so's lazy-binding resolver (the
    outermost frame under [truncated]): its CFA is rbx-based, so a sample
    below a frame that kept rbx where its rule cannot say stops there,
    counted as unsupported CFI (kernel-notes/unwinding.md, "rbx through the
    frames"; test_lazy_binding_resolver_unwinds)."""
    return [c for r in t["root"]["children"] if r["function"] == "[truncated]"
            for c in r["children"]
            if (c["function"] or "").startswith("_dl_runtime_resolve") and c["base"] == 0]


def test_dwarf_nofp_reaches_main():
    check_nofp("dwarf")


def test_auto_nofp_reaches_main():
    check_nofp("auto")


def test_fp_mode_loses_the_callers():
    """The workload really has no frame pointers: fp mode cannot reach main."""
    out, _, _ = run_profiled(["--unwind", "fp", "-F", "499", "--", workload("nofp")],
                             env_extra={"WL_SCALE": "0.3"})
    t = main_thread(load(out), "nofp")
    share = function_cum(t["root"], "main") / t["samples"]
    check(share < 0.5, "fp mode reached main in %.0f%% of samples" % (100 * share))


def check_qsort(mode, prog="qsort", mix_callers=("compare", "phase_sort", "main"),
                min_main=0.99):
    out, err, rep = run_profiled(["--unwind", mode, "-F", "999", "--", workload(prog)])
    prof = load(out)
    check_invariants(prof)
    check_stacks_end_at_roots(prof, {prog})
    t = main_thread(prof, prog)
    check_main_and_phases(t, rep, ("phase_sort", "phase_scan"), "%s --unwind %s" % (prog, mode),
                          err, min_main)
    ok, why = chain_ok(t, "mix", mix_callers)
    check(ok, "%s --unwind %s: %s" % (prog, mode, why))
    if prog == "qsort":	# with CFI, the comparator's caller is always libc's sort
        under_qsort = sum(n["cum"] for n, p in function_nodes(t["root"], "compare")
                          if p["module"] and p["module"].endswith("libc.so.6"))
        check(under_qsort >= 0.99 * function_cum(t["root"], "compare"),
              "compare called from libc in %d samples only" % under_qsort)
    return t, err


def test_qsort_comparator_reaches_main():
    for mode in ("dwarf", "auto"):
        check_qsort(mode)
    # frame pointers alone lose main below libc's qsort
    out, _, _ = run_profiled(["--unwind", "fp", "-F", "499", "--", workload("qsort")],
                             env_extra={"WL_SCALE": "0.3"})
    t = main_thread(load(out), "qsort")
    cmp_total, cmp_main = under(t, lambda n: n["function"] in ("compare", "mix"), "main")
    check(cmp_total > 50 and cmp_main < 0.5 * cmp_total,
          "fp: %d of %d samples in the comparator reach main" % (cmp_main, cmp_total))


def fp_blind_spots(binary):
    """{function: instruction offsets where its frame pointer is not yet or
    no longer its own}: from the entry up to `mov %rsp,%rbp`, and the `ret`
    after `pop %rbp` or `leave`. A frame-pointer walk whose leaf is there
    skips or loses the caller, whatever the unwinder does."""
    p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True,
                       text=True, check=True)
    spots, fn, start, insns = {}, None, 0, []

    def close():
        if fn and any("push   %rbp" in i for _, i in insns):
            offs = set()
            for off, ins in insns:
                offs.add(off)
                if "mov    %rsp,%rbp" in ins:
                    break
            for k, (off, ins) in enumerate(insns):
                if ("pop    %rbp" in ins or ins.strip() == "leave") and k + 1 < len(insns):
                    offs.add(insns[k + 1][0])
            spots[fn] = offs
    for line in p.stdout.splitlines():
        m = re.match(r"([0-9a-f]+) <([^>]+)>:$", line)
        if m:
            close()
            fn, start, insns = m.group(2), int(m.group(1), 16), []
            continue
        m = re.match(r"\s+([0-9a-f]+):\s+(.*)$", line)
        if m and fn:
            insns.append((int(m.group(1), 16) - start, m.group(2)))
    close()
    return spots


def test_auto_mixes_frame_pointers_and_cfi():
    """qsort_nocfi has frame pointers and no CFI, libc the opposite: auto
    walks each frame with what its module has. mix, a leaf without a frame
    of its own, hides its caller from frame pointers: compare is not
    expected above it. A sample in compare's prologue or epilogue (rbp not
    yet or no longer its frame's) breaks the frame-pointer step, and how many
    samples land on those few instructions varies from run to run (0.7% to
    4% measured): so every stack that does not reach main must be one of
    those (or cut at ld.so's lazy-binding resolver, a counted stop), and
    they count as phase_sort's (the only caller of compare) when the
    phases' shares are checked against their CPU time."""
    binary = workload("qsort_nocfi")
    out, err, rep = run_profiled(["--unwind", "auto", "-F", "999", "--", binary])
    prof = load(out)
    check_invariants(prof)
    check_stacks_end_at_roots(prof, {"qsort_nocfi"})
    t = main_thread(prof, "qsort_nocfi")
    check(summary_count(err, "unwind: frames walked by frame pointers") > 1000,
          "auto walked no frames by frame pointers: %s" % err)
    ok, why = chain_ok(t, "mix", ("phase_sort", "main"))
    check(ok, "qsort_nocfi --unwind auto: " + why)
    # compare's caller is qsort's code in libc, or none (a blind spot, cut):
    # never a frame of its own module further up (a scan that passed over
    # libc's call once took _start's for it)
    wrong = [(p["function"], n["cum"]) for n, _, p in nodes(t["root"])
             if n["function"] == "compare" and p["function"] != "[truncated]" and
             "libc" not in (p.get("module") or "")]
    check(not wrong, "qsort_nocfi --unwind auto: compare called by %s" % wrong)
    spots, syms = fp_blind_spots(binary), nm_symbols(binary)
    blind = 0
    # the known stop at ld.so's lazy-binding resolver (main's first fopen:
    # a sample in _dl_fixup, 2 runs of 7 on 2026-11-28)
    stops = resolver_stops(t)
    check(summary_count(err, "unwind stopped: unsupported CFI") <= sum(c["cum"] for c in stops),
          err)
    stop_ids = {id(c) for c in stops}
    for top in t["root"]["children"]:
        # main's, and the dynamic loader's own complete stacks (the
        # command is sampled from its exec on), and a sample in the
        # program's own _start before it calls into libc (seen once)
        if function_cum(top, "main") or "/ld-linux" in (top.get("module") or "") or \
                (top["function"] == "_start" and not top["children"]):
            continue
        # (a top with a resolver stop under it has children: not a leaf)
        rest = [c for c in top["children"] if id(c) not in stop_ids]
        heads = rest if len(rest) < len(top["children"]) else [top]
        for n, _, _ in (x for h in heads for x in nodes(h)):
            if n["children"] or not n["base"]:
                continue
            # a sample in the dynamic loader at the command's start, cut
            # short (once in a full suite's run, 2026-11-29: the command
            # now starts before the end-maps programs load; its stop is
            # counted by reason, check_invariants)
            if "/ld-linux" in (n["module"] or ""):
                continue
            fn = n["function"]
            off = (int(n["address"], 16) - syms.get(fn, 0)) & 0xfff
            check(n["module"] == binary and off in spots.get(fn, ()),
                  "a stack not reaching main has the leaf %s+%#x [%s], not in a frame-pointer"
                  " blind spot (%s)" % (fn, off, n["module"], sorted(spots.get(fn, ()))))
            blind += n["base"]
    metric("auto_mix.blind_share", blind / t["samples"])
    # measured: 0.5% to 3.7% of the samples, idle and loaded
    check(blind <= 0.1 * t["samples"], "%d of %d samples in frame-pointer blind spots"
          % (blind, t["samples"]))
    cpu = rep["phases"]
    for ph, extra in (("phase_sort", blind), ("phase_scan", 0)):
        share = 100.0 * (function_cum(t["root"], ph) + extra) / t["samples"]
        real = 100.0 * cpu[ph] / (cpu["phase_sort"] + cpu["phase_scan"])
        metric("auto_mix.%s.diff_pts" % ph, share - real)
        check(abs(share - real) <= TOL, "qsort_nocfi --unwind auto: %s has %.2f%% of samples"
              " (with the blind spots), %.2f%% of CPU time" % (ph, share, real))
    out, err, _ = run_profiled(["--unwind", "dwarf", "-F", "499", "--",
                                workload("qsort_nocfi")], env_extra={"WL_SCALE": "0.3"})
    t = main_thread(load(out), "qsort_nocfi")
    stopped = summary_count(err, "unwind stopped: no CFI")
    check(stopped >= 0.9 * t["samples"], "dwarf: %d of %d walks stopped for lack of CFI"
          % (stopped, t["samples"]))
    # not partial: a sample without any user frame ([kernel]), and a walk
    # that needed no CFI-less frame (in exit(), from libc up to crt1's _start,
    # whose CFI the linker keeps)
    check(all(c["function"] in ("[truncated]", "[kernel]", "_start")
              for c in t["root"]["children"]),
          "dwarf without CFI: partial stacks must have a [truncated] root: %s"
          % [(c["function"], c["cum"]) for c in t["root"]["children"]])
    check_cut_short_reasons(load(out))


def run_held_to_exit(name, min_samples, env):
    """Workload name under --unwind auto, every sample deferred and held
    until its process's exit (STACKTREED_TEST_DEFER=all, _HOLD: tests
    only), env added: (its main thread, the thread's user samples, the
    summary), all of its samples checked to be unwound late."""
    out, err, _ = run_profiled(["--unwind", "auto", "-F", "999", "--", workload(name)],
                               env_extra=dict({"STACKTREED_TEST_DEFER": "all",
                                               "STACKTREED_TEST_DEFER_HOLD": "1"}, **env))
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, name)
    total = user_samples(t)
    late = summary_count(err, "unwind: samples unwound late in the daemon")
    check(total > min_samples and late >= t["samples"], "%s: %d samples, %d unwound late: %s"
          % (name, t["samples"], late, unwind_notes(err)))
    return t, total, err


def test_auto_walks_code_without_cfi_after_exit():
    """Issue 37: a deferred sample walked after its process exited (its
    last ones always are; under load, when the daemon is behind, all of a
    short command's) needs the code before the return addresses of its
    frames without CFI (qsort_nocfi's, in a module with some CFI: the
    checked frame-pointer step and scan read it). It was read from the
    process's memory, gone by then: under load 1 run in 4-6 of
    test_auto_mixes_frame_pointers_and_cfi had stacks cut at wl_report or
    clock_gettime. Here every sample is deferred (STACKTREED_TEST_DEFER=all)
    and held until its process's exit (STACKTREED_TEST_DEFER_HOLD, tests
    only): every walk comes after the exit, idle or not. The code is read
    from the mapped files (and the daemon's vDSO): the stacks reach main
    but in compare's and scan's frame-pointer blind spots (0.5-4% of the
    samples, test_auto_mixes_frame_pointers_and_cfi). Measured: the old
    reader cut all of them (555 of 555 samples not under main, 555 scans
    without a caller); the file reader 2 of 543."""
    t, total, err = run_held_to_exit("qsort_nocfi", 200, {"WL_SCALE": "0.3"})
    under_main = function_cum(t["root"], "main")
    metric("auto_after_exit.main_share", under_main / total)
    check(under_main >= 0.9 * total, "%d of %d samples walked after the exit reach main (%s)"
          % (under_main, total, unwind_notes(err)))
    failed = summary_count(err, "unwind: stack scans through code without CFI that found no "
                           "checked caller")
    check(failed <= 0.1 * total, "%d of %d scans found no caller" % (failed, total))
    m = re.search(r"unwind code reads: (\d+) from files, (\d+) from process memory, (\d+) "
                  r"failed", err)
    check(m and int(m.group(1)) > total and int(m.group(3)) == 0,
          "code reads: %s" % (m.group(0) if m else unwind_notes(err)))


def test_exit_keeps_the_table_for_samples_still_in_the_ring():
    """A process's deferred samples still in the kernel's ring when its
    exit is handled (the daemon's inbox full: its read of the ring stops at
    the bound, ST_DEFER_MEMORY) are walked with its table: the table is kept
    until the ring's reader has passed them (user/collect/unwind/deferred.c,
    close_later()). Here every sample is deferred and held until the exit
    (STACKTREED_TEST_DEFER=all, _HOLD), the inbox bound is 256 KiB
    (STACKTREED_TEST_DEFER_MEMORY, tests only) and the mappings BPF keeps at
    a process's end are off (STACKTREED_TEST_NO_EXEC_MAPS: the table cannot
    be read again from them, as a JVM's 200 mappings cannot). Before, the
    table was dropped at once: 906 of 906 samples cut at qsort's first frame
    without frame pointers ("no tables for the process yet"); in CI a
    launched JVM's early samples, 84 of 863 (1 run in 5-10 of
    test_startup_java_launched_on_early_object)."""
    t, total, err = run_held_to_exit("qsort", 300, {"WL_SCALE": "0.5",
                                                   "STACKTREED_TEST_DEFER_MEMORY": str(256 << 10),
                                                   "STACKTREED_TEST_NO_EXEC_MAPS": "1"})
    no_table = summary_count(err, "unwind: no tables for the process yet")
    check(no_table == 0, "%d samples walked without their process's table (%s)"
          % (no_table, unwind_notes(err)))
    under_main = function_cum(t["root"], "main")
    check(under_main >= 0.99 * total, "%d of %d samples walked after the exit reach main (%s)"
          % (under_main, total, unwind_notes(err)))


def test_auto_asm_leaf_without_cfi_is_truncated():
    """An assembly function without CFI that uses rbp as a counter (0 while
    it runs: no frame pointer to follow), called from C: under --unwind
    auto the daemon's checked scan (user/collect/unwind/unwind_native.h,
    st_unw_scan()) may only find its caller, phase_asm, after the call
    instruction that reaches it (counted: "frames without CFI whose caller
    a checked stack scan found"), never an outer one; a sample it cannot
    place is under [truncated] and counted ("unwind stopped: no CFI"), never a
    lone leaf under the thread as if complete (issue 20); the C phase
    reaches main."""
    out, err, rep = run_profiled(["--unwind", "auto", "-F", "999", "--", workload("asmleaf")])
    prof = load(out)
    check_invariants(prof)
    check_cut_short_reasons(prof)
    check_stacks_end_at_roots(prof, {"asmleaf"})
    t = main_thread(prof, "asmleaf")
    in_asm = function_cum(t["root"], "asm_spin")
    trunc = sum(c["cum"] for c in t["root"]["children"] if c["function"] == "[truncated]")
    placed, cut, other = 0, 0, []
    for n, p in function_nodes(t["root"], "asm_spin"):
        if p is not None and p["function"] == "[truncated]":
            cut += n["cum"]
        elif p is not None and p["function"] == "phase_asm":
            placed += n["cum"]
        else:
            other.append((p and p["function"], n["cum"]))
    cpu = rep["phases"]
    check(in_asm >= 0.5 * cpu["phase_asm"] * 999, "%d samples in asm_spin for %.2f s"
          % (in_asm, cpu["phase_asm"]))
    # its caller, or cut short: nothing else above it
    check(not other, "asm_spin under other callers than phase_asm: %s" % other[:5])
    # (asm_spin zeroes rbp, which phase_asm's caller's frame needs: the
    # walk from phase_asm's return address does not hold up, so the scan
    # stops there, cut, rather than take _start's call further up)
    check(placed + cut >= 0.99 * in_asm, "%d of %d samples in asm_spin placed under "
          "phase_asm, %d cut (%s)" % (placed, in_asm, cut, unwind_notes(err)))
    check(summary_count(err, "frames without CFI whose caller a checked stack scan found")
          >= placed, "summary counts fewer scanned frames than %d placed: %s"
          % (placed, unwind_notes(err)))
    check(summary_count(err, "unwind stopped: no CFI") >= cut,
          "summary counts %d stopped walks, %d under [truncated]: %s"
          % (summary_count(err, "unwind stopped: no CFI"), cut, unwind_notes(err)))
    check(trunc == prof["notes"]["stacks cut short ([truncated] root), all reasons"],
          "%d [truncated], summary %s" % (trunc, prof["notes"]))
    c_spin = function_cum(t["root"], "c_spin")
    check(c_spin >= 0.5 * cpu["phase_c"] * 999 and
          sum(n["cum"] for n, _ in function_nodes(t["root"], "c_spin")) == c_spin and
          function_cum(t["root"], "main") >= c_spin,
          "c_spin: %d samples, must all reach main" % c_spin)


def test_stack_garbage_with_bit_63_is_no_frame():
    """An assembly leaf without CFI whose rbp points at words of 0xeb bytes
    (bit 63 set, as x264's pixel data left under ffmpeg): in every unwind
    mode the frame-pointer step reads 0xebebebebebebebeb as a return
    address. No frame may come of it: none above user space, no Python
    frame (bit 63 is the merge's tag for one; issue 35, item 1, where
    ffmpeg showed `[python code]` above x264's trellis); the samples are
    under [truncated], counted as bad frames where a walk reads it, but in
    auto mode, where the daemon's checked scan passes over the garbage to
    the caller; the C phase reaches main. Walked in BPF (the full program
    in before the launch) in every mode, and by the daemon (dwarf: the
    early program's samples, all of a 1 s run here, walked late, the last
    ones after the exit with the mappings BPF kept at its end; before
    those were used, the table read from an exiting process was empty and
    cut 15-27 of ~400 c_spin samples "no CFI")."""
    for mode, late in (("fp", "launch"), ("auto", "launch"), ("dwarf", "launch"),
                       ("dwarf", "")):
        out, err, rep = run_profiled(["--unwind", mode, "-F", "999", "--",
                                      workload("garbage")],
                                     env_extra={"STACKTREED_TEST_LATE": late} if late else {})
        mode += " (late)" if not late else ""
        prof = load(out)
        check_invariants(prof)
        check_cut_short_reasons(prof)
        t = main_thread(prof, "garbage")
        bad = [(n["function"], n["address"]) for n, _, _ in nodes(t["root"])
               if n["kind"] == "python" or
               (n["address"] and int(n["address"], 16) >= 1 << 47)]
        check(not bad, "%s: frames of stack garbage: %s" % (mode, bad[:5]))
        in_spin = function_cum(t["root"], "garbage_spin")
        cpu = rep["phases"]
        check(in_spin >= 0.5 * cpu["phase_garbage"] * 999, "%s: %d samples in garbage_spin "
              "for %.2f s" % (mode, in_spin, cpu["phase_garbage"]))
        cut = sum(n["cum"] for n, p in function_nodes(t["root"], "garbage_spin")
                  if p is not None and p["function"] == "[truncated]")
        if mode == "auto":
            # the daemon's checked scan passes over the garbage to the
            # return address into phase_garbage (issue 35, item 4)
            placed = sum(n["cum"] for n, p in function_nodes(t["root"], "garbage_spin")
                         if p is not None and p["function"] == "phase_garbage")
            check(cut + placed >= 0.99 * in_spin,
                  "auto: %d of %d samples in garbage_spin under phase_garbage, %d under "
                  "[truncated]" % (placed, in_spin, cut))
        else:
            check(cut >= 0.99 * in_spin, "%s: %d of %d samples in garbage_spin under "
                  "[truncated]" % (mode, cut, in_spin))
        if mode == "fp":	# dwarf stops at the leaf without CFI, before the garbage
            check(summary_count(err, "unwind stopped: bad frame") >= 0.95 * cut,
                  "%s: %d bad frames counted, %d samples cut: %s"
                  % (mode, summary_count(err, "unwind stopped: bad frame"), cut,
                     unwind_notes(err)))
        c_spin = function_cum(t["root"], "c_spin")
        check(c_spin >= 0.5 * cpu["phase_c"] * 999 and function_cum(t["root"], "main") >= c_spin,
              "%s: c_spin: %d samples, must all reach main" % (mode, c_spin))


def test_depth_limit_truncates():
    prof, err, _ = run_nofp("dwarf", {"WL_DEPTH": "1000", "WL_SCALE": "0.3"})
    t = main_thread(prof, "nofp")
    deep = function_cum(t["root"], "recurse_leaf")
    trunc = sum(c["cum"] for c in t["root"]["children"] if c["function"] == "[truncated]")
    check(deep > 50 and trunc >= deep, "%d samples in recurse_leaf, %d truncated" % (deep, trunc))
    check(summary_count(err, "stacks truncated at 768 frames") >= deep, err)
    check_cut_short_reasons(prof)
    # the cut samples between complete ones are no new calls of main or of
    # the phases around them (bpf/fold.bpf.h, fold_sample()): before, the
    # first complete sample after the recursion's cut ones (phase_lib's)
    # counted main again; phase_recurse is in cut samples only, whose
    # frames count no call. main may still have a second call from another
    # source: 1 run in 12 had one at a later phase's call site (a short
    # stack, not cut, still becomes the path compared with: docs/reports.md)
    for fn in ("phase_exe", "phase_lib", "phase_callback"):
        check(function_calls(t["root"], fn) == 1, "%s CALLS %d != 1"
              % (fn, function_calls(t["root"], fn)))
    check(function_calls(t["root"], "main") <= 2, "main CALLS %d"
          % function_calls(t["root"], "main"))
    metric("depth_limit.main_calls", function_calls(t["root"], "main"))
    for n, _, _ in nodes(t["root"]):
        if n["function"] == "main" and any(c["function"] == "phase_lib" for c in n["children"]):
            check(n["calls"] == 0, "main counted again where phase_lib follows the cut "
                  "samples: %d" % n["calls"])
    for c in t["root"]["children"]:
        if c["function"] == "[truncated]":	# frames, not the inline nodes in them
            depth = max(frames for _, frames in frame_depths(c))
            check(depth == 768, "truncated stack of %d frames" % depth)


def frame_depths(top):
    """(node, frames from top) below top, inlined functions not counted as
    frames (a frame's inline chain is several nodes)."""
    stack = [(top, 0)]
    while stack:
        n, d = stack.pop()
        yield n, d
        for c in n["children"]:
            stack.append((c, d + (c.get("kind") != "inline")))


# ---- against perf record --call-graph dwarf -------------------------------

# perf and stacktreed profile the same run of the workload: perf runs it
# (perf unwinds through signal frames only in a process it saw start), it
# waits for a start file, stacktreed --pid attaches and says it samples, then
# the work starts. Both see the same execution, so where a function's share
# depends on the run (compare and mix, lib_tiny and its PLT stub alternate
# many times between samples, and where a timer interrupt lands varies from
# run to run by several points) it is the same for both. Left: sampling
# noise, binomial for a share p of n samples; a share agrees when the
# difference is within 4.5 standard deviations of the difference of two such
# estimates, and never under 2 points is asked. The two sample at different
# rates so that their timers cannot lock together.
PERF_FREQ = "2999"
OUR_FREQ = "1999"


def perf_shares(data, comm, funcs):
    """Per-function inclusive shares (%) of the main thread's samples under
    main in a perf.data file, and the number of those samples."""
    counts, total = dict.fromkeys(funcs, 0), 0
    for seen in perf_stacks(data, comm):
        total += 1
        for f in funcs:
            counts[f] += f in seen
    check(total > 1000, "perf: only %d samples of %s" % (total, comm))
    return {f: 100.0 * counts[f] / total for f in funcs}, total


def agreement_tolerance(p1, n1, p2, n2):
    """Points by which two share estimates (in %) of n1 and n2 samples may
    differ: 4.5 standard deviations of their difference, at least TOL."""
    q1, q2 = p1 / 100.0, p2 / 100.0
    sd = math.sqrt(q1 * (1 - q1) / n1 + q2 * (1 - q2) / n2)
    return max(TOL, 100.0 * 4.5 * sd)


def profile_with_perf(prog, scale, tmp):
    """(our main thread, our stderr, perf's shares function, perf samples)"""
    data, out, go = (os.path.join(tmp, n) for n in ("perf.data", "st", "go"))
    env = dict(os.environ, WL_SCALE=scale, WL_REPORT=os.path.join(tmp, "wl.txt"),
               WL_START_FILE=go)
    err = pid_beside_perf(["perf", "record", "-q", "-e", "cpu-clock", "-F", PERF_FREQ,
                           "--call-graph", "dwarf", "-o", data, "--", workload(prog)], prog, go,
                          ["-o", out, "--unwind", "dwarf", "-F", OUR_FREQ], env=env)
    prof = load(out)
    check_stacks_end_at_roots(prof, {prog})
    return main_thread(prof, prog), err, data


def test_perf_dwarf_agrees():
    if not shutil.which("perf"):
        raise AssertionError("perf is not installed (scripts/deps.sh installs linux-perf)")
    for prog, funcs, scale in (("nofp", NOFP_FUNCS, "1"), ("qsort", QSORT_FUNCS, "2")):
        tmp = tempfile.mkdtemp(prefix="st-perf-")
        try:
            t, err, data = profile_with_perf(prog, scale, tmp)
            theirs, n_theirs = perf_shares(data, prog, funcs)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        n_ours = function_cum(t["root"], "main")
        check(n_ours >= 0.99 * t["samples"], "%s: %d of %d samples under main (%s)"
              % (prog, n_ours, t["samples"], unwind_notes(err)))
        for f in funcs:
            ours = 100.0 * function_cum(t["root"], f) / n_ours
            tol = agreement_tolerance(ours, n_ours, theirs[f], n_theirs)
            metric("perf_dwarf.%s.%s.diff_pts" % (prog, f), ours - theirs[f])
            check(abs(ours - theirs[f]) <= tol, "%s: %s %.2f%% of %d samples here, %.2f%% of %d"
                  " in perf, tolerance %.2f (%s)" % (prog, f, ours, n_ours, theirs[f],
                                                     n_theirs, tol, unwind_notes(err)))


def test_unwind_option_errors():
    p = subprocess.run([STACKTREED, "--unwind", "lbr", "-a"], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode != 0 and "invalid --unwind 'lbr'" in p.stderr,
          "--unwind lbr: %s" % p.stderr)


def resolver_reach(t):
    """(samples with ld.so's lazy-binding resolver on their stack, those of
    them whose walk stopped at the resolver (its node right under
    [truncated]), those whose leaf is below the resolver)."""
    total = cut = below = 0
    stack = [(t["root"], None)]
    while stack:
        n, parent = stack.pop()
        if (n["function"] or "").startswith("_dl_runtime_resolve"):
            total += n["cum"]
            cut += n["cum"] if parent["function"] == "[truncated]" else 0
            below += n["cum"] - n["base"]
            continue
        for c in n["children"]:
            stack.append((c, n))
    return total, cut, below


def test_lazy_binding_resolver_unwinds():
    """ld.so's lazy-binding resolver (_dl_runtime_resolve_xsavec) keeps
    its CFA in rbx (issue 35, item 5): a sample in it or below it
    (_dl_fixup, the symbol lookup: the callee-saved rbx restored from the
    frames that saved it) unwinds past it. lazybind makes it hot: 4096
    first calls through a -z lazy PLT per dlopen() (45% of its samples
    under the resolver, more than half of them below it, perf measured).
    Before the rule, 308 of 586 such samples stopped at the resolver (all
    those below it); now none (measured: 0 of 639, 0 of 664). Some stop
    above it, at lazy_run: a sample right after a dlopen(), before the
    daemon put the library's new mapping in the process's table ("no
    CFI", as for any library just mapped), not counted here."""
    # (an empty LD_BIND_NOW is lazy binding, as unset)
    out, err, _ = run_profiled(["--unwind", "dwarf", "-F", "999", "--",
                                workload("lazybind"), "1.5"], env_extra={"LD_BIND_NOW": ""})
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, "lazybind")
    total, cut, below = resolver_reach(t)
    metric("lazybind.cut_at_resolver", cut / max(total, 1))
    check(total >= 100 and below >= 30,
          "only %d samples with the resolver on the stack (%d below it): the workload did not "
          "make it hot" % (total, below))
    # the summary's reasons for the stops and what the walks were (the
    # tail of it is memory lines): a failure under load seen once in 14
    # runs (docs/testing.md) said nothing of why
    why = [l for l in err.splitlines() if any(w in l for w in (
        "stopped", "cut short", "deferred", "unwind", "BPF program", "early"))]
    check(cut <= 0.01 * total,
          "%d of %d samples through ld.so's resolver stopped there (%d below it): %s"
          % (cut, total, below, "\n".join(why)[-3000:]))
