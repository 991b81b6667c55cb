"""debuginfod (issue 11, item 4): a stripped workload whose debug file is
nowhere on the machine gets its function names from a real debuginfod
server (Debian's `debuginfod -F DIR`) started by the test, and from nothing
without DEBUGINFOD_URLS; a server answering with another build's debug file
is refused and counted; an unreachable server costs at most the timeout
and is counted.

The servers run in a network namespace of their own (debuginfod 0.188 has
no option to bind to an address: there, only its loopback exists), and
stacktreed runs in it too (nsenter --net: the same pid namespace and
kernel, so profiling is unchanged). Everything the test started is stopped
and the namespace unmounted at the end, whatever happens."""
import os
import re
import shutil
import subprocess
import tempfile
import time

from stcheck import STACKTREED, Failure, check, load, nodes

PORT_DEBUGINFOD = 8002		# free: the namespace is new
PORT_WRONG = 8004		# a plain HTTP server giving another build's file
PORT_CLOSED = 8006		# nothing listens
PORT_SILENT = 8008		# accepts connections, never answers

SILENT = r"""
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
print("ready", flush=True)
conns = []
while True:
    c, _ = s.accept()
    conns.append(c)
"""

SOURCE = r"""
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void dbgd_leaf_spin(void)
{
	for (int i = 0; i < 100000; i++)
		sink += (unsigned long)i * i + VARIANT;
}
__attribute__((noinline)) static void dbgd_middle_work(void)
{
	for (int i = 0; i < 10; i++)
		dbgd_leaf_spin();
}
int main(void)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		dbgd_middle_work();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 600000000L);
	return 0;
}
"""

# run inside the namespace: GET URL until it answers 200 (bounded)
POLL = r"""
import sys, time, urllib.request
url, limit = sys.argv[1], float(sys.argv[2])
end = time.time() + limit
while time.time() < end:
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            if r.status == 200:
                sys.exit(0)
    except Exception:
        pass
    time.sleep(0.1)
sys.exit(1)
"""


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(m, "no build id in %s" % path)
    return m.group(1)


def build(tmp, name, variant):
    src = os.path.join(tmp, name + ".c")
    with open(src, "w") as f:
        f.write(SOURCE.replace("VARIANT", str(variant)))
    exe = os.path.join(tmp, name)
    subprocess.run(["gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-Wl,--build-id", "-o", exe,
                    src], check=True)
    debug = exe + ".debug"
    subprocess.run(["objcopy", "--only-keep-debug", exe, debug], check=True)
    subprocess.run(["strip", "--strip-all", exe], check=True)
    # nothing left locally: no symbols, no debug link
    secs = subprocess.run(["readelf", "-S", exe], capture_output=True, text=True).stdout
    check(".symtab" not in secs and ".gnu_debuglink" not in secs, "%s not stripped" % exe)
    bid = build_id(exe)
    check(build_id(debug) == bid, "the debug file's build id differs")
    check(not os.path.exists("/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])),
          "a debug file of %s under /usr/lib/debug" % bid)
    return exe, debug, bid


class Netns:
    """A network namespace (bound to a file) with loopback up."""

    def __init__(self, tmp):
        self.path = os.path.join(tmp, "netns")
        open(self.path, "w").close()
        subprocess.run(["unshare", "--net=" + self.path, "true"], check=True)
        self.mounted = True
        self.run(["ip", "link", "set", "lo", "up"], check=True)

    def cmd(self, argv):
        return ["nsenter", "--net=" + self.path, "--"] + argv

    def run(self, argv, **kw):
        return subprocess.run(self.cmd(argv), **kw)

    def popen(self, argv, **kw):
        return subprocess.Popen(self.cmd(argv), **kw)

    def poll(self, url, limit):
        return self.run(["python3", "-c", POLL, url, str(limit)]).returncode == 0

    def close(self):
        if self.mounted:
            subprocess.run(["umount", self.path])
            self.mounted = False


def stop(p):
    if p and p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def profile(ns, tmp, exe, urls, extra=(), expect_rc=0, cache_mode=0o700):
    """stacktreed -- exe in the namespace, with DEBUGINFOD_URLS=urls (None:
    unset) and a fresh cache; returns (profile or None, stderr, seconds, cache)."""
    out = tempfile.mkdtemp(prefix="out-", dir=tmp)
    cache = tempfile.mkdtemp(prefix="cache-", dir=tmp)
    os.chmod(cache, cache_mode)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
    env["DEBUGINFOD_CACHE_PATH"] = cache
    if urls is not None:
        env["DEBUGINFOD_URLS"] = urls
    t0 = time.time()
    p = ns.run([STACKTREED, "-o", out, "-F", "499"] + list(extra) + ["--", exe], env=env,
               capture_output=True, text=True, timeout=120)
    took = time.time() - t0
    check(p.returncode == expect_rc, "stacktreed exited %d (expected %d): %s"
          % (p.returncode, expect_rc, p.stderr))
    prof = load(out) if expect_rc == 0 else None
    return prof, p.stderr, took, cache


def functions(prof, exe):
    names = set()
    for t in prof["threads"]:
        if t["comm"] != os.path.basename(exe)[:15]:
            continue
        for n, _, _ in nodes(t["root"]):
            if n["function"]:
                names.add(n["function"])
    return names


def dbgd_counts(err):
    m = re.search(r"debuginfod: (\d+) debug files fetched, (\d+) not found, (\d+) failed "
                  r"\(timeout, unreachable, too large\), (\d+) rejected \(wrong build id or "
                  r"not ELF\), (\d+) not asked \(too many build ids, or failures in a row\); "
                  r"([0-9.]+) s fetching",
                  err)
    check(m, "no debuginfod line in the summary: %s" % err[-2000:])
    keys = ("found", "not_found", "failed", "rejected", "skipped")
    c = dict(zip(keys, (int(g) for g in m.groups()[:5])))
    c["seconds"] = float(m.group(6))
    return c


def test_debuginfod_fetches_symbols():
    check(shutil.which("debuginfod"), "debuginfod is not installed (scripts/deps.sh)")
    tmp = tempfile.mkdtemp(prefix="st-dbgd-")
    ns = server = wrong = silent = None
    try:
        exe, debug, bid = build(tmp, "dbgdwork", 1)
        other_exe, other_debug, other_bid = build(tmp, "dbgdother", 2)
        check(other_bid != bid, "two builds share a build id")
        served = os.path.join(tmp, "served")
        os.mkdir(served)
        shutil.copy(debug, served)
        # the wrong server: other_debug under bid's URL
        wrongdir = os.path.join(tmp, "wrong", "buildid", bid)
        os.makedirs(wrongdir)
        shutil.copy(other_debug, os.path.join(wrongdir, "debuginfo"))

        ns = Netns(tmp)
        log = open(os.path.join(tmp, "debuginfod.log"), "w")
        server = ns.popen(["debuginfod", "-F", "-p", str(PORT_DEBUGINFOD), "-d",
                           os.path.join(tmp, "db.sqlite"), "-t", "0", "-g", "0", served],
                          stdout=log, stderr=subprocess.STDOUT)
        wrong = ns.popen(["python3", "-m", "http.server", "--bind", "127.0.0.1",
                          "--directory", os.path.join(tmp, "wrong"), str(PORT_WRONG)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        silent = ns.popen(["python3", "-c", SILENT, str(PORT_SILENT)], stdout=subprocess.PIPE,
                          text=True)
        check(silent.stdout.readline().strip() == "ready", "the silent server did not start")
        base = "http://127.0.0.1:%d" % PORT_DEBUGINFOD
        check(ns.poll(base + "/metrics", 30), "debuginfod did not answer on %s" % base)
        check(ns.poll("%s/buildid/%s/debuginfo" % (base, bid), 60),
              "debuginfod did not index %s within 60 s" % bid)
        check(ns.poll("http://127.0.0.1:%d/buildid/%s/debuginfo" % (PORT_WRONG, bid), 30),
              "the plain HTTP server did not answer")

        # without DEBUGINFOD_URLS: no names for the stripped binary, no fetch
        prof, err, _, _ = profile(ns, tmp, exe, None)
        names = functions(prof, exe)
        check(names and "dbgd_leaf_spin" not in names,
              "names without debuginfod: %s" % sorted(names))
        check("debuginfod:" not in err, "debuginfod line without DEBUGINFOD_URLS")

        # --debuginfod with no DEBUGINFOD_URLS: says what is missing
        _, err, _, _ = profile(ns, tmp, exe, None, ["--debuginfod"], expect_rc=1)
        check("DEBUGINFOD_URLS is not set" in err, "--debuginfod without URLs: %s" % err)

        # with the server: names, one fetch at least, the file in the cache
        prof, err, _, cache = profile(ns, tmp, exe, base)
        names = functions(prof, exe)
        check({"dbgd_leaf_spin", "dbgd_middle_work", "main"} <= names,
              "names with debuginfod: %s" % sorted(names))
        c = dbgd_counts(err)
        check(c["found"] >= 1 and c["rejected"] == 0 and c["failed"] == 0, "counts %s" % c)
        check(os.path.exists(os.path.join(cache, bid, "debuginfo")),
              "%s not in the cache %s" % (bid, os.listdir(cache)))
        # a cache other users may write to is not used (as root): nothing fetched;
        # with --debuginfod, an error
        prof, err, _, cache = profile(ns, tmp, exe, base, cache_mode=0o777)
        check("not used: not ours, or writable by others" in err and "dbgd_leaf_spin" not in
              functions(prof, exe) and not os.listdir(cache), "a shared cache was used: %s" % err)
        profile(ns, tmp, exe, base, ["--debuginfod"], expect_rc=1, cache_mode=0o777)
        # --no-debuginfod: off even with the variable set
        prof, err, _, _ = profile(ns, tmp, exe, base, ["--no-debuginfod"])
        check("dbgd_leaf_spin" not in functions(prof, exe) and "debuginfod:" not in err,
              "--no-debuginfod still fetched")

        # a server giving another build's debug file: refused, counted
        prof, err, _, cache = profile(ns, tmp, exe, "http://127.0.0.1:%d" % PORT_WRONG)
        c = dbgd_counts(err)
        check(not os.path.exists(os.path.join(cache, bid, "debuginfo")),
              "the refused file is still in the cache")
        check(c["rejected"] >= 1 and "is not its debug file" in err,
              "wrong build id not rejected: %s" % c)
        check("dbgd_leaf_spin" not in functions(prof, exe), "a mismatched debug file was used")

        # an unreachable server: each fetch at most the timeout, counted
        timeout = 2.0
        prof, err, took, _ = profile(ns, tmp, exe, "http://127.0.0.1:%d" % PORT_CLOSED,
                                     ["--debuginfod-timeout", str(timeout)])
        c = dbgd_counts(err)
        asked = c["found"] + c["not_found"] + c["failed"] + c["rejected"]
        check(c["failed"] >= 1 and c["found"] == 0, "unreachable server: %s" % c)
        check(c["seconds"] <= asked * (timeout + 1.0),
              "%.2f s fetching for %d fetches over a %.1f s timeout" % (c["seconds"], asked,
                                                                       timeout))
        check("dbgd_leaf_spin" not in functions(prof, exe), "names from nowhere")

        # a server that never answers: cut at the timeout, counted
        prof, err, took, _ = profile(ns, tmp, exe, "http://127.0.0.1:%d" % PORT_SILENT,
                                     ["--debuginfod-timeout", str(timeout)])
        c = dbgd_counts(err)
        asked = c["found"] + c["not_found"] + c["failed"] + c["rejected"]
        check(c["failed"] == asked and asked >= 1, "silent server: %s" % c)
        check(timeout * asked * 0.9 <= c["seconds"] <= asked * (timeout + 1.0),
              "%.2f s fetching for %d fetches over a %.1f s timeout" % (c["seconds"], asked,
                                                                       timeout))
        check("timed out" in err, "no timeout said: %s" % err[-1000:])
        check("dbgd_leaf_spin" not in functions(prof, exe), "names from nowhere")
    except Failure:
        log_path = os.path.join(tmp, "debuginfod.log")
        if os.path.exists(log_path):
            print(open(log_path).read()[-3000:])
        raise
    finally:
        stop(server)
        stop(wrong)
        stop(silent)
        if ns:
            ns.close()
        shutil.rmtree(tmp, ignore_errors=True)
