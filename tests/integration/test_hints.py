"""Issue 36 item 5: what a perf or py-spy user types. -h is --help; an
unknown option names the nearest one, perf's and py-spy's own options and
commands name what does their work here; `stacktree report --stdio` prints
the xtree and `--sort sym` the functions with their self and total shares
(checked against folded stacks of known counts); `-p 1234` in stacktree is
said to be --print, not a process. On a terminal (script(1)) stacktreed's
summary is brief: no line of the daemon's CPU, caches or BPF run time, no
python line for a C program, at most 8 lines; -v prints them all."""
import os
import re
import shutil
import subprocess
import tempfile

from stcheck import STACKTREE, STACKTREED, Failure, check, workload


ROW = r"^\s*[\d.]+%\s+[\d.]+%  (\S+)"


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def refused(args, *words):
    p = run(args)
    check(p.returncode == 64, "%s: exit %d (want 64): %s" % (args, p.returncode, p.stderr))
    for w in words:
        check(w in p.stderr, "%s: no %r in %r" % (args, w, p.stderr))
    check(len(p.stderr.strip().splitlines()) == 1, "%s: not one line: %r" % (args, p.stderr))


def test_hints_help_and_nearest():
    for prog in ([STACKTREED], [STACKTREE], [STACKTREE, "report"], [STACKTREE, "diff"],
                 [STACKTREED, "top"]):
        p = run(prog + ["-h"])
        check(p.returncode == 0 and "Usage:" in p.stdout, "%s -h: %d %s" % (prog, p.returncode,
                                                                           p.stderr))
    refused([STACKTREED, "--formt", "svg", "-a"], "did you mean --format?")
    refused([STACKTREED, "--stdio", "-a"], "stacktree report --input DIR --stdio")
    refused([STACKTREED, "--sort", "sym", "-a"], "--sort sym")
    refused([STACKTREED, "--rate", "100", "-a"], "-F HZ")
    refused([STACKTREED, "--idle", "-a"], "stacktreed dump")
    refused([STACKTREE, "script"], "--format folded -o -")
    refused([STACKTREE, "reprt"], "did you mean report?")
    refused([STACKTREE, "report", "--input", "x", "-p", "1234"], "stacktreed --pid 1234")
    refused([STACKTREE, "report", "--input", "x", "--percent-limit", "2"], "--min-pct")
    refused([STACKTREE, "diff", "--treshold", "1", "a", "b"], "did you mean --threshold?")
    # an option's value that looks like an option is its value, not an unknown option
    p = run([STACKTREED, "--comm", "--x", "--iterations", "1"])
    check("unknown option" not in p.stderr, "--comm's value taken for an option: " + p.stderr)


def test_hints_report_stdio_and_sort():
    tmp = tempfile.mkdtemp(prefix="st-it-hints-")
    try:
        folded = os.path.join(tmp, "x.folded")
        with open(folded, "w") as f:
            f.write("main;parse;lex 30\nmain;parse 10\nmain;eval;eval;eval 50\nmain 10\n")
        p = run([STACKTREE, "report", "--folded", folded, "--stdio"])
        check(p.returncode == 0 and "=== " in p.stdout and "eval" in p.stdout,
              "--stdio: %s %s" % (p.stdout[:300], p.stderr))
        p = run([STACKTREE, "report", "--folded", folded, "--sort", "sym"])
        check(p.returncode == 0, "--sort sym: " + p.stderr)
        rows = {f: (float(s), float(t)) for s, t, f in
                re.findall(r"^\s*([\d.]+)%\s+([\d.]+)%  (\S+)", p.stdout, re.M)}
        want = {"eval": (50, 50), "lex": (30, 30), "parse": (10, 40), "main": (10, 100)}
        check(rows == {k: (float(a), float(b)) for k, (a, b) in want.items()},
              "--sort sym rows %s, want %s:\n%s" % (rows, want, p.stdout))
        order = re.findall(ROW, p.stdout, re.M)
        check(order == ["eval", "lex", "main", "parse"], "by self: %s" % order)
        p = run([STACKTREE, "report", "--folded", folded, "--sort", "sym", "--children"])
        order = re.findall(ROW, p.stdout, re.M)
        check(order == ["main", "eval", "parse", "lex"], "--children, by total: %s" % order)
        refused([STACKTREE, "report", "--folded", folded, "--sort", "pid"], "--print xtree")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def summary_in_terminal(args):
    """stacktreed's stderr lines under script(1), a terminal."""
    script = shutil.which("script")
    if not script:
        raise Failure("script(1) is missing (util-linux's bsdutils)")
    tmp = tempfile.mkdtemp(prefix="st-it-brief-")
    try:
        cmd = " ".join([STACKTREED, "-o", os.path.join(tmp, "out")] + args +
                       ["--", workload("phases")])
        p = subprocess.run([script, "-qec", cmd, "/dev/null"], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, WL_SCALE="0.3"))
        check(p.returncode == 0, "%s under script: %d %s" % (cmd, p.returncode, p.stdout))
        return [l.strip() for l in p.stdout.splitlines() if l.startswith("stacktreed: ")]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_hints_brief_summary_on_a_terminal():
    brief = summary_in_terminal([])
    print("  brief: %d lines:\n    %s" % (len(brief), "\n    ".join(brief)))
    check(any("cpu-clock samples in" in l for l in brief) and
          any(l.startswith("stacktreed: lost ") for l in brief) and
          any("stacks cut short" in l for l in brief) and
          any("reports in" in l and "-v" in l for l in brief), "brief summary: %s" % brief)
    check(len(brief) <= 8, "%d lines in the brief summary: %s" % (len(brief), brief))
    for word in ("daemon CPU", "BPF run time", "unwind table cache", "symbol caches",
                 "python:", "BPF program runs"):
        check(not any(word in l for l in brief), "%r in the brief summary: %s" % (word, brief))
    full = summary_in_terminal(["-v"])
    for word in ("daemon CPU", "BPF run time", "unwind table cache", "symbol caches"):
        check(any(word in l for l in full), "-v: no %r in %s" % (word, full))
    check(len(full) > len(brief), "-v: %d lines, brief %d" % (len(full), len(brief)))
