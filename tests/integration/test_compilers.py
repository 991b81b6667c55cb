"""Integration tests on real compilers from Debian packages (issue 10):
gcc's cc1 and clang-14 (with libLLVM) compiling a generated C file of a few
hundred KB, launched (-- CMD) and system-wide (-a) while other work keeps
both CPUs busy. cc1 is forked and exec'd by the gcc driver during the
session: its samples taken before its unwind tables were in are unwound
later by the daemon (deferred unwinding), so that its stacks are complete
from its first sample (--no-unwind-cache: tables compiled during the run, as
on a first run). Checked: >= 99% of each compiler process's samples
have a complete stack (under _start, not [truncated]), the process carries
its own name, and no sample is missing from the count. The per-function
CUM shares of each compiler process agree with `perf record --call-graph
dwarf` profiling the same compile, with stacktreed following it by --pid,
launching it (-- perf record -- compiler) and system-wide (-a)."""
import os
import shutil
import subprocess
import tempfile

from stcheck import (SANITIZED, STACKTREED, Daemon, burner, busy_cpus, check, check_invariants, c_source,
                     child_of, load, metric, perf_stacks, pid_beside_perf, run_profiled)

GCC = shutil.which("gcc")
CLANG = shutil.which("clang-14")
# source size: 600 function pairs, ~320 KB; gcc -O2 takes ~5 s here
NFUNCS = 600


# the outermost frames of complete stacks: the program's entry, and the
# dynamic loader's (_start, then _dl_start_user, which it falls into and
# which calls the libraries' initializers)
COMPLETE_ROOTS = ("_start", "_dl_start_user")


def stack_roots(t):
    roots = {}
    for c in t["root"]["children"]:
        roots[c["function"]] = roots.get(c["function"], 0) + c["cum"]
    return roots


def check_complete(prof, comm, what, min_samples=500, min_share=0.99, pids=None):
    """One process named comm (pids: of those pids, under -a on a machine
    that runs other programs of that name); >= 99% of its samples with user
    frames are under _start (a sample without user frames, [kernel], is no
    stack to unwind: exec and exit)."""
    ts = [t for t in prof["threads"] if t["comm"] == comm and (pids is None or t["pid"] in pids)]
    check(ts, "%s: no thread named %s: %s" % (what, comm,
                                             sorted({t["comm"] for t in prof["threads"]})))
    total = sum(t["samples"] - stack_roots(t).get("[kernel]", 0) for t in ts)
    complete = sum(stack_roots(t).get(r, 0) for t in ts for r in COMPLETE_ROOTS)
    roots = {}
    for t in ts:
        for k, v in stack_roots(t).items():
            roots[k] = roots.get(k, 0) + v
    metric("%s.%s.complete_share" % (what, comm), complete / max(total, 1))
    metric("%s.%s.samples" % (what, comm), total)
    check(total >= min_samples, "%s: only %d samples of %s" % (what, total, comm))
    if SANITIZED:	# the ASan daemon compiles 5-10x slower: the deferred ring overflows
        min_share = 0.5
    check(complete >= min_share * total, "%s: %d of %d samples of %s have a complete stack; roots: "
          "%s; %s" % (what, complete, total, comm,
                      sorted(roots.items(), key=lambda x: -x[1])[:6],
                      "; ".join("%s: %d" % kv for kv in sorted(prof["notes"].items())
                                if "unwind" in kv[0] or "cut short" in kv[0] or
                                "deferred" in kv[0])))
    return total


def test_gcc_cc1_complete_from_its_first_sample():
    check(GCC, "gcc is not installed (scripts/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="st-gcc-")
    src = c_source(os.path.join(tmp, "big.c"), NFUNCS)
    out, err, _ = run_profiled(["-F", "999", "--no-unwind-cache", "--", GCC, "-O2", "-c", src, "-o",
                                os.path.join(tmp, "big.o")], timeout=300)
    prof = load(out)
    check_invariants(prof)
    check(prof["lost"] == 0, "samples lost: %s" % prof["lost_by"])
    # ~5,000 samples here; a machine twice as fast gives half
    check_complete(prof, "cc1", "gcc", min_samples=1000)
    shutil.rmtree(tmp, ignore_errors=True)


def test_clang_complete_from_its_first_sample():
    check(CLANG, "clang-14 is not installed (scripts/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="st-clang-")
    # the whole file: half of it gave 917 samples on a faster machine (CI)
    src = c_source(os.path.join(tmp, "big.c"), NFUNCS)
    out, err, _ = run_profiled(["-F", "999", "--no-unwind-cache", "--", CLANG, "-O2", "-c", src, "-o",
                                os.path.join(tmp, "big.o")], timeout=300)
    prof = load(out)
    check_invariants(prof)
    check(prof["lost"] == 0, "samples lost: %s" % prof["lost_by"])
    check("unwind memory full" not in err, err)
    check_complete(prof, "clang-14", "clang", min_samples=500)
    # sampled from its exec on: the loader mapping and relocating libLLVM
    # and libclang-cpp (~0.1 s, ~100 samples here) is in the profile, with
    # complete stacks (ld.so's own _start), once the exec-time tables (clang
    # and ld.so) are in: within milliseconds, but the sanitized daemon
    # takes longer than the loader's work
    loader = sum(c["cum"] for t in prof["threads"] if t["comm"] == "clang-14"
                 for c in t["root"]["children"] if c["function"] in COMPLETE_ROOTS and
                 "/ld-linux" in (c.get("module") or ""))
    metric("clang.loader_samples", loader)
    check(loader >= 10 or SANITIZED, "clang: %d samples in the dynamic loader" % loader)
    shutil.rmtree(tmp, ignore_errors=True)


def on_a_busy_machine(compiler, comm, what, nfuncs, launched):
    """While two busy loops keep both CPUs loaded, stacktreed -a (or, when
    launched, stacktreed -- compiler): the compiler process, born during
    the session, gets complete stacks and its own name."""
    check(compiler, "%s is not installed (scripts/deps.sh installs it)" % what)
    tmp = tempfile.mkdtemp(prefix="st-%s-busy-" % what)
    src = c_source(os.path.join(tmp, "big.c"), nfuncs)
    out = os.path.join(tmp, "out")
    cmd = [compiler, "-O2", "-c", src, "-o", os.path.join(tmp, "big.o")]
    with busy_cpus():
        if launched:
            p = subprocess.run([STACKTREED, "-F", "499", "--no-unwind-cache", "-o", out, "--"] +
                               cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               timeout=300)
            rc, err = p.returncode, p.stderr
        else:
            d = Daemon(["-a", "-F", "499", "--no-unwind-cache", "-o", out])
            cc = subprocess.Popen(cmd)
            # this compile's processes: not another build's of that name
            pids = {cc.pid}
            if os.path.basename(compiler)[:15] != comm:	# (clang-14 is its own)
                pids.add(child_of(cc.pid, comm))
            check(cc.wait(timeout=300) == 0, "%s failed" % what)
            rc, err = d.stop()
    check(rc == 0, "stacktreed exited %d: %s" % (rc, err[-800:]))
    prof = load(out)
    check_invariants(prof)
    check(prof["lost"] == 0, "samples lost: %s" % prof["lost_by"])
    # The compiler shares two CPUs with two busy loops: about a third of
    # its time. Measured (gcc, 8 runs, -a): 99.84-99.91% of cc1's samples
    # complete; 75-93% before unwind tables named their image and the
    # modules waited for were compiled at once, and with five other build
    # jobs on the machine (docs/limits.md).
    check_complete(prof, comm, "%s %s busy" % (what, "cmd" if launched else "-a"),
                   min_samples=300, pids=None if launched else pids)
    shutil.rmtree(tmp, ignore_errors=True)


def test_gcc_under_system_wide_on_a_busy_machine():
    on_a_busy_machine(GCC, "cc1", "gcc", NFUNCS // 2, False)


def test_clang_under_system_wide_on_a_busy_machine():
    on_a_busy_machine(CLANG, "clang-14", "clang", NFUNCS // 2, False)


def test_gcc_launched_on_a_busy_machine():
    on_a_busy_machine(GCC, "cc1", "gcc", NFUNCS // 2, True)


def test_clang_launched_on_a_busy_machine():
    on_a_busy_machine(CLANG, "clang-14", "clang", NFUNCS // 2, True)


def plain_name(name):
    """A demangled C++ name without its parameter list (perf script's form):
    'ns::f(int, char*) const' -> 'ns::f'."""
    if not name:
        return name
    if name.endswith(" const"):
        name = name[:-len(" const")]
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(name[i], 0)
        if depth == 0:
            return drop_return_type(name[:i]) if i > 0 else name
    return name


def same_form(name):
    """One spelling of nested template brackets: perf's demangler writes
    'A<B<C>>' where libiberty writes 'A<B<C> >'."""
    while "> >" in name:
        name = name.replace("> >", ">>")
    return name


def drop_return_type(name):
    """A template function's demangled name starts with its return type
    ('llvm::PreservedAnalyses llvm::f<...>'): the part after the last space
    outside brackets, but not the one of 'operator new'."""
    depth, cut = 0, 0
    for i, c in enumerate(name):
        depth += {"<": 1, "(": 1, "[": 1, ">": -1, ")": -1, "]": -1}.get(c, 0)
        if c == " " and depth == 0 and not name[:i].endswith("operator"):
            cut = i + 1
    return name[cut:]


def plain_cums(root, skip_leaf_in=None, under=None):
    """Samples with each function (plain name) on the stack, outermost
    occurrences only (recursion counted once). skip_leaf_in: leave out the
    samples whose leaf (innermost user frame) is in a module whose path
    contains it; under: only the samples with that function on the stack
    (as perf_stacks takes perf's)."""
    cums = {}
    stack = [(root, frozenset())]
    while stack:
        n, above = stack.pop()
        f = plain_name(n.get("function"))
        f = same_form(f) if f else f
        if f and f not in above:
            above = above | {f}
        base = n.get("base", 0)
        if base and not (skip_leaf_in and skip_leaf_in in (n.get("module") or "")) and \
                (under is None or under in above):
            for g in above:
                cums[g] = cums.get(g, 0) + base
        for c in n["children"]:
            stack.append((c, above))
    return cums


# the module whose leaf samples the perf comparison leaves out
LIBC = "/libc.so.6"

# main's callers: the shares compared are of main's samples
OUTSIDE_MAIN = ("_start", "__libc_start_main", "__libc_start_main@@GLIBC_2.34",
                "__libc_start_call_main")


def perf_record(data, cmd):
    """perf at 999 Hz with the largest stack copies it takes (compilers'
    stacks are deeper than perf's default 8 KiB; a stack cut short in perf
    is not compared, and deep ones left out bias perf's shares towards
    shallow functions)."""
    return ["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "--call-graph",
            "dwarf,65528", "-m", "16M", "-o", data, "--"] + cmd


def profile_beside_perf(cmd, tmp, mode):
    """One run of cmd profiled by perf and by stacktreed at once (stacktreed
    at 1999 Hz: timers that cannot lock), stacktreed in the given mode:
    'pid', perf starts the program, which waits for a start file, and
    stacktreed --pid follows it to its children; 'cmd', stacktreed -- perf
    record -- cmd (the program is a child of the command); 'all',
    stacktreed -a while perf record -- cmd runs. Returns stacktreed's
    output directory and perf's data file."""
    data, out, go = (os.path.join(tmp, n) for n in ("perf.data", "st", "go"))
    if mode == "cmd":
        p = subprocess.run([STACKTREED, "-o", out, "-F", "1999", "--"] + perf_record(data, cmd),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=300)
        check(p.returncode == 0, "stacktreed -- perf record exited %d: %s" % (p.returncode,
                                                                              p.stderr[-500:]))
        return out, data
    if mode == "all":
        d = Daemon(["-a", "-o", out, "-F", "1999"])
        try:
            p = subprocess.run(perf_record(data, cmd), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, timeout=300)
        finally:
            rc, err = d.stop()
        check(p.returncode == 0, "perf record: " + p.stderr[-500:])
        check(rc == 0, "stacktreed -a: " + err)
        return out, data
    pid_beside_perf(perf_record(data, ["sh", "-c", 'while [ ! -e "$0" ]; do sleep 0.01; '
                                       'done; exec "$@"', go] + cmd),
                    "sh", go, ["-o", out, "-F", "1999"])
    return out, data


def cum_shares_against_perf(compiler, comm, nfuncs, mode):
    """A compile of a generated file: shares_against_perf."""
    check(compiler, "%s is not installed (scripts/deps.sh installs it)" % comm)
    tmp = tempfile.mkdtemp(prefix="st-perf-%s-%s-" % (comm, mode))
    try:
        src = c_source(os.path.join(tmp, "big.c"), nfuncs)
        shares_against_perf([compiler, "-O2", "-c", src, "-o", os.path.join(tmp, "big.o")],
                            comm, mode, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def shares_against_perf(cmd, comm, mode, tmp, min_compared=5, entry="main", replaced=(),
                        min_complete=0.99):
    """comm's per-function CUM shares against `perf record --call-graph
    dwarf` profiling the same run of cmd (profile_beside_perf: stacktreed
    --pid, -- CMD or -a, its files in tmp): >= 99% (min_complete) of comm's
    samples have a complete stack here, and every function on more than 5% of perf's
    complete stacks (those that reach main) agrees within sampling noise,
    never worse than 2 points (at least min_compared functions). The shares
    are of the samples under entry (the program's main function, or the
    function main tail-calls: its frame is not on the stack then).
    Both sides leave out the samples whose leaf is in libc: in some runs
    perf cannot unwind out of libc's leaf functions (memset, malloc: 11% of
    cc1's samples stop there, not reaching main, while 99% do in others),
    and leaving them out of its side only made every other function's share
    there 1-2.5 points higher than here (cgraph_node::expand 88.2% against
    86.2%). Functions named in replaced are not compared: frames stacktreed
    shows as something else on purpose (an interpreter's evaluation loop,
    whose place its Python frames take)."""
    from test_dwarf import agreement_tolerance
    check(shutil.which("perf"), "perf is needed (scripts/deps.sh installs linux-perf)")
    out, data = profile_beside_perf(cmd, tmp, mode)
    theirs, n_theirs, pids = {}, 0, set()
    for seen in perf_stacks(data, comm, under=entry, skip_leaf_in=LIBC, pids=pids):
        n_theirs += 1
        for f in {same_form(f) for f in seen}:
            theirs[f] = theirs.get(f, 0) + 1
    prof = load(out)
    check_invariants(prof)
    # the run's own processes: under -a, other programs of that name on a
    # busy machine (a build's cc1, 2026-11-29: 16,383 samples under main
    # where perf's run had 4,771) are not the run perf profiled
    ts = [t for t in prof["threads"] if t["comm"] == comm and t["pid"] in pids]
    check(ts, "no %s thread of pids %s: %s" % (
        comm, sorted(pids), [(t["pid"], t["comm"]) for t in prof["threads"]][:40]))
    ours, total, complete = {}, 0, 0
    for t in ts:
        total += t["samples"] - stack_roots(t).get("[kernel]", 0)
        complete += sum(stack_roots(t).get(r, 0) for r in COMPLETE_ROOTS)
        for f, n in plain_cums(t["root"], skip_leaf_in=LIBC, under=entry).items():
            ours[f] = ours.get(f, 0) + n
    check(complete >= min_complete * total, "%d of %d %s samples complete; roots %s; %s" % (
        complete, total, comm, sorted(((k, v) for t in ts for k, v in stack_roots(t).items()),
                                      key=lambda kv: -kv[1])[:8],
        "; ".join("%s: %d" % kv for kv in sorted(prof["notes"].items()) if "unwind" in kv[0])))
    n_ours = ours.get(entry, 0)	# past the dynamic loader, as perf's are
    # (its share of the total is not asked: samples whose leaf is in libc,
    # half of sqlite3's, are left out of n_ours, and completeness is above)
    check(n_ours > 0, "%s: no sample under %s" % (comm, entry))
    check(n_theirs > 1000, "perf: only %d complete %s samples" % (n_theirs, comm))
    compared = 0
    for f, n in sorted(theirs.items(), key=lambda kv: -kv[1]):
        p_theirs = 100.0 * n / n_theirs
        if p_theirs < 5.0 or f.startswith("[") or f in OUTSIDE_MAIN or \
                any(f.startswith(r) for r in replaced):
            continue
        p_ours = 100.0 * ours.get(f, 0) / n_ours
        tol = agreement_tolerance(p_ours, n_ours, p_theirs, n_theirs)
        metric("perf_dwarf.%s.%s.%s.diff_pts" % (mode, comm, f), p_ours - p_theirs)
        check(abs(p_ours - p_theirs) <= tol, "%s: %s %.2f%% of %d samples here, %.2f%% of %d in "
              "perf, tolerance %.2f" % (comm, f, p_ours, n_ours, p_theirs, n_theirs, tol))
        compared += 1
    check(compared >= min_compared, "only %d functions above 5%% in perf's %s stacks" %
          (compared, comm))
    return prof


def test_gcc_cum_shares_agree_with_perf_dwarf():
    cum_shares_against_perf(GCC, "cc1", NFUNCS // 2, "pid")


def test_clang_cum_shares_agree_with_perf_dwarf():
    cum_shares_against_perf(CLANG, "clang-14", NFUNCS // 2, "pid")


def test_gcc_cum_shares_agree_with_perf_dwarf_under_command():
    cum_shares_against_perf(GCC, "cc1", NFUNCS // 2, "cmd")


def test_clang_cum_shares_agree_with_perf_dwarf_under_command():
    cum_shares_against_perf(CLANG, "clang-14", NFUNCS // 2, "cmd")


def test_gcc_cum_shares_agree_with_perf_dwarf_system_wide():
    cum_shares_against_perf(GCC, "cc1", NFUNCS // 2, "all")


def test_clang_cum_shares_agree_with_perf_dwarf_system_wide():
    cum_shares_against_perf(CLANG, "clang-14", NFUNCS // 2, "all")


DEFER_LOST = "unwind: samples not deferred (ring buffer full)"


def test_no_deferred_sample_lost_while_compiles_start_at_once():
    """-a while four gcc and two clang-14 compiles start at once and two busy
    loops keep both CPUs loaded (--no-unwind-cache: cc1's and libLLVM's
    tables compiled during the run, seconds of the daemon's main thread):
    the compilers' first samples wait in the deferred ring meanwhile, read
    by the daemon's own consumer thread, not by its main loop. No sample is
    lost: not by the daemon's queue, which stops reading the ring when it
    is full (issue 37 item 5: 70,564 dropped there on a machine loaded
    3-11), so that the ring fills instead and BPF folds the samples as
    walked, counted ("not deferred (ring buffer full)"), in both builds.
    Measured (the same scenario, main before the thread, 2 runs): 1,044 and
    5,724 samples did not fit in the ring when the main loop read it; none
    idle since (0 in 8 runs, 6,000-9,000 unwound late); 11-24 s (ASan
    included) idle. The waits are hang guards, not measures: 600 s for the
    compiles and 300 s for the daemon's last walk (one compile took 120 s
    of wall time with the machine's load at 16 on 2 CPUs)."""
    check(GCC and CLANG, "gcc and clang-14 are needed (scripts/deps.sh installs them)")
    tmp = tempfile.mkdtemp(prefix="st-defer-ring-")
    src = c_source(os.path.join(tmp, "big.c"), NFUNCS // 4)
    out = os.path.join(tmp, "out")
    burners, ccs, d = [], [], None
    try:
        burners = [burner() for _ in range(2)]
        d = Daemon(["-a", "-F", "999", "--no-unwind-cache", "-o", out])
        for i, cc in enumerate([GCC, GCC, GCC, GCC, CLANG, CLANG]):
            ccs.append(subprocess.Popen([cc, "-O2", "-c", src, "-o",
                                         os.path.join(tmp, "o%d.o" % i)]))
        for p in ccs:
            check(p.wait(timeout=600) == 0, "a compile failed")
    finally:
        for p in ccs + burners:
            if p.poll() is None:
                p.kill()
                p.wait()
        if d:
            rc, err = d.stop(timeout=300)
    check(rc == 0, "stacktreed -a exited %d: %s" % (rc, err))
    prof = load(out)
    check_invariants(prof)
    late = prof["notes"].get("unwind: samples unwound late in the daemon", 0)
    notes = {k: v for k, v in prof["notes"].items() if "defer" in k or "late" in k}
    dropped = sum(v for k, v in list(prof["notes"].items()) + list(prof["lost_by"].items())
                  if "queue full" in k)
    metric("defer_ring.late_unwound", late)
    metric("defer_ring.not_deferred", prof["notes"].get(DEFER_LOST, 0))
    # the scenario deferred samples (else it tests nothing)
    check(late > 0, "no sample was deferred: %s" % sorted(prof["notes"].items()))
    check(dropped == 0, "deferred samples dropped by the daemon's queue: %s" % notes)
    check(prof["lost"] == 0, "samples lost: %s; %s" % (prof["lost_by"], notes))
    shutil.rmtree(tmp, ignore_errors=True)
