"""stcheck.py - helpers for the integration tests: run stacktreed, load
profile.json, check the tree invariants, sum CUM by function."""
import contextlib
import errno
import functools
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("STACKTREE_BUILD") or os.path.join(ROOT, "build")
STACKTREED = os.path.join(BUILD, "stacktreed")
STACKTREE = os.path.join(BUILD, "stacktree")
# make test SANITIZE=1: ASan's shadow memory and quarantine (256 MiB) make
# resident-memory bounds meaningless; tests that check them say so and
# check the rest.
SANITIZED = bool(os.environ.get("ST_SANITIZER_LOGS"))


class Failure(Exception):
    pass


class Skip(Exception):
    """A test that cannot run here, for a reason outside the code (e.g. a
    package registry out of reach): the runner prints the reason."""


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def wait_for(cond, timeout, msg):
    """Poll cond() every 0.1 s until it is true; fail with msg after timeout s."""
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return
        time.sleep(0.1)
    raise Failure(msg)


def workload(name):
    return os.path.join(BUILD, "workloads", name)


def proc_state(pid):
    """Process pid's state letter (/proc/PID/stat: "T" stopped, "Z" ...)."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def cpu_s(pid):
    """CPU seconds (user and system) pid used so far, from /proc/PID/stat."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_profiled(args, env_extra=None, timeout=120):
    """Run stacktreed with args; returns (outdir, stderr, workload report)."""
    out = tempfile.mkdtemp(prefix="st-it-")
    report = os.path.join(out, "workload.txt")
    env = dict(os.environ, WL_REPORT=report)
    env.update(env_extra or {})
    p = subprocess.run([STACKTREED, "-o", out] + args, env=env, capture_output=True,
                       text=True, timeout=timeout)
    check(p.returncode == 0, "stacktreed %s exited %d: %s" % (args, p.returncode, p.stderr))
    return out, p.stderr, read_report(report)


def read_report(path):
    """Lines 'phase NAME SECONDS' and 'thread NAME TID' from a workload."""
    phases, threads = {}, {}
    if os.path.exists(path):
        for line in open(path):
            kind, name, value = line.split()
            if kind == "phase":
                phases[name] = float(value)
            elif kind == "thread":
                threads[name] = int(value)
    return {"phases": phases, "threads": threads}


SCHEMA = os.path.join(ROOT, "schema", "profile.schema.json")
_validator = None


def inline_defs(schema, defs, within=()):
    """schema with each "$ref" to one of its $defs replaced by the
    definition (beside the ref's other keywords: an allOf), but for a
    definition within itself (version 3's nested node): the same rules,
    without the validator's reference lookup for each of a profile's rows
    (a 3.4 MB Java profile, 22,600 node rows: 11.6 s to validate, 5.6 s
    inlined)."""
    if isinstance(schema, list):
        return [inline_defs(v, defs, within) for v in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref", "")
    name = ref[len("#/$defs/"):] if ref.startswith("#/$defs/") else None
    if name not in defs or name in within:
        return {k: inline_defs(v, defs, within) for k, v in schema.items()}
    body = inline_defs(defs[name], defs, within + (name,))
    rest = {k: inline_defs(v, defs, within) for k, v in schema.items() if k != "$ref"}
    if not rest:
        return body
    rest["allOf"] = rest.get("allOf", []) + [body]
    return rest


def validate(prof, what):
    """Check a profile.json document against schema/profile.schema.json
    with a real validator (python3-jsonschema)."""
    global _validator
    if _validator is None:
        try:
            import jsonschema
        except ImportError:
            # Debian's python3-jsonschema, when python3 is another build
            # of 3.11 (pyenv's on the CI machine's image)
            import sys
            sys.path.append("/usr/lib/python3/dist-packages")
            try:
                import jsonschema
            except ImportError:
                raise Failure("python3-jsonschema is missing: install it "
                              "(scripts/deps.sh does)")
        with open(SCHEMA) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        schema = inline_defs(schema, schema["$defs"])
        jsonschema.Draft202012Validator.check_schema(schema)
        _validator = jsonschema.Draft202012Validator(schema)
    # version 3 nests a node per tree level, a few frames of the
    # validator's recursion each; trees are at most ST_TREE_MAX_DEPTH (2048)
    # deep. Version 4's rows are flat: the default limit holds
    import sys
    if "frames" not in prof and sys.getrecursionlimit() < 40000:
        sys.setrecursionlimit(40000)
    errors = sorted(_validator.iter_errors(prof), key=lambda e: list(e.absolute_path))
    check(not errors, "%s does not match schema/profile.schema.json: %s" % (what, "; ".join(
        "%s: %s" % ("/".join(str(p) for p in e.absolute_path) or "top level", e.message[:300])
        for e in errors[:5])))


def load(path, generated=False):
    """A profile.json (path, or the directory holding it), validated against
    the schema. notes and lost_by are given as {sentence: value}, as
    reports print them (the file keys them by stable id: see notes_by_id
    and lost_by_id, {id: value}). generated: the profile was rendered from
    a document the test wrote (its stacks were never walked)."""
    if os.path.isdir(path):
        path = os.path.join(path, "profile.json")
    with open(path) as f:
        prof = json.load(f)
    validate(prof, path)
    prof = tree_form(prof)
    for key in ("notes", "lost_by"):
        prof[key + "_id" if key == "lost_by" else "notes_by_id"] = {
            k: v["value"] for k, v in prof[key].items()}
        prof[key] = {v["text"]: v["value"] for v in prof[key].values()}
    # issue 20: no stack of any profile a test reads ends short of a root
    # unmarked (folded input names no roots: it is rendered as it came)
    if prof.get("event") != "folded" and not generated:
        check_stacks_end_at_roots(prof)
    return prof


# a version 4 frame row's fields, in order (schema/profile.schema.json)
FRAME_FIELDS = ("kind", "runtime", "function", "module", "offset", "address", "file", "line",
                "system_name", "class", "forced")


def arcflow(prof):
    """The "arcflow" entries of a profile.json document in version 4's
    shape, the one every test reads: {"index", "function", "calls", "base",
    "cum", "cum_all", "parents", "children"}, each row {"function",
    "calls", "base", "cum", "recursive"}, functions by name (a name that
    is not UTF-8 as its text, with U+FFFD, as version 4 wrote it). Version
    5's rows of numbers (schema/profile.schema.json, $defs/arcentry: an
    entry [function, calls, base, cum, cum_all, parents, children], its
    function an index into "strings"; a row [entry, calls, base, cum,
    recursive], entry an index into "arcflow") are turned into it; version
    4's entries, and a document tree_form() (load()) already turned, are
    returned as they are; [] when the document has no arcflow."""
    entries = prof.get("arcflow") or []
    if not entries or isinstance(entries[0], dict):
        return entries
    strs = prof["strings"]
    names = [s["text"] if isinstance(s, dict) else s for s in (strs[e[0]] for e in entries)]

    def rows(rs):
        return [{"function": names[o], "calls": calls, "base": base, "cum": cum,
                 "recursive": bool(rec)} for o, calls, base, cum, rec in rs]

    return [{"index": i, "function": names[i], "calls": e[1], "base": e[2], "cum": e[3],
             "cum_all": e[4], "parents": rows(e[5]), "children": rows(e[6])}
            for i, e in enumerate(entries)]


def tree_form(prof):
    """A profile.json document in the shape of version 3, which the tests
    read: each thread's "root" a node holding its "children". Version 4
    and 5 (flat "nodes" rows over "strings" and "frames") are turned into
    it without recursion, whatever the depth, and version 5's "arcflow"
    into version 4's (arcflow()); version 3 is returned as it is.
    The nodes have version 3's keys: function (function_raw when its bytes
    are not UTF-8), system_name, offset, module, address, kind, runtime,
    file and line, kernel: true (kernel frames), class, forced and symbol
    (data leaves), base, cum, calls, children."""
    if "frames" not in prof:
        return prof
    if "arcflow" in prof:
        prof["arcflow"] = arcflow(prof)
    strs = prof.pop("strings")

    def put(node, key, i):
        if i is None:
            node[key] = None
            return
        s = strs[i]
        if isinstance(s, dict):
            node[key], node[key + "_raw"] = s["text"], s["raw"]
        else:
            node[key] = s

    heads = []
    for row in prof.pop("frames"):
        f = dict(zip(FRAME_FIELDS, list(row) + [None] * (len(FRAME_FIELDS) - len(row))))
        kind, runtime = strs[f["kind"]], strs[f["runtime"]]
        n = {}
        if kind == "data":
            n["class"], n["forced"] = strs[f["class"]], bool(f["forced"])
            put(n, "symbol", f["function"])
            n["function"] = None
        else:
            put(n, "function", f["function"])
            if f["system_name"] is not None:
                put(n, "system_name", f["system_name"])
        n["offset"] = f["offset"]
        put(n, "module", f["module"])
        n["address"] = f["address"]
        n["kind"], n["runtime"] = kind, runtime
        if f["file"] is not None:
            put(n, "file", f["file"])
            n["line"] = f["line"]
        if runtime == "kernel":
            n["kernel"] = True
        heads.append(n)
    for t in prof["threads"]:
        made = []
        for parent, frame, base, cum, calls in t.pop("nodes"):
            n = dict(heads[frame], base=base, cum=cum, calls=calls, children=[])
            if parent is not None:
                made[parent]["children"].append(n)
            made.append(n)
        t["root"] = made[0]
    return prof


def stacks_short_of_a_root(prof, comms=None):
    """{"outermost frame (comm)": samples} of the stacks that end short of
    a root outside [truncated] (see check_stacks_end_at_roots)."""
    short = {}
    for t in prof["threads"]:
        if comms is not None and t["comm"] not in comms:
            continue
        for c in t["root"]["children"]:
            f = c["function"]
            if f not in ROOT_FRAMES and f not in ("[truncated]", "[kernel]") and \
                    not c.get("kernel"):
                key = "%s (%s)" % (f, t["comm"])
                short[key] = short.get(key, 0) + c["cum"]
    return short


def nodes(node, depth=0, parent=None):
    """Pre-order (node, depth, parent) over a tree."""
    stack = [(node, depth, parent)]
    while stack:
        n, d, p = stack.pop()
        yield n, d, p
        for c in reversed(n["children"]):
            stack.append((c, d + 1, n))


def check_invariants(prof):
    """cum == base + sum(children cum) everywhere, calls <= cum; the roots
    add up."""
    total = 0
    for t in prof["threads"]:
        root = t["root"]
        check(root["function"] is None, "root of tid %d has a function" % t["tid"])
        for n, _, _ in nodes(root):
            s = n["base"] + sum(c["cum"] for c in n["children"])
            check(n["cum"] == s, "tid %d: node %s cum %d != base+children %d"
                  % (t["tid"], n["function"], n["cum"], s))
            check(n["calls"] >= 0 and n["base"] >= 0, "negative counts")
            # a new call is counted on a sample through the node: never
            # more than its subtree's samples (BPF writes CALLS as deltas
            # summed per subtree, bpf/calls.h: one left unpaired would
            # wrap to ~2^64 here)
            check(n["calls"] <= max(n["cum"], 1), "tid %d: node %s CALLS %d > CUM %d"
                  % (t["tid"], n["function"], n["calls"], n["cum"]))
        check(t["samples"] == root["cum"], "thread samples != root cum")
        total += root["cum"]
    check(total == prof["samples"], "sum of thread samples %d != samples %d"
          % (total, prof["samples"]))
    # the header counts every stack cut short, whatever the reason
    cut = sum(c["cum"] for t in prof["threads"] for c in t["root"]["children"]
              if c["function"] == "[truncated]" and c["kind"] != "callsite")
    noted = prof["notes"].get(CUT_SHORT)
    check(noted is None or noted == cut, "header: %s stacks cut short, [truncated] roots hold %d"
          % (noted, cut))


CUT_SHORT = "stacks cut short ([truncated] root), all reasons"
# what stops a DWARF walk short (--unwind dwarf: each such sample is counted
# once, under one of these)
STOP_REASONS = ("stacks truncated at 768 frames", "unwind: no tables for the process yet",
                "unwind stopped: no CFI", "unwind stopped: stack read fault",
                "unwind stopped: unsupported CFI", "unwind stopped: bad frame",
                # the daemon's rule (user/model/roots.c), whatever the walk
                "stacks ending short of a thread entry (at a named frame)",
                "stacks ending short of a thread entry (at an unnamed frame)")


def check_cut_short_reasons(prof):
    """--unwind dwarf: the reasons add up to the stacks cut short."""
    reasons = sum(prof["notes"].get(r, 0) for r in STOP_REASONS)
    check(prof["notes"][CUT_SHORT] == reasons, "%d stacks cut short, reasons add up to %d: %s"
          % (prof["notes"][CUT_SHORT], reasons, prof["notes"]))


# The outermost frames of complete stacks (issue 20): a process's entry,
# main's caller, a thread's start (glibc's clone3 carries "return address
# undefined" CFI above start_thread), Go's thread and goroutine entries.
ROOT_FRAMES = frozenset(("_start", "__libc_start_call_main", "__libc_start_main",
                         "start_thread", "clone3", "__clone3", "clone", "__clone",
                         "runtime.goexit", "runtime.goexit.abi0", "runtime.mstart",
                         "runtime.mstart.abi0", "runtime.rt0_go", "runtime.rt0_go.abi0",
                         # Go's stack switches: the unwinder stops there (the
                         # daemon's list: user/model/roots.c)
                         "runtime.systemstack", "runtime.systemstack.abi0",
                         "runtime.mcall", "runtime.mcall.abi0",
                         "runtime.morestack", "runtime.morestack.abi0",
                         "runtime.asmcgocall", "runtime.asmcgocall.abi0"))


def check_stacks_end_at_roots(prof, comms=None):
    """Every stack (of the threads whose comm is in comms, default all) ends
    at a root frame (ROOT_FRAMES) or is under [truncated] (or has no user
    frame: [kernel], or kernel frames alone, as in a process's exit after
    its memory is gone): none stops short unmarked (issue 20)."""
    short = stacks_short_of_a_root(prof, comms)
    check(not short, "stacks ending short of a root outside [truncated] (outermost frame: "
          "samples): %s" % sorted(short.items(), key=lambda kv: -kv[1])[:8])


def check_unresolved_counts(prof):
    """The header's unresolved counts are the profile's: "unresolved" is
    the number of samples (BASE) with a call site or leaf (a Python frame
    included) on their path whose function is null or only a bracketed
    name ("[module+0xOFF]", "[python code]"), "unresolved_by" the same per
    module (null: "[unknown]"), each sample once per module."""
    total, by = 0, {}
    for t in prof["threads"]:
        stack = [(t["root"], frozenset())]
        while stack:
            n, mods = stack.pop()
            f = n["function"]
            if n["kind"] in ("callsite", "leaf", "python") and (f is None or f.startswith("[")):
                mods = mods | {n.get("module") or "[unknown]"}
            if n["base"] and mods:
                total += n["base"]
                for m in mods:
                    by[m] = by.get(m, 0) + n["base"]
            for c in n["children"]:
                stack.append((c, mods))
    check(prof["unresolved"] == total, "header: %d samples unresolved, the trees hold %d"
          % (prof["unresolved"], total))
    check(prof["unresolved_by"] == by, "header's unresolved_by %s, the trees' %s" % (
        sorted(prof["unresolved_by"].items(), key=lambda kv: -kv[1])[:5],
        sorted(by.items(), key=lambda kv: -kv[1])[:5]))


def function_cum(root, name):
    """Samples in which `name` is on the stack (outermost occurrences)."""
    total = 0
    stack = [(root, False)]
    while stack:
        n, inside = stack.pop()
        hit = n["function"] == name
        if hit and not inside:
            total += n["cum"]
        for c in n["children"]:
            stack.append((c, inside or hit))
    return total


def function_calls(root, name):
    return sum(n["calls"] for n, _, _ in nodes(root) if n["function"] == name)


def function_nodes(root, name):
    return [(n, p) for n, _, p in nodes(root) if n["function"] == name]


def thread(prof, tid):
    for t in prof["threads"]:
        if t["tid"] == tid:
            return t
    raise Failure("no tree for tid %d" % tid)


def main_thread(prof, comm):
    ts = [t for t in prof["threads"] if t["comm"] == comm and t["pid"] == t["tid"]]
    check(len(ts) == 1, "expected one main thread with comm %s, got %d" % (comm, len(ts)))
    return ts[0]


class Lines:
    """A child's pipe read line by line with a deadline. A select() on a
    text stream followed by its readline() loses lines: readline() takes
    all the pipe holds into the stream's buffer, and the next select()
    waits for bytes that already came (under load, a test's reader is
    late and finds two lines at once: "did not hold its main loop within
    60 s" with the line it waited for in that buffer). So the pipe's fd is
    read here, into a buffer of its own; rest() is what it holds (the
    stream itself is never read, communicate() reads the pipe after it)."""

    def __init__(self, stream):
        self.fd = stream.fileno()
        self.buf = b""
        self.eof = False

    def readline(self, end):
        """The next line (with its newline; at the end of the pipe what is
        left, "" when nothing), or None when none came by time end."""
        while True:
            i = self.buf.find(b"\n")
            if i >= 0 or self.eof:
                n = i + 1 if i >= 0 else len(self.buf)
                line, self.buf = self.buf[:n], self.buf[n:]
                return line.decode(errors="replace")
            ready, _, _ = select.select([self.fd], [], [], max(0.0, end - time.time()))
            if not ready:
                return None
            data = os.read(self.fd, 65536)
            self.buf += data
            self.eof = not data

    def rest(self):
        left, self.buf = self.buf, b""
        return left.decode(errors="replace")


class Daemon:
    """stacktreed in the background (--pid or -a): started() returns once it
    says that sampling has started, so that no test depends on how long
    loading and attaching the BPF programs takes. readline(end) reads its
    stderr on (Lines). stop() sends SIGINT and returns (exit status, all
    of stderr)."""

    def __init__(self, args, timeout=60, env=None):
        self.p = subprocess.Popen([STACKTREED] + list(args), stderr=subprocess.PIPE, text=True,
                                  env=env)
        self.pid = self.p.pid
        self.head = []
        self.lines = Lines(self.p.stderr)
        end = time.time() + timeout
        while True:
            line = self.readline(end)
            if not line:	# none in time, or exited before sampling
                break
            if "stacktreed: sampling at" in line:
                return
        self.p.kill()
        _, rest = self.p.communicate()
        raise Failure("stacktreed %s did not start sampling within %d s: %s"
                      % (args, timeout, "".join(self.head) + self.lines.rest() + rest))

    def readline(self, end):
        """Its next line of stderr, kept in head (Lines.readline())."""
        line = self.lines.readline(end)
        if line:
            self.head.append(line)
        return line

    def stop(self, sig=signal.SIGINT, timeout=60):
        if sig is not None:
            self.p.send_signal(sig)
        _, rest = self.p.communicate(timeout=timeout)
        return self.p.returncode, "".join(self.head) + self.lines.rest() + rest


def _die_with_parent():
    """preexec_fn: the child gets SIGKILL when the test runner dies, even by
    SIGKILL, so a killed run leaves no spinner behind (prctl
    PR_SET_PDEATHSIG; the runner starts them from its main thread)."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)


def burner(argv=("python3", "-c", "while True: pass")):
    """One busy loop (a process keeping a CPU busy) that dies with the
    runner; the caller kills and waits for it when done."""
    return subprocess.Popen(list(argv), preexec_fn=_die_with_parent)


@contextlib.contextmanager
def busy_cpus(n=2):
    """Both CPUs of the test machine kept busy while the block runs: n
    spinning python3 processes (Python processes too, for -a)."""
    burners = [burner() for _ in range(n)]
    try:
        yield burners
    finally:
        for b in burners:
            b.kill()
            b.wait()


def metric(name, value):
    """Records a measured quantity of a test (for bench/spread.py, which
    runs tests many times to derive their tolerances); no-op otherwise."""
    path = os.environ.get("ST_METRICS")
    if path:
        with open(path, "a") as f:
            f.write("%s %r\n" % (name, float(value)))


def c_source(path, nfuncs, seed=42):
    """Writes a C file of nfuncs function pairs (a struct, a loop over a
    switch, a call chain: about 530 bytes each) for real compilers to work
    on; clang-14 -O2 takes about 7 ms per function here."""
    import random
    r = random.Random(seed)
    with open(path, "w") as f:
        f.write("#include <string.h>\n")
        for i in range(nfuncs):
            n, m = r.randint(4, 64), r.randint(10, 100)
            f.write("""
struct s%d { int a[%d]; double d; char name[32]; };
static int helper%d(struct s%d *p, int k)
{
	int acc = 0;
	for (int i = 0; i < %d; i++) {
		switch ((i + k) %% 5) {
		case 0: acc += p->a[i %% %d] * %d; break;
		case 1: acc ^= (int)(p->d * i); break;
		case 2: acc -= (int)strlen(p->name) + i; break;
		case 3: p->a[(i + %d) %% %d] = acc; break;
		default: acc = acc * 31 + %d;
		}
	}
	return acc;
}
int func%d(int k)
{
	struct s%d v;
	memset(&v, k, sizeof(v));
	v.d = k * 0.5;
	return helper%d(&v, k) + %s;
}
""" % (i, n, i, i, m, n, r.randint(1, 99), r.randint(1, 9), n, r.randint(1, 1000), i, i, i,
       ("func%d(k - 1)" % (i - 1)) if i else "0"))
    return path


def perf_stacks(data, comm, under="main", skip_leaf_in=None, pids=None):
    """The set of function names (user frames) on each stack of comm's main
    threads in a perf.data file (perf script), for the samples whose stack
    reaches `under` (perf's own complete stacks; the loader's are not;
    None: every sample, an empty set for one without user frames).
    skip_leaf_in: leave out the samples whose innermost user frame is in a
    module whose path contains it. pids: a set that gets the pid of every
    comm process perf sampled."""
    p = subprocess.run(["perf", "script", "-i", data, "-F", "comm,pid,tid,ip,sym,dso",
                        "--no-inline"], capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "perf script: " + p.stderr[-500:])
    for block in p.stdout.split("\n\n"):
        lines = block.strip("\n").splitlines()
        if not lines:
            continue
        head = lines[0].split()
        if len(head) < 2 or head[0] != comm:
            continue
        pid, tid = head[1].split("/")
        if pid != tid:
            continue
        if pids is not None:
            pids.add(int(pid))
        seen, leaf_dso = set(), None
        for line in lines[1:]:
            parts = line.split(None, 1)
            # user frames only (perf records the kernel's too, stacktreed
            # without --kernel does not)
            if len(parts) == 2 and not parts[0].startswith("ffffffff"):
                sym, dso = parts[1].strip(), ""
                if sym.endswith(")") and " (" in sym:	# "name (/path/of/dso)"
                    sym, dso = sym.rsplit(" (", 1)
                if leaf_dso is None:
                    leaf_dso = dso
                seen.add(sym)
        if skip_leaf_in and leaf_dso and skip_leaf_in in leaf_dso:
            continue
        if under is None or under in seen:
            yield seen


def child_of(ppid, comm, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        for pid in os.listdir("/proc"):
            try:
                with open("/proc/%s/stat" % pid) as f:
                    st = f.read()
            except OSError:
                continue
            name = st[st.index("(") + 1:st.rindex(")")]
            if name == comm and int(st[st.rindex(")") + 2:].split()[1]) == ppid:
                return int(pid)
        time.sleep(0.01)
    raise AssertionError("no process %s under pid %d" % (comm, ppid))


def perf_command(ctl, ack, cmd, timeout=30):
    """Send cmd to a perf record's --control fifo and wait for its ack."""
    deadline = time.time() + timeout
    fd = None
    while fd is None:	# perf opens the fifo for reading as it starts
        try:
            fd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            check(e.errno == errno.ENXIO and time.time() < deadline,
                  "perf record --control %s: %s" % (ctl, e))
            time.sleep(0.01)
    try:
        os.write(fd, (cmd + "\n").encode())
    finally:
        os.close(fd)
    afd = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
    try:
        got = b""
        while b"ack" not in got:
            check(time.time() < deadline, "perf record --control: no ack for " + cmd)
            r, _, _ = select.select([afd], [], [], 0.1)
            if r:
                got += os.read(afd, 64)
    finally:
        os.close(afd)


def pid_beside_perf(perf_cmd, comm, go, daemon_args, env=None, timeout=300):
    """perf_cmd (perf record -- ...) starts a program, its child named comm,
    which waits for the file go; stacktreed daemon_args --pid follows that
    child from before it starts. perf's events start disabled and are
    enabled (--control) just before the file is made, so that neither
    profiler counts the child's wait for it: on a busy machine stacktreed's
    start-up takes seconds, and perf at 3 kHz charged ~2% of its samples to
    the waiting loop under main (CI, test_lld_layout_matches_gnu_ld). Both
    profilers are waited for. Returns stacktreed's stderr."""
    ctl, ack = go + ".perf-ctl", go + ".perf-ack"
    os.mkfifo(ctl)
    os.mkfifo(ack)
    i = perf_cmd.index("record") + 1
    perf_cmd = perf_cmd[:i] + ["-D", "-1", "--control", "fifo:%s,%s" % (ctl, ack)] + perf_cmd[i:]
    perf = subprocess.Popen(perf_cmd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        d = Daemon(list(daemon_args) + ["--pid", str(child_of(perf.pid, comm))])
        perf_command(ctl, ack, "enable")
        open(go, "w").close()
        rc, err = d.stop(sig=None, timeout=timeout)	# it ends with its target
        check(rc == 0, "stacktreed --pid: " + err)
        _, perr = perf.communicate(timeout=timeout)
        check(perf.returncode == 0, "perf record: " + perr[-500:])
    finally:
        if perf.poll() is None:
            perf.kill()
            perf.wait()
    return err
