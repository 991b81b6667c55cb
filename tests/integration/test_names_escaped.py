"""Names are data, not terminal commands (issue 34, item 3): a profiled
program chooses its function names, file names and symbols, so a name
holding ESC sequences, BEL, CR or newlines must reach no text report and no
terminal as those bytes (common/textesc.h: \\xNN, docs/reports.md "Escaped
names").

A python3.11 program renames its hot function with code.replace(
co_qualname=..., co_name=...) to an OSC title sequence, a clear-screen
sequence and a CR/LF before "forged line", from a file whose name holds a
colour sequence (compile(src, "/tmp/x\\x1b[31m.py", "exec")). A C program
gets the same kind of symbol by objcopy --redefine-sym, and runs from a
directory and a file named with ESC and CR (its module path, printed by
-v, and its comm). In xtree.txt,
arcflow.txt, flamegraph.svg, stacktreed's summary on stderr and
`stacktree report --print xtree|arcflow` (piped and on a terminal): no raw
ESC, BEL or CR, no line starting with "forged", and the escaped name is
there; profile.json keeps the name's exact bytes."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from stcheck import STACKTREE, STACKTREED, Skip, check, tree_form

PY311 = "/usr/bin/python3.11"
NAME = "\x1b]0;pwned\x07\x1b[2J\r\nforged line"
FILE = "/tmp/x\x1b[31m.py"
NATIVE = "evil\x1b]0;pwned\x07\x1b[2J\r\nforged native"
# the escapes the reports show (common/textesc.h)
NAME_ESC = rb"\x1b]0;pwned\x07\x1b[2J\x0d\x0aforged line"
FILE_ESC = rb"x\x1b[31m.py"
NATIVE_ESC = rb"evil\x1b]0;pwned\x07\x1b[2J\x0d\x0aforged native"
# a directory and a program name (so the comm) with ESC and CR; no newline:
# /proc/PID/maps writes one as \012, and the path would not open
EVIL_DIR = "d\x1b]0;dir\x07\r"
EVIL_DIR_ESC = rb"d\x1b]0;dir\x07\x0d/"
EVIL_EXE = "e\x1b[2J\rforged"
EVIL_EXE_ESC = rb"e\x1b[2J\x0dforged"
RAW = (b"\x1b", b"\x07", b"\r")
FORGED = re.compile(rb"^\s*forged", re.M)
SGR = re.compile(rb"\x1b\[[0-9;]*m")

PROGRAM = r'''
import sys, time
src = """
def hot(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
"""
ns = {}
exec(compile(src, %r, "exec"), ns)
hot = ns["hot"]
hot.__code__ = hot.__code__.replace(co_qualname=%r, co_name=%r)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    hot(20000)
''' % (FILE, NAME, NAME)

C_PROGRAM = r'''
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

__attribute__((noinline)) void evil_hot(void)
{
	for (unsigned long i = 0; i < 200000; i++)
		sink += i * i;
}

int main(int argc, char **argv)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		evil_hot();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < (argc > 1 ? atoi(argv[1]) : 2));
	return 0;
}
'''


def clean(what, data):
    """No raw ESC, BEL or CR and no forged line in data (bytes)."""
    for b in RAW:
        check(b not in data, "%s: a raw %r byte (%d of them)" % (what, b, data.count(b)))
    m = FORGED.search(data)
    check(not m, "%s: a forged line: %r" % (what, data[max(0, m.start() - 60):m.end() + 20]
                                            if m else b""))


def profile(cmd, secs, extra=()):
    """stacktreed on cmd: (out dir, stderr bytes)."""
    out = tempfile.mkdtemp(prefix="st-it-esc-")
    p = subprocess.run([STACKTREED, "-F", "499", "-o", out, "--format",
                        "xtree,arcflow,json,svg"] + list(extra) + ["--"] + cmd + [str(secs)],
                       capture_output=True, timeout=120)
    check(p.returncode == 0, "stacktreed exited %d: %r" % (p.returncode, p.stderr[-2000:]))
    clean("stacktreed's stderr", p.stderr)
    check(p.stderr.count(b"stacktreed: reports in") == 1, "no summary on stderr: %r"
          % p.stderr[-2000:])
    return out, p.stderr


def run_on_pty(cmd, cols=100):
    """cmd's stdout on a pseudo-terminal, as bytes (the pty's \\r\\n kept
    apart: every \\r must be the pty's, before a \\n)."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    p = subprocess.Popen(cmd, stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:		# EIO: the other side closed
            break
        if not data:
            break
        out += data
    os.close(master)
    err = p.stderr.read()
    check(p.wait(timeout=60) == 0, "%s exited %d: %r" % (cmd, p.returncode, err))
    return out


def check_reports(out, name_esc, must_have):
    """The files and --print of one profile: clean, and name_esc there."""
    for f in ("xtree.txt", "arcflow.txt", "flamegraph.svg"):
        data = open(os.path.join(out, f), "rb").read()
        clean(f, data)
        for want in must_have:
            check(want in data, "%s: no %r in it" % (f, want))
    try:
        ET.parse(os.path.join(out, "flamegraph.svg"))
    except ET.ParseError as e:
        raise AssertionError("flamegraph.svg is not well-formed XML: %s" % e)
    for report in ("xtree", "arcflow"):
        cmd = [STACKTREE, "report", "--input", out, "--print", report]
        p = subprocess.run(cmd + ["--wide"], capture_output=True, timeout=60)
        check(p.returncode == 0, "%s exited %d: %r" % (cmd, p.returncode, p.stderr))
        clean("--print " + report, p.stdout + p.stderr)
        check(name_esc in p.stdout, "--print %s: no %r" % (report, name_esc))
        # on a terminal: colour (SGR) is the only escape sequence, and the
        # only CR is the pty's before each newline
        tty = SGR.sub(b"", run_on_pty(cmd + ["--wide"])).replace(b"\r\n", b"\n")
        clean("--print %s on a terminal" % report, tty)
        check(name_esc in tty, "--print %s on a terminal: no %r" % (report, name_esc))
        # cut to 60 columns: still nothing raw, whatever the cut
        tty = SGR.sub(b"", run_on_pty(cmd, 60)).replace(b"\r\n", b"\n")
        clean("--print %s cut to 60 columns" % report, tty)


def json_names(out):
    prof = tree_form(json.load(open(os.path.join(out, "profile.json"), "rb")))
    names, files = set(), set()
    for t in prof["threads"]:
        stack = [t["root"]]
        while stack:
            n = stack.pop()
            names.add(n.get("function"))
            files.add(n.get("file"))
            stack.extend(n["children"])
    return names, files


def test_names_escaped_python():
    if not os.path.exists(PY311):
        raise Skip("no %s" % PY311)
    tmp = tempfile.mkdtemp(prefix="st-it-escpy-")
    out = None
    try:
        script = os.path.join(tmp, "renamed.py")
        with open(script, "w") as f:
            f.write(PROGRAM)
        out, _ = profile([PY311, script], 3)
        check_reports(out, NAME_ESC, (NAME_ESC,))
        xtree = open(os.path.join(out, "xtree.txt"), "rb").read()
        check(FILE_ESC in xtree, "xtree.txt: no file %r" % FILE_ESC)
        # profile.json: the exact names, JSON-escaped (data kept whole)
        names, files = json_names(out)
        check(NAME in names, "profile.json: no function %r among %d" % (NAME, len(names)))
        check(FILE in files, "profile.json: no file %r" % FILE)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if out:
            shutil.rmtree(out, ignore_errors=True)


def test_names_escaped_native():
    objcopy = shutil.which("objcopy")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not objcopy or not cc:
        raise Skip("no objcopy or cc (binutils, gcc)")
    tmp = tempfile.mkdtemp(prefix="st-it-escc-")
    out = None
    try:
        # the program's directory and file name too: its module path (in
        # -v's lines on stderr) and its comm (thread headers, roots)
        src = os.path.join(tmp, "evil.c")
        os.mkdir(os.path.join(tmp, EVIL_DIR))
        exe = os.path.join(tmp, EVIL_DIR, EVIL_EXE)
        with open(src, "w") as f:
            f.write(C_PROGRAM)
        subprocess.run([cc, "-O1", "-fno-omit-frame-pointer", "-o", exe, src], check=True,
                       timeout=120)
        subprocess.run([objcopy, b"--redefine-sym", b"evil_hot=" + NATIVE.encode(), exe],
                       check=True, timeout=60)
        nm = subprocess.run(["nm", exe], capture_output=True, timeout=60).stdout
        check(NATIVE.encode() in nm, "objcopy did not rename evil_hot: %r" % nm[:500])
        out, err = profile([exe], 2, ["-v"])
        check(EVIL_DIR_ESC in err, "-v: the module path's escape %r is not on stderr"
              % EVIL_DIR_ESC)
        check_reports(out, NATIVE_ESC, (NATIVE_ESC, EVIL_EXE_ESC))
        names, _ = json_names(out)
        check(NATIVE in names, "profile.json: no function %r" % NATIVE)
        prof = json.load(open(os.path.join(out, "profile.json"), "rb"))
        check(any(t["comm"] == EVIL_EXE for t in prof["threads"]),
              "profile.json: no comm %r" % EVIL_EXE)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if out:
            shutil.rmtree(out, ignore_errors=True)


def test_names_escaped_offline_inputs():
    """`stacktree report` on another's files (no root): folded stacks whose
    frames hold the name, and a profile.json whose error message would
    quote a string with ESC: the reports and the error line are clean."""
    tmp = tempfile.mkdtemp(prefix="st-it-escoff-")
    try:
        folded = os.path.join(tmp, "in.folded")
        with open(folded, "wb") as f:
            # ';' separates frames in this format: the name without it
            f.write(b"main;" + NATIVE.encode().replace(b";", b":") + b"\xc2\x9b\xff 10\n")
        for report in ("xtree", "arcflow"):
            p = subprocess.run([STACKTREE, "report", "--folded", folded, "--print", report],
                               capture_output=True, timeout=60)
            check(p.returncode == 0, "--folded --print %s exited %d: %r"
                  % (report, p.returncode, p.stderr))
            clean("--folded --print " + report, p.stdout + p.stderr)
            check(b"\\xc2\\x9b\\xff" in p.stdout, "--print %s: C1 and bad byte not escaped: %r"
                  % (report, p.stdout[-300:]))
        bad = os.path.join(tmp, "profile.json")
        with open(bad, "w") as f:
            f.write('{"format":"stacktree-profile","version":1,'
                    '"start":"\\u001b]0;pwned\\u0007\\r\\nforged"}')
        p = subprocess.run([STACKTREE, "report", "--input", bad, "--print", "xtree"],
                           capture_output=True, timeout=60)
        check(p.returncode != 0, "a bad start time was accepted")
        clean("the error line", p.stderr)
        check(rb"\x1b]0;pwned\x07\x0d\x0aforged" in p.stderr,
              "the error line does not quote the escaped string: %r" % p.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
