"""Integration tests of the outputs for other tools (--format): the pprof
profile read back by `go tool pprof`, the flame graph parsed by xmllint and
xml.etree, folded stacks read back by `stacktree report --folded`, and the
conversion of a saved profile.json. Numbers are compared with profile.json."""
import colorsys
import os
import re
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

from stcheck import (BUILD, ROOT, SANITIZED, STACKTREE, STACKTREED, Failure, Skip, check,
                     arcflow, check_invariants, load, nodes, run_profiled, workload)

ALL = "xtree,arcflow,json,folded,pprof,svg"
FILES = ("xtree.txt", "arcflow.txt", "profile.json", "stacks.folded", "profile.pb.gz",
         "flamegraph.svg")
SVG_NS = "{http://www.w3.org/2000/svg}"


def tool(name, package):
    path = shutil.which(name)
    if not path:
        raise Failure("%s is missing: install %s (scripts/deps.sh does)" % (name, package))
    return path


def run(cmd):
    env = dict(os.environ)
    env.setdefault("HOME", tempfile.mkdtemp(prefix="st-home-"))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    check(p.returncode == 0, "%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr))
    return p.stdout


def pprof(args, path):
    return run([tool("go", "golang-go"), "tool", "pprof"] + args + [path])


def frame_name(n):
    """The frame's name as xtree and stacks.folded print it (st_frame__name)."""
    if n["function"] is not None:
        if n["kind"] == "callsite":
            return "%s+0x%x" % (n["function"], n["offset"])
        return n["function"]
    if n["module"]:
        return "%s+0x%x" % (n["module"].rsplit("/", 1)[-1], n["offset"])
    return "[unknown] %s" % n["address"] if n["address"] else "[unknown]"


def fn_key(n, t=None):
    """The function pprof shows for a node (None for a thread's root)."""
    if n["kind"] == "root":
        return None
    return n["function"] if n["function"] is not None else frame_name(n)


CODE_KINDS = ("callsite", "leaf", "inline", "function")


def by_function(root):
    """The tree as stacks.folded and flamegraph.svg show it: under each
    parent, the code frames of one function (and module) are one node
    (st_tree__by_function). Yields (depth, name, cum, base) below the root."""
    def key(n):
        if n["kind"] not in CODE_KINDS:
            return ("frame", frame_name(n))
        if n["function"] is not None:
            return ("function", n["function"], n["module"])
        return ("address", n["module"], n["offset"], n["address"])

    stack = [(0, [root])]
    while stack:
        depth, group = stack.pop()
        if depth:
            n = group[0]
            name = n["function"] if n["kind"] in CODE_KINDS and n["function"] is not None \
                else frame_name(n)
            yield (depth, name, sum(g["cum"] for g in group), sum(g["base"] for g in group))
        children = {}
        for g in group:
            for c in g["children"]:
                children.setdefault(key(c), []).append(c)
        for grp in children.values():
            stack.append((depth + 1, grp))


def outermost_cum(prof, key):
    """Per key(node): samples with the key on the stack, counted once."""
    total = {}
    for t in prof["threads"]:
        stack = [(t["root"], frozenset())]
        while stack:
            n, above = stack.pop()
            k = key(n, t)
            if k is not None and k not in above:
                total[k] = total.get(k, 0) + n["cum"]
            for c in n["children"]:
                stack.append((c, above | {k} if k is not None else above))
    return total


def base_by_function(prof):
    flat = {}
    for t in prof["threads"]:
        for n, _, _ in nodes(t["root"]):
            if n["base"] and fn_key(n) is not None:
                flat[fn_key(n)] = flat.get(fn_key(n), 0) + n["base"]
    return flat


def parse_raw(text):
    """go tool pprof -raw: sample (count, ns, location ids) and period."""
    samples, period, section = [], None, None
    for line in text.splitlines():
        if line.startswith("Period:"):
            period = int(line.split()[1])
        elif line.startswith("Samples:"):
            section = "samples"
        elif line.startswith("Locations"):
            section = "locations"
        elif section == "samples":
            m = re.match(r"^\s+(\d+)\s+(\d+): ([\d ]*)$", line)
            if m:
                samples.append((int(m.group(1)), int(m.group(2)), m.group(3).split()))
    return samples, period


def parse_top(text):
    """go tool pprof -top -sample_index=samples: total and {function: (flat, cum)}."""
    m = re.search(r"of (\d+) total", text)
    check(m, "no total in pprof -top output:\n" + text)
    rows = {}
    for line in text.splitlines():
        f = line.split(None, 5)
        if len(f) == 6 and f[1].endswith("%") and f[4].endswith("%"):
            # an inlined function is "name (inline)": the function's row
            name = f[5][:-len(" (inline)")] if f[5].endswith(" (inline)") else f[5]
            flat, cum = rows.get(name, (0, 0))
            rows[name] = (flat + int(f[0]), cum + int(f[3]))
    return int(m.group(1)), rows


def check_pprof(path, prof, what):
    samples, period = parse_raw(pprof(["-raw"], path))
    leaves = sum(1 for t in prof["threads"] for n, _, _ in nodes(t["root"]) if n["base"])
    check(len(samples) == leaves, "%s: %d pprof samples, %d nodes with BASE > 0"
          % (what, len(samples), leaves))
    count = sum(s[0] for s in samples)
    check(count == prof["samples"], "%s: pprof samples/count %d != profile.json samples %d"
          % (what, count, prof["samples"]))
    check(period == round(1e9 / prof["frequency_hz"]), "%s: period %s" % (what, period))
    ns = sum(s[1] for s in samples)
    check(ns == count * period, "%s: cpu/nanoseconds %d != %d x %d" % (what, ns, count, period))
    total, rows = parse_top(pprof(["-top", "-sample_index=samples", "-nodefraction=0",
                                   "-nodecount=1000"], path))
    check(total == prof["samples"], "%s: pprof -top total %d != %d"
          % (what, total, prof["samples"]))
    flat = base_by_function(prof)
    cum = outermost_cum(prof, fn_key)
    for fn, (f, c) in rows.items():
        check(f == flat.get(fn, 0), "%s: %s flat %d in pprof, BASE sum %d in profile.json"
              % (what, fn, f, flat.get(fn, 0)))
        check(c == cum.get(fn), "%s: %s cum %d in pprof, %s in profile.json"
              % (what, fn, c, cum.get(fn)))
    hottest = max(flat, key=flat.get)
    top = max(rows, key=lambda fn: rows[fn][0])
    check(top == hottest, "%s: pprof's top function %s, profile.json's %s" % (what, top, hottest))
    for fn in ("main", "phase_a", "phase_b", "helper", "work_b", "phase_c", "work_c2"):
        check(fn in rows, "%s: %s missing from pprof -top" % (what, fn))
    return rows


def check_svg(path, prof):
    run([tool("xmllint", "libxml2-utils"), "--noout", path])
    nboxes = run(["xmllint", "--xpath", "count(//*[local-name()='g'][@class='f'])", path])
    want = [b for t in prof["threads"] for b in by_function(t["root"])]
    nnodes = 1 + len(want)
    # every node is at least 0.39 px wide at 3000 samples: none is left out
    check(int(float(nboxes)) == nnodes, "svg: %s boxes for %d tree nodes" % (nboxes, nnodes))
    root = ET.parse(path).getroot()
    total, width = int(root.get("data-total")), float(root.get("data-width"))
    check(total == prof["samples"], "svg: total %d != %d samples" % (total, prof["samples"]))
    boxes = []
    for g in root.iter(SVG_NS + "g"):
        if g.get("class") != "f":
            continue
        rect = g.find(SVG_NS + "rect")
        cum = int(g.get("data-c"))
        w = float(rect.get("width"))
        check(abs(w - cum * width / total) <= 0.0015,
              "svg: %s is %.3f px wide for CUM %d (%.3f expected)"
              % (g.get("data-n"), w, cum, cum * width / total))
        check(g.find(SVG_NS + "title") is not None, "svg: box without a tooltip")
        boxes.append((int(g.get("data-l")), g.get("data-n"), cum, int(g.get("data-b"))))
    # one process, one thread: the boxes are the by-function tree's nodes,
    # level = depth, with their BASE and CUM
    check(sorted(b for b in boxes if b[0]) == sorted(want),
          "svg boxes differ from the tree: %s" % sorted(set(boxes[1:]) ^ set(want))[:6])
    text = open(path).read()
    check("<script" in text and 'id="search"' in text, "svg: no script or search box")
    check(text.count("http") == 2 and "href" not in text, "svg fetches something")
    return text


def test_outputs_phases_all_formats():
    out, err, _ = run_profiled(["-F", "999", "--format", ALL, "--", workload("phases")])
    for f in FILES:
        check(os.path.getsize(os.path.join(out, f)) > 0, f + " missing or empty")
    check(not [f for f in os.listdir(out) if f.startswith(".")], "temporary files left")
    prof = load(out)
    check_invariants(prof)
    check(prof["samples"] > 1500, "too few samples: %d" % prof["samples"])

    rows = check_pprof(os.path.join(out, "profile.pb.gz"), prof, "pprof")
    check(rows["work_a"][0] > 0.3 * prof["samples"], "work_a flat %d" % rows["work_a"][0])
    traces = pprof(["-traces"], os.path.join(out, "profile.pb.gz"))
    pid = prof["threads"][0]["pid"]
    check(re.search(r"pid:\s+%d\b" % pid, traces) and re.search(r"comm:\s+phases", traces),
          "pprof -traces lacks the pid/comm labels:\n" + traces[:2000])
    check("work_b\n" in traces and "helper\n" in traces, "pprof -traces lacks frames")

    svg = check_svg(os.path.join(out, "flamegraph.svg"), prof)

    # folded stacks (by function) read back give the same per-function CUM
    rt = tempfile.mkdtemp(prefix="st-it-folded-")
    run([STACKTREE, "report", "--folded", os.path.join(out, "stacks.folded"), "-o", rt])
    back = load(rt)
    check(back["samples"] == prof["samples"], "folded round trip: %d samples, %d before"
          % (back["samples"], prof["samples"]))
    want = outermost_cum(prof, lambda n, t: t["comm"] if n["kind"] == "root" else fn_key(n))
    got = {e["function"]: e["cum"] for e in arcflow(back) if not e["function"].startswith("[pid")}
    check(got == want, "folded round trip: per-function CUM differ: %s"
          % sorted(set(got.items()) ^ set(want.items()))[:10])

    # conversion of the saved profile: the same numbers, only the asked files
    conv = tempfile.mkdtemp(prefix="st-it-conv-")
    run([STACKTREE, "report", "--input", os.path.join(out, "profile.json"), "--format",
         "pprof,svg", "-o", conv])
    check(sorted(os.listdir(conv)) == ["flamegraph.svg", "profile.pb.gz"],
          "conversion wrote %s" % sorted(os.listdir(conv)))
    rows2 = check_pprof(os.path.join(conv, "profile.pb.gz"), prof, "converted pprof")
    check(rows2 == rows, "converted pprof differs from stacktreed's")
    check(open(os.path.join(conv, "flamegraph.svg")).read() == svg,
          "converted flame graph differs from stacktreed's")

    # --folded-offsets: a frame per call site, as xtree names them; --svg-width
    conv = tempfile.mkdtemp(prefix="st-it-conv-")
    run([STACKTREE, "report", "--input", os.path.join(out, "profile.json"), "--format",
         "folded,svg", "--folded-offsets", "--svg-width", "1600", "-o", conv])
    want = {}
    for t in prof["threads"]:
        for n, d, _ in nodes(t["root"]):
            if d:
                want[frame_name(n)] = want.get(frame_name(n), 0) + n["base"]
    got = {}
    for line in open(os.path.join(conv, "stacks.folded")):
        stack, count = line.rsplit(" ", 1)
        leaf = stack.rsplit(";", 1)[-1]
        got[leaf] = got.get(leaf, 0) + int(count)
    check(got == {k: v for k, v in want.items() if v},
          "--folded-offsets: leaves %s, BASE by frame %s" % (got, want))
    check(any("+0x" in line for line in open(os.path.join(conv, "stacks.folded"))),
          "--folded-offsets: no call site in stacks.folded")
    root = ET.parse(os.path.join(conv, "flamegraph.svg")).getroot()
    check(root.get("width") == "1600" and root.get("data-width") == "1580",
          "--svg-width 1600: width %s, data-width %s" % (root.get("width"), root.get("data-width")))
    nboxes = sum(1 for g in root.iter(SVG_NS + "g") if g.get("class") == "f")
    check(nboxes == sum(1 for t in prof["threads"] for _ in nodes(t["root"])),
          "--folded-offsets: %d boxes, not one per tree node" % nboxes)


def test_outputs_flamegraph_per_process():
    env = dict(os.environ, WL_SCALE="4")
    procs = [subprocess.Popen([workload(w)], env=env, stderr=subprocess.DEVNULL)
             for w in ("phases", "threads")]
    try:
        time.sleep(0.3)
        out, _, _ = run_profiled(["-F", "499", "-d", "1", "--format", "svg,json",
                                  "--pid", str(procs[0].pid), "--pid", str(procs[1].pid)])
    finally:
        for p in procs:
            p.kill()
            p.wait()
    prof = load(out)
    pids = sorted({t["pid"] for t in prof["threads"]})
    check(pids == sorted(p.pid for p in procs), "processes profiled: %s" % pids)
    want = sorted(["flamegraph.svg", "profile.json"] + ["flamegraph-%d.svg" % p for p in pids])
    files = sorted(f for f in os.listdir(out) if f != "workload.txt")
    check(files == want, "files: %s, expected %s" % (files, want))
    for pid in pids:
        path = os.path.join(out, "flamegraph-%d.svg" % pid)
        run(["xmllint", "--noout", path])
        root = ET.parse(path).getroot()
        samples = sum(t["samples"] for t in prof["threads"] if t["pid"] == pid)
        check(int(root.get("data-total")) == samples, "pid %d: svg total %s != %d"
              % (pid, root.get("data-total"), samples))
        names = [g.get("data-n") for g in root.iter(SVG_NS + "g") if g.get("class") == "f"]
        check(names[0].endswith("(pid %d)" % pid), "pid %d: first box %s" % (pid, names[0]))
        check(not any("(pid %d)" % p in n for p in pids if p != pid for n in names),
              "flamegraph-%d.svg shows another process" % pid)
    root = ET.parse(os.path.join(out, "flamegraph.svg")).getroot()
    check(int(root.get("data-total")) == prof["samples"], "flamegraph.svg is not the whole profile")
    first = next(g for g in root.iter(SVG_NS + "g") if g.get("class") == "f")
    check(first.get("data-n") == "all (2 processes)" and int(first.get("data-c")) ==
          prof["samples"], "flamegraph.svg root box: %s" % first.get("data-n"))


SPEEDSCOPE = "speedscope@1.25.0"


def speedscope_release():
    """speedscope's web app (npm package), installed once under build/npm.
    Skips the test only when the npm registry is out of reach."""
    prefix = os.path.join(BUILD, "npm")
    index = os.path.join(prefix, "node_modules", "speedscope", "dist", "release", "index.html")
    if not os.path.exists(index):
        npm = tool("npm", "npm")
        p = subprocess.run([npm, "install", "--prefix", prefix, "--no-audit", "--no-fund",
                            "--no-save", SPEEDSCOPE], capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            ping = subprocess.run([npm, "ping"], capture_output=True, text=True, timeout=60)
            if ping.returncode != 0:
                raise Skip("npm registry unreachable (npm ping: %s)"
                           % (ping.stderr.strip().splitlines() or ["?"])[-1])
            raise Failure("npm install %s failed: %s" % (SPEEDSCOPE, p.stderr[-2000:]))
    return os.path.dirname(index)


def speedscope_sandwich(release, folded):
    """Load folded stacks into speedscope in headless Chromium (its own
    importer, from a local HTTP server as #profileURL= requires) and read
    the sandwich view's table: {function: (total, self)}."""
    import html
    import http.server
    import threading
    chromium = tool("chromium", "chromium")
    tmp = tempfile.mkdtemp(prefix="st-speedscope-")
    try:
        site = os.path.join(tmp, "site")
        os.mkdir(site)
        for f in os.listdir(release):
            os.symlink(os.path.join(release, f), os.path.join(site, f))
        shutil.copy(folded, os.path.join(site, "stacks.folded"))

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **k):
                super().__init__(*a, directory=site, **k)

            def log_message(self, *a):
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        rows = {}
        try:
            url = ("http://127.0.0.1:%d/index.html#profileURL=stacks.folded&view=sandwich"
                   % srv.server_address[1])
            # The table's rows are a virtual list drawn after layout: under
            # load (the full suite) one dump in about ten had the header
            # only. Up to three loads, the first with rows counts.
            for attempt in range(3):
                p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                                    "--user-data-dir=" + os.path.join(tmp, "chromium%d" % attempt),
                                    "--window-size=1280,2000",
                                    "--virtual-time-budget=15000", "--dump-dom", url],
                                   capture_output=True, text=True, timeout=120)
                check(p.returncode == 0, "chromium exited %d: %s"
                      % (p.returncode, p.stderr[-2000:]))
                for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", p.stdout, re.S):
                    tds = [html.unescape(re.sub(r"<[^>]+>", "", td)).strip()
                           for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
                    if len(tds) == 3:
                        num = [int(t.split()[0].replace(",", "")) for t in tds[:2]]
                        rows[tds[2]] = (num[0], num[1])
                if rows:
                    break
        finally:
            srv.shutdown()
            srv.server_close()
        check(rows, "speedscope showed no sandwich table:\n" + p.stdout[-3000:])
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_outputs_speedscope():
    """Issue 21 item 2: stacks.folded loaded into speedscope (its own
    importer, in headless Chromium) gives every function the totals pprof
    gives it: handle_request, called from one call site but calling from
    three, is one function of ~85% (not three rows), and walk_index's
    recursion is counted once."""
    release = speedscope_release()
    out, _, _ = run_profiled(["-F", "999", "--format", "folded,pprof,json", "--",
                              workload("demo")], env_extra={"WL_SCALE": "0.5"})
    prof = load(out)
    total, top = parse_top(pprof(["-top", "-sample_index=samples", "-nodefraction=0",
                                  "-nodecount=1000"], os.path.join(out, "profile.pb.gz")))
    check(total == prof["samples"], "pprof total %d != %d" % (total, prof["samples"]))
    ss = speedscope_sandwich(release, os.path.join(out, "stacks.folded"))
    for fn in ("handle_request", "walk_index", "build_response", "checksum"):
        check(fn in ss and fn in top, "%s missing: speedscope %s, pprof %s"
              % (fn, sorted(ss), sorted(top)))
    check(top["handle_request"][1] > 0.7 * total, "handle_request cum %d of %d"
          % (top["handle_request"][1], total))
    # every function pprof shows has pprof's (flat, cum) as speedscope's
    # (self, total); speedscope's only other frame is the comm
    for fn, (flat, cum) in top.items():
        check(ss.get(fn) == (cum, flat), "%s: speedscope total/self %s, pprof cum/flat %s"
              % (fn, ss.get(fn), (cum, flat)))
    check(set(ss) - set(top) <= {"demo"}, "speedscope's extra functions: %s"
          % sorted(set(ss) - set(top)))


def test_outputs_unknown_format():
    for cmd in ([STACKTREED, "--format", "xtree,bogus", "--", "true"],
                [STACKTREE, "report", "--input", "/nonexistent.json", "--format", "pdf"]):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        check(p.returncode == 64, "%s exited %d, not 64 (usage)" % (cmd, p.returncode))
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and "unknown format" in lines[0] and
              ("'bogus'" in lines[0] or "'pdf'" in lines[0]),
              "%s: want one line naming the format, got: %s" % (cmd, p.stderr))


def big_folded(path, lines, seed=7):
    """Folded stacks of 5-30 frames drawn from ~1,200 names: mostly distinct
    paths, so that the tree (and profile.json) is large."""
    import random
    r = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(lines):
            frames = ["main"] + ["fn_%d_%d" % (d, r.randint(0, 40))
                                 for d in range(r.randint(5, 30))]
            f.write(";".join(frames) + " %d\n" % r.randint(1, 5))


def test_large_input_is_written_as_a_stream():
    """Issue 12 item 10: profile.json and arcflow.txt are streamed, not built
    in memory. 50,000 folded lines make a 15 MB profile.json (version 5;
    version 4 wrote 21 MB, version 3 96 MiB); the writer's peak RSS is the
    tree's, and its string and frame tables, 4 bytes a node and a row per
    distinct frame, and the arcflow's entries and rows add less than twice
    the output's size to it (the same tree written as xtree.txt alone: 17
    MB over it, as with version 4, whose 21 MB the same 17 MB stayed under;
    version 5 writes an arcflow row in ~14 bytes that takes ~48 in memory;
    a json-c document of the whole output took 17x the output). Memory,
    not time: no timing in this test."""
    tmp = tempfile.mkdtemp(prefix="st-big-folded-")
    try:
        src = os.path.join(tmp, "in.folded")
        big_folded(src, 50000)
        peaks = {}
        for formats in ("xtree", "xtree,arcflow,json"):
            out = os.path.join(tmp, formats.replace(",", "-"))
            p = subprocess.Popen([STACKTREE, "report", "--folded", src, "--format", formats,
                                  "-o", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, ru = os.wait4(p.pid, 0)
            err = p.stderr.read().decode()
            check(os.waitstatus_to_exitcode(status) == 0, "stacktree report: %s" % err)
            peaks[formats] = ru.ru_maxrss * 1024
        size = os.path.getsize(os.path.join(out, "profile.json"))
        check(size > 10 << 20, "profile.json is only %d bytes" % size)
        extra = peaks["xtree,arcflow,json"] - peaks["xtree"]
        if not SANITIZED:	# ASan's redzones and quarantine
            check(extra < 2 * size, "writing %d MB of profile.json took %d MB of memory over "
                  "the tree's" % (size >> 20, extra >> 20))
        # every sample is in (the header comes first)
        with open(os.path.join(out, "profile.json")) as f:
            m = re.search(r'"samples":(\d+)', f.read(65536))
        check(m and int(m.group(1)) == sum(int(l.rsplit(" ", 1)[1]) for l in open(src)),
              "samples differ: %s" % (m and m.group(1)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def readelf_build_id(path):
    out = run(["readelf", "-n", path])
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def pprof_mappings(path):
    """go tool pprof -raw's Mappings section: {file: build id or ''}."""
    text = pprof(["-raw"], path)
    check("Mappings" in text, "no Mappings in pprof -raw:\n" + text[-2000:])
    maps = {}
    for line in text.split("Mappings", 1)[1].splitlines()[1:]:
        m = re.match(r"\s*\d+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)(?: ([0-9a-f]+))?", line)
        if m:
            maps[m.group(1)] = m.group(2) or ""
    return maps


def test_outputs_build_ids():
    """Issue 11, item 6: profile.json lists the modules its frames name with
    their file's build id (the one readelf reads), the pprof mappings carry
    it (go tool pprof -raw), and both survive `stacktree report --input`."""
    exe = workload("phases")
    out, _, _ = run_profiled(["-F", "499", "--format", "json,pprof", "--", exe])
    prof = load(out)
    mods = {m["name"]: m for m in prof["modules"]}
    named = {n["module"] for t in prof["threads"] for n, _, _ in nodes(t["root"])
             if n["module"] and n["runtime"] != "kernel"}
    check(named <= set(mods), "modules named by nodes but not listed: %s" % (named - set(mods)))
    libc = [m for m in mods if "/libc.so" in m]
    check(exe in mods and libc, "modules: %s" % sorted(mods))
    for name in [exe] + libc:
        want = readelf_build_id(mods[name]["path"])
        check(want and mods[name]["build_id"] == want, "%s: build id %s, readelf says %s"
              % (name, mods[name]["build_id"], want))
    maps = pprof_mappings(os.path.join(out, "profile.pb.gz"))
    for name in [exe] + libc:
        check(maps.get(name) == mods[name]["build_id"], "pprof mapping of %s: %r, want %s"
              % (name, maps.get(name), mods[name]["build_id"]))
    # read back and written again: the same modules, the same mappings
    conv = tempfile.mkdtemp(prefix="st-it-conv-")
    run([STACKTREE, "report", "--input", os.path.join(out, "profile.json"), "--format",
         "json,pprof", "-o", conv])
    check(load(conv)["modules"] == prof["modules"], "modules differ after report --input")
    check(pprof_mappings(os.path.join(conv, "profile.pb.gz")) == maps,
          "pprof mappings differ after report --input")


def raw_samples(text):
    """go tool pprof -raw: [(count, leaf location id, {label: value})],
    {location id: mapping id} and {mapping id: file}."""
    samples, locs, maps, section = [], {}, {}, None
    for line in text.splitlines():
        if line.startswith(("Samples:", "Locations", "Mappings")):
            section = line.split()[0].rstrip(":")
        elif section == "Samples":
            m = re.match(r"^\s+(\d+)\s+\d+: (\d+)", line)
            if m:
                samples.append((int(m.group(1)), m.group(2), {}))
            elif samples and line.strip():
                samples[-1][2].update(re.findall(r"(\S+):\[([^\]]*)\]", line))
        elif section == "Locations":
            m = re.match(r"^\s+(\d+): 0x[0-9a-f]+ M=(\d+)", line)
            if m:
                locs[m.group(1)] = m.group(2)
        elif section == "Mappings":
            m = re.match(r"^(\d+): \S+ (\S+)", line)
            if m:
                maps[m.group(1)] = m.group(2)
    return samples, locs, maps


def test_outputs_runtime():
    """Issue 31, item 3: a frame's runtime. `stacktree report --input` reads
    a profile.json written before "runtime" (the fuzz corpus's python.json:
    no version, CPython frames as "kind": "python"), and writes version 5
    (valid against the schema) with a runtime on every frame: python for
    those frames, native for the rest; pprof puts the Python frames in one
    [python] mapping and labels each sample with its leaf's
    profile.frame.type (go tool pprof -raw); the flame graph colours Python
    frames yellow, native ones red to orange, and says so in its legend."""
    old = os.path.join(ROOT, "tests", "fuzz", "corpus", "json", "python.json")
    out = tempfile.mkdtemp(prefix="st-it-runtime-")
    run([STACKTREE, "report", "--input", old, "--format", "json,pprof,svg", "-o", out])
    prof = load(out)
    check(prof["version"] == 5, "version %s" % prof["version"])
    count = {}
    for t in prof["threads"]:
        for n, d, _ in nodes(t["root"]):
            py = n["kind"] == "python"
            check(n["runtime"] == ("python" if py else "native"),
                  "%s (kind %s): runtime %s" % (n["function"], n["kind"], n["runtime"]))
            count[n["runtime"]] = count.get(n["runtime"], 0) + 1
    check(count.get("python") == 34, "runtimes: %s (34 Python nodes in the file)" % count)
    samples, locs, maps = raw_samples(pprof(["-raw"], os.path.join(out, "profile.pb.gz")))
    check(sorted(maps.values()).count("[python]") == 1, "pprof mappings: %s" % maps)
    types = {}
    for n, leaf, labels in samples:
        want = "cpython" if maps.get(locs.get(leaf)) == "[python]" else "native"
        check(labels.get("profile.frame.type") == want, "pprof sample of %d, leaf in %s: "
              "labels %s" % (n, maps.get(locs.get(leaf)), labels))
        types[want] = types.get(want, 0) + n
    check(types.get("cpython", 0) > 1000 and types.get("native", 0) > 0,
          "samples by leaf frame type: %s" % types)
    root = ET.parse(os.path.join(out, "flamegraph.svg")).getroot()
    hues = {}
    for g in root.iter(SVG_NS + "g"):
        if g.get("class") != "f" or not g.get("data-m"):
            continue
        rgb = g.find(SVG_NS + "rect").get("fill")
        h = colorsys.rgb_to_hls(*(int(rgb[i:i + 2], 16) / 255 for i in (1, 3, 5)))[0] * 360
        hues.setdefault(g.get("data-m") == "[python]", []).append(h)
    check(hues.get(True) and all(45 <= h <= 65 for h in hues[True]),
          "svg: Python boxes' hues %s" % sorted(set(round(h) for h in hues.get(True, []))))
    check(hues.get(False) and all(h <= 40 or h >= 350 for h in hues[False]),
          "svg: native boxes' hues %s" % sorted(set(round(h) for h in hues.get(False, []))))
    legend = [r.get("data-runtime") for r in root.iter(SVG_NS + "rect")
              if r.get("class") == "legend"]
    check(legend == ["native", "python"], "svg legend: %s" % legend)


def run_on_pty(cmd, cols, env_extra=None):
    """Run cmd with stdout on a pseudo-terminal cols columns wide; its
    output with the pty's \\r\\n back to \\n."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.update(env_extra or {})
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
    err = p.stderr.read().decode()
    check(p.wait(timeout=60) == 0, "%s exited %d: %s" % (cmd, p.returncode, err))
    return out.decode().replace("\r\n", "\n")


def test_report_print_on_a_terminal():
    """Issue 21 item 9: `stacktree report --print` on a terminal cuts lines
    to its width with … and colours them (perf report --stdio's way);
    --wide keeps them whole, --no-color and NO_COLOR drop the colour, and
    output that is not a terminal is the report as it was."""
    tmp = tempfile.mkdtemp(prefix="st-term-")
    try:
        folded = os.path.join(tmp, "in.folded")
        with open(folded, "w") as f:
            f.write("main;ledger::accrue_interest_for_every_account_in_the_book(double, int)"
                    ";std::vector<ledger::entry>::emplace_back<ledger::entry const&>() 90\n"
                    "main;r\u00e9sum\u00e9_of_the_parser_with_a_long_name;lex 9\n"
                    "main;tiny 1\n")
        run([STACKTREE, "report", "--folded", folded, "--format", "json", "-o", tmp])
        for report in ("xtree", "arcflow"):
            cmd = [STACKTREE, "report", "--input", tmp, "--print", report]
            plain = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
            longest = max(len(line) for line in plain.splitlines())
            check(longest > 100, "%s: the test needs lines over 100 columns (%d)"
                  % (report, longest))
            esc = re.compile(r"\x1b\[[0-9;]*m")
            out = run_on_pty(cmd, 100)
            lines = out.splitlines()
            over = [line for line in lines if len(esc.sub("", line)) > 100]
            check(not over, "%s: lines over 100 columns: %s" % (report, over[:2]))
            check(any(esc.sub("", line).endswith("\u2026") for line in lines),
                  "%s: no line cut with …" % report)
            check("\x1b[31m" in out and "\x1b[0m" in out, "%s: no colour on a terminal" % report)
            # without the colour, each line is the report's line, cut or whole
            want = plain.splitlines()
            check(len(lines) == len(want), "%s: %d lines on the terminal, %d in the report"
                  % (report, len(lines), len(want)))
            for got, line in zip(lines, want):
                got = esc.sub("", got)
                check(got == line or (got.endswith("\u2026") and line.startswith(got[:-1])),
                      "%s: %r is not %r cut" % (report, got, line))
            check(run_on_pty(cmd + ["--wide", "--no-color"], 100) == plain,
                  "%s: --wide --no-color on a terminal differs from the report" % report)
            check("\x1b[" not in run_on_pty(cmd, 100, {"NO_COLOR": "1"}),
                  "%s: NO_COLOR=1 still colours" % report)
            wide = run_on_pty(cmd + ["--wide"], 100)
            check(esc.sub("", wide) == plain, "%s: --wide cuts lines" % report)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
