"""Java (issue 32): a running HotSpot JVM found and its own structure
tables read (user/collect/runtimes/java/); its interpreted frames walked
inside the unwinder (bpf/hotspot_step.h: in BPF, and natively) and named
(jmethod.c).

A small CPU-bound class, compiled with JDK 17's javac into a temporary
directory, runs under JDK 17 (Debian's openjdk-17) and, when installed,
Temurin 25. Once it says it runs, tests/unit/test_vmstructs.c's
test_live_jvm is run on its pid (ST_TEST_JVM_PID, ST_TEST_JVM_MAJOR): it
finds libjvm.so in the process's maps, its load bias and VMStructs
symbols, reads the four tables from the process's memory and checks that
the walker's layout has every member that JDK describes (and no other),
oopSize 8, sizeof(Method) > 0, the version's major and release text, and
that a second probe of the same libjvm is served from the cache.

test_java_walk: java -Xint on a class whose main thread recurses
Deep.main -> a -> b -> c, spinning in c; tests/unit/test_hotspot_step.c's
test_live stops that thread (ptrace) 50 times, copies its stack and walks
it from its registers (the unwinder with bpf/hotspot_step.h, built
natively, as the daemon walks a deferred sample), names them
(jmethod.c) and requires Deep.c, b, a, main in that order at their source
lines in at least 90% of the walks, on JDK 17 and Temurin 25.

test_java_bpf: stacktreed on that class, java -Xint, under -- CMD, --pid
and -a (JDK 17 only), with both CPUs busy (another 2-CPU load beside it): the main Java
thread's samples with Java frames >= 90% (of those outside the JVM's
start-up, JNI_CreateJavaVM, which runs on that thread),
the chain Deep.main > Deep.a > Deep.b > Deep.c at its source lines,
runtime "java", the names in stacks.folded and profile.pb.gz; with the
JIT (default flags) the run completes with Java frames named, and the
JVM's own threads (VM Thread, G1 Service, compiler threads: which a short
run samples varies) are there, named, with native frames.

test_java_jit: the JIT's frames, default flags: a class whose main
thread runs Jit.main -> outer (C2-compiled) -> mid -> leaf (both inlined
into outer); tests/unit/test_hsblob.c's test_live_jit waits until the
thread runs compiled code, stops it 50 times, walks it from its registers
(compiled frames and stubs by bpf/hotspot_blob.h, interpreted ones by
bpf/hotspot_step.h's rule, natively), expands the compiled frames' inlined
methods (jscopes.c), names every frame and requires Jit.mid (inlined),
outer and main in that order at their source lines in at least 90% of
the walks (inlined frames in half), on JDK 17 and Temurin 25. Then the
same on javac run in process again and again on generated classes
(compiled and interpreted frames, stubs, JNI calls and the VM's own code
mixed), 300 stops: of the walks that start in Java code (20 at least;
Java code the VM or JNI called, beyond the call stub, left out: the native
frames below it are the native unwinder's), 90% reach JavacLoop.main at
its line.

test_java_jit_bpf: stacktreed -- java Jit, default flags (JDK 17 and
Temurin 25): compiled frames from BPF (bpf/hotspot_blob.h in the
unwinder's HotSpot rule) named with their inlined methods (jscopes.c):
Jit.main > outer > mid (an inline frame), runtime "java", at least 90% of
the main thread's samples (start-up left out) down to Jit.main.

test_java_summary: stacktreed -- java (JDK 17) says "java: JVMs seen 1"
in its summary, -a beside a running JVM at least 1; -- a program without
a JVM says nothing of Java."""
import gzip
import os
import re
import shutil
import subprocess
import tempfile
import time

from stcheck import (BUILD, Daemon, Failure, Lines, Skip, busy_cpus, check, load, nodes,
                     run_profiled)

JDKS = [("17", "/usr/lib/jvm/java-17-openjdk-amd64"),
        ("25", "/usr/lib/jvm/temurin-25-jdk-amd64")]
TEST = os.path.join(BUILD, "tests", "test_vmstructs")
SPIN = """
public class Spin {
    static long work(long n) { long s = 0; for (long i = 0; i < n; i++) s += i %% 7; return s; }
    public static void main(String[] a) {
        System.out.println("ready");
        System.out.flush();
        long secs = a.length > 0 ? Long.parseLong(a[0]) : %d;
        long t = 0, end = System.nanoTime() + secs * 1000000000L;
        while (System.nanoTime() < end) t += work(1000000);
        System.out.println(t);
    }
}
"""
# the JVM's own lifetime bound: it ends by itself should the test die
LIFETIME = 120
# a JVM starts in ~0.3 s idle; on the busy 2-CPU test machine in seconds
READY_TIMEOUT = 60
# test_java_bpf's -a run: a JVM started this long after sampling began,
# sampled this long (the daemon reads every process of the machine first)
LATE_S = 2
LATE_RUN_S = 6


WALK_TEST = os.path.join(BUILD, "tests", "test_hotspot_step")
# line numbers: the test_live expectations are taken from the markers
DEEP = """public class Deep {
    static volatile long sink;
    static long c(long n) {
        long s = 0;                          // c-first
        for (long i = 0; i < n; i++) {
            s += i %% 7;
        }
        return s;                            // c-last
    }
    static long b(long n) {
        return c(n) + 1;                     // b-call
    }
    static long a(long n) {
        return b(n) + 2;                     // a-call
    }
    public static void main(String[] args) {
        System.out.println("ready");
        System.out.flush();
        long end = System.nanoTime() + %dL * 1000000000L;
        while (System.nanoTime() < end) {
            sink += a(1000000);              // main-call
        }
    }
}
"""

JIT_TEST = os.path.join(BUILD, "tests", "test_hsblob")
# a hot chain the JIT compiles (C2) with mid and leaf inlined into outer:
# their loops' strides vary, so that they keep safepoint polls, whose PC
# descriptors carry the inlined scopes a sampled pc is named by
JIT = """public class Jit {
    static volatile long sink;
    static int leaf(int x) {
        int s = x;                                    // leaf-first
        for (int k = 0; k < 32; k += (s & 1) + 1) {
            s = s * 31 + k;
        }
        return s;                                     // leaf-last
    }
    static int mid(int x) {
        int s = 0;                                    // mid-first
        for (int i = 0; i < 256; i += (s & 1) + 1) {
            s += leaf(x + i);
        }
        return s;                                     // mid-last
    }
    static long outer(long n) {
        long s = 0;                                   // outer-first
        for (long i = 0; i < n; i++) {
            s += mid((int) i);
        }
        return s;                                     // outer-last
    }
    public static void main(String[] args) {
        System.out.println("ready");
        System.out.flush();
        long end = System.nanoTime() + %dL * 1000000000L;
        while (System.nanoTime() < end) {
            sink += outer(10000);                     // main-call
        }
    }
}
"""

# javac in process, again and again, on generated classes (lambdas,
# streams, generics): compiled, inlined and interpreted frames, stubs,
# JNI calls (the file system's) and the VM's own code mixed
JAVAC_LOOP = """import java.io.File;
import java.util.*;
import javax.tools.*;
public class JavacLoop {
    public static void main(String[] a) throws Exception {
        JavaCompiler jc = ToolProvider.getSystemJavaCompiler();
        List<String> args = new ArrayList<>(List.of("-d", a[1], "-proc:none"));
        for (File f : new File(a[0]).listFiles()) args.add(f.getPath());
        System.out.println("ready");
        System.out.flush();
        long end = System.nanoTime() + %dL * 1000000000L;
        while (System.nanoTime() < end) {
            jc.run(null, null, null, args.toArray(new String[0]));   // main-call
        }
    }
}
"""


def javac_sources(d, classes=150, methods=20):
    """classes generated Java classes in d (package gen)."""
    os.makedirs(d)
    m = ("    public int m%d(int x) { List<String> l = new ArrayList<>(); "
         "for (int k = 0; k < x; k++) l.add(\"v\" + k); "
         "return l.stream().mapToInt(String::length).sum() + %d; }")
    for i in range(classes):
        with open(os.path.join(d, "C%d.java" % i), "w") as f:
            f.write("package gen;\nimport java.util.*;\npublic class C%d {\n%s\n}\n"
                    % (i, "\n".join(m % (j, j) for j in range(methods))))


def marks(src, *names):
    """The source line of each "// name" marker of src."""
    lines = src.splitlines()
    return [next(i + 1 for i, l in enumerate(lines) if l.rstrip().endswith("// " + n))
            for n in names]


def jit_expect():
    """ST_TEST_JAVA_EXPECT for JIT: mid (inlined), outer (compiled), main
    (interpreted or compiled) at their lines; leaf, inlined too, may come
    first (when the sampled pc's next PC descriptor is in its loop)."""
    mf, ml, of, ol, mc = marks(JIT % LIFETIME, "mid-first", "mid-last", "outer-first",
                               "outer-last", "main-call")
    return "Jit.mid:%d-%d|Jit.outer:%d-%d|Jit.main:%d-%d" % (mf, ml, of, ol, mc, mc)


def deep_expect():
    """ST_TEST_JAVA_EXPECT for DEEP: each frame's name and line range."""
    lines = (DEEP % LIFETIME).splitlines()

    def at(mark):
        return next(i + 1 for i, l in enumerate(lines) if l.rstrip().endswith("// " + mark))
    return "Deep.c:%d-%d|Deep.b:%d-%d|Deep.a:%d-%d|Deep.main:%d-%d" % (
        at("c-first"), at("c-last"), at("b-call"), at("b-call"), at("a-call"), at("a-call"),
        at("main-call"), at("main-call"))


def java_main_thread(pid):
    """The JVM's main Java thread: named java like the launcher's first
    thread (the process's, which waits for it), and burning CPU."""
    best = None
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            comm = open("/proc/%d/task/%s/comm" % (pid, tid)).read().strip()
            ticks = int(open("/proc/%d/task/%s/stat" % (pid, tid)).read().rsplit(")", 1)[1]
                        .split()[11])
        except OSError:
            continue
        if comm == "java" and int(tid) != pid and (best is None or ticks > best[1]):
            best = (int(tid), ticks)
    check(best is not None, "no main Java thread in process %d" % pid)
    return best[0]


def installed_javas():
    """(major, java binary) of each JDK of JDKS installed here; Skip
    without JDK 17, which the tests need."""
    for major, home in JDKS:
        java = os.path.join(home, "bin", "java")
        if not os.access(java, os.X_OK):
            if major == "17":
                raise Skip("no JDK 17 java (%s)" % java)
            print("    (JDK %s not installed: %s)" % (major, java))
            continue
        yield major, java


def test_java_walk():
    check(os.access(WALK_TEST, os.X_OK), "%s not built (make integration builds it)" % WALK_TEST)
    tmp = tempfile.mkdtemp(prefix="st-hotspot-")
    seen = []
    try:
        javac = os.path.join(JDKS[0][1], "bin", "javac")
        if not os.access(javac, os.X_OK):
            raise Skip("no JDK 17 (%s)" % javac)
        with open(os.path.join(tmp, "Deep.java"), "w") as f:
            f.write(DEEP % LIFETIME)
        subprocess.run([javac, "--release", "17", "-g", "-d", tmp, os.path.join(tmp, "Deep.java")],
                       check=True, capture_output=True, timeout=180)
        for major, java in installed_javas():
            p = started(java, tmp, ["-Xint"], "Deep")
            try:
                time.sleep(0.5)	# into the loop
                tid = java_main_thread(p.pid)
                env = dict(os.environ, ST_TEST_JVM_PID=str(p.pid), ST_TEST_JVM_TID=str(tid),
                           ST_TEST_JAVA_EXPECT=deep_expect(), ST_TEST_JAVA_WALKS="50")
                r = subprocess.run([WALK_TEST], env=env, capture_output=True, text=True,
                                   timeout=300)
                out = r.stdout + r.stderr
                check(r.returncode == 0, "test_hotspot_step on JDK %s (pid %d, tid %d) failed:\n%s"
                      % (major, p.pid, tid, out))
                check("[       OK ] test_live" in out,
                      "test_hotspot_step's test_live did not run on JDK %s:\n%s" % (major, out))
                check(p.poll() is None, "JDK %s exited during the walks" % major)
            finally:
                p.kill()
                p.wait()
            for line in out.splitlines():
                if "walks named" in line or line.strip().startswith("pid "):
                    print("    JDK %s: %s" % (major, line.strip()))
            seen.append(major)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check(seen and seen[0] == "17", "JDK 17 not walked")


def compile_deep(tmp, secs):
    javac = os.path.join(JDKS[0][1], "bin", "javac")
    if not os.access(javac, os.X_OK):
        raise Skip("no JDK 17 (%s)" % javac)
    os.makedirs(tmp, exist_ok=True)
    with open(os.path.join(tmp, "Deep.java"), "w") as f:
        f.write(DEEP % secs)
    subprocess.run([javac, "--release", "17", "-g", "-d", tmp, os.path.join(tmp, "Deep.java")],
                   check=True, capture_output=True, timeout=180)


def java_thread_of(prof, pid):
    """The main Java thread's tree: comm java, not the launcher's."""
    ts = [t for t in prof["threads"] if t["pid"] == pid and t["tid"] != pid and
          t["comm"] == "java"]
    check(ts, "no main Java thread of pid %d in the profile" % pid)
    return max(ts, key=lambda t: t["samples"])


def java_share(t):
    """Share of t's samples under a Java frame, of those not in the JVM's
    start-up (JNI_CreateJavaVM: its fixed CPU cost on that thread, some
    35 samples at 199 Hz, measured; a share that grows as the CPUs are
    busier and the Java part gets less of the run)."""
    def top(n):
        if n.get("runtime") == "java" and "." in (n["function"] or ""):	# (not a stub)
            return n["cum"]
        if n["function"] == "JNI_CreateJavaVM":
            return 0
        return sum(top(c) for c in n.get("children", []))
    startup = sum(n["cum"] for n, _, _ in nodes(t["root"]) if n["function"] == "JNI_CreateJavaVM")
    return top(t["root"]) / max(t["samples"] - startup, 1)


def check_chain(t, what):
    """Deep.main > a > b > c, in order, at their lines."""
    want = [w.split(":") for w in deep_expect().split("|")][::-1]
    node, cum = t["root"], 0
    for name, lines in want:
        lo, hi = (int(x) for x in lines.split("-"))
        kids = [c for c in node.get("children", []) if c["function"] == name]
        if not kids:	# below native frames: search the subtree
            kids = [n for n, _, _ in nodes(node) if n["function"] == name]
        check(kids, "%s: %s not found under %s" % (what, name, node.get("function")))
        node = max(kids, key=lambda n: n["cum"])
        check(node["runtime"] == "java", "%s: %s runtime %s" % (what, name, node["runtime"]))
        check(node["file"] == "Deep.java", "%s: %s file %s" % (what, name, node["file"]))
        check(lo <= node["line"] <= hi or name == "Deep.c",
              "%s: %s line %s not in %d-%d" % (what, name, node["line"], lo, hi))
        cum = node["cum"]
    lines = [n["line"] for n, _, _ in nodes(node) if n["function"] == "Deep.c"]
    lo, hi = (int(x) for x in want[-1][1].split("-"))
    check(all(lo <= ln <= hi for ln in lines), "%s: Deep.c lines %s" % (what, lines))
    return cum


def check_outputs(out, what):
    folded = open(os.path.join(out, "stacks.folded")).read()
    check("Deep.main;Deep.a;Deep.b;Deep.c" in folded, "%s: no Java chain in stacks.folded" % what)
    raw = gzip.open(os.path.join(out, "profile.pb.gz")).read()
    check(b"Deep.c" in raw and b"Deep.java" in raw, "%s: no Java names in profile.pb.gz" % what)


def test_java_bpf():
    tmp = tempfile.mkdtemp(prefix="st-javabpf-")
    outs = []
    try:
        compile_deep(os.path.join(tmp, "short"), 6)
        compile_deep(os.path.join(tmp, "long"), LIFETIME)
        fmt = ["-F", "199", "--format", "json,folded,pprof"]
        for major, java in installed_javas():
            with busy_cpus(2):
                # -- CMD
                out, err, _ = run_profiled(fmt + ["--", java, "-Xint", "-Xmx64m", "-cp",
                                                  os.path.join(tmp, "short"), "Deep"])
                outs.append(out)
                prof = load(out)
                t = java_thread_of(prof, [x for x in prof["threads"]
                                          if x["comm"] == "java"][0]["pid"])
                share = java_share(t)
                print("    JDK %s -- CMD: %d samples, %.1f%% with Java frames" % (
                    major, t["samples"], 100 * share))
                check(share >= 0.90, "-- CMD: %.1f%% with Java frames" % (100 * share))
                check_chain(t, "-- CMD")
                check_outputs(out, "-- CMD")
                check("stacktreed: java: JVMs seen 1;" in err, "summary: " + err)
                # --pid and -a
                # -a on JDK 17 only: it symbolizes every process of the
                # machine (8-10 min under the busy suite, measured)
                for mode in ("--pid", "-a") if major == "17" else ("--pid",):
                    p = started(java, os.path.join(tmp, "long"), ["-Xint"], "Deep")
                    late = None
                    try:
                        if mode == "--pid":
                            out, err, _ = run_profiled(fmt + ["-d", "4", "--pid", str(p.pid)],
                                                       timeout=600)
                        else:
                            # -a: the JVM running before it, and one started
                            # once it samples (found when it maps libjvm,
                            # seconds after its exec on the busy machine),
                            # alive until the daemon stops: one that exits
                            # first loses the names of its samples the
                            # daemon walks after its exit (docs/java.md)
                            out = tempfile.mkdtemp(prefix="st-it-java-")
                            d = Daemon(fmt + ["-a", "-o", out], timeout=120)
                            try:
                                time.sleep(LATE_S)
                                late = started(java, os.path.join(tmp, "long"), ["-Xint"],
                                               "Deep")
                                time.sleep(LATE_RUN_S)
                            finally:
                                # (-a symbolizes every process of the busy
                                # machine: minutes)
                                rc, err = d.stop(timeout=600)
                                if late:
                                    late.kill()
                                    late.wait()
                            check(rc == 0, "stacktreed -a: " + err)
                        outs.append(out)
                    finally:
                        p.kill()
                        p.wait()
                    prof = load(out)
                    for pid, what in ((p.pid, mode), (late and late.pid, mode + ", started late")):
                        if not pid:
                            continue
                        t = java_thread_of(prof, pid)
                        share = java_share(t)
                        print("    JDK %s %s: %d samples, %.1f%% with Java frames" % (
                            major, what, t["samples"], 100 * share))
                        check(share >= 0.90, "%s: %.1f%% with Java frames" % (what, 100 * share))
                        check_chain(t, what)
                    check_outputs(out, mode)
            # the JIT: default flags; Java frames named while interpreted,
            # the compiler threads with their names and native stacks
            out, err, _ = run_profiled(fmt + ["--", java, "-Xmx64m", "-cp",
                                              os.path.join(tmp, "short"), "Deep"])
            outs.append(out)
            prof = load(out)
            javas = [n for th in prof["threads"] for n, _, _ in nodes(th["root"])
                     if n.get("runtime") == "java"]
            check(any(n["function"].startswith("Deep.") for n in javas),
                  "JIT: no Deep method named")
            # the JVM's own threads (VM Thread, G1 Service, compiler and GC
            # threads: which of them a short run samples varies)
            own = [th for th in prof["threads"] if th["comm"] != "java"]
            check(own and any(n["module"] and "libjvm" in n["module"]
                              for th in own for n, _, _ in nodes(th["root"])),
                  "JIT: no JVM thread with libjvm frames: %s"
                  % sorted({th["comm"] for th in prof["threads"]}))
            print("    JDK %s JIT: %d Java nodes; JVM threads %s" % (
                major, len(javas), sorted({th["comm"] for th in own})))
    finally:
        for d in [tmp] + outs:
            shutil.rmtree(d, ignore_errors=True)



def test_java_jit():
    """The JIT's frames: a C2-compiled chain walked from a stopped thread's
    registers (bpf/hotspot_blob.h natively), its inlined methods expanded
    (jscopes.c) and named, on JDK 17 and Temurin 25 with default flags."""
    check(os.access(JIT_TEST, os.X_OK), "%s not built (make integration builds it)" % JIT_TEST)
    tmp = tempfile.mkdtemp(prefix="st-javajit-")
    seen = []
    try:
        javac = os.path.join(JDKS[0][1], "bin", "javac")
        if not os.access(javac, os.X_OK):
            raise Skip("no JDK 17 (%s)" % javac)
        with open(os.path.join(tmp, "Jit.java"), "w") as f:
            f.write(JIT % LIFETIME)
        with open(os.path.join(tmp, "JavacLoop.java"), "w") as f:
            f.write(JAVAC_LOOP % LIFETIME)
        javac_sources(os.path.join(tmp, "gen"))
        subprocess.run([javac, "--release", "17", "-g", "-d", tmp, os.path.join(tmp, "Jit.java"),
                        os.path.join(tmp, "JavacLoop.java")],
                       check=True, capture_output=True, timeout=180)
        loop_line, = marks(JAVAC_LOOP % LIFETIME, "main-call")
        runs = [("Jit", [], {"ST_TEST_JAVA_EXPECT": jit_expect(), "ST_TEST_JAVA_WALKS": "50"}),
                ("JavacLoop", [os.path.join(tmp, "gen"), os.path.join(tmp, "out")],
                 {"ST_TEST_JAVA_EXPECT": "JavacLoop.main:%d-%d" % (loop_line, loop_line),
                  "ST_TEST_JAVA_WALKS": "300", "ST_TEST_JAVA_MIXED": "1"})]
        for major, java in installed_javas():
            for cls, args, extra in runs:
                p = started(java, tmp, ["-Xmx256m"], cls, args)
                try:
                    time.sleep(0.5)	# into the loop
                    tid = java_main_thread(p.pid)
                    env = dict(os.environ, ST_TEST_JVM_PID=str(p.pid), ST_TEST_JVM_TID=str(tid),
                               **extra)
                    r = subprocess.run([JIT_TEST], env=env, capture_output=True, text=True,
                                       timeout=300)
                    out = r.stdout + r.stderr
                    check(r.returncode == 0, "test_hsblob (%s) on JDK %s (pid %d, tid %d) "
                          "failed:\n%s" % (cls, major, p.pid, tid, out))
                    check("[       OK ] test_live_jit" in out, "test_hsblob's test_live_jit (%s) "
                          "did not run on JDK %s:\n%s" % (cls, major, out))
                    check(p.poll() is None, "JDK %s exited during the walks" % major)
                finally:
                    p.kill()
                    p.wait()
                for line in out.splitlines():
                    if "walks named" in line or line.strip().startswith(("pid ", "in compiled")):
                        print("    JDK %s, %s: %s" % (major, cls, line.strip()))
            seen.append(major)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check(seen and seen[0] == "17", "JDK 17 not walked")


def test_java_jit_bpf():
    """Compiled frames from BPF: stacktreed -- java Jit, default flags, on
    JDK 17 and Temurin 25: Jit.main > outer (C2) > mid (inlined into
    outer: an inline frame) as Java frames, in that order, and >= 90% of
    the main Java thread's samples (start-up left out) under Jit.main."""
    tmp = tempfile.mkdtemp(prefix="st-javajitbpf-")
    outs, seen = [], []
    try:
        javac = os.path.join(JDKS[0][1], "bin", "javac")
        if not os.access(javac, os.X_OK):
            raise Skip("no JDK 17 (%s)" % javac)
        with open(os.path.join(tmp, "Jit.java"), "w") as f:
            f.write(JIT % 10)
        subprocess.run([javac, "--release", "17", "-g", "-d", tmp, os.path.join(tmp, "Jit.java")],
                       check=True, capture_output=True, timeout=180)
        for major, java in installed_javas():
            out, err, _ = run_profiled(["-F", "199", "--format", "json,folded", "--", java,
                                        "-Xmx64m", "-cp", tmp, "Jit"], timeout=300)
            outs.append(out)
            prof = load(out)
            t = java_thread_of(prof, [x for x in prof["threads"] if x["comm"] == "java"][0]["pid"])
            share = java_share(t)
            mains = [n for n, _, _ in nodes(t["root"]) if n.get("function") == "Jit.main"]
            check(mains, "JDK %s: no Jit.main" % major)
            main = max(mains, key=lambda n: n["cum"])
            startup = sum(n["cum"] for n, _, _ in nodes(t["root"])
                          if n.get("function") == "JNI_CreateJavaVM")
            to_main = main["cum"] / max(t["samples"] - startup, 1)
            # main > outer > mid (inlined), each a Java frame
            chain = None
            for o in main["children"]:
                if o.get("function") != "Jit.outer":
                    continue
                for m in o["children"]:
                    if m.get("function") == "Jit.mid" and m.get("kind") == "inline":
                        chain = (o, m) if not chain or m["cum"] > chain[1]["cum"] else chain
            check(chain, "JDK %s: no Jit.main > Jit.outer > Jit.mid (inline) chain" % major)
            for n in (main,) + chain:
                check(n["runtime"] == "java" and n["file"] == "Jit.java",
                      "JDK %s: %s runtime %s file %s" % (major, n["function"], n["runtime"],
                                                         n["file"]))
            m = re.search(r"code blob frames (\d+).*compiled frames named (\d+)", err)
            check(m and int(m.group(1)) > 0 and int(m.group(2)) > 0,
                  "JDK %s: summary without compiled frames: %s" % (major, err))
            print("    JDK %s: main thread %d samples, %.1f%% with Java frames, %.1f%% down to "
                  "Jit.main; outer > mid (inlined) %d; blob frames %s, compiled frames named %s"
                  % (major, t["samples"], 100 * share, 100 * to_main, chain[1]["cum"],
                     m.group(1), m.group(2)))
            check(to_main >= 0.90, "JDK %s: %.1f%% of the main thread's samples down to "
                  "Jit.main" % (major, 100 * to_main))
            check_stubs(prof, t["pid"], err, "JDK %s" % major)
            seen.append(major)
    finally:
        for d in [tmp] + outs:
            shutil.rmtree(d, ignore_errors=True)
    check(seen and seen[0] == "17", "JDK 17 not run")


def check_stubs(prof, pid, err, what):
    """The JVM's code cache frames that are not Java methods (its call
    stub, adapters, runtime stubs) named as the JVM names them, runtime
    java: the call stub under JavaCalls::call_helper, and no frame of the
    process without a module (anonymous memory: the code cache) unnamed."""
    call_stub = unnamed = 0
    stubs, where = {}, {}
    for th in prof["threads"]:
        if th["pid"] != pid:
            continue
        for n, _, parent in nodes(th["root"]):
            if parent is None:
                continue
            f = n.get("function")
            if f == "StubRoutines::call_stub":
                check(n["runtime"] == "java" and n["module"] == "[java]",
                      "%s: the call stub's runtime %s module %s" % (what, n["runtime"],
                                                                   n["module"]))
                if (parent.get("function") or "").startswith("JavaCalls::call_helper"):
                    call_stub += n["cum"]
            elif n.get("runtime") == "java" and f and "." not in f:
                stubs[f] = stubs.get(f, 0) + n["cum"]
            elif not f and not n.get("module"):
                unnamed += n["cum"]
                # (its address and caller, for the message: a blob freed
                # before its naming, or a kind of stub not named)
                # (profile.json's address: a "0x..." string)
                k = "%s under %s" % (n.get("address") or "?", parent.get("function"))
                where[k] = where.get(k, 0) + n["cum"]
    m = re.search(r"code cache addresses named (\d+) \(unreadable (\d+)\)", err)
    print("    %s: StubRoutines::call_stub under JavaCalls::call_helper in %d samples; other "
          "stubs %s; %d samples under an unnamed frame without a module; summary: %s"
          % (what, call_stub, sorted(stubs.items(), key=lambda kv: -kv[1])[:6], unnamed,
             m and m.group(0)))
    check(call_stub > 0, "%s: no StubRoutines::call_stub under JavaCalls::call_helper" % what)
    # at most 1 in 500 of the process's samples: a blob freed (an nmethod
    # flushed, a stub released) between the sample and its naming, which
    # the daemon does while the process lives (1 seen once in a run of
    # ~2,000 samples on Temurin 25; 0 in 4 other runs)
    total = sum(th["samples"] for th in prof["threads"] if th["pid"] == pid)
    check(unnamed * 500 <= total, "%s: %d of %d samples under unnamed frames without a "
          "module (the code cache): %s; %s" % (what, unnamed, total,
                                               sorted(where.items(), key=lambda kv: -kv[1])[:4],
                                               [line for line in err.splitlines()
                                                if "java:" in line and "code blob" in line]))
    check(m and int(m.group(1)) > 0 and int(m.group(2)) == 0,
          "%s: code cache addresses in the summary: %s" % (what, m and m.group(0)))


def compile_spin(tmp):
    javac = os.path.join(JDKS[0][1], "bin", "javac")
    if not os.access(javac, os.X_OK):
        raise Skip("no JDK 17 (%s): scripts/deps.sh installs openjdk-17-jdk-headless" % javac)
    with open(os.path.join(tmp, "Spin.java"), "w") as f:
        f.write(SPIN % LIFETIME)
    subprocess.run([javac, "--release", "17", "-d", tmp, os.path.join(tmp, "Spin.java")],
                   check=True, capture_output=True, timeout=180)


def started(java, tmp, opts=(), cls="Spin", args=()):
    """java running cls (Spin) with args, once it has printed that main()
    runs."""
    p = subprocess.Popen([java, "-Xmx64m"] + list(opts) + ["-cp", tmp, cls] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.time() + READY_TIMEOUT
    out = Lines(p.stdout)
    while True:
        line = out.readline(end)
        if not line:
            break
        if line.strip() == "ready":
            return p
    p.kill()
    _, err = p.communicate()
    raise Failure("%s did not start %s within %d s: %s" % (java, cls, READY_TIMEOUT, err))


def probe(pid, major):
    """test_live_jvm on pid: its output; fails unless it passed (not
    skipped)."""
    env = dict(os.environ, ST_TEST_JVM_PID=str(pid), ST_TEST_JVM_MAJOR=major)
    p = subprocess.run([TEST], env=env, capture_output=True, text=True, timeout=120)
    out = p.stdout + p.stderr
    check(p.returncode == 0, "test_vmstructs on JDK %s (pid %d) failed:\n%s" % (major, pid, out))
    check("[       OK ] test_live_jvm" in out,
          "test_live_jvm did not run on JDK %s:\n%s" % (major, out))
    return out


def test_java_vmstructs():
    check(os.access(TEST, os.X_OK), "%s not built (make integration builds it)" % TEST)
    tmp = tempfile.mkdtemp(prefix="st-java-")
    seen = []
    try:
        compile_spin(tmp)
        for major, java in installed_javas():
            p = started(java, tmp)
            try:
                out = probe(p.pid, major)
                check(p.poll() is None, "JDK %s exited during the probe" % major)
            finally:
                p.kill()
                p.wait()
            for line in out.splitlines():
                if line.strip().startswith(("pid ", "probe ")):
                    print("    JDK %s: %s" % (major, line.strip()))
            seen.append(major)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check(seen and seen[0] == "17", "JDK 17 not probed")


def test_java_summary():
    tmp = tempfile.mkdtemp(prefix="st-java-")
    outs = []
    try:
        compile_spin(tmp)
        java = os.path.join(JDKS[0][1], "bin", "java")
        out, err, _ = run_profiled(["-F", "99", "--", java, "-Xmx64m", "-cp", tmp, "Spin", "3"])
        outs.append(out)
        check("stacktreed: java: JVMs seen 1;" in err,
              "no 'java: JVMs seen 1' in the summary of -- java:\n" + err)
        p = started(java, tmp)
        try:
            out, err, _ = run_profiled(["-F", "99", "-a", "-d", "3"])
            outs.append(out)
        finally:
            p.kill()
            p.wait()
        m = re.search(r"stacktreed: java: JVMs seen (\d+);", err)
        check(m and int(m.group(1)) >= 1, "-a beside a JVM: no JVM seen:\n" + err)
        out, err, _ = run_profiled(["-F", "99", "--", "/bin/sleep", "0.5"])
        outs.append(out)
        check("java:" not in err, "a Java line without a JVM:\n" + err)
    finally:
        for d in [tmp] + outs:
            shutil.rmtree(d, ignore_errors=True)
