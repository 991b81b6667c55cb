"""Real programs from Debian packages besides the compilers (issue 10,
"real software is the test that counts"): an interpreter (python3.11 with
libcrypto under hashlib), a database (the sqlite3 shell over libsqlite3) and
a C++ program (g++'s cc1plus compiling template code), profiled in the
default --unwind auto next to `perf record --call-graph dwarf` on the same
run (test_compilers.shares_against_perf): >= 99% of the program's samples
have a complete stack, and its per-function CUM shares agree with perf's.
Each in another mode: --pid, -- CMD, and -a while two busy loops keep both
CPUs loaded. None of these binaries keeps frame pointers.
And ffmpeg encoding with libx264, whose hand-written assembly has neither
CFI nor frame pointers: its stacks end under [truncated], counted by
reason, never short of a root unmarked; the rest, as perf's, agrees with
perf; the header's counters are the profile's; code of x264's stripped
static functions is named per FDE. (Its size-0 assembly labels still take
the code after them, which has neither symbols nor FDEs: docs/limits.md.)"""
import os
import re
import shutil
import subprocess
import tempfile

from stcheck import (Skip, check, check_cut_short_reasons, check_stacks_end_at_roots,
                     check_unresolved_counts, function_cum, load, main_thread, metric, nodes,
                     perf_stacks, run_profiled)
from test_compilers import shares_against_perf, stack_roots
from test_dwarf import agreement_tolerance

# Debian's interpreter (python3 on PATH may be another one, pyenv's)
PYTHON = "/usr/bin/python3.11"
SQLITE = shutil.which("sqlite3")
GXX = shutil.which("g++")

# CPU seconds of Python: recursion in the interpreter, SHA-256 in libcrypto
# (through the _hashlib module), a sort with a key function
PY_WORK = r'''
import hashlib, sys, time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def digest(data):
    return hashlib.sha256(data).digest()
def order(xs):
    return sorted(xs, key=lambda x: (x * 7919) % 10007)
data = b"x" * (1 << 20)
xs = list(range(20000))
end = time.process_time() + float(sys.argv[1])
while time.process_time() < end:
    fib(18)
    digest(data)
    order(xs)
'''

# a recursive CTE with functions per row, then a join through an index
SQL = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<1500000) "
       "SELECT count(*), sum(x*x % 7), max(length(printf('%d-%x', x, x))) FROM c; "
       "CREATE TABLE t(a INTEGER, b TEXT); "
       "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<300000) "
       "INSERT INTO t SELECT (x*7919)%100003, hex(randomblob(8)) FROM c; "
       "CREATE INDEX ti ON t(b); "
       "SELECT count(*) FROM t a JOIN t b ON a.a=b.a WHERE a.b < b.b;")

# templates instantiated many times over: cc1plus's time in the C++ front end
CXX_UNIT = r'''
#include <map>
#include <string>
#include <vector>
#include <algorithm>
template <int N> struct Node {
	std::map<std::string, std::vector<int>> m;
	int f(int x) { std::vector<int> v(x); std::sort(v.begin(), v.end()); return Node<N - 1>().f(x) + (int)v.size(); }
};
template <> struct Node<0> { int f(int x) { return x; } };
'''


def test_python3_beside_perf_under_pid():
    check(os.access(PYTHON, os.X_OK), "%s is missing (scripts/deps.sh installs python3)" % PYTHON)
    tmp = tempfile.mkdtemp(prefix="st-py-")
    try:
        script = os.path.join(tmp, "work.py")
        with open(script, "w") as f:
            f.write(PY_WORK)
        # Debian's python3.11 has no main() frame: main tail-calls Py_BytesMain;
        # the evaluation loop's frames are where the Python frames stand
        # here (issue 19): every other native function is compared
        prof = shares_against_perf([PYTHON, script, "4"], "python3.11", "pid", tmp,
                                   entry="Py_BytesMain", replaced=("_PyEval_EvalFrameDefault",))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t = [t for t in prof["threads"] if t["comm"] == "python3.11"][0]
    # the three kinds of work are each a visible share
    for fn in ("SHA256_Update", "_PyFunction_Vectorcall"):
        check(function_cum(t["root"], fn) > 0.05 * t["samples"], "python3: %s cum %d of %d" %
              (fn, function_cum(t["root"], fn), t["samples"]))


def test_sqlite3_beside_perf_under_command():
    check(SQLITE, "sqlite3 is not installed (scripts/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="st-sqlite-")
    try:
        # the shell is stripped: perf has no name for its main, so the
        # shares are of the samples under libc's __libc_start_call_main
        prof = shares_against_perf([SQLITE, ":memory:", SQL], "sqlite3", "cmd", tmp,
                                   entry="__libc_start_call_main")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t = [t for t in prof["threads"] if t["comm"] == "sqlite3"][0]
    # stacktreed names the stripped program's _start and main (entry code
    # and .eh_frame): every complete stack is _start > ... > main
    top = [c for c in t["root"]["children"] if c["function"] == "_start" and
           c["module"] == os.path.realpath(SQLITE)]
    check(top and function_cum(t["root"], "main") >= 0.99 * sum(c["cum"] for c in top),
          "sqlite3: _start %s, main cum %d" % ([c["cum"] for c in top],
                                               function_cum(t["root"], "main")))
    check(function_cum(t["root"], "sqlite3VdbeExec") > 0.5 * t["samples"],
          "sqlite3: sqlite3VdbeExec cum %d of %d" % (function_cum(t["root"], "sqlite3VdbeExec"),
                                                     t["samples"]))


def test_cxx_compiler_beside_perf_system_wide_on_a_busy_machine():
    check(GXX, "g++ is not installed (scripts/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="st-cxx-")
    burners = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)]
    try:
        src = os.path.join(tmp, "unit.cpp")
        with open(src, "w") as f:
            f.write(CXX_UNIT)
            f.write("int main() { return Node<%d>().f(3); }\n" % 700)
        shares_against_perf([GXX, "-O2", "-ftemplate-depth=2000", "-c", src, "-o",
                             os.path.join(tmp, "unit.o")], "cc1plus", "all", tmp)
    finally:
        for b in burners:
            b.kill()
            b.wait()
        shutil.rmtree(tmp, ignore_errors=True)


FFMPEG = shutil.which("ffmpeg")
LIBX264 = "/usr/lib/x86_64-linux-gnu/libx264.so.164"


def ffmpeg_x264(size, seconds):
    """ffmpeg encoding a generated video (lavfi's testsrc2) with libx264 at
    -preset medium into nothing, one thread (perf_stacks reads main
    threads only): 960x540 for 8 s takes ~4.5 s of CPU here, for 16 s ~7.8
    s (2026-11-28)."""
    return [FFMPEG, "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i",
            "testsrc2=size=%s:rate=25" % size, "-t", str(seconds), "-c:v", "libx264",
            "-preset", "medium", "-threads", "1", "-f", "null", "-"]


def fde_starts(path):
    """The start address of every FDE in path's .eh_frame (readelf)."""
    p = subprocess.run(["readelf", "-wf", path], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "readelf -wf %s: %s" % (path, p.stderr))
    return {int(m, 16) for m in re.findall(r" FDE .*pc=([0-9a-f]+)\.\.", p.stdout)}


def test_ffmpeg_libx264_beside_perf_under_command():
    """Debian's ffmpeg encoding with libx264 (stripped: 47 exported functions
    in .dynsym, the rest C with CFI and ~400 KB of assembly without CFI or
    frame pointers), launched as -- perf record -- ffmpeg. Measured (7 runs,
    stacktreed at 1999 Hz, perf at 999 Hz, the main thread's samples with
    user frames): 33.6-39.7% of the stacks reach __libc_start_call_main
    here, 34.1-41.7% in perf (the difference -2.2 to +3.6 points; the
    tolerance, 4.5 standard deviations, is ~3.7): the rest is x264's
    assembly, where both stop (here under [truncated], "no CFI", or a stack
    read fault after a frame-pointer step through it; 99.6-99.9% of them
    with a libx264 frame). Among the complete stacks the CUM shares agree
    with perf's within 0.9 points (x264_encoder_encode 91.6% against 91.5%,
    avcodec_send_frame 71.4% against 71.3%); 16-24 s (8 s of video)."""
    if not FFMPEG:
        raise Skip("ffmpeg is not installed (scripts/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="st-ffmpeg-")
    try:
        # ffmpeg is stripped: perf has no name for its _start, so the
        # shares are of the samples under libc's __libc_start_call_main;
        # main and three others are above 5% in perf's (av_read_frame too
        # in most runs, 5-7%)
        # 14 s of video, ~7 s of CPU: perf's complete stacks not ending in
        # libc numbered 936 in a run of 8 s of video (2026-11-28, the VM
        # faster than on other days), under the 1,000 that
        # shares_against_perf asks for
        prof = shares_against_perf(ffmpeg_x264("960x540", 14), "ffmpeg", "cmd", tmp,
                                   min_compared=4, entry="__libc_start_call_main",
                                   min_complete=0)
        # profile_beside_perf's perf.data: every sample of perf's, complete
        # or not, with its user frames (none: a sample in the kernel alone)
        theirs = [s for s in perf_stacks(os.path.join(tmp, "perf.data"), "ffmpeg", under=None)
                  if s]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t = main_thread(prof, "ffmpeg")
    roots = stack_roots(t)
    n_ours = t["samples"] - roots.get("[kernel]", 0)
    n_theirs = len(theirs)
    p_ours = 100.0 * function_cum(t["root"], "__libc_start_call_main") / n_ours
    p_theirs = 100.0 * sum(1 for s in theirs if "__libc_start_call_main" in s) / n_theirs
    metric("ffmpeg.complete_pct", p_ours)
    metric("ffmpeg.perf_complete_pct", p_theirs)
    # as complete as perf's stacks (within sampling noise), or more
    tol = agreement_tolerance(p_ours, n_ours, p_theirs, n_theirs)
    check(p_ours >= p_theirs - tol, "ffmpeg: %.2f%% of %d samples reach __libc_start_call_main "
          "here, %.2f%% of %d in perf, tolerance %.2f; roots %s" % (
              p_ours, n_ours, p_theirs, n_theirs, tol,
              sorted(roots.items(), key=lambda kv: -kv[1])[:6]))
    # every other stack is under [truncated] with a counted reason, none
    # short of a root unmarked (issue 20 item 2), and the header's counts
    # (samples, stacks cut short: check_invariants in shares_against_perf)
    # are the trees'; so are the unresolved ones
    check_stacks_end_at_roots(prof, {"ffmpeg"})
    check_cut_short_reasons(prof)
    check_unresolved_counts(prof)
    cut = roots.get("[truncated]", 0)
    # those cut short are x264's: a frame of libx264 on >= 90% of them
    # (the others: ld.so's lazy binding, a return address read off the
    # stack that is no code)
    trunc = [c for c in t["root"]["children"] if c["function"] == "[truncated]"]
    in_x264 = 0
    for c in trunc:
        stack = [(c, False)]
        while stack:
            n, seen = stack.pop()
            seen = seen or "libx264" in (n.get("module") or "")
            if seen and n["base"]:
                in_x264 += n["base"]
            for k in n["children"]:
                stack.append((k, seen))
    metric("ffmpeg.truncated_in_x264_share", in_x264 / max(cut, 1))
    check(in_x264 >= 0.9 * cut, "ffmpeg: %d of %d stacks cut short have a frame in libx264"
          % (in_x264, cut))
    # x264's static C functions (no symbol left, an FDE each) are named
    # '[libx264.so.164+0xOFF]', OFF their FDE's start, one name each
    starts = fde_starts(os.path.realpath(LIBX264))
    named = {}
    for n, _, _ in nodes(t["root"]):
        m = re.match(r"\[libx264\.so\.164\+0x([0-9a-f]+)\]$", n["function"] or "")
        if m:
            named[int(m.group(1), 16)] = named.get(int(m.group(1), 16), 0) + n["base"]
    check(len(named) >= 20 and set(named) <= starts,
          "libx264: %d functions named by FDE, not at an FDE start: %s" % (
              len(named), sorted(hex(o) for o in set(named) - starts)[:8]))
    check(sum(named.values()) > 0.1 * n_ours, "libx264: FDE-named code is the leaf of %d of %d"
          " samples" % (sum(named.values()), n_ours))

