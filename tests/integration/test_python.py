"""Python frames (issue 19): CPython's own stack (3.10 to 3.13), walked
in BPF at sampling time and merged with the native one.

tests/workloads/pyphases.py runs known phases (deep recursion, a list
comprehension, a method calling zlib, a generator pipeline) in its main
thread and a spinning function in a second thread, measuring each phase's
CPU time itself. Under `-- python3.11` (Debian's static interpreter),
pyenv's python3.11 (on libpython3.11.so) and pyenv's python3.10, 3.12 and
3.13 (on libpython3.1x.so; 3.12+'s comprehensions run in their function's
frame, PEP 709, so parse has no <listcomp>; 3.10 has no qualified names,
Codec.pack is pack): the Python functions are nodes
with their file and lines, in the order the program calls them (handler
-> fib -> fib ..., parse -> <listcomp>), zlib's C frames under Codec.pack,
the worker's function under its own thread, nearly every sample of the
main thread reaches <module>, and each phase's share of the main thread
is within TOL points of what the workload measured. --no-python: no
Python frame at all."""
import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from stcheck import (SANITIZED, STACKTREED, Daemon, busy_cpus, check, check_stacks_end_at_roots,
                     read_report, workload, check_invariants, function_cum, function_nodes, load,
                     main_thread, metric, nodes, proc_state, run_profiled, thread)

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "workloads", "pyphases.py")
DEBIAN = "/usr/bin/python3.11"
PYENV = "/root/.pyenv/versions/3.11.7/bin/python3.11"
PYENV310 = "/root/.pyenv/versions/3.10.13/bin/python3.10"
PYENV312 = "/root/.pyenv/versions/3.12.1/bin/python3.12"
PYENV313 = "/root/.pyenv/versions/3.13.0/bin/python3.13"
PY = "[python]"


def is_py(n):
    """A CPython frame: profile.json's runtime field says so."""
    return n["runtime"] == "python"


# Each phase's share of the main thread's samples against its own
# thread_time, in points. Before the workload shuffled its phases, `make
# spread RUNS=8 T="test_python_debian test_python_pyenv test_python_pid
# test_python_all"` (2026-11-25, -F 1999, both CPUs ~99% busy with other
# jobs all along) saw up to 2.61 points in 32 plain runs, 2.85 in 24
# _loaded ones, 2.70 in 56 with LOAD=1, then 3.30 and 5.0 in plain runs of
# ~7800 samples (binomial SD 0.5): aliasing of the workload's fixed ~1 ms
# cycle with the periodic sampler (kernel-notes/python.md, Accuracy). With
# the phases in a new order every cycle: largest error 1.0 point in 27
# runs of make spread RUNS=4 (all modes, idle and _loaded) and 1.16 in 7
# more; tolerance 2.5 = that plus a margin of ~4 SDs of a run's largest
# error (0.3).
TOL = 2.5
TOL_LOADED = 2.5
# the sanitized daemon (slower to drain and to read code objects): one of
# 3 sanitized -- CMD runs, 2 of them before the shuffle, was 6.2 points
# off (make spread SANITIZE=1, 2026-11-25); not remeasured since the
# shuffle: 4 more
SANITIZED_EXTRA = 4.0
FREQ = "1999"
# <module> on the stack in >= 99% of the samples running Python code
# (measured: 99.06-100%, lowest in -a). Under -a, a process born during the
# session is walked once the daemon has found its interpreter, after its
# first maps read: samples before that have no Python frame, and are
# counted neither as deferred nor as samples of Python processes (161 of
# 6252, ~80 ms, in one -a run of 40, 97.86%; the others 99.06% and up):
# 97.5% there.
MODULE_MIN = 0.99
MODULE_MIN_ALL = 0.975
DEFERRED = "python: deferred samples (merged by the daemon)"
EARLY = "samples taken before the full timer program was in (dwarf/auto: unwound late by the daemon)"


def def_line(name):
    """The line of `def name` in the workload, and of its body's first line."""
    for i, l in enumerate(open(SCRIPT), 1):
        if re.match(r"\s*def %s\(" % re.escape(name), l):
            return i
    raise AssertionError("no def %s" % name)


def py_nodes(root, name):
    return [(n, p) for n, p in function_nodes(root, name) if is_py(n)]


EVAL = "_PyEval_EvalFrameDefault"


def evaluating(root, leaf=lambda n: True):
    """(samples running Python code: a Python frame or the evaluation loop
    on the stack, those of them without a Python frame), counting only
    leaves that pass leaf(node). The rest is the interpreter's start-up
    (loader, pymain_init, compiling the script) and shutdown
    (Py_FinalizeEx): no Python stack to be complete."""
    running = native = 0
    stack = [(root, False, False)]
    while stack:
        n, py, ev = stack.pop()
        py, ev = py or is_py(n), ev or n["function"] == EVAL
        if (py or ev) and n["base"] and leaf(n):
            running += n["base"]
            native += 0 if py else n["base"]
        stack.extend((c, py, ev) for c in n["children"])
    return running, native


def is_libz(n):
    return bool(n["module"]) and "libz" in n["module"]


def zlib_elsewhere(root, notes, tail=8, top=3):
    """For a failure message: the most common paths (the last `tail`
    frames, root side to leaf, function@module) of the libz leaves that are
    not under the Python frame Codec.pack, and the notes about unwinding
    and Python."""
    paths = {}
    stack = [(root, [], False)]
    while stack:
        n, path, pack = stack.pop()
        if n["function"] is not None or n["module"]:
            mod = os.path.basename(n["module"] or "?")
            path = path + ["%s@%s" % (n["function"] or n.get("address", "?"), mod)]
            pack = pack or (is_py(n) and n["function"] in ("Codec.pack", "pack"))
        if n["kind"] == "leaf" and is_libz(n) and not pack and n["cum"]:
            key = " > ".join(path[-tail:])
            paths[key] = paths.get(key, 0) + n["cum"]
        stack.extend((c, path, pack) for c in n["children"])
    best = sorted(paths.items(), key=lambda kv: -kv[1])[:top]
    keep = {k: v for k, v in notes.items()
            if k.startswith(("unwind", "python:", "process", "stacks cut", "threads folded",
                             "samples inside execve"))}
    return "\n  libz leaves not under Codec.pack, commonest paths (%d distinct):\n%s" \
           "\n  notes: %s" % (len(paths), "\n".join("    %6d  %s" % (v, k) for k, v in best),
                             keep)


def check_python_profile(python, label, loaded=False, listcomp=True, qualnames=True):
    with busy_cpus() if loaded else contextlib.nullcontext():
        out, err, rep = run_profiled(["-F", FREQ, "--", python, SCRIPT, "4"], timeout=180)
    return check_python_run(out, rep, label, comm=os.path.basename(python), listcomp=listcomp,
                            qualnames=qualnames)


def check_python_run(out, rep, label, pid=None, comm="python3.11", listcomp=True,
                     qualnames=True):
    """label names the run's metrics: python_share_err_LABEL_PHASE ...;
    comm: the main thread's; listcomp: whether comprehensions have frames
    of their own (3.10, 3.11; 3.12+ run them in their function's, PEP 709);
    qualnames: whether code objects have them (3.11+; 3.10's nodes are
    named by co_name: Codec.pack is pack)."""
    def q(name):
        return name if qualnames else name.rsplit(".", 1)[-1]
    tol = (TOL_LOADED if label.endswith("_loaded") else TOL) + (SANITIZED_EXTRA if SANITIZED else 0)
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, comm) if pid is None else thread(prof, pid)
    notes = prof["notes"]
    check(notes.get("python: processes followed", 0) >= 1, "python processes: %s" % notes)
    metric("python_main_samples_" + label, t["samples"])
    # the walks' reads of process memory (their main cost, issue 37): a
    # walk with frames read its thread state and at least one frame
    # window; frames and code objects are among all reads
    walked = notes.get("python: samples with python frames", 0)
    reads = notes.get("python: reads of process memory by the walks", 0)
    rframes = notes.get("python: reads of frames by the walks", 0)
    rcodes = notes.get("python: reads of code objects by the walks", 0)
    check(walked > 0 and rframes >= walked and reads >= rframes + rcodes + walked,
          "python reads: %d walked, %d reads, %d of frames, %d of code objects"
          % (walked, reads, rframes, rcodes))
    metric("python_reads_per_walk_" + label, reads / walked)
    # Samples unwound late by the daemon (deferred: the process's unwind
    # tables were not in yet; -a, a process born during the session) get
    # their Python frames merged by the daemon, except a process's first
    # ones before its interpreter was found: up to that many of the thread's samples
    # in the evaluation loop without a Python frame are set apart from the
    # checks of complete Python stacks below (counted over all processes:
    # an upper bound). Measured (2026-11-25, 8+8 runs a mode): 0-9.3% of
    # the -a main thread's samples, under 1.6% in the other modes.
    # The early program's samples (taken before the full timer program was
    # in, a launched command's first seconds: kernel-notes/README.md,
    # "Sampling before the verifier finishes") are unwound late too.
    deferred = notes.get(DEFERRED, 0) + notes.get(EARLY, 0)
    running, native = evaluating(t["root"])
    late = min(deferred, native)
    metric("python_deferred_share_" + label, 100.0 * late / t["samples"])
    # A code object is read when BPF first reports it, milliseconds later:
    # one freed in between (an import's module body, the interpreter's
    # shutdown code as the process exits; other Python processes under
    # --pid/-a) is counted as unreadable and named "[python code]". Seen: 0
    # to 2 of ~40 code objects a run, a sample or two; the sanitized daemon
    # reads later. The workload's own functions are checked by name below.
    unread = function_cum(t["root"], "[python code]")
    metric("python_unreadable_samples", unread)
    check(unread <= (0.01 if SANITIZED else 0.005) * t["samples"],
          "%d samples in unreadable code objects in the workload: %s" % (unread, notes))
    # handler -> fib, and fib recursing under itself with the line of the call
    fibs = py_nodes(t["root"], "fib")
    check(fibs, "no fib node")
    parents = {p["function"] for _, p in fibs}
    check(parents == {q("handler.<locals>.<lambda>"), "fib"}, "fib's parents: %s" % parents)
    fl = def_line("fib")
    # its body's line; the def line while the frame starts (RESUME, where
    # the GIL may be dropped), as CPython itself reports it
    check(all(n["file"].endswith("pyphases.py") and n["line"] in (fl, fl + 1) for n, _ in fibs),
          "fib lines: %s" % {(n["file"], n["line"]) for n, _ in fibs})
    check(sum(n["cum"] for n, _ in fibs if n["line"] == fl + 1) >=
          0.9 * sum(n["cum"] for n, _ in fibs), "fib mostly on its body's line")
    depth = max(d for n, d, _ in nodes(t["root"]) if n["function"] == "fib")
    check(depth >= 20, "fib recursion only %d deep" % depth)
    # parse -> <listcomp> on parse's line (3.12+: parse itself, called by
    # its lambda, and no <listcomp> anywhere)
    pl = def_line("parse")
    # (3.10's "<listcomp>" names the standard library's too: the workload's)
    lcs = [(n, p) for n, p in py_nodes(t["root"], q("parse.<locals>.<listcomp>"))
           if n["file"].endswith("pyphases.py")]
    # a walk stopped by a failed read or an absurd value (counted) keeps
    # the frames it read, under the evaluation frames it could not pair:
    # only those samples may have another parent
    stopped = notes.get("python: walks stopped by a failed read", 0) + \
        notes.get("python: walks stopped by an absurd value", 0)
    if listcomp:
        elsewhere = sum(n["cum"] for n, p in lcs if p["function"] != "parse")
        check(lcs and elsewhere <= stopped, "<listcomp> parents: %s (%d samples not under "
              "parse, %d walks stopped)" % ({p["function"] for _, p in lcs}, elsewhere, stopped))
        check(all(n["line"] in (pl, pl + 1) for n, _ in lcs),
              "listcomp lines: %s" % {n["line"] for n, _ in lcs})
    else:
        check(not lcs, "a <listcomp> frame: %d nodes" % len(lcs))
        parses = py_nodes(t["root"], "parse")
        check(parses and all(p["function"] == q("handler.<locals>.<lambda>") for _, p in parses),
              "parse's parents: %s" % {p["function"] for _, p in parses})
        check(all(n["file"].endswith("pyphases.py") and n["line"] in (pl, pl + 1)
                  for n, _ in parses), "parse lines: %s" % {n["line"] for n, _ in parses})
    # zlib's C code under the Python method that called it
    packs = py_nodes(t["root"], q("Codec.pack"))
    check(packs, "no %s" % q("Codec.pack"))
    natives = [c for n, _ in packs for c, _, _ in nodes(n)
               if c["module"] and "libz" in c["module"]]
    z_all = sum(n["cum"] for n, _, _ in nodes(t["root"])
                if n["module"] and "libz" in n["module"] and n["kind"] == "leaf")
    z_under = sum(c["cum"] for c in natives if c["kind"] == "leaf")
    z_late = min(deferred, evaluating(t["root"], lambda n: n["module"] and "libz" in n["module"])[1])
    check(z_all > 0 and z_under >= 0.95 * (z_all - z_late),
          "zlib leaves under Codec.pack: %d of %d (%d deferred)%s"
          % (z_under, z_all, z_late, zlib_elsewhere(t["root"], notes)))
    # complete Python stacks: <module> on the path
    mod = function_cum(t["root"], "<module>")
    metric("python_module_share_" + label, 100.0 * mod / max(running - late, 1))
    need = MODULE_MIN_ALL if label.startswith("all") else MODULE_MIN
    check(mod >= need * (running - late), "<module> in %d of the %d samples running Python "
          "code (%d more deferred, %d of start-up and shutdown)"
          % (mod, running - late, late, t["samples"] - running))
    # each phase's share of the main thread's phases, as measured by itself
    work = {"fib": "fib", "parse": "parse", "pack": q("Codec.pack"), "total": "total"}
    measured = sum(rep["phases"][k] for k in work)
    counted = {k: function_cum(t["root"], f) for k, f in work.items()}
    csum = sum(counted.values())
    worst = 0.0
    for k in work:
        want = 100.0 * rep["phases"][k] / measured
        got = 100.0 * counted[k] / max(csum, 1)
        metric("python_share_err_%s_%s" % (label, k), got - want)
        worst = max(worst, abs(got - want))
        check(abs(got - want) <= tol, "%s: %.1f%% of the samples, measured %.1f%% (%s)"
              % (k, got, want, label))
    metric("python_share_maxerr_" + label, worst)
    # the worker thread's function under its own thread
    # spin under its own thread, at least its share of the worker's
    # thread_time, which the worker measures (the rest is its sleep's
    # wake-up and the GIL taken back: 5-10% idle, 25-30% on a busy machine,
    # where a fixed floor of 80% failed), less the tolerance and two
    # binomial SDs. Not at most: the samples give spin 6-12 points more
    # than thread_time does on pyenv's 3.10, 3.12, 3.13 and libpython
    # builds (launched, idle), 0-1 on Debian's 3.11, a difference not
    # explained yet
    w = thread(prof, rep["threads"]["worker"])
    got = 100.0 * function_cum(w["root"], "spin") / max(w["samples"], 1)
    want = 100.0 * rep["phases"]["worker_spin"] / max(rep["phases"]["worker"], 1e-9)
    room = tol + 100.0 / max(w["samples"], 1) ** 0.5
    metric("python_worker_spin_err_" + label, got - want)
    check(got >= want - room,
          "spin in %.1f%% of the worker's %d samples, measured %.1f%%"
          % (got, w["samples"], want))
    check(function_cum(t["root"], "spin") == 0, "spin under the main thread")
    # the xtree names them with file and line
    xt = open(os.path.join(out, "xtree.txt")).read()
    check("fib [pyphases.py:%d]" % (fl + 1) in xt, "xtree has no 'fib [pyphases.py:N]'")
    if listcomp:
        check(q("parse.<locals>.<listcomp>") + " [pyphases.py:" in xt, "xtree has no <listcomp>")
    else:
        check("parse [pyphases.py:%d]" % (pl + 1) in xt, "xtree has no 'parse [pyphases.py:N]'")
    return prof


def test_python_debian_static():
    check_python_profile(DEBIAN, "cmd")


def test_python_debian_static_loaded():
    """-- CMD while two busy loops keep both CPUs busy."""
    check_python_profile(DEBIAN, "cmd_loaded", loaded=True)


def test_python_pyenv_libpython():
    if not os.path.exists(PYENV):	# the machine image's source build
        print("skipped test_python_pyenv_libpython: %s is not installed" % PYENV)
        return
    check_python_profile(PYENV, "pyenv")


def test_python_pyenv_310():
    """CPython 3.10 (pyenv's, on libpython3.10.so): the same checks, its
    PyFrameObjects one evaluation call each, its threads found by
    pthread_self(), its nodes named by co_name and lined by 3.10's table."""
    if not os.path.exists(PYENV310):	# the machine image's source build
        print("skipped test_python_pyenv_310: %s is not installed" % PYENV310)
        return
    check_python_profile(PYENV310, "pyenv310", qualnames=False)


def test_python_pyenv_312():
    """CPython 3.12 (pyenv's, on libpython3.12.so): the same checks as 3.11's,
    its runs of frames ended by C-stack shim frames instead of is_entry."""
    if not os.path.exists(PYENV312):	# the machine image's source build
        print("skipped test_python_pyenv_312: %s is not installed" % PYENV312)
        return
    check_python_profile(PYENV312, "pyenv312", listcomp=False)


def test_python_pyenv_313():
    """CPython 3.13 (pyenv's, on libpython3.13.so): the same checks, its
    frames found from the thread state itself (no _PyCFrame)."""
    if not os.path.exists(PYENV313):	# the machine image's source build
        print("skipped test_python_pyenv_313: %s is not installed" % PYENV313)
        return
    check_python_profile(PYENV313, "pyenv313", listcomp=False)


def attached(mode, loaded=False):
    """The workload profiled by a daemon started beside it: --pid (it runs
    already) or -a (it starts once sampling has)."""
    out = tempfile.mkdtemp(prefix="st-it-py-")
    report = os.path.join(out, "workload.txt")
    env = dict(os.environ, WL_REPORT=report)
    cmd = [DEBIAN, SCRIPT, "4"]
    with busy_cpus() if loaded else contextlib.nullcontext():
        if mode == "pid":
            # the workload's clock starts once sampling has (the daemon
            # takes seconds to start on a loaded machine)
            env["WL_GO"] = os.path.join(out, "go")
            p = subprocess.Popen(cmd, env=env)
            time.sleep(0.3)
            d = Daemon(["--pid", str(p.pid), "-F", FREQ, "-o", out])
            open(env["WL_GO"], "w").close()
        else:
            d = Daemon(["-a", "-F", FREQ, "-o", out])
            p = subprocess.Popen(cmd, env=env)
        check(p.wait(timeout=120) == 0, "the workload failed")
        rc, err = d.stop()
    check(rc == 0, "stacktreed: " + err)
    return check_python_run(out, read_report(report), mode + ("_loaded" if loaded else ""), p.pid)


def test_python_pid():
    attached("pid")


def test_python_all():
    attached("all")


def test_python_all_probe_before_exec_event():
    """The -a exec race of the CI failure 'zlib leaves under Codec.pack: 2 of
    2150' made deterministic. A child of this Python, sampled before its
    exec (so the daemon reads its maps and probes it then), has the daemon
    stop (test hook STACKTREED_TEST_STOP_BEFORE_PY_PROBE) before that probe;
    the child execs the workload meanwhile, and the probe, let go, finds the
    new program's interpreter. The daemon then reads the exec event, which
    deletes the process's py_procs entry: the next probes must push it
    again. They did not (the same image and layout as pushed: 'nothing
    new'), and no sample of the workload had a Python frame after that."""
    import ctypes
    libc = ctypes.CDLL(None)
    out = tempfile.mkdtemp(prefix="st-it-py-")
    report = os.path.join(out, "workload.txt")
    d = Daemon(["-a", "-F", FREQ, "-o", out],
               env=dict(os.environ, STACKTREED_TEST_STOP_BEFORE_PY_PROBE="stpyexec"))

    def before_exec():
        # sampled under this name until the daemon stops before probing it
        libc.prctl(15, b"stpyexec", 0, 0, 0)	# PR_SET_NAME
        end = time.time() + 30
        while time.time() < end and proc_state(d.pid) != "T":
            pass

    try:
        p = subprocess.Popen([DEBIAN, SCRIPT, "2"], env=dict(os.environ, WL_REPORT=report),
                             preexec_fn=before_exec)
        check(proc_state(d.pid) == "T", "the daemon never stopped before probing the child")
        # the exec done (the loader has mapped libz), then the probe
        end = time.time() + 30
        while "libz" not in open("/proc/%d/maps" % p.pid).read():
            check(time.time() < end, "the workload never mapped libz")
            time.sleep(0.01)
    finally:
        os.kill(d.pid, signal.SIGCONT)
    check(p.wait(timeout=120) == 0, "the workload failed")
    rc, err = d.stop()
    check(rc == 0, "stacktreed: " + err)
    prof = load(out)
    check_invariants(prof)
    t = thread(prof, p.pid)
    running, native = evaluating(t["root"])
    check(running > 0 and native <= 0.1 * running,
          "%d of the %d samples running Python code have no Python frame: %s"
          % (native, running, prof["notes"]))
    packs = py_nodes(t["root"], "Codec.pack")
    z_all = sum(n["cum"] for n, _, _ in nodes(t["root"]) if is_libz(n) and n["kind"] == "leaf")
    z_under = sum(c["cum"] for n, _ in packs for c, _, _ in nodes(n)
                  if is_libz(c) and c["kind"] == "leaf")
    check(z_all > 0 and z_under >= 0.9 * z_all, "zlib leaves under Codec.pack: %d of %d%s"
          % (z_under, z_all, zlib_elsewhere(t["root"], prof["notes"])))


def test_python_pid_loaded():
    """--pid while two busy loops keep both CPUs busy."""
    attached("pid", loaded=True)


def test_python_all_loaded():
    """-a while two busy loops (Python processes too) keep both CPUs busy."""
    attached("all", loaded=True)


def test_python_off():
    out, err, rep = run_profiled(["-F", "199", "--no-python", "--", DEBIAN, SCRIPT, "1"])
    prof = load(out)
    check_invariants(prof)
    for t in prof["threads"]:
        check(not any(is_py(n) for n, _, _ in nodes(t["root"])),
              "Python frames with --no-python")
    check(not any(k.startswith("python:") for k in prof["notes"]),
          "python counters with --no-python")


# the program at the top of issue 19, as a user would write it
ISSUE_PROG = """import time
def fib(n): return n if n < 2 else fib(n-1) + fib(n-2)
def parse(s): return [int(x) for x in s.split(',')]
def handler():
    data = ','.join(str(i) for i in range(500))
    end = time.time() + 3
    while time.time() < end:
        fib(18)
        parse(data)
handler()
"""


def peek_callers(text, name):
    """Callers of `name` in `go tool pprof -peek` output (the lines above
    its own line in its block)."""
    callers, block = set(), []
    for line in text.splitlines():
        if line.startswith("-----"):
            block = []
        elif re.search(r"\|\s+%s\s*$" % re.escape(name), line) and "%" in line.split("|")[0] \
                and re.match(r"\s*[0-9.]+[mun]?s\s+[0-9.]+%", line):
            callers.update(block)
        else:
            m = re.search(r"\|\s+(\S+)\s*$", line)
            if m:
                block.append(m.group(1))
    return callers


def test_python_issue_example_xtree_and_pprof():
    """`stacktreed -- python3 prog.py` on the issue's own program: handler
    -> fib recursion and parse -> <listcomp> with their lines in the xtree,
    and in the real `go tool pprof` (-top, -top -lines, -peek, -list)."""
    from test_outputs import pprof, raw_samples
    d = tempfile.mkdtemp(prefix="st-it-pyissue-")
    prog = os.path.join(d, "prog.py")
    with open(prog, "w") as f:
        f.write(ISSUE_PROG)
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else DEBIAN
    out, err, rep = run_profiled(["-F", "499", "--format", "xtree,json,pprof", "--", python, prog])
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, "python3")
    fibs = py_nodes(t["root"], "fib")
    check({p["function"] for _, p in fibs} == {"handler", "fib"},
          "fib's parents: %s" % {p["function"] for _, p in fibs})
    # fib(18) recurses 17 deep; its innermost calls are too brief to be
    # sampled every run (measured: 16 levels below the outermost)
    depths = [dd for n, dd, _ in nodes(t["root"]) if n["function"] == "fib"]
    check(max(depths) - min(depths) >= 12, "fib recursion %d deep" % (max(depths) - min(depths)))
    # every <listcomp> sample under parse but for a stray one: a run of
    # 2026-11-28 had 1 of ~1,500 samples with <listcomp> as its only Python
    # frame, under the evaluation loop (not explained yet; the session note
    # has it)
    lcs = py_nodes(t["root"], "parse.<locals>.<listcomp>")
    under = sum(n["cum"] for n, p in lcs if p["function"] == "parse")
    stray = sum(n["cum"] for n, p in lcs if p["function"] != "parse")
    check(under > 0 and stray <= max(1, under // 100), "<listcomp> under parse: %d samples, "
          "elsewhere %d: %s" % (under, stray, sorted({p["function"] for _, p in lcs})))
    xt = open(os.path.join(out, "xtree.txt")).read()
    for want in ("handler [prog.py:8]", "fib [prog.py:2]", "parse [prog.py:3]",
                 "parse.<locals>.<listcomp> [prog.py:3]"):
        check(want in xt, "xtree has no '%s'" % want)
    pb = os.path.join(out, "profile.pb.gz")
    top = pprof(["-top", "-nodecount=400"], pb)
    cum = {l.split()[-1]: float(l.split()[4].rstrip("%")) for l in top.splitlines()
           if re.match(r"\s*[0-9.]+[mun]?s\s+[0-9.]+%", l) or re.match(r"\s*0\s+0%", l)}
    check(cum.get("fib", 0) >= 50 and cum.get("handler", 0) >= 90 and
          cum.get("parse.<locals>.<listcomp>", 0) > 0 and cum.get("parse", 0) > 0,
          "go tool pprof -top: %s" % {k: cum.get(k) for k in
                                      ("handler", "fib", "parse", "parse.<locals>.<listcomp>")})
    lines = pprof(["-top", "-lines", "-nodecount=400"], pb)
    for fn, line in (("fib", 2), ("parse.<locals>.<listcomp>", 3), ("handler", 8),
                     ("handler", 9)):
        check(re.search(r"\s%s %s:%d$" % (re.escape(fn), re.escape(prog), line), lines, re.M),
              "go tool pprof -top -lines has no '%s %s:%d'" % (fn, prog, line))
    peek = pprof(["-peek", "^(fib|parse.<locals>.<listcomp>)$"], pb)
    check("handler" in peek_callers(peek, "fib"), "fib's callers in pprof -peek: %s"
          % peek_callers(peek, "fib"))
    check(peek_callers(peek, "parse.<locals>.<listcomp>") == {"parse"},
          "<listcomp>'s callers in pprof -peek: %s" % peek_callers(peek, "parse.<locals>.<listcomp>"))
    lst = pprof(["-list", "^fib$"], pb)
    check(re.search(r"^\s+[0-9.]+[mun]?s\s+[0-9.]+[mun]?s\s+2:def fib", lst, re.M),
          "go tool pprof -list fib: no samples on line 2:\n%s" % lst[-600:])
    # the Python frames in one [python] mapping, a sample with a Python
    # leaf labelled profile.frame.type=cpython (go tool pprof -raw)
    samples, locs, maps = raw_samples(pprof(["-raw"], pb))
    check(list(maps.values()).count("[python]") == 1, "pprof mappings: %s" % maps)
    for n, leaf, labels in samples:
        py = maps.get(locs.get(leaf)) == "[python]"
        check(labels.get("profile.frame.type") == ("cpython" if py else "native"),
              "pprof sample of %d, leaf in %s: labels %s" % (n, maps.get(locs.get(leaf)), labels))
    py_leaf = sum(n["base"] for t in prof["threads"] for n, _, _ in nodes(t["root"])
                  if is_py(n))
    check(py_leaf > 0 and sum(n for n, _, l in samples if l.get("profile.frame.type") ==
                              "cpython") == py_leaf,
          "pprof samples labelled cpython differ from profile.json's Python BASE %d" % py_leaf)


def test_python_hostile_state():
    """A non-Python program that fakes the interpreter's symbols and state
    (tests/workloads/fakepy.c: a looping frame chain, a code object whose
    name has an absurd length): every walk is cut at 512 frames (ST_PY_MAX_FRAMES) and counted,
    the code object is refused, the daemon finishes."""
    d = tempfile.mkdtemp(prefix="st-it-fakepy-")
    fake = os.path.join(d, "python3.11-fake")
    shutil.copy(workload("fakepy"), fake)
    out, err, rep = run_profiled(["-F", "499", "--", fake, "2"])
    prof = load(out)
    check_invariants(prof)
    t = [t for t in prof["threads"] if t["pid"] == t["tid"]][0]
    notes = prof["notes"]
    cut = notes.get("python: stacks cut at 512 python frames", 0)
    check(cut >= 0.8 * t["samples"], "%d walks cut of %d samples: %s" % (cut, t["samples"], notes))
    check(notes.get("python: code objects unreadable", 0) >= 1, "code object read: %s" % notes)
    deepest = 0
    for n, _, _ in nodes(t["root"]):
        if is_py(n):
            check(n["function"] == "[python code]", "a fake frame named %s" % n["function"])
    # at most 512 Python frames on any path
    stack = [(t["root"], 0)]
    while stack:
        n, k = stack.pop()
        k += is_py(n)
        deepest = max(deepest, k)
        stack.extend((c, k) for c in n["children"])
    check(0 < deepest <= 512, "%d Python frames on a path" % deepest)


def test_python_unsupported_version():
    """An interpreter whose Py_Version has no layout (3.14.0, faked): said
    once by name on stderr, counted, profiled natively."""
    d = tempfile.mkdtemp(prefix="st-it-fakepy-")
    fake = os.path.join(d, "python3.14")
    shutil.copy(workload("fakepy314"), fake)
    out, err, rep = run_profiled(["-F", "199", "--", fake, "1"])
    lines = [l for l in err.splitlines() if "not supported" in l]
    check(len(lines) == 1 and re.search(r"python 3\.14 in pid \d+: not supported, native "
                                        r"frames only", lines[0]), "stderr: %s" % lines)
    prof = load(out)
    check(prof["notes"].get("python: processes of unsupported versions") == 1,
          "notes: %s" % prof["notes"])
    t = [t for t in prof["threads"] if t["pid"] == t["tid"]][0]
    check(function_cum(t["root"], "_PyEval_EvalFrameDefault") >= 0.8 * t["samples"],
          "native frames: %s" % t["samples"])
    check(not any(is_py(n) for n, _, _ in nodes(t["root"])), "Python frames")


# difflib and pydoc of the standard library, with a thread that dumps the
# main thread's Python stack (sys._current_frames) every ms or so (the
# GIL switch interval lowered to 0.5 ms so that it gets the chance)
REAL = r"""
import sys, threading, time
main, edges, stop = threading.main_thread().ident, set(), threading.Event()
sys.setswitchinterval(0.0005)
def dumper():
    while not stop.is_set():
        f, chain = sys._current_frames().get(main), []
        while f is not None:
            chain.append(f.f_code.co_qualname)
            f = f.f_back
        chain.reverse()
        edges.update(zip(chain, chain[1:]))
        time.sleep(0.001)
threading.Thread(target=dumper).start()
# imported once the dumper runs: their import chains are in the profile
# (since walks keep 768 frames, whole), so the dumps must see them too
import difflib, pydoc, random
rnd = random.Random(1)
words = ['w%d' % rnd.randrange(500) for _ in range(6000)]
a = [' '.join(words[i:i + 8]) for i in range(0, 6000, 8)]
b = [l if rnd.random() < 0.8 else l[::-1] for l in a]
end = time.time() + 4
while time.time() < end:
    difflib.HtmlDiff().make_file(a[:300], b[:300])
    pydoc.render_doc(difflib, renderer=pydoc.html)
stop.set()
with open(sys.argv[1], 'w') as out:
    for p, c in sorted(edges):
        out.write('%s\t%s\n' % (p, c))
"""


def test_python_real_program_matches_its_own_dumps():
    """Standard-library code (difflib, pydoc: nobody here wrote it): every
    caller -> callee pair of Python functions in the profile (callee under
    its nearest Python ancestor, C frames between skipped) is one the
    program's own sys._current_frames() dumps saw (>= 95%, weighted by
    the nodes' samples: the dumps see the main thread only where it lets
    go of the GIL, and miss brief calls that the profile has)."""
    d = tempfile.mkdtemp(prefix="st-it-pyreal-")
    script, dumps = os.path.join(d, "real.py"), os.path.join(d, "edges.txt")
    with open(script, "w") as f:
        f.write(REAL)
    out, err, rep = run_profiled(["-F", "499", "--", DEBIAN, script, dumps], timeout=180)
    prof = load(out)
    seen = {tuple(l.rstrip("\n").split("\t")) for l in open(dumps)}
    check(len(seen) > 50, "only %d pairs dumped" % len(seen))
    t = main_thread(prof, "python3.11")
    good = bad = 0
    missing = {}
    stack = [(t["root"], None)]
    while stack:
        n, py_parent = stack.pop()
        here = py_parent
        if is_py(n):
            if py_parent is not None:
                if (py_parent, n["function"]) in seen:
                    good += n["cum"]
                else:
                    bad += n["cum"]
                    missing[(py_parent, n["function"])] = n["cum"]
            here = n["function"]
        stack.extend((c, here) for c in n["children"])
    metric("python_real_pairs_seen", 100.0 * good / max(good + bad, 1))
    check(good > 0 and bad <= 0.05 * (good + bad), "pairs not in the dumps: %d of %d: %s"
          % (bad, good + bad, sorted(missing.items(), key=lambda x: -x[1])[:8]))


MP = r"""
import multiprocessing, time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def child(k):
    end = time.time() + 2
    while time.time() < end:
        fib(16)
    return k
if __name__ == '__main__':
    with multiprocessing.get_context('fork').Pool(2) as p:
        p.map(child, range(2))
"""


def test_python_multiprocessing_children():
    """Forked multiprocessing workers of a launched python3.11: each walks
    its own Python stack (child -> fib recursion) in its own process."""
    d = tempfile.mkdtemp(prefix="st-it-pymp-")
    script = os.path.join(d, "mp.py")
    with open(script, "w") as f:
        f.write(MP)
    out, err, rep = run_profiled(["-F", "499", "--", DEBIAN, script])
    prof = load(out)
    check_invariants(prof)
    pids = {t["pid"] for t in prof["threads"]
            if function_cum(t["root"], "child") >= 0.8 * t["samples"] and t["samples"] > 100}
    check(len(pids) == 2, "processes running child(): %s" % pids)
    for t in prof["threads"]:
        if t["pid"] in pids:
            fibs = py_nodes(t["root"], "fib")
            check(fibs and {p["function"] for _, p in fibs} == {"child", "fib"},
                  "fib's parents in %d: %s" % (t["pid"], {p["function"] for _, p in fibs}))


def profile_script(text, args, timeout=120):
    """Debian's python3.11 running the script text under stacktreed args:
    its profile.json, checked for the invariants."""
    d = tempfile.mkdtemp(prefix="st-it-pyscript-")
    script = os.path.join(d, "script.py")
    with open(script, "w") as f:
        f.write(text)
    out, err, rep = run_profiled(args + ["--", DEBIAN, script], timeout=timeout)
    prof = load(out)
    check_invariants(prof)
    return prof


# Phases in C libraries the interpreter maps only when the phase starts
# (libcrypto, libsqlite3, liblzma): their first samples are taken before
# the daemon has their unwind tables, so they are deferred to it.
LATE = r"""
import time
def spin(n):
    return n if n < 2 else spin(n - 1) + spin(n - 2)
def busy(work, seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        work()
def digest():
    import hashlib
    buf = b"x" * (1 << 20)
    busy(lambda: hashlib.sha256(buf).digest(), 0.4)
def query():
    import sqlite3
    db = sqlite3.connect(":memory:")
    busy(lambda: db.execute("with recursive c(x) as (select 1 union all select x + 1 "
                            "from c limit 20000) select sum(x) from c").fetchall(), 0.4)
def pack():
    import lzma
    buf = bytes(range(256)) * 256
    busy(lambda: lzma.compress(buf), 0.4)
busy(lambda: spin(12), 0.3)
digest()
query()
pack()
"""


def test_python_deferred_samples_keep_python_frames():
    """--unwind dwarf, samples deferred to the daemon (a library mapped
    while the program runs: its tables are not in yet): their Python
    frames were walked by BPF at the sample and are merged after the
    daemon's unwind, so no evaluation frame is left native in them. Before
    (measured: 35 deferred samples, 31 of them under a native
    _PyEval_EvalFrameDefault without their Python callers) they had native
    frames only. Seen: 16-26 deferred samples of the 1,500 of a run."""
    prof = profile_script(LATE, ["-F", "999", "--unwind", "dwarf", "--no-unwind-cache"],
                          timeout=180)
    notes = prof["notes"]
    deferred = notes.get("python: deferred samples (merged by the daemon)", 0)
    late = notes.get("unwind: samples unwound late in the daemon", 0)
    unpaired = notes.get("python: evaluation frames and python frames unpaired", 0)
    metric("pydefer.deferred", deferred)
    # the daemon, busy compiling the new libraries' tables, reads code
    # objects late: from BPF's copies, none is lost (before: 4-6 of ~60 a
    # run unreadable, their frames "[python code]")
    check(notes.get("python: code objects unreadable", 1) == 0, "%s" % notes)
    # the scenario deferred samples of the Python process (else it tests nothing)
    check(deferred > 0 and late >= deferred, "deferred %d, unwound late %d: %s"
          % (deferred, late, notes))
    # a sample in the evaluation loop's prologue, before it made its frame
    # current, has no Python frame to pair it with. The process is walked
    # from its exec (py_exes: the daemon read the executable before it
    # launched it), so no sample of it is taken before BPF knows it to be
    # Python: before, the interpreter's initialization, its frozen
    # importlib and the script's first lines were, until the daemon's
    # probe (19-29 samples a run plain, 25-50 with the sanitized daemon;
    # 17-25 in 5 runs under the CI run's load; since, 0 in 10, and in 4
    # sanitized). Its samples before the runtime is initialized (the
    # loader, libc's start) are walked and find no interpreter: counted (a
    # failed read: no interpreters.head yet; 6-16 a run, and 1-3 without a
    # thread state), without a Python frame, as they should be.
    # Before too, such samples still queued at the exit were walked with
    # the empty table an exiting process's maps read and cut at their
    # leaf, which hid them (13-33 native evaluation frames in 1-2 of 8
    # sanitized runs once not)
    noframe = notes.get("python: samples of threads without a python frame", 0)
    t = [t for t in prof["threads"] if t["pid"] == t["tid"]][0]
    before = max(0, t["samples"] - notes.get("python: samples of python processes", 0))
    native = function_cum(t["root"], "_PyEval_EvalFrameDefault")
    metric("pydefer.before_found", before)
    metric("pydefer.native", native)
    metric("pydefer.noframe", noframe)
    metric("pydefer.read_fault", notes.get("python: walks stopped by a failed read", 0))
    metric("pydefer.no_thread", notes.get("python: samples of threads without a thread state", 0))
    check(notes.get("python: processes walked from their exec", 0) == 1 and before <= 2,
          "%d samples of the process before it was known to be Python: %s" % (before, notes))
    check(native <= unpaired + noframe + before,
          "%d samples under a native evaluation frame (%d unpaired, %d without a python frame, "
          "%d before the process was found to be Python, %d deferred)"
          % (native, unpaired, noframe, before, deferred))
    for name in ("digest", "query", "pack"):
        # each phase's C library under its Python caller, a lambda in it
        fn = [n for n, p in py_nodes(t["root"], name)]
        check(sum(n["cum"] for n in fn) >= 0.5 * 0.4 * 999 * (0.5 if SANITIZED else 1),
              "%s: %d samples" % (name, sum(n["cum"] for n in fn)))
        lam = [c for n in fn for c, _, _ in nodes(n) if is_py(c) and
               c["function"] == "%s.<locals>.<lambda>" % name]
        check(any(not is_py(c) for l in lam for c, _, _ in nodes(l) if c is not l),
              "%s: no native frame under its lambda" % name)


# A script that spins, says it is done and renames itself (so that the
# daemon's stop hook, matching the launched name, stops it only once).
FROM_EXEC = r"""
import ctypes, os, time
def spin(n):
    return n if n < 2 else spin(n - 1) + spin(n - 2)
def busy(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        spin(12)
busy(0.4)
ctypes.CDLL(None).prctl(15, b"stpydone", 0, 0, 0)	# PR_SET_NAME
with open(os.environ["WL_REPORT"], "a") as f:
    f.write("phase done 1\n")
"""


def test_python_walked_from_exec():
    """The launched command, a CPython executable, is walked from its exec
    (py_exes: the daemon reads the file before it launches it, BPF puts
    its py_procs entry at the exec): here with the daemon stopped before
    its first probe of the process (test hook
    STACKTREED_TEST_STOP_BEFORE_PY_PROBE) until the script has ended, so
    every Python frame of the profile was walked before the daemon knew the
    process, and named from BPF's copies of its code objects. Before: no
    Python frame at all (the process gone when the probe ran)."""
    d = tempfile.mkdtemp(prefix="st-it-pyexec-")
    script = os.path.join(d, "fromexec.py")
    with open(script, "w") as f:
        f.write(FROM_EXEC)
    # a name of its own for the hook (python*: a CPython candidate still)
    exe = os.path.join(d, "python3.11-stx")
    os.symlink(DEBIAN, exe)
    out = os.path.join(d, "out")
    report = os.path.join(d, "workload.txt")
    env = dict(os.environ, WL_REPORT=report, STACKTREED_TEST_STOP_BEFORE_PY_PROBE="python3.11-stx")
    p = subprocess.Popen([STACKTREED, "-o", out, "-F", "999", "--", exe, script], env=env,
                         stderr=subprocess.PIPE, text=True)
    try:
        end = time.time() + 60
        while not os.path.exists(report) and p.poll() is None:
            check(time.time() < end, "the script never ended")
            time.sleep(0.02)
        stopped = proc_state(p.pid) == "T"
    finally:
        os.kill(p.pid, signal.SIGCONT)
    _, err = p.communicate(timeout=120)
    check(p.returncode == 0, "stacktreed exited %d: %s" % (p.returncode, err))
    # else it tests nothing: the daemon probed the process while it ran
    check(stopped, "the daemon did not stop before its probe")
    prof = load(out)
    check_invariants(prof)
    notes = prof["notes"]
    check(notes.get("python: processes walked from their exec", 0) == 1 and
          notes.get("python: exec entries the probe replaced (template taken back)", 0) == 0,
          "%s %s" % (notes, err))
    t = [t for t in prof["threads"] if t["pid"] == t["tid"]][0]
    running, native = evaluating(t["root"])
    spin = function_cum(t["root"], "spin")	# (outermost calls: it recurses)
    metric("pyexec.running", running)
    metric("pyexec.native", native)
    metric("pyexec.spin", spin)
    # 0.4 s of thread time in spin() at 999 Hz (half of it sanitized)
    check(spin >= 0.5 * 0.4 * 999 * (0.5 if SANITIZED else 1) and native <= 0.02 * running,
          "spin: %d samples; %d of the %d samples running Python code without a Python "
          "frame: %s" % (spin, native, running, notes))
    check(notes.get("python: code objects unreadable", 1) == 0, "%s" % notes)


# Twelve functions compiled from source, run and freed one after the
# other: CPython hands their code objects one address (the test checks it).
REUSE = r"""
import os, time
def run(i):
    src = ("def f%d():\n    end = time.thread_time() + 0.08\n"
           "    while time.thread_time() < end:\n        for _ in range(20000): pass\n"
           "f%d()\n" % (i, i))
    g = {"time": time}
    exec(compile(src, "gen%d.py" % i, "exec"), g)
    addr = id(g["f%d" % i].__code__)
    g.clear()   # no cycle left: the code object is freed here
    return addr
addrs = [run(i) for i in range(12)]
with open(os.environ["WL_REPORT"], "a") as f:
    f.write("phase addresses %d\n" % len(set(addrs)))
"""


def test_python_code_address_reused_names_each_object():
    """Code objects freed and their address reused (f0..f11 at one
    address): each function keeps its own name and file, by a generation
    per address in the frames' keys. Before, every one was named after the
    first object the daemon read there (the CI failure: `digest` named
    `<module>`; here all twelve were f0 of gen0.py)."""
    d = tempfile.mkdtemp(prefix="st-it-pyscript-")
    script = os.path.join(d, "reuse.py")
    with open(script, "w") as f:
        f.write(REUSE)
    out, err, rep = run_profiled(["-F", "999", "--", DEBIAN, script], timeout=120)
    prof = load(out)
    check_invariants(prof)
    addrs = rep["phases"].get("addresses")
    check(addrs is not None and addrs <= 3, "the code objects had %s addresses: nothing reused "
          "to test" % addrs)
    t = [t for t in prof["threads"] if t["pid"] == t["tid"]][0]
    # each f runs 0.08 s of its thread's CPU time: ~80 samples. Measured
    # spread: 72-92 a function idle and with two spinners and another
    # stacktreed -a, 60-98 with four spinners on the two CPUs. One loaded
    # CI run had f9 at 22: 58 of its samples named f0, a CPU's memo entry
    # of an earlier object with the same identity (bpf/pymemo.h, the reuse
    # epoch; 2 of 4 loaded runs before it, 0 of 5 after)
    want = 0.5 * 0.08 * 999 * (0.5 if SANITIZED else 1)
    fns = [[n for n, p in py_nodes(t["root"], "f%d" % i)] for i in range(12)]
    got = [sum(n["cum"] for n in fn) for fn in fns]
    for i in range(12):
        metric("pyreuse.f%d" % i, got[i])
        check(got[i] >= want, "f%d: %d samples, at least %d wanted (f0..f11: %s; the thread's %d, "
              "lost %s; Python frames: %s): %s" % (
                  i, got[i], want, got, t["samples"], prof["lost_by"],
                  {k: v for k, v in prof["notes"].items() if k.startswith("python: samples")},
                  sorted({(n["function"], n.get("file"), n["cum"]) for n, _, _ in
                          nodes(t["root"]) if is_py(n) and n["cum"] >= 5})))
        check(all(n.get("file") == "gen%d.py" % i for n in fns[i]), "f%d in %s" % (
            i, sorted({n.get("file") for n in fns[i]})))
    check(not prof["notes"].get("python: code names replaced (an address reused by 16 "
                                "objects)", 0), "names replaced: %s" % prof["notes"])


def test_python_names_from_bpf_copies():
    """Code objects are named from what BPF copied at the sample (the
    object's header, its name and file strings, its location table): with
    the daemon told to read nothing of the process (test hook
    STACKTREED_TEST_PY_COPIES_ONLY), every Python frame of pyphases.py is
    named, in its file, at a line inside its function's source. So a code
    object freed, or a process gone, before the daemon reads it keeps its
    name: before, the deferred-samples test lost 4-6 of ~60 objects a run
    (counted "unreadable", shown as [python code])."""
    import ast
    out, err, rep = run_profiled(["-F", "499", "--", DEBIAN, SCRIPT, "1"],
                                 env_extra={"STACKTREED_TEST_PY_COPIES_ONLY": "1"})
    prof = load(out)
    check_invariants(prof)
    notes = prof["notes"]
    check(notes.get("python: code objects read", 0) >= 10 and
          not notes.get("python: code objects unreadable", 1), "%s" % notes)
    tree = ast.parse(open(SCRIPT).read())
    spans = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ClassDef):
            for m in n.body:
                if isinstance(m, ast.FunctionDef):
                    spans["%s.%s" % (n.name, m.name)] = (m.lineno, m.end_lineno)
        elif isinstance(n, ast.FunctionDef):
            spans.setdefault(n.name, (n.lineno, n.end_lineno))
    seen = set()
    for t in prof["threads"]:
        for n, _, _ in nodes(t["root"]):
            if not is_py(n):
                continue
            check(not n["function"].startswith("["), "unnamed Python frame: %s" % n)
            if n.get("file") == SCRIPT and n["function"] in spans:
                lo, hi = spans[n["function"]]
                check(lo <= n["line"] <= hi, "%s at line %s, outside %d-%d" % (
                    n["function"], n["line"], lo, hi))
                seen.add(n["function"])
    check({"fib", "parse", "Codec.pack", "worker"} <= seen, "functions found: %s" % sorted(seen))


def test_python_interpreters_switch():
    """--interpreters none is --no-python (no Python node, no python
    counters: the BPF walker is dead code then); --interpreters python
    walks it; an unknown runtime is refused in one line before anything
    is loaded."""
    from stcheck import STACKTREED
    for args, on in ((["--interpreters", "none"], False), (["--interpreters", "python"], True)):
        out, err, rep = run_profiled(["-F", "199"] + args + ["--", DEBIAN, SCRIPT, "1"])
        prof = load(out)
        check_invariants(prof)
        t = [t for t in prof["threads"] if t["pid"] == t["tid"]][0]
        pyn = sum(n["cum"] for n, _, _ in nodes(t["root"]) if is_py(n) and
                  n["function"] == "<module>")
        if on:
            check(pyn >= 0.9 * t["samples"], "%s: <module> in %d of %d samples"
                  % (args, pyn, t["samples"]))
            check(prof["notes"].get("python: samples with python frames", 0) > 0,
                  "%s: %s" % (args, prof["notes"]))
        else:
            check(not any(is_py(n) for n, _, _ in nodes(t["root"])),
                  "Python frames with %s" % args)
            check(not any(k.startswith("python:") for k in prof["notes"]),
                  "python counters with %s" % args)
    p = subprocess.run([STACKTREED, "--interpreters", "python,ruby", "--", "true"],
                       capture_output=True, text=True, timeout=30)
    lines = [l for l in p.stderr.splitlines() if not l.startswith("Try ")]
    check(p.returncode == 64 and len(lines) == 1 and
          "unknown runtime 'ruby': give python,java, all or none" in lines[0],
          "exit %d: %s" % (p.returncode, p.stderr))


def test_python_json_kind_round_trip():
    """profile.json gives a Python node "runtime": "python" and "kind":
    "python" (module "[python]", file and line kept; a call site's offset
    is its line, the leaf's null), and `stacktree report --input` reads it
    back and renders every format as stacktreed did (before, two Python
    leaves of one function on two lines were one frame when read back:
    "duplicate node")."""
    from stcheck import STACKTREE
    fmts = "xtree,arcflow,json,folded,svg,pprof"
    out, err, rep = run_profiled(["-F", "499", "--format", fmts, "--", DEBIAN, SCRIPT, "1"])
    prof = load(out)
    check_invariants(prof)
    kinds = {}
    for t in prof["threads"]:
        for n, _, _ in nodes(t["root"]):
            if is_py(n) or n["kind"] == "python" or n["module"] == PY:
                check(is_py(n) and n["kind"] == "python" and n["module"] == PY,
                      "Python node %s: runtime %s, kind %s, module %s"
                      % (n["function"], n["runtime"], n["kind"], n["module"]))
                leaf = n["offset"] is None
                check(leaf or n["offset"] == n.get("line", 0), "call site %s: offset %s, line %s"
                      % (n["function"], n["offset"], n.get("line")))
                kinds[leaf] = kinds.get(leaf, 0) + 1
    check(kinds.get(True, 0) > 0 and kinds.get(False, 0) > 0, "Python leaves and call sites: %s"
          % kinds)
    rt = tempfile.mkdtemp(prefix="st-it-pyjson-")
    p = subprocess.run([STACKTREE, "report", "--input", os.path.join(out, "profile.json"),
                        "--format", fmts, "-o", rt], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "report --input: %s" % p.stderr)
    for name in ("xtree.txt", "arcflow.txt", "stacks.folded", "flamegraph.svg"):
        a = [l for l in open(os.path.join(out, name)) if not l.startswith("#")]
        b = [l for l in open(os.path.join(rt, name)) if not l.startswith("#")]
        check(a == b, "%s differs after report --input" % name)
    back = load(rt)
    check(back["threads"] == prof["threads"], "profile.json's trees differ after report --input")


SUB = r"""
import subprocess, sys
child = '''
import time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def spin():
    end = time.thread_time() + 1.5
    while time.thread_time() < end:
        fib(15)
spin()
'''
subprocess.run([sys.executable, "-c", child], check=True)
"""


def test_python_subprocess_child():
    """A `subprocess` child (python3.11 -c ...) of a launched python3.11:
    a new process (fork then exec) found as CPython anew, whose own Python
    stack is walked: spin -> fib recursion under <module> of "<string>"."""
    prof = profile_script(SUB, ["-F", "499"])
    kids = [t for t in prof["threads"] if t["pid"] == t["tid"] and
            function_cum(t["root"], "spin") > 0]
    check(len(kids) == 1, "processes running spin(): %s" % [t["pid"] for t in kids])
    t = kids[0]
    check(t["pid"] != min(x["pid"] for x in prof["threads"]), "spin() in the parent")
    spin = function_cum(t["root"], "spin")
    check(spin >= 0.8 * t["samples"] and t["samples"] > 200,
          "spin() in %d of %d samples" % (spin, t["samples"]))
    fibs = py_nodes(t["root"], "fib")
    check(fibs and {p["function"] for _, p in fibs} == {"spin", "fib"},
          "fib's parents: %s" % {p["function"] for _, p in fibs})
    callers = {(p["function"], p.get("file")) for _, p in py_nodes(t["root"], "spin")}
    check(callers == {("<module>", "<string>")}, "spin's callers: %s" % callers)


# Python recursion through C: each level is a Python frame and the native
# frames of sorted() and of the evaluation loop, so the merged stack is
# about 1,100 frames deep at 100 levels, over the 768 a path keeps.
DEEP = r"""
import time
def level(n):
    if n == 0:
        end = time.thread_time() + 0.02
        while time.thread_time() < end:
            pass
        return 0
    return sorted([n], key=lambda x: level(x - 1))[0]
end = time.thread_time() + 1.5
while time.thread_time() < end:
    level(100)
"""


def test_python_merged_stack_cut_is_truncated():
    """A merged stack over ST_MAX_USER (768) frames (100 levels, each
    through sorted()'s C code: ~1,100) keeps its leaf side and
    goes under [truncated] like a native walk cut short (it lost its
    outermost frames: the summary counts them as merged stacks cut), in
    --unwind dwarf and auto (Debian's python3.11 has no frame pointers:
    --unwind fp walks a few native frames of it, never 768)."""
    for mode in ("dwarf", "auto"):
        prof = profile_script(DEEP, ["-F", "499", "--unwind", mode])
        t = main_thread(prof, "python3.11")
        cut = prof["notes"].get("python: merged stacks cut at 768 frames", 0)
        check(cut >= 0.5 * t["samples"], "%s: %d merged stacks cut of %d samples: %s"
              % (mode, cut, t["samples"], prof["notes"]))
        check_stacks_end_at_roots(prof, {"python3.11"})
        trunc = function_cum(t["root"], "[truncated]")
        check(trunc >= cut, "%s: %d samples under [truncated], %d cut" % (mode, trunc, cut))
