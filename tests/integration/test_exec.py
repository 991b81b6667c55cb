"""An exec starts a new image (issue 10, item 5): forkexec works, forks, and
its child works, then execs phases. The child's samples before the exec stay
under the name forkexec, symbolized against forkexec; after it, they are
phases's: its name, its functions, and no frame of forkexec under them.
Both launched (-- CMD, the child is a target as a child of the command) and
system-wide (-a)."""
import os
import subprocess
import tempfile

from stcheck import (Daemon, check, check_invariants, function_cum, load, nodes, run_profiled,
                     workload)

PRE_EXEC = ("before_exec_work", "child_before_exec")
PHASES = ("phase_a", "phase_b", "phase_c")


def check_images(prof, what, invariants=True):
    if invariants:
        check_invariants(prof)
    post = [t for t in prof["threads"] if t["comm"] == "phases"]
    check(len(post) == 1, "%s: expected one phases thread, got %s" % (
        what, [(t["pid"], t["tid"], t["comm"]) for t in prof["threads"]]))
    post = post[0]
    child = post["pid"]
    pre = [t for t in prof["threads"] if t["pid"] == child and t["comm"] != "phases"]
    parent = [t for t in prof["threads"] if t["comm"] == "forkexec" and t["pid"] != child]
    check(len(pre) == 1 and pre[0]["comm"] == "forkexec",
          "%s: the child's pre-exec samples: %s" % (what, [(t["pid"], t["comm"]) for t in pre]))
    check(len(parent) == 1, "%s: the parent: %s" % (what, [(t["pid"], t["comm"]) for t in parent]))
    pre, parent = pre[0], parent[0]
    # after the exec: phases's own frames only
    for n, _, _ in nodes(post["root"]):
        check(n["function"] not in PRE_EXEC and n["function"] != "main" or
              (n.get("module") or "").endswith("/phases"),
              "%s: %s (%s) under the exec'd image" % (what, n["function"], n.get("module")))
        check(not (n.get("module") or "").endswith("/forkexec"),
              "%s: a forkexec frame (%s) under phases" % (what, n["function"]))
    for ph in PHASES:
        check(function_cum(post["root"], ph) > 0, "%s: no %s under phases" % (what, ph))
    check(function_cum(post["root"], "main") >= 0.95 * post["samples"],
          "%s: %d of %d phases samples under main" % (what, function_cum(post["root"], "main"),
                                                     post["samples"]))
    # before it: the child's work, symbolized against forkexec
    before = function_cum(pre["root"], "child_before_exec")
    check(before >= 0.8 * pre["samples"] and before > 50,
          "%s: %d of %d pre-exec samples in child_before_exec" % (what, before, pre["samples"]))
    for t in (pre, parent):
        for n, _, _ in nodes(t["root"]):
            mod = n.get("module") or ""
            check(not mod.endswith("/phases"),
                  "%s: a phases frame in pid %d's %s image" % (what, t["pid"], t["comm"]))
            if n["function"] is None and mod.endswith("/forkexec"):
                check(False, "%s: unsymbolized forkexec frame %s" % (what, n.get("address")))
    check(function_cum(parent["root"], "before_exec_work") > 100,
          "%s: the parent's work is missing" % what)


def test_fork_then_exec_launched():
    for mode in ("auto", "fp"):
        out, err, _ = run_profiled(["--unwind", mode, "-F", "999", "--", workload("forkexec"),
                                    workload("phases")], env_extra={"WL_SCALE": "0.5"})
        check_images(load(out), "-- CMD --unwind " + mode)


def test_fork_then_exec_system_wide():
    out = tempfile.mkdtemp(prefix="st-exec-")
    d = Daemon(["-a", "-F", "999", "-o", out])
    try:
        p = subprocess.Popen([workload("forkexec"), workload("phases")], stdout=subprocess.PIPE,
                             text=True, env=dict(os.environ, WL_SCALE="0.5"))
        output, _ = p.communicate(timeout=60)
    finally:
        rc, err = d.stop()
    check(p.returncode == 0 and rc == 0, "forkexec %d, stacktreed %d: %s" % (p.returncode, rc, err))
    child = [int(l.split()[-1]) for l in output.splitlines() if l.startswith("forkexec: child")]
    check(len(child) == 1, "forkexec did not name its child: %r" % output)
    prof = load(out)
    check_invariants(prof)
    # the whole system's threads: only this run's two processes are checked
    prof["threads"] = [t for t in prof["threads"] if t["pid"] in (p.pid, child[0])]
    check_images(prof, "-a", invariants=False)
    # python's child between its fork and its exec of forkexec (sampled in
    # about half of the runs): python3's, named so even when its samples are
    # unwound by the daemon after the exec, with no frame of forkexec
    parent = [t for t in prof["threads"] if t["comm"] == "forkexec" and
              not any(u["pid"] == t["pid"] and u["comm"] == "phases" for u in prof["threads"])]
    for t in prof["threads"]:
        if t["pid"] != parent[0]["pid"] or t["comm"] == "forkexec":
            continue
        check(t["comm"] == "python3", "-a: pid %d before its exec of forkexec is named %r" % (
            t["pid"], t["comm"]))
        for n, _, _ in nodes(t["root"]):
            check(not (n.get("module") or "").endswith("/forkexec"),
                  "-a: a forkexec frame (%s) before the exec" % n["function"])
