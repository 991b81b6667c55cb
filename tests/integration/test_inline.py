"""Inlined frames and source lines (issue 11, items 2 and 3): the C++
fixture fx_inline (built -O2 -g by `make unit`: a namespaced template, a
member function and a lambda inlined into crunch(), mix() inlined into the
out-of-line scramble()) is profiled. Checked: the inline frames are nodes of
kind "inline" (JSON) and "(inline)" (xtree), each with the file and a line
inside its function's source; a call site and the inline frames under it
have the same CUM; go tool pprof -lines shows file:line of the hot inlined
function; --no-inline gives none, and `stacktree report --no-inline`
re-renders the same profile with the same totals; the summary says how long
symbolizing took; as a service, the frames left by the first snapshot (DWARF
not open yet) are counted, and later snapshots have them."""
import os
import re
import shutil
import subprocess
import tempfile

from stcheck import (BUILD, ROOT, STACKTREE, Daemon, check, check_invariants, function_cum,
                     load, main_thread, nodes, run_profiled, wait_for)

FIXTURE = os.path.join(BUILD, "fixtures", "fx_inline")
SOURCE = os.path.join(ROOT, "tests", "unit", "fixtures", "fx_inline.cpp")
MIX = "unsigned long fx::detail::mix<unsigned long>(unsigned long, unsigned long)"
ADD = "fx::detail::Acc<unsigned long>::add(unsigned long)"
# g++ gives the lambda's operator() no linkage name: named from its DWARF
# scopes (binsym/dienames.c), as the demangler would print it
LAMBDA = "fx::crunch(unsigned long, int)::{lambda(int)}::operator()(int) const"
SCRAMBLE = "unsigned long fx::detail::scramble<unsigned long>(unsigned long, unsigned long)"
CRUNCH = "fx::crunch(unsigned long, int)"


def body_lines(start_marker):
    """The line numbers of the function whose definition line holds
    start_marker, up to its closing brace at column 0 or one tab."""
    with open(SOURCE) as f:
        lines = f.read().split("\n")
    first = next(i for i, l in enumerate(lines) if start_marker in l) + 1
    indent = len(lines[first - 1]) - len(lines[first - 1].lstrip("\t"))
    last = next(i for i in range(first, len(lines) + 1)
                if lines[i - 1] == "\t" * indent + "}" or lines[i - 1] == "\t" * indent + "};")
    return range(first, last + 1)


def profile(extra):
    check(os.path.exists(FIXTURE), "%s is missing: run make unit (its fixtures)" % FIXTURE)
    out, err, _ = run_profiled(["-F", "499", "--format", "xtree,json,pprof"] + extra +
                               ["--", FIXTURE, "1.5"])
    prof = load(out)
    check_invariants(prof)
    return out, err, prof, main_thread(prof, "fx_inline")


def test_inline_nodes_lines_and_pprof():
    out, err, prof, t = profile(["--lines"])
    m = re.search(r"stacktreed: symbolized in ([0-9.]+) s", err)
    check(m and float(m.group(1)) < 5, "no 'symbolized in X s' in the summary: %s" % err[-800:])
    inl = [(n, p) for n, _, p in nodes(t["root"]) if n["kind"] == "inline"]
    names = {n["function"] for n, _ in inl}
    check({MIX, ADD, LAMBDA} <= names, "inline frames: %s" % sorted(names))
    for n, p in inl:
        check(p["kind"] in ("inline", "callsite", "leaf"), "inline under %s" % p["kind"])
        # the fixture's own inline functions are in its source; others have
        # a file and line of their own: libstdc++'s headers inlined into the
        # fixture (std::chrono in the sanitized build), libc's when a sample
        # lands in printf (libc6-dbg has DWARF for some of libc)
        mine = n["function"] in (MIX, ADD, LAMBDA) or n["function"].startswith("fx::")
        check((n["file"] == SOURCE if mine else bool(n["file"])) and n["line"] > 0,
              "%s [%s]: file %s line %s" % (n["function"], n.get("module"), n.get("file"),
                                            n.get("line")))
        check(n["offset"] is None and n["address"] is None, "inline node with an address")
    # a call site and its inline chain: one child each, the same CUM
    sites = [n for n, _, _ in nodes(t["root"]) if n["function"] == CRUNCH and
             n["kind"] == "callsite" and n["children"] and n["children"][0]["kind"] == "inline"]
    check(sites, "no call site of crunch with inline frames under it")
    for s in sites:
        lam = s["children"][0]
        check(len(s["children"]) == 1 and lam["function"] == LAMBDA and
              lam["cum"] == s["cum"], "crunch+0x%x: children %s" %
              (s["offset"], [(c["function"], c["cum"]) for c in s["children"]]))
        add = lam["children"][0]
        check(add["function"] == ADD and add["cum"] == s["cum"], "under the lambda: %s" %
              [(c["function"], c["cum"]) for c in lam["children"]])
        # lines: the call in crunch is the lambda's call (in crunch's body), the
        # lambda's is a call of add (in the lambda), add's the call of scramble
        check(s["file"] == SOURCE and s["line"] in body_lines("unsigned long crunch("),
              "crunch call site line %s" % s.get("line"))
        check(lam["line"] in body_lines("auto step = "), "lambda line %s" % lam["line"])
        check(add["line"] in body_lines("inline void add("), "add line %s" % add["line"])
        check(add["children"] and add["children"][0]["function"] == SCRAMBLE,
              "add's callee: %s" % [c["function"] for c in add["children"]])
    # the leaf's time is in the innermost inline frame, at a line of mix()
    mix = [n for n, _ in inl if n["function"] == MIX]
    hot = max(mix, key=lambda n: n["base"])
    check(hot["base"] > 0 and hot["line"] in body_lines("inline T mix("),
          "mix: base %d line %d (body %s)" % (hot["base"], hot["line"], body_lines("inline T mix(")))
    with open(os.path.join(out, "xtree.txt")) as f:
        xtree = f.read()
    check(re.search(r"  unsigned long fx::detail::mix<unsigned long>\(unsigned long, unsigned long\) "
                    r"\[fx_inline\] \(inline\) fx_inline\.cpp:\d+\n", xtree),
          "xtree.txt: no '(inline) fx_inline.cpp:N' line for mix")
    # pprof: go tool pprof -lines shows the file:line of the hot inlined function
    go = shutil.which("go")
    check(go, "go is not installed (scripts/deps.sh installs golang-go)")
    env = dict(os.environ, HOME=tempfile.mkdtemp(prefix="st-go-"), PPROF_TMPDIR=out)
    p = subprocess.run([go, "tool", "pprof", "-lines", "-top", os.path.join(out, "profile.pb.gz")],
                       capture_output=True, text=True, timeout=120, env=env)
    check(p.returncode == 0, "go tool pprof: %s" % p.stderr)
    rows = [l for l in p.stdout.split("\n") if "fx::detail::mix<" in l]
    shown = {int(m.group(1)) for l in rows for m in [re.search(r"fx_inline\.cpp:(\d+)", l)] if m}
    check(shown and shown <= set(body_lines("inline T mix(")),
          "pprof -lines: mix rows %s" % rows[:3])
    check(any("(inline)" in l for l in rows), "pprof: mix not shown inlined: %s" % rows[:3])


def test_no_inline_and_rerender():
    out, err, prof, t = profile([])
    before = {n["function"] for n, _, _ in nodes(t["root"]) if n["kind"] == "inline"}
    check(MIX in before, "no inline mix frame: %s" % sorted(before))
    # the same profile re-rendered without inline frames: the same totals
    again = tempfile.mkdtemp(prefix="st-it-")
    p = subprocess.run([STACKTREE, "report", "--input", out, "--no-inline", "-o", again],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, "stacktree report --no-inline: %s" % p.stderr)
    prof2 = load(again)
    check_invariants(prof2)
    t2 = main_thread(prof2, "fx_inline")
    check(not [n for n, _, _ in nodes(t2["root"]) if n["kind"] == "inline"],
          "inline frames left after --no-inline")
    check(t2["root"]["cum"] == t["root"]["cum"] and prof2["samples"] == prof["samples"],
          "totals: %d -> %d" % (t["root"]["cum"], t2["root"]["cum"]))
    for fn in (CRUNCH, SCRAMBLE, "main"):
        check(function_cum(t2["root"], fn) == function_cum(t["root"], fn),
              "%s: cum %d -> %d" % (fn, function_cum(t["root"], fn),
                                    function_cum(t2["root"], fn)))
    # scramble's own samples now hold mix's
    base = sum(n["base"] for n, _, _ in nodes(t["root"]) if n["function"] in (SCRAMBLE, MIX))
    base2 = sum(n["base"] for n, _, _ in nodes(t2["root"]) if n["function"] == SCRAMBLE)
    check(base == base2 and base2 > 0, "scramble base %d, was %d with mix" % (base2, base))
    # stacktreed --no-inline: no inline frames, lines still there
    out3, _, prof3, t3 = profile(["--no-inline"])
    check(not [n for n, _, _ in nodes(t3["root"]) if n["kind"] == "inline"],
          "stacktreed --no-inline: inline frames present")
    sites = [n for n, _, _ in nodes(t3["root"]) if n["function"] == CRUNCH and
             n["kind"] == "callsite"]
    check(sites and all(n["file"] == SOURCE and n["line"] in body_lines("unsigned long crunch(")
                        for n in sites), "--no-inline: call site lines %s" %
          [(n.get("file"), n.get("line")) for n in sites])
    check(any(c["function"] == SCRAMBLE for s in sites for c in s["children"]),
          "--no-inline: crunch does not call scramble directly")
    for d in (out, again, out3):
        shutil.rmtree(d, ignore_errors=True)


def test_inline_in_service_snapshots():
    """--interval: the first snapshot leaves the frames of the module whose
    DWARF is not open yet without inline frames (counted in its summary),
    the daemon opens it between snapshots, later snapshots have them."""
    check(os.path.exists(FIXTURE), "%s is missing: run make unit (its fixtures)" % FIXTURE)
    d = tempfile.mkdtemp(prefix="st-svc-inline-")
    wl = subprocess.Popen([FIXTURE, "30"], stdout=subprocess.DEVNULL)
    daemon = Daemon(["--pid", str(wl.pid), "-F", "499", "--interval", "1", "-o", d])

    def snaps():
        return sorted(n for n in os.listdir(d) if n[:8].isdigit() and "T" in n)

    def inline_names(n):
        t = [t for t in load(os.path.join(d, n))["threads"] if t["comm"] == "fx_inline"]
        return {x["function"] for t in t for x, _, _ in nodes(t["root"]) if x["kind"] == "inline"}

    try:
        wait_for(lambda: any(MIX in inline_names(n) for n in snaps()), 20,
                 "no snapshot with inline frames in 20 s")
    finally:
        rc, err = daemon.stop()
        wl.kill()
        wl.wait()
    check(rc == 0, "service exit %d: %s" % (rc, err))
    names = snaps()
    first = names[0]
    with open(os.path.join(d, first, "summary.txt")) as f:
        summary = f.read()
    m = re.search(r"(\d+) frames left for a later snapshot", summary)
    check(not inline_names(first) and m and int(m.group(1)) > 0,
          "first snapshot: inline %s, summary: %s" % (sorted(inline_names(first)), summary))
    last = [n for n in names if MIX in inline_names(n)][-1]
    t = main_thread(load(os.path.join(d, last)), "fx_inline")
    mix = [n for n, _, _ in nodes(t["root"]) if n["function"] == MIX]
    check(all(n["file"] == SOURCE and n["line"] in body_lines("inline T mix(") for n in mix),
          "%s: mix lines %s" % (last, [n.get("line") for n in mix]))
    shutil.rmtree(d, ignore_errors=True)
