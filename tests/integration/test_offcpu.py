"""Time off the CPU (--event offcpu, --event wall) against the truth of the
offcpu workload (tests/workloads/offcpu.c): its main thread spins, sleeps,
blocks on a pipe and waits for a mutex, and measures each phase's wall
time (CLOCK_MONOTONIC) and CPU time (CLOCK_THREAD_CPUTIME_ID) itself.
Off-CPU mode: each phase's share of the thread's time off the CPU within
2 points of its share of the blocked time measured (wall - CPU); wall mode:
each phase's share of wall time within 2 points. Under the three attach
modes (-- CMD, --pid, -a), idle and with both CPUs busy."""
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from stcheck import (STACKTREED, Daemon, Skip, busy_cpus, check, check_invariants,
                     function_cum, load, main_thread, metric, wait_for,
                     workload)

PHASES = ("phase_spin", "phase_sleep", "phase_pipe", "phase_mutex")
BLOCKED = ("phase_sleep", "phase_pipe", "phase_mutex")
TOLERANCE_PTS = 2.0	# the bound (measured: within 1.1 points idle and busy)


def truth(path):
    """{phase: (wall s, cpu s)} from the workload's report."""
    wall, cpu = {}, {}
    with open(path) as f:
        for m in re.finditer(r"^(wall|cpu) (\S+) ([0-9.]+)$", f.read(), re.M):
            (wall if m.group(1) == "wall" else cpu)[m.group(2)] = float(m.group(3))
    check(set(wall) == set(PHASES) and set(cpu) == set(PHASES),
          "the workload reported %s / %s" % (sorted(wall), sorted(cpu)))
    return {p: (wall[p], cpu[p]) for p in PHASES}


def profile_workload(mode, event, extra=(), files=None):
    """Run the workload under stacktreed attached by mode ("cmd", "pid" or
    "all"); returns (profile.json, truth, stderr); files: the names of the
    profile.json files to load (two events: prefixed), a list in place of
    the one profile."""
    tmp = tempfile.mkdtemp(prefix="st-it-offcpu-")
    out, report, start = (os.path.join(tmp, n) for n in ("st", "wl.txt", "start"))
    args = ["-e", event, "-F", "999", "-o", out] + list(extra)
    if mode == "cmd":
        p = subprocess.run([STACKTREED] + args + ["--", workload("offcpu")],
                           env=dict(os.environ, WL_REPORT=report), capture_output=True,
                           text=True, timeout=120)
        err = p.stderr
        check(p.returncode == 0, "stacktreed %s exited %d: %s" % (args, p.returncode, err))
    else:
        env = dict(os.environ, WL_START_FILE=start, WL_REPORT=report)
        wl = subprocess.Popen([workload("offcpu")], env=env)
        d = None
        try:
            # -a: system-wide, its walks and names kept to the workload by --comm
            target = ["--pid", str(wl.pid)] if mode == "pid" else ["-a", "--comm", "offcpu"]
            d = Daemon(target + args)
            open(start, "w").close()
            check(wl.wait(timeout=120) == 0, "the workload failed")
            if mode == "pid":
                rc, err = d.stop(sig=None, timeout=60)	# it ends with its target
            else:
                rc, err = d.stop()
            d = None
            check(rc == 0, "stacktreed %s: %s" % (" ".join(target + args), err))
        finally:
            if d:
                d.stop()
            if wl.poll() is None:
                wl.kill()
                wl.wait()
    prof = [load(os.path.join(out, f)) for f in files] if files else load(out)
    real = truth(report)
    shutil.rmtree(tmp, ignore_errors=True)
    return prof, real, err


def workload_thread(prof, mode):
    if mode == "all":
        ts = [t for t in prof["threads"] if t["comm"] == "offcpu" and t["pid"] == t["tid"]]
        check(ts, "the workload is not in the system-wide profile")
        return max(ts, key=lambda t: t["samples"])
    return main_thread(prof, "offcpu")


def check_shares(prof, real, mode, phases, measured, what):
    """Each phase's share of the thread's time under the phases (CUM in ns)
    against its share of the measured time."""
    check_invariants(prof)
    t = workload_thread(prof, mode)
    ours = {p: function_cum(t["root"], p) for p in phases}
    total_ours, total_real = sum(ours.values()), sum(measured.values())
    check(total_ours > 0, "%s: no time under the phases: %s" % (what, ours))
    # the time folded is the time measured (ns), not a count of samples
    ratio = total_ours / 1e9 / total_real
    metric("offcpu.%s.time_ratio" % what, ratio)
    check(0.85 <= ratio <= 1.1, "%s: %.3f s folded under the phases, %.3f s measured"
          % (what, total_ours / 1e9, total_real))
    for p in phases:
        mine = 100.0 * ours[p] / total_ours
        theirs = 100.0 * measured[p] / total_real
        metric("offcpu.%s.%s.diff_pts" % (what, p), mine - theirs)
        check(abs(mine - theirs) <= TOLERANCE_PTS, "%s: %s %.2f%% of the time here, %.2f%% "
              "measured (tolerance %.1f points)" % (what, p, mine, theirs, TOLERANCE_PTS))
    return t


def offcpu_run(mode, busy):
    with busy_cpus() if busy else _idle():
        prof, real, _ = profile_workload(mode, "offcpu")
    check(prof["event"] == "offcpu", "event %r" % prof["event"])
    blocked = {p: real[p][0] - real[p][1] for p in BLOCKED}
    what = "offcpu.%s.%s" % (mode, "busy" if busy else "idle")
    t = check_shares(prof, real, mode, BLOCKED, blocked, what)
    return prof, t


def wall_run(mode, busy):
    """--event wall: on-CPU samples (their period in ns) and off-CPU time in
    one tree, each phase's share of it its share of the wall time."""
    with busy_cpus() if busy else _idle():
        prof, real, _ = profile_workload(mode, "wall")
    check(prof["event"] == "wall", "event %r" % prof["event"])
    check(prof["frequency_hz"] == 999, "frequency %r" % prof["frequency_hz"])
    wall = {p: real[p][0] for p in PHASES}
    what = "wall.%s.%s" % (mode, "busy" if busy else "idle")
    return prof, check_shares(prof, real, mode, PHASES, wall, what)


class _idle:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def leaves_under(root, phase):
    """{(blocking point, state): ns} of the off-CPU paths under phase."""
    found = {}
    stack = [(root, False, None)]
    while stack:
        n, inside, kfunc = stack.pop()
        inside = inside or n["function"] == phase
        if n.get("kernel") or n.get("runtime") == "kernel":
            kfunc = n["function"]
        if inside and not n["children"] and n["function"] and n["function"].startswith("["):
            found[(kfunc, n["function"])] = found.get((kfunc, n["function"]), 0) + n["cum"]
        for c in n["children"]:
            stack.append((c, inside, kfunc))
    return found


def test_offcpu_blocking_points_and_states():
    """The leaf of each blocked phase is where the kernel blocked it, under
    the state it left in: nanosleep, the pipe's read, the futex."""
    prof, t = offcpu_run("cmd", False)
    want = {"phase_sleep": "nanosleep", "phase_pipe": "pipe_read", "phase_mutex": "futex"}
    for phase, kfunc in want.items():
        leaves = leaves_under(t["root"], phase)
        total = sum(leaves.values())
        hit = sum(v for (k, s), v in leaves.items() if k and kfunc in k and s == "[sleeping]")
        check(total and hit >= 0.8 * total, "%s: %.0f%% of its time at a %s blocking point "
              "sleeping: %s" % (phase, 100.0 * hit / max(total, 1), kfunc, leaves))
    check("off-CPU time folded (ns)" in prof["notes"], "notes: %s" % sorted(prof["notes"]))


def test_offcpu_and_wall_shares_command():
    for busy in (False, True):
        offcpu_run("cmd", busy)
        wall_run("cmd", busy)


def test_offcpu_and_wall_shares_pid():
    for busy in (False, True):
        offcpu_run("pid", busy)
        wall_run("pid", busy)


def test_offcpu_and_wall_shares_system_wide():
    for busy in (False, True):
        offcpu_run("all", busy)
        wall_run("all", busy)


def test_endpoint_serves_offcpu_and_wall():
    """The live endpoint: -e cpu,offcpu serves the timer's profile by default
    and the off-CPU one for ?event=offcpu (sample type off_cpu/nanoseconds,
    as go tool pprof reads it); -e wall serves wall/nanoseconds. Each holds
    the workload's blocked (or wall) time of the 3 s asked, not a count."""
    from test_endpoint import free_port, pprof_raw
    tmp = tempfile.mkdtemp(prefix="st-it-offcpu-ep-")
    report = os.path.join(tmp, "report")
    env = dict(os.environ, WL_SCALE="8", WL_REPORT=report)
    for event, query, want in (("cpu,offcpu", "&event=offcpu", "off_cpu"),
                               ("cpu,offcpu", "", "samples"),
                               ("wall", "", "wall")):
        if os.path.exists(report):
            os.unlink(report)
        wl = subprocess.Popen([workload("offcpu")], env=env, stderr=subprocess.DEVNULL)
        port = free_port()
        d = Daemon(["--pid", str(wl.pid), "-e", event, "-F", "199", "-o",
                    os.path.join(tmp, "out"), "--listen", str(port)])
        try:
            # the window in the sleep phase (4.8 s at WL_SCALE 8), after the
            # spin phase: a window that fell in the spin (the first 4.8 s)
            # held no off-CPU time of the main thread (0.00 s seen)
            wait_for(lambda: os.path.exists(report) and "phase_spin" in open(report).read(),
                     60, "the workload did not finish its spin phase")
            url = "http://127.0.0.1:%d/debug/pprof/profile?seconds=3%s" % (port, query)
            with urllib.request.urlopen(url, timeout=30) as r:
                body = r.read()
            if event == "wall":	# an event the session does not have: 400, said why
                try:
                    urllib.request.urlopen(url + "&event=offcpu", timeout=30)
                    check(False, "?event=offcpu of a wall session answered")
                except urllib.error.HTTPError as e:
                    check(e.code == 400 and b"this session has wall" in e.read(),
                          "?event=offcpu of a wall session: %d" % e.code)
        finally:
            wl.kill()
            wl.wait()
            d.stop()
        _, _, raw = pprof_raw(body, tmp)
        # the sample types, "type/unit" each, under "Samples:"
        m = re.search(r"^Samples:\n(.*)$", raw, re.M)
        types = [t for t in (m.group(1).split() if m else []) if not t.startswith("[")]
        check(types and types[0].split("/")[0] == want, "%s%s: sample types %s"
              % (event, query, types))
        if want == "samples":
            check(types == ["samples/count", "cpu/nanoseconds"], "sample types %s" % types)
            continue
        check(types == [want + "/nanoseconds"], "sample types %s" % types)
        total = sum(int(v) for v in re.findall(r"^\s+(\d+): \d", raw, re.M))
        # 3 s of the workload's main thread and its helpers, in ns: the main
        # thread alone is away or running all of them (wall) or most (off-CPU)
        metric("offcpu.endpoint.%s_s" % want, total / 1e9)
        check(1.5e9 <= total <= 3 * 3.5e9, "%s: %.2f s in a 3 s profile" % (want, total / 1e9))
    shutil.rmtree(tmp, ignore_errors=True)


def test_cpu_and_offcpu_two_trees():
    """-e cpu,offcpu: one session, two profiles: the timer's (samples, the
    spin phase's CPU time at 999 Hz) and the off-CPU one (ns, each blocked
    phase's share of the blocked time)."""
    (cpu, off), real, _ = profile_workload("cmd", "cpu,offcpu",
                                           files=("cpu.profile.json", "offcpu.profile.json"))
    check(cpu["event"] == "cpu-clock" and cpu["unit"] == "samples", "cpu: %s %s"
          % (cpu["event"], cpu["unit"]))
    check(off["event"] == "offcpu" and off["unit"] == "nanoseconds", "offcpu: %s %s"
          % (off["event"], off["unit"]))
    spin = function_cum(main_thread(cpu, "offcpu")["root"], "phase_spin")
    want = real["phase_spin"][1] * 999
    metric("offcpu.two_trees.spin_samples_ratio", spin / want)
    check(0.85 * want <= spin <= 1.1 * want, "cpu tree: %d samples in phase_spin, %.0f "
          "expected (%.3f s of CPU at 999 Hz)" % (spin, want, real["phase_spin"][1]))
    check_shares(off, real, "cmd", BLOCKED, {p: real[p][0] - real[p][1] for p in BLOCKED},
                 "two_trees")


def test_offcpu_threshold_and_rate_are_counted():
    """--offcpu-min-us 20000: the workload's 8 ms waits are not folded but
    counted with their time; --offcpu-max-rate 5: the switch-outs over it
    are not walked, counted with their time."""
    prof, real, _ = profile_workload("cmd", "offcpu", extra=["--offcpu-min-us", "20000"])
    # its main thread may have no period of 20 ms at all: then no tree
    mains = [t for t in prof["threads"] if t["comm"] == "offcpu" and t["pid"] == t["tid"]]
    blocked = sum(real[p][0] - real[p][1] for p in BLOCKED)
    notes = prof["notes"]
    short = notes.get("off-CPU periods under --offcpu-min-us (not folded)", 0)
    short_ns = notes.get("... their time (ns)", 0)
    check(short >= 100, "periods under the threshold: %d (notes %s)" % (short, notes))
    check(short_ns >= 0.7 * blocked * 1e9, "their time %.2f s, the workload blocked %.2f s"
          % (short_ns / 1e9, blocked))
    folded = sum(function_cum(t["root"], p) for t in mains for p in BLOCKED)
    check(folded <= 0.2 * blocked * 1e9, "%.2f s folded of %.2f s blocked in waits of 8 ms"
          % (folded / 1e9, blocked))
    prof, real, _ = profile_workload("cmd", "offcpu", extra=["--offcpu-max-rate", "5"])
    notes = prof["notes"]
    over = notes.get("switch-outs over --offcpu-max-rate (not walked, not folded)", 0)
    check(over >= 100, "switch-outs over the bound: %d (notes %s)" % (over, notes))
    check(notes.get("... their time off the CPU (ns)", 0) > 0, "their time: notes %s" % notes)


def test_offcpu_service_snapshots():
    """The service (-a --interval): every snapshot an off-CPU profile in ns;
    over the snapshots the workload's blocked phases hold its blocked time."""
    tmp = tempfile.mkdtemp(prefix="st-it-offcpu-svc-")
    out, report = os.path.join(tmp, "svc"), os.path.join(tmp, "wl.txt")
    d = Daemon(["-a", "--comm", "offcpu", "-e", "offcpu", "--interval", "1", "-o", out])
    try:
        wl = subprocess.run([workload("offcpu")], env=dict(os.environ, WL_REPORT=report),
                            timeout=120)
        check(wl.returncode == 0, "the workload failed")
        time.sleep(1.5)	# its last switch-ins are in the next snapshot
    finally:
        rc, err = d.stop()
    check(rc == 0, "stacktreed: " + err)
    real = truth(report)
    snaps = sorted(n for n in os.listdir(out) if n[:8].isdigit())
    check(len(snaps) >= 3, "snapshots: %s" % snaps)
    folded = 0
    for n in snaps:
        prof = load(os.path.join(out, n))
        check(prof["event"] == "offcpu" and prof["unit"] == "nanoseconds",
              "%s: %s %s" % (n, prof["event"], prof["unit"]))
        check_invariants(prof)
        for t in prof["threads"]:
            if t["comm"] == "offcpu" and t["pid"] == t["tid"]:
                folded += sum(function_cum(t["root"], p) for p in BLOCKED)
    blocked = sum(real[p][0] - real[p][1] for p in BLOCKED)
    metric("offcpu.service.time_ratio", folded / 1e9 / blocked)
    check(0.85 <= folded / 1e9 / blocked <= 1.1, "%.3f s folded over the snapshots, %.3f s "
          "blocked" % (folded / 1e9, blocked))
    shutil.rmtree(tmp, ignore_errors=True)


BT_OFFCPU = ("tracepoint:sched:sched_switch /pid == %d/ { @s[tid] = nsecs; @k[tid] = ustack; } "
             "tracepoint:sched:sched_switch /@s[args->next_pid]/ { "
             "@off[@k[args->next_pid]] = sum(nsecs - @s[args->next_pid]); "
             "delete(@s[args->next_pid]); } END { clear(@s); clear(@k); }")


def test_offcpu_beside_bpftrace():
    """bpftrace's sched_switch script summing blocked time by user stack and
    stacktreed -e offcpu --pid on the same run: each blocked phase's share
    of the time agrees within 2 points, bpftrace's own error against the
    workload's measure on the run allowed, and ours within 2 of that measure. bpftrace needs tracefs for the
    tracepoint, which this machine does not mount: scripts/bpftrace-tracefs
    runs it in a mount namespace of its own with tracefs there. Where it
    still cannot attach, the test says why and is skipped."""
    from test_peers import BPFTRACE, BPFTRACE_TRACEFS, bpftrace_attach, bpftrace_stacks
    if not BPFTRACE:
        raise Skip("bpftrace is not installed (scripts/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="st-it-offcpu-bt-")
    start, end, report, out = (os.path.join(tmp, n) for n in ("start", "end", "wl.txt", "st"))
    env = dict(os.environ, WL_START_FILE=start, WL_END_FILE=end, WL_REPORT=report)
    wl = subprocess.Popen([workload("offcpu")], env=env)
    bt = d = None
    try:
        bt, why = bpftrace_attach([BPFTRACE_TRACEFS, "-e", BT_OFFCPU % wl.pid])
        if not bt:
            raise Skip("bpftrace cannot attach to sched_switch here: %s" % why[:200])
        d = Daemon(["--pid", str(wl.pid), "-e", "offcpu", "-o", out])
        time.sleep(1)	# bpftrace's "Attaching" comes before its probes are in
        open(start, "w").close()
        wait_for(lambda: os.path.exists(report) and "wall phase_mutex" in open(report).read(),
                 120, "the workload did not finish its phases")
        bt.send_signal(2)	# SIGINT: bpftrace prints its map, symbolized
        text = bt.communicate(timeout=120)[0]
        bt = None
        open(end, "w").close()
        wl.wait(timeout=30)
        rc, err = d.stop(sig=None, timeout=60)
        d = None
        check(rc == 0, "stacktreed --pid: " + err)
        prof = load(out)
        real = truth(report)
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
    t = main_thread(prof, "offcpu")
    ours = {p: function_cum(t["root"], p) for p in BLOCKED}
    theirs = {p: 0 for p in BLOCKED}
    for n, names in bpftrace_stacks(text):
        for p in BLOCKED:
            if p in names:
                theirs[p] += n
    check(sum(theirs.values()) > 0, "bpftrace summed no time under the phases:\n" + text[-2000:])
    blocked = {p: real[p][0] - real[p][1] for p in BLOCKED}
    for p in BLOCKED:
        mine = 100.0 * ours[p] / sum(ours.values())
        bts = 100.0 * theirs[p] / sum(theirs.values())
        measured = 100.0 * blocked[p] / sum(blocked.values())
        metric("offcpu.bpftrace.%s.diff_pts" % p, mine - bts)
        metric("offcpu.bpftrace.%s.peer_error_pts" % p, bts - measured)
        # the peer's own error on the run allowed (as the JFR comparison
        # does): with both CPUs busy bpftrace put phase_mutex at 28.53%
        # where the workload measured 31.02% and stacktreed said 31.02%
        what = "%s: %.2f%% here, %.2f%% in bpftrace, %.2f%% measured" % (p, mine, bts, measured)
        check(abs(mine - measured) <= TOLERANCE_PTS, what)
        check(abs(mine - bts) <= TOLERANCE_PTS + abs(bts - measured), what)
    shutil.rmtree(tmp, ignore_errors=True)


PY_SLEEPER = """
import time
def napper():
    for _ in range(40):
        time.sleep(0.01)
napper()
"""


def test_offcpu_python_frames():
    """The Python walker runs at the switch-out too: a CPython thread's
    time in time.sleep() is under its Python function, down to the
    kernel's blocking point."""
    python = "/usr/bin/python3.11"
    if not os.access(python, os.X_OK):
        raise Skip("%s is missing" % python)
    tmp = tempfile.mkdtemp(prefix="st-it-offcpu-py-")
    script, out = os.path.join(tmp, "sleeper.py"), os.path.join(tmp, "st")
    with open(script, "w") as f:
        f.write(PY_SLEEPER)
    p = subprocess.run([STACKTREED, "-e", "offcpu", "-o", out, "--", python, script],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "stacktreed: " + p.stderr)
    prof = load(out)
    check_invariants(prof)
    t = max((t for t in prof["threads"] if t["pid"] == t["tid"]),
            key=lambda t: function_cum(t["root"], "napper"))
    napped = function_cum(t["root"], "napper")
    metric("offcpu.python.napper_s", napped / 1e9)
    # 40 sleeps of 10 ms: at least 0.4 s, more when wake-ups are late
    check(0.38e9 <= napped <= 1.5e9, "napper: %.3f s off the CPU, 0.4 s slept" % (napped / 1e9))
    leaves = leaves_under(t["root"], "napper")
    slept = sum(v for (k, s), v in leaves.items() if k and "nanosleep" in k)
    check(slept >= 0.9 * napped, "napper: %s" % leaves)
    shutil.rmtree(tmp, ignore_errors=True)
