"""Integration tests of the install and the shipped unit (issue 21 item 5):
`make install` into a DESTDIR puts exactly the expected files where PREFIX,
BINDIR and SBINDIR say, the unit names the installed daemon, bash
completion completes after sourcing, `make uninstall` leaves no file; the
unit's memory limit holds the daemon's budget, and the daemon run with the
unit's own arguments stays under it and writes pprof."""
import os
import re
import shutil
import socket
import stat
import subprocess
import tempfile

from stcheck import ROOT, SANITIZED, STACKTREED, check

UNIT = os.path.join(ROOT, "dist", "stacktreed.service")


def make(*args):
    cmd = ["make", "-s", "-C", ROOT] + (["SANITIZE=1"] if SANITIZED else []) + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    check(p.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr))


def files_under(d):
    """Every file and link under d, relative (directories left out)."""
    out = set()
    for base, dirs, files in os.walk(d):
        for n in files + [x for x in dirs if os.path.islink(os.path.join(base, x))]:
            out.add(os.path.relpath(os.path.join(base, n), d))
    return out


def bash_complete(dest, words):
    """COMPREPLY of stacktreed's completion for the words (the last being
    completed), with the installed programs first on PATH."""
    comp = os.path.join(dest, "usr/share/bash-completion/completions/stacktreed")
    arr = " ".join("'%s'" % w for w in words)
    script = ("source '%s' && complete -p stacktreed stacktree && COMP_WORDS=(%s) && "
              "COMP_CWORD=%d && _%s %s && printf '%%s\\n' \"${COMPREPLY[@]}\""
              % (comp, arr, len(words) - 1, words[0], words[0]))
    env = dict(os.environ, PATH="%s/usr/sbin:%s/usr/bin:%s" % (dest, dest, os.environ["PATH"]))
    p = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True,
                       env=env, timeout=30)
    check(p.returncode == 0, "completion of %s: %s" % (words, p.stderr))
    lines = p.stdout.splitlines()
    check(lines[:2] == ["complete -F _stacktreed stacktreed", "complete -F _stacktree stacktree"],
          "complete -p after sourcing: %s" % lines[:2])
    return lines[2:]


def test_install_destdir_and_uninstall():
    dest = tempfile.mkdtemp(prefix="st-inst-")
    try:
        make("install", "DESTDIR=" + dest, "PREFIX=/usr")
        want = {"usr/sbin/stacktreed", "usr/bin/stacktree", "usr/share/man/man8/stacktreed.8",
                "usr/share/man/man1/stacktree.1", "usr/lib/systemd/system/stacktreed.service",
                "usr/share/bash-completion/completions/stacktreed",
                "usr/share/bash-completion/completions/stacktree"}
        got = files_under(dest)
        check(got == want, "installed %s, want %s" % (sorted(got), sorted(want)))
        for f, mode in (("usr/sbin/stacktreed", 0o755), ("usr/bin/stacktree", 0o755),
                        ("usr/lib/systemd/system/stacktreed.service", 0o644),
                        ("usr/share/man/man8/stacktreed.8", 0o644)):
            m = stat.S_IMODE(os.stat(os.path.join(dest, f)).st_mode)
            check(m == mode, "%s: mode %o, want %o" % (f, m, mode))
        unit = open(os.path.join(dest, "usr/lib/systemd/system/stacktreed.service")).read()
        check(re.search(r"^ExecStart=/usr/sbin/stacktreed ", unit, re.M) and "@" not in unit,
              "installed unit's ExecStart: %s" % re.findall(r"^ExecStart=.*", unit, re.M))
        p = subprocess.run([os.path.join(dest, "usr/sbin/stacktreed"), "--version"],
                           capture_output=True, text=True, timeout=30)
        check(p.returncode == 0 and p.stdout.startswith("stacktreed "), "installed --version")
        # systemd reads the unit without a complaint about its syntax
        if shutil.which("systemd-analyze"):
            p = subprocess.run(["systemd-analyze", "verify", os.path.join(
                dest, "usr/lib/systemd/system/stacktreed.service")], capture_output=True,
                text=True, timeout=60)
            bad = [l for l in p.stderr.splitlines()
                   if re.search(r"Unknown|Failed to parse|Invalid|[Ii]gnoring", l)]
            check(not bad, "systemd-analyze verify: %s" % bad)

        # completion: option names from --help, values for -e, --unwind
        got = bash_complete(dest, ["stacktreed", "--unw"])
        check({"--unwind", "--unwind-cache", "--unwind-memory"} <= set(got),
              "stacktreed --unw<TAB>: %s" % got)
        got = bash_complete(dest, ["stacktreed", "--call-g"])
        check(got == ["--call-graph"], "stacktreed --call-g<TAB>: %s" % got)
        got = bash_complete(dest, ["stacktreed", "-e", "cpu-clock,pa"])
        check(got == ["cpu-clock,page-faults"], "stacktreed -e cpu-clock,pa<TAB>: %s" % got)
        got = bash_complete(dest, ["stacktreed", "--unwind", ""])
        check(sorted(got) == ["auto", "dwarf", "fp"], "--unwind <TAB>: %s" % got)
        got = bash_complete(dest, ["stacktree", "report", "--fo"])
        check(set(got) == {"--format", "--folded", "--folded-offsets"},
              "stacktree report --fo<TAB>: %s" % got)

        make("uninstall", "DESTDIR=" + dest, "PREFIX=/usr")
        left = files_under(dest)
        check(not left, "make uninstall left %s" % sorted(left))

        # BINDIR and SBINDIR on their own
        make("install", "DESTDIR=" + dest, "PREFIX=/opt/st", "BINDIR=/opt/st/tools",
             "SBINDIR=/opt/st/daemon")
        got = files_under(dest)
        check({"opt/st/tools/stacktree", "opt/st/daemon/stacktreed"} <= got and
              not any(f.startswith("opt/st/bin") or f.startswith("opt/st/sbin") for f in got),
              "BINDIR/SBINDIR: %s" % sorted(got))
        unit = open(os.path.join(dest, "opt/st/lib/systemd/system/stacktreed.service")).read()
        check("ExecStart=/opt/st/daemon/stacktreed " in unit, "SBINDIR not in the unit")
        make("uninstall", "DESTDIR=" + dest, "PREFIX=/opt/st", "BINDIR=/opt/st/tools",
             "SBINDIR=/opt/st/daemon")
        left = files_under(dest)
        check(not left, "make uninstall (BINDIR, SBINDIR) left %s" % sorted(left))
    finally:
        shutil.rmtree(dest, ignore_errors=True)


def unit_settings():
    settings = {}
    for line in open(UNIT):
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            settings.setdefault(k, v)
    return settings


def mib(size):
    n, unit = re.fullmatch(r"(\d+)([KMG]?)", size).groups()
    return int(n) * {"K": 1 / 1024, "M": 1, "G": 1024, "": 1 / (1 << 20)}[unit]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_install_unit_memory_and_formats():
    """The unit: state and cache directories, pprof, --listen on loopback; its
    MemoryMax holds --memory-mb (given, or the daemon's default) with 64 MiB
    to spare; the daemon run with its arguments for a few seconds (system-
    wide, one session instead of snapshots) says no part exceeds the budget,
    stays under MemoryMax (RSS and BPF maps) and writes profile.pb.gz."""
    u = unit_settings()
    check(u.get("StateDirectory") == "stacktreed" and u.get("CacheDirectory") == "stacktreed",
          "unit: StateDirectory=%s CacheDirectory=%s" % (u.get("StateDirectory"),
                                                         u.get("CacheDirectory")))
    check(u.get("CacheDirectoryMode") == "0700", "the unwind cache must be private: mode %s"
          % u.get("CacheDirectoryMode"))
    args = u["ExecStart"].split()[1:]
    check("-o" in args and args[args.index("-o") + 1] == "/var/lib/stacktreed",
          "snapshots not in the StateDirectory: %s" % args)
    check("pprof" in args[args.index("--format") + 1].split(","), "no pprof in --format")
    listen = args[args.index("--listen") + 1]
    check(re.fullmatch(r"(127\.0\.0\.1:)?\d+", listen), "--listen %s is not loopback" % listen)
    limit = mib(u["MemoryMax"])
    if "--memory-mb" in args:
        budget = int(args[args.index("--memory-mb") + 1])
    else:
        h = subprocess.run([STACKTREED, "--help"], capture_output=True, text=True).stdout
        budget = int(re.search(r"--memory-mb=MB\s+The daemon's memory budget, in MiB \(default "
                               r"(\d+)", h).group(1))
    check(budget + 64 <= limit, "--memory-mb %d + 64 MiB slack > MemoryMax %d MiB"
          % (budget, limit))

    out = tempfile.mkdtemp(prefix="st-unit-")
    try:
        # one session (not the service's snapshots): the summary has the memory line
        run = list(args)
        for opt in ("--interval", "--keep"):
            i = run.index(opt)
            del run[i:i + 2]
        run[run.index("-o") + 1] = out
        run[run.index("--listen") + 1] = "127.0.0.1:%d" % free_port()
        p = subprocess.run([STACKTREED] + run + ["-d", "5"], capture_output=True, text=True,
                           timeout=180)
        check(p.returncode == 0, "the unit's command exited %d: %s" % (p.returncode, p.stderr))
        check("exceed --memory-mb" not in p.stderr, "defaults over the budget: %s" % p.stderr)
        m = re.search(r"max RSS (\d+) MiB.*BPF maps ~(\d+) MiB; budget (\d+) MiB", p.stderr)
        check(m, "no memory line in the summary: %s" % p.stderr[-2000:])
        rss, maps, said = (int(x) for x in m.groups())
        check(said == budget, "summary says budget %d, the unit %d" % (said, budget))
        if not SANITIZED:	# ASan's shadow memory is not the daemon's
            check(rss + maps <= limit, "RSS %d + BPF maps %d MiB > MemoryMax %d MiB"
                  % (rss, maps, limit))
        check(os.path.getsize(os.path.join(out, "profile.pb.gz")) > 0, "no profile.pb.gz")
    finally:
        shutil.rmtree(out, ignore_errors=True)
