"""Integration tests of the core pipeline: real BPF programs, real workloads
with a known call structure; the numbers are checked, not just the files."""
import collections
import os
import re
import subprocess
import sys
import tempfile
import time

from stcheck import (ROOT, STACKTREE, STACKTREED, Daemon, check, check_invariants, cpu_s,
                     check_stacks_end_at_roots, function_calls, function_cum, function_nodes, load,
                     main_thread, metric, nodes, run_profiled, thread, workload)

# Percentage points between a share of samples and the share of CPU time
# the workload measured. Measured spread (bench/spread.py, 10 runs of the
# suite idle and 10 with the other CPU busy, 2026-11): phases at most 0.06
# idle / 0.48 loaded, threads 0.38 / 0.73, shared library 0.12 / 0.66.
TOL = 3.0


def test_phases_shares_match_cpu_time():
    out, err, rep = run_profiled(["-F", "999", "--", workload("phases")])
    prof = load(out)
    check_stacks_end_at_roots(prof, {"phases"})
    check_invariants(prof)
    t = main_thread(prof, "phases")
    total = t["samples"]
    check(total > 1500, "too few samples: %d" % total)
    cpu = rep["phases"]
    all_cpu = sum(cpu.values())
    for ph in ("phase_a", "phase_b", "phase_c"):
        share = 100.0 * function_cum(t["root"], ph) / total
        real = 100.0 * cpu[ph] / all_cpu
        metric("phases.%s.diff_pts" % ph, share - real)
        check(abs(share - real) <= TOL, "%s: %.1f%% of samples, %.1f%% of CPU time"
              % (ph, share, real))
        check(function_calls(t["root"], ph) == 1, "%s CALLS %d != 1"
              % (ph, function_calls(t["root"], ph)))
    # work_b runs under phase_b -> helper only
    wb = function_cum(t["root"], "work_b")
    under = sum(n["cum"] for n, p in function_nodes(t["root"], "work_b")
                if p["function"] == "helper")
    check(wb > 0 and under == wb, "work_b: %d of %d samples under helper" % (under, wb))
    # call sites are function+offset of the return address, in the executable
    hs = function_nodes(t["root"], "helper")
    check(any(n["kind"] == "callsite" and n["offset"] > 0 and
              n["module"].endswith("/phases") for n, _ in hs), "helper call site missing")
    # the summary names samples, losses and the BPF run time
    check("samples in" in err and "BPF run time" in err and "lost" in err,
          "summary incomplete: %s" % err)
    for f in ("xtree.txt", "arcflow.txt", "profile.json"):
        check(os.path.getsize(os.path.join(out, f)) > 0, f + " empty")
    x = open(os.path.join(out, "xtree.txt")).read()
    # a C program's summary and headers say nothing of Python (issue 36)
    check("python:" not in err and "# python:" not in x and
          not any(k.startswith("python:") for k in prof["notes"]),
          "python lines in a C program's summary: %s"
          % [l for l in err.splitlines() if "python:" in l][:3])
    check("phase_a+0x" in x and "work_a [phases]" in x, "xtree lacks symbolized frames")


def test_generation_swaps_lose_nothing():
    """Drains every 0.1 s (about 30 generation swaps): every sample is still
    folded once, and a frame that lives across swaps is still one call."""
    out, err, rep = run_profiled(["-F", "999", "--drain-interval", "0.1", "--",
                                  workload("phases")])
    prof = load(out)
    check_invariants(prof)
    check(prof["lost"] == 0, "lost %d samples: %s" % (prof["lost"], prof["lost_by"]))
    t = main_thread(prof, "phases")
    cpu = sum(rep["phases"].values())
    metric("swaps.samples_per_cpu_tick", t["samples"] / (cpu * 999))
    # one sample per 1/999 s of CPU time, within 3% (measured: 0.990 to
    # 1.001 idle, 0.993 to 1.005 loaded)
    check(abs(t["samples"] - cpu * 999) <= 0.03 * cpu * 999,
          "%d samples for %.2f s of CPU at 999 Hz" % (t["samples"], cpu))
    for fn in ("main", "phase_a", "phase_b", "helper", "work_a", "work_b", "phase_c",
               "work_c1", "work_c2"):
        check(function_calls(t["root"], fn) == 1, "%s CALLS %d != 1"
              % (fn, function_calls(t["root"], fn)))


def test_samples_without_thread_state_are_folded():
    """A sample whose thread's task storage cannot be had (another program
    of ours inside a task-storage call on that CPU, or no memory) is folded
    through the CPU's spare state, its frames counted as no new call (issue
    23 item 9). Made to happen to about one sample in three
    (STACKTREED_TEST_SPARE_EVERY=3): nothing lost, one sample per tick, each
    function still one call, and the note counts them."""
    # the full program in before the command starts: the early one defers
    # a launched command's samples (auto), and on a busy machine the full
    # one's verification can take the whole run (0 spare samples of 3,010)
    out, err, rep = run_profiled(["-F", "999", "--", workload("phases")],
                                 env_extra={"STACKTREED_TEST_SPARE_EVERY": "3",
                                            "STACKTREED_TEST_LATE": "launch"})
    prof = load(out)
    check_invariants(prof)
    check(prof["lost"] == 0, "lost %d samples: %s" % (prof["lost"], prof["lost_by"]))
    t = main_thread(prof, "phases")
    cpu = sum(rep["phases"].values())
    check(abs(t["samples"] - cpu * 999) <= 0.03 * cpu * 999,
          "%d samples for %.2f s of CPU at 999 Hz" % (t["samples"], cpu))
    spare = prof["notes_by_id"].get("spare_thread", 0)
    check(0.2 * t["samples"] <= spare <= 0.5 * t["samples"],
          "spare-state samples %d of %d" % (spare, t["samples"]))
    for fn in ("main", "phase_a", "phase_b", "helper", "work_a", "work_b", "phase_c",
               "work_c1", "work_c2"):
        check(function_calls(t["root"], fn) == 1, "%s CALLS %d != 1"
              % (fn, function_calls(t["root"], fn)))


def bench_cpu_paths(depth=15):
    """The function sequences under main of tests/workloads/bench_cpu.c's 8
    paths (its next(): level from the path's bits, leaf from bit 2)."""
    seqs = []
    for p in range(8):
        s, d = ["level_a"], depth
        while True:
            s.append("next")
            if d <= 0:
                s.append("leaf_hash" if p & 4 else "leaf_mix")
                break
            s.append(("level_a", "level_b", "level_c")[(p >> (d % 3)) % 3])
            d -= 1
        seqs.append(tuple(s))
    return seqs


def test_small_node_table_keeps_every_node_in_place():
    """A node table of 1,024 ids per generation, drained every 50 ms, while
    two bench_cpu processes keep both CPUs inserting: every node keeps its
    parent (each stack is a prefix of one of bench_cpu's 8 call paths), no
    sample is lost for want of a slot, and main stays one call."""
    out = tempfile.mkdtemp(prefix="st-it-table-")
    start = os.path.join(out, "start")
    env = dict(os.environ, WL_START_FILE=start)
    procs = [subprocess.Popen([workload("bench_cpu"), "600000"], env=env) for _ in range(2)]
    try:
        # --pid: the tables are in before the first sample, so every stack is
        # complete and folded in the kernel (no late unwinding)
        d = Daemon(["--pid", ",".join(str(p.pid) for p in procs), "-F", "999",
                    "--max-nodes", "1024", "--drain-interval", "0.05", "-o", out])
    finally:
        open(start, "w").close()
    cpu = {}
    for p in procs:
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        check(p.returncode == 0, "bench_cpu exited %d" % p.returncode)
        cpu[p.pid] = ru.ru_utime + ru.ru_stime
    rc, err = d.stop()
    check(rc == 0, "stacktreed: " + err)
    prof = load(out)
    check_invariants(prof)
    check("node table full" not in prof["lost_by"], "lost: %s" % prof["lost_by"])
    paths = bench_cpu_paths()
    for pid, secs in cpu.items():
        mine = [t for t in prof["threads"] if t["pid"] == pid]
        check(len(mine) == 1, "bench_cpu %d: %d trees" % (pid, len(mine)))
        t = mine[0]
        metric("small_table.samples_per_cpu_tick", t["samples"] / (secs * 999))
        check(t["samples"] >= 0.9 * secs * 999, "bench_cpu %d: %d samples for %.2f s of CPU"
              % (pid, t["samples"], secs))
        mains = function_nodes(t["root"], "main")
        check(function_calls(t["root"], "main") == 1, "main CALLS %d != 1"
              % function_calls(t["root"], "main"))
        under = 0
        for m, _ in mains:
            stack = [(c, (c["function"],)) for c in m["children"]]
            while stack:
                n, seq = stack.pop()
                if seq[0] == "wl_wait_start":
                    # the wait for the start file (access(), usleep()):
                    # sampled now and then when both CPUs are busy with
                    # other work too (make test beside a CPU-bound process)
                    under += n["cum"]
                    continue
                check(any(p[:len(seq)] == seq for p in paths),
                      "bench_cpu %d: main -> %s is none of its call paths"
                      % (pid, " -> ".join(map(str, seq))))
                under += n["base"]
                stack.extend((c, seq + (c["function"],)) for c in n["children"])
        check(under >= 0.95 * t["samples"], "bench_cpu %d: %d of %d samples under main"
              % (pid, under, t["samples"]))


DRAINS = re.compile(r"kernel tree generations drained: (\d+) \((\d+) for reports, windows and "
                    r"views, (\d+) half full, (\d+) after \d+ exits, (\d+) at --drain-interval")


def drains_in(err):
    """The summary's drains by why: {"all", "needed", "half_full", "exited", "interval"}."""
    m = DRAINS.search(err)
    check(m, "the summary tells no drains: %s" % err[-1500:])
    return dict(zip(("all", "needed", "half_full", "exited", "interval"), map(int, m.groups())))


def sampled_drains(args, copies=1, secs=2.5):
    """bench_cpu (copies of it) sampled secs seconds by --pid with args:
    (the profile, the drains by why, the CPU seconds the copies ran while
    sampled)."""
    out = tempfile.mkdtemp(prefix="st-it-gen-")
    procs = [subprocess.Popen([workload("bench_cpu"), "100000000"]) for _ in range(copies)]
    try:
        d = Daemon(["--pid", ",".join(str(p.pid) for p in procs), "-F", "999", "-o", out] + args)
        c0 = sum(cpu_s(p.pid) for p in procs)
        time.sleep(secs)
        cpu = sum(cpu_s(p.pid) for p in procs) - c0
        rc, err = d.stop()
    finally:
        for p in procs:
            p.kill()
            p.wait()
    check(rc == 0, "stacktreed: " + err)
    prof = load(out)
    check_invariants(prof)
    return prof, drains_in(err), cpu


def test_generations_last_until_needed():
    """The kernel's trees are drained when they must be, not every second
    (issue 37 item 2: each drain starts a generation in which every thread
    looks its nodes up again): bench_cpu sampled 2.5 s is drained once, for
    the report (before: every second, and no such count in the summary);
    --drain-interval 0.5 still drains every half second; with --max-nodes
    1024 two bench_cpu processes (~600 nodes a generation) pass the half
    mark again and again and are drained for it, no sample lost."""
    prof, d, cpu = sampled_drains([])
    metric("drains.default", d["all"])
    check(d == {"all": 1, "needed": 1, "half_full": 0, "exited": 0, "interval": 0},
          "bench_cpu 2.5 s: drains %s, not the report's alone" % d)
    # the samples of the CPU time it had (a share of the 2.5 s on a busy
    # machine: 975 samples once in the loaded CI, against a bound of 1,000
    # that assumed a CPU of its own), at least 0.5 s of it
    check(cpu >= 0.5 and prof["samples"] >= 0.9 * cpu * 999,
          "%d samples of bench_cpu's %.2f CPU seconds at 999 Hz" % (prof["samples"], cpu))
    _, d, _ = sampled_drains(["--drain-interval", "0.5"])
    metric("drains.interval_0_5", d["interval"])
    check(d["interval"] >= 3, "--drain-interval 0.5 over 2.5 s: drains %s" % d)
    prof, d, _ = sampled_drains(["--max-nodes", "1024"], copies=2)
    metric("drains.half_full", d["half_full"])
    check(d["half_full"] >= 3 and d["interval"] == 0,
          "two bench_cpu in 1,024 nodes a generation: drains %s" % d)
    lost = {k: v for k, v in prof["lost_by"].items() if "full" in k}
    check(not lost, "samples lost for want of nodes: %s" % lost)


def test_young_processes_count_main_once():
    """stacktreed -a without the table cache: two bench_cpu processes born
    during the session have their first samples unwound late by the daemon
    (no tables yet), then folded in the kernel. The daemon hands each
    thread's last path back to BPF, so main is one call in each, not one
    for each side (measured before the handoff: main CALLS 2 or 3 in 7 of
    10 processes)."""
    out = tempfile.mkdtemp(prefix="st-it-young-")
    d = Daemon(["-a", "--comm", "bench_cpu", "-F", "999", "--no-unwind-cache", "-o", out])
    procs = [subprocess.Popen([workload("bench_cpu"), "300000"]) for _ in range(2)]
    for p in procs:
        check(p.wait() == 0, "bench_cpu exited %d" % p.returncode)
    rc, err = d.stop()
    check(rc == 0, "stacktreed: " + err)
    prof = load(out)
    check_invariants(prof)
    check(prof["lost"] == 0, "lost: %s" % prof["lost_by"])
    notes = prof["notes"]
    late = notes.get("unwind: samples unwound late in the daemon", 0)
    back = notes.get("threads folded in the kernel again after late unwinding", 0)
    metric("young.late_samples", late)
    check(late > 0 and back >= 1, "no late unwinding then handoff: %s" % notes)
    for p in procs:
        mine = [t for t in prof["threads"] if t["pid"] == p.pid]
        check(len(mine) == 1, "bench_cpu %d: %d trees" % (p.pid, len(mine)))
        t = mine[0]
        check(function_cum(t["root"], "main") >= 0.95 * t["samples"],
              "bench_cpu %d: main on %d of %d samples"
              % (p.pid, function_cum(t["root"], "main"), t["samples"]))
        check(function_calls(t["root"], "main") == 1, "bench_cpu %d: main CALLS %d != 1"
              % (p.pid, function_calls(t["root"], "main")))


def test_kernel_frames():
    out, _, rep = run_profiled(["--kernel", "-F", "999", "--", workload("syscalls")])
    prof = load(out)
    check_stacks_end_at_roots(prof, {"syscalls"})
    check_invariants(prof)
    t = main_thread(prof, "syscalls")
    parents = {id(n): p for n, _, p in nodes(t["root"])}
    kernel = [(n, p) for n, _, p in nodes(t["root"]) if n["runtime"] == "kernel"]
    check(kernel, "no kernel frames with --kernel")
    for n, p in kernel:
        check(n["module"] == "[kernel.kallsyms]" or n["module"].startswith("["),
              "kernel frame module %s" % n["module"])
        while p["kind"] == "inline":	# functions inlined at the user call site (DWARF)
            p = parents[id(p)]
        check(p["function"] is None or p["runtime"] == "kernel" or p["kind"] == "callsite",
              "kernel frame %s under a user leaf" % n["function"])
    # user frames never hang below kernel frames
    for n, _ in kernel:
        for c in n["children"]:
            check(c["runtime"] == "kernel", "user frame %s below kernel frame %s"
                  % (c["function"], n["function"]))
    notes = prof["notes_by_id"]
    check("kernel_symbols_incomplete" not in notes, "kallsyms read failed: %s" % notes)
    # as root, kallsyms names the kernel's text (tens of thousands of symbols)
    check(notes.get("kernel_symbols", 0) > 10000, "kernel symbols read: %s" % notes)
    # a kernel address without a symbol is counted
    unnamed = sum(n["cum"] for n, _ in kernel if n["function"] is None)
    check(not unnamed or notes.get("kernel_unnamed", 0) > 0,
          "%d samples in unnamed kernel frames, none counted: %s" % (unnamed, notes))
    names = collections.Counter()
    for n, _ in kernel:
        names[str(n["function"])] += n["cum"]
    check(set(names) & {"ksys_read", "vfs_read", "read_iter_zero", "iov_iter_zero"},
          "no read path in kernel frames of %d samples (lost %s): %s; notes %s"
          % (t["samples"], prof["lost"], names.most_common(12), notes))
    # the kernel clears 1 MiB per read(): nearly all the time is system time,
    # in the kernel's own accounting (getrusage) and in the samples; the
    # samples with kernel frames must be under sys_spin
    in_kernel = sum(n["cum"] for n, p in kernel if p["runtime"] != "kernel")
    share = in_kernel / t["samples"]
    cpu = rep["phases"]
    sys_share = cpu["system"] / (cpu["user"] + cpu["system"])
    metric("kernel_frames.kernel_share", share)
    metric("kernel_frames.rusage_system_share", sys_share)
    # measured: 98.5% to 99.8% in the kernel, idle and loaded
    check(share >= 0.8, "only %d of %d samples (%.0f%%) in the kernel; getrusage: %.0f%% system"
          % (in_kernel, t["samples"], 100 * share, 100 * sys_share))
    under = sum(n["cum"] for n, p in kernel if p["runtime"] != "kernel" and
                p["function"] in ("read", "__libc_read"))
    check(function_cum(t["root"], "sys_spin") >= 0.95 * t["samples"] and under >= 0.95 * in_kernel,
          "kernel samples not under sys_spin -> read: %d of %d" % (under, in_kernel))
    # without --kernel: no kernel frame at all
    out2, _, _ = run_profiled(["-F", "499", "--", workload("syscalls")],
                              env_extra={"WL_SCALE": "0.3"})
    t2 = main_thread(load(out2), "syscalls")
    check(not [n for n, _, _ in nodes(t2["root"]) if n["runtime"] == "kernel"],
          "kernel frames without --kernel")


def test_threads_one_tree_each():
    out, _, rep = run_profiled(["-F", "999", "--", workload("threads")])
    prof = load(out)
    check_stacks_end_at_roots(prof, {"threads"})
    check_invariants(prof)
    tids = rep["threads"]
    check(len(tids) == 3, "workload reported %d threads" % len(tids))
    pid = main_thread(prof, "threads")["pid"]
    cpu = rep["phases"]
    samples = {}
    for name, tid in tids.items():
        t = thread(prof, tid)
        check(t["pid"] == pid, "thread %s has pid %d, main %d" % (name, t["pid"], pid))
        check(t["comm"] == name, "thread %d comm %s != %s" % (tid, t["comm"], name))
        fn = "spin_" + name
        cum = function_cum(t["root"], fn)
        check(cum >= 0.95 * t["samples"], "%s: %s on %d of %d samples"
              % (name, fn, cum, t["samples"]))
        for other in tids:
            if other != name:
                check(function_cum(t["root"], "spin_" + other) == 0,
                      "spin_%s in thread %s" % (other, name))
        samples[name] = t["samples"]
    tot_s, tot_c = sum(samples.values()), sum(cpu[n] for n in samples)
    for name in samples:
        s, c = 100.0 * samples[name] / tot_s, 100.0 * cpu[name] / tot_c
        metric("threads.%s.diff_pts" % name, s - c)
        check(abs(s - c) <= TOL, "thread %s: %.1f%% of samples, %.1f%% of CPU" % (name, s, c))
    # --merge-threads gives one tree for the process, with every sample
    out2 = out + "-merged"
    p = subprocess.run([STACKTREE, "report", "--input", os.path.join(out, "profile.json"),
                        "-o", out2, "--merge-threads"], capture_output=True, text=True)
    check(p.returncode == 0, "stacktree report --merge-threads: " + p.stderr)
    merged = load(out2)
    check_invariants(merged)
    mine = [t for t in merged["threads"] if t["pid"] == pid]
    check(len(mine) == 1 and mine[0]["samples"] == sum(
        t["samples"] for t in prof["threads"] if t["pid"] == pid), "merged tree samples")


def test_threads_renamed_after_their_first_samples():
    """A thread that names itself after its first samples (as a JVM's
    threads do, just after they start) is shown by its new name, its samples
    from before the rename in the same tree. The name was read when the
    thread's root node was made, once a node generation; since generations
    last until needed (up to --drain-interval, 30 s), a thread renamed inside
    one kept its first name (the CI run of 389b4b9: the JVM's worker named
    'java'); now the kernel's task_rename renames it (bpf/lifecycle.bpf.h).
    threads with WL_NAME_LATE=1: each thread spins a third of its time as
    'threads', then names itself. Launched (dwarf and fp walks), and -a."""
    def check_names(prof, tids, what):
        for name, tid in tids.items():
            t = thread(prof, tid)
            check(t["comm"] == name, "%s: thread %d is named %r, not %r"
                  % (what, tid, t["comm"], name))
            # one tree: the samples before the rename are in it too
            check(function_cum(t["root"], "spin_" + name) >= 0.95 * t["samples"] and
                  len([u for u in prof["threads"] if u["tid"] == tid]) == 1,
                  "%s: thread %s split or not spinning: %s" % (what, name, [
                      (u["comm"], u["samples"]) for u in prof["threads"] if u["tid"] == tid]))
            # its third before the rename is in its samples (red: 0.4 s of
            # CPU at 999 Hz, a third before; halved for two busy CPUs)
            check(t["samples"] >= 0.5 * 999 * 0.4 * 0.5, "%s: %s has %d samples"
                  % (what, name, t["samples"]))
        check(main_thread(prof, "threads")["comm"] == "threads", "%s: main renamed" % what)

    for mode in ("auto", "fp"):
        out, _, rep = run_profiled(["--unwind", mode, "-F", "999", "--", workload("threads")],
                                   env_extra={"WL_NAME_LATE": "1"})
        prof = load(out)
        check_invariants(prof)
        check(len(rep["threads"]) == 3, "workload reported %d threads" % len(rep["threads"]))
        check_names(prof, rep["threads"], "-- CMD --unwind " + mode)
    out = tempfile.mkdtemp(prefix="st-rename-")
    report = os.path.join(out, "workload.txt")
    d = Daemon(["-a", "-F", "999", "-o", out])
    try:
        p = subprocess.run([workload("threads")], capture_output=True, timeout=60,
                           env=dict(os.environ, WL_NAME_LATE="1", WL_REPORT=report))
    finally:
        rc, err = d.stop()
    check(p.returncode == 0 and rc == 0, "threads %d, stacktreed %d: %s"
          % (p.returncode, rc, err))
    with open(report) as f:
        tids = {l.split()[1]: int(l.split()[2]) for l in f if l.startswith("thread ")}
    check(len(tids) == 3, "workload reported %d threads" % len(tids))
    prof = load(out)
    pid = thread(prof, tids["red"])["pid"]
    prof["threads"] = [t for t in prof["threads"] if t["pid"] == pid]
    check_names(prof, tids, "-a")


def test_shared_library_attribution():
    out, _, rep = run_profiled(["-F", "999", "--", workload("uselib")])
    prof = load(out)
    check_stacks_end_at_roots(prof, {"uselib"})
    check_invariants(prof)
    t = main_thread(prof, "uselib")
    nodes = function_nodes(t["root"], "lib_spin")
    check(nodes, "lib_spin not found")
    check(all(n["module"].endswith("/libwork.so") for n, _ in nodes),
          "lib_spin attributed to %s" % {n["module"] for n, _ in nodes})
    check(all(n["module"].endswith("/uselib") for n, _ in
              function_nodes(t["root"], "local_spin")), "local_spin module")
    cpu = rep["phases"]
    for fn in ("lib_spin", "local_spin"):
        share = 100.0 * function_cum(t["root"], fn) / t["samples"]
        real = 100.0 * cpu[fn] / sum(cpu.values())
        metric("shared_lib.%s.diff_pts" % fn, share - real)
        check(abs(share - real) <= TOL, "%s: %.1f%% vs %.1f%%" % (fn, share, real))


def test_attach_to_running_pid():
    # every thread spins for longer than the daemon can take to attach: at
    # WL_SCALE 4 main's and red's spins ended 2.4 and 3.0 s after the start
    # (4 threads on 2 CPUs), and one run attached after both (CI-like run of
    # 2026-11-28: green and blue only); it is killed after the profile
    env = dict(os.environ, WL_SCALE="12")
    proc = subprocess.Popen([workload("threads")], env=env, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        out, err, _ = run_profiled(["-F", "499", "-d", "1", "--pid", str(proc.pid)])
    finally:
        proc.kill()
        proc.wait()
    prof = load(out)
    check_invariants(prof)
    pids = {t["pid"] for t in prof["threads"]}
    check(pids == {proc.pid}, "pids profiled: %s, wanted only %d" % (pids, proc.pid))
    check(len(prof["threads"]) >= 3, "threads seen: %d" % len(prof["threads"]))
    metric("attach_pid.duration_s", prof["duration_s"])
    metric("attach_pid.samples", prof["samples"])
    check(0.9 <= prof["duration_s"] <= 1.6, "duration %.2f" % prof["duration_s"])
    # ~1 s on up to 4 busy threads sharing 2 CPUs at 499 Hz (measured: 812 to
    # 1032 idle, 596 to 817 with the other CPU busy; 1.025 to 1.042 s)
    check(200 <= prof["samples"] <= 1100, "samples %d" % prof["samples"])


def ia32_whole(out):
    """The ia32 workload's profile in out (checked), its main thread, and
    its samples whole (_start > top > mid > leaf, nothing cut) and in all."""
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, "ia32")
    total = whole = 0
    for path, n in leaf_paths(t["root"]):
        total += n
        if path[-4:] == ["_start", "top", "mid", "leaf"] and "[truncated]" not in path:
            whole += n
    return prof, t, whole, total


def ia32_attached(mode):
    """The ia32 workload profiled for 1 s by --pid in --unwind mode: (the
    output directory, stacktreed's stderr)."""
    proc = subprocess.Popen([workload("ia32")], stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        out, err, _ = run_profiled(["--unwind", mode, "-F", "499", "-d", "1", "--pid",
                                    str(proc.pid)])
    finally:
        proc.kill()
        proc.wait()
    return out, err


def test_fp_walks_a_32_bit_process():
    """--unwind fp on an ia32 process (4-byte frames): the kernel's walk
    (bpf/walk.bpf.h, fp_stack_compat()), not the 64-bit walk through the
    window, whose 16-byte frames would read garbage there. Attached with
    --pid, so that every sample is walked in BPF (a launched command's first
    ones go to the daemon: test_fp_walks_a_launched_32_bit_process). Measured: 499
    of 499 samples whole, idle and with both CPUs busy."""
    out, err = ia32_attached("fp")
    prof, t, whole, total = ia32_whole(out)
    metric("fp_ia32.whole", whole / max(total, 1))
    check(total >= 100, "%d samples of the ia32 process: %s" % (total, err))
    check(whole >= 0.95 * total, "%d of %d samples of the ia32 process are _start > top > mid > "
          "leaf" % (whole, total))


def test_fp_walks_a_launched_32_bit_process():
    """--unwind fp launching an ia32 process: its first samples, taken by
    the early object and deferred until the daemon hands the thread's path
    back, are walked by the daemon through their stack copies with the
    kernel's 32-bit rule (user/collect/unwind/fpcopy.c, walk32(): 4-byte
    words), the rest in BPF (bpf_get_stack()); the CALLS of a frame seen on
    both sides of the handoff count once. Before, the daemon read the
    copies' frames as 8-byte words: 55 of 110 samples of a 1 s run cut
    under [truncated] at the leaf."""
    out, err, _ = run_profiled(["--unwind", "fp", "-F", "499", "--", workload("ia32")])
    prof, t, whole, total = ia32_whole(out)
    late = prof["notes"].get("unwind: samples unwound late in the daemon", 0)
    metric("fp_ia32_launched.whole", whole / max(total, 1))
    metric("fp_ia32_launched.late", late)
    check(total >= 300, "%d samples of the ia32 process: %s" % (total, err))
    check(late > 0, "no sample of the launched ia32 process was unwound by the daemon: %s" % err)
    check(whole >= 0.95 * total, "%d of %d samples of the launched ia32 process are _start > "
          "top > mid > leaf (%d unwound late)" % (whole, total, late))
    # _start called top once, top called mid 120 times in the run. _start
    # may be a node more than once (a node is a pc): a sample in its own
    # code is a leaf at another pc, such as its first instruction, where
    # the exec'd process stands when a timer fires as it returns to user
    # space (0x8049000 with base 1 beside 0x804900a: once in a loaded CI
    # run, 2026-12-01, and 1 of 6 runs beside it); the call to top counts
    # once over all of them.
    starts = [c for c in t["root"]["children"] if c["function"] == "_start"]
    calls = sum(c["calls"] for s in starts for c in s["children"] if c["function"] == "top")
    check(starts and calls == 1,
          "_start -> top counted as one call across the handoff: %s" %
          [(s.get("address"), s["base"], [(c["function"], c["calls"]) for c in s["children"]])
           for s in starts])


def test_dwarf_modes_walk_a_32_bit_process():
    """--unwind auto and dwarf on an ia32 process: the CFI walk is 64-bit
    only, so a 32-bit process is walked by the kernel's rule in BPF, as in
    fp mode (bpf/walk.bpf.h, user_stack(): st_task_is_compat()), and its
    deferred samples by the same rule in the daemon. Before, its samples
    were walked as a 64-bit stack: with -a, 21 of 152 whole; attached by
    --pid or launched, every sample went to the daemon, which read 8-byte
    frames: none whole. System-wide (--comm), the process started once
    sampling has (by --pid the DWARF programs' load could outlast its ~3 s
    run: one run in three here found no sample of it)."""
    out = tempfile.mkdtemp(prefix="st-it-")
    d = Daemon(["-a", "--comm", "ia32", "--unwind", "auto", "-F", "499", "-o", out])
    try:
        subprocess.run([workload("ia32")], stderr=subprocess.DEVNULL, timeout=120)
    finally:
        rc, err = d.stop()
    check(rc == 0, "stacktreed exited %d: %s" % (rc, err[-800:]))
    runs = [("-a --comm, auto", out, err)]
    out, err, _ = run_profiled(["--unwind", "dwarf", "-F", "499", "--", workload("ia32")])
    runs.append(("launched, dwarf", out, err))
    for what, out, err in runs:
        prof, t, whole, total = ia32_whole(out)
        metric("dwarf_ia32.whole", whole / max(total, 1))
        check(total >= 100, "%s: %d samples of the ia32 process: %s" % (what, total, err))
        check(whole >= 0.95 * total, "%s: %d of %d samples of the ia32 process are _start > "
              "top > mid > leaf" % (what, whole, total))


def leaf_paths(root):
    """(the function names from the root's child to the node, its BASE) for
    every node with BASE."""
    stack = [(c, []) for c in root["children"]]
    while stack:
        n, above = stack.pop()
        path = above + [n["function"] or ""]
        if n["base"]:
            yield path, n["base"]
        stack.extend((c, path) for c in n["children"])


def test_bench_parts_time_one_thread():
    """Benchmarks only (bench/bench.py's java rows): with
    STACKTREED_BENCH_PARTS_TID, bpf/parts.bpf.h's per-sample clock sums
    that thread's samples a second time, on their own. threads (main and
    three threads spinning at once) attached by --pid, its main thread
    named (--unwind fp: the quicker load): the thread's sums count its
    samples alone (its share of the process's samples as in the profile),
    each part at most the whole's.
    Before (2026-11-30) the clock had no thread sums (bench_parts_map():
    "tid" None)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from bench import bench_parts_map
    proc = subprocess.Popen([workload("threads")], env=dict(os.environ, WL_SCALE="12"),
                            stderr=subprocess.DEVNULL)
    out = tempfile.mkdtemp(prefix="st-it-parts-")
    try:
        time.sleep(0.3)
        d = Daemon(["-F", "999", "--unwind", "fp", "-o", out, "--pid", str(proc.pid)],
                   env=dict(os.environ, STACKTREED_BENCH_PARTS="1",
                            STACKTREED_BENCH_PARTS_TID=str(proc.pid)))
        try:
            time.sleep(1.5)
            parts = bench_parts_map(d.pid)
        finally:
            rc, err = d.stop()
    finally:
        proc.kill()
        proc.wait()
    check(rc == 0, "stacktreed exited %d: %s" % (rc, err[-2000:]))
    check(parts and parts["tid"], "bench_parts has no thread sums: %s" % parts)
    prof = load(out)
    mine = [t for t in prof["threads"] if t["pid"] == proc.pid]
    main = [t["samples"] for t in mine if t["tid"] == proc.pid]
    check(len(mine) >= 3 and main, "threads profiled: %s" % [(t["tid"], t["samples"])
                                                             for t in mine])
    n, tid_n = parts["n"][0], parts["tid"]["n"][0]	# samples past the filter
    share, truth = tid_n / max(n, 1), main[0] / sum(t["samples"] for t in mine)
    metric("bench_parts_tid.share_diff_pts", 100.0 * (share - truth))
    # (measured: within 0.24 points, idle and beside two dd spinners)
    check(tid_n > 0 and abs(share - truth) <= 0.02,
          "the main thread's share of the clock's samples %.3f (%d of %d), of the "
          "profile's %.3f" % (share, tid_n, n, truth))
    check(all(t <= a for t, a in zip(parts["tid"]["ns"] + parts["tid"]["n"],
                                     parts["ns"] + parts["n"])),
          "a part of the thread's over the whole's: %s, %s" % (parts["tid"], parts))


def test_system_wide_sees_the_workload():
    proc = subprocess.Popen([workload("phases")], env=dict(os.environ, WL_SCALE="3"),
                            stderr=subprocess.DEVNULL)
    out = "/tmp/st-it-system"
    try:
        d = Daemon(["-a", "-F", "199", "-d", "1", "-o", out])
        rc, err = d.stop(sig=None)
        check(rc == 0, "stacktreed -a: " + err)
    finally:
        proc.kill()
        proc.wait()
    prof = load(out)
    check_invariants(prof)
    mine = [t for t in prof["threads"] if t["pid"] == proc.pid]
    check(len(mine) == 1, "workload not in the system-wide profile")
    check(function_cum(mine[0]["root"], "main") >= 0.9 * mine[0]["samples"],
          "workload samples not under main")
    # measured: 199 to 215 idle, 103 to 205 with the other CPU busy (the
    # workload then shares its CPU): half of that floor still shows sampling
    metric("system_wide.samples", mine[0]["samples"])
    check(mine[0]["samples"] >= 50, "workload: %d samples in 1 s at 199 Hz"
          % mine[0]["samples"])
    check(not [t for t in prof["threads"] if t["pid"] == d.pid],
          "stacktreed profiled itself")


def test_errors_are_one_clear_line():
    cases = [
        ([], "nothing to profile"),
        (["--pid", "999999999"], "invalid --pid"),
        (["--pid", "4194000"], "no process 4194000"),
        (["--unwind", "lbr", "-a"], "invalid --unwind"),
        (["-F", "abc", "-a"], "invalid -F"),
        (["--", "/nonexistent/prog"], "cannot run /nonexistent/prog"),
    ]
    for args, want in cases:
        p = subprocess.run([STACKTREED, "-o", "/tmp/st-err-out"] + args, capture_output=True,
                           text=True, timeout=60)
        check(p.returncode != 0, "%s: exit 0" % args)
        check(want in p.stderr, "%s: stderr %r lacks %r" % (args, p.stderr, want))


def test_ctrl_c_writes_reports():
    out = "/tmp/st-it-sigint"
    busy = subprocess.Popen([workload("phases")], env=dict(os.environ, WL_SCALE="3"),
                            stderr=subprocess.DEVNULL)
    try:
        d = Daemon(["-F", "199", "-o", out, "--pid", str(busy.pid)])
        time.sleep(1.0)
        rc, err = d.stop()
    finally:
        busy.kill()
        busy.wait()
    check(rc == 0, "exit %d after SIGINT: %s" % (rc, err))
    prof = load(out)
    check_invariants(prof)
    # 1 s of one busy thread at 199 Hz after the daemon said it samples
    # (measured: 199 idle, 123 to 199 loaded); a tenth of that always holds
    metric("ctrl_c.samples", prof["samples"])
    check(prof["samples"] >= 20, "%d samples in 1 s at 199 Hz" % prof["samples"])


def test_children_of_a_waiting_command_are_profiled():
    """The launched shell forks the workload before its own unwind tables are
    in (it never runs again to leave that state): the child is a target all
    the same, with one sample per 1/999 s of its CPU time (within 10%: the
    child's first samples may be taken before its own tables are in;
    measured 0.988 to 1.017 of the nominal count, idle and loaded)."""
    for mode in ("dwarf", "auto", "fp"):
        out, err, rep = run_profiled(["--unwind", mode, "-F", "999", "--", "bash", "-c",
                                      workload("phases") + "; true"],
                                     env_extra={"WL_SCALE": "0.5"})
        prof = load(out)
        check_invariants(prof)
        cpu = sum(rep["phases"].values())
        mine = [t for t in prof["threads"] if function_cum(t["root"], "phase_a") > 0]
        got = sum(t["samples"] for t in mine)
        metric("children.%s.samples_per_cpu_tick" % mode, got / (cpu * 999))
        check(abs(got - cpu * 999) <= 0.1 * cpu * 999,
              "--unwind %s: %d samples of the child for %.2f s of CPU at 999 Hz (%s)"
              % (mode, got, cpu, err.strip().splitlines()[0]))


def test_exit_status_is_the_commands():
    """-- CMD exits with CMD's status (128 + N for signal N), after writing
    the reports; its own failures keep their codes."""
    for script, want in (("exit 3", 3), ("exit 0", 0), ("kill -TERM $$", 128 + 15)):
        out = tempfile.mkdtemp(prefix="st-it-exit-")
        p = subprocess.run([STACKTREED, "-o", out, "--", "sh", "-c", script],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == want, "-- sh -c '%s': exit %d, wanted %d: %s"
              % (script, p.returncode, want, p.stderr))
        check(os.path.getsize(os.path.join(out, "profile.json")) > 0,
              "no reports after -- sh -c '%s'" % script)
    p = subprocess.run([STACKTREED, "-o", "/tmp/st-err-out", "--", "/nonexistent/prog"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 127, "cannot start: exit %d" % p.returncode)
