"""Integration tests of -o FILE and -o - (issue 36 item 1): a name with a
known extension is that one file, written as the directory's reports are
(0600 unless --output-mode, atomically, a link at its name replaced, never
followed), and no directory; "-" is one format on standard output, the
command's own output going to stderr; the service refuses a file. Each file
is read back by the tool made for it: go tool pprof, xml.etree, the
profile.json schema, `stacktree report --folded`."""
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from stcheck import STACKTREE, STACKTREED, Failure, check, load, validate, workload

SVG_NS = "{http://www.w3.org/2000/svg}"


def profile(out, args=(), cwd=None):
    """stacktreed -o out over the phases workload (its work_a phase, ~1 s of
    CPU at scale 1): (stdout bytes, stderr)."""
    env = dict(os.environ, WL_SCALE="0.5")
    p = subprocess.run([STACKTREED, "-F", "499", "-o", out] + list(args) +
                       ["--", workload("phases")], env=env, capture_output=True, timeout=120,
                       cwd=cwd)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 0, "stacktreed -o %s %s exited %d: %s" % (out, list(args),
                                                                    p.returncode, err))
    return p.stdout, err


def only_file(tmp, name, mode=0o600):
    """tmp holds name alone, a regular file of mode, not empty: no
    directory, no temporary file."""
    check(os.listdir(tmp) == [name], "%s: the directory holds %s" % (name, os.listdir(tmp)))
    st = os.lstat(os.path.join(tmp, name))
    check(stat.S_ISREG(st.st_mode), "%s is not a regular file" % name)
    check(stat.S_IMODE(st.st_mode) == mode, "%s: mode %o, not %o"
          % (name, stat.S_IMODE(st.st_mode), mode))
    check(st.st_size > 0, "%s is empty" % name)
    return os.path.join(tmp, name)


def pprof_top(path):
    """go tool pprof -top: the total samples and the functions listed."""
    go = shutil.which("go")
    if not go:
        raise Failure("go is missing: install golang-go (scripts/deps.sh does)")
    p = subprocess.run([go, "tool", "pprof", "-top", "-sample_index=samples", path],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, HOME=tempfile.mkdtemp(prefix="st-home-")))
    check(p.returncode == 0, "go tool pprof -top %s: %s" % (path, p.stderr))
    m = re.search(r"of (\d+) total", p.stdout)
    check(m, "no total in pprof -top:\n" + p.stdout)
    return int(m.group(1)), p.stdout


def folded_back(path):
    """stacktree report --folded: the samples it reads back, and the file's sum."""
    rt = tempfile.mkdtemp(prefix="st-it-of-rt-")
    try:
        p = subprocess.run([STACKTREE, "report", "--folded", path, "-o", rt],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, "stacktree report --folded %s: %s" % (path, p.stderr))
        total = sum(int(line.rsplit(" ", 1)[1]) for line in open(path) if line.strip())
        return load(rt)["samples"], total
    finally:
        shutil.rmtree(rt, ignore_errors=True)


def test_outfile_each_extension():
    """Each extension writes that one file (0600) and no directory, and
    it reads back as its format; --output-mode 0644 is its mode."""
    cases = (("flame.svg", ()), ("out.pb.gz", ()), ("out.pprof", ("--output-mode", "0644")),
             ("prof.json", ()), ("stacks.folded", ()), ("stacks.txt", ()),
             ("t.xtree", ()), ("xtree.txt", ()), ("a.arcflow", ()))
    for name, args in cases:
        tmp = tempfile.mkdtemp(prefix="st-it-of-")
        try:
            _, err = profile(os.path.join(tmp, name), args)
            path = only_file(tmp, name, 0o644 if args else 0o600)
            check("reports in %s\n" % path in err, "%s: the summary does not name the file: %s"
                  % (name, err[-400:]))
            text = open(path, "rb").read()
            if name.endswith(".svg"):
                root = ET.parse(path).getroot()
                check(root.tag == SVG_NS + "svg" and int(root.get("data-total")) > 100,
                      "flame.svg: root %s, total %s" % (root.tag, root.get("data-total")))
                check(any(g.get("data-n") == "work_a" for g in root.iter(SVG_NS + "g")),
                      "flame.svg: no work_a box")
            elif name.startswith("out."):
                check(text[:2] == b"\x1f\x8b", "%s is not gzipped" % name)
                total, top = pprof_top(path)
                check(total > 100 and "work_a" in top, "%s: pprof total %d:\n%s"
                      % (name, total, top))
            elif name.endswith(".json"):
                prof = json.loads(text)
                validate(prof, name)
                check(prof["samples"] > 100, "prof.json: %d samples" % prof["samples"])
            elif name.startswith("stacks."):
                back, total = folded_back(path)
                check(back == total > 100, "%s: %d samples read back, %d in the file"
                      % (name, back, total))
                check(b";work_a " in text, "%s: no stack ending in work_a" % name)
            else:
                kind = "xtree" if "xtree" in name else "arcflow"
                check(text.startswith(b"# stacktree %s " % kind.encode()) and
                      b"work_a" in text and b"phase_a" in text,
                      "%s is not an %s report:\n%s" % (name, kind, text[:400]))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def test_outfile_replaces_links_in_cwd():
    """-o NAME in the working directory: a symlink planted at NAME is
    replaced by the file, its target untouched; a name without a known
    extension is still the directory of reports."""
    tmp = tempfile.mkdtemp(prefix="st-it-of-")
    try:
        victim = os.path.join(tmp, "victim")
        with open(victim, "w") as f:
            f.write("keep me\n")
        os.symlink(victim, os.path.join(tmp, "flame.svg"))
        profile("flame.svg", cwd=tmp)
        check(open(victim).read() == "keep me\n", "the link's target was written through")
        check(sorted(os.listdir(tmp)) == ["flame.svg", "victim"], "left %s" % os.listdir(tmp))
        check(stat.S_ISREG(os.lstat(os.path.join(tmp, "flame.svg")).st_mode),
              "flame.svg is still a link")
        ET.parse(os.path.join(tmp, "flame.svg"))
        profile("plain", cwd=tmp)
        check(os.path.isdir(os.path.join(tmp, "plain")) and
              sorted(os.listdir(os.path.join(tmp, "plain"))) ==
              ["arcflow.txt", "profile.json", "xtree.txt"],
              "-o plain: %s" % os.listdir(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_outfile_stdout():
    """-o -: the --format (default xtree) on standard output, nothing on
    disk; the command's own standard output goes to stderr."""
    tmp = tempfile.mkdtemp(prefix="st-it-of-")
    try:
        env = dict(os.environ, WL_SCALE="0.5")
        # the header names the command line: the output is not in it
        cmd = ["sh", "-c", "echo from-the-command-$((40+2)); exec %s" % workload("phases")]
        for fmt in (None, "json"):
            p = subprocess.run([STACKTREED, "-F", "499", "-o", "-"] +
                               (["--format", fmt] if fmt else []) + ["--"] + cmd,
                               env=env, capture_output=True, timeout=120, cwd=tmp)
            err = p.stderr.decode(errors="replace")
            check(p.returncode == 0, "-o - exited %d: %s" % (p.returncode, err))
            check(b"from-the-command-42" not in p.stdout and "from-the-command-42" in err,
                  "the command's output went to stdout")
            check("reports in standard output" in err, "summary: %s" % err[-300:])
            if fmt:
                prof = json.loads(p.stdout)
                validate(prof, "-o - --format json")
                check(prof["samples"] > 100, "%d samples" % prof["samples"])
            else:
                check(p.stdout.startswith(b"#") and b"work_a" in p.stdout,
                      "-o - is not xtree:\n%s" % p.stdout[:400])
        check(os.listdir(tmp) == [], "-o - wrote %s" % os.listdir(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_outfile_refused():
    """One clear line, exit 64, nothing created: a file for the service,
    several formats for one file or standard output, two events."""
    tmp = tempfile.mkdtemp(prefix="st-it-of-")
    try:
        for args, says in ((["-a", "--interval", "5", "-o", "x.svg"], "--interval"),
                           (["-a", "-o", "x.svg", "--format", "pprof"], "svg file"),
                           (["-a", "-o", "-", "--format", "xtree,json"], "one format"),
                           (["-a", "-e", "cpu,faults", "-o", "x.json"], "one profile")):
            p = subprocess.run([STACKTREED] + args, capture_output=True, text=True, timeout=30,
                               cwd=tmp)
            first = p.stderr.splitlines()[0] if p.stderr else ""
            check(p.returncode == 64 and says in first, "%s: exit %d, %s" % (args, p.returncode,
                                                                               p.stderr))
        check(os.listdir(tmp) == [], "refused runs left %s" % os.listdir(tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_outfile_stacktree_report():
    """stacktree report -o FILE and -o -: a saved profile converted to one
    file or to standard output, the same bytes as the directory's file."""
    tmp = tempfile.mkdtemp(prefix="st-it-of-")
    try:
        profile(os.path.join(tmp, "prof.json"))
        src = os.path.join(tmp, "prof.json")
        conv = os.path.join(tmp, "conv")

        def report(*args):
            p = subprocess.run([STACKTREE, "report", "--input", src] + list(args),
                               capture_output=True, timeout=120, cwd=tmp)
            check(p.returncode == 0, "stacktree report %s: %s" % (args, p.stderr))
            return p.stdout
        report("--format", "svg,folded,xtree", "-o", conv)
        out = os.path.join(tmp, "one")
        os.mkdir(out)
        report("-o", os.path.join(out, "flame.svg"))
        report("-o", os.path.join(out, "s.folded"))
        check(sorted(os.listdir(out)) == ["flame.svg", "s.folded"], "wrote %s" % os.listdir(out))
        for mine, theirs in (("flame.svg", "flamegraph.svg"), ("s.folded", "stacks.folded")):
            only = open(os.path.join(out, mine), "rb").read()
            check(only == open(os.path.join(conv, theirs), "rb").read(),
                  "%s differs from the directory's %s" % (mine, theirs))
        check(report("-o", "-") == open(os.path.join(conv, "xtree.txt"), "rb").read(),
              "-o - differs from xtree.txt")
        p = subprocess.run([STACKTREE, "report", "--input", src, "-o", "-", "--print", "xtree"],
                           capture_output=True, text=True, timeout=30, cwd=tmp)
        check(p.returncode == 64 and "--print" in p.stderr, "-o - --print: %d %s"
              % (p.returncode, p.stderr))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
