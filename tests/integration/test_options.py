"""--help, the man pages, docs/usage.md and the code agree (issue 36 item
6): every long option `stacktreed --help` lists is an option the man page
defines (a .TP entry) and the other way round, the same for stacktree (its
commands' --help) and stacktree(1); usage.md's table has a row for each;
where --help and the man page both state a default they state the same
one; the developer's --bench-bare is hidden from --help but still works.
argp's own --help, --usage and --version are left out of the comparison."""
import os
import re
import subprocess

from stcheck import ROOT, STACKTREE, STACKTREED, check

ARGP_OWN = {"help", "usage", "version"}
# options the man page keeps and --help hides (OPTION_HIDDEN)
HIDDEN = {"stacktreed": {"bench-bare"}, "stacktree": set()}


def help_text(args):
    p = subprocess.run(args + ["--help"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "%s --help exited %d: %s" % (args, p.returncode, p.stderr))
    return p.stdout


def help_options(text):
    """{option: its help text} of argp's listing (continuation lines
    joined)."""
    opts, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^\s+(?:-\S, )?--([a-z][a-z0-9-]*)\S*\s*(.*)$", line)
        if m:
            cur = m.group(1)
            opts[cur] = m.group(2)
        elif cur and re.match(r"^\s{20,}\S", line):
            opts[cur] += " " + line.strip()
        else:
            cur = None
    return opts


def man_options(path):
    """{option: its paragraph} of the options the man page defines: the
    line after each .TP, up to the next .TP or .SH (roff escapes undone)."""
    lines = open(path).read().splitlines()
    opts = {}
    for i, line in enumerate(lines[:-1]):
        if not line.startswith(".TP") or not lines[i + 1].startswith("."):
            continue
        names = re.findall(r"\\-\\-([a-z][a-z0-9\\-]*[a-z0-9])", lines[i + 1])
        body = []
        for l in lines[i + 2:]:
            if l.startswith((".TP", ".SH", ".SS")):
                break
            body.append(l)
        text = re.sub(r"\\f[BIRP]|^\.[A-Z]+ ?", "", "\n".join(body), flags=re.M)
        text = text.replace("\\-", "-").replace("\\ ", " ").replace('"', "")
        for n in names:
            opts[n.replace("\\-", "-")] = text
    return opts


def default_of(text):
    """The first number after "(default", ", default" or "; default" in an
    option's text, or None."""
    m = re.search(r"[(;,]\s*default\b[^)0-9;]*?(\d[\d.]*)", text)
    return m.group(1).rstrip(".") if m else None


def compare(prog, helped, man_path):
    man = man_options(man_path)
    h = set(helped) - ARGP_OWN
    m = set(man) - ARGP_OWN - HIDDEN[prog]
    check(h - m == set(), "%s --help lists %s, which %s does not define"
          % (prog, sorted(h - m), os.path.basename(man_path)))
    check(m - h == set(), "%s defines %s, which %s --help does not list"
          % (os.path.basename(man_path), sorted(m - h), prog))
    checked = 0
    for o in sorted(h):
        dh, dm = default_of(helped[o]), default_of(man[o])
        if dh and dm:
            check(dh == dm, "--%s: --help says default %s, %s says %s"
                  % (o, dh, os.path.basename(man_path), dm))
            checked += 1
    return checked


def test_options_help_and_man():
    helped = help_options(help_text([STACKTREED]))
    check(len(helped) > 50, "only %d options in stacktreed --help" % len(helped))
    n = compare("stacktreed", helped, os.path.join(ROOT, "man", "stacktreed.8"))
    check(n >= 10, "only %d defaults stated in both --help and stacktreed(8)" % n)
    top = help_text([STACKTREE])
    commands = re.findall(r"^  ([a-z]+)\s{2,}", top.split("Commands:", 1)[1], re.M)
    check(commands, "no commands in stacktree --help:\n" + top)
    helped = help_options(top)
    for c in commands:
        helped.update(help_options(help_text([STACKTREE, c])))
    compare("stacktree", helped, os.path.join(ROOT, "man", "stacktree.1"))


def test_options_in_usage_doc():
    """docs/usage.md's option table has a row for every option of
    stacktreed --help; the text names every option of stacktree's."""
    doc = open(os.path.join(ROOT, "docs", "usage.md")).read()
    rows = "\n".join(l for l in doc.splitlines() if l.startswith("| `"))
    missing = sorted(o for o in set(help_options(help_text([STACKTREED]))) - ARGP_OWN
                     if not re.search(r"`(?:-\S, )?--%s\b" % re.escape(o), rows) and
                     not re.search(r", `--%s\b" % re.escape(o), rows))
    check(not missing, "docs/usage.md's option table lacks %s" % missing)
    helped = help_options(help_text([STACKTREE, "report"]))
    missing = sorted(o for o in set(helped) - ARGP_OWN if "--" + o not in doc)
    check(not missing, "docs/usage.md never names stacktree report's %s" % missing)


def test_options_defaults_match_code():
    """The cache defaults --help states are the code's: 2/7 of
    --memory-mb's default (ST_MEMORY_MB) each, which the daemon's summary
    prints as the caches' limits."""
    helped = help_options(help_text([STACKTREED]))
    src = open(os.path.join(ROOT, "user", "daemon.h")).read()
    memory = int(re.search(r"#define ST_MEMORY_MB (\d+)", src).group(1))
    check(default_of(helped["memory-mb"]) == str(memory),
          "--memory-mb: --help says %s, ST_MEMORY_MB is %d"
          % (default_of(helped["memory-mb"]), memory))
    for o in ("symbol-cache-mb", "unwind-memory"):
        check(str(memory * 2 // 7) in helped[o],
              "--%s: --help says %r, the default is %d (2/7 of %d)"
              % (o, helped[o], memory * 2 // 7, memory))


def test_options_bench_bare_hidden():
    """--bench-bare is not in --help, and still parses (bench/ uses it)."""
    text = help_text([STACKTREED])
    check("bench-bare" not in text, "--bench-bare is listed by --help")
    p = subprocess.run([STACKTREED, "--bench-bare", "--bogus-option-x"], capture_output=True,
                       text=True, timeout=30)
    check("bench-bare" not in p.stderr and "bogus-option-x" in p.stderr,
          "--bench-bare is not accepted: %s" % p.stderr)
