"""Any ELF layout (issue 20): the same program (tests/workloads/layout.c,
clang-14 -O2 -fomit-frame-pointer) linked by GNU ld and by lld, whose
executable segment's address is a page above its file offset. Each is
profiled beside `perf record --call-graph dwarf` on the same run (the
helpers of test_dwarf.py): >= 99% of the samples reach main, each phase's
share matches its CPU time, each function's share matches perf's and the
other linker's within sampling noise."""
import os
import shutil
import subprocess
import tempfile

from stcheck import check, function_cum, metric, read_report
from test_dwarf import (agreement_tolerance, check_main_and_phases, perf_shares,
                        profile_with_perf, unwind_notes)

PHASES = ("phase_short", "phase_long")
FUNCS = PHASES + ("main", "run", "spin")


def exec_segment(binary):
    """(file offset, address) of the first executable PT_LOAD."""
    p = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True)
    for line in p.stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[6:-1]:
            return int(f[1], 16), int(f[2], 16)
    raise AssertionError("no executable segment in " + binary)


def test_lld_layout_matches_gnu_ld():
    from stcheck import workload
    off, vaddr = exec_segment(workload("layout_lld"))
    check(off != vaddr, "layout_lld: executable segment at offset %#x = address" % off)
    shares = {}
    for prog in ("layout", "layout_lld"):
        tmp = tempfile.mkdtemp(prefix="st-layout-")
        try:
            t, err, data = profile_with_perf(prog, "1", tmp)
            rep = read_report(os.path.join(tmp, "wl.txt"))
            theirs, n_theirs = perf_shares(data, prog, FUNCS)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        check_main_and_phases(t, rep, PHASES, prog + " --unwind dwarf", err)
        n_ours = function_cum(t["root"], "main")
        ours = {f: 100.0 * function_cum(t["root"], f) / n_ours for f in FUNCS}
        for f in FUNCS:
            tol = agreement_tolerance(ours[f], n_ours, theirs[f], n_theirs)
            metric("layout.%s.%s.perf_diff_pts" % (prog, f), ours[f] - theirs[f])
            check(abs(ours[f] - theirs[f]) <= tol, "%s: %s %.2f%% of %d samples here, %.2f%% of"
                  " %d in perf, tolerance %.2f (%s)" % (prog, f, ours[f], n_ours, theirs[f],
                                                        n_theirs, tol, unwind_notes(err)))
        shares[prog] = (ours, n_ours)
    (gnu, n_gnu), (lld, n_lld) = shares["layout"], shares["layout_lld"]
    for f in FUNCS:
        tol = agreement_tolerance(gnu[f], n_gnu, lld[f], n_lld)
        metric("layout.%s.gnu_lld_diff_pts" % f, gnu[f] - lld[f])
        check(abs(gnu[f] - lld[f]) <= tol, "%s: %.2f%% of %d samples linked by GNU ld, %.2f%% of"
              " %d by lld, tolerance %.2f" % (f, gnu[f], n_gnu, lld[f], n_lld, tol))
