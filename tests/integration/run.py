"""Runs every test_* function of tests/integration/test_*.py and every
tests/integration/test_*.sh; prints one closing line."""
import glob
import importlib.util
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

only = sys.argv[1:]
passed = failed = 0
for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in sorted(n for n in dir(mod) if n.startswith("test_")):
        if only and not any(o in name for o in only):
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
            print("FAIL %s: %s" % (name, e), flush=True)
            if not isinstance(e, AssertionError) and type(e).__name__ != "Failure":
                traceback.print_exc()
for path in sorted(glob.glob(os.path.join(HERE, "test_*.sh"))):
    name = os.path.basename(path)
    if only and not any(o in name for o in only):
        continue
    p = subprocess.run(["bash", path], capture_output=True, text=True)
    if p.returncode == 0:
        passed += 1
        print("ok   " + name, flush=True)
    else:
        failed += 1
        print("FAIL %s\n%s%s" % (name, p.stdout, p.stderr), flush=True)
if subprocess.run([os.path.join(HERE, "..", "sanlogs.sh")]).returncode != 0:
    failed += 1
print("integration: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
