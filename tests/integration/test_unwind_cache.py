"""The on-disk cache of compiled unwind tables (issue 10, item 2): a second
run finds every module's rows without compiling; a corrupt cache file is
rejected (counted) and compiled again, and the stacks are the same."""
import glob
import os
import re
import shutil
import tempfile

from stcheck import check, check_invariants, function_cum, load, main_thread, run_profiled, workload


def cache_line(err):
    m = re.search(r"unwind table cache: (\d+) hits, (\d+) misses, (\d+) written, (\d+) rejected, "
                  r"(\d+) evicted", err)
    check(m, "no unwind table cache line: %s" % err)
    return dict(zip(("hits", "misses", "written", "rejected", "evicted"),
                    (int(x) for x in m.groups())))


def compiled_s(err):
    m = re.search(r"compiled in ([\d.]+) s", err)
    check(m, "no compile time in: %s" % err)
    return float(m.group(1))


def run_nofp(cache):
    out, err, _ = run_profiled(["--unwind", "dwarf", "-F", "999", "--unwind-cache", cache, "--",
                                workload("nofp")], env_extra={"WL_SCALE": "0.3"})
    prof = load(out)
    check_invariants(prof)
    t = main_thread(prof, "nofp")
    share = function_cum(t["root"], "main") / t["samples"]
    shutil.rmtree(out, ignore_errors=True)
    return cache_line(err), share, err


def test_unwind_cache_second_run_compiles_nothing():
    cache = tempfile.mkdtemp(prefix="st-ucache-")
    try:
        first, share1, err1 = run_nofp(cache)
        check(first["hits"] == 0 and first["written"] >= 4 and first["rejected"] == 0,
              "first run: %s" % first)
        files = glob.glob(os.path.join(cache, "*.cfi"))
        check(len(files) == first["written"], "%d files for %d written" % (len(files),
                                                                       first["written"]))
        second, share2, err2 = run_nofp(cache)
        check(second["hits"] >= first["written"] and second["written"] == 0 and
              second["misses"] == 0, "second run: %s (first %s)" % (second, first))
        # nothing left to compile but the vDSO (the running kernel's, never cached)
        check(compiled_s(err2) < 0.005, "second run compiled for %.3f s" % compiled_s(err2))
        check(share2 >= 0.97 and abs(share2 - share1) < 0.03,
              "main share %.3f then %.3f" % (share1, share2))
        # a corrupt file: rejected, compiled again, rewritten
        with open(files[0], "r+b") as f:
            f.seek(os.path.getsize(files[0]) - 3)
            f.write(b"\xff\x00\xff")
        third, share3, _ = run_nofp(cache)
        check(third["rejected"] == 1 and third["written"] == 1,
              "after corrupting %s: %s" % (files[0], third))
        check(share3 >= 0.97, "main share %.3f with a corrupt cache file" % share3)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def test_unwind_cache_refuses_a_foreign_directory():
    d = tempfile.mkdtemp(prefix="st-ucache-")
    try:
        os.chmod(d, 0o777)
        out, err, _ = run_profiled(["--unwind", "dwarf", "-F", "99", "--unwind-cache", d, "--",
                                    workload("nofp")], env_extra={"WL_SCALE": "0.1"})
        check("not used: not ours, or writable by others" in err and
              "unwind table cache: off" in err, err)
        check(not glob.glob(os.path.join(d, "*")), "files written in %s" % d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
