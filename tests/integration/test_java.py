"""Java (issue 32), the ground of the walker: a running HotSpot JVM found
and its own structure tables read (user/collect/runtimes/java/).

A small CPU-bound class, compiled with JDK 17's javac into a temporary
directory, runs under JDK 17 (Debian's openjdk-17) and, when installed,
Temurin 25. Once it says it runs, tests/unit/test_vmstructs.c's
test_live_jvm is run on its pid (ST_TEST_JVM_PID, ST_TEST_JVM_MAJOR): it
finds libjvm.so in the process's maps, its load bias and VMStructs
symbols, reads the four tables from the process's memory and checks that
the walker's layout has every member that JDK describes (and no other),
oopSize 8, sizeof(Method) > 0, the version's major and release text, and
that a second probe of the same libjvm is served from the cache.

test_java_summary: stacktreed -- java (JDK 17) says "java: JVMs seen 1"
in its summary, -a beside a running JVM at least 1; -- a program without
a JVM says nothing of Java."""
import os
import re
import select
import shutil
import subprocess
import tempfile
import time

from stcheck import BUILD, Failure, Skip, check, run_profiled

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


def compile_spin(tmp):
    javac = os.path.join(JDKS[0][1], "bin", "javac")
    if not os.access(javac, os.X_OK):
        raise Skip("no JDK 17 (%s): scripts/deps.sh installs openjdk-17-jdk-headless" % javac)
    with open(os.path.join(tmp, "Spin.java"), "w") as f:
        f.write(SPIN % LIFETIME)
    subprocess.run([javac, "--release", "17", "-d", tmp, os.path.join(tmp, "Spin.java")],
                   check=True, capture_output=True, timeout=180)


def started(java, tmp):
    """java running Spin, once it has printed that main() runs."""
    p = subprocess.Popen([java, "-Xmx64m", "-cp", tmp, "Spin"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    end = time.time() + READY_TIMEOUT
    while time.time() < end:
        ready, _, _ = select.select([p.stdout], [], [], max(0.0, end - time.time()))
        if not ready:
            break
        line = p.stdout.readline()
        if not line:
            break
        if line.strip() == "ready":
            return p
    p.kill()
    _, err = p.communicate()
    raise Failure("%s did not start Spin within %d s: %s" % (java, READY_TIMEOUT, err))


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
        for major, home in JDKS:
            java = os.path.join(home, "bin", "java")
            if not os.access(java, os.X_OK):
                if major == "17":
                    raise Skip("no JDK 17 java (%s)" % java)
                print("    (JDK %s not installed: %s)" % (major, java))
                continue
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
        check("stacktreed: java: JVMs seen 1 " in err,
              "no 'java: JVMs seen 1' in the summary of -- java:\n" + err)
        p = started(java, tmp)
        try:
            out, err, _ = run_profiled(["-F", "99", "-a", "-d", "3"])
            outs.append(out)
        finally:
            p.kill()
            p.wait()
        m = re.search(r"stacktreed: java: JVMs seen (\d+) ", err)
        check(m and int(m.group(1)) >= 1, "-a beside a JVM: no JVM seen:\n" + err)
        out, err, _ = run_profiled(["-F", "99", "--", "/bin/sleep", "0.5"])
        outs.append(out)
        check("java:" not in err, "a Java line without a JVM:\n" + err)
    finally:
        for d in [tmp] + outs:
            shutil.rmtree(d, ignore_errors=True)
