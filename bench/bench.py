#!/usr/bin/env python3
"""bench.py - `make bench`: how much stacktreed slows a CPU-bound program with
deep stacks, next to `perf record -g` and to a bare BPF stack walk, measured
side by side in one run. Called by bench/run.sh; python3 stdlib only.

Each round runs every configuration once, in a rotated order (interleaved),
on the same fixed amount of work; slowdowns are per-round ratios to that
round's baseline, summarised by their median and min-max. Benchmarks are not
tests: this exits 0 whatever the numbers, non-zero only if a configuration
could not run at all.

Environment: BENCH_ROUNDS (5), BENCH_ITERS (workload iterations, 1200000),
BENCH_COPIES (copies of the workload run at once, default: online CPUs),
BENCH_FREQ (999), BENCH_OUT (where the raw results go, build/bench),
STACKTREED (the binary to measure, build/stacktreed), BENCH_DWARF (1: also
stacktreed --unwind dwarf against perf record --call-graph dwarf; 0: skip),
BENCH_CC_ROUNDS (rounds of the compiler part, 3; 0: skip it), BENCH_CC_FUNCS
(size of the generated C file, 600 function pairs: ~320 KB, ~5 s of gcc -O2),
BENCH_COMPILERS (which compilers, "gcc clang-14"; one missing is skipped),
BENCH_JAVA_ROUNDS (rounds of the Java part, 7; 0: skip it; `bench/run.sh
java` runs only that), BENCH_JAVA_BUSY (dd spinners beside the Java part's
runs, 0); with STACKTREED_BASE, the Java part runs that build too, in the
same rounds (rows "base"; a build whose bpf/parts.bpf.h has no thread sums
gives the whole JVM's row only; one from before its py_walk and py_merge
parts, 2026-12-01, has their time in "extra").

First, start-up (issue 37 item 1): a whole `stacktreed --unwind fp|auto|dwarf
-- date +%s.%N` next to `perf record -g -- date +%s.%N`, interleaved,
BENCH_STARTUP_ROUNDS times (7; 0: skip it), with both CPUs kept busy
(BENCH_STARTUP_BUSY=0: as the machine is): when the command started (its own
clock, after the profiler's start) and the whole run, each as a ratio to
perf's in the same round, against the goals (start <= 1.0x in every mode,
whole default-mode run <= 0.3x), with the BPF load (`stacktreed -v`'s "BPF
programs loaded in" line: what is verified before the launch);
STACKTREED_BASE=PATH runs another build (one before a change) in the same
rounds, its rows "base ..."; and `java Start` (its main() prints the time)
under stacktreed's default mode and perf record -g, the same ratio of when
it started (BENCH_STARTUP_JAVA=0: skipped; needs a JDK). `bench/run.sh
startup` runs only that part. Then the daemon's memory: a
default `stacktreed -a -d BENCH_RSS_SECONDS` (30) as the machine is and with
its CPUs busy, BENCH_RSS_ROUNDS (2; 0: skipped) each: RSS and Pss while
sampling, the summary's max RSS and BPF maps, against the goal of 64 MiB (`bench/run.sh
rss`: only that).

The frame-pointer configurations run stacktreed with --unwind fp; the DWARF
pair measures in-kernel CFI unwinding against perf copying 8 KiB of stack per
sample for unwinding after the fact.

The compiler part runs `gcc -O2 -c`, then `clang-14 -O2 -c`, on a generated
C file (the one tests/integration/test_compilers.py compiles) bare, under
`stacktreed -F 999 -- gcc ...` (default --unwind auto: the DWARF walk on cc1
and on clang-14 with libLLVM, big binaries whose stacks change at every
sample) and under `perf record --call-graph dwarf -- gcc ...`: the compile's
slowdown (wall time, and the CPU time of the compile and the profiler
together), the bytes each profiler wrote, and stacktreed's BPF run time per
sample.

Last, the switch storm (issue 33): tests/workloads/switchstorm.c's ping-pong
(BENCH_STORM_TRIPS round trips, 100000) bare, under `stacktreed -e offcpu`
(with its default --offcpu-max-rate, and with 0: no bound) and under
bpftrace's sched_switch script summing blocked time by user stack (run by
scripts/bpftrace-tracefs, which mounts tracefs for it privately);
BENCH_STORM_ROUNDS (5; 0: skip it). `bench/run.sh storm` runs only that part.

Then the bytes of a build profile (issue 37): BENCH_BYTES_JOBS (6; 0: skip
it) compiles of the generated C file, two at a time, sampled by
`stacktreed -a` and `perf record -a -g` at once: profile.json (and
profile.pb.gz) over perf.data, goal <= 1.0x. `bench/run.sh bytes` runs only
that part.

The walk's parts (issue 37 item 2): BENCH_WALK_ROUNDS (5; 0: skip it)
rounds of `stacktreed --comm bench_cpu --unwind fp` and `--bench-bare` with
STACKTREED_BENCH_PARTS (bpf/parts.bpf.h) on 2 and on 100 copies of the
workload (BENCH_WALK_ITERS iterations in all, 600000), under each load of
BENCH_WALK_LOADS ("idle busy sweep": nothing beside; a shell spinner per
CPU; a dd of 8 MiB blocks per CPU, which sweeps the caches): the BPF time
per sample by part; then the same runs without the parts clock, the
kernel's BPF run time (bpf_stats_enabled) per bench_cpu sample (its CPU
time times the rate; the runs that filter out, the spinners' and the idle
CPUs', taken off at their cost per run in WALK_FILTER_S with the workload
asleep), on which the goals are judged, by the median of the per-round
ratios: fp over bare (goal <= 1.3x) and 100 processes over 2 copies that
live as long (goal <= 1.15x; at the same total work too), the medians'
and the parts clock's ratios beside them (and its ratio of the per-sample
medians: bpf/parts.bpf.h's histogram of each sample's whole time, which a
host's stall inside a few samples does not move); and bpftrace's stack
count on the same measure; with STACKTREED_BASE, that build's fp program in
the same rounds too (rows "base"). `bench/run.sh walk` runs only that part."""

import atexit
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from stcheck import c_source, tree_form  # noqa: E402  the compiler tests' C file; v4 -> nested
STACKTREED = os.environ.get("STACKTREED", os.path.join(ROOT, "build", "stacktreed"))
WORKLOAD = os.path.join(ROOT, "build", "workloads", "bench_cpu")
WL_COMM = "bench_cpu"
CLK_TCK = os.sysconf("SC_CLK_TCK")
NCPUS = os.cpu_count() or 1


class BenchError(Exception):
    pass


def env_int(name, default, lo=1):
    try:
        v = int(os.environ.get(name, default))
    except ValueError:
        raise BenchError(f"{name} must be an integer")
    if v < lo:
        raise BenchError(f"{name} must be >= {lo}")
    return v


# ---- /proc helpers ---------------------------------------------------------

def busy_ticks():
    """Non-idle CPU time of the whole machine, in clock ticks."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4]  # minus idle, iowait


def proc_cpu(pid):
    """utime+stime of a process (all its threads), in seconds; None once it
    is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def perf_event_fds(pid):
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[perf_event]":
                    n += 1
            except OSError:
                pass
    except OSError:
        return -1
    return n


# ---- profilers -------------------------------------------------------------

def tail(text, n=12):
    """The end of a profiler's stderr (a verifier log can be thousands of lines)."""
    lines = text.strip().splitlines()
    return "\n".join((["  [...]"] if len(lines) > n else []) + lines[-n:])


def child_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        if kids:
            return int(kids[0])
    except OSError:
        pass
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
                if int(st[st.rindex(")") + 2:].split()[1]) == pid:
                    return int(d)
            except (OSError, ValueError):
                pass
    return None


TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


class Profiler:
    """A system-wide profiler started before the workload and stopped with
    SIGINT after it. It runs under /usr/bin/time when there is one: a process
    exec'd straight from this python would report python's max RSS as its own
    (Linux keeps the pre-exec memory's peak), stacktreed's summary included."""

    settle = 0.5

    def __init__(self, name, argv, errpath):
        self.name, self.argv, self.errpath = name, argv, errpath
        self.timepath = errpath + ".time"
        self.proc = None
        self.pid = None  # the profiler itself
        self.status = None
        self.cpu = self.rss_mib = None
        self.env = None  # the profiler's environment (None: this one's)

    def start(self):
        self.err = open(self.errpath, "w")
        argv = self.argv
        if TIME:
            argv = [TIME, "-o", self.timepath, "-f", "TIME %U %S %M"] + argv
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.err,
                                     stdin=subprocess.DEVNULL, env=self.env)
        # attached once it holds a perf event per CPU
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.proc.poll() is None:
            if self.pid is None:
                self.pid = child_of(self.proc.pid) if TIME else self.proc.pid
            if self.pid is not None and perf_event_fds(self.pid) >= NCPUS:
                time.sleep(self.settle)  # let start-up work finish
                if self.proc.poll() is None:
                    return
                break
            time.sleep(0.02)
        self.stop()
        raise BenchError(f"{self.name} did not start ({' '.join(self.argv)}):\n"
                         + tail(self.stderr_text()))

    def cpu_now(self):
        return proc_cpu(self.pid)

    def stop(self):
        if self.proc.poll() is None and self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            if self.pid is not None:
                os.kill(self.pid, signal.SIGKILL)
            self.proc.wait()
        self.err.close()
        st = self.proc.returncode
        if TIME:
            # time exits with the command's status, 128+N if signal N ended it
            st = -(st - 128) if st > 128 else st
            try:
                with open(self.timepath) as f:
                    m = re.search(r"^TIME (\S+) (\S+) (\d+)$", f.read(), re.M)
                if m:
                    self.cpu = float(m.group(1)) + float(m.group(2))
                    self.rss_mib = int(m.group(3)) / 1024
            except OSError:
                pass
        self.status = st

    def stderr_text(self):
        try:
            with open(self.errpath) as f:
                return f.read()
        except OSError:
            return ""


def parse_stacktreed(text, outdir):
    """Numbers from stacktreed's summary on stderr (and profile.json)."""
    r = {}
    pats = {
        "samples": r"stacktreed: (\d+) samples in",
        "lost": r"stacktreed: lost (\d+) samples",
        "bpf_ns": r"BPF run time (\d+(?:\.\d+)?) ns per sample",
        "daemon_cpu": r"daemon CPU (\d+(?:\.\d+)?) s",
        "rss_mib": r"max RSS (\d+) MiB",
        "runs": r"stacktreed: BPF program runs: (\d+)",
        "idle": r"stacktreed: idle-CPU samples \(not profiled\): (\d+)",
    }
    for k, p in pats.items():
        m = re.search(p, text)
        if m:
            r[k] = float(m.group(1))
    try:
        with open(os.path.join(outdir, "profile.json")) as f:
            d = tree_form(json.load(f))
        r["wl_samples"] = sum(t["root"]["cum"] for t in d.get("threads", [])
                              if t.get("comm") == WL_COMM)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if "runs" in r:
        r.setdefault("idle", 0.0)  # the note is printed only when non-zero
    # the summary's "BPF run time" is per walked sample (runs minus idle-CPU
    # runs, which return at once); ns/run is derived back from it
    if "bpf_ns" in r and r.get("runs") and "idle" in r and r["runs"] > r["idle"]:
        r["bpf_ns_walked"] = r["bpf_ns"]
        r["bpf_ns"] = r["bpf_ns_walked"] * (r["runs"] - r["idle"]) / r["runs"]
    return r


def parse_perf(text, datafile):
    r = {}
    m = re.search(r"Captured and wrote .*\((\d+) samples\)", text)
    if m:
        r["samples"] = float(m.group(1))
    try:
        r["data_mib"] = os.path.getsize(datafile) / 2**20
    except OSError:
        pass
    try:
        with subprocess.Popen(["perf", "script", "-i", datafile, "-F", "comm"], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as p:
            r["wl_samples"] = sum(1 for line in p.stdout if line.strip() == WL_COMM)
    except (OSError, subprocess.SubprocessError):
        pass
    return r


BPFTRACE = shutil.which("bpftrace")
# bpftrace with tracefs mounted in a mount namespace of its own (its
# `tracepoint:` probes need it; this machine does not mount tracefs)
BPFTRACE_TRACEFS = os.path.join(ROOT, "scripts", "bpftrace-tracefs")
BPF_STATS = "/proc/sys/kernel/bpf_stats_enabled"


def bpf_stats(on):
    """Turns the kernel's BPF run-time stats on (True) or back to a value
    returned before; returns the value it had. Turned on, they are set back
    at exit whatever happens in between."""
    try:
        with open(BPF_STATS) as f:
            was = f.read().strip()
        if on is not None:
            with open(BPF_STATS, "w") as f:
                f.write("1" if on is True else str(on))
        if on is True:
            atexit.register(bpf_stats, was)
        return was
    except OSError:
        return None


def fdinfos(pid):
    """The text of each /proc/PID/fdinfo entry of process pid, those closed
    while being read skipped (a daemon opening and closing files for new
    processes closed one between the listing and the read: the whole read
    failed, one fp run of three with 100 processes); [] when it is gone."""
    try:
        fds = os.listdir(f"/proc/{pid}/fdinfo")
    except OSError:
        return []
    out = []
    for fd in fds:
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                out.append(f.read())
        except OSError:
            continue
    return out


def prog_stats(pid):
    """ns per run of the perf_event programs process pid holds (their ids
    from /proc/PID/fdinfo, their stats from bpftool)."""
    ids = set()
    for info in fdinfos(pid):
        m = re.search(r"^prog_id:\s*(\d+)", info, re.M)
        if m and re.search(r"^prog_type:\s*7$", info, re.M):	# BPF_PROG_TYPE_PERF_EVENT
            ids.add(int(m.group(1)))
    ns = runs = 0
    for i in ids:
        try:
            p = subprocess.run(["bpftool", "prog", "show", "id", str(i), "-j"],
                               capture_output=True, text=True, timeout=30)
            prog = json.loads(p.stdout)
        except (OSError, subprocess.SubprocessError, ValueError):
            continue
        ns += prog.get("run_time_ns", 0)
        runs += prog.get("run_cnt", 0)
    return {"bpf_ns": ns / runs, "runs": float(runs), "ns_total": float(ns)} if runs else {}


# ---- one run ---------------------------------------------------------------

def run_workload(copies, iters):
    """Runs `copies` copies at once; wall time until the last ends, and the
    sum of their user+sys CPU."""
    t0 = time.monotonic()
    procs = [subprocess.Popen([WORKLOAD, str(iters)]) for _ in range(copies)]
    cpu = 0.0
    for p in procs:
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise BenchError(f"{WORKLOAD} exited with status {p.returncode}")
        cpu += ru.ru_utime + ru.ru_stime
    return time.monotonic() - t0, cpu


def run_one(cfg, tmp, copies, iters, freq, tag):
    res = {"config": cfg}
    prof = None
    outdir = os.path.join(tmp, f"{cfg}-{tag}")
    if cfg in ("stacktreed", "bare", "dwarf"):
        argv = [STACKTREED, "-a", "-F", str(freq), "-d", "3600", "-o", outdir,
                "--unwind", "dwarf" if cfg == "dwarf" else "fp"]
        if cfg == "bare":
            argv.insert(1, "--bench-bare")
        prof = Profiler(cfg, argv, outdir + ".err")
    elif cfg == "bpftrace":
        # bcc's profile and bpftrace's profile probe: a stack id per sample
        # (bpf_get_stackid into a stack-trace map), counted in a hash map
        argv = [BPFTRACE, "-e", "profile:hz:%d { @[ustack, pid] = count(); }" % freq]
        prof = Profiler(cfg, argv, outdir + ".err")
    elif cfg in ("perf", "perf-dwarf"):
        argv = ["perf", "record", "-e", "cpu-clock", "-F", str(freq), "-a",
                "-o", outdir + ".perf.data"] + (["-g"] if cfg == "perf" else
                                               ["--call-graph", "dwarf"])
        prof = Profiler(cfg, argv, outdir + ".err")
        prof.settle = 1.0  # perf synthesizes the existing processes' maps
    stats = None
    if cfg == "bpftrace":	# the kernel's BPF stats, on only for this run
        stats = bpf_stats(True)
    if prof:
        try:
            prof.start()
        except BenchError:
            bpf_stats(stats)
            raise
        pcpu0 = prof.cpu_now() or 0.0
    busy0 = busy_ticks()
    wall, wcpu = run_workload(copies, iters)
    busy = (busy_ticks() - busy0) / CLK_TCK
    res.update(wall=wall, cpu=wcpu)
    prof_cpu_during = 0.0
    if prof:
        prof_cpu_during = max(0.0, (prof.cpu_now() or pcpu0) - pcpu0)
        if cfg == "bpftrace":
            res.update(prog_stats(prof.pid))
            bpf_stats(stats)
        prof.stop()
        res.update(prof_cpu_during=prof_cpu_during)
        if prof.cpu is not None:
            res.update(prof_cpu_total=prof.cpu, prof_rss_mib=prof.rss_mib)
        text = prof.stderr_text()
        # perf re-raises the SIGINT it was stopped with once its file is written
        if prof.status != 0 and not (cfg.startswith("perf") and prof.status == -signal.SIGINT):
            raise BenchError(f"{cfg} exited with status {prof.status}:\n{tail(text)}")
        if cfg == "bpftrace":
            pass
        elif cfg.startswith("perf"):
            res.update(parse_perf(text, outdir + ".perf.data"))
            try:
                os.unlink(outdir + ".perf.data")
            except OSError:
                pass
        else:
            p = parse_stacktreed(text, outdir)
            if "bpf_ns" not in p and "BPF run time unavailable" not in text:
                raise BenchError(f"{cfg}: no summary on stderr:\n{tail(text)}")
            res.update(p)
            shutil.rmtree(outdir, ignore_errors=True)
    # CPU used by anything else during the run (other jobs on the machine)
    res["foreign_cpu"] = max(0.0, busy - wcpu - prof_cpu_during)
    return res


RETRY_BUDGET_PER_ROUND = 3
DISTURBED = 0.02  # foreign CPU over this share of the program's CPU (normal: ~0.5%)


def disturbed(res):
    return res["foreign_cpu"] > DISTURBED * res["cpu"]


# ---- summary ---------------------------------------------------------------

def med(xs):
    return statistics.median(xs) if xs else float("nan")


def round_ratios(num, den):
    """num's figure over den's in each round both have ({round: figure}
    each; a round whose den is not positive left out), in round order:
    the side-by-side ratios the goals are judged on."""
    return [num[r] / den[r] for r in sorted(num) if r in den and den[r] > 0]


def pct(ratio):
    return f"{(ratio - 1) * 100:+.1f}%"


def spread(xs, fmt):
    return f"{fmt(min(xs))}-{fmt(max(xs))}" if xs else "-"


# ---- start-up ----------------------------------------------------------------

STARTUP = {"st fp": ["--unwind", "fp"], "st auto": ["--unwind", "auto"],
           "st dwarf": ["--unwind", "dwarf"]}
# issue 37 item 1, both CPUs busy: the launched command starts no later than
# under perf record (every mode), a whole default-mode run of a command that
# does nothing at most this share of perf's
GOAL_LAUNCH = 1.0
GOAL_STARTUP = 0.3


# A JVM launched: `java Start` prints the time its main() began (issue 32:
# a launched JVM starts on the early object, not after its walker's load)
JAVA_START_SRC = """public class Start { public static void main(String[] a) {
    java.time.Instant n = java.time.Instant.now();
    System.out.println(n.getEpochSecond() + "." + String.format("%09d", n.getNano())); } }
"""
JAVA_STARTUP = {"st java": "stacktreed -- java", "perf java": "perf record -g -- java"}


def java_start_cmd(tmp):
    """`java -cp DIR Start`, compiled into tmp; None without a JDK."""
    if not (shutil.which("java") and shutil.which("javac")):
        return None
    d = os.path.join(tmp, "jstart")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "Start.java"), "w") as f:
        f.write(JAVA_START_SRC)
    if subprocess.run(["javac", "-d", d, os.path.join(d, "Start.java")]).returncode:
        return None
    return ["java", "-cp", d, "Start"]


def startup_once(cfg, tmp, tag, verbose=False, java=None):
    """One whole profiler run of `date +%s.%N` (a command that does
    nothing but say when it started; a "... java" cfg: `java` the same):
    its wall time, and when the command started, after the profiler was
    (s); with verbose, also stacktreed's BPF load time (ms) and verified
    instructions per program."""
    outp = os.path.join(tmp, f"start-{tag}")
    cmd = java if cfg.endswith(" java") else ["date", "+%s.%N"]
    if cfg.startswith("perf"):
        argv = ["perf", "record", "-g", "-o", outp, "--"] + cmd
    elif cfg == "st java":
        argv = [STACKTREED] + (["-v"] if verbose else []) + ["-o", outp, "--"] + cmd
    elif cfg.startswith("base "):  # STACKTREED_BASE: the same modes, another build
        argv = [STARTUP_BASE] + (["-v"] if verbose else []) + STARTUP[cfg[5:]] + \
            ["-o", outp, "--"] + cmd
    else:
        argv = [STACKTREED] + (["-v"] if verbose else []) + STARTUP[cfg] + \
            ["-o", outp, "--"] + cmd
    t0r, t0 = time.time(), time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if os.path.isdir(outp):
        shutil.rmtree(outp, ignore_errors=True)
    elif os.path.exists(outp):
        os.unlink(outp)
    if p.returncode != 0:
        raise BenchError(f"{' '.join(argv)} exited with status {p.returncode}:\n{tail(p.stderr)}")
    try:
        launch = float(p.stdout.split()[-1]) - t0r
    except (ValueError, IndexError):
        raise BenchError(f"{' '.join(argv)}: no start time printed: {p.stdout!r}")
    res = {"config": cfg, "wall": wall, "launch": launch}
    m = re.search(r"BPF programs loaded in (\d+) ms", p.stderr)
    if m:
        res["load_ms"] = int(m.group(1))
    res["verified"] = {k: int(v) for k, v in
                       re.findall(r"BPF program (\w+): (\d+) instructions verified", p.stderr)}
    return res


def goal_line(what, ratio, goal):
    if ratio is None:
        return f"  {what}: - (no perf)"
    if ratio <= goal:
        return f"  {what}: {ratio:.2f}x (goal <= {goal}x: holds)"
    return f"  {what}: {ratio:.2f}x (goal <= {goal}x: MISSED by {ratio - goal:.2f}x, " \
        f"{100 * (ratio / goal - 1):.0f}% over)"


# STACKTREED_BASE: another stacktreed (a build before a change) run in the
# same rounds, for before/after ratios from one machine state
STARTUP_BASE = os.environ.get("STACKTREED_BASE")


def bench_startup(rounds, have_perf, out):
    base = ["base " + c for c in STARTUP] if STARTUP_BASE else []
    configs = list(STARTUP) + base + (["perf"] if have_perf else [])
    busy = env_int("BENCH_STARTUP_BUSY", 1, lo=0)
    tmp = tempfile.mkdtemp(prefix="stacktree-bench-start.")
    java = java_start_cmd(tmp) if env_int("BENCH_STARTUP_JAVA", 1, lo=0) else None
    if java:
        configs += ["st java"] + (["perf java"] if have_perf else [])
    print("start-up: a whole run of `date +%s.%N` under each profiler (stacktreed: open, load "
          "and verify the")
    print(f"  BPF programs, attach, run, write the reports; perf record -g), {rounds} rounds, "
          f"interleaved, {'both CPUs kept busy (two sh spinners)' if busy else 'as the machine is'}")
    sys.stdout.flush()
    runs = []
    spinners = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                for _ in range(NCPUS if busy else 0)]
    try:
        for cfg in configs:  # warm-up (page cache, BTF), discarded
            startup_once(cfg, tmp, f"warm-{cfg}", java=java)
        for r in range(rounds):
            for cfg in configs[r % len(configs):] + configs[:r % len(configs)]:
                res = startup_once(cfg, tmp, f"{r}-{cfg}", java=java)
                res["round"] = r
                runs.append(res)
        verbose = {cfg: startup_once(cfg, tmp, f"v-{cfg}", verbose=True, java=java)
                   for cfg in list(STARTUP) + base + (["st java"] if java else [])}
    finally:
        for sp in spinners:
            sp.kill()
            sp.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "startup.json"), "w") as f:
        json.dump({"rounds": rounds, "busy": busy, "runs": runs, "verbose": verbose}, f,
                  indent=1)

    perf = {x["round"]: x for x in runs if x["config"] == "perf"}
    perf_java = {x["round"]: x for x in runs if x["config"] == "perf java"}
    print(f"{'config':<26} {'start s':>7} {'/ perf':>6} {'(min-max)':>11} {'wall s':>6} "
          f"{'/ perf':>6} {'(min-max)':>11} {'BPF load ms':>11}  verified before the launch "
          f"(-v run)")
    label = {"st fp": "stacktreed --unwind fp", "st auto": "stacktreed --unwind auto",
             "st dwarf": "stacktreed --unwind dwarf", "perf": "perf record -g"}
    label.update({"base " + c: "base " + label[c][len("stacktreed "):] for c in STARTUP})
    label.update(JAVA_STARTUP)
    ratio, lratio = {}, {}
    for cfg in configs:
        mine = [x for x in runs if x["config"] == cfg]
        pf = perf_java if cfg.endswith(" java") else perf
        rs = [x["wall"] / pf[x["round"]]["wall"] for x in mine if x["round"] in pf]
        ls = [x["launch"] / pf[x["round"]]["launch"] for x in mine
              if x["round"] in pf and pf[x["round"]]["launch"] > 0]
        ratio[cfg] = med(rs) if rs else None
        lratio[cfg] = med(ls) if ls else None
        v = verbose.get(cfg, {})
        ver = ", ".join(f"{k} {n}" for k, n in v.get("verified", {}).items()
                        if k.startswith(("on_timer", "on_fault", "on_early")))
        print(f"{label[cfg]:<26} {med([x['launch'] for x in mine]):>7.3f} "
              f"{(f'{lratio[cfg]:.2f}' if ls else '-'):>6} "
              f"{spread(ls, lambda x: f'{x:.2f}'):>11} "
              f"{med([x['wall'] for x in mine]):>6.3f} "
              f"{(f'{ratio[cfg]:.2f}' if rs else '-'):>6} "
              f"{spread(rs, lambda x: f'{x:.2f}'):>11} "
              f"{(str(v['load_ms']) if 'load_ms' in v else '-'):>11}  {ver}")
    print("  start: the command's own clock at its start, after the profiler's; / perf: "
          "median of the per-round ratios;")
    print("  BPF load: maps created and the programs of before the launch verified (one -v "
          "run, slower: libbpf's messages);")
    print("  the full timer program (on_timer_fp/_dwarf) is verified after the launch.")
    if base:
        print(f"  base: {STARTUP_BASE} (STACKTREED_BASE), in the same rounds")
    for cfg in STARTUP:
        print(goal_line(f"command start, {label[cfg]}, over perf's", lratio.get(cfg),
                        GOAL_LAUNCH))
    if java:
        print("  java: `java Start` (its main() prints the time), default mode against "
              "perf record -g's java")
        print(goal_line("command start, stacktreed -- java, over perf's", lratio.get("st java"),
                        GOAL_LAUNCH))
    print(goal_line("whole run, stacktreed (default --unwind auto), over perf's",
                    ratio.get("st auto"), GOAL_STARTUP))
    print()
    sys.stdout.flush()


# issue 37 item 3: a default `stacktreed -a` on a quiet machine, RSS at most this
GOAL_RSS_MIB = 64


def rss_once(secs, busy, tmp, tag):
    """stacktreed -a -d secs (default mode): the highest VmRSS while it samples
    (MiB), and the summary's max RSS (reports included) and BPF maps."""
    burners = [subprocess.Popen(["python3", "-c", "while True: pass"])
               for _ in range(NCPUS if busy else 0)]
    try:
        p = subprocess.Popen([STACKTREED, "-a", "-d", str(secs), "-o",
                              os.path.join(tmp, f"rss-{tag}")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        err, peak, started = [], 0, None
        while True:  # stderr line by line: sampling starts after the BPF load
            line = p.stderr.readline()
            if not line:
                break
            err.append(line)
            if "stacktreed: sampling at" in line:
                started = time.monotonic()
                break
        pss = 0
        while started and p.poll() is None and time.monotonic() - started < secs:
            try:
                with open(f"/proc/{p.pid}/status") as f:
                    for ln in f:
                        if ln.startswith("VmRSS:"):
                            peak = max(peak, int(ln.split()[1]) / 1024)
                # Pss: a ring buffer's data pages mapped twice (the kernel's
                # ABI) count once, as in memory
                with open(f"/proc/{p.pid}/smaps_rollup") as f:
                    for ln in f:
                        if ln.startswith("Pss:"):
                            pss = max(pss, int(ln.split()[1]) / 1024)
            except OSError:
                break
            time.sleep(0.2)
        err.append(p.communicate()[1])
    finally:
        for b in burners:
            b.kill()
            b.wait()
    text = "".join(err)
    m = re.search(r"max RSS (\d+) MiB.*BPF maps ~(\d+) MiB", text)
    if p.returncode != 0 or not m:
        raise BenchError(f"stacktreed -a exited {p.returncode}: {tail(text)}")
    return {"sampling": peak, "pss": pss, "max": int(m.group(1)), "maps": int(m.group(2))}


def bench_rss(out):
    secs = env_int("BENCH_RSS_SECONDS", 30)
    rounds = env_int("BENCH_RSS_ROUNDS", 2)
    print(f"daemon memory: stacktreed -a -d {secs} (default mode), as the machine is and with "
          f"its {NCPUS} CPUs busy, {rounds} rounds each")
    sys.stdout.flush()
    tmp = tempfile.mkdtemp(prefix="stacktree-bench-rss.")
    res = {"as is": [], "CPUs busy": []}
    try:
        for r in range(rounds):
            for k in res:
                res[k].append(rss_once(secs, k != "as is", tmp, f"{r}-{len(res[k])}"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "rss.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"{'load':<10} {'RSS sampling':>12} {'Pss':>8} {'max RSS':>8} {'BPF maps':>8}  (MiB, "
          "median, min-max)")
    for k, rs in res.items():
        cols = [num_spread([x[c] for x in rs]) for c in ("sampling", "pss", "max", "maps")]
        print(f"{k:<10} {cols[0]:>12} {cols[1]:>8} {cols[2]:>8} {cols[3]:>8}")
    samp = med([x["sampling"] for x in res["as is"]])
    pss = med([x["pss"] for x in res["as is"]])
    top = med([x["max"] for x in res["as is"]])
    for what, v in (("while sampling", samp), ("Pss while sampling", pss),
                    ("max, reports included", top)):
        verdict = "holds" if v <= GOAL_RSS_MIB else f"MISSED by {v - GOAL_RSS_MIB:.0f} MiB"
        print(f"  default -a RSS {what}: {v:.0f} MiB (goal <= {GOAL_RSS_MIB} MiB: {verdict})")
    print("  Pss: the deferred samples' ring buffer counted once (RSS counts its data pages "
          "twice:")
    print("  the kernel maps them twice, for reads across the end).")
    print("  max RSS: the summary's (VmHWM), the end's symbolization included (libdw's "
          "sections and line tables")
    print("  of one module with DWARF at a time, kernel-notes/README.md \"Maps sized by use\"); "
          "BPF maps: their memlock,")
    print("  charged to the memory cgroup.")
    print()
    sys.stdout.flush()


def num_spread(xs):
    return f"{med(xs):.0f} ({min(xs):.0f}-{max(xs):.0f})"


def main():
    rounds = env_int("BENCH_ROUNDS", 5)
    iters = env_int("BENCH_ITERS", 1200000)
    copies = env_int("BENCH_COPIES", NCPUS)
    freq = env_int("BENCH_FREQ", 999)
    out = os.environ.get("BENCH_OUT", os.path.join(ROOT, "build", "bench"))
    have_perf = shutil.which("perf") is not None
    if have_perf:
        try:
            subprocess.run(["perf", "--version"], capture_output=True, check=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            have_perf = False
    for f in (STACKTREED, WORKLOAD):
        if not os.access(f, os.X_OK):
            raise BenchError(f"{f} is missing: run `make all {os.path.relpath(WORKLOAD, ROOT)}`")

    if sys.argv[1:] == ["python"]:
        bench_python(env_int("BENCH_PY_ROUNDS", PY_ROUNDS, lo=1), freq, out)
        return 0
    if sys.argv[1:] == ["storm"]:
        bench_storm(env_int("BENCH_STORM_ROUNDS", 5, lo=1), out)
        return 0
    if sys.argv[1:] == ["java"]:
        bench_java(env_int("BENCH_JAVA_ROUNDS", JAVA_ROUNDS, lo=1), freq, out)
        return 0
    if sys.argv[1:] == ["bytes"]:
        os.makedirs(out, exist_ok=True)
        bench_bytes(have_perf, freq, out)
        return 0
    if sys.argv[1:] == ["walk"]:
        bench_walk(env_int("BENCH_WALK_ROUNDS", 5, lo=1), freq, out)
        return 0
    if sys.argv[1:] == ["rss"]:
        bench_rss(out)
        return 0
    startup_rounds = env_int("BENCH_STARTUP_ROUNDS", 7, lo=0)
    if startup_rounds:
        bench_startup(startup_rounds, have_perf, out)
    if sys.argv[1:] == ["startup"]:
        return 0
    if env_int("BENCH_RSS_ROUNDS", 2, lo=0):
        bench_rss(out)
    dwarf = env_int("BENCH_DWARF", 1, lo=0) > 0
    configs = ["baseline", "stacktreed", "bare"] + (["perf"] if have_perf else []) + \
        (["bpftrace"] if BPFTRACE else [])
    if dwarf:
        configs += ["dwarf"] + (["perf-dwarf"] if have_perf else [])
    print(f"stacktreed benchmark: {WL_COMM} ({iters} iterations of ~35-frame recursion, "
          f"fixed work) x {copies} cop{'y' if copies == 1 else 'ies'} at once on {NCPUS} CPUs")
    if copies >= NCPUS:
        print(f"  {copies} copies keep every CPU busy, so the sampling and the profiler's own "
              "work all come out of")
        print("  the program's time (with an idle CPU the daemon would run there for free).")
    else:
        print(f"  {copies} cop{'y' if copies == 1 else 'ies'} on {NCPUS} CPUs: the profiler can "
              "run on an idle CPU, so this shows the sampling cost, not the daemon's.")
    print("  slowdown = wall time until the last copy ends / the same round's baseline.")
    print(f"  profilers system-wide (-a) at {freq} Hz per CPU, cpu-clock; {rounds} rounds, "
          "configurations interleaved (rotated order each round).")
    if not have_perf:
        print("  perf not found (Debian package linux-perf, installed by scripts/deps.sh): "
              "the perf column is skipped.")
    with open("/proc/loadavg") as f:
        print(f"  load average before start: {' '.join(f.read().split()[:3])}")
    sys.stdout.flush()

    runs = []
    retries = 0
    tmp = tempfile.mkdtemp(prefix="stacktree-bench.")
    t_start = time.monotonic()
    try:
        run_workload(copies, iters // 4)  # warm-up, discarded
        for r in range(rounds):
            order = configs[r % len(configs):] + configs[:r % len(configs)]
            line = []
            for cfg in order:
                # a run disturbed by other work on the machine is run again
                # (up to 3 times, within a budget), keeping the least disturbed
                tries = []
                while True:
                    try:
                        res = run_one(cfg, tmp, copies, iters, freq, f"{r}.{len(tries)}")
                    except BenchError as e:
                        if not cfg.startswith("perf") and cfg != "bpftrace":
                            raise
                        print(f"  {cfg} could not run, skipping it: {e}")
                        configs.remove(cfg)
                        have_perf = have_perf and cfg != "perf"
                        res = None
                        break
                    tries.append(res)
                    if (not disturbed(res) or len(tries) > 3
                            or retries >= RETRY_BUDGET_PER_ROUND * rounds):
                        break
                    retries += 1
                if res is None:
                    continue
                res = min(tries, key=lambda x: x["foreign_cpu"])
                res["round"], res["tries"] = r, len(tries)
                runs.append(res)
                line.append(f"{cfg} {res['wall']:.2f}s" + ("*" if disturbed(res) else ""))
            print(f"  round {r + 1}/{rounds}: " + ", ".join(line))
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    elapsed = time.monotonic() - t_start

    os.makedirs(out, exist_ok=True)
    raw = os.path.join(out, "results.json")
    with open(raw, "w") as f:
        json.dump({"rounds": rounds, "iters": iters, "copies": copies, "freq": freq,
                   "ncpus": NCPUS, "runs": runs}, f, indent=1)

    base = {x["round"]: x for x in runs if x["config"] == "baseline"}

    def of(cfg, key):
        return [x[key] for x in runs if x["config"] == cfg and key in x]

    def ratios(cfg, key):
        return [x[key] / base[x["round"]][key] for x in runs if x["config"] == cfg]

    def paired(key):
        """stacktreed / bare per round."""
        return round_ratios(*({x["round"]: x[key] for x in runs if x["config"] == cfg and key in x}
                              for cfg in ("stacktreed", "bare")))

    def f2(v):
        return f"{v:.2f}"

    def f3(v):
        return f"{v:.3f}"

    def num(xs, fmt):
        return fmt(med(xs)) if xs else "-"

    label = {"baseline": "baseline", "stacktreed": "stacktreed", "bare": "bare walk",
             "perf": "perf", "dwarf": "st dwarf", "perf-dwarf": "perf dwarf",
             "bpftrace": "bpftrace"}
    print()
    print("program's time (median over rounds; slowdown = median of per-round ratios to baseline)")
    print(f"{'config':<11} {'wall s':>6} {'(min-max)':>11} {'slowdown':>9} {'(min-max)':>11} "
          f"{'CPU s':>6} {'slowdown':>9} {'(min-max)':>11} {'foreign CPU s':>13}")
    wall_sd, cpu_sd = {}, {}
    for cfg in configs:
        w, c = of(cfg, "wall"), of(cfg, "cpu")
        rw, rc = ratios(cfg, "wall"), ratios(cfg, "cpu")
        wall_sd[cfg], cpu_sd[cfg] = med(rw), med(rc)
        print(f"{label[cfg]:<11} {med(w):>6.2f} {spread(w, f2):>11} {pct(med(rw)):>9} "
              f"{spread(rw, f3):>11} {med(c):>6.2f} {pct(med(rc)):>9} {spread(rc, f3):>11} "
              f"{med(of(cfg, 'foreign_cpu')):>13.2f}")
    print(f"  CPU s: user+sys of the {copies} copies (includes the sampling interrupts, which "
          "run on the program's CPU);")
    print("  foreign CPU: busy CPU time taken by anything else (other jobs) during the run.")
    noisy = [x for x in runs if disturbed(x)]
    if retries:
        print(f"  {retries} runs disturbed by other work (foreign CPU > {DISTURBED:.0%} of the "
              "program's) were run again.")
    if noisy:
        print(f"  note: {len(noisy)} of {len(runs)} kept runs (* above) were still disturbed: "
              "wall times are noisy, trust CPU slowdowns more.")
    print()
    print("stacktreed (BPF run time: the kernel's BPF stats for the timer program)")
    print(f"{'mode':<11} {'samples':>8} {'in ' + WL_COMM:>13} {'idle':>6} {'lost':>5} "
          f"{'ns/run':>7} {'ns/walked':>9} {'(min-max)':>11} {'daemon CPU s':>12} "
          f"{'during':>6} {'RSS MiB':>7}")
    for cfg in ("stacktreed", "bare") + (("dwarf",) if "dwarf" in configs else ()):
        walked = of(cfg, "bpf_ns_walked")
        samples, wl = of(cfg, "samples"), of(cfg, "wl_samples")
        if cfg == "bare":  # folds nothing: its profile has no samples
            samples = [x["runs"] - x["idle"] for x in runs
                       if x["config"] == cfg and "runs" in x and "idle" in x]
            wl = []
        print(f"{label[cfg]:<11} {num(samples, lambda v: f'{v:.0f}'):>8} "
              f"{num(wl, lambda v: f'{v:.0f}'):>13} {num(of(cfg, 'idle'), lambda v: f'{v:.0f}'):>6} "
              f"{num(of(cfg, 'lost'), lambda v: f'{v:.0f}'):>5} "
              f"{num(of(cfg, 'bpf_ns'), lambda v: f'{v:.0f}'):>7} "
              f"{num(walked, lambda v: f'{v:.0f}'):>9} {spread(walked, lambda v: f'{v:.0f}'):>11} "
              f"{num(of(cfg, 'daemon_cpu'), f2):>12} {num(of(cfg, 'prof_cpu_during'), f2):>6} "
              f"{num(of(cfg, 'rss_mib'), lambda v: f'{v:.0f}'):>7}")
    print("  samples: folded into the profile (bare: walked = runs - idle); 'in "
          f"{WL_COMM}': the program's share;")
    print("  ns/run: the summary's 'BPF run time', averaged over every run including idle-CPU "
          "ones that return at once;")
    print("  ns/walked: the same time over the non-idle runs only; 'during': daemon CPU while "
          "the program ran.")
    print("  stacktreed: --unwind fp (frame pointers, walked in BPF); st dwarf: --unwind dwarf (CFI rows, "
          "bpf/unwind.h).")
    dw = of("dwarf", "bpf_ns_walked")
    if dw and of("stacktreed", "bpf_ns_walked"):
        print(f"  BPF run time per walked sample: fp {med(of('stacktreed', 'bpf_ns_walked')):.0f} "
              f"ns, dwarf {med(dw):.0f} ns ({med(dw) / med(of('stacktreed', 'bpf_ns_walked')):.2f}x)")
    full, bare = of("stacktreed", "bpf_ns_walked"), of("bare", "bpf_ns_walked")
    if full and bare:
        print(f"  timer program / bare walk: {med(full) / med(bare):.2f}x per walked sample "
              f"(target <= 1.5x; paired per round: {spread(paired('bpf_ns_walked'), f2)})")
        wl, cpu = of("stacktreed", "wl_samples"), of("stacktreed", "cpu")
        if wl and cpu:
            print(f"  BPF time on the program: {med(wl):.0f} samples x {med(full):.0f} ns = "
                  f"{med(wl) * med(full) / 1e6:.1f} ms, {med(wl) * med(full) / 1e7 / med(cpu):.2f}% "
                  "of its CPU (plus the timer interrupts themselves: see bare walk)")
    else:
        print("  timer program / bare walk: unavailable (no BPF run time or run count in the "
              "summaries)")

    if have_perf:
        print()
        print(f"{'perf record':<16} {'samples':>8} {'in ' + WL_COMM:>13} {'perf.data MiB':>13} "
              f"{'perf CPU s':>10} {'during':>6} {'RSS MiB':>7}")
        for cfg, name in (("perf", "-g (fp)"), ("perf-dwarf", "--call-graph dwarf")):
            if cfg not in configs:
                continue
            print(f"{name:<16} {num(of(cfg, 'samples'), lambda v: f'{v:.0f}'):>8} "
                  f"{num(of(cfg, 'wl_samples'), lambda v: f'{v:.0f}'):>13} "
                  f"{num(of(cfg, 'data_mib'), lambda v: f'{v:.1f}'):>13} "
                  f"{num(of(cfg, 'prof_cpu_total'), f2):>10} "
                  f"{num(of(cfg, 'prof_cpu_during'), f2):>6} "
                  f"{num(of(cfg, 'prof_rss_mib'), lambda v: f'{v:.0f}'):>7}")
        print("  samples include idle CPUs (swapper) and perf's 1 s start-up; perf CPU includes "
              "its work before and after the program (maps, build ids).")

    if "bpftrace" in configs:
        print()
        bt, st = of("bpftrace", "bpf_ns"), of("stacktreed", "bpf_ns")
        print("bpftrace 'profile:hz:%d { @[ustack, pid] = count(); }' (a stack id per sample, "
              "as bcc's profile):" % freq)
        print(f"  BPF run time {num(bt, lambda v: f'{v:.0f}')} ns per run "
              f"(stacktreed --unwind fp {num(st, lambda v: f'{v:.0f}')} ns per run, its whole "
              f"tree folded); CPU {num(of('bpftrace', 'prof_cpu_total'), f2)} s, "
              f"RSS {num(of('bpftrace', 'prof_rss_mib'), lambda v: f'{v:.0f}')} MiB")
        print(f"  slowdown by wall time {pct(wall_sd['bpftrace'])}, by CPU time "
              f"{pct(cpu_sd['bpftrace'])} (stacktreed {pct(wall_sd['stacktreed'])}, "
              f"{pct(cpu_sd['stacktreed'])}); bpftrace names a process's stacks only while it "
              "lives, and these copies have exited when it prints")

    print()
    unreliable = len(noisy) * 4 >= len(runs)
    for what, sd in (("wall time", wall_sd), ("CPU time", cpu_sd)):
        if what == "wall time" and unreliable:
            what += f" (unreliable here: {len(noisy)} of {len(runs)} runs disturbed)"
        st = (sd["stacktreed"] - 1) * 100
        bare_s = f"bare walk {(sd['bare'] - 1) * 100:+.1f}%"
        if have_perf:
            pf = (sd["perf"] - 1) * 100
            ratio = f"{st / pf:.2f}" if pf > 0 and st >= 0 else "n/a, within noise"
            print(f"by {what}: stacktreed slowed the program by {st:.1f}%, perf by {pf:.1f}% "
                  f"(ratio {ratio}); {bare_s}")
        else:
            print(f"by {what}: stacktreed slowed the program by {st:.1f}% (perf not run); {bare_s}")
    if "dwarf" in configs:
        for what, sd in (("wall time", wall_sd), ("CPU time", cpu_sd)):
            st = (sd["dwarf"] - 1) * 100
            if "perf-dwarf" in sd:
                pf = (sd["perf-dwarf"] - 1) * 100
                ratio = f"{st / pf:.2f}" if pf > 0 and st >= 0 else "n/a, within noise"
                print(f"DWARF by {what}: stacktreed --unwind dwarf slowed the program by "
                      f"{st:.1f}%, perf --call-graph dwarf by {pf:.1f}% (ratio {ratio}; "
                      "target <= 0.5)")
            else:
                print(f"DWARF by {what}: stacktreed --unwind dwarf slowed the program by "
                      f"{st:.1f}% (perf not run)")
    print(f"({len(runs)} runs in {elapsed:.0f} s; raw results in {os.path.relpath(raw)})")
    cc_rounds = env_int("BENCH_CC_ROUNDS", 3, lo=0)
    if cc_rounds:
        for compiler in os.environ.get("BENCH_COMPILERS", "gcc clang-14").split():
            bench_compiler(compiler, cc_rounds, env_int("BENCH_CC_FUNCS", 600), freq, have_perf,
                           out)
    walk_rounds = env_int("BENCH_WALK_ROUNDS", 5, lo=0)
    if walk_rounds:
        bench_walk(walk_rounds, freq, out)
    py_rounds = env_int("BENCH_PY_ROUNDS", PY_ROUNDS, lo=0)
    if py_rounds:
        bench_python(py_rounds, freq, out)
    storm_rounds = env_int("BENCH_STORM_ROUNDS", 5, lo=0)
    if storm_rounds:
        bench_storm(storm_rounds, out)
    java_rounds = env_int("BENCH_JAVA_ROUNDS", JAVA_ROUNDS, lo=0)
    if java_rounds:
        bench_java(java_rounds, freq, out)
    if env_int("BENCH_BYTES_JOBS", 6, lo=0):
        bench_bytes(have_perf, freq, out)
    return 0


# ---- the walk's parts (issue 37 item 2) ----------------------------------------

GOAL_FP_BARE = 1.3     # fp-mode BPF time per sample / the bare walk of the same stacks
GOAL_PROCS = 1.15      # 100 busy processes / 2, per sample
# the kernel-stats rows: seconds of the workload asleep, the spinners on,
# whose filtered runs give the cost of a run that is not the workload's
WALK_FILTER_S = 1.0
WALK_PROCS = 100
# bpf/parts.bpf.h's parts, in its order (ST_PART_*), and its counts (ST_PART_N_*)
PARTS = ("filter", "thread", "walk", "walk_check", "py_walk", "py_merge", "extra", "enter",
         "prefix", "root", "frames", "leaf", "clock")
PART_COUNTS = ("frames", "finds", "calls", "probes", "misses")
# the parts of a build from before py_walk and py_merge (2026-12-01)
PARTS_BEFORE_PY = tuple(p for p in PARTS if not p.startswith("py_"))


# bpf/parts.bpf.h's histogram of a sample's whole time: ST_PART_HIST
# buckets of ST_PART_HIST_NS each, after the two part sums, `mine` and `first`
PART_HIST, PART_HIST_NS = 1024, 50


def bench_parts_map(pid):
    """Sums over CPUs of the bench_parts map (bpf/parts.bpf.h) that process
    pid holds: {"ns": [...], "n": [...], "count": [...], "tid": the same of
    STACKTREED_BENCH_PARTS_TID's samples alone (None: a build without),
    "hist": samples by their whole time (None: a build without)}, or
    None."""
    ids = set()
    for info in fdinfos(pid):
        m = re.search(r"^map_id:\s*(\d+)", info, re.M)
        if m:
            ids.add(int(m.group(1)))
    for i in sorted(ids):
        try:
            show = json.loads(subprocess.run(["bpftool", "map", "show", "id", str(i), "-j"],
                                             capture_output=True, text=True, timeout=30).stdout)
            if show.get("name") != "bench_parts":
                continue
            dump = json.loads(subprocess.run(["bpftool", "map", "dump", "id", str(i), "-j"],
                                             capture_output=True, text=True, timeout=30).stdout)
        except (OSError, subprocess.SubprocessError, ValueError):
            return None
        np, nc = len(PARTS), len(PART_COUNTS)
        tot = {"ns": [0] * np, "n": [0] * np, "count": [0] * nc}
        tid = {"ns": [0] * np, "n": [0] * np, "count": [0] * nc}
        hist = [0] * PART_HIST
        u, names = [], PARTS
        for ent in dump:
            for v in ent.get("values", []):
                b = bytes(int(x, 16) for x in v["value"])
                u = [int.from_bytes(b[k * 8:k * 8 + 8], "little") for k in range(len(b) // 8)]
                # a base build from before the Python parts: two parts fewer
                # (their time in "extra"), its map shorter than both sums now
                names = PARTS if len(u) >= 1 + 2 * (2 * np + nc) else PARTS_BEFORE_PY
                add_part_sums(tot, u, 1, names)
                # the thread's sums follow (a base build's map may not have them)
                add_part_sums(tid, u, 1 + 2 * len(names) + nc, names)
                at = 1 + 2 * (2 * len(names) + nc) + 2
                for k in range(min(PART_HIST, max(0, len(u) - at))):
                    hist[k] += u[at + k]
        tot["tid"] = tid if len(u) > 1 + 2 * (2 * len(names) + nc) else None
        tot["hist"] = hist if len(u) >= 1 + 2 * (2 * np + nc) + 2 + PART_HIST else None
        return tot
    return None


def add_part_sums(tot, u, at, names=PARTS):
    """Add one CPU's struct st_part_sums, the words of u from `at` on, to
    tot (bench_parts_map()), its parts `names` (a subset of PARTS, in
    order) at their places in PARTS."""
    np, nc = len(names), len(PART_COUNTS)
    for k, name in enumerate(names):
        if at + np + k < len(u):
            tot["ns"][PARTS.index(name)] += u[at + k]
            tot["n"][PARTS.index(name)] += u[at + np + k]
    for k in range(nc):	# (a base build may count fewer)
        if at + 2 * np + k < len(u):
            tot["count"][k] += u[at + 2 * np + k]


# bpftrace's per-sample stack count (bcc's profile's shape) on bench_cpu alone
WALK_BT = 'profile:hz:%d /comm == "' + WL_COMM + '"/ { @[ustack, pid] = count(); }'


# the loads beside the walk's runs, one process per CPU: none; CPU-bound
# spinners (the guide's and the loaded CI's "both CPUs busy": they compete
# for the CPUs, not for the caches); dd writing 8 MiB blocks, which sweeps
# the caches between two samples (every line a sample touches is a miss)
WALK_LOADS = ("idle", "busy", "sweep")
WALK_LOAD_ARGV = {"busy": ["sh", "-c", "while :; do :; done"],
                  "sweep": ["dd", "if=/dev/zero", "of=/dev/null", "bs=8M"]}


def walk_once(bare, copies, load, freq, tmp, binary=STACKTREED, stats=False, iters=None):
    """One run: stacktreed --unwind fp (bare: --bench-bare) sampling only
    bench_cpu (--comm) with STACKTREED_BENCH_PARTS, `copies` copies started
    at once, each of `iters` iterations (None: BENCH_WALK_ITERS in all, the
    same total work), with one process of `load` (WALK_LOADS) per CPU
    beside them, not sampled. The parts' ns per workload sample, the clock
    read's own cost taken off each part. binary: the stacktreed run
    (STACKTREED_BASE's for the "base" rows), or "bpftrace" (WALK_BT).
    stats: no parts clock; the kernel's BPF run time per run of the
    profiler's programs instead ({"stats": ns}), the one measure bpftrace
    has (every sample of the CPUs, the filtered ones included)."""
    d = os.path.join(tmp, f"walk-{int(bare)}-{copies}-{load}")
    if binary == "bpftrace":
        argv = [BPFTRACE, "-e", WALK_BT % freq]
    else:
        argv = [binary, "-a", "--comm", WL_COMM, "-F", str(freq), "-d", "3600", "-o", d,
                "--unwind", "fp"] + (["--bench-bare"] if bare else [])
    env = dict(os.environ) if stats else dict(os.environ, STACKTREED_BENCH_PARTS="1")
    prof = Profiler("walk", argv, d + ".err")
    prof.env = env
    was = bpf_stats(True) if stats else None
    try:
        prof.start()
    except BenchError as e:
        print(f"walk: {e}")
        bpf_stats(was)
        return None
    spin = [subprocess.Popen(WALK_LOAD_ARGV[load], stderr=subprocess.DEVNULL)
            for _ in range(NCPUS if load in WALK_LOAD_ARGV else 0)]
    try:
        go = os.path.join(tmp, "go")
        wenv = dict(os.environ, WL_START_FILE=go)
        # each copy long enough that its start-up (exec, ld.so: shallow
        # stacks) is a small part of its samples
        if iters is None:
            iters = walk_iters(copies)
        ws = [subprocess.Popen([WORKLOAD, str(max(iters, 1))], env=wenv) for _ in range(copies)]
        time.sleep(0.3)
        sa = prog_stats(prof.pid) if stats else None
        if stats:	# the runs that filter out (spinners, idle CPUs), the workload asleep
            time.sleep(WALK_FILTER_S)
        s0 = prog_stats(prof.pid) if stats else None
        open(go, "w").close()
        cpu = 0.0
        for w in ws:
            _, _, ru = os.wait4(w.pid, 0)
            cpu += ru.ru_utime + ru.ru_stime
        os.unlink(go)
        if stats:	# the workload's run alone (not the idle CPUs' samples around it)
            s1 = prog_stats(prof.pid)
            parts = walk_stats(sa, s0, s1, cpu * freq)
        else:
            parts = bench_parts_map(prof.pid)
    finally:
        for p in spin:
            p.kill()
            p.wait()
        prof.stop()
        if stats:
            bpf_stats(was)
        shutil.rmtree(d, ignore_errors=True)
    if stats:
        return parts or None
    return parts_per_sample(parts)


def walk_iters(copies):
    """Iterations of each of `copies` copies sharing BENCH_WALK_ITERS (at
    least 40000 each: a copy's start-up a small part of its samples)."""
    return max(env_int("BENCH_WALK_ITERS", 600000) // copies, 40000)


def walk_stats(sa, s0, s1, samples):
    """The kernel's BPF run time from prog_stats() read before (sa) and
    after (s0) a window of WALK_FILTER_S with the workload asleep, and at
    its end (s1); samples: the workload's (its CPU time times the rate).
    {"stats": ns per run over the workload's run, every CPU's filtered
    runs included (the one figure bpftrace gives), "own": ns per workload
    sample with the filtered runs taken off at the window's cost per run,
    "filtered": that cost} or {}."""
    runs = s1.get("runs", 0) - s0.get("runs", 0)
    if runs <= 0 or not sa or samples <= 0:
        return {}
    ns = s1["ns_total"] - s0.get("ns_total", 0)
    r = {"stats": ns / runs}
    fruns = s0.get("runs", 0) - sa.get("runs", 0)
    if fruns > 0:
        r["filtered"] = (s0["ns_total"] - sa.get("ns_total", 0)) / fruns
        other = max(0.0, runs - samples)
        r["own"] = max(0.0, ns - other * r["filtered"]) / min(samples, runs)
    return r


def parts_per_sample(parts):
    """bench_parts_map()'s sums as ns per sample that passed the filter, by
    part (the clock read's own cost taken off each), their "total", the
    "samples" and the fold's counts per sample ("n_frames", ...), or None."""
    if not parts or not parts["n"][0]:
        return None
    clock = parts["ns"][-1] / max(parts["n"][-1], 1)
    samples = parts["n"][0]
    per = {name: max(0.0, parts["ns"][k] / parts["n"][k] - clock) * parts["n"][k] / samples
           for k, name in enumerate(PARTS[:-1]) if parts["n"][k]}
    per["total"] = sum(per.values())
    per["samples"] = samples
    for k, name in enumerate(PART_COUNTS):
        per["n_" + name] = parts["count"][k] / samples
    if parts.get("hist") and sum(parts["hist"]):
        # a sample's whole time, its marks' own cost taken off (the
        # marks a sample made: every part's count over the samples)
        marks = sum(parts["n"][:-1]) / samples
        per["median"] = max(0.0, hist_quantile(parts["hist"], 0.5) - marks * clock)
    return per


def hist_quantile(hist, q):
    """The q-quantile (0..1) of bench_parts_map()'s histogram, in ns (the
    middle of its bucket)."""
    total, acc = sum(hist), 0
    for k, c in enumerate(hist):
        acc += c
        if acc >= q * total:
            return (k + 0.5) * PART_HIST_NS
    return len(hist) * PART_HIST_NS


def goal_says(ratio, goal):
    if ratio != ratio:	# NaN: no round ran both
        return "not measured"
    if ratio <= goal:
        return "goal met"
    d = ratio - goal	# (1.503 against 1.5 said "missed by 0.00x")
    return f"goal missed by {d:.2f}x" if d >= 0.005 else f"goal missed by {d:.3f}x"


def bench_walk(rounds, freq, out):
    """Issue 37 item 2: the BPF time per sample of --unwind fp over the bare
    walk of the same stacks (bench_cpu's), and with 100 busy processes over
    2, under each of WALK_LOADS, from bpf/parts.bpf.h's per-part clock
    (samples of bench_cpu only) and from the kernel's BPF run time. The
    goals are judged on the median of the per-round ratios (each round runs
    every configuration side by side, so a ratio is of runs minutes apart,
    not of medians over the VM's slower and faster spells); the ratio of
    the medians is printed beside it. 100 over 2 twice: at the same total
    work (each of the 100 copies lives 1/50 as long as each of the 2, so its
    tree's first samples weigh 50 times more), and at the same lives (2
    copies as short as the 100's): the number of processes alone. With
    STACKTREED_BASE (a build before a change), its fp program runs in the
    same rounds, rows "base"."""
    if not shutil.which("bpftool"):
        print("walk: bpftool missing, skipped")
        return
    tmp = tempfile.mkdtemp(prefix="stacktree-walk.")
    res = {}
    keys = [("fp", 2), ("bare", 2), ("fp", WALK_PROCS), ("bare", WALK_PROCS)]
    if STARTUP_BASE:
        keys[1:1] = [("base", 2)]
        keys[4:4] = [("base", WALK_PROCS)]
    # the kernel's run time per program run: stacktreed and the bare walk
    # without the parts clock, and bpftrace; "short": 2 copies that live
    # as long as each of the 100 copies
    skeys = ([("fp stats", 2), ("bare stats", 2)] + ([("bpftrace", 2)] if BPFTRACE else []) +
             [("fp stats", WALK_PROCS), ("bare stats", WALK_PROCS), ("fp stats short", 2),
              ("bare stats short", 2)])
    loads = [x for x in os.environ.get("BENCH_WALK_LOADS", " ".join(WALK_LOADS)).split()
             if x in WALK_LOADS] or list(WALK_LOADS)
    try:
        for r in range(rounds):
            for load in loads:
                for key in keys + skeys:
                    binary = (STARTUP_BASE if key[0] == "base" else
                              "bpftrace" if key[0] == "bpftrace" else STACKTREED)
                    iters = walk_iters(WALK_PROCS) if key[0].endswith("short") else None
                    v = walk_once(key[0].startswith("bare"), key[1], load, freq, tmp, binary,
                                  stats=key in skeys, iters=iters)
                    if v:
                        v["round"] = r
                        res.setdefault((key, load), []).append(v)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "walk.json"), "w") as f:
        json.dump({f"{k[0][0]}-{k[0][1]}-{k[1]}": v for k, v in res.items()}, f, indent=1)
    print(f"walk: BPF time per bench_cpu sample by part (ns, bpf/parts.bpf.h; medians of {rounds}); "
          f"loads, one process per CPU: idle none, busy a shell spinner, sweep dd of 8 MiB "
          f"blocks (the caches swept between samples)")

    def m(key, load, part):	# (a run without the figure: not counted)
        xs = [x[part] for x in res.get((key, load), []) if x.get(part) is not None]
        return med(xs) if xs else float("nan")

    def paired(num, den, load, part):
        """num's over den's figure in each round both ran: their median and
        the list (the goals' measure)."""
        rs = round_ratios(*({x["round"]: x[part] for x in res.get((k, load), []) if x.get(part)}
                            for k in (num, den)))
        return med(rs), rs

    def says(num, den, load, part, goal):
        """paired()'s median against goal, with its rounds."""
        r, rs = paired(num, den, load, part)
        each = ", ".join(f"{x:.2f}" for x in rs)
        return f"{r:.2f}x (rounds {each}; goal <= {goal}x: {goal_says(r, goal)})"

    names = [p for p in PARTS[:-1]] + ["total"]
    print("  " + f"{'run':<17}" + "".join(f"{n[:10]:>11}" for n in names) +
          f"{'frames':>8}{'finds':>7}{'misses':>8}")
    for load in loads:
        for key in (("bare", 2), ("base", 2), ("fp", 2), ("bare", WALK_PROCS),
                    ("base", WALK_PROCS), ("fp", WALK_PROCS)):
            if (key, load) not in res:
                continue
            label = f"{key[0]} x{key[1]} {load}"
            print("  " + f"{label:<17}" + "".join(f"{m(key, load, n):>11.0f}" for n in names) +
                  f"{m(key, load, 'n_frames'):>8.1f}{m(key, load, 'n_finds'):>7.1f}"
                  f"{m(key, load, 'n_misses'):>8.2f}")
    # the goals, judged on the kernel's own run time per workload sample
    # (no clock of ours in the program: the parts clock adds 13-41% to
    # either walk, more to fp's ten marks than to bare's three), and
    # beside it the parts clock's ratio, whose breakdown is above
    print("  goals, by the kernel's BPF run time per bench_cpu sample (bpf_stats_enabled, no parts "
          "clock; the runs")
    print(f"  that filtered out taken off at their cost in {WALK_FILTER_S:.0f} s with the workload "
          "asleep): the median of the per-round")
    print("  ratios, then the medians' ratio and the parts clock's:")
    fps, bares = ("fp stats", 2), ("bare stats", 2)
    fpn, baren = ("fp stats", WALK_PROCS), ("bare stats", WALK_PROCS)
    fpsh, baresh = ("fp stats short", 2), ("bare stats short", 2)
    for load in loads:
        f2, b2 = m(fps, load, "own"), m(bares, load, "own")
        pb2, pf2 = m(("bare", 2), load, "total"), m(("fp", 2), load, "total")
        pfn = m(("fp", WALK_PROCS), load, "total")
        if f2 == f2 and b2 == b2 and b2 > 0:
            txt = says(fps, bares, load, "own", GOAL_FP_BARE)
            clock = f", parts clock {pf2 / pb2:.2f}x" if pb2 == pb2 and pb2 > 0 else ""
            pm, _ = paired(("fp", 2), ("bare", 2), load, "median")
            if pm == pm:	# (each sample's time: a host's stalls left out)
                clock += f" (per-sample medians {pm:.2f}x)"
            print(f"  fp walk over bare ({load}): {txt}; medians {f2:.0f} / {b2:.0f} ns = "
                  f"{f2 / b2:.2f}x{clock}")
        fn = m(fpn, load, "own")
        if fn == fn and f2 == f2 and f2 > 0:
            txt = says(fpn, fpsh, load, "own", GOAL_PROCS)
            alone, _ = paired(baren, baresh, load, "own")
            print(f"  fp {WALK_PROCS} processes over 2 ({load}), the copies' lives equal: {txt}; "
                  f"the bare walk alone {alone:.2f}x")
            r, _ = paired(fpn, fps, load, "own")
            alone, _ = paired(baren, bares, load, "own")
            clock = f", parts clock {pfn / pf2:.2f}x" if pf2 == pf2 and pf2 > 0 else ""
            print(f"    the same total work (each of the {WALK_PROCS} lives 1/{WALK_PROCS // 2} as "
                  f"long: its first samples, which build its tree, weigh more): {r:.2f}x; the "
                  f"bare walk alone {alone:.2f}x{clock}")
        if STARTUP_BASE:
            bb, ff = m(("base", 2), load, "total"), m(("fp", 2), load, "total")
            if bb == bb and ff == ff and pb2 == pb2 and pb2 > 0:
                print(f"  base fp over bare ({load}, parts clock): {bb / pb2:.2f}x; this build "
                      f"{ff / pb2:.2f}x")
    print("  the kernel's BPF run time per program run while bench_cpu runs, every CPU's "
          "filtered runs")
    print("  included (the one figure bpftrace's run gives), 2 processes: the bare walk, "
          "stacktreed --unwind fp, and bpftrace")
    print(f"  '{WALK_BT % freq}' (a stack id per sample, bcc's profile's shape):")
    for load in loads:
        b, f, t = (m((k, 2), load, "stats") for k in ("bare stats", "fp stats", "bpftrace"))
        if b == b and b > 0:
            row = f"    {load}: bare {b:.0f} ns, fp {f:.0f} ns ({f / b:.2f}x)"
            if t == t:
                row += f", bpftrace {t:.0f} ns ({t / b:.2f}x); fp over bpftrace {f / t:.2f}x"
            bo, to = m(bares, load, "own"), m(("bpftrace", 2), load, "own")
            if to == to and bo == bo and bo > 0:
                tb, _ = paired(("bpftrace", 2), bares, load, "own")
                ft, _ = paired(fps, ("bpftrace", 2), load, "own")
                row += (f"; per bench_cpu sample, per-round medians: bpftrace {tb:.2f}x bare, "
                        f"fp over bpftrace {ft:.2f}x")
            print(row)
    if STARTUP_BASE:
        print(f"  base: {STARTUP_BASE} (STACKTREED_BASE), in the same rounds")


PYTHON = "/usr/bin/python3.11"
PY_ROUNDS = 5  # BENCH_PY_ROUNDS by default: one outlier moves a median of 3
PY_SCRIPT = os.path.join(ROOT, "tests", "workloads", "pyphases.py")
PY_SECONDS = 4  # pyphases.py's run (s)
GOAL_PY = 1.5  # issue 37 item 2: Python frames on over off, BPF time per sample


def bench_python(rounds, freq, out):
    """Issue 19: BPF run time per sample on a Python workload
    (tests/workloads/pyphases.py under python3.11) with Python frames
    walked and with --no-python, alternating; the ratio of the medians
    (goal: <= 1.5)."""
    if not os.access(PYTHON, os.X_OK):
        print(f"python: {PYTHON} missing, skipped")
        return
    # "walk", "report", "merge": the Python part stopped after its walk,
    # its code reports or its merge (STACKTREED_BENCH_PY_STOP,
    # bpf/base.bpf.h), the native frames then folded: each part's time is
    # the difference
    modes = ("on", "walk", "report", "merge", "off")
    ns = {m: [] for m in modes}
    for i in range(rounds):
        for mode in modes:
            d = os.path.join(out, f"py-{mode}-{i}")
            args = [STACKTREED, "-F", str(freq), "-o", d] + \
                (["--no-python"] if mode == "off" else []) + ["--", PYTHON, PY_SCRIPT, str(PY_SECONDS)]
            env = dict(os.environ)
            if mode in ("walk", "report", "merge"):
                env["STACKTREED_BENCH_PY_STOP"] = mode
            p = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
            r = parse_stacktreed(p.stderr, d)
            if p.returncode == 0 and "bpf_ns_walked" in r:
                ns[mode].append(r["bpf_ns_walked"])
    if not all(ns.values()):
        print("python: no BPF run time (kernel BPF stats off?)")
        return
    on, walk, report, merge, off = (med(ns[m]) for m in modes)
    print(f"python: BPF run time per sample on {os.path.basename(PY_SCRIPT)} at {freq} Hz: "
          f"{on:.0f} ns with Python frames, {off:.0f} ns with --no-python (ratio {on / off:.2f}; "
          f"goal <= {GOAL_PY}: {goal_says(on / off, GOAL_PY)}; launched, medians of {rounds})")
    print(f"  by part: native {off:.0f} ns, Python walk {walk - off:+.0f}, code reports "
          f"{report - walk:+.0f}, merge {merge - report:+.0f}, the longer fold {on - merge:+.0f}")
    # Launched, a run's samples include the interpreter's start-up (its
    # imports' new code objects, samples unwound late), which costs both
    # modes alike and brings the ratio down; the same script attached with
    # --pid once it waits for the go file measures its steady state only.
    steady = {"on": [], "off": []}
    reads = []
    for i in range(rounds):
        for mode in ("on", "off"):
            r = python_steady(freq, os.path.join(out, f"py-steady-{mode}-{i}"), mode == "off")
            steady[mode].append(r[0] if r else None)
            if r and r[1] and mode == "on":
                reads.append(r[1])
    if all(all(v) for v in steady.values()):
        son, soff = med(steady["on"]), med(steady["off"])
        print(f"  steady state (--pid, after start-up): {son:.0f} ns with Python frames, "
              f"{soff:.0f} ns with --no-python (ratio {son / soff:.2f}, goal <= {GOAL_PY}: "
              f"{goal_says(son / soff, GOAL_PY)}; ratios per round "
              f"{', '.join('%.2f' % (a / b) for a, b in zip(steady['on'], steady['off']))})")
    if reads:
        print(f"  reads of the process's memory per sample with Python frames (steady, "
              f"median): {med([r[0] for r in reads]):.2f}, of them frames "
              f"{med([r[1] for r in reads]):.2f}, code objects {med([r[2] for r in reads]):.2f}")
    python_steady_medians(rounds, freq, out)
    python_steady_medians(rounds, freq, out, load="busy")


def python_steady_medians(rounds, freq, out, load="idle"):
    """The steady state again, timed by bpf/parts.bpf.h's clock: each
    sample's whole time into a histogram, whose median a host's stall
    inside a few samples does not move, where it moves a run's mean by a
    fifth here (kernel-notes/python.md, "Measured again (2026-12-01)").
    load: WALK_LOADS' "idle" or "busy" (a shell spinner per CPU beside the
    runs: the done-when's condition). The histogram holds the sampled
    process's samples only (a filtered one ends before part_end()), where
    the kernel's run time per walked sample counts the spinners' filtered
    runs in both modes alike and so pulls a busy ratio towards 1."""
    per = {"on": [], "off": []}
    for i in range(rounds):
        for mode in ("on", "off"):
            r = python_steady(freq, os.path.join(out, f"py-parts-{load}-{mode}-{i}"),
                              mode == "off", parts=True, load=load)
            per[mode].append(r[2] if r and r[2] and "median" in r[2] else None)
    pairs = [(a, b) for a, b in zip(per["on"], per["off"]) if a and b]
    cond = "both CPUs busy" if load == "busy" else load
    if not pairs:
        print(f"  steady state by the parts clock ({cond}): not measured (no histogram)")
        return
    ratios = [a["median"] / b["median"] for a, b in pairs if b["median"]]
    means = [a["total"] / b["total"] for a, b in pairs if b["total"]]
    r = med(ratios)
    print(f"  steady state by the parts clock ({cond}), each sample's time: medians "
          f"{med([a['median'] for a, _ in pairs]):.0f} ns with Python frames, "
          f"{med([b['median'] for _, b in pairs]):.0f} ns with --no-python (median of the "
          f"per-round ratios {r:.2f}, goal <= {GOAL_PY}: {goal_says(r, GOAL_PY)}; rounds "
          f"{', '.join('%.2f' % x for x in ratios)}); the same clock's means: "
          f"{', '.join('%.2f' % x for x in means)}")
    # where the difference goes, in the same runs (parts.bpf.h: the Python
    # walk with the kernel stack before it, the merge, the path, the fold)
    names = ("py_walk", "py_merge", "extra", "enter", "prefix", "root", "frames", "leaf")
    print("    by part, with Python frames less without (ns a sample, medians of the rounds): " +
          ", ".join(f"{n} {med([a.get(n, 0.0) - b.get(n, 0.0) for a, b in pairs]):+.0f}"
                    for n in names) +
          f"; without: {med([b['total'] for _, b in pairs]):.0f} ns in all")


def python_steady(freq, d, off, parts=False, load="idle"):
    """stacktreed --pid on pyphases.py once the script waits for its go
    file (WL_GO): (BPF ns per walked sample of its measured 4 s, py_reads(),
    and with parts, bpf/parts.bpf.h's figures of its samples read half a
    second before the end: parts_per_sample()), or None. load: one process
    of WALK_LOAD_ARGV[load] per CPU beside the measured seconds ("idle":
    none)."""
    go = d + ".go"
    env = dict(os.environ, WL_GO=go)
    py = subprocess.Popen([PYTHON, PY_SCRIPT, str(PY_SECONDS)], env=env,
                          stdout=subprocess.DEVNULL)
    st = subprocess.Popen([STACKTREED, "-F", str(freq), "-o", d, "--pid", str(py.pid)] +
                          (["--no-python"] if off else []),
                          stderr=subprocess.PIPE, text=True,
                          env=dict(os.environ, STACKTREED_BENCH_PARTS="1") if parts else None)
    per, spin = None, []
    try:
        err = until_sampling(st)
        spin = [subprocess.Popen(WALK_LOAD_ARGV[load], stderr=subprocess.DEVNULL)
                for _ in range(NCPUS if load in WALK_LOAD_ARGV else 0)]
        open(go, "w").close()
        if parts:
            per = own_parts(st, PY_SECONDS)[0]
        py.wait(timeout=120)
        err += st.communicate(timeout=120)[1]
    finally:
        end_runs([py, st] + spin, go)
    r = parse_stacktreed(err, d)
    if st.returncode != 0 or "bpf_ns_walked" not in r:
        return None
    return r["bpf_ns_walked"], py_reads(d), per


def py_reads(d):
    """Reads of process memory per sample with Python frames (the profile's
    python_reads notes: all, of frames, of code objects), or None."""
    try:
        with open(os.path.join(d, "profile.json")) as f:
            notes = json.load(f).get("notes", {})
        walked = notes["python_walked"]["value"]
        return tuple(notes[k]["value"] / walked
                     for k in ("python_reads", "python_reads_frames", "python_reads_codes"))
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        return None


# ---- Java ------------------------------------------------------------------

JAVA = "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
JAVA_CLASSES = os.path.join(ROOT, "build", "workloads", "java")
JAVA_ROUNDS = 7  # BENCH_JAVA_ROUNDS by default
JAVA_SECONDS = 4
# Ledger's recursion alone, this deep: main -> Ledger$Recurse.work ->
# descend x 29 -> leafWork, 32 Java frames over the launcher's ~8 native
# ones, near the ~38 frames of the native workload (deep: descend x 33
# under main)
JAVA_DEPTH = 28
DEEP = os.path.join(ROOT, "build", "workloads", "deep")


def ledger_jvm(seconds, xint, go):
    """Ledger's recursion alone (tests/workloads/java), JAVA_DEPTH deep, for
    seconds once its main thread found the go file (WL_GO): the JVM, started
    (it prints "ready" while it waits)."""
    argv = [JAVA, "-Xmx128m"] + (["-Xint"] if xint else []) + \
        ["-cp", JAVA_CLASSES, "Ledger", str(seconds),
         "recurse=1,inline=0,matrix=0,stream=0,deflate=0,worker=0", str(JAVA_DEPTH)]
    return subprocess.Popen(argv, env=dict(os.environ, WL_GO=go), stdout=subprocess.PIPE,
                            text=True)


def until_sampling(st):
    """stacktreed's stderr up to its "sampling at" line."""
    err = ""
    for line in st.stderr:
        err += line
        if "sampling at" in line:
            break
    return err


def end_runs(procs, go):
    """Kill what still runs of procs (None: not started) and remove go."""
    for p in procs:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
    if os.path.exists(go):
        os.unlink(go)


def own_parts(st, seconds):
    """The BPF time per sample of the profiled process's own samples and of
    its thread STACKTREED_BENCH_PARTS_TID's alone, from bpf/parts.bpf.h's
    clock (STACKTREED_BENCH_PARTS): read from the running daemon st half a
    second before its workload's `seconds` end: two parts_per_sample()
    figures (each None when missing: the thread's, with a build that has
    no thread sums)."""
    time.sleep(max(seconds - 0.5, 0.5))
    parts = bench_parts_map(st.pid)
    if not parts:
        return None, None
    return parts_per_sample(parts), parts_per_sample(parts["tid"])


def steady_run(freq, d, wl, go, tid, binary=STACKTREED):
    """stacktreed (binary) --pid on the started workload wl, which waits for
    its go file, with thread tid's samples timed on their own too: a dict
    of bpf_and_depth()'s figures, "own" (the BPF ns per sample of wl's own
    samples) and "own_parts" (their parts: own_parts()), "thread" and
    "thread_parts" (the same of tid's samples alone, None with a build
    without them) and "thread_share" (tid's % of wl's samples), or None."""
    st = None
    try:
        st = subprocess.Popen([binary, "-F", str(freq), "-o", d, "--pid", str(wl.pid)],
                              stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, STACKTREED_BENCH_PARTS="1",
                                       STACKTREED_BENCH_PARTS_TID=str(tid)))
        err = until_sampling(st)
        open(go, "w").close()
        own, thread = own_parts(st, JAVA_SECONDS)
        wl.communicate(timeout=300)
        err += st.communicate(timeout=120)[1]
    finally:
        end_runs((wl, st), go)
    r = bpf_and_depth(err, d, st.returncode, tid)
    if not r or not own:
        return None
    r.update(own=own["total"], own_parts=own, thread=thread and thread["total"],
             thread_parts=thread,
             thread_share=thread and 100.0 * thread["samples"] / own["samples"])
    return r


def java_steady(freq, d, xint, binary=STACKTREED):
    """steady_run() on Ledger's recursion (ledger_jvm) once its main thread
    waits for its go file, that thread timed on its own too (its tid, which
    Ledger prints: not the JVM's compiler, GC and VM threads), or None.
    (Not -t for its main thread alone: a thread named is sampled by
    per-task events, whose early program defers every sample to the
    daemon.)"""
    go = d + ".go"
    jvm = ledger_jvm(JAVA_SECONDS, xint, go)
    ready, tid = jvm.stdout.readline().strip(), jvm.stdout.readline().split()
    if ready != "ready" or len(tid) != 2 or tid[0] != "main-tid" or not tid[1].isdigit():
        end_runs((jvm,), go)
        return None
    return steady_run(freq, d, jvm, go, int(tid[1]), binary)


def native_steady(freq, d, binary=STACKTREED):
    """steady_run() on deep (about as deep as java_steady's stacks; one
    thread) once it waits for its start file. (Not `-- deep`: a launched
    command's first seconds are sampled by the early program and unwound
    in the daemon.)"""
    go = d + ".go"
    wl = subprocess.Popen([DEEP, str(JAVA_SECONDS)], env=dict(os.environ, WL_START_FILE=go))
    return steady_run(freq, d, wl, go, wl.pid, binary)


def bpf_and_depth(err, d, rc, tid):
    """{"summary": BPF ns per walked sample, "depth": mean frames per
    sample, "java": % of samples with a Java frame, "thread_depth" and
    "thread_java": the same of thread tid's samples} of a finished run, or
    None."""
    r = parse_stacktreed(err, d)
    if rc != 0 or "bpf_ns_walked" not in r:
        return None
    try:
        with open(os.path.join(d, "profile.json")) as f:
            prof = tree_form(json.load(f))
    except (OSError, ValueError):
        return None
    sums = {"all": [0, 0, 0], "thread": [0, 0, 0]}  # frames, samples, with a Java frame
    for t in prof.get("threads", []):
        stack = [(t["root"], 0, False)]
        while stack:
            n, depth, jv = stack.pop()
            jv = jv or n.get("runtime") == "java"
            if n["base"]:
                for k in ("all", "thread") if t.get("tid") == tid else ("all",):
                    sums[k][0] += depth * n["base"]
                    sums[k][1] += n["base"]
                    sums[k][2] += n["base"] if jv else 0
            stack.extend((c, depth + 1, jv) for c in n["children"])
    (frames, samples, java), (tframes, tsamples, tjava) = sums["all"], sums["thread"]
    if not samples:
        return None
    return {"summary": r["bpf_ns_walked"], "depth": frames / samples,
            "java": 100.0 * java / samples,
            "thread_depth": tframes / tsamples if tsamples else None,
            "thread_java": 100.0 * tjava / tsamples if tsamples else None}


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# A round's runs, in this order: each Java run next to the native one
JAVA_MODES = ("jit", "native", "xint")


def java_round(freq, out, tag, binary):
    """One round of bench_java() for one build: {mode: steady_run()'s
    result} for JAVA_MODES, back to back (a mode whose run failed left
    out)."""
    r = {}
    for mode in JAVA_MODES:
        d = os.path.join(out, f"java-{tag}-{mode}")
        x = native_steady(freq, d, binary) if mode == "native" else \
            java_steady(freq, d, mode == "xint", binary)
        if x:
            r[mode] = x
    return r


def bench_java(rounds, freq, out):
    """Issue 32, item 5: BPF time per sample of a Java thread (Ledger's
    recursion in the JVM's main thread, JIT and -Xint, attached by --pid
    once it runs) against a native stack of about the same depth (the deep
    workload's one thread); goal <= 1.5. The time is the thread's own
    samples' (bpf/parts.bpf.h's clock, from the filter's pass to the
    fold's end, the clock's own cost taken off; STACKTREED_BENCH_PARTS_TID:
    the thread's tid, which Ledger prints), and beside it, from the same
    runs, the whole process's (the JVM's compiler, GC and VM threads'
    samples with it: deep native stacks in libjvm, no Java frame). The
    summary's BPF run time, printed after them, divides the CPU's whole
    BPF time by its samples, other processes' filtered ones included, and
    so moves with the machine's load. Each round runs JIT, native, -Xint
    back to back and takes its ratios (JIT over native, -Xint over native)
    there: the machine's load moves every figure of a run by as much as
    the changes measured (ratios of medians over 3 rounds: 0.9-2.6 by run),
    less so a ratio of neighbours; the figure is the median of the rounds'
    ratios, with their spread. With STACKTREED_BASE (a build before a
    change) that build runs in the same rounds, after or before this one
    (the order turns each round), rows "base". BENCH_JAVA_BUSY=N: N dd
    spinners run beside each run. The load average is printed before and
    after."""
    if not os.access(JAVA, os.X_OK) or not os.path.exists(os.path.join(JAVA_CLASSES,
                                                                        "Ledger.class")):
        print(f"java: {JAVA} or {JAVA_CLASSES}/Ledger.class missing (make builds it), skipped")
        return
    if not os.access(DEEP, os.X_OK):
        print(f"java: {DEEP} missing (make bench builds it), skipped")
        return
    if not shutil.which("bpftool"):
        print("java: bpftool missing (it reads the per-sample clock), skipped")
        return
    busy = env_int("BENCH_JAVA_BUSY", 0, lo=0)
    builds = [("new", STACKTREED)] + ([("base", STARTUP_BASE)] if STARTUP_BASE else [])
    os.makedirs(out, exist_ok=True)
    res = {b: [] for b, _ in builds}
    load0 = loadavg()
    spin = [subprocess.Popen(["dd", "if=/dev/zero", "of=/dev/null", "bs=8M"],
                             stderr=subprocess.DEVNULL) for _ in range(busy)]
    try:
        for i in range(rounds):
            for b, binary in builds[i % len(builds):] + builds[:i % len(builds)]:
                res[b].append(java_round(freq, out, f"{b}-{i}", binary))
    finally:
        for p in spin:
            p.kill()
            p.wait()
    load1 = loadavg()
    with open(os.path.join(out, "java.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"java: BPF time per sample of a Java thread's own samples, and of its JVM's, "
          f"at {freq} Hz"
          f"{f' ({busy} dd spinners beside)' if busy else ''}, {rounds} rounds "
          f"(JIT, native, -Xint back to back; load average {load0} before, {load1} after)")
    for b, binary in builds:
        java_rows(b, binary, res[b])


def java_rows(build, binary, rounds):
    """bench_java()'s lines for one build's rounds: the Java thread's
    ratios (the goal's measure), then the whole process's."""
    def ratios(mode, key):
        return [r[mode][key] / r["native"][key] for r in rounds
                if mode in r and "native" in r and r[mode].get(key) and r["native"].get(key)]

    def of(mode, key):
        return [r[mode][key] for r in rounds if mode in r and r[mode].get(key) is not None]

    def rng(xs, fmt):
        return f"{fmt.format(min(xs))}-{fmt.format(max(xs))}" if xs else "none"

    def mid(mode, key):
        xs = of(mode, key)
        return med(xs) if xs else float("nan")

    tag = "" if build == "new" else f"{build} ({binary}) "
    lines = 0
    for key, what in (("thread", "the Java thread (Ledger's main; deep's one)"),
                      ("own", "the whole process (the JVM's compiler, GC, VM threads too)")):
        jit, xint = ratios("jit", key), ratios("xint", key)
        if not jit or not xint:
            continue
        lines += 1
        ns = {m: med(of(m, key)) for m in JAVA_MODES}
        print(f"  {tag}{what}: ratio per round, median (spread; rounds): JIT {med(jit):.2f} "
              f"({rng(jit, '{:.2f}')}; {len(jit)}), -Xint {med(xint):.2f} "
              f"({rng(xint, '{:.2f}')}; {len(xint)}); goal <= 1.5: JIT "
              f"{goal_says(med(jit), 1.5)}, -Xint {goal_says(med(xint), 1.5)}")
        print(f"  {tag}  ns, medians (spread): JIT {ns['jit']:.0f} "
              f"({rng(of('jit', key), '{:.0f}')}), -Xint {ns['xint']:.0f} "
              f"({rng(of('xint', key), '{:.0f}')}), native {ns['native']:.0f} "
              f"({rng(of('native', key), '{:.0f}')})")
    if not lines:
        print(f"  {tag}no BPF run time (kernel BPF stats off, or runs failed: "
              f"{ {m: len(of(m, 'own')) for m in JAVA_MODES} } of {len(rounds)})")
        return
    old_j, old_x = ratios("jit", "summary"), ratios("xint", "summary")
    print(f"  {tag}the summary's BPF run time (every sample of the CPU's), ratio per round: "
          f"JIT {med(old_j):.2f} ({rng(old_j, '{:.2f}')}), -Xint {med(old_x):.2f} "
          f"({rng(old_x, '{:.2f}')})")
    share = (f"JIT {mid('jit', 'thread_share'):.1f}%, -Xint {mid('xint', 'thread_share'):.1f}%"
             if of("jit", "thread_share") else "none (a build without the thread's clock)")
    print(f"  {tag}the Java thread's share of the JVM's samples: {share}; "
          f"its mean frames per sample {mid('jit', 'thread_depth'):.0f} (JIT), "
          f"{mid('xint', 'thread_depth'):.0f} (-Xint), {mid('native', 'thread_depth'):.0f} "
          f"(native), with a Java frame {mid('jit', 'thread_java'):.1f}% and "
          f"{mid('xint', 'thread_java'):.1f}%")
    java = {m: mid(m, "java") for m in ("jit", "xint")}
    print(f"  {tag}the whole JVM's mean frames per sample {mid('jit', 'depth'):.0f} (JIT), "
          f"{mid('xint', 'depth'):.0f} (-Xint); samples with a Java frame "
          f"{java['jit']:.1f}% and {java['xint']:.1f}%"
          + ("" if java["jit"] and java["xint"] else
             " (none: stacktreed does not walk Java frames yet, the ratios are not Java's)"))


# ---- a real compiler -------------------------------------------------------

def du(path):
    """Bytes of a file or of a directory tree."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    n = 0
    for d, _, files in os.walk(path):
        for f in files:
            try:
                n += os.path.getsize(os.path.join(d, f))
            except OSError:
                pass
    return n


def run_compile(cfg, gcc, src, tmp, freq, tag):
    """One compile, bare or launched under a profiler: wall time, bytes the
    profiler wrote, and stacktreed's summary numbers (the caller adds the
    CPU time of everything that ran)."""
    obj = os.path.join(tmp, "big.o")
    cmd = [gcc, "-O2", "-c", src, "-o", obj]
    res = {"config": cfg}
    outp = os.path.join(tmp, f"{cfg}-{tag}")
    if cfg == "stacktreed":
        argv = [STACKTREED, "-F", str(freq), "-o", outp, "--"] + cmd
    elif cfg == "perf-dwarf":
        argv = ["perf", "record", "-e", "cpu-clock", "-F", str(freq), "--call-graph", "dwarf",
                "-o", outp, "--"] + cmd
    else:
        argv = cmd
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.communicate()[1]
    res["wall"] = time.monotonic() - t0
    if p.returncode != 0:
        raise BenchError(f"compile under {cfg} exited with status {p.returncode}:\n{tail(err)}")
    if cfg != "baseline":
        res["bytes"] = du(outp)
    if cfg == "stacktreed":
        res.update(parse_stacktreed(err, outp))
        if "bpf_ns" in res:
            res.setdefault("bpf_ns_walked", res["bpf_ns"])
    if os.path.isdir(outp):
        shutil.rmtree(outp, ignore_errors=True)
    elif os.path.exists(outp):
        os.unlink(outp)
    return res


def children_cpu():
    ru = os.times()
    return ru.children_user + ru.children_system


# the process that does a compiler's work, whose BPF run time is reported
WORKER = {"gcc": "cc1", "clang-14": "clang-14"}


def bench_compiler(name, rounds, nfuncs, freq, have_perf, out):
    gcc = shutil.which(name)
    worker = WORKER.get(name, name)
    print()
    if not gcc:
        print(f"compiler: {name} not found (scripts/deps.sh installs it): skipped")
        return
    tmp = tempfile.mkdtemp(prefix="stacktree-bench-cc.")
    src = c_source(os.path.join(tmp, "big.c"), nfuncs)
    configs = ["baseline", "stacktreed"] + (["perf-dwarf"] if have_perf else [])
    print(f"compiler: {name} -O2 -c of a generated {os.path.getsize(src) // 1024} KB C file "
          f"({worker} does the work), launched under each profiler at {freq} Hz; {rounds} rounds, "
          "interleaved")
    sys.stdout.flush()
    runs = []
    try:
        for r in range(rounds):
            line = []
            for cfg in configs[r % len(configs):] + configs[:r % len(configs)]:
                c0 = children_cpu()
                res = run_compile(cfg, gcc, src, tmp, freq, str(r))
                res["cpu"] = children_cpu() - c0
                res["round"] = r
                runs.append(res)
                line.append(f"{cfg} {res['wall']:.2f}s")
            print(f"  round {r + 1}/{rounds}: " + ", ".join(line))
            sys.stdout.flush()
    except BenchError as e:
        print(f"  compiler part stopped: {e}")
        return
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(out, f"compiler-{name}.json"), "w") as f:
        json.dump({"rounds": rounds, "nfuncs": nfuncs, "freq": freq, "runs": runs}, f, indent=1)
    base = {x["round"]: x for x in runs if x["config"] == "baseline"}

    def of(cfg, key):
        return [x[key] for x in runs if x["config"] == cfg and key in x]

    def ratio(cfg, key):
        return med([x[key] / base[x["round"]][key] for x in runs if x["config"] == cfg])

    print(f"{'config':<24} {'wall s':>6} {'slowdown':>9} {'CPU s':>6} {'slowdown':>9} "
          f"{'written MiB':>11} {'BPF ns/sample':>13}")
    label = {"baseline": f"{name} alone", "stacktreed": "stacktreed (auto)",
             "perf-dwarf": "perf --call-graph dwarf"}
    for cfg in configs:
        bpf = of(cfg, "bpf_ns_walked")
        print(f"{label[cfg]:<24} {med(of(cfg, 'wall')):>6.2f} {pct(ratio(cfg, 'wall')):>9} "
              f"{med(of(cfg, 'cpu')):>6.2f} {pct(ratio(cfg, 'cpu')):>9} "
              f"{(med(of(cfg, 'bytes')) / 2**20 if of(cfg, 'bytes') else 0):>11.1f} "
              f"{(f'{med(bpf):.0f}' if bpf else '-'):>13}")
    print(f"  CPU s: user+sys of everything launched ({name}, its children and the profiler "
          "itself, perf's writing included);")
    print("  BPF ns/sample: the summary's 'BPF run time' (timer program, per non-idle sample; "
          f"range {spread(of('stacktreed', 'bpf_ns_walked'), lambda v: f'{v:.0f}')}).")
    if "perf-dwarf" in configs:
        sw, pw = ratio("stacktreed", "wall") - 1, ratio("perf-dwarf", "wall") - 1
        sc, pc = ratio("stacktreed", "cpu") - 1, ratio("perf-dwarf", "cpu") - 1
        sb, pb = med(of("stacktreed", "bytes")), med(of("perf-dwarf", "bytes"))
        print(f"  stacktreed / perf dwarf: slowdown by wall time "
              f"{(f'{sw / pw:.2f}' if pw > 0 and sw >= 0 else 'n/a, within noise')}, "
              f"by CPU time {(f'{sc / pc:.2f}' if pc > 0 and sc >= 0 else 'n/a, within noise')}, "
              f"bytes written {(f'{sb / pb:.3f}' if pb else 'n/a')}")
    fp = None
    try:
        with open(os.path.join(out, "results.json")) as f:
            fp = med([x["bpf_ns_walked"] for x in json.load(f)["runs"]
                      if x["config"] == "stacktreed" and "bpf_ns_walked" in x])
    except (OSError, ValueError, KeyError):
        pass
    if fp and of("stacktreed", "bpf_ns_walked"):
        print(f"  BPF run time per sample: {worker} (auto, DWARF) {med(of('stacktreed', 'bpf_ns_walked')):.0f}"
              f" ns (goal: <= 3000 ns); the frame-pointer walk of the {WL_COMM} runs above "
              f"{fp:.0f} ns ({med(of('stacktreed', 'bpf_ns_walked')) / fp:.2f}x; system-wide: "
              "every process on the machine, other jobs included)")


GOAL_BYTES = 1.0  # profile.json of a -a build profile / perf.data of the same run


def bench_bytes(have_perf, freq, out):
    """Issue 37 item 4: the bytes of a system-wide profile of a C build
    (BENCH_BYTES_JOBS compiles of the generated C file, two at a time)
    written by `stacktreed -a` (profile.json, and profile.pb.gz) and by
    `perf record -a -g` sampling the same run at the same frequency, side
    by side; goal: profile.json <= perf.data."""
    print()
    if not have_perf:
        print("profile bytes: perf not found (scripts/deps.sh installs linux-perf): skipped")
        return
    gcc = shutil.which("gcc")
    if not gcc:
        print("profile bytes: gcc not found: skipped")
        return
    jobs = env_int("BENCH_BYTES_JOBS", 6)
    tmp = tempfile.mkdtemp(prefix="stacktree-bench-bytes.")
    src = c_source(os.path.join(tmp, "big.c"), env_int("BENCH_CC_FUNCS", 600))
    st_out, perf_out = os.path.join(tmp, "st"), os.path.join(tmp, "perf.data")
    print(f"profile bytes: {jobs} x gcc -O2 -c of a {os.path.getsize(src) // 1024} KB C file, "
          f"two at a time, under stacktreed -a and perf record -a -g at once ({freq} Hz)")
    sys.stdout.flush()
    profs = [Profiler("stacktreed", [STACKTREED, "-a", "-F", str(freq), "-o", st_out,
                                     "--format", "json,pprof"], os.path.join(tmp, "st.err")),
             Profiler("perf", ["perf", "record", "-a", "-g", "-F", str(freq), "-o", perf_out],
                      os.path.join(tmp, "perf.err"))]
    started = []
    try:
        for pr in profs:
            pr.start()
            started.append(pr)
        build = " ".join(f"{gcc} -O2 -c {src} -o {tmp}/o{i}.o" + (" &" if i % 2 == 0 else "; wait;")
                         for i in range(jobs)) + " wait"
        t0 = time.monotonic()
        subprocess.run(["sh", "-c", build], check=True, timeout=1800)
        wall = time.monotonic() - t0
    except (BenchError, subprocess.SubprocessError, OSError) as e:
        print(f"  profile bytes part stopped: {e}")
        for pr in started:
            pr.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        return
    for pr in profs:
        pr.stop()
    try:
        js = os.path.getsize(os.path.join(st_out, "profile.json"))
        pb = os.path.getsize(os.path.join(st_out, "profile.pb.gz"))
        pd = os.path.getsize(perf_out)
        m = re.search(r"(\d+) \S+ samples in (\d+) threads", profs[0].stderr_text())
    except OSError as e:
        print(f"  profile bytes: a file is missing: {e}")
        shutil.rmtree(tmp, ignore_errors=True)
        return
    shutil.rmtree(tmp, ignore_errors=True)
    ratio = js / pd if pd else float("inf")
    with open(os.path.join(out, "bytes.json"), "w") as f:
        json.dump({"wall": wall, "profile_json": js, "pprof": pb, "perf_data": pd,
                   "freq": freq, "jobs": jobs}, f, indent=1)
    print(f"  build {wall:.1f} s; {m.group(1) + ' samples, ' if m else ''}"
          f"profile.json {js / 2**20:.1f} MiB, profile.pb.gz {pb / 2**20:.1f} MiB, "
          f"perf.data {pd / 2**20:.1f} MiB")
    verdict = ("goal met" if ratio <= GOAL_BYTES else
               f"goal missed by {ratio - GOAL_BYTES:.2f}x")
    print(f"  build profile bytes / perf.data: profile.json {ratio:.2f}x (goal <= {GOAL_BYTES:.1f}x: "
          f"{verdict}), profile.pb.gz {pb / pd if pd else 0:.3f}x")


STORM = os.path.join(ROOT, "build", "workloads", "switchstorm")
# bpftrace's equivalent of --event offcpu: the user stack at a thread's
# switch-out, the time away summed on it at its switch-in
STORM_BT = ("tracepoint:sched:sched_switch /pid == %d/ { @s[tid] = nsecs; @k[tid] = ustack; } "
            "tracepoint:sched:sched_switch /@s[args->next_pid]/ { "
            "@off[@k[args->next_pid]] = sum(nsecs - @s[args->next_pid]); "
            "delete(@s[args->next_pid]); }")


def storm_once(cfg, rounds, out, tag):
    """The storm's own time of its ping-pong (s) under cfg, or None; and
    what failed."""
    tmp = tempfile.mkdtemp(prefix="st-storm-", dir=out)
    report, start = os.path.join(tmp, "wl.txt"), os.path.join(tmp, "start")
    env = dict(os.environ, WL_REPORT=report)
    why = ""
    if cfg == "baseline":
        subprocess.run([STORM, str(rounds)], env=env, timeout=300)
    elif cfg.startswith("stacktreed"):
        extra = ["--offcpu-max-rate", "0"] if cfg == "stacktreed-all" else []
        p = subprocess.run([STACKTREED, "-e", "offcpu", "-o", os.path.join(tmp, "st")] + extra +
                           ["--", STORM, str(rounds)], env=env, capture_output=True, text=True,
                           timeout=600)
        why = tail(p.stderr, 2) if p.returncode else ""
    else:	# bpftrace, attached before the storm starts
        env["WL_START_FILE"] = start
        wl = subprocess.Popen([STORM, str(rounds)], env=env)
        bt = subprocess.Popen([BPFTRACE_TRACEFS, "-e", STORM_BT % wl.pid], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        text = ""
        line = bt.stdout.readline()
        while line and "Attaching" not in line:
            text += line
            line = bt.stdout.readline()
        if "Attaching" in line:
            time.sleep(1)	# "Attaching" comes before the probes are in
            open(start, "w").close()
            wl.wait(timeout=600)
            bt.send_signal(signal.SIGINT)
            bt.communicate(timeout=120)
        else:
            why = "bpftrace could not attach: " + " / ".join(
                l for l in text.splitlines()
                if "ERROR" in l and "RLIMIT" not in l)[:200]
            bt.wait()
            wl.kill()
            wl.wait()
    secs = None
    try:
        with open(report) as f:
            m = re.search(r"^storm ([0-9.]+)", f.read(), re.M)
            secs = float(m.group(1)) if m else None
    except OSError:
        pass
    shutil.rmtree(tmp, ignore_errors=True)
    return secs, why


def bench_storm(rounds, out):
    """Issue 33: a context-switch storm (tests/workloads/switchstorm.c: two
    threads ping-ponging through pipes) slowed by --event offcpu (the
    default --offcpu-max-rate, and without a bound) next to bpftrace's
    equivalent script; the ratio of the slowdowns (goal: <= 1)."""
    if not os.access(STORM, os.X_OK):
        print(f"storm: {STORM} missing (make build/workloads/switchstorm), skipped")
        return
    n = env_int("BENCH_STORM_TRIPS", 100000)
    os.makedirs(out, exist_ok=True)
    configs = ["baseline", "stacktreed", "stacktreed-all"] + (["bpftrace"] if BPFTRACE else [])
    times = {c: [] for c in configs}
    whys = {}
    for i in range(rounds):
        for cfg in configs:
            if cfg in whys and not times[cfg]:
                continue	# it cannot run here: said once
            secs, why = storm_once(cfg, n, out, i)
            if secs:
                times[cfg].append(secs)
            elif why:
                whys[cfg] = why
    print()
    base = med(times["baseline"]) if times["baseline"] else None
    print(f"switch storm: {n} round trips through two pipes (4 sched_switch events each), "
          f"{rounds} rounds interleaved; the storm's own time, median")
    if not base:
        print("  the storm did not run")
        return
    print(f"  baseline {base:.2f} s ({4 * n / base:.0f} switches/s)")
    slow = {}
    for cfg in configs[1:]:
        if times[cfg]:
            slow[cfg] = med(times[cfg]) / base - 1
            print(f"  {cfg:<15} {med(times[cfg]):.2f} s: slowed by {slow[cfg] * 100:.1f}%")
        else:
            print(f"  {cfg:<15} not run: {whys.get(cfg, 'failed')}")
    for cfg in ("stacktreed", "stacktreed-all"):
        if cfg in slow and "bpftrace" in slow and slow["bpftrace"] > 0:
            print(f"  {cfg} / bpftrace slowdown ratio: {slow[cfg] / slow['bpftrace']:.2f} "
                  "(goal: <= 1)")
        elif cfg in slow:
            print(f"  {cfg} / bpftrace slowdown ratio: n/a (bpftrace "
                  f"{'within noise' if 'bpftrace' in slow else 'not run'})")
    print("  stacktreed: -e offcpu -- storm (default --offcpu-max-rate 20000 per CPU); "
          "stacktreed-all: --offcpu-max-rate 0 (every switch walked)")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        print(f"bench: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
