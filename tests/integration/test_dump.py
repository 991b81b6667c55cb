"""Integration tests of `stacktreed dump --pid PID` (issue 36 item 3):
each thread's stack once, named, for a hung process. The hang workload
(main blocked in read() under block_in_read, a thread in pause() under
wait_forever and worker): both stacks named down to main and
start_thread, while it sleeps and again while SIGSTOP holds it, which it
still does after the dump; a process spinning in the phases workload is
dumped in work_a and then runs to its end as if nothing happened; the
threads are held well under a second (stopped and walked in ~15 ms, named
after); no -o, no -a."""
import os
import re
import signal
import subprocess
import tempfile
import time

from stcheck import STACKTREED, check, read_report, wait_for, workload

# The threads are stopped and walked in ~15 ms (measured 12-20 on a busy
# machine), then named (DWARF lines of libc and the program: 340-780 ms).
TAKE_MS = 500
DUMP_MS = 5000


def dump(pid):
    p = subprocess.run([STACKTREED, "dump", "--pid", str(pid)], capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0, "stacktreed dump exited %d: %s" % (p.returncode, p.stderr))
    m = re.search(r"stacktreed dump: (\d+) threads in (\d+) ms: stopped and walked in (\d+) ms",
                  p.stderr)
    check(m, "no timing line on stderr: %s" % p.stderr)
    check(int(m.group(3)) < TAKE_MS, "the threads were held %s ms" % m.group(3))
    check(int(m.group(2)) < DUMP_MS, "the dump took %s ms" % m.group(2))
    print("  %s threads: stopped and walked in %s ms, named by %s ms"
          % (m.group(1), m.group(3), m.group(2)))
    return p.stdout, int(m.group(1)), int(m.group(2))


def threads(text):
    """{tid: (header, [function names, leaf first])}"""
    out = {}
    for block in text.strip().split("\n\n")[1:]:
        lines = block.splitlines()
        m = re.match(r"Thread (\d+) ", lines[0])
        check(m, "not a thread header: %r" % lines[0])
        out[int(m.group(1))] = (lines[0], [l.split()[0] for l in lines[1:]
                                          if l.startswith("    ") and not l.startswith("    (")])
    return out


def state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def check_hang(text, pid, word):
    ts = threads(text)
    check(len(ts) == 2, "%d threads dumped, the workload has 2:\n%s" % (len(ts), text))
    main, other = ts.pop(pid), list(ts.values())[0]
    for header, _ in (main, other):
        check(word in header, "a thread not %s: %r" % (word, header))
    for fn in ("block_in_read", "main"):
        check(fn in main[1], "main thread's stack lacks %s:\n%s" % (fn, text))
    for fn in ("wait_forever", "worker", "start_thread"):
        check(fn in other[1], "the worker's stack lacks %s:\n%s" % (fn, text))
    check(main[1].index("block_in_read") < main[1].index("main"), "not leaf first:\n" + text)


def test_dump_hung_and_stopped():
    rep = tempfile.mktemp(prefix="st-it-dump-")
    wl = subprocess.Popen([workload("hang")], env=dict(os.environ, WL_REPORT=rep))
    try:
        wait_for(lambda: "ready" in read_report(rep)["phases"], 30, "hang never ready")
        text, n, ms = dump(wl.pid)
        check_hang(text, wl.pid, "sleeping")
        check(state(wl.pid) == "S", "after the dump the process is %s" % state(wl.pid))

        os.kill(wl.pid, signal.SIGSTOP)
        wait_for(lambda: state(wl.pid) == "T", 10, "SIGSTOP did not stop it")
        text, n, ms = dump(wl.pid)
        check_hang(text, wl.pid, "stopped")
        time.sleep(0.2)
        check(state(wl.pid) == "T", "the dump let a stopped process go: %s" % state(wl.pid))
        os.kill(wl.pid, signal.SIGCONT)
        wait_for(lambda: state(wl.pid) == "S", 10, "SIGCONT did not wake it")
    finally:
        wl.kill()
        wl.wait()
        if os.path.exists(rep):
            os.unlink(rep)


def test_dump_running_process_goes_on():
    """A thread on the CPU is dumped where it spins; the process then
    finishes its phases and exits 0."""
    rep = tempfile.mktemp(prefix="st-it-dump-")
    wl = subprocess.Popen([workload("phases")], env=dict(os.environ, WL_SCALE="1",
                                                         WL_REPORT=rep))
    try:
        time.sleep(0.3)  # inside phase_a: 1.2 s of CPU, 0.3 s of wall time at most 0.3
        text, _, ms = dump(wl.pid)
        stacks = threads(text)
        check(list(stacks) == [wl.pid], "threads %s" % list(stacks))
        header, fns = stacks[wl.pid]
        # in whichever phase the dump found it (a slow start, the sanitized
        # build's, reaches phase_b): its work function under that phase
        # (through helper in phase_b) and main; the spin reads the clock, so
        # vDSO frames may be under it
        work = [f for f in fns if f.startswith("work_")]
        at = fns.index(work[0]) if work else -1
        phase = "phase_" + work[0][len("work_"):][0] if work else None
        rest = [f for f in fns[at + 1:at + 4] if f != "helper"]
        check(at >= 0 and rest[:2] == [phase, "main"],
              "the spinning stack: %s\n%s" % (fns, text))
        check(wl.wait(timeout=120) == 0, "the workload exited %s" % wl.returncode)
        check(len(read_report(rep)["phases"]) == 3, "the workload did not finish its phases")
    finally:
        if wl.poll() is None:
            wl.kill()
            wl.wait()
        if os.path.exists(rep):
            os.unlink(rep)


def test_dump_usage():
    for args, want in ((["-a"], "one process"), (["--pid", "1", "-o", "x"], "no -o"),
                       (["--pid", "1", "--unwind", "fp"], "not with --unwind fp")):
        p = subprocess.run([STACKTREED, "dump"] + args, capture_output=True, text=True,
                           timeout=30)
        check(p.returncode == 64 and want in p.stderr, "dump %s: exit %d, %s"
              % (args, p.returncode, p.stderr))
