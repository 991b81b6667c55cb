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
import bisect
import os
import re
import shutil
import struct
import subprocess
import tempfile

from stcheck import (Skip, burner, check, check_cut_short_reasons, check_invariants,
                     check_stacks_end_at_roots, check_unresolved_counts, function_cum, load,
                     main_thread, metric, nodes, perf_stacks, run_profiled)
from test_compilers import (COMPLETE_ROOTS, LIBC, OUTSIDE_MAIN, plain_name, profile_beside_perf, same_form,
                            shares_against_perf, stack_roots)
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
    burners = [burner(["sh", "-c", "while :; do :; done"]) for _ in range(2)]
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


def fde_ranges(path):
    """The [start, end) of every FDE in path's .eh_frame (readelf), sorted."""
    p = subprocess.run(["readelf", "-wf", path], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "readelf -wf %s: %s" % (path, p.stderr))
    return sorted((int(a, 16), int(b, 16))
                  for a, b in re.findall(r" FDE .*pc=([0-9a-f]+)\.\.([0-9a-f]+)", p.stdout))


def stretch_of(ranges, off):
    """None when an FDE covers module offset off, else the index of the
    stretch without CFI that holds it (the FDE before it)."""
    i = bisect.bisect_right(ranges, (off, float("inf"))) - 1
    if i >= 0 and off < ranges[i][1]:
        return None
    return i


def call_before(code, ret):
    """The call instruction ending at ret in code (bytes at offset 0 of the
    file, whose executable segment has vaddr = offset): ("direct", target),
    ("indirect", None) or None. An independent reading of
    user/collect/unwind/callcheck.c's rule."""
    b = code[ret - 8:ret]
    if len(b) < 8:
        return None
    if b[3] == 0xe8:
        return "direct", ret + struct.unpack("<i", b[4:8])[0]
    for n in range(2, 8):
        op, modrm = b[8 - n], b[9 - n]
        if op != 0xff or (modrm >> 3) & 7 != 2:
            continue
        mod, rm, ln = modrm >> 6, modrm & 7, 1
        if mod != 3:
            if rm == 4:
                ln += 1
                if mod == 0 and n > 2 and b[10 - n] & 7 == 5:
                    ln += 4
            elif mod == 0 and rm == 5:
                ln += 4
            ln += {1: 1, 2: 4}.get(mod, 0)
        if ln == n - 1:
            return "indirect", None
    return None


def test_ffmpeg_libx264_beside_perf_under_command():
    """Debian's ffmpeg encoding with libx264 (stripped: 47 exported functions
    in .dynsym, the rest C with CFI and ~400 KB of assembly without CFI or
    frame pointers), launched as -- perf record -- ffmpeg. The daemon walks
    past the assembly by a checked scan (user/collect/unwind/unwind_native.h,
    st_unw_scan()): >= 90% of the main thread's stacks reach
    __libc_start_call_main (measured, 8 s of video: 96.6-97.0%; 36% before
    the scan, 34-42% in perf, which stops in the assembly: the "callers"
    it reads there are pixel data, 0xaaaaaaaaaaaaaaa9, not code). No wrong
    caller: every caller of a frame in x264's assembly that is code is in
    libx264, after a call instruction (read here from the file,
    independently of the daemon's decoder) that either calls that frame's
    stretch without CFI at or below it, or is an indirect call from code
    with CFI, but for a few (0-11 of ~9,000) that are no code or follow no
    call: BPF's frame-pointer steps through the assembly (auto mode) that
    read a zero pair and took the stack for whole, so never deferred to the
    scan (deferring every such walk made test_dwarf's qsort_nocfi flaky). Among the
    stacks through no assembly the CUM shares agree with perf's complete
    ones (x264_encoder_encode, avcodec_send_frame, ...). ~20 s."""
    if not FFMPEG:
        raise Skip("ffmpeg is not installed (scripts/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="st-ffmpeg-")
    try:
        out, data = profile_beside_perf(ffmpeg_x264("960x540", 8), tmp, "cmd")
        prof = load(out)
        # every sample of perf's with user frames (none: in the kernel
        # alone) whose leaf is not in libc (perf cannot unwind out of some
        # of libc's leaves: test_compilers.shares_against_perf); one
        # `perf script` (each takes seconds)
        theirs = [s for s in perf_stacks(data, "ffmpeg", under=None, skip_leaf_in=LIBC) if s]
        complete_theirs = [s for s in theirs if "__libc_start_call_main" in s]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    check_invariants(prof)
    t = main_thread(prof, "ffmpeg")
    roots = stack_roots(t)
    n_ours = t["samples"] - roots.get("[kernel]", 0)
    n_theirs = len(theirs)
    # complete: reaching _start (perf names no _start in the stripped
    # ffmpeg: its complete ones reach __libc_start_call_main)
    p_ours = 100.0 * sum(roots.get(r, 0) for r in COMPLETE_ROOTS) / n_ours
    p_theirs = 100.0 * sum(1 for s in theirs if "__libc_start_call_main" in s) / n_theirs
    metric("ffmpeg.complete_pct", p_ours)
    metric("ffmpeg.perf_complete_pct", p_theirs)
    notes = prof["notes"]	# by their text
    scanned = sum(v for k, v in notes.items() if "a checked stack scan found" in k)
    failed = sum(v for k, v in notes.items() if "found no checked caller" in k)
    metric("ffmpeg.scanned_frames", scanned)
    metric("ffmpeg.scans_failed", failed)
    check(p_ours >= 90.0 and p_ours > p_theirs,
          "ffmpeg: %.2f%% of %d samples reach _start here (>= 90 wanted), "
          "%.2f%% of %d in perf; %d frames found by scan, %d scans failed; roots %s" % (
              p_ours, n_ours, p_theirs, n_theirs, scanned, failed,
              sorted(roots.items(), key=lambda kv: -kv[1])[:6]))
    check(scanned > 0, "ffmpeg: no frame found by scan (notes %s)" % sorted(notes))

    # the callers of x264's assembly, checked against the file's code
    lib = os.path.realpath(LIBX264)
    ranges = fde_ranges(lib)
    with open(lib, "rb") as f:
        code = f.read()
    base = None
    for n, _, _ in nodes(t["root"]):
        m = re.match(r"\[libx264\.so\.164\+0x([0-9a-f]+)\]$", n["function"] or "")
        if m and n.get("address") and n.get("offset") is not None:
            base = int(n["address"], 16) - int(m.group(1), 16) - n["offset"]
            break
    check(base is not None, "libx264: no frame named per FDE to place the module by")
    edges, wrong, unmapped = 0, [], 0
    stack = [(t["root"], None)]
    while stack:
        n, parent = stack.pop()
        if n.get("address"):
            # (a leaf's address is its function's: the pc is somewhere in
            # it, at or above a direct call's target)
            if "libx264" in (n.get("module") or "") and parent is not None:
                off = int(n["address"], 16) - base - (0 if n["kind"] == "leaf" else 1)
                s = stretch_of(ranges, off)
                if s is not None:	# a frame in the assembly: its caller was scanned for
                    edges += n["cum"]
                    ok = "libx264" in (parent.get("module") or "")
                    if ok:
                        ret = int(parent["address"], 16) - base
                        c = call_before(code, ret)
                        ok = c is not None and (
                            (c[0] == "direct" and stretch_of(ranges, c[1]) == s and
                             (n["kind"] == "leaf" or c[1] <= off + 1)) or
                            (c[0] == "indirect" and stretch_of(ranges, ret - 1) is None))
                    if not parent.get("module"):
                        # no code: BPF's frame-pointer step through the
                        # assembly (auto mode) that read a zero pair and
                        # took the stack for whole, so never deferred
                        unmapped += n["cum"]
                    elif not ok:
                        wrong.append((n.get("function"), n["address"], parent.get("function"),
                                      parent.get("module"), n["cum"]))
            parent = n
        for k in n["children"]:
            stack.append((k, parent))
    metric("ffmpeg.assembly_caller_samples", edges)
    check(edges > 0.2 * n_ours, "ffmpeg: only %d samples through x264's assembly with a caller"
          % edges)
    # none of these is the scan's (its candidates follow a call into
    # code with CFI): BPF's frame-pointer steps through the assembly in
    # stacks it took for whole (measured: 0-10 and 0-1 of ~9,000 samples)
    bad = sum(w[-1] for w in wrong)
    metric("ffmpeg.assembly_caller_no_code", unmapped)
    metric("ffmpeg.assembly_caller_no_call", bad)
    check(unmapped + bad <= 0.005 * n_ours, "ffmpeg: %d of %d samples have a caller of x264's "
          "assembly that is no code, %d one that no call instruction explains: %s" % (
              unmapped, n_ours, bad, wrong[:6]))

    # the stacks through no assembly against perf's complete ones
    asm = lambda n: ("libx264" in (n.get("module") or "") and n.get("address") and
                     stretch_of(ranges, int(n["address"], 16) - base -
                                (0 if n["kind"] == "leaf" else 1)) is not None)
    ours, under = {}, 0
    stack = [(t["root"], frozenset(), False)]
    while stack:
        n, above, through = stack.pop()
        through = through or bool(asm(n))
        f = plain_name(n.get("function"))
        f = same_form(f) if f else f
        if f:
            above = above | {f}
        if n.get("base") and not through and "__libc_start_call_main" in above and \
                LIBC not in (n.get("module") or ""):
            under += n["base"]
            for g in above:
                ours[g] = ours.get(g, 0) + n["base"]
        for k in n["children"]:
            stack.append((k, above, through))
    counts = {}
    for s in complete_theirs:
        for f in {same_form(f) for f in s}:
            counts[f] = counts.get(f, 0) + 1
    compared = 0
    for f, k in sorted(counts.items(), key=lambda kv: -kv[1]):
        pt = 100.0 * k / len(complete_theirs)
        if pt < 5.0 or f.startswith("[") or f in OUTSIDE_MAIN:
            continue
        po = 100.0 * ours.get(f, 0) / max(under, 1)
        tol = agreement_tolerance(po, under, pt, len(complete_theirs))
        metric("perf_dwarf.cmd.ffmpeg.%s.diff_pts" % f, po - pt)
        check(abs(po - pt) <= tol, "ffmpeg: %s %.2f%% of %d samples through no assembly here, "
              "%.2f%% of %d complete in perf, tolerance %.2f" % (f, po, under, pt,
                                                                 len(complete_theirs), tol))
        compared += 1
    check(compared >= 4, "ffmpeg: only %d functions above 5%% in perf's stacks" % compared)
    # every other stack is under [truncated] with a counted reason, none
    # short of a root unmarked (issue 20 item 2), and the header's counts
    # are the trees'; so are the unresolved ones
    check_stacks_end_at_roots(prof, {"ffmpeg"})
    check_cut_short_reasons(prof)
    check_unresolved_counts(prof)
    # those cut short: mostly x264's (scans that found no checked caller),
    # the others ld.so's lazy binding, printf's positional arguments
    cut = roots.get("[truncated]", 0)
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

