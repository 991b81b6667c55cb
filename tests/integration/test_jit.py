"""JIT code and unresolved frames (issue 11, items 5 and 7).

tests/workloads/jit.c writes x86-64 code into anonymous executable memory,
names it in its own /tmp/perf-PID.map and removes that file at exit: the
frames there must carry the map's names (module [perf-map]) with the CPU
shares the workload measured, the later map line winning over an earlier
overlapping one; a map file that is a symbolic link, or owned by another
user, is refused and counted. Unresolved frames: the share of samples with
a frame without symbol, per module, in the summary, profile.json and the
report headers, on the JIT workload (its unnamed code) and on a workload
whose library was stripped (tests/workloads/stripped.c)."""
import os
import shutil
import subprocess
import tempfile

from test_outputs import pprof
from stcheck import (STACKTREE, check, check_invariants, function_cum, function_nodes, load,
                     main_thread, metric, nodes, run_profiled, workload)

TOL = 4.0
PERF_MAP = "[perf-map]"


def share(t, name):
    return 100.0 * function_cum(t["root"], name) / t["samples"]


def real(rep, name):
    return 100.0 * rep["phases"][name] / sum(rep["phases"].values())


def under(found, parent):
    """The share of the CUM of nodes `found` ((node, parent) pairs) that is
    under a parent named `parent`."""
    total = sum(n["cum"] for n, _ in found)
    return sum(n["cum"] for n, p in found if p["function"] == parent) / max(total, 1)


def unresolved_header(text):
    lines = [l for l in text.splitlines() if l.startswith("# unresolved frames: ")]
    check(len(lines) == 1, "no single '# unresolved frames' header line: %s" % lines)
    return lines[0]


def test_jit_perf_map_names():
    out, err, rep = run_profiled(["-F", "999", "--", workload("jit")])
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, "jit")
    check(not os.path.exists("/tmp/perf-%d.map" % t["pid"]), "the workload left its map file")
    check(prof["notes"].get("perf maps read (JIT code names)", 0) >= 1,
          "perf maps read: %s" % prof["notes"])
    for name in ("jit_hot_loop", "jit_cold_loop"):
        found = function_nodes(t["root"], name)
        check(found, "%s not in the tree" % name)
        check(all(n["module"] == PERF_MAP for n, _ in found),
              "%s modules: %s" % (name, {n["module"] for n, _ in found}))
        # the frame in JIT code is a node, and its caller was walked (but
        # for samples at the JIT function's first or last instructions,
        # where rbp is still the caller's)
        check(under(found, "main") >= 0.95,
              "%s callers: %s" % (name, {(p["function"], n["cum"]) for n, p in found}))
        s, r = share(t, name), real(rep, name)
        metric("jit.%s.diff_pts" % name, s - r)
        check(abs(s - r) <= TOL, "%s: %.1f%% of samples, %.1f%% of CPU" % (name, s, r))
    check(all(n["kind"] == "leaf" for n, _ in function_nodes(t["root"], "jit_hot_loop")),
          "jit_hot_loop is not a leaf")
    # its call sites (a sample between two calls is a leaf of its own)
    cold = [(n, p) for n, p in function_nodes(t["root"], "jit_cold_loop")
            if n["kind"] != "leaf"]
    check(cold and all(n["kind"] == "callsite" and n["offset"] == 0x10 and
                       {c["function"] for c in n["children"]} <= {"cold_work"}
                       for n, _ in cold),
          "jit_cold_loop call sites: %s" % [(n["kind"], n["offset"],
                                             [c["function"] for c in n["children"]])
                                            for n, _ in cold])
    check(not any(n["function"] == "stale_entry" for n, _, _ in nodes(t["root"])),
          "the earlier overlapping map line won")
    # the unnamed JIT code: unresolved frames, under [unknown]
    anon = 100.0 * prof["unresolved"] / prof["samples"]
    metric("jit.unresolved.diff_pts", anon - real(rep, "jit_anon"))
    check(abs(anon - real(rep, "jit_anon")) <= TOL,
          "unresolved %.1f%% of samples, the unnamed code %.1f%% of CPU"
          % (anon, real(rep, "jit_anon")))
    # [unknown] first (a start-up sample in the dynamic loader may add a
    # module of its own)
    by = prof["unresolved_by"]
    check(list(by)[0] == "[unknown]" and by["[unknown]"] >= prof["unresolved"] - 3,
          "unresolved_by: %s" % by)
    unknown = 100.0 * by["[unknown]"] / prof["samples"]
    line = "unresolved frames: %.1f%% of samples; top modules: [unknown] (%.1f%%)" % (anon,
                                                                                       unknown)
    check("stacktreed: " + line in err, "summary: no '%s' in %s" % (line, err))
    with open(os.path.join(out, "xtree.txt")) as f:
        xtree = f.read()
    header = unresolved_header(xtree)
    check(header.startswith("# " + line), "xtree header: " + header)
    check("jit_hot_loop [perf-map]" in xtree and "jit_cold_loop+0x10 [perf-map]" in xtree,
          "JIT frames in xtree.txt")
    # read back: the field, and the headers it renders
    out2 = out + "-report"
    p = subprocess.run([STACKTREE, "report", "--input", os.path.join(out, "profile.json"),
                        "-o", out2, "--format", "xtree,arcflow,json"], capture_output=True,
                       text=True)
    check(p.returncode == 0, "stacktree report: " + p.stderr)
    back = load(out2)
    check(back["unresolved"] == prof["unresolved"] and
          back["unresolved_by"] == prof["unresolved_by"], "unresolved read back")
    for name in ("xtree.txt", "arcflow.txt"):
        with open(os.path.join(out2, name)) as f:
            check(unresolved_header(f.read()) == header, name + " header")


def refused(mode, note):
    out, err, _ = run_profiled(["-F", "499", "--", workload("jit")],
                               env_extra={"WL_JIT_MAP": mode, "WL_SCALE": "0.4"})
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, "jit")
    check(prof["notes"].get(note, 0) >= 1, "%s: no '%s' in %s" % (mode, note, prof["notes"]))
    check("stacktreed: %s:" % note in err, "%s: not in the summary" % note)
    check("perf maps read (JIT code names)" not in prof["notes"], "a refused map was read")
    named = {n["function"] for n, _, _ in nodes(t["root"])}
    check(not named & {"jit_hot_loop", "jit_cold_loop", "stale_entry"},
          "%s: names from a refused map: %s" % (mode, named))
    # all JIT code is unresolved now: at least the hot loop's share
    check(prof["unresolved_by"].get("[unknown]", 0) > prof["samples"] // 2,
          "%s: unresolved %s of %d samples" % (mode, prof["unresolved_by"], prof["samples"]))


def test_jit_perf_map_symlink_refused():
    refused("symlink", "perf maps refused: symbolic links")


def test_jit_perf_map_foreign_owner_refused():
    refused("foreign", "perf maps refused: not owned by the process's user or root")


def test_unresolved_frames_stripped_library():
    out, err, rep = run_profiled(["-F", "999", "--format", "xtree,json,pprof", "--",
                                  workload("stripped")])
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, "stripped")
    lib = [m for m in prof["unresolved_by"] if m.endswith("/libstripped.so")]
    check(len(lib) == 1 and list(prof["unresolved_by"])[0] == lib[0],
          "top unresolved module: %s" % prof["unresolved_by"])
    s = 100.0 * prof["unresolved_by"][lib[0]] / prof["samples"]
    r = real(rep, "stripped_spin")
    metric("stripped.unresolved.diff_pts", s - r)
    check(abs(s - r) <= TOL, "libstripped.so: %.1f%% unresolved, %.1f%% of CPU" % (s, r))
    check(abs(share(t, "stripped_spin") - s) <= 1.0, "stripped_spin (exported) keeps its name")
    check("top modules: libstripped.so (%.1f%%)" % s in err, "summary: " + err)
    with open(os.path.join(out, "xtree.txt")) as f:
        check("top modules: libstripped.so (%.1f%%)" % s in unresolved_header(f.read()),
              "xtree header")
    # pprof: a comment of the profile
    top = pprof(["-top"], os.path.join(out, "profile.pb.gz"))
    check("top modules: libstripped.so (%.1f%%)" % s in top, "pprof comments: " + top[:300])


def test_jit_perf_map_unwind_modes():
    """--unwind fp walks through JIT code (its frames keep rbp); --unwind
    dwarf stops at it, keeping the JIT frame under [truncated], counted."""
    for mode in ("fp", "dwarf"):
        out, _, rep = run_profiled(["-F", "999", "--unwind", mode, "--", workload("jit")],
                                   env_extra={"WL_SCALE": "0.6"})
        prof = load(out)
        check_invariants(prof)
        t = main_thread(prof, "jit")
        for name in ("jit_hot_loop", "jit_cold_loop"):
            found = function_nodes(t["root"], name)
            check(found and all(n["module"] == PERF_MAP for n, _ in found),
                  "%s: %s not named" % (mode, name))
            s, r = share(t, name), real(rep, name)
            metric("jit.%s.%s.diff_pts" % (mode, name), s - r)
            check(abs(s - r) <= TOL, "%s: %s %.1f%% of samples, %.1f%% of CPU"
                  % (mode, name, s, r))
            want = "main" if mode == "fp" else "[truncated]"
            check(under(found, want) >= 0.95, "%s: %s under %s" % (
                mode, name, {(p["function"], n["cum"]) for n, p in found}))
        if mode == "dwarf":
            check(prof["notes"].get("unwind stopped: no CFI", 0) > 0,
                  "dwarf: the stops at JIT code are not counted: %s" % prof["notes"])


NODE_JS = """
function hotLoop(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
function coldLoop(n) { let s = 0; for (let i = 0; i < n; i++) s = (s ^ (i * 13)) % 999983; return s; }
// 1.5 s of the process's CPU, not of the clock: with both CPUs busy a
// wall-clock loop got less CPU beside node's fixed start-up (hotLoop 32-39%
// of the samples, under the 40 checked, with old and new code alike)
const c0 = process.cpuUsage(); let x = 0;
const cpu = () => { const c = process.cpuUsage(c0); return (c.user + c.system) / 1e6; };
while (cpu() < 1.5) { x += hotLoop(300000); x += coldLoop(100000); }
console.log(x);
"""


def test_jit_node_perf_basic_prof():
    """A real JIT: node --perf-basic-prof writes /tmp/perf-PID.map for the
    code V8 compiles; its JavaScript functions are named ([perf-map]) and
    the walk goes on through V8's frames to the process's start."""
    node = shutil.which("node") or shutil.which("nodejs")
    check(node, "node is not installed (scripts/deps.sh installs nodejs)")
    tmp = tempfile.mkdtemp(prefix="st-node-")
    script = os.path.join(tmp, "spin.js")
    with open(script, "w") as f:
        f.write(NODE_JS)
    # --perf-basic-prof also has V8 log into the current directory: into tmp
    out, err, _ = run_profiled(["-F", "499", "--", node, "--perf-basic-prof",
                                "--logfile=" + os.path.join(tmp, "v8.log"),
                                "--no-logfile-per-isolate", script])
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, "node")
    try:
        os.unlink("/tmp/perf-%d.map" % t["pid"])	# node leaves it
    except FileNotFoundError:
        pass
    shares = {}
    for name in ("hotLoop", "coldLoop"):
        found = [n for n, _, _ in nodes(t["root"]) if n["function"] and name in n["function"]]
        check(found and all(n["module"] == PERF_MAP for n in found),
              "%s: %s" % (name, [(n["function"], n["module"]) for n in found[:5]]))
        shares[name] = 100.0 * sum(n["cum"] for n in found) / t["samples"]
    metric("jit.node.hotLoop.pct", shares["hotLoop"])
    check(shares["hotLoop"] > 40 and shares["coldLoop"] > 5 and
          shares["hotLoop"] > 2 * shares["coldLoop"], "JS shares: %s" % shares)
    # the JIT frames sit under node's own frames, down to libc's start (node's main
    # tail-calls node::Start)
    parent = {id(n): p for n, _, p in nodes(t["root"])}
    hot = [n for n, _, _ in nodes(t["root"]) if n["function"] and "hotLoop" in n["function"]]
    under_main = 0
    for n in hot:
        anc = parent.get(id(n))
        while anc is not None and anc["function"] != "__libc_start_call_main":
            anc = parent.get(id(anc))
        under_main += n["cum"] if anc is not None else 0
    total = sum(n["cum"] for n in hot)
    check(under_main >= 0.9 * total,
          "hotLoop under __libc_start_call_main: %d of %d samples" % (under_main, total))
