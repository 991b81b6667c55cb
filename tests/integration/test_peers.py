"""bpftrace as a peer (the guide: perf, bpftrace and go tool pprof check
what stacktreed reports). bpftrace's `profile` probe with `ustack`
(bpf_get_stack, frame pointers) and stacktreed --pid (default --unwind
auto) profile the same run of the phases workload (known call structure,
CPU time of each phase reported by the workload); each phase's and each
work function's share of the samples agrees between the two and with the
measured CPU time. bpftrace symbolizes user stacks only while the process
lives (the workload waits for an end file), where stacktreed keeps the
maps of exited processes."""
import os
import re
import shutil
import subprocess
import tempfile

from stcheck import (Daemon, check, check_invariants, function_cum, load, main_thread, metric,
                     wait_for, workload)
from test_dwarf import agreement_tolerance

BPFTRACE = shutil.which("bpftrace")
# bpftrace with tracefs mounted in a mount namespace of its own (for
# `tracepoint:` probes; this machine does not mount tracefs)
BPFTRACE_TRACEFS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                                "bpftrace-tracefs")
FUNCS = ("phase_a", "phase_b", "phase_c", "helper", "work_a", "work_b", "work_c1", "work_c2")


def bpftrace_stacks(text):
    """(count, set of function names) per stack of a bpftrace map keyed by
    ustack (`@[ustack]`, `@off[...]`): blocks of '    name+off' lines
    between '@NAME[' and ']: N'."""
    for m in re.finditer(r"@\w*\[\n(.*?)\]: (\d+)", text, re.S):
        names = {l.strip().split("+")[0] for l in m.group(1).split("\n") if l.strip()}
        yield int(m.group(2)), names


def bpftrace_attach(argv):
    """Start bpftrace (argv) and wait until it says "Attaching N probes...":
    (the running process, None), or (None, its ERROR lines) when it ends
    without attaching."""
    bt = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    said = ""
    line = bt.stdout.readline()
    while line and "Attaching" not in line:
        said += line
        line = bt.stdout.readline()
    if "Attaching" in line:
        return bt, None
    bt.wait()
    return None, " / ".join(l for l in said.splitlines() if "ERROR" in l and "RLIMIT" not in l)


def test_bpftrace_agrees():
    check(BPFTRACE, "bpftrace is not installed (scripts/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="st-bt-")
    start, end, report, out = (os.path.join(tmp, n) for n in ("start", "end", "wl.txt", "st"))
    env = dict(os.environ, WL_START_FILE=start, WL_END_FILE=end, WL_REPORT=report)
    wl = subprocess.Popen([workload("phases")], env=env)
    bt = d = None
    try:
        prog = "profile:hz:499 /pid == %d/ { @[ustack] = count(); }" % wl.pid
        bt, why = bpftrace_attach([BPFTRACE, "-e", prog])
        check(bt, "bpftrace did not attach: %s" % why)
        d = Daemon(["--pid", str(wl.pid), "-F", "499", "-o", out])
        open(start, "w").close()
        wait_for(lambda: os.path.exists(report) and "phase_c" in open(report).read(), 60,
                 "the workload did not finish its phases")
        bt.send_signal(2)	# SIGINT: bpftrace prints its map, symbolized
        text = bt.communicate(timeout=60)[0]
        bt = None
        open(end, "w").close()
        wl.wait(timeout=30)	# reaped: a zombie would still be a live target
        rc, err = d.stop(sig=None, timeout=60)	# it ends with its target
        d = None
        check(rc == 0, "stacktreed --pid: " + err)
        with open(report) as f:
            cpu = {m.group(1): float(m.group(2)) for m in re.finditer(r"phase (\S+) ([0-9.]+)",
                                                                      f.read())}
        prof = load(out)
    finally:
        if bt:
            bt.kill()
            bt.wait()
        if d:
            d.stop()
        open(end, "w").close()
        if wl.poll() is None:
            wl.kill()
            wl.wait()
    check_invariants(prof)
    t = main_thread(prof, "phases")
    # bpftrace's samples of the work (under main), by function
    theirs, n_theirs = {}, 0
    for n, names in bpftrace_stacks(text):
        if "main" not in names:
            continue
        n_theirs += n
        for f in names:
            theirs[f] = theirs.get(f, 0) + n
    n_ours = function_cum(t["root"], "main")
    check(n_theirs > 500 and n_ours > 500, "samples under main: bpftrace %d, stacktreed %d" %
          (n_theirs, n_ours))
    all_cpu = sum(cpu.values())
    for f in FUNCS:
        p_ours = 100.0 * function_cum(t["root"], f) / n_ours
        p_theirs = 100.0 * theirs.get(f, 0) / n_theirs
        tol = agreement_tolerance(p_ours, n_ours, p_theirs, n_theirs)
        metric("bpftrace.%s.diff_pts" % f, p_ours - p_theirs)
        check(abs(p_ours - p_theirs) <= tol, "%s: %.2f%% of %d samples here, %.2f%% of %d in "
              "bpftrace, tolerance %.2f" % (f, p_ours, n_ours, p_theirs, n_theirs, tol))
        if f in cpu:	# and both agree with the CPU time the workload measured
            real = 100.0 * cpu[f] / all_cpu
            check(abs(p_ours - real) <= agreement_tolerance(p_ours, n_ours, real, 10 ** 6),
                  "%s: %.2f%% of samples, %.2f%% of CPU time" % (f, p_ours, real))
    shutil.rmtree(tmp, ignore_errors=True)
