"""Integration tests of page-fault profiles (--event faults): a workload that
touches a known number of pages of a .bss array, a .data array, its stack in
a recursion and a malloc'd block; counts by class and symbol are checked."""
import os
import subprocess

from stcheck import (STACKTREE, arcflow, check, check_invariants, function_nodes, load,
                     main_thread, nodes, run_profiled, workload)

# function -> (expected class, expected symbol or None)
EXPECT = {
    "touch_bss": ("module", "bss_pages"),
    "touch_data": ("module", "data_pages"),
    "recurse": ("stack", None),
    "touch_heap": ("heap", None),
}


def data_leaves_under(root, fn):
    """Data leaves hanging directly under fn's nodes: class -> [leaf]."""
    out = {}
    for n, _ in function_nodes(root, fn):
        for c in n["children"]:
            if c["kind"] == "data":
                out.setdefault(c["class"], []).append(c)
    return out


def leaf_totals(prof):
    """(class, symbol) -> faults over every data leaf of the profile."""
    out = {}
    for t in prof["threads"]:
        for n, _, _ in nodes(t["root"]):
            if n["kind"] == "data":
                key = (n["class"], n["symbol"])
                out[key] = out.get(key, 0) + n["base"]
    return out


def check_fault_profile(prof, pages):
    check(prof["event"] == "page-faults", "event %s" % prof["event"])
    check_invariants(prof)
    t = main_thread(prof, "faults")
    for fn, (cls, sym) in EXPECT.items():
        leaves = data_leaves_under(t["root"], fn)
        right = sum(l["base"] for l in leaves.get(cls, []))
        wrong = sum(l["base"] for c, ls in leaves.items() if c != cls for l in ls)
        want = pages[fn]
        check(abs(right - want) <= 0.1 * want, "%s: %d %s faults, %d pages touched"
              % (fn, right, cls, want))
        check(wrong <= 0.02 * (right + wrong), "%s: %d of %d data faults misclassified %s"
              % (fn, wrong, right + wrong, {c: len(v) for c, v in leaves.items()}))
        if sym:
            named = sum(l["base"] for l in leaves.get(cls, []) if l["symbol"] == sym)
            check(named >= 0.98 * right, "%s: %d of %d faults named %s" % (fn, named, right, sym))
            check(all(l["module"].endswith("/faults") for l in leaves[cls]
                      if l["symbol"] == sym), "%s: module of %s" % (fn, sym))
    # stack faults are named after the local array when there is debug info
    stack = data_leaves_under(t["root"], "recurse").get("stack", [])
    named = sum(l["base"] for l in stack if l["symbol"] == "buf")
    check(named >= 0.9 * sum(l["base"] for l in stack), "stack faults not named buf")
    # heap leaves carry no symbol
    check(all(l["symbol"] is None for l in data_leaves_under(t["root"], "touch_heap")
              .get("heap", [])), "heap leaves with a symbol")
    summary = [s for s in prof["fault_summary"] if s["pid"] == t["pid"]]
    check(summary and summary[0]["top_symbols"][0]["symbol"] == "bss_pages",
          "fault summary: %s" % summary)


def test_fault_classes_and_symbols():
    out, err, rep = run_profiled(["--event", "faults", "--", workload("faults")])
    check("page-faults samples in" in err, "summary: " + err)
    check_fault_profile(load(out), rep["phases"])
    x = open(os.path.join(out, "xtree.txt")).read()
    check("(m) bss_pages (" in x and "(s) buf" in x and "(h) [anon] (" in x,
          "xtree data leaves not marked (m)/(s)/(h)")
    # stacktree report re-renders a fault profile: same data leaves
    out2 = out + "-again"
    p = subprocess.run([STACKTREE, "report", "--input", os.path.join(out, "profile.json"),
                        "-o", out2], capture_output=True, text=True)
    check(p.returncode == 0, "stacktree report on a fault profile: " + p.stderr)
    again = load(out2)
    check_fault_profile(again, rep["phases"])
    check(leaf_totals(again) == leaf_totals(load(out)), "data leaves changed on re-render")
    # arcflow: data leaves count in their function's BASE
    af = {e["function"]: e for e in arcflow(load(out))}
    check(abs(af["touch_bss"]["base"] - rep["phases"]["touch_bss"]) <= 200,
          "arcflow touch_bss BASE %d" % af["touch_bss"]["base"])


def test_cpu_and_faults_in_one_session():
    out, err, rep = run_profiled(["--event", "cpu,faults", "-F", "999", "--",
                                  workload("faults")])
    for f in ("cpu.xtree.txt", "cpu.profile.json", "faults.xtree.txt", "faults.profile.json",
              "faults.arcflow.txt"):
        check(os.path.exists(os.path.join(out, f)), "missing " + f)
    check_fault_profile(load(os.path.join(out, "faults.profile.json")), rep["phases"])
    cpu = load(os.path.join(out, "cpu.profile.json"))
    check(cpu["event"] == "cpu-clock", "cpu profile event %s" % cpu["event"])
    check(not [n for t in cpu["threads"] for n, _, _ in nodes(t["root"])
               if n["kind"] == "data"], "data leaves in the cpu profile")
