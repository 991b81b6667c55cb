"""The test harness's own pieces that a loaded machine once broke
(stcheck.py): run like every test, no daemon, no root needed."""
import subprocess
import time

from stcheck import Lines, check


def test_lines_reads_every_line_a_pipe_held_at_once():
    """Two lines written in one go are two lines, each returned at once:
    the select() and readline() on a text stream that Daemon and the Java
    tests' waits used lost the second (readline() took both into its
    buffer, select() then waited for more bytes until its deadline: the
    loaded "did not hold its main loop within 60 s"). Then a timeout says
    None, and the end of the pipe returns what is left, then ""."""
    p = subprocess.Popen(["sh", "-c", "printf 'one\\ntwo\\n'; sleep 30"],
                         stdout=subprocess.PIPE, text=True)
    try:
        lines = Lines(p.stdout)
        time.sleep(0.3)	# both lines in the pipe before the first read
        t0 = time.time()
        got = [lines.readline(t0 + 10), lines.readline(t0 + 10)]
        took = time.time() - t0
        check(got == ["one\n", "two\n"] and took < 5,
              "read %r in %.1f s, the pipe held both lines at once" % (got, took))
        t0 = time.time()
        none = lines.readline(t0 + 0.5)
        check(none is None and 0.4 < time.time() - t0 < 5,
              "no line by the deadline: %r after %.1f s" % (none, time.time() - t0))
    finally:
        p.kill()
        p.wait()
    p = subprocess.Popen(["sh", "-c", "printf 'last'"], stdout=subprocess.PIPE, text=True)
    try:
        lines = Lines(p.stdout)
        end = time.time() + 10
        got = [lines.readline(end), lines.readline(end)]
        check(got == ["last", ""], "at the pipe's end: %r" % got)
    finally:
        p.wait()
