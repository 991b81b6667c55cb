"""javatruth.py - the Java accuracy harness (issue 32, items 4 and 5): the
bundled workload's own truth, JDK Flight Recorder's samples and
stacktreed's profile.json brought to one form and measured by one rule.

The workload is tests/workloads/java/Ledger.java (built into
build/workloads/java by `make`): five phases in its main thread, each
measuring its own CPU time through ThreadMXBean, and a thread named
"worker" sieving in Ledger.sieve half of the time; its last line of
output ("ledger-truth {json}"), or $WL_REPORT, is the truth.

Every profile, JFR's or stacktreed's, becomes a list of Stack records:
the sampled thread (Linux tid and name), the Java frames of the sample
outermost first, each "pkg.Class.method" as the JVM names it (nested
classes with '$'; a hidden class's address taken out: JFR and the JVM
write it differently), and a kind:
  "E"  the innermost frame is Java code (interpreted, compiled or inlined):
       what JFR's jdk.ExecutionSample records;
  "N"  Java frames under native code (a JNI method such as
       Deflater.deflateBytesBytes, or the JVM's runtime called from Java):
       what JFR's jdk.NativeMethodSample records for a thread in a native
       method;
  "-"  no Java frame (stacktreed only: the JVM's own threads, start-up).
The rules, the same for both:
  phase share   a phase's samples (its method anywhere on the stack) over
                the samples of all the phases of that thread;
  leaf share    a method's share of the "E" samples of the given threads
                as their innermost frame (the top-15 comparison);
  entry share   of a thread's samples with Java frames, those whose
                outermost Java frame is the thread's entry (Ledger.main,
                java.lang.Thread.run; a real program's main or run) or
                a method the JVM calls as it starts (START_ENTRIES), the
                stack not cut short.

JFR is run with its sampling period at 1 ms for both events (the profile
settings' 10 and 20 ms give a few hundred samples a run, too few for
points) and a stack depth of 1024 frames (its default of 64 cuts every
sample of the 200-deep recursion). Its recording is read by JfrFold (the
JDK's own reader: `jfr print` of deep stacks is ~150 MB of text a run).
"""
import json
import os
import re
import subprocess

from stcheck import BUILD, Failure, Skip, check

JDKS = [("17", "/usr/lib/jvm/java-17-openjdk-amd64"),
        ("25", "/usr/lib/jvm/temurin-25-jdk-amd64")]
CLASSES = os.path.join(BUILD, "workloads", "java")
# each phase by its method on the stack
PHASES = {"recurse": "Ledger.descend", "inline": "Ledger.phaseInline",
          "matrix": "Ledger$Matrix.multiply", "stream": "Ledger.phaseStream",
          "deflate": "Ledger.phaseDeflate"}
# the phases that run Java code (JFR's ExecutionSample); deflate runs in
# zlib, under a native method
JAVA_PHASES = ("recurse", "inline", "matrix", "stream")
ENTRIES = ("Ledger.main", "java.lang.Thread.run")
# Outermost Java frames a complete stack may have besides a thread's
# entry: methods the JVM itself calls, mostly while it starts (a class's
# static initializer, the launcher loading the main class, the class
# loaders, the system's initialization, JFR's start-up command, method
# handle linkage; the main thread's own Thread and ThreadGroup objects,
# built by the JVM; a thread's exit and the JVM's shutdown, both called
# by the JVM).
# A walk stopped short ends at an ordinary method.
START_ENTRIES = (".<clinit>", "sun.launcher.LauncherHelper.", "java.lang.System.initPhase1",
                 "java.lang.System.initPhase2", "java.lang.System.initPhase3",
                 "java.lang.Thread.<init>", "java.lang.ThreadGroup.<init>",
                 "java.lang.Thread.exit", "java.lang.Shutdown.shutdown",
                 "jdk.internal.loader.", "java.lang.ClassLoader.",
                 "jdk.jfr.internal.", "java.lang.invoke.MethodHandleNatives.")
# a real program's threads: any main or run method is an entry
PROGRAM_ENTRIES = (".main", ".run")
WORKER = "Ledger.sieve"
# a sample of the measured run: one of these on its stack (the phases, the
# worker's loop); JFR records from after its own start-up, which
# stacktreed sees (JFR's start command on the main thread: 20% of its
# Java samples in a 6 s run)
IN_RUN = tuple(PHASES.values()) + ("Ledger$Worker.run",)
# the workload's clock (ThreadMXBean's native method)
CLOCK = "sun.management.ThreadImpl."
JFR_PERIOD = "1 ms"
JFR_STACKDEPTH = 1024
# start-up of a JVM on the busy 2-CPU machine: seconds, not the 0.3 idle
JVM_TIMEOUT = 300


class Stack:
    __slots__ = ("tid", "thread", "kind", "frames", "count", "truncated")

    def __init__(self, tid, thread, kind, frames, count, truncated=False):
        self.tid, self.thread, self.kind = tid, thread, kind
        self.frames, self.count, self.truncated = tuple(frames), count, truncated


def installed_jdks():
    """(major, home) of each JDK of JDKS installed here; Skip without JDK
    17 (the one the issue requires)."""
    found = []
    for major, home in JDKS:
        if os.access(os.path.join(home, "bin", "java"), os.X_OK):
            found.append((major, home))
        elif major == "17":
            raise Skip("no JDK 17 (%s): apt-get install openjdk-17-jdk-headless" % home)
        else:
            print("    (JDK %s not installed: %s)" % (major, home))
    return found


def require_classes():
    if not os.path.exists(os.path.join(CLASSES, "Ledger.class")):
        raise Skip("%s/Ledger.class not built: `make` builds it with JDK 17's javac "
                   "(tests/workloads/extra.mk)" % CLASSES)


def java(home):
    return os.path.join(home, "bin", "java")


_HIDDEN = re.compile(r"[./+](?:0x[0-9a-fA-F]+|[0-9]+)(?=\.|$)")
_SIG = re.compile(r"\s*\(.*$")


def norm(name):
    """One spelling of a Java method for both profilers: no signature, no
    hidden class suffix (Ledger$$Lambda$14/0x0000000801001000 as the JVM
    names it, +0x... in its Symbol; JFR writes its mirror's identity hash
    in decimal instead: Ledger$$Lambda$14.898557489), '/' as '.'."""
    name = _SIG.sub("", name)
    name = _HIDDEN.sub("", name)
    return name.replace("/", ".")


# ---- JFR --------------------------------------------------------------------

def jfr_settings(home, path):
    """The JDK's profile settings with both method samplers at JFR_PERIOD."""
    with open(os.path.join(home, "lib", "jfr", "profile.jfc")) as f:
        text = f.read()
    for ev in ("jdk.ExecutionSample", "jdk.NativeMethodSample"):
        pat = re.compile(r'(<event name="%s">.*?<setting name="period"[^>]*>)[^<]*(<)'
                         % re.escape(ev), re.S)
        text, n = pat.subn(r"\g<1>%s\g<2>" % JFR_PERIOD, text, count=1)
        check(n == 1, "no %s period in %s's profile.jfc" % (ev, home))
    with open(path, "w") as f:
        f.write(text)
    return path


def jfr_options(home, recording, tmpdir):
    """java options recording method samples into recording."""
    settings = jfr_settings(home, os.path.join(tmpdir, "st-profile.jfc"))
    return ["-XX:StartFlightRecording=filename=%s,settings=%s" % (recording, settings),
            "-XX:FlightRecorderOptions=stackdepth=%d" % JFR_STACKDEPTH]


def jfr_stacks(home, recording):
    """The recording's jdk.ExecutionSample ("E") and jdk.NativeMethodSample
    ("N") events as Stacks (JfrFold, run by the same JDK)."""
    p = subprocess.run([java(home), "-cp", CLASSES, "JfrFold", recording], capture_output=True,
                       text=True, timeout=JVM_TIMEOUT)
    check(p.returncode == 0, "JfrFold %s: %s" % (recording, p.stderr[-800:]))
    out = []
    for line in p.stdout.splitlines():
        head, frames, count = line.split("\t")
        kind, tid, thread = head.split(" ", 2)
        out.append(Stack(int(tid), thread, kind[0],
                         [norm(f) for f in frames.split(";") if f], int(count),
                         truncated=kind.endswith("T")))
    check(out, "no method samples in %s" % recording)
    return out


# ---- stacktreed -------------------------------------------------------------

def is_java(node):
    """A Java method's frame: runtime java, "pkg.Class.method" (or "[java
    method]" when unreadable). The JVM's own code in its code cache (the
    call stub "StubRoutines::call_stub", adapters, runtime stubs,
    "Interpreter") is runtime java too, but no method: no dot in its name."""
    f = node.get("function") or ""
    return node.get("runtime") == "java" and ("." in f or f.startswith("[java"))


def java_nodes(prof):
    """How many nodes of the profile are Java frames."""
    n = 0
    for t in prof["threads"]:
        stack = [t["root"]]
        while stack:
            x = stack.pop()
            n += is_java(x)
            stack.extend(x["children"])
    return n


def no_java_frames(prof, what):
    """The failure message of a Java check on a profile without one Java
    frame (before the HotSpot walkers: issue 32 items 1-3)."""
    return ("stacktreed shows no Java frames (runtime \"java\") in %s: %d samples, none "
            "with a Java method; the HotSpot walkers (issue 32, items 1-3) have not "
            "landed or did not walk this JVM" % (what, prof["samples"]))


def profile_stacks(prof, pid=None):
    """profile.json's samples (of process pid, default all) as Stacks:
    each node's BASE samples with the Java frames on its path, those under
    a [truncated] root marked cut short (they cannot reach an entry)."""
    out = []
    for t in prof["threads"]:
        if pid is not None and t["pid"] != pid:
            continue
        for top in t["root"]["children"]:
            cut = top["function"] == "[truncated]"
            stack = [(top, ())]
            while stack:
                n, path = stack.pop()
                if is_java(n) and n["function"]:
                    path = path + (norm(n["function"]),)
                if n["base"]:
                    kind = "-" if not path else "E" if is_java(n) else "N"
                    out.append(Stack(t["tid"], t["comm"], kind, path, n["base"], cut))
                stack.extend((c, path) for c in n["children"])
    return out


def as_profile(stacks, pid):
    """Stacks (JFR's) as a profile.json document of the fields the rules
    read: each thread's tree under a native root frame, a "[truncated]"
    root for stacks cut short, a zlib leaf under each "N" stack (a JNI
    method's native code). Lets the tests check that profile_stacks and
    the rules read a profile as they read JFR."""
    def node(function, runtime, module=None):
        return {"function": function, "runtime": runtime, "module": module, "base": 0,
                "cum": 0, "children": [], "kind": "callsite"}
    threads = {}
    for s in stacks:
        if s.tid not in threads:
            root = node(None, "native")
            threads[s.tid] = {"pid": pid, "tid": s.tid, "comm": s.thread[:15], "root": root,
                              "samples": 0}
        t = threads[s.tid]
        path = [t["root"], None]
        path[1] = next((c for c in t["root"]["children"] if c["function"] ==
                        ("[truncated]" if s.truncated else "start_thread")), None)
        if path[1] is None:
            path[1] = node("[truncated]" if s.truncated else "start_thread", "native")
            t["root"]["children"].append(path[1])
        n = path[1]
        frames = [(f, "java", None) for f in s.frames]
        if s.kind == "N":
            frames.append(("deflate_slow", "native", "/usr/lib/x86_64-linux-gnu/libz.so.1"))
        for f, rt, mod in frames:
            c = next((c for c in n["children"] if c["function"] == f), None)
            if c is None:
                c = node(f, rt, mod)
                n["children"].append(c)
            n = c
        n["base"] += s.count
        t["samples"] += s.count
    for t in threads.values():
        def cum(n):
            # iterative: stacks are 200+ frames deep
            order, stack = [], [n]
            while stack:
                x = stack.pop()
                order.append(x)
                stack.extend(x["children"])
            for x in reversed(order):
                x["cum"] = x["base"] + sum(c["cum"] for c in x["children"])
        cum(t["root"])
    return {"threads": list(threads.values()), "samples": sum(t["samples"]
                                                               for t in threads.values())}


# ---- the rules ----------------------------------------------------------------

def of_thread(stacks, tid, kinds=None):
    return [s for s in stacks if s.tid == tid and (kinds is None or s.kind in kinds)]


def phase_counts(stacks, phases):
    """{phase: samples with its method on the stack}."""
    counts = {p: 0 for p in phases}
    for s in stacks:
        for p in phases:
            if PHASES[p] in s.frames:
                counts[p] += s.count
    return counts


def shares(counts):
    """{key: percent of the sum}."""
    total = sum(counts.values())
    return {k: 100.0 * v / total if total else 0.0 for k, v in counts.items()}


def truth_shares(truth, phases):
    return shares({p: truth["phases"][p] for p in phases})


def leaf_shares(stacks, tids, kinds=("E",)):
    """{method: percent of the threads' samples of those kinds that it is
    the innermost Java frame of}, and their number."""
    counts, total = {}, 0
    for s in stacks:
        if s.tid in tids and s.kind in kinds and s.frames:
            counts[s.frames[-1]] = counts.get(s.frames[-1], 0) + s.count
            total += s.count
    return {k: 100.0 * v / total for k, v in counts.items()}, total


# the worker's measured run: its clock starts in Ledger$Worker.run after
# Ledger.tid and (with $WL_GO, under --pid) Ledger.waitGo
WORKER_RUN = "Ledger$Worker.run"
WORKER_BEFORE = ("Ledger.tid", "Ledger.waitGo")


def worker_share(stacks, truth, worker):
    """(stacktreed's share of the worker's samples in sieve, the truth's,
    the samples counted): over the worker's measured run (samples under
    Worker.run once its clock started: not its wait for the go file, its
    thread's start or end), its clock reads (Ledger.cpu) out of both when
    the workload reports their cost ("worker_clock"): the measuring, not
    the work (a CPU-clock sample lands late in a read, which runs with
    interrupts off in the kernel: 5.0% of the worker's samples in one
    --pid JIT run against the ~3% the reads cost)."""
    ph = truth["phases"]
    w = [s for s in stacks if s.tid == worker and WORKER_RUN in s.frames and
         not any(f in WORKER_BEFORE for f in s.frames)]
    clock = "worker_clock" in ph
    if clock:
        w = [s for s in w if "Ledger.cpu" not in s.frames]
    n = sum(s.count for s in w)
    got = 100.0 * sum(s.count for s in w if WORKER in s.frames) / max(n, 1)
    total = ph["worker"] - (ph["worker_clock"] if clock else 0.0)
    return got, 100.0 * ph["worker_sieve"] / max(total, 1e-9), n


def in_run(stacks):
    """The stacks of the measured run (IN_RUN)."""
    return [s for s in stacks if any(f in IN_RUN for f in s.frames)]


def is_entry(frame, entries):
    """frame is one of entries: equal to one, or, for those starting or
    ending with '.', starting or ending with it."""
    for e in entries:
        if frame == e or (e.startswith(".") and frame.endswith(e)) or \
                (e.endswith(".") and frame.startswith(e)):
            return True
    return False


def entry_share(stacks, tid, entries=ENTRIES + START_ENTRIES):
    """(percent of the thread's samples with Java frames whose outermost
    Java frame is an entry (is_entry) and which were not cut short, those
    samples, {outermost frame: samples} of the others)."""
    good = total = 0
    others = {}
    for s in stacks:
        if s.tid != tid or not s.frames:
            continue
        total += s.count
        if is_entry(s.frames[0], entries) and not s.truncated:
            good += s.count
        else:
            key = s.frames[0] + (" (cut short)" if s.truncated else "")
            others[key] = others.get(key, 0) + s.count
    return (100.0 * good / total if total else 0.0), total, others


def compare_top(mine, ref, n=15):
    """[(method, mine %, ref %, difference)] over the top n methods of
    either, largest difference first."""
    top = sorted(ref, key=lambda k: -ref[k])[:n] + sorted(mine, key=lambda k: -mine[k])[:n]
    rows = []
    for m in dict.fromkeys(top):
        a, b = mine.get(m, 0.0), ref.get(m, 0.0)
        rows.append((m, a, b, a - b))
    return sorted(rows, key=lambda r: -abs(r[3]))


def table(rows, n=8):
    return "\n".join("      %-60s %6.2f %6.2f %+6.2f" % (m[:60], a, b, d) for m, a, b, d in rows[:n])


# ---- the workload -------------------------------------------------------------

def parse_truth(text):
    """The workload's "ledger-truth {json}" line."""
    for line in reversed(text.splitlines()):
        if line.startswith("ledger-truth "):
            return json.loads(line[len("ledger-truth "):])
    raise Failure("no ledger-truth line in the workload's output:\n" + text[-800:])


def truth_from_report(rep):
    """The same from a WL_REPORT file read by stcheck.read_report."""
    check(rep["phases"] and rep["threads"], "the workload wrote no report")
    return {"phases": rep["phases"], "threads": rep["threads"]}


def ledger_argv(home, seconds, xint=False, jvm_opts=(), args=()):
    return [java(home), "-Xmx256m"] + (["-Xint"] if xint else []) + list(jvm_opts) + \
        ["-cp", CLASSES, "Ledger", "%g" % seconds] + list(args)


def run_ledger(home, seconds, xint=False, jvm_opts=(), args=(), env=None):
    """The workload run to its end: its truth and its output."""
    p = subprocess.run(ledger_argv(home, seconds, xint, jvm_opts, args), capture_output=True,
                       text=True, timeout=JVM_TIMEOUT + seconds, env=env)
    check(p.returncode == 0, "Ledger exited %d: %s" % (p.returncode, p.stderr[-800:]))
    return parse_truth(p.stdout), p.stdout + p.stderr


def leaf_phases(stacks, tids, kinds=("E",)):
    """{method: the Java phase (JAVA_PHASES) that most of the threads'
    samples with that method as the innermost Java frame are under}, for
    the methods under one."""
    votes = {}
    for s in stacks:
        if s.tid not in tids or s.kind not in kinds or not s.frames:
            continue
        for p in JAVA_PHASES:
            if PHASES[p] in s.frames:
                v = votes.setdefault(s.frames[-1], {})
                v[p] = v.get(p, 0) + s.count
                break
    return {m: max(v, key=v.get) for m, v in votes.items()}


def jfr_vs_truth(truth, stacks):
    """What JFR says of the workload against its truth: {"main": {phase:
    (jfr %, truth %)} over the Java phases (E samples), "deflate_native":
    share of main's N samples outside the clock under Ledger.phaseDeflate,
    "worker": (jfr %
    of the worker's E samples in sieve, truth %), "samples": main's E}."""
    main, worker = truth["threads"]["main"], truth["threads"]["worker"]
    e = of_thread(stacks, main, "E")
    got = shares(phase_counts(e, JAVA_PHASES))
    want = truth_shares(truth, JAVA_PHASES)
    # the thread CPU clock's own native method is the rest of main's
    n = [s for s in of_thread(stacks, main, "N")
         if not any(f.startswith(CLOCK) for f in s.frames)]
    ncount = sum(s.count for s in n)
    deflate = sum(s.count for s in n if PHASES["deflate"] in s.frames)
    # the worker's as stacktreed's are judged (worker_share: its measured
    # run, its clock reads out of the truth): JFR's execution samples hold
    # no clock read (a native method), and against all of the worker's CPU
    # time JFR's sieve read 99.3% where the truth said 95.0% (Temurin 25
    # -Xint, load 9)
    wgot, wwant, wtotal = worker_share(of_thread(stacks, worker, "E"), truth, worker)
    return {"main": {p: (got[p], want[p]) for p in JAVA_PHASES},
            "samples": sum(s.count for s in e),
            "native": ncount, "deflate_native": 100.0 * deflate / ncount if ncount else 0.0,
            "worker": (wgot, wwant), "worker_samples": wtotal}
