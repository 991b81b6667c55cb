"""Runs every test_* function of tests/integration/test_*.py and every
tests/integration/test_*.sh; prints one line per test with its duration,
then the slowest tests and the whole run's time (where CI's time goes:
.ci/run), each failed test again with the start of its reason (the end
of a long log is what CI's summary keeps), and one closing line."""
import glob
import importlib.util
import os
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
SLOWEST = 15	# tests listed at the end, slowest first

# a run stopped by SIGTERM or SIGHUP unwinds like one stopped by ^C: each
# test's finally: blocks stop its daemons, workloads and busy loops
def _stop(signum, frame):
    raise SystemExit(128 + signum)


signal.signal(signal.SIGTERM, _stop)
signal.signal(signal.SIGHUP, _stop)
only = sys.argv[1:]
# the sanitized pass runs the tests sanitized.txt lists (what each drives)
listed = None
if os.environ.get("ST_SANITIZER_LOGS"):
    with open(os.path.join(HERE, "sanitized.txt")) as f:
        listed = {l.split("\t")[0].strip() for l in f if l.strip() and not l.startswith("#")}
unlisted = 0
found = set()
passed = failed = 0
took = []	# (seconds, name) of every test run, skips included
failures = []	# (name, why) of every failed test (a .sh test's: its last line)
REASON = 300	# characters of a failure's reason repeated at the end
start = time.time()
for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in sorted(n for n in dir(mod) if n.startswith("test_")):
        if only and not any(o in name for o in only):
            continue
        found.add(name)
        if listed is not None and name not in listed:
            unlisted += 1
            continue
        t0 = time.time()
        try:
            getattr(mod, name)()
            passed += 1
            print("ok   %s (%.1fs)" % (name, time.time() - t0), flush=True)
        except Exception as e:
            if type(e).__name__ == "Skip":
                print("skip %s: %s" % (name, e), flush=True)
                continue  # a failed check or a crash both fail the test
            failed += 1
            failures.append((name, str(e)))
            print("FAIL %s (%.1fs): %s" % (name, time.time() - t0, e), flush=True)
            if not isinstance(e, AssertionError) and type(e).__name__ != "Failure":
                traceback.print_exc()
        finally:
            took.append((time.time() - t0, name))
for path in sorted(glob.glob(os.path.join(HERE, "test_*.sh"))):
    name = os.path.basename(path)
    if only and not any(o in name for o in only):
        continue
    found.add(name)
    if listed is not None and name not in listed:
        unlisted += 1
        continue
    t0 = time.time()
    p = subprocess.run(["bash", path], capture_output=True, text=True)
    took.append((time.time() - t0, name))
    if p.returncode == 0:
        passed += 1
        print("ok   %s (%.1fs)" % (name, took[-1][0]), flush=True)
    else:
        failed += 1
        last = (p.stdout + p.stderr).strip().splitlines()
        failures.append((name, last[-1] if last else "exit %d" % p.returncode))
        print("FAIL %s (%.1fs)\n%s%s" % (name, took[-1][0], p.stdout, p.stderr), flush=True)
if listed is not None:
    print("sanitized: %d tests of sanitized.txt; %d others run in the plain suite only"
          % (len(found & listed), unlisted))
    stale = sorted(listed - found) if not only else []
    if stale:	# a renamed test must not drop out of the sanitized pass unseen
        failed += 1
        failures.append(("sanitized.txt", "names no test: " + ", ".join(stale)))
        print("FAIL sanitized.txt names no test: %s" % ", ".join(stale), flush=True)
if subprocess.run([os.path.join(HERE, "..", "sanlogs.sh")]).returncode != 0:
    failed += 1
    failures.append(("sanlogs.sh", "a sanitizer reported (above)"))
if len(took) > 1:
    print("slowest: " + ", ".join("%s %.0fs" % (n, s) for s, n in sorted(took, reverse=True)
                                  [:SLOWEST]))
for name, why in failures:
    why = " ".join(why.split())
    print("failed: %s: %s" % (name, why[:REASON] + ("..." if len(why) > REASON else "")))
print("integration: %d passed, %d failed in %.0f s" % (passed, failed, time.time() - start))
sys.exit(1 if failed else 0)
