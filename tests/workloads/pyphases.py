"""A Python workload with known structure and a measured CPU budget
(issue 19): the main thread loops over phases until SECONDS (argv[1],
default 3) have passed -- deep recursion (fib), a list comprehension
(parse), a method of a class (Codec.pack, calling zlib.compress: a C
extension), a generator pipeline (total), in a new order every cycle --
and a second thread spins in
its own function (worker). Each phase's CPU time is measured with
time.thread_time and written to $WL_REPORT as 'phase NAME SECONDS'
lines (tests/integration/stcheck.py's read_report), the thread as
'thread worker TID'. With $WL_GO set, both threads wait for that file to
exist before they start (and the clock with them): a profiler attached by
--pid sees the whole measured run, however long it takes to start."""
import os
import random
import sys
import threading
import time
import zlib


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def parse(s):
    return [int(x) for x in s.split(',')]


class Codec:
    def __init__(self):
        self.buf = bytes(range(256)) * 512

    def pack(self):
        return len(zlib.compress(self.buf, 6))


def squares(n):
    for i in range(n):
        yield i * i


def total(n):
    return sum(x for x in squares(n) if x & 1)


def spin():
    x = 0
    for i in range(20000):
        x += i
    return x


def wait_go():
    go = os.environ.get('WL_GO')
    while go and not os.path.exists(go):
        time.sleep(0.01)


def worker(stop, spent):
    wait_go()
    t0 = time.thread_time()
    in_spin = 0.0
    while not stop.is_set():
        t = time.thread_time()
        spin()
        in_spin += time.thread_time() - t
        # the sleep's wake-up (the GIL taken back) costs CPU too, more on a
        # busy machine: its share is measured, not assumed
        time.sleep(0.004)
    spent.append((time.thread_time() - t0, in_spin))


def handler(seconds, phases):
    data = ','.join(str(i) for i in range(2000))
    codec = Codec()
    work = [('fib', lambda: fib(19)), ('parse', lambda: parse(data)),
            ('pack', codec.pack), ('total', lambda: total(6000))]
    # A new order of the phases every cycle: a cycle (~1 ms) repeated in a
    # fixed order is a periodic signal that a periodic sampler (0.5 or 2 ms)
    # aliases with when their periods are near a ratio of small integers:
    # samples then land at the same offsets cycle after cycle and favour
    # some phases by points (kernel-notes/python.md, Accuracy).
    rnd = random.Random(19)
    end = time.time() + seconds
    while time.time() < end:
        rnd.shuffle(work)
        for name, fn in work:
            t0 = time.thread_time()
            fn()
            phases[name] += time.thread_time() - t0


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    phases = {'fib': 0.0, 'parse': 0.0, 'pack': 0.0, 'total': 0.0}
    stop, spent = threading.Event(), []
    th = threading.Thread(target=worker, args=(stop, spent), name='worker')
    th.start()
    wait_go()
    handler(seconds, phases)
    stop.set()
    th.join()
    report = os.environ.get('WL_REPORT')
    if report:
        with open(report, 'w') as f:
            for name, secs in phases.items():
                f.write('phase %s %f\n' % (name, secs))
            f.write('phase worker %f\n' % spent[0][0])
            f.write('phase worker_spin %f\n' % spent[0][1])
            f.write('thread worker %d\n' % th.native_id)


main()
