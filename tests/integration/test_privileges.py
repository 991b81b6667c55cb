"""Integration tests of least privilege (issue 21 item 4): a user who is not
root profiles their own process with a copy of stacktreed given
CAP_BPF+CAP_PERFMON as file capabilities, and the unwind cache
~/.cache/stacktreed is made 0700 (~/.cache too) on an account without it;
without the capabilities one line names them and the setcap command, and
nothing is left behind."""
import json
import os
import pwd
import shutil
import stat
import subprocess
import tempfile

from stcheck import STACKTREED, check, check_invariants, nodes, tree_form, workload

USER = "st-unpriv"	# made for the test when missing, removed after


def as_user(home, *cmd, timeout=120):
    # setpriv keeps no capability of ours: only the file's
    p = subprocess.run(["setpriv", "--reuid=" + USER, "--regid=" + USER, "--init-groups",
                        "--reset-env", "--"] + list(cmd), cwd=home, capture_output=True,
                       text=True, timeout=timeout)
    return p


def test_privileges_file_caps():
    made = False
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER], check=True)
        made = True
    pw = pwd.getpwnam(USER)
    home = pw.pw_dir
    shutil.rmtree(os.path.join(home, ".cache"), ignore_errors=True)
    shutil.rmtree(os.path.join(home, "stacktree.out"), ignore_errors=True)
    # the copies in a directory the user can reach (the build may be under /root)
    d = tempfile.mkdtemp(prefix="st-caps-")
    try:
        os.chmod(d, 0o755)
        plain, capped, wl = (os.path.join(d, n) for n in ("stacktreed", "stacktreed-caps",
                                                          "bench_cpu"))
        for src, dst in ((STACKTREED, plain), (STACKTREED, capped), (workload("bench_cpu"), wl)):
            shutil.copy(src, dst)
            os.chmod(dst, 0o755)
        subprocess.run(["setcap", "cap_bpf,cap_perfmon+ep", capped], check=True)

        # without: one line, the setcap command for this binary, nothing made
        p = as_user(home, plain, "-d", "1", "--", wl, "1000")
        lines = p.stderr.splitlines()
        check(p.returncode != 0, "no capabilities: exit 0")
        check(len(lines) == 1, "no capabilities: %d lines: %s" % (len(lines), p.stderr))
        check("missing CAP_BPF and CAP_PERFMON" in lines[0] and
              "setcap cap_bpf,cap_perfmon+ep " + plain in lines[0],
              "no capabilities: %r" % lines[0])
        check(not os.path.exists(os.path.join(home, "stacktree.out")),
              "no capabilities: ./stacktree.out left behind")
        check(not os.path.exists(os.path.join(home, ".cache")), "no capabilities: ~/.cache made")

        # with: the user's own command profiled, the cache directory made 0700
        p = as_user(home, capped, "-F", "199", "--", wl, "200000")
        check(p.returncode == 0, "with capabilities: exit %d: %s" % (p.returncode, p.stderr))
        check("not used" not in p.stderr, "with capabilities: %s" % p.stderr)
        out = os.path.join(home, "stacktree.out")
        with open(os.path.join(out, "profile.json")) as f:
            prof = tree_form(json.load(f))
        check_invariants(prof)
        check(prof["samples"] > 0, "with capabilities: no samples")
        funcs = {n["function"] for t in prof["threads"] for n, _, _ in nodes(t["root"])}
        check({"main", "leaf_mix"} <= funcs, "with capabilities: functions %s"
              % sorted(f for f in funcs if f)[:20])
        st = os.stat(os.path.join(out, "profile.json"))
        check(st.st_uid == pw.pw_uid, "profile.json not the user's")
        for sub in (".cache", ".cache/stacktreed"):
            st = os.lstat(os.path.join(home, sub))
            check(stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and
                  st.st_uid == pw.pw_uid, "~/%s: mode %o uid %d" %
                  (sub, stat.S_IMODE(st.st_mode), st.st_uid))
        cached = [n for n in os.listdir(os.path.join(home, ".cache/stacktreed"))
                  if n.endswith(".cfi")]
        check(cached, "~/.cache/stacktreed: no unwind table kept")
    finally:
        shutil.rmtree(d, ignore_errors=True)
        if made:
            subprocess.run(["userdel", "--remove", USER], capture_output=True)
        else:
            shutil.rmtree(os.path.join(home, ".cache"), ignore_errors=True)
            shutil.rmtree(os.path.join(home, "stacktree.out"), ignore_errors=True)
