"""Integration tests of the output directory: links planted by another user
are never written through, a bad -o fails before sampling, a full disk is
named, the service survives it, a second SIGINT leaves no temporary file,
kill -9 takes the launched command along, errors are one line."""
import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time

from stcheck import (STACKTREE, STACKTREED, check, check_invariants, load,
                     wait_for)
from test_memory import MIB, free_port, metrics

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
PRECIOUS = "precious root-owned content\n"
# every temporary or final name an older stacktreed wrote in -o
PLANTED = [".xtree.txt.tmp", "xtree.txt", ".arcflow.txt.tmp", "arcflow.txt",
           ".profile.json.tmp", "profile.json", "summary.txt", "latest", ".latest.tmp",
           "stacks.folded", ".stacks.folded.tmp"]


def as_nobody(*cmd):
    subprocess.run(NOBODY + list(cmd), check=True, capture_output=True, timeout=30)


@contextlib.contextmanager
def base_dir():
    """A root-owned sticky world-writable directory (like /tmp) with a
    root-owned target file."""
    d = tempfile.mkdtemp(prefix="st-od-")
    os.chmod(d, 0o1777)
    target = os.path.join(d, "target")
    with open(target, "w") as f:
        f.write(PRECIOUS)
    try:
        yield d, target
    finally:
        shutil.rmtree(d, ignore_errors=True)


def check_target(target):
    st = os.lstat(target)
    check(stat.S_ISREG(st.st_mode) and st.st_uid == 0, "target replaced")
    with open(target) as f:
        check(f.read() == PRECIOUS, "target %s was overwritten" % target)


def plant(d, target):
    """As nobody: links to target under every name stacktreed used."""
    for name in PLANTED:
        as_nobody("ln", "-s", target, os.path.join(d, name))


def temporaries(d):
    return [n for n in os.listdir(d) if n.startswith(".")]


def run(args, timeout=60, env=None, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})), **kw)


def one_line(p, want):
    lines = p.stderr.splitlines()
    check(len(lines) == 1, "expected one line on stderr, got %r" % p.stderr)
    check(want in lines[0], "stderr %r lacks %r" % (p.stderr, want))


def test_outdir_planted_links_another_users_dir():
    with base_dir() as (base, target):
        for mode in (0o1777, 0o777):
            ww = os.path.join(base, "ww%o" % mode)
            as_nobody("mkdir", ww)
            as_nobody("chmod", "%o" % mode, ww)
            plant(ww, target)
            as_nobody("ln", "-s", base, os.path.join(ww, "link"))
            # nobody's directory: refused, nothing written
            p = run([STACKTREED, "-o", ww, "--", "true"])
            check(p.returncode != 0, "-o %s (nobody's, %o) accepted" % (ww, mode))
            one_line(p, "refusing output directory %s" % ww)
            check("nobody" in p.stderr, "owner not named: %r" % p.stderr)
            # a link as the last component: refused
            p = run([STACKTREED, "-o", os.path.join(ww, "link"), "--", "true"])
            check(p.returncode != 0, "-o a symlink accepted")
            one_line(p, "symbolic link")
            # a new subdirectory: created by root, reports are regular files
            sub = os.path.join(ww, "sub")
            p = run([STACKTREED, "-o", sub, "--", "true"])
            check(p.returncode == 0, "-o %s: %s" % (sub, p.stderr))
            for n in ("xtree.txt", "arcflow.txt", "profile.json"):
                check(stat.S_ISREG(os.lstat(os.path.join(sub, n)).st_mode), n)
            check(temporaries(sub) == [], "left %s" % temporaries(sub))
            check_target(target)


def test_outdir_planted_links_replaced_not_followed():
    """Directories stacktreed accepts although others wrote links in them: a
    root-owned sticky world-writable one (like /tmp) and the sudo user's own;
    every link is replaced by a regular file, the target is untouched."""
    with base_dir() as (base, target):
        sticky = os.path.join(base, "sticky")
        os.mkdir(sticky)
        os.chmod(sticky, 0o1777)
        own = os.path.join(base, "own")
        as_nobody("mkdir", own)
        for d in (sticky, own):
            plant(d, target)
            p = run([STACKTREED, "-o", d, "--format", "xtree,arcflow,json,folded", "--",
                     "true"], env={"SUDO_UID": "65534"})
            check(p.returncode == 0, "-o %s: %s" % (d, p.stderr))
            for n in ("xtree.txt", "arcflow.txt", "profile.json", "stacks.folded"):
                st = os.lstat(os.path.join(d, n))
                # ours, given to the sudo user who asked for it
                check(stat.S_ISREG(st.st_mode) and st.st_uid == 65534,
                      "%s/%s not ours (uid %d)" % (d, n, st.st_uid))
            check_invariants(load(d))
            check_target(target)
            # the offline tool, the same way
            p = run([STACKTREE, "report", "--input", d, "-o", d, "--format", "xtree"],
                    env={"SUDO_UID": "65534"})
            check(p.returncode == 0, "stacktree report -o %s: %s" % (d, p.stderr))
            check_target(target)
        # service mode: latest and the snapshot directories
        p = subprocess.Popen([STACKTREED, "-a", "-F", "99", "--interval", "600", "-o", own],
                             stderr=subprocess.PIPE, text=True, env=dict(os.environ,
                                                                         SUDO_UID="65534"))
        time.sleep(1.0)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        check(p.returncode == 0, "service exit %d: %s" % (p.returncode, err))
        latest = os.readlink(os.path.join(own, "latest"))
        check(latest[:8].isdigit(), "latest -> %s" % latest)
        check(os.path.isfile(os.path.join(own, latest, "summary.txt")), "no summary.txt")
        check_target(target)
        # a 0777 directory even when root owns it: anyone could swap the reports
        ww = os.path.join(base, "ww")
        os.mkdir(ww)
        os.chmod(ww, 0o777)
        p = run([STACKTREED, "-o", ww, "--", "true"])
        check(p.returncode != 0, "-o a 0777 directory accepted")
        one_line(p, "without the sticky bit")


@contextlib.contextmanager
def tmpfs(size, mode="ro"):
    d = tempfile.mkdtemp(prefix="st-fs-")
    opts = "size=%s,mode=0755" % size + (",ro" if mode == "ro" else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", d], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", d], check=False)
        os.rmdir(d)


def fill(d):
    """Fill the file system of d; returns the filler's path."""
    path = os.path.join(d, "fill")
    with open(path, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    return path


def check_refused_before_sampling(args, out, want, cmd=True):
    """stacktreed args -o out [-- touch MARKER] fails at once, one line."""
    d = tempfile.mkdtemp(prefix="st-ran-")
    marker = os.path.join(d, "ran")
    t0 = time.time()
    p = run(args[:1] + ["-o", out] + args[1:] + (["--", "touch", marker] if cmd else []),
            timeout=30)
    check(p.returncode != 0, "-o %s: exit 0" % out)
    one_line(p, want)
    check(time.time() - t0 < 10, "-o %s: took %.1f s to fail" % (out, time.time() - t0))
    check(not os.path.exists(marker), "-o %s: the command ran" % out)
    shutil.rmtree(d)


def test_outdir_bad_output_fails_before_sampling():
    d = tempfile.mkdtemp(prefix="st-bad-")
    try:
        f = os.path.join(d, "file")
        open(f, "w").close()
        dangling = os.path.join(d, "dangling")
        os.symlink(os.path.join(d, "nowhere"), dangling)
        for out, want in ((f, "is not a directory"), (dangling, "is a symbolic link"),
                          (os.path.join(f, "sub"), "Not a directory")):
            check_refused_before_sampling([STACKTREED], out, want)
            check_refused_before_sampling([STACKTREED, "-a", "--interval", "5"], out, want,
                                          cmd=False)
            p = run([STACKTREE, "report", "--folded", "/nonexistent", "-o", out])
            check(p.returncode != 0, "stacktree report -o %s: exit 0" % out)
            one_line(p, want)
        check(os.path.islink(dangling) and not os.path.exists(d + "/nowhere"), "followed")
        with tmpfs("64k", "ro") as ro:
            check_refused_before_sampling([STACKTREED], ro, "Read-only file system")
            check_refused_before_sampling([STACKTREED], os.path.join(ro, "sub"),
                                          "Read-only file system")
        with tmpfs("64k", "rw") as full:
            fill(full)
            check_refused_before_sampling([STACKTREED], full, "No space left on device")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def start_logged(args, log):
    """stacktreed -v args, stderr into log; returns once it samples (the
    output directory was checked before)."""
    with open(log, "w") as lf:
        p = subprocess.Popen([STACKTREED, "-v"] + args, stderr=lf)
    wait_for(lambda: "sampling at" in open(log).read() or p.poll() is not None, 30,
             "stacktreed did not start")
    check(p.poll() is None, "stacktreed exited: %s" % open(log).read())
    return p


def snapshot_count(d):
    return len([n for n in os.listdir(d) if n[:8].isdigit()])


def test_outdir_disk_full():
    logdir = tempfile.mkdtemp(prefix="st-log-")
    log = os.path.join(logdir, "err")
    with tmpfs("8m", "rw") as fs:
        out = os.path.join(fs, "out")
        busy = subprocess.Popen(["sleep", "60"])
        try:
            p = start_logged(["-o", out, "--pid", str(busy.pid), "-d", "2"], log)
            filler = fill(fs)
            p.wait(timeout=60)
        finally:
            busy.kill()
            busy.wait()
        err = open(log).read()
        check(p.returncode == 1, "exit %d on a full disk: %s" % (p.returncode, err))
        check("cannot write %s/" % out in err and "No space left on device" in err,
              "stderr: %r" % err)
        check(temporaries(out) == [], "left %s" % temporaries(out))
        os.unlink(filler)
        # service: a failed snapshot is reported, the next one is written
        p = start_logged(["-a", "-F", "49", "--interval", "1", "-o", out], log)
        try:
            filler = fill(fs)
            wait_for(lambda: "snapshot not written" in open(log).read(), 20,
                     "no failed snapshot reported")
            check("No space left on device" in open(log).read(), "ENOSPC not named")
            check(p.poll() is None, "the service exited on a full disk")
            # tried again every interval, said once (a service's log is not
            # flooded: one line a second here, 43,200 a day)
            time.sleep(3.5)
            text = open(log).read()
            check(text.count("snapshot not written") == 1 and
                  "cannot write in output directory" not in text,
                  "a full disk said at every interval: %r" % text[-2000:])
            before = snapshot_count(out)
            os.unlink(filler)
            wait_for(lambda: snapshot_count(out) > before, 20,
                     "no snapshot after space was freed")
            wait_for(lambda: "snapshots written again" in open(log).read(), 5,
                     "the recovery not said")
            m = re.search(r"snapshots written again in \S+, after (\d+) failed",
                          open(log).read())
            # >= 1: idle, 3-4 fail in those 3.5 s (one a second: no profile is
            # built while -o cannot be written); at a load of 15 the loop
            # was 10 s behind and one failed
            check(m and int(m.group(1)) >= 1, "failed snapshots not counted: %r"
                  % open(log).read()[-2000:])
            text = open(log).read()
            check(text.count("snapshot not written") == 1 and
                  "cannot write in output directory" not in text,
                  "a full disk said at every interval: %r" % text[-2000:])
        finally:
            p.send_signal(signal.SIGINT)
            p.wait(timeout=60)
        check(p.returncode == 0, "service exit %d: %s" % (p.returncode, open(log).read()))
        latest = os.path.join(out, os.readlink(os.path.join(out, "latest")))
        check_invariants(load(latest))
        check(temporaries(out) == [], "left %s" % temporaries(out))
    shutil.rmtree(logdir)


def test_outdir_second_sigint_leaves_no_temporaries():
    out = tempfile.mkdtemp(prefix="st-2int-")
    codes = set()
    try:
        # the second signal lands at different moments: symbolizing, writing, done
        for delay in (0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.4):
            p = subprocess.Popen([STACKTREED, "-a", "-F", "999", "-o", out, "--format",
                                  "xtree,arcflow,json,folded,pprof,svg"],
                                 stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            p.send_signal(signal.SIGINT)
            time.sleep(delay)
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=60)
            codes.add(p.returncode)
            check(p.returncode in (0, 130), "exit %d: %s" % (p.returncode, err))
            check(temporaries(out) == [], "delay %s: left %s" % (delay, temporaries(out)))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    check(130 in codes, "a second SIGINT never interrupted: exits %s" % codes)


def test_outdir_kill9_kills_the_command():
    out = tempfile.mkdtemp(prefix="st-k9-")
    p = subprocess.Popen([STACKTREED, "-o", out, "--", "sleep", "60"],
                         stderr=subprocess.DEVNULL)
    child = None
    try:
        def find_child():
            nonlocal child
            kids = open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()
            if kids and open("/proc/%s/comm" % kids[0]).read().strip() == "sleep":
                child = int(kids[0])
            return child is not None
        wait_for(find_child, 20, "sleep was not started")
        p.kill()
        p.wait()

        def gone():
            try:
                with open("/proc/%d/stat" % child) as f:
                    return f.read().split(") ")[1][0] in "ZX"
            except FileNotFoundError:
                return True
        wait_for(gone, 5, "sleep %d outlived stacktreed (kill -9)" % child)
    finally:
        if child:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        shutil.rmtree(out, ignore_errors=True)


def test_outdir_unprivileged_one_line():
    d = tempfile.mkdtemp(prefix="st-unpriv-")
    try:
        os.chown(d, 65534, 65534)
        p = run(NOBODY + [STACKTREED, "-o", os.path.join(d, "out"), "--", "true"], cwd=d)
        check(p.returncode != 0, "unprivileged run exit 0")
        # the capabilities are checked before anything is made or loaded
        # (test_privileges.py: the same with a file-capable copy)
        one_line(p, "missing CAP_BPF and CAP_PERFMON")
        check(not os.path.exists(os.path.join(d, "out")), "unprivileged run made -o")
        p = run(NOBODY + [STACKTREED, "-v", "-o", os.path.join(d, "out"), "--", "true"],
                cwd=d)
        one_line(p, "setcap cap_bpf,cap_perfmon+ep")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_outdir_freq_limits():
    limit = int(open("/proc/sys/kernel/perf_event_max_sample_rate").read())
    out = tempfile.mkdtemp(prefix="st-freq-")
    try:
        check_refused_before_sampling([STACKTREED, "-F", str(limit + 1)], out,
                                      "above the kernel's limit")
        p = run([STACKTREED, "-F", "20000", "-o", out, "--", "true"])
        check(p.returncode == 0, "-F 20000: %s" % p.stderr)
        warn = [l for l in p.stderr.splitlines() if "warning" in l]
        check(len(warn) == 1 and "node array full" in warn[0], "no -F warning: %r" % p.stderr)
        p = run([STACKTREED, "-F", "999", "-o", out, "--", "true"])
        check("warning" not in p.stderr, "-F 999 warns: %r" % p.stderr)
    finally:
        shutil.rmtree(out, ignore_errors=True)


READ_ALL = r"""
import os, sys
for p in sys.argv[1:]:
    try:
        if os.path.isdir(p):
            os.listdir(p)
        else:
            open(p, "rb").read(1)
        print(p)
    except OSError:
        pass
"""


def readable_by_nobody(d):
    """The files and directories under d (d itself excluded) that nobody can
    read."""
    paths = []
    for root, dirs, files in os.walk(d):
        paths += [os.path.join(root, n) for n in dirs + files]
    check(paths, "nothing written in %s" % d)
    p = subprocess.run(NOBODY + ["python3", "-c", READ_ALL] + paths, capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0, "reader failed: %s" % p.stderr)
    return p.stdout.split()


def test_reports_are_private_by_default():
    """Root's reports in a world-readable parent: nobody reads none of them,
    one-shot (-a -d), service snapshots (--interval) and -- CMD alike, in a
    new directory (made 0700) and in an existing 0755 one (files 0600,
    snapshot directories 0700); --output-mode 0644 shares them."""
    base = tempfile.mkdtemp(prefix="st-priv-")
    try:
        os.chmod(base, 0o755)
        old = os.path.join(base, "old")
        os.mkdir(old, 0o755)
        os.chmod(old, 0o755)
        runs = {
            "oneshot": [STACKTREED, "-a", "-d", "1", "--format", "xtree,json,folded,svg"],
            "cmd": [STACKTREED, "--format", "xtree,arcflow,json,pprof", "--", "true"],
        }
        for name, cmd in runs.items():
            for d in (os.path.join(base, name), old):
                p = run(cmd[:1] + ["-o", d] + cmd[1:])
                check(p.returncode == 0, "%s -o %s: %s" % (name, d, p.stderr))
                check(not readable_by_nobody(d), "%s: nobody reads %s"
                      % (name, readable_by_nobody(d)))
                st = os.stat(os.path.join(d, "xtree.txt"))
                check(stat.S_IMODE(st.st_mode) == 0o600, "%s: xtree.txt mode %o"
                      % (name, stat.S_IMODE(st.st_mode)))
        check(stat.S_IMODE(os.stat(os.path.join(base, "oneshot")).st_mode) == 0o700,
              "a new -o is not 0700")
        check(stat.S_IMODE(os.stat(old).st_mode) == 0o755, "an existing -o changed mode")
        svc = os.path.join(base, "svc")
        p = subprocess.Popen([STACKTREED, "-a", "-F", "99", "--interval", "1", "-o", svc],
                             stderr=subprocess.PIPE, text=True)
        # 2.5 s of sampling, from when it starts (-a loads its full timer
        # program first: seconds on a busy machine)
        err = ""
        for line in p.stderr:
            err += line
            if "sampling at" in line:
                break
        time.sleep(2.5)
        p.send_signal(signal.SIGINT)
        err += p.communicate(timeout=60)[1]
        check(p.returncode == 0, "service exit %d: %s" % (p.returncode, err))
        snaps = [n for n in os.listdir(svc) if n[:8].isdigit()]
        check(len(snaps) >= 2, "snapshots: %s" % snaps)
        os.chmod(svc, 0o755)  # even with the top opened up
        check(not readable_by_nobody(svc), "service: nobody reads %s" % readable_by_nobody(svc))
        # shared on request
        shared = os.path.join(base, "shared")
        p = run([STACKTREED, "--output-mode", "0644", "-o", shared, "--", "true"])
        check(p.returncode == 0, "--output-mode 0644: %s" % p.stderr)
        check(os.path.join(shared, "xtree.txt") in readable_by_nobody(shared),
              "--output-mode 0644 is not readable")
        p = run([STACKTREED, "--output-mode", "0466", "-o", shared, "--", "true"])
        check(p.returncode != 0, "--output-mode 0466 accepted")
    finally:
        shutil.rmtree(base)


def rss_anon_kib(pid):
    """The daemon's own memory (RssAnon: heap; the BPF maps it maps are
    RssFile), KiB."""
    for line in open("/proc/%d/status" % pid):
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    return 0


def stop_churn_and_service(churn, p):
    """Kill the churn (if any), then SIGINT the service and wait for it."""
    if churn:
        churn.kill()
        churn.wait()
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)


DROPPED = "unwritten snapshots over the memory budget"


def test_outdir_full_disk_pending_is_bounded():
    """Issue 23 item 7: a service on a full 200 KiB tmpfs with processes
    coming (a shell starting ~100 short processes a second, one CPU busy)
    for 40 s, not the issue's 120 (the pending trees reach their bound in
    a few seconds here): the unwritten intervals stay one pending tree
    bounded by the budget (--memory-mb 96: 24 MiB for the caches, pending
    trees dropped over 6 MiB), so the daemon's own memory (RssAnon) at the
    end (median of the last 5 s: a snapshot's build is transient) is less
    than 12 MiB over its high-water mark between 10 and 25 s, and stays
    under the budget. It ramps up to 12-16 s (later under load), then steps
    up and down as malloc keeps or returns what a snapshot's build freed:
    a median at 20-25 s could fall in such a trough (34 -> 52 MiB in a run
    with one more CPU-bound process, after a peak of 45 at 16-20 s), so
    the reference is the high-water mark. Growth over it: -8 MiB idle (1
    run), -4 to 9 MiB with one more CPU-bound process (5 runs). Unbounded
    pending trees grew ~27 MiB in 15 s (the issue's 112 -> 314 MiB in 110
    s); the first
    snapshot after space returns covers the whole time since the start,
    and its samples plus those it tells dropped are at least half of what
    the busy CPU gave (99 Hz)."""
    logdir = tempfile.mkdtemp(prefix="st-log-")
    log = os.path.join(logdir, "err")
    churn = None
    with tmpfs("200k", "rw") as fs:
        out = os.path.join(fs, "out")
        p = start_logged(["-a", "-F", "99", "--interval", "2", "--memory-mb", "96",
                          "-o", out], log)
        try:
            t0 = time.time()
            filler = fill(fs)
            churn = subprocess.Popen(["sh", "-c", "while :; do sh -c 'i=0; while [ $i -lt 2000 ]; "
                                      "do i=$((i+1)); done'; done"])
            rss = []
            while time.time() - t0 < 40:
                time.sleep(1)
                rss.append((time.time() - t0, rss_anon_kib(p.pid)))
                check(p.poll() is None, "the service exited: %s" % open(log).read()[-2000:])
            churn.kill()
            churn.wait()
            churn = None
            check("snapshot not written" in open(log).read(), "no snapshot failed")
            check(snapshot_count(out) == 0, "a snapshot fitted in 200 KiB")
            early = max(v for t, v in rss if 10 <= t <= 25)
            late = sorted(v for t, v in rss[-5:])[2]
            print("  RssAnon %d KiB at most at 10-25 s, %d KiB at the end (%s)"
                  % (early, late, ", ".join("%d" % (v >> 10) for _, v in rss)))
            check(late - early < 12 * 1024,
                  "RssAnon grew %d KiB over its 10-25 s high on a full disk (bound 12 MiB)"
                  % (late - early))
            check(max(v for _, v in rss) < 96 * 1024, "RssAnon over --memory-mb 96")
            os.unlink(filler)
            subprocess.run(["mount", "-o", "remount,size=64m", fs], check=True)
            span = time.time() - t0
            wait_for(lambda: snapshot_count(out) > 0, 20, "no snapshot after space returned")
        finally:
            stop_churn_and_service(churn, p)
        err = open(log).read()
        check(p.returncode == 0, "service exit %d: %s" % (p.returncode, err[-2000:]))
        first = sorted(n for n in os.listdir(out) if n[:8].isdigit())[0]
        prof = load(os.path.join(out, first))
        dropped = prof["lost_by"].get(DROPPED, 0)
        print("  first snapshot: %.1f s, %d samples, %d dropped over the budget"
              % (prof["duration_s"], prof["samples"], dropped))
        check(prof["duration_s"] >= span - 2, "the first snapshot covers %.1f s of %.1f"
              % (prof["duration_s"], span))
        check(prof["samples"] + dropped >= 0.5 * 99 * 40, "%d samples + %d dropped for 40 s "
              "of a busy CPU at 99 Hz" % (prof["samples"], dropped))
        check(("samples are dropped" in err) == (dropped > 0), "drops said %s, counted %d"
              % ("samples are dropped" in err, dropped))
        check(temporaries(out) == [], "left %s" % temporaries(out))
    shutil.rmtree(logdir)


def test_outdir_full_disk_pending_levels_off():
    """Issue 34 item 5: on a full disk the unwritten intervals level off at
    their share of the budget instead of filling and emptying. uid nobody's
    shell starts short busy shells (~100 a second, one CPU busy) under -a
    -u nobody (the machine's other load is not sampled) --interval 2
    --memory-mb 96 (a 24 MiB budget, the pending share 6 MiB) on a full
    tmpfs for 30 s (on to 90 s until 10 s of it dropped samples: on a busy
    machine the churn fills the share later), /metrics every 0.5 s. Once samples were dropped, the
    trees and the processes' maps together stay over half the share (the
    processes that ended go with their trees, oldest first, down to 7/8 of
    it) and under the share plus 2 MiB (the running processes' maps, a
    second's samples between two drains). Before, every tree was dropped
    at the share: the sum fell to the running processes' maps (0.1 MiB)
    and filled again, and the ended processes' maps, not counted in the
    share, came on top of it."""
    logdir = tempfile.mkdtemp(prefix="st-log-")
    log = os.path.join(logdir, "err")
    port = free_port()
    churn = None
    with tmpfs("200k", "rw") as fs:
        out = os.path.join(fs, "out")
        p = start_logged(["-a", "-u", "nobody", "-F", "99", "--interval", "2",
                          "--memory-mb", "96", "--listen", "127.0.0.1:%d" % port, "-o", out],
                         log)
        try:
            fill(fs)
            churn = subprocess.Popen(NOBODY + ["sh", "-c", "while :; do sh -c 'i=0; while "
                                               "[ $i -lt 2000 ]; do i=$((i+1)); done'; done"])
            share = metrics(port)["stacktreed_memory_budget_bytes"] / 4
            seen = []   # (s, trees + processes, dropped, RssAnon)
            t0 = time.time()
            # 30 s, or on to 90 s until 20 readings (10 s) after the first
            # drop: the churn fills the share at the pace its CPU share
            # allows (once in a loaded CI run, 2026-12-01, it dropped first
            # with under 10 readings of the 30 s left)
            while time.time() - t0 < 30 or (
                    time.time() - t0 < 90 and sum(1 for x in seen if x[2] > 0) < 20):
                m = metrics(port)
                seen.append((time.time() - t0,
                             m["stacktreed_tree_bytes"] + m["stacktreed_process_bytes"],
                             m["stacktreed_unwritten_samples_dropped_total"],
                             rss_anon_kib(p.pid)))
                check(p.poll() is None, "the service exited: %s" % open(log).read()[-2000:])
                time.sleep(0.5)
        finally:
            stop_churn_and_service(churn, p)
    after = [(t, held, rss) for t, held, dropped, rss in seen if dropped > 0]
    print("  share %.1f MiB; trees + processes after the first drop (%d readings): %.1f-%.1f "
          "MiB; RssAnon %d-%d MiB" % (share / MIB, len(after),
                                      min(h for _, h, _ in after or [(0, 0, 0)]) / MIB,
                                      max(h for _, h, _ in after or [(0, 0, 0)]) / MIB,
                                      min(r for _, _, r in after or [(0, 0, 0)]) >> 10,
                                      max(r for _, _, r in after or [(0, 0, 0)]) >> 10))
    check(len(after) >= 10, "samples dropped after %s s only: %s" % (
        after[0][0] if after else "-", open(log).read()[-1500:]))
    low = min(after, key=lambda x: x[1])
    check(low[1] >= share / 2, "the unwritten intervals fell to %.1f MiB at %.0f s (share "
          "%.1f MiB): dropped rather than levelled off" % (low[1] / MIB, low[0], share / MIB))
    high = max(after, key=lambda x: x[1])
    check(high[1] <= share + 2 * MIB, "the unwritten intervals held %.1f MiB at %.0f s, over "
          "their share %.1f MiB" % (high[1] / MIB, high[0], share / MIB))
    shutil.rmtree(logdir)


def test_outdir_kill9_leftovers_removed_by_next_start():
    """Issue 23 item 7: 10 SIGKILLs at random points of a service's
    snapshots (-F 999, every format, --interval 0.5) and of one-shot
    runs' writing leave temporaries named after their writer (pid, start
    time, boot); the next start removes every one of them (their writers
    are dead) and says so; a clean run then leaves none."""
    import random
    rnd = random.Random(23)
    out = tempfile.mkdtemp(prefix="st-k9t-")
    formats = ["--format", "xtree,arcflow,json,folded,pprof,svg"]
    left = set()
    try:
        # 10 kills; then more (up to 10) until the last one left a
        # temporary: each start sweeps the dead writers' ones before it, so
        # what is there at the end is the last kill's alone
        kills = 0
        for i in range(20):
            if i >= 10 and temporaries(out):
                break
            kills += 1
            if i % 2:
                args = [STACKTREED, "-a", "-F", "999", "--interval", "0.5", "-o", out] + formats
            else:
                args = [STACKTREED, "-a", "-F", "999", "-d", "1", "-o", out] + formats
            p = subprocess.Popen(args, stderr=subprocess.DEVNULL)
            mine = ".tmp-P%d." % p.pid
            end = time.time() + 30
            # poll fast: a snapshot is written in tens of milliseconds
            while time.time() < end and p.poll() is None and not any(
                    n.startswith(mine) and "-probe-" not in n for n in os.listdir(out)):
                time.sleep(0.001)
            time.sleep(rnd.uniform(0, 0.01))
            p.kill()
            p.wait(timeout=30)
            left |= set(temporaries(out))
        now = temporaries(out)
        print("  %d temporaries left by %d kills, %d still there: %s"
              % (len(left), kills, len(now), now[:4]))
        check(now, "no kill left a temporary (the test kills too late)")
        check(all(n.startswith(".tmp-P") for n in now), "a temporary without its writer: %s"
              % now)
        p = run([STACKTREED, "-o", out, "--", "true"])
        check(p.returncode == 0, "clean run exit %d: %s" % (p.returncode, p.stderr))
        check("removed %d temporar" % len(now) in p.stderr, "not said: %s" % p.stderr)
        check(temporaries(out) == [], "left after a clean run: %s" % temporaries(out))
    finally:
        shutil.rmtree(out, ignore_errors=True)
