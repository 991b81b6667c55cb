"""Integration tests of `stacktreed top` (issue 36 item 2): views of the
last seconds' functions, refreshed. Not on a terminal each view follows the
last ("=== " headers): over the phases workload the hottest function moves
from work_a to phase_c's; in a terminal (tmux, 100x24) each view replaces
the last, fits the screen, shows the workload's functions, refreshes, and
'q' quits; top refuses -o (it writes no reports)."""
import os
import re
import shutil
import subprocess
import time

from stcheck import STACKTREED, Failure, check, wait_for, workload


def views(text):
    """[(view number, [(self %, total %, function)])] of top's output."""
    out = []
    for block in re.split(r"^=== ", text, flags=re.M)[1:]:
        m = re.search(r" - view (\d+) at ", block.splitlines()[0])
        check(m, "no view number in %r" % block.splitlines()[0])
        rows = [(float(a), float(b), f) for a, b, f in
                re.findall(r"^\s*([\d.]+)% +([\d.]+)%  (\S+)", block, re.M)]
        out.append((int(m.group(1)), rows))
    return out


def test_top_views_follow_the_phases():
    """Views every 0.5 s until the workload ends: numbered 1, 2, ...; each
    view's self shares add up to 100%; work_a is the hottest in an early
    view and work_c1 or work_c2 in a later one."""
    p = subprocess.run([STACKTREED, "top", "--refresh", "0.5", "--", workload("phases")],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, WL_SCALE="1"))
    check(p.returncode == 0, "stacktreed top exited %d: %s" % (p.returncode, p.stderr))
    vs = views(p.stdout)
    check(len(vs) >= 4, "%d views of a ~3 s workload at 0.5 s:\n%s" % (len(vs), p.stdout))
    check([n for n, _ in vs] == list(range(1, len(vs) + 1)), "views numbered %s"
          % [n for n, _ in vs])
    tops = []
    for n, rows in vs:
        total = sum(r[0] for r in rows)
        if rows:
            check(abs(total - 100) < 0.1 * len(rows) + 0.01,
                  "view %d: self shares add up to %.2f%%" % (n, total))
            tops.append(max(rows)[2])
    print("  hottest per view: %s" % tops)
    check("work_a" in tops, "work_a never the hottest: %s" % tops)
    first_c = [i for i, f in enumerate(tops) if f in ("work_c1", "work_c2")]
    check(first_c and first_c[-1] > tops.index("work_a"),
          "no view after work_a's with phase_c's functions hottest: %s" % tops)


def test_top_in_tmux():
    """In a 100x24 terminal: the workload's functions, a new view every
    0.5 s, no line wider than the terminal, at most 24 lines; q quits."""
    tmux = shutil.which("tmux")
    if not tmux:
        raise Failure("tmux is missing: install it (scripts/deps.sh test does)")
    sock = "st-it-top-%d" % os.getpid()
    wl = subprocess.Popen([workload("phases")], env=dict(os.environ, WL_SCALE="6"),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        subprocess.run([tmux, "-L", sock, "new-session", "-d", "-x", "100", "-y", "24",
                        "%s top --refresh 0.5 --pid %d" % (STACKTREED, wl.pid)], check=True,
                       timeout=30)

        def screen():
            return subprocess.run([tmux, "-L", sock, "capture-pane", "-p"], capture_output=True,
                                  text=True, timeout=30).stdout

        def view_no(s):
            m = re.search(r"- view (\d+) at", s)
            return int(m.group(1)) if m else 0

        wait_for(lambda: "work_a" in screen(), 30, "no work_a on top's screen")
        first = screen()
        n1 = view_no(first)
        wait_for(lambda: view_no(screen()) > n1, 10, "top's view %d not refreshed" % n1)
        lines = first.rstrip("\n").splitlines()
        check(len(lines) <= 24 and max(len(l) for l in lines) <= 100,
              "the view does not fit 100x24:\n" + first)
        check("(q quits)" in first, "no 'q quits' on a terminal:\n" + first)
        check(re.search(r"^\s*[\d.]+% +[\d.]+%  work_a \[phases\]", first, re.M),
              "no row of work_a:\n" + first)
        print("  views %d -> %d in tmux; first screen:\n%s" % (n1, view_no(screen()), first.rstrip()))
        subprocess.run([tmux, "-L", sock, "send-keys", "q"], check=True, timeout=30)

        def gone():
            return subprocess.run([tmux, "-L", sock, "has-session"], capture_output=True,
                                  timeout=30).returncode != 0
        wait_for(gone, 10, "top still runs 10 s after q")
    finally:
        subprocess.run([tmux, "-L", sock, "kill-server"], capture_output=True, timeout=30)
        wl.kill()
        wl.wait()


def test_top_refuses_output():
    p = subprocess.run([STACKTREED, "top", "-a", "-o", "/tmp/x"], capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 64 and "writes no reports" in p.stderr,
          "top -o: exit %d, %s" % (p.returncode, p.stderr))
    p = subprocess.run([STACKTREED, "-a", "--iterations", "2"], capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 64 and "go with `stacktreed top'" in p.stderr,
          "--iterations without top: exit %d, %s" % (p.returncode, p.stderr))
