"""Java accuracy (issue 32, items 4 and 5): stacktreed's Java profiles held
against the truth of a bundled workload and against JDK Flight Recorder
on the same run, and the completeness of its Java stacks on Java programs
nobody here wrote.

The workload is tests/workloads/java/Ledger.java (javatruth.py says how
it measures itself and the rules every comparison uses).

test_java_accuracy_jfr_truth (passes now): the workload's own truth
against JFR alone, JDK 17 and Temurin 25, JIT and -Xint: each Java phase's
share of JFR's execution samples of the main thread against its
ThreadMXBean share, the worker's time in sieve, the JNI phase under
Deflater's native method, and JFR's stacks reaching their entries. This
checks the workload and the JFR parsing the stacktreed tests rely on.

The stacktreed tests (test_java_accuracy_{cmd,pid,all}_{jit,xint}
[_loaded], _jdk25_*): one run each, on which every check is made: each
of the five phases within TOL points of the truth, the worker's sieve
share, >= 99% of each Java thread's samples reaching its entry
(Ledger.main, java.lang.Thread.run), the JNI call's native frames under
Ledger.phaseDeflate; under -- CMD, JFR records the same run and each
thread's top 15 methods by leaf share over the measured run must be
within TOL_JFR points of its (plus the noise of JFR's few samples). The
JDK 17 -- java ones run by default (idle and with both CPUs busy), as do
--pid's (JIT idle and busy, -Xint idle) and -a JIT's (idle), the others
with STACKTREED_JAVA_ACCURACY=1 (HEAVY and PENDING below say why).

test_java_accuracy_behind (by default): --pid on Ledger with the
daemon's main loop held while the JVM runs (a test hook): its methods
must be read while it lives, on java_events' own reader thread (its
Java leaf samples named, its method reports readable).

test_java_accuracy_behind_late (by default): the same with every sample
deferred to the daemon, so that each is walked after the JVM exited,
from the memory its walk as it came kept: the main thread's phases, its
entry and the JNI call's zlib frames as in a live run.

test_java_real_javac, test_java_real_ant: javac compiling part of a JDK's
own source tree (java.base's java/util) and ant building a generated
project: the share of each Java thread's samples that reach an entry (a
main or run method, or a method the JVM itself calls: a static
initializer, the launcher, the class loaders), >= 99%."""
import contextlib
import math
import os
import re
import shutil
import subprocess
import tempfile
import time

import javatruth as jt
from stcheck import (Daemon, Failure, Skip, busy_cpus, check, load, metric, nodes, read_report,
                     run_profiled)

# ---- JFR against the truth -----------------------------------------------------
# JFR's share of a Java phase against its ThreadMXBean share, in points,
# is allowed a bias (BIAS_JFR, by JDK and mode) plus SIGMAS binomial
# standard deviations of its share at the run's number of samples (a
# loaded machine gives JFR 450 to 2,000 samples of the main thread a run).
# Measured (2026-11-28, the 2 CPUs at load 12-20 from other sessions;
# `make spread RUNS=4 T=test_java_accuracy_jfr_truth` and 3 more runs by
# hand; docs/java-accuracy.md), each run's largest error: JDK 17 JIT
# 1.3-5.0 points (stream 3.1 under on average), -Xint 1.9-4.0 (stream 2.8
# under, matrix 2.4 over), Temurin 25 JIT 1.9-3.8 (matrix 2.2 under),
# -Xint 0.4-2.0. JFR does not sample a thread while it runs the JVM's own
# code (allocation, interpreter runtime calls: stream makes the most) and
# drops the samples it cannot walk.
BIAS_JFR = {("17", "jit"): 3.0, ("17", "xint"): 2.5, ("25", "jit"): 2.0}
BIAS_JFR_DEFAULT = 1.5
# ... but JDK 17's JIT stream phase, which JFR misses more the busier the
# machine: CI's run (2026-11-30, loaded) 5.7 points under at 2,873
# samples, over 3.0 + 3 SD; `make spread RUNS=5 LOAD=1
# T=test_java_accuracy_jfr_truth` beside a loaded .ci/run the same day:
# 5.2 to 7.0 under (mean 6.1, SD 0.73), every other phase of every JDK
# and mode within 4.7. One-sided (JFR never put stream over its truth in
# those runs): its bias under is that mean + 3 SD, over the JDK's; the
# run's binomial noise (SIGMAS) is added to either, as for every phase.
BIAS_JFR_UNDER = {("17_jit", "stream"): 8.3}
# JFR's share of the worker's samples in sieve (the truth ~98%): at least
# this, whatever the load (73.0% the lowest seen, see check_jfr_truth)
JFR_WORKER_MIN = 50.0
SIGMAS = 3.0
# JFR's stacks that reach their entry, of the main thread's (its own
# start-up included) and the worker's: measured 99.1-100% before the
# start-up entries (javatruth.START_ENTRIES) were counted as entries
ENTRY_MIN_JFR = 99.0
# of main's samples in a native method other than the CPU clock's, those
# in Deflater's (the rest: class loading and JFR's own at start-up):
# measured 93-99.7% with the clock's counted in, 88.6% once at 185
# samples (load 20)
DEFLATE_NATIVE_MIN = 90.0

# ---- stacktreed ---------------------------------------------------------------
# The bounds: each phase within 2 points of the truth, the top 15
# methods within 2 points of JFR's, >= 99% of samples at their entry.
# Not yet measured (no Java frames to measure): once the walkers land,
# `make spread T=test_java_accuracy` gives the spread, and TOL and
# TOL_JFR are set from it as test_python.py's are (at -F 1999 a 6 s run
# gives the main thread ~6,000 samples idle: 0.56 points of binomial SD
# on a 25% share).
TOL = 2.0
TOL_JFR = 2.0
# a run's sampling noise on top of TOL: the main thread gets 0.9 to 2.5 s
# of CPU in a 6 s run on the loaded test machine, 1,900 to 5,700 phase
# samples (binomial SD 0.9 to 0.5 points on a 20% share)
SIGMAS_PHASE = 2.0
ENTRY_MIN = 99.0
FREQ = "1999"
# -a samples every process: at 1999 Hz on the test machine at a load of
# 16-20 (other sessions) a run took 194 s to stop idle, over 600 s with
# both CPUs kept busy besides (2026-11-28); half the rate halves the
# work, and leaves the workload's main thread ~3,000 samples a run
FREQ_ALL = "999"
STOP_TIMEOUT = 600
SECONDS = 6
# the recursion's depth: the workload's default, 200 (walks keep 768 frames since
# issue 35; at 100 before, while a walk stopped at 127 frames), deep
# enough that a Java frame limit would show
DEPTH = os.environ.get("STACKTREED_JAVA_DEPTH", "200")
# test_java_accuracy_behind: Ledger's run (s), the rate, and the
# bounds. Measured 2026-11-29 (load 8-12, a sanitized build and CI
# beside it, 5 runs): 100% of 468-904 leaf samples named; of 701-797
# methods reported, 0 failed reads in 4 runs and 65 in one (the
# summary's count: a method first seen as the JVM exits, read too late,
# then tried again for each of its samples); 20-29 s a run. The build
# before the reader thread (the same hook): 0.0% of 713 named, 1,792
# failed reads of its 711 reports.
BEHIND_SECONDS = 3
BEHIND_FREQ = "999"
BEHIND_NAMED = 90.0
BEHIND_UNREAD = 25.0
BEHIND_MIN = 200
# test_java_accuracy_behind_late: of main's samples with Java frames, at
# most 100 - ENTRY_MIN% may end short of its entry unexplained, and at
# most LATE_CUT_MAX% at a walk stopped for a counted reason (the summary's
# "walks stopped at": no blob, a stub leaf, an unreadable stack). Every
# walk there is made on the deferred ring's consumer thread after the
# sample, when the code cache may have moved on: under load it comes
# later. Measured 2026-12-01, 26 runs beside 3-4 spinners and another
# `stacktreed -a`: cut short 0.0-1.09% (mean 0.45; the one run at 1.09
# had 98.91% at the entry, under ENTRY_MIN, every other sample cut short);
# beside a sanitized build (two compile jobs) 1.86%. Unexplained: 0 in
# all but one loaded CI run (166 of 1433 under an unnamed compiled frame,
# since named by its nmethod's method, java.c jit_get()).
LATE_CUT_MAX = 3.0
# real programs
JAVAC_FILES = 40	# ~8 s of CPU for javac (JDK 25) here, 40-80 s under load
ANT_CLASSES = 150


def binomial(p, n):
    """Points of one standard deviation of a share p (percent) over n
    samples."""
    return 100.0 * math.sqrt(max(p, 1.0) / 100 * (1 - min(p, 99.0) / 100) / max(n, 1))


# Which stacktreed tests run by default. Measured on this tree
# (2026-11-28, docs/java-accuracy.md; the machine at a load of 12-24 from
# other sessions, DEPTH 100): -- java, JDK 17 JIT and -Xint, Temurin 25
# JIT and -Xint: every check held (phases within 0.3-2.0 points at
# 1,900-5,700 samples, 99.55-100% at the entry, JFR's top 15 within
# 1.7-3.0 points per thread); --pid -Xint too (phases within 0.68
# points, 18 s), and --pid JIT (2026-11-29: 21 s, the worker's sieve
# within its bound once its measured run and clock reads are compared,
# javatruth.worker_share). Those run by default; the rest with
# STACKTREED_JAVA_ACCURACY=1:
#  HEAVY    passed, but each takes 55-200 s on the loaded test machine
#           (CI's budget, docs/testing.md, has no room for them all):
#           Temurin 25's, javac, ant (99.24% of its main thread's 5,808
#           samples complete, 134 s);
#           -a -Xint (2026-11-29: idle 100% of main at its entry,
#           phases within 1.10-1.45 points, 35-45 s; twice with both CPUs
#           busy, 0.37 and 1.94 points, 51-66 s), over the ~40 s a default
#           test may take (most of it the daemon's stop, naming the
#           machine's ~1,000 processes); -a JIT loaded (2026-11-29, since
#           deferred samples are walked as they arrive: 4 of 4 passed,
#           phases within 0.57-0.98 points, 36-77 s);
#  PENDING  none. -- java loaded, JIT and -Xint, run by default since
#           2026-11-29 (evening): 16 of 16 and 15 of 15 passed at a load
#           of 4-11 (phases within 0.13-1.93 and 0.20-0.73 points, JFR's
#           top 15 within 2.3-5.9 points, JFR's own error allowed); 14-32 s
#           (9 runs) and 13-27 s (8) since the spinners stop with the run
#           and the schema check is twice as fast, against 53-89 and
#           46-53 s for the harness before (runs interleaved at a load of
#           7-11: the new 23-32 and 24-27 s); "passed once, 162 s" was at
#           a load of 20+ (2026-11-29 01:18). Of a run: 11-22 s profiling
#           (the full Java program verified before the exec, 2-9 s
#           loaded; the JVM's start-up with JFR; its 6 s; its exit), 2-9 s
#           reading the profile, 1 s JfrFold's.
#           --pid JIT loaded too (HEAVY before: 55 s at a load of 12-24):
#           10 of 10 passed, phases within 0.29-0.95 points, 10-16.5 s at
#           a load of 4-8 (21 s for the harness before, interleaved).
# -a JIT idle runs by default since deferred samples are walked as they
# arrive, on the ring's consumer thread, and from the code cache above a
# native leaf (2026-11-29, load 4.7-6.9: 3 of 3 passed, phases within
# 0.44-0.80 points, 22-30 s); before, 1 run of 1 failed (31 s): zlib's
# samples under Deflater's native wrapper walked after the JVM's exit
# ended at the wrapper with no Java frame (deflate 13.3% against 22.4%).
HEAVY = ("passes (docs/java-accuracy.md) but takes 60-200 s on the loaded test machine, "
         "over CI's budget: run with STACKTREED_JAVA_ACCURACY=1")
PENDING = ("not yet seen within the issue's bounds on this tree (docs/java-accuracy.md): "
           "run with STACKTREED_JAVA_ACCURACY=1")


def gated(reason):
    if not os.environ.get("STACKTREED_JAVA_ACCURACY"):
        raise Skip(reason)


def test_java_accuracy_jfr_truth():
    jt.require_classes()
    tmp = tempfile.mkdtemp(prefix="st-jfr-")
    try:
        for major, home in jt.installed_jdks():
            for mode in ("jit", "xint"):
                rec = os.path.join(tmp, "%s-%s.jfr" % (major, mode))
                t0 = time.time()
                truth, _ = jt.run_ledger(home, SECONDS, mode == "xint",
                                         jt.jfr_options(home, rec, tmp))
                stacks = jt.jfr_stacks(home, rec)
                check_jfr_truth(truth, stacks, "%s_%s" % (major, mode),
                                BIAS_JFR.get((major, mode), BIAS_JFR_DEFAULT))
                check_rules_agree(truth, stacks, "%s_%s" % (major, mode))
                print("    JDK %s %s: %.0f s" % (major, mode, time.time() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_jfr_truth(truth, stacks, label, bias):
    r = jt.jfr_vs_truth(truth, stacks)
    n = r["samples"]
    check(n >= 200, "JFR (%s): only %d execution samples of the main thread" % (label, n))
    worst = 0.0
    for p, (got, want) in r["main"].items():
        under = BIAS_JFR_UNDER.get((label, p), bias) if got < want else bias
        tol = under + SIGMAS * binomial(want, n)
        metric("jfr_share_err_%s_%s" % (label, p), got - want)
        worst = max(worst, abs(got - want))
        check(abs(got - want) <= tol, "JFR (%s): %s in %.1f%% of main's %d execution samples, "
              "ThreadMXBean says %.1f%% (tolerance %.1f): %s"
              % (label, p, got, n, want, tol, r["main"]))
    metric("jfr_share_maxerr_" + label, worst)
    metric("jfr_main_samples_" + label, n)
    print("    JFR %s: %d samples of main, phases within %.2f points of the truth" % (label, n, worst))
    check(r["native"] > 0 and r["deflate_native"] >= DEFLATE_NATIVE_MIN,
          "JFR (%s): %.1f%% of main's %d native-method samples under %s"
          % (label, r["deflate_native"], r["native"], jt.PHASES["deflate"]))
    # The worker's sieve share: JFR's own error here is no bound of ours
    # (check_ledger allows it to each worker method, measured on the same
    # run). Idle JFR holds it (Temurin 25 -Xint: 99.0% and 99.1% against
    # 98.6% and 98.2%, 2026-11-29), but under load its -Xint sampler moves
    # the worker's samples to Worker.run and Math.round: 88.6% against
    # ~98% (JDK 17, load 4-5), 73.0% against 97.8% (Temurin 25, builds
    # beside), so the check is that JFR sees the worker's run at all and
    # mostly in sieve; the error is a metric, and said.
    got, want = r["worker"]
    wn = r["worker_samples"]
    tol = bias + SIGMAS * binomial(want, wn)
    metric("jfr_worker_err_" + label, got - want)
    check(wn > 0 and got > JFR_WORKER_MIN, "JFR (%s): sieve in %.1f%% of the worker's %d "
          "samples, ThreadMXBean says %.1f%%" % (label, got, wn, want))
    if abs(got - want) > tol:
        print("    JFR %s: the worker's sieve %.1f%% of %d samples, ThreadMXBean %.1f%% "
              "(JFR's own error, over %.1f points)" % (label, got, wn, want, tol))
    for name in ("main", "worker"):
        share, total, others = jt.entry_share(stacks, truth["threads"][name],
                                              jt.ENTRIES + jt.START_ENTRIES)
        metric("jfr_entry_share_%s_%s" % (label, name), share)
        check(total and share >= ENTRY_MIN_JFR, "JFR (%s): %.2f%% of %s's %d samples reach "
              "its entry; the others' outermost frames: %s" % (label, share, name, total,
                                                              top_items(others)))


def check_rules_agree(truth, stacks, label):
    """The same samples read from JFR and from a profile.json holding them
    (javatruth.as_profile) give the same phase, leaf and entry shares,
    native frames under the JNI phase, and check_ledger's comparison with
    JFR finds no difference: the profile side of the rules is right
    before there is a Java profile of stacktreed's to read."""
    main, worker = truth["threads"]["main"], truth["threads"]["worker"]
    prof = jt.as_profile(stacks, pid=1)
    mine = jt.profile_stacks(prof)
    for tid in (main, worker):
        a = jt.phase_counts(jt.of_thread(mine, tid), jt.PHASES)
        b = jt.phase_counts(jt.of_thread(stacks, tid), jt.PHASES)
        check(a == b, "%s: phase counts read from a profile %s, from JFR %s" % (label, a, b))
        a, b = jt.entry_share(mine, tid), jt.entry_share(stacks, tid)
        check(a == b, "%s: entry shares read from a profile %s, from JFR %s" % (label, a, b))
    a, b = jt.leaf_shares(mine, {main, worker}), jt.leaf_shares(stacks, {main, worker})
    rows = jt.compare_top(a[0], b[0])
    check(a[1] == b[1] and rows and all(abs(r[3]) < 1e-9 for r in rows),
          "%s: leaf shares read from a profile differ from JFR's:\n%s" % (label, jt.table(rows)))
    hit, total = native_under(prof, main, jt.PHASES["deflate"])
    deflate_n = sum(s.count for s in jt.of_thread(stacks, main, "N")
                    if jt.PHASES["deflate"] in s.frames)
    check(hit == deflate_n and total >= hit, "%s: %d native leaves under %s in the profile, "
          "JFR has %d" % (label, hit, jt.PHASES["deflate"], deflate_n))


def top_items(d, n=5):
    return sorted(d.items(), key=lambda kv: -kv[1])[:n]


# ---- stacktreed on the workload -------------------------------------------------

def ledger_args(home, mode, jvm_opts=(), seconds=SECONDS):
    return jt.ledger_argv(home, seconds, mode == "xint", jvm_opts,
                          ["recurse=1,inline=1,matrix=1,stream=1,deflate=1,worker=1", DEPTH])


def wait_ready(p):
    """Until the JVM p (stdout piped) prints that main() runs."""
    line = p.stdout.readline()
    check(line.strip() == "ready", "the workload did not start: %r" % line)


def wait_held(d):
    """Until daemon d says that its main loop is held (the test hook)."""
    end = time.time() + 60
    while True:
        line = d.readline(end)
        if not line:
            break
        if "main loop held" in line:
            return
    # its summary says whether it found the JVM (java: lines) and how
    # far it got (once: 1 of 26 loaded runs, nothing but its first line)
    try:
        _, err = d.stop(timeout=30)
    except Exception as e:  # (its summary is only the message's detail)
        err = "".join(d.head) + "(no summary: %s)" % e
    raise Failure("stacktreed did not hold its main loop within 60 s: " + err[-3000:])


def profiled_ledger(home, mode, attach, loaded=False, with_jfr=False, seconds=SECONDS,
                    defer_all=False):
    """Ledger run under stacktreed: attach "cmd" (-- CMD), "pid" (--pid of
    a JVM waiting for its go file), "all" (-a, the JVM started once
    sampling has) or "held" (--pid, the daemon's main loop held from when
    it found the JVM until the JVM exits: STACKTREED_TEST_JAVA_STALL; the
    go file once it is held). Returns (profile, truth, JFR's Stacks of
    the same run or None, the JVM's pid, stacktreed's stderr). defer_all:
    every sample deferred to the daemon (STACKTREED_TEST_DEFER=all)."""
    tmp = tempfile.mkdtemp(prefix="st-it-jfr-")
    rec = os.path.join(tmp, "ledger.jfr")
    opts = jt.jfr_options(home, rec, tmp) if with_jfr else []
    argv = ledger_args(home, mode, opts, seconds)
    t0 = time.time()
    try:
        # the spinners load the profiled run (to the daemon's stop), not
        # the reading of its profile and JFR's after: the schema check of
        # a 3.4 MB profile and JfrFold's JVM took over half of a loaded
        # -- java test's 27-68 s beside them (docs/java-accuracy.md)
        with busy_cpus() if loaded else contextlib.nullcontext():
            if attach == "cmd":
                out, err, rep = run_profiled(["-F", FREQ, "--"] + argv,
                                             timeout=jt.JVM_TIMEOUT * 2)
                pid = None
            else:
                out = tempfile.mkdtemp(prefix="st-it-java-")
                report = os.path.join(out, "workload.txt")
                env = dict(os.environ, WL_REPORT=report)
                p = d = None
                try:
                    if attach in ("pid", "held"):
                        # the workload's clocks start once sampling has
                        env["WL_GO"] = os.path.join(out, "go")
                        p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
                        wait_ready(p)
                        if attach == "pid":
                            d = Daemon(["--pid", str(p.pid), "-F", FREQ, "-o", out],
                                       timeout=120)
                        else:
                            denv = dict(os.environ, STACKTREED_TEST_JAVA_STALL=str(p.pid))
                            if defer_all:
                                denv["STACKTREED_TEST_DEFER"] = "all"
                            d = Daemon(["--pid", str(p.pid), "-F", BEHIND_FREQ, "-o", out],
                                       timeout=120, env=denv)
                            wait_held(d)
                        open(env["WL_GO"], "w").close()
                    else:
                        d = Daemon(["-a", "-F", FREQ_ALL, "-o", out], timeout=120)
                        p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
                    p.communicate(timeout=jt.JVM_TIMEOUT)
                    check(p.returncode == 0, "the workload exited %d" % p.returncode)
                    # -a on the busy test machine: ~100,000 samples of every
                    # process to fold and name (60 s was not enough once)
                    rc, err = d.stop(timeout=STOP_TIMEOUT)
                finally:
                    # a JVM waiting for its go file waits for ever
                    for q in (p, d and d.p):
                        if q is not None and q.poll() is None:
                            q.kill()
                            q.wait()
                check(rc == 0, "stacktreed: " + err)
                rep, pid = read_report(report), p.pid
        t1 = time.time()
        prof = load(out)
        t2 = time.time()
        jfr = jt.jfr_stacks(home, rec) if with_jfr else None
        print("    run %.0f s, its profile read %.0f s%s"
              % (t1 - t0, t2 - t1, ", JFR's %.0f s" % (time.time() - t2) if with_jfr else ""))
        shutil.rmtree(out, ignore_errors=True)
        return prof, jt.truth_from_report(rep), jfr, pid, err
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def native_under(prof, tid, method, modules=("libz", "libzip")):
    """(samples under the Java frame method whose leaf is native code of
    one of modules, all samples under it) in thread tid."""
    hit = total = 0
    for t in prof["threads"]:
        if t["tid"] != tid:
            continue
        stack = [(t["root"], False)]
        while stack:
            n, under = stack.pop()
            under = under or (jt.is_java(n) and jt.norm(n["function"] or "") == method)
            if under and n["base"]:
                total += n["base"]
                mod = os.path.basename(n.get("module") or "")
                if not jt.is_java(n) and any(mod.startswith(m) for m in modules):
                    hit += n["base"]
            stack.extend((c, under) for c in n["children"])
    return hit, total


def cut_share(others, total):
    """Percent of total samples cut short, from entry_share()'s others."""
    return 100.0 * sum(v for k, v in others.items() if k.endswith(" (cut short)")) / max(total, 1)


def within_late_bounds(share, cut):
    """The late walks' bounds (LATE_CUT_MAX above): at most 100 -
    ENTRY_MIN% short of the entry unexplained, at most LATE_CUT_MAX% cut
    short for a counted reason."""
    return share + cut >= ENTRY_MIN and cut <= LATE_CUT_MAX


def check_ledger(prof, truth, jfr, label, what, err=None):
    """Every check of one profiled run of the workload."""
    check(jt.java_nodes(prof) > 0, jt.no_java_frames(prof, what))
    main, worker = truth["threads"]["main"], truth["threads"]["worker"]
    stacks = jt.profile_stacks(prof)
    fails = []
    # each phase's share of the main thread's phase samples
    counts = jt.phase_counts(jt.of_thread(stacks, main), jt.PHASES)
    got, want = jt.shares(counts), jt.truth_shares(truth, jt.PHASES)
    n = sum(counts.values())
    worst = 0.0
    for p in jt.PHASES:
        metric("java_share_err_%s_%s" % (label, p), got[p] - want[p])
        worst = max(worst, abs(got[p] - want[p]))
        # the 2 points, plus the run's own sampling noise
        tol = TOL + SIGMAS_PHASE * binomial(want[p], n)
        if abs(got[p] - want[p]) > tol:
            fails.append("%s in %.1f%% of main's %d phase samples, ThreadMXBean says %.1f%% "
                         "(allowed %.1f points)" % (p, got[p], n, want[p], tol))
    metric("java_share_maxerr_" + label, worst)
    print("    %s: %d phase samples of main, phases within %.2f points" % (label, n, worst))
    # the worker's sieve (its sleeps' wake-ups are the rest)
    # (its measured run, its clock reads out of both: javatruth.worker_share;
    # with them in, under the JIT 2.3-5.2 points under the truth: the
    # samples before its clock started and those a read's interrupts-off
    # kernel path collects, 4.7-5.0% of the worker's for reads costing 1.6%)
    wgot, wwant, wn = jt.worker_share(stacks, truth, worker)
    metric("java_worker_err_" + label, wgot - wwant)
    print("    %s: sieve in %.1f%% of the worker's %d samples, ThreadMXBean says %.1f%%"
          % (label, wgot, wn, wwant))
    if abs(wgot - wwant) > TOL + 2 * binomial(wwant, wn):
        fails.append("sieve in %.1f%% of the worker's %d samples, ThreadMXBean says %.1f%%"
                     % (wgot, wn, wwant))
    names = {t["tid"]: t["comm"] for t in prof["threads"]}
    if names.get(worker) != "worker":
        fails.append("the worker thread (tid %d) is named %r" % (worker, names.get(worker)))
    # complete stacks. A run whose Java walks were mostly made late (the
    # early program's samples, before the Java walker was in: under load
    # 4,476-5,418 of 5,583-6,576 walks in a 6 s -- java run, 2026-12-01)
    # is held to the late walks' bounds (test_java_accuracy_behind_late):
    # at most 100 - ENTRY_MIN% short of the entry unexplained, at most
    # LATE_CUT_MAX% cut short for a counted reason. (Once in a loaded CI
    # run: 98.72% of 4,449 at the entry, the rest cut short, 42 of them
    # at Ledger.phaseDeflate.)
    walks = re.search(r"java: JVMs seen \d+; walks (\d+)", err or "")
    late = re.search(r"java: .*samples unwound late (\d+) \(", err or "")
    mostly_late = walks and late and 2 * int(late.group(1)) > int(walks.group(1))
    for name, tid in (("main", main), ("worker", worker)):
        share, total, others = jt.entry_share(stacks, tid)
        cut = cut_share(others, total)
        metric("java_entry_share_%s_%s" % (label, name), share)
        if share < ENTRY_MIN and not (mostly_late and within_late_bounds(share, cut)):
            fails.append("%.2f%% of %s's %d samples with Java frames reach its entry, %.2f%% "
                         "cut short (Java walks %s, late %s); the others' outermost Java "
                         "frames: %s" % (share, name, total, cut,
                                         walks and walks.group(1), late and late.group(1),
                                         top_items(others)))
    # the JNI call: zlib's frames under the Java method that called it
    hit, total = native_under(prof, main, jt.PHASES["deflate"])
    metric("java_deflate_native_share_" + label, 100.0 * hit / max(total, 1))
    if not total or hit < 0.5 * total:
        fails.append("%d of the %d samples under %s end in libz/libzip"
                     % (hit, total, jt.PHASES["deflate"]))
    # beside JFR on the same run: each thread's top 15 methods by leaf
    # share, over the measured run (JFR does not see its own start-up)
    if jfr is not None:
        mine_run, ref_run = jt.in_run(stacks), jt.in_run(jfr)
        for name, tid in (("main", main), ("worker", worker)):
            mine, n_mine = jt.leaf_shares(mine_run, {tid})
            ref, n_ref = jt.leaf_shares(ref_run, {tid})
            rows = jt.compare_top(mine, ref)
            # the difference over its allowance: TOL_JFR plus SIGMAS
            # standard deviations of the difference of two shares, plus
            # JFR's own error on this run (its share against the truth) in
            # the phase the method's JFR samples are under: JFR is a peer,
            # not the truth (its stream phase 2.7 points under on a run
            # where stacktreed's phases were within 0.51 and its
            # ReduceOps$8ReducingSink.accept leaf 3.7 points under ours)
            # (the worker is one phase, its sieve: JFR's own error there,
            # its sieve share against ThreadMXBean's, is every one of its
            # methods' allowance: under load JFR's -Xint worker put 88.6%
            # in sieve where the truth and stacktreed said 98-99%, and the
            # 10 points went to Math.round and Worker.run)
            vs = jt.jfr_vs_truth(truth, jfr)
            if name == "main":
                phase_of = jt.leaf_phases(ref_run, {tid})
                bias = {m: abs(vs["main"][p][0] - vs["main"][p][1])
                        for m, p in phase_of.items()}
            else:
                bias = {r[0]: abs(vs["worker"][0] - vs["worker"][1]) for r in rows}
            over = [(r, abs(r[3]) - TOL_JFR - bias.get(r[0], 0.0) -
                     SIGMAS * math.hypot(binomial(r[1], n_mine), binomial(r[2], n_ref)))
                    for r in rows]
            worst = abs(rows[0][3]) if rows else 0.0
            metric("java_jfr_top15_maxerr_%s_%s" % (label, name), worst)
            print("    %s: %s's top 15 methods within %.2f points of JFR's (%d and %d samples)"
                  % (label, name, worst, n_mine, n_ref))
            if not n_ref or any(o > 0 for _, o in over):
                r = jt.jfr_vs_truth(truth, jfr)
                fails.append("%s's top 15 methods by leaf share against JFR's on the same run (%d "
                             "and %d samples; method, stacktreed %%, JFR %%, difference):\n%s\n"
                             "    (JFR's own phases against the truth on this run: %s)"
                             % (name, n_mine, n_ref, jt.table(rows),
                                ", ".join("%s %+.1f" % (p, a - b)
                                          for p, (a, b) in r["main"].items())))
    check(not fails, "%s (%s):\n  " % (what, label) + "\n  ".join(fails))


def accuracy(major, mode, attach, loaded=False, gate=PENDING):
    if gate:
        gated(gate)
    jt.require_classes()
    home = dict(jt.JDKS)[major]
    if not os.access(jt.java(home), os.X_OK):
        if major == "17":
            raise Skip("no JDK 17 (%s)" % home)
        print("    (JDK %s not installed: %s)" % (major, home))
        return
    with_jfr = attach == "cmd"
    t0 = time.time()
    prof, truth, jfr, _, err = profiled_ledger(home, mode, attach, loaded, with_jfr)
    label = "%s_%s_%s%s" % (major, attach, mode, "_loaded" if loaded else "")
    print("    %s: profiled in %.0f s, %d samples" % (label, time.time() - t0, prof["samples"]))
    what = "stacktreed %s on Ledger (JDK %s, %s%s)" % (
        {"cmd": "-- java", "pid": "--pid", "all": "-a"}[attach], major,
        "-Xint" if mode == "xint" else "JIT", ", both CPUs busy" if loaded else "")
    check_ledger(prof, truth, jfr, label, what, err)


def test_java_accuracy_cmd_jit():
    accuracy("17", "jit", "cmd", gate=None)


def test_java_accuracy_cmd_xint():
    accuracy("17", "xint", "cmd", gate=None)


def test_java_accuracy_pid_jit():
    accuracy("17", "jit", "pid", gate=None)


def test_java_accuracy_pid_xint():
    accuracy("17", "xint", "pid", gate=None)


def test_java_accuracy_all_jit():
    accuracy("17", "jit", "all", gate=None)


def test_java_accuracy_all_xint():
    accuracy("17", "xint", "all", gate=HEAVY)


def test_java_accuracy_cmd_jit_loaded():
    accuracy("17", "jit", "cmd", loaded=True, gate=None)


def test_java_accuracy_cmd_xint_loaded():
    accuracy("17", "xint", "cmd", loaded=True, gate=None)


def test_java_accuracy_pid_jit_loaded():
    accuracy("17", "jit", "pid", loaded=True, gate=None)


def test_java_accuracy_all_jit_loaded():
    accuracy("17", "jit", "all", loaded=True, gate=HEAVY)


def test_java_accuracy_jdk25_jit():
    accuracy("25", "jit", "cmd", gate=HEAVY)


def test_java_accuracy_jdk25_xint():
    accuracy("25", "xint", "cmd", gate=HEAVY)


# ---- real programs ------------------------------------------------------------

def java_threads(prof, pid=None):
    """{tid: comm} of the threads with a Java frame in some sample."""
    out = {}
    for s in jt.profile_stacks(prof, pid):
        if s.frames:
            out[s.tid] = s.thread
    return out


def check_complete(prof, what, label, pid=None, min_samples=100):
    """>= ENTRY_MIN% of each Java thread's samples with Java frames reach an
    entry (a main or run method, or one the JVM calls); threads with fewer
    than min_samples such samples are counted together."""
    check(jt.java_nodes(prof) > 0, jt.no_java_frames(prof, what))
    stacks = jt.profile_stacks(prof, pid)
    entries = jt.PROGRAM_ENTRIES + jt.START_ENTRIES
    fails, small = [], [0, 0, {}]
    overall = [0, 0]
    for tid, comm in sorted(java_threads(prof, pid).items()):
        share, total, others = jt.entry_share(stacks, tid, entries)
        good = round(share * total / 100)
        overall[0] += good
        overall[1] += total
        if total < min_samples:
            small[0] += good
            small[1] += total
            for k, v in others.items():
                small[2][k] = small[2].get(k, 0) + v
            continue
        metric("java_complete_%s_%s" % (label, comm.replace(" ", "_")), share)
        print("    %s: %s (tid %d): %.2f%% of %d samples complete" % (label, comm, tid, share,
                                                                    total))
        if share < ENTRY_MIN:
            fails.append("%s (tid %d): %.2f%% of %d samples reach an entry; the others' "
                         "outermost Java frames: %s" % (comm, tid, share, total,
                                                        top_items(others)))
    if small[1]:
        share = 100.0 * small[0] / small[1]
        if share < ENTRY_MIN:
            fails.append("threads with fewer than %d Java samples each: %.2f%% of %d reach an "
                         "entry: %s" % (min_samples, share, small[1], top_items(small[2])))
    check(overall[1] > 0, "%s: no sample with a Java frame" % what)
    metric("java_complete_%s" % label, 100.0 * overall[0] / overall[1])
    check(not fails, "%s:\n  " % what + "\n  ".join(fails))


def source_tree(tmp):
    """(javac, its options, files): part of java.base's java/util from the
    JDK's own src.zip, compiled as java.base patched (JDK 17's when
    openjdk-17-source is installed, else Temurin 25's with its own javac)."""
    for major, home, srczip in (("17", jt.JDKS[0][1], "/usr/lib/jvm/openjdk-17/src.zip"),
                                ("25", jt.JDKS[1][1],
                                 os.path.join(jt.JDKS[1][1], "lib", "src.zip"))):
        javac = os.path.join(home, "bin", "javac")
        if not (os.path.isfile(srczip) and os.access(javac, os.X_OK)):
            continue
        src = os.path.join(tmp, "src")
        os.makedirs(src)
        subprocess.run(["unzip", "-q", srczip, "java.base/java/util/*", "-d", src], check=True,
                       timeout=300)
        top = os.path.join(src, "java.base", "java", "util")
        files = sorted(os.path.join(top, f) for f in os.listdir(top) if f.endswith(".java"))
        opts = ["--patch-module", "java.base=" + os.path.join(src, "java.base"),
                "-implicit:none", "-proc:none", "-nowarn", "-Xlint:none"]
        return major, javac, opts, files[:JAVAC_FILES]
    raise Skip("no JDK source tree: neither /usr/lib/jvm/openjdk-17/src.zip (Debian's "
               "openjdk-17-source) nor Temurin 25's lib/src.zip")


def jdk17():
    """JDK 17's home, the workload's classes built (else Skip)."""
    jt.require_classes()
    home = dict(jt.JDKS)["17"]
    if not os.access(jt.java(home), os.X_OK):
        raise Skip("no JDK 17 (%s)" % home)
    return home


def test_java_accuracy_behind():
    """Both CPUs busy, the daemon's main loop behind: Ledger (JDK 17, JIT) waits
    for its go file as stacktreed --pid starts and finds it, then runs
    BEHIND_SECONDS while the daemon's main loop is held until the JVM is
    gone (STACKTREED_TEST_JAVA_STALL, java.c: what -a beside loops starting
    processes without end did to it, one read of its events ring taking
    8.5-10.3 s, but every time; --pid, as a JVM idle until its go file is
    found under -a only once it is sampled, by the main loop, and that late
    or not at all on a machine busy starting processes). Each method its
    samples show first is reported on java_events and must be read while the
    JVM lives, whatever the main loop does (jevents.c's thread): of its
    threads' leaf samples in Java frames, BEHIND_NAMED% named, at most
    BEHIND_UNREAD% of the methods reported failing to read (the summary's
    count), and each Java phase's method among them (deflate's runs in zlib,
    whose walk up to it a short run may not complete)."""
    home = jdk17()
    t0 = time.time()
    prof, _, _, pid, err = profiled_ledger(home, "jit", "held", loaded=True,
                                           seconds=BEHIND_SECONDS)
    named, unnamed, seen = 0, 0, set()
    for t in prof["threads"]:
        if t["pid"] != pid:
            continue
        for n, _, _ in nodes(t["root"]):
            if not jt.is_java(n):
                continue
            if n["function"].startswith("[java"):
                unnamed += n["base"]
            else:
                named += n["base"]
                seen.add(jt.norm(n["function"]))
    share = 100.0 * named / max(1, named + unnamed)
    metric("java_behind_named", share)
    print("    main loop held: %d of the JVM's %d leaf samples in Java frames "
          "named (%.1f%%), %.0f s" % (named, named + unnamed, share, time.time() - t0))
    summary = [line for line in err.splitlines() if "java:" in line]
    m = re.search(r"methods reported (\d+) \(lost \d+\), read \d+, unreadable (\d+)", err)
    check(m, "no java: methods summary: %s" % summary)
    reported, unreadable = int(m.group(1)), int(m.group(2))
    print("    methods reported %d, unreadable %d" % (reported, unreadable))
    check(named + unnamed >= BEHIND_MIN, "%d leaf samples in Java frames (%d wanted): %s"
          % (named + unnamed, BEHIND_MIN, summary))
    check(share >= BEHIND_NAMED, "%.1f%% of %d leaf samples in Java frames named (%.0f%% "
          "wanted): %s" % (share, named + unnamed, BEHIND_NAMED, summary))
    check(unreadable <= BEHIND_UNREAD * reported / 100,
          "%d of the %d methods reported unreadable (at most %.0f%%): %s"
          % (unreadable, reported, BEHIND_UNREAD, summary))
    missing = [jt.PHASES[ph] for ph in jt.JAVA_PHASES if jt.PHASES[ph] not in seen]
    check(not missing, "phases' methods not named: %s" % missing)


def test_java_accuracy_behind_late():
    """Every sample of Ledger (JDK 17, JIT) deferred to the daemon
    (STACKTREED_TEST_DEFER=all) and its main loop held until the JVM is
    gone (STACKTREED_TEST_JAVA_STALL), as -a on a loaded machine left some
    of them: each sample is taken in and walked after the JVM exited, from
    the memory the walk as it came kept (read on the deferred ring's
    consumer thread, the process alive), the JNI call's samples from the
    code cache address above their zlib leaf. The main thread's phases
    within TOL of the truth, ENTRY_MIN% of its samples with Java frames at
    its entry or at a walk stopped for a counted reason, at most
    LATE_CUT_MAX% the latter, zlib's samples under Ledger.phaseDeflate. Before (the walks
    as they came made by the main loop, here after the exit; --pid's JVM
    not walked once exited): no Java frame in any late walk."""
    home = jdk17()
    t0 = time.time()
    prof, truth, _, _, err = profiled_ledger(home, "jit", "held", seconds=BEHIND_SECONDS,
                                             defer_all=True)
    # (and the deferred ring's lines: whether its reader paused, the inbox
    # full while the main loop was held, so that samples came after the exit)
    summary = [line for line in err.splitlines() if "java:" in line or "deferred" in line]
    check(jt.java_nodes(prof) > 0, jt.no_java_frames(prof, "late walks") + ": %s" % summary)
    main = truth["threads"]["main"]
    stacks = jt.profile_stacks(prof)
    counts = jt.phase_counts(jt.of_thread(stacks, main), jt.PHASES)
    got, want = jt.shares(counts), jt.truth_shares(truth, jt.PHASES)
    n = sum(counts.values())
    worst = max(abs(got[p] - want[p]) for p in jt.PHASES)
    share, total, others = jt.entry_share(stacks, main)
    cut = cut_share(others, total)
    hit, under = native_under(prof, main, jt.PHASES["deflate"])
    print("    all walked late: %d phase samples of main, phases within %.2f points, %.2f%% of "
          "%d at its entry (%.2f%% cut short), %d of %d under %s in zlib, %.0f s"
          % (n, worst, share, total, cut, hit, under, jt.PHASES["deflate"], time.time() - t0))
    own = re.search(r"unreadable (\d+), of them named by their nmethod's method (\d+)",
                    " ".join(summary))
    if own:
        print("    compiled frames unreadable late %s, of them named by their nmethod's method %s"
              % own.groups())
    metric("java_late_share_maxerr", worst)
    metric("java_late_entry_share_main", share)
    check(n >= BEHIND_MIN, "%d phase samples of main walked late (%d wanted): %s"
          % (n, BEHIND_MIN, summary))
    for p in jt.PHASES:
        tol = TOL + SIGMAS_PHASE * binomial(want[p], n)
        check(abs(got[p] - want[p]) <= tol, "walked late: %s in %.1f%% of main's %d phase "
              "samples, ThreadMXBean says %.1f%% (allowed %.1f points): %s"
              % (p, got[p], n, want[p], tol, summary))
    # (the summary's java lines say whether an unnamed compiled frame's
    # nmethod was gone or unreadable, and how many walks came as they came)
    check(within_late_bounds(share, cut),
          "walked late: %.2f%% of main's %d samples with Java frames reach its entry, %.2f%% "
          "cut short (at most %.1f%% not reaching it unexplained, %.1f%% cut short); the "
          "others' outermost Java frames: %s; %s"
          % (share, total, cut, 100 - ENTRY_MIN, LATE_CUT_MAX, top_items(others), summary))
    check(under and hit >= 0.5 * under, "walked late: %d of the %d samples under %s end in "
          "libz/libzip" % (hit, under, jt.PHASES["deflate"]))


def test_java_real_javac():
    """javac (a JDK's own compiler, in its JVM) compiling JAVAC_FILES of
    java.base's java/util sources: ~12 s of CPU here."""
    gated(HEAVY)
    tmp = tempfile.mkdtemp(prefix="st-it-javac-")
    try:
        major, javac, opts, files = source_tree(tmp)
        classes = os.path.join(tmp, "classes")
        argfile = os.path.join(tmp, "files")
        with open(argfile, "w") as f:
            f.write("\n".join(files) + "\n")
        t0 = time.time()
        out, err, _ = run_profiled(["-F", "999", "--", javac] + opts +
                                   ["-d", classes, "@" + argfile], timeout=900)
        print("    javac (JDK %s) of %d files: %.0f s under stacktreed" % (major, len(files),
                                                                          time.time() - t0))
        check(os.path.exists(os.path.join(classes, "java.base", "java", "util",
                                          "ArrayList.class")) or
              any(f.endswith(".class") for _, _, fs in os.walk(classes) for f in fs),
              "javac wrote no class: %s" % err[-500:])
        prof = load(out)
        shutil.rmtree(out, ignore_errors=True)
        check_complete(prof, "stacktreed -- javac (JDK %s)" % major, "javac")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


ANT = "/usr/bin/ant"
BUILD_XML = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads", "java",
                         "ant", "build.xml")


def java_project(src, n):
    """n generated classes in package gen, each calling the one before."""
    pkg = os.path.join(src, "gen")
    os.makedirs(pkg)
    for i in range(n):
        with open(os.path.join(pkg, "C%d.java" % i), "w") as f:
            f.write("""package gen;
import java.util.*;
public class C%(i)d {
    private final Map<String, List<Integer>> m = new HashMap<>();
    public int f(int k) {
        List<Integer> l = m.computeIfAbsent("k" + k, x -> new ArrayList<>());
        for (int j = 0; j < %(m)d; j++) l.add(j * k %% 7);
        return l.stream().mapToInt(Integer::intValue).sum() + %(prev)s;
    }
    public String name() { return String.format("C%%d-%%s", %(i)d, m.keySet()); }
}
""" % {"i": i, "m": 10 + i % 50, "prev": ("new C%d().f(k - 1)" % (i - 1)) if i else "0"})


def test_java_real_ant():
    """ant (Debian's, on JDK 17) running tests/workloads/java/ant/build.xml:
    ANT_CLASSES generated classes compiled by javac inside ant's JVM, then
    jarred."""
    gated(HEAVY)
    if not os.access(ANT, os.X_OK):
        raise Skip("ant is not installed (Debian: apt-get install ant)")
    tmp = tempfile.mkdtemp(prefix="st-it-ant-")
    try:
        java_project(os.path.join(tmp, "src"), ANT_CLASSES)
        env = {"JAVA_HOME": jt.JDKS[0][1]}
        t0 = time.time()
        out, err, _ = run_profiled(["-F", "999", "--", ANT, "-q", "-f", BUILD_XML,
                                    "-Dsrc=" + os.path.join(tmp, "src"),
                                    "-Dout=" + os.path.join(tmp, "out")], env_extra=env,
                                   timeout=900)
        print("    ant: %.0f s under stacktreed" % (time.time() - t0))
        check(os.path.exists(os.path.join(tmp, "out", "gen.jar")), "ant built no jar: " + err[-500:])
        prof = load(out)
        shutil.rmtree(out, ignore_errors=True)
        check_complete(prof, "stacktreed -- ant", "ant")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
