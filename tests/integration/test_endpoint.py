"""Integration tests of the live endpoint (--listen, issue 21 item 1) with
real clients: `go tool pprof` pulls a profile while the service writes its
snapshots (the same samples in both), a Prometheus server scrapes /metrics,
and hostile clients (one that never reads, one that never finishes its
request, more than the bounds allow) leave sampling and snapshots on
schedule. Who gets what (issue 34): uid nobody gets its own process's
stacks and none of root's, over TCP loopback and a Unix socket; 40 clients
of nobody leave root's scraper its answers; a remote client needs the
bearer token (and Prometheus's credentials_file sends it)."""
import gzip
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import tempfile
import threading
import time
import urllib.request

from stcheck import (STACKTREED, Daemon, Skip, busy_cpus, check, cpu_s, function_cum, load, metric,
                     wait_for, workload)

DEMO_FUNCS = ("handle_request", "build_response", "checksum", "render_html", "walk_index",
              "parse_request", "flush_log")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Service:
    """-a --interval 2 with --listen on a free loopback port."""

    def __init__(self, interval="2", args=(), host=None):
        self.dir = tempfile.mkdtemp(prefix="st-ep-")
        self.port = free_port()
        listen = "%s:%d" % (host, self.port) if host else str(self.port)
        self.d = Daemon(["-a", "-F", "199", "--interval", interval, "-o", self.dir,
                         "--listen", listen] + list(args))
        self.url = "http://127.0.0.1:%d" % self.port

    def get(self, path, timeout=10, headers=None):
        req = urllib.request.Request(self.url + path, headers=headers or {})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()

    def metrics(self):
        out = {}
        for line in self.get("/metrics")[1].decode().splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def answers(self):
        try:
            return self.get("/metrics", timeout=1)[0] == 200
        except OSError:
            return False

    def snapshots(self):
        return sorted(n for n in os.listdir(self.dir) if n[:8].isdigit() and "T" in n)

    def settled(self):
        """Once the first snapshot is written: the loop past its start (the
        events queued since the attach took it 10 s with the load at 30)."""
        wait_for(lambda: self.snapshots(), 60, "no first snapshot within 60 s")

    def stop(self):
        rc, err = self.d.stop()
        check(rc == 0, "service exit %d: %s" % (rc, err))
        shutil.rmtree(self.dir, ignore_errors=True)
        return err


def pprof_top(text):
    """`go tool pprof -top` lines: function -> cum%; and the Build ID lines."""
    cum, ids = {}, []
    for line in text.splitlines():
        m = re.match(r"\s*\S+\s+\S+%\s+\S+%\s+\S+\s+([\d.]+)%\s+(.+?)\s*$", line)
        if m:
            cum[m.group(2)] = float(m.group(1))
        if line.startswith("Build ID:"):
            ids.append(line.split()[-1])
    return cum, ids


WINDOW = 15	# test_endpoint_go_pprof's window, s


def test_endpoint_go_pprof():
    """A `go tool pprof` request covering a whole run of the demo workload:
    its functions' shares are the snapshot files' (the same samples: the
    request takes none from them), the same sample count exactly, the
    build id of the files' modules; the comm filter keeps only the demo.
    Exact, as the window holds every sample taken in it: the demo starts
    once stacktreed_http_profiles_open says the window is open (the loop
    marked the counts; a request still waiting for the loop, behind a
    snapshot, is not counted: counted, the demo started before the mark in
    5 runs of 5 beside two spinners, 14-88 of its 285-336 samples), its samples
    deferred at its start are walked after that, and all of them before
    the window ends (its exit walks them; the run ends within the window,
    checked). Counted with -sample_index=samples: the cpu total is shown
    rounded (1.61s for 321 samples). The window must hold the whole run:
    15 s for the demo's 0.9 s of CPU (WL_SCALE=0.3) holds it down to 6%
    of a CPU (1.5 s ran past it in 4 runs of 10 with the load at 17); a
    run that still ends after the window says so."""
    s = Service()
    tmp = tempfile.mkdtemp(prefix="st-ep-go-")
    env = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache"),
               PPROF_TMPDIR=tmp)
    try:
        t_req = time.time()
        go = subprocess.Popen(["go", "tool", "pprof", "-top", "-sample_index=samples",
                               s.url + "/debug/pprof/profile?seconds=%d&comm=demo" % WINDOW],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        wait_for(lambda: s.metrics()["stacktreed_http_profiles_open"] == 1, 10,
                 "go tool pprof's request did not open a profile")
        demo = subprocess.run([workload("demo")], env=dict(os.environ, WL_SCALE="0.3"),
                              timeout=60)
        ran = time.time() - t_req
        check(demo.returncode == 0, "demo exited %d" % demo.returncode)
        check(ran < WINDOW, "the demo ended %.1f s after the request, past its %d s window: "
              "the machine is too busy to compare" % (ran, WINDOW))
        out, err = go.communicate(timeout=30)
        check(go.returncode == 0, "go tool pprof exited %d: %s" % (go.returncode, err))
        # the snapshots after the request's end hold the rest of the demo's samples
        n = len(s.snapshots())
        wait_for(lambda: len(s.snapshots()) >= n + 1, 10, "no snapshot after the request")
    finally:
        rc, err = s.d.stop()
        check(rc == 0, "service exit %d: %s" % (rc, err))
    cum, ids = pprof_top(out)
    # the files: every snapshot's demo threads
    total, by_func, file_ids = 0, dict.fromkeys(DEMO_FUNCS, 0), set()
    for n in sorted(os.listdir(s.dir)):
        path = os.path.join(s.dir, n, "profile.json")
        if not (n[:8].isdigit() and os.path.exists(path)):
            continue
        prof = load(path)
        for t in prof["threads"]:
            if t["comm"] != "demo":
                continue
            total += t["samples"]
            for f in DEMO_FUNCS:
                by_func[f] += function_cum(t["root"], f)
        file_ids |= {m["build_id"] for m in prof.get("modules", []) if m.get("build_id")}
    shutil.rmtree(s.dir, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    check(total > 90, "the files hold %d demo samples (0.9 s at 199 Hz expected)" % total)
    m = re.search(r"Total samples = (\d+)\s*$", out, re.M)
    check(m, "no sample total in go tool pprof's output: %s" % out)
    metric("endpoint.pprof_vs_files", int(m.group(1)) / total)
    check(int(m.group(1)) == total, "pprof total %s samples, the files %d"
          % (m.group(1), total))
    for f in DEMO_FUNCS:
        share = 100.0 * by_func[f] / total
        check(f in cum, "%s not in go tool pprof -top:\n%s" % (f, out))
        check(abs(cum[f] - share) <= 2.0, "%s: pprof %.1f%%, the files %.1f%%"
              % (f, cum[f], share))
    check("File: demo" in out, "comm=demo: not the demo's profile:\n" + out)
    check(ids and set(ids) <= file_ids, "pprof build ids %s, the files' %s" % (ids, file_ids))


def test_endpoint_with_pid():
    """--pid without --interval: the endpoint serves a profile of the target
    in the middle of its run, and the final report, which spans it, still
    holds all of its samples. The window's samples are the CPU time the
    (single-threaded) demo got in its 2 s, not 2 s: on a busy machine it
    gets a share of a CPU (1.05 s and 0.17 s were seen with the load at
    3-11 and 16). The client's request spans the window: the CPU the demo
    used from the request to the answer bounds the window's from above,
    and that less the time outside the window (at most one CPU second a
    second) from below; 5% and 3 samples more either way for the clock
    ticks (10 ms) and the sampling."""
    demo = subprocess.Popen([workload("demo")], env=dict(os.environ, WL_SCALE="4"))
    out_dir = tempfile.mkdtemp(prefix="st-ep-pid-")
    tmp = tempfile.mkdtemp(prefix="st-ep-go-")
    port = free_port()
    d = Daemon(["--pid", str(demo.pid), "-F", "199", "-o", out_dir, "--listen", str(port)])
    try:
        url = "http://127.0.0.1:%d/debug/pprof/profile?seconds=2" % port
        c0, t0 = cpu_s(demo.pid), time.time()
        with urllib.request.urlopen(url, timeout=60) as r:
            body = r.read()
        c1, t1 = cpu_s(demo.pid), time.time()
        path = os.path.join(tmp, "profile.pb.gz")
        with open(path, "wb") as f:
            f.write(body)
        go = subprocess.run(["go", "tool", "pprof", "-top", path],
                            env=dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gc"),
                                     PPROF_TMPDIR=tmp),
                            capture_output=True, text=True, timeout=60)
        check(go.returncode == 0, "go tool pprof exited %d: %s" % (go.returncode, go.stderr))
    finally:
        demo.kill()
        demo.wait()
        rc, err = d.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    check(rc == 0, "stacktreed --pid exit %d: %s" % (rc, err))
    cum, _ = pprof_top(go.stdout)
    check(cum.get("handle_request", 0) > 50, "handle_request %s%% of:\n%s"
          % (cum.get("handle_request"), go.stdout))
    m = re.search(r"Total samples = ([\d.]+)(ms|s)", go.stdout)
    secs = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    hi = c1 - c0
    lo = max(0.0, hi - max(0.0, (t1 - t0) - 2.0))
    metric("endpoint.pid_window_vs_cpu", secs / hi if hi else 0)
    check(hi > 0.2, "the demo got %.2f s of CPU in the request's %.2f s" % (hi, t1 - t0))
    check(0.95 * lo - 3 / 199 <= secs <= 1.05 * hi + 3 / 199,
          "a 2 s profile of a busy thread holds %.2f s; the thread used %.2f s of CPU in "
          "the request's %.2f s (at least %.2f in the window)" % (secs, hi, t1 - t0, lo))
    prof = load(out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    # the report spans the request and more: it has all the request's samples
    check(prof["samples"] >= secs * 199 - 2, "the report holds %d samples, the request %.0f"
          % (prof["samples"], secs * 199))


def test_endpoint_prometheus():
    """A Prometheus server scrapes /metrics on loopback; its query API then
    returns our sample counter, and the text is valid for promtool."""
    s = Service()
    tmp = tempfile.mkdtemp(prefix="st-ep-prom-")
    pport = free_port()
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: stacktreed\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % s.port)
    prom = subprocess.Popen(["prometheus", "--config.file=" + cfg,
                             "--storage.tsdb.path=" + os.path.join(tmp, "data"),
                             "--web.listen-address=127.0.0.1:%d" % pport],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        text = s.get("/metrics")[1].decode()
        lint = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                              capture_output=True)
        check(lint.returncode == 0, "promtool check metrics: %s%s" % (lint.stdout, lint.stderr))
        result = []

        def scraped():
            q = "http://127.0.0.1:%d/api/v1/query?query=%s" % (
                pport, urllib.request.quote('stacktreed_samples_total{event="cpu-clock"}'))
            try:
                with urllib.request.urlopen(q, timeout=2) as r:
                    body = json.load(r)
            except OSError:
                return False
            result[:] = body["data"]["result"]
            return bool(result) and float(result[0]["value"][1]) > 0
        wait_for(scraped, 30, "Prometheus did not scrape stacktreed_samples_total: %s" % result)
        check(result[0]["metric"]["job"] == "stacktreed", "labels %s" % result[0]["metric"])
    finally:
        prom.terminate()
        prom.wait(timeout=20)
        shutil.rmtree(tmp, ignore_errors=True)
        s.stop()


LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def test_endpoint_metrics_conventions():
    """/metrics by Prometheus's conventions (issue 36 item 2): promtool
    accepts it; label values are short stable keys (no spaces: the
    sentences are in # HELP); stacktreed_build_info carries the version;
    the standard process_* metrics are there and agree with /proc."""
    s = Service()
    try:
        text = s.get("/metrics")[1].decode()
        lint = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                              capture_output=True)
        check(lint.returncode == 0, "promtool check metrics: %s%s" % (lint.stdout, lint.stderr))
        samples = [l for l in text.splitlines() if l and not l.startswith("#")]
        values = [(l, v) for l in samples for _, v in LABEL.findall(l.rsplit(" ", 1)[0])]
        check(len(values) > 20, "only %d label values in %s" % (len(values), text))
        bad = [l for l, v in values if not re.fullmatch(r"[A-Za-z0-9_.:+-]+", v)]
        check(not bad, "label values that are not short keys: %s" % bad[:5])
        check('# HELP stacktreed_lost_samples_total' in text and
              "lost_stack = stack walk failed" in text, "the reasons' sentences are not in HELP")
        version = subprocess.run([STACKTREED, "--version"], capture_output=True,
                                 text=True).stdout.split()[-1]
        # the daemon opens and closes files all the time under -a (each new
        # module's ELF, the files of code read for walks: up to 256 kept),
        # so its open fds are counted before and after the scrape
        fds_before = len(os.listdir("/proc/%d/fd" % s.d.pid))
        m = s.metrics()
        fds_after = len(os.listdir("/proc/%d/fd" % s.d.pid))
        check(m.get('stacktreed_build_info{version="%s"}' % version) == 1,
              "no stacktreed_build_info{version=%r} 1 in %s" % (version, sorted(m)[:8]))
        names = ("process_cpu_seconds_total", "process_resident_memory_bytes",
                 "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                 "process_start_time_seconds")
        missing = [n for n in names if n not in m]
        check(not missing, "missing %s" % missing)
        with open("/proc/%d/status" % s.d.pid) as f:
            rss = [int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS:")][0]
        with open("/proc/%d/stat" % s.d.pid) as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as f:
            btime = [int(l.split()[1]) for l in f if l.startswith("btime ")][0]
        started = btime + ticks / os.sysconf("SC_CLK_TCK")
        # the daemon's own, read around the scrape: within what it changes meanwhile
        check(0.5 * rss <= m["process_resident_memory_bytes"] <= 2 * rss,
              "resident %d vs VmRSS %d" % (m["process_resident_memory_bytes"], rss))
        check(m["process_virtual_memory_bytes"] >= m["process_resident_memory_bytes"],
              "virtual %d < resident" % m["process_virtual_memory_bytes"])
        lo, hi = min(fds_before, fds_after), max(fds_before, fds_after)
        check(3 <= m["process_open_fds"] <= m["process_max_fds"] and
              lo - 8 <= m["process_open_fds"] <= hi + 8,
              "open fds %d (/proc: %d before the scrape, %d after), max %d"
              % (m["process_open_fds"], fds_before, fds_after, m["process_max_fds"]))
        check(0 < m["process_cpu_seconds_total"] <= (time.time() - started + 1) *
              os.cpu_count(), "cpu seconds %g" % m["process_cpu_seconds_total"])
        check(abs(m["process_start_time_seconds"] - started) < 0.05,
              "start time %.2f, /proc/PID/stat's %.2f" % (m["process_start_time_seconds"],
                                                           started))
    finally:
        s.stop()


def read_answer(sock, timeout):
    sock.settimeout(timeout)
    data = b""
    try:
        while True:
            b = sock.recv(65536)
            if not b:
                break
            data += b
    except socket.timeout:
        pass
    return data


def test_endpoint_hostile_clients():
    """A client that never reads its profile and one that never ends its
    request do not stall the loop: snapshots stay on schedule and /metrics
    answers at once; the unfinished request is answered 408 after the head
    timeout. More profile requests than the bound: the extra ones get 503
    at once, the others their profiles; more connections than the bound:
    503 at once."""
    s = Service()
    socks = []
    try:
        s.settled()
        # never reads: a tiny receive window, a system-wide profile
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        slow.connect(("127.0.0.1", s.port))
        slow.sendall(b"GET /debug/pprof/profile?seconds=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        half = socket.create_connection(("127.0.0.1", s.port))
        half.sendall(b"GET /metrics HTTP/1.1\r\nHost:")
        socks += [slow, half]
        t0, n0 = time.time(), len(s.snapshots())
        worst = 0.0
        while time.time() - t0 < 7:
            a = time.time()
            st, _ = s.get("/metrics", timeout=5)
            worst = max(worst, time.time() - a)
            check(st == 200, "/metrics %d" % st)
            time.sleep(0.5)
        metric("endpoint.metrics_latency_s", worst)
        check(worst < 1.0, "/metrics took %.2f s beside a client that never reads" % worst)
        got = len(s.snapshots()) - n0
        check(got >= 3, "%d snapshots in 7 s at --interval 2 beside stalled clients" % got)
        ans = read_answer(half, 1)
        check(ans.startswith(b"HTTP/1.1 408"), "unfinished request answered %r" % ans[:40])

        # a client that asks for the longest profile (--listen-max-seconds'
        # default, 60 s) and hangs up gives its place back; longer is refused
        over = socket.create_connection(("127.0.0.1", s.port))
        over.sendall(b"GET /debug/pprof/profile?seconds=61 HTTP/1.1\r\nHost: x\r\n\r\n")
        ans = read_answer(over, 5)
        over.close()
        check(ans.startswith(b"HTTP/1.1 400") and b"--listen-max-seconds" in ans,
              "seconds=61 answered %r" % ans[:120])
        gone = socket.create_connection(("127.0.0.1", s.port))
        gone.sendall(b"GET /debug/pprof/profile?seconds=60 HTTP/1.1\r\nHost: x\r\n\r\n")
        wait_for(lambda: s.metrics()["stacktreed_http_profiles_open"] >= 1, 10,
                 "the hour-long profile did not start")
        gone.close()
        wait_for(lambda: s.metrics()["stacktreed_http_profiles_open"] == 0, 2,
                 "a client that hung up kept its profile open")

        # more profile requests than the bound (4)
        answers = [None] * 8

        def ask(i):
            a = time.time()
            c = socket.create_connection(("127.0.0.1", s.port))
            c.sendall(b"GET /debug/pprof/profile?seconds=2 HTTP/1.1\r\nHost: x\r\n\r\n")
            data = read_answer(c, 10)
            answers[i] = (data[:12], time.time() - a)
            c.close()
        ts = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        ok = [a for a in answers if a[0] == b"HTTP/1.1 200"]
        busy = [a for a in answers if a[0] == b"HTTP/1.1 503"]
        check(len(ok) == 4 and len(busy) == 4, "answers %s" % answers)
        check(max(b[1] for b in busy) < 1.0, "503s took %s s" % [b[1] for b in busy])
        check(min(o[1] for o in ok) >= 1.9, "profiles of 2 s came in %s s" % [o[1] for o in ok])

        # more connections than the bound (16): the extra ones are refused at once
        idle = [socket.create_connection(("127.0.0.1", s.port)) for _ in range(20)]
        socks += idle
        refused = [c for c in idle[16:] if read_answer(c, 1).startswith(b"HTTP/1.1 503")]
        check(len(refused) >= 3, "%d of 4 connections over the bound refused" % len(refused))
        n1 = len(s.snapshots())
        time.sleep(4.5)
        check(len(s.snapshots()) - n1 >= 2, "snapshots stopped while connections were full")
        for c in idle:
            c.close()
        wait_for(s.answers, 5, "/metrics not answered once the connections closed")
        m = s.metrics()
        check(m['stacktreed_http_answers_total{answer="busy"}'] >= 7, "busy count %s" % m)
        check(m['stacktreed_http_answers_total{answer="timed_out"}'] >= 1, "timeouts %s" % m)
        check(m['stacktreed_http_refused_total{reason="seconds_over_max"}'] == 1,
              "seconds over the max %s" % m)
        check(m['stacktreed_http_refused_total{reason="profiles_full"}'] == 4,
              "profile refusals %s" % m)
        check(m['stacktreed_http_refused_total{reason="connections_full"}'] >= 3,
              "connection refusals %s" % m)
    finally:
        for c in socks:
            c.close()
        err = s.stop()
    check("snapshot not written" not in err, "a snapshot failed: %s" % err)


# ---- /metrics beside hostile clients, windows whole (issue 37 item 5) -------

LAT_PHASE = 2.5		# s of scrapes per hostile client (at --interval 1: 2 snapshots)
LAT_LIMIT = 0.1		# s: the p99 of /metrics the issue asks for
LAT_RATIO = 5.0		# ... or, on a machine where an idle scrape's p99 is over a fifth
			# of it, this times that p99 (measured with the load at 30: idle
			# 0.098 s; never reading 1.4x, slowloris 1.7x, 40 reconnecting
			# clients 2.8x (their CPU), a long window 0.8x; a scrape that
			# waits for a snapshot: 0.5-3.3 s)


def scrape(port, seconds):
    """Latencies (s, sorted) of /metrics asked every 20 ms for seconds: a
    raw client, connect to the answer's end; every answer a 200."""
    lat, end = [], time.time() + seconds
    while time.time() < end:
        a = time.monotonic()
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        data = read_answer(c, 5)
        c.close()
        lat.append(time.monotonic() - a)
        check(data.startswith(b"HTTP/1.1 200") and b"stacktreed_metrics_age_seconds" in data,
              "/metrics answered %r" % data[:60])
        time.sleep(0.02)
    return sorted(lat)


def p99(lat):
    return lat[min(len(lat) - 1, int(0.99 * len(lat)))]


def slowloris(port, n, stop):
    """n connections sending their request heads a byte every 0.3 s."""
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
    head = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    i = 0
    while not stop.is_set() and i < len(head) - 1:
        for c in socks:
            try:
                c.send(head[i:i + 1])
            except OSError:
                pass
        i += 1
        stop.wait(0.3)
    for c in socks:
        c.close()


def test_endpoint_metrics_latency():
    """/metrics within 100 ms whatever other clients do (issue 37 item 5):
    with both CPUs busy and the service writing a snapshot every second
    (its loop busy for its length: 0.4-1.1 s measured here), the p99 of
    /metrics asked every 20 ms beside each hostile client in turn (one
    that never reads its answers, slowloris heads, 40 reconnecting clients
    of nobody, a long profile window) is within 100 ms, or, when the
    machine is so loaded that an undisturbed scrape's p99 is over a fifth
    of that, within LAT_RATIO times it. Before the endpoint had its own
    thread a scrape waited for the whole snapshot (p99 0.77 s, max 1.75
    s)."""
    s = Service(interval="1")
    socks, res = [], {}
    try:
        s.settled()
        with busy_cpus(2):
            base = scrape(s.port, LAT_PHASE)
            # never reads: a tiny receive window, a profile and a /metrics
            for path in ("/debug/pprof/profile?seconds=1", "/metrics"):
                c = socket.socket()
                c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
                c.connect(("127.0.0.1", s.port))
                c.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
                socks.append(c)
            n0 = len(s.snapshots())
            res["never_reads"] = scrape(s.port, LAT_PHASE)
            for c in socks:
                c.close()
            stop = threading.Event()
            t = threading.Thread(target=slowloris, args=(s.port, 3, stop))
            t.start()
            res["slowloris"] = scrape(s.port, LAT_PHASE)
            stop.set()
            t.join()
            flood = subprocess.Popen(AS_NOBODY + [SYS_PYTHON, "-c", FLOOD, str(s.port),
                                                  str(LAT_PHASE + 0.5)],
                                     stdout=subprocess.PIPE, text=True, cwd="/")
            time.sleep(0.3)
            res["reconnecting_40"] = scrape(s.port, LAT_PHASE)
            flood.communicate(timeout=60)
            long = socket.create_connection(("127.0.0.1", s.port))
            socks.append(long)
            long.sendall(b"GET /debug/pprof/profile?seconds=%d HTTP/1.1\r\nHost: x\r\n\r\n"
                         % int(LAT_PHASE + 1))
            wait_for(lambda: s.metrics()["stacktreed_http_profiles_open"] == 1, 10,
                     "the long profile did not open")
            res["long_profile"] = scrape(s.port, LAT_PHASE)
            ans = read_answer(long, 30)	# (named by the loop: after its snapshot)
            check(ans.startswith(b"HTTP/1.1 200"), "the long profile answered %r" % ans[:40])
            # the loop was busy meanwhile: snapshots (0.5-3.3 s each here)
            check(len(s.snapshots()) - n0 >= 2, "%d snapshots while /metrics was timed"
                  % (len(s.snapshots()) - n0))
    finally:
        for c in socks:
            c.close()
        err = s.stop()
    limit = max(LAT_LIMIT, LAT_RATIO * p99(base))
    metric("endpoint.metrics_p99_idle_s", p99(base))
    said = ["idle p99 %.3f s max %.3f s (%d)" % (p99(base), base[-1], len(base))]
    for k, lat in res.items():
        metric("endpoint.metrics_p99_%s_s" % k, p99(lat))
        said.append("%s p99 %.3f s max %.3f s (%d)" % (k, p99(lat), lat[-1], len(lat)))
    print("    " + "; ".join(said))
    for k, lat in res.items():
        check(p99(lat) <= limit, "/metrics beside %s: p99 %.3f s over %.3f s (%s)"
              % (k, p99(lat), limit, "; ".join(said)))
    check("snapshot not written" not in err, "a snapshot failed: %s" % err)


def go_pprof(body, tmp, how):
    """`go tool pprof HOW` of a gzipped profile: its output."""
    path = os.path.join(tmp, "p%d.pb.gz" % time.monotonic_ns())
    with open(path, "wb") as f:
        f.write(body)
    env = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache"), PPROF_TMPDIR=tmp)
    p = subprocess.run(["go", "tool", "pprof", how, path], env=env, capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, "go tool pprof %s: %s" % (how, p.stderr))
    return p


def pprof_totals(body, tmp):
    """A gzipped profile's total samples (cpu seconds x 199) and duration
    (s), as `go tool pprof -top` reads them."""
    p = go_pprof(body, tmp, "-top")
    d = re.search(r"Duration: ([\d.]+)(ms|s)", p.stdout)
    m = re.search(r"Total samples = ([\d.]+)(ms|s)", p.stdout)
    check(d, "no duration in go tool pprof's output: %s" % p.stdout)
    secs = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1) if m else 0.0
    return secs * 199, float(d.group(1)) / (1000 if d.group(2) == "ms" else 1)


def pb_fields(buf):
    """The top-level fields of a protobuf message: (number, value) pairs,
    varints as ints, length-delimited ones as bytes."""
    i, out = 0, []

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if b < 0x80:
                return v
    while i < len(buf):
        key = varint()
        kind = key & 7
        if kind == 0:
            out.append((key >> 3, varint()))
        elif kind == 2:
            n = varint()
            out.append((key >> 3, buf[i:i + n]))
            i += n
        else:
            i += 8 if kind == 1 else 4
    return out


class CpuTrace:
    """A process's CPU seconds read every 20 ms, with the wall time: its CPU
    between two wall times, interpolated."""

    def __init__(self, pid):
        self.pid, self.points, self.stop = pid, [], threading.Event()
        self.t = threading.Thread(target=self.run)
        self.t.start()

    def run(self):
        while not self.stop.is_set():
            try:
                self.points.append((time.time(), cpu_s(self.pid)))
            except OSError:
                return
            self.stop.wait(0.02)

    def end(self):
        self.stop.set()
        self.t.join()

    def at(self, t):
        pts = self.points
        for (t0, c0), (t1, c1) in zip(pts, pts[1:]):
            if t0 <= t <= t1:
                return c0 + (c1 - c0) * (t - t0) / (t1 - t0) if t1 > t0 else c0
        check(False, "no CPU reading around %.2f (%.2f..%.2f)" % (t, pts[0][0], pts[-1][0]))
        return 0.0


def threads(path):
    """A profile.json's threads, read without the schema's check (the
    other tests make it; -a's files are large)."""
    with open(path) as f:
        return json.load(f)["threads"]


def pids_in_files(s, pids, seen):
    """Those of pids with samples in a snapshot file of Service s not read
    before (seen: the names read; each file read once: -a's files are large)."""
    found = set()
    for name in s.snapshots():
        path = os.path.join(s.dir, name, "profile.json")
        if name in seen or not os.path.exists(path):
            continue
        seen.add(name)
        found |= {t["pid"] for t in threads(path) if t["pid"] in pids and t["samples"] > 0}
    return found


WIN_SHIFT = 0.2		# s the profile's stated times may lag its window (naming, encoding)


def test_endpoint_window_whole():
    """An endpoint window holds the samples of its whole duration (issue 37
    item 5), on a busy machine: a `?seconds=2&pid=P` profile of a busy
    single-threaded demo (--unwind fp: no sample deferred), beside two
    spinners, says a duration of 2 s or more (the
    window's own, from its mark to its end) and holds what the demo used of
    a CPU in that span (its CPU time read every 20 ms meanwhile), at the
    rate the snapshot files of the same run recorded the demo (their
    samples over its CPU seconds); within what the demo can use in
    WIN_SHIFT s (the profile's stated time lags its window by the naming
    and encoding), 5% and 3 samples."""
    # frame pointers (the demo has them): every sample folded as it is
    # taken, none deferred (deferred ones count when walked: docs/service.md)
    s = Service(interval="1", args=["--unwind", "fp"])
    tmp = tempfile.mkdtemp(prefix="st-ep-win-")
    demo = trace = None

    seen = set()
    try:
        s.settled()
        with busy_cpus(2):
            demo = subprocess.Popen([workload("demo")], env=dict(os.environ, WL_SCALE="20"))
            wait_for(lambda: pids_in_files(s, {demo.pid}, seen), 30,
                     "the demo's samples never reached the files")
            trace = CpuTrace(demo.pid)
            time.sleep(0.3)
            st, body = s.get("/debug/pprof/profile?seconds=2&pid=%d" % demo.pid, timeout=60)
            time.sleep(0.5)
            trace.end()
            used = cpu_s(demo.pid)
            demo.kill()
            demo.wait()
            time.sleep(1.5)	# a snapshot after its end
    finally:
        if trace:
            trace.end()
        if demo and demo.poll() is None:
            demo.kill()
            demo.wait()
        rc, err = s.d.stop()
    check(rc == 0, "service exit %d: %s" % (rc, err))
    check(st == 200, "profile answered %d" % st)
    got, dur = pprof_totals(body, tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    f = dict((k, v) for k, v in pb_fields(gzip.decompress(body)) if k in (9, 10))
    start = f[9] / 1e9	# time_nanos: the answer's time less the duration
    files = 0
    for name in s.snapshots():
        path = os.path.join(s.dir, name, "profile.json")
        if os.path.exists(path):
            files += sum(t["samples"] for t in threads(path) if t["pid"] == demo.pid)
    shutil.rmtree(s.dir, ignore_errors=True)
    check(used > 0.2 and files > 0, "the demo used %.2f s of CPU, %d samples in the files"
          % (used, files))
    rate = files / used	# samples per CPU second, as this run recorded them
    cpu = trace.at(start + dur) - trace.at(start)
    lo = trace.at(start + dur - WIN_SHIFT) - trace.at(start)
    hi = trace.at(start + dur) - trace.at(start - WIN_SHIFT)
    metric("endpoint.window_vs_cpu", got / (rate * cpu) if cpu else 0)
    check(2.0 <= dur <= 4.0, "a 2 s window says %.2f s" % dur)
    check(cpu > 0.05, "the demo got %.2f s of CPU in the window: too busy to compare" % cpu)
    check(0.95 * lo * rate - 3 <= got <= 1.05 * hi * rate + 3,
          "a 2 s window holds %.0f samples; the demo used %.2f s of CPU in it (%.2f..%.2f "
          "with the shift), at %.0f samples a CPU second in the files"
          % (got, cpu, lo, hi, rate))


# ---- who gets what (issue 34) ----------------------------------------------

# clients of uid nobody run the system's python: the suite's may be a pyenv
# build under /root, which nobody cannot read
SYS_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"
AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
# root's demo workload names these; nobody runs `recursive` (rec_spin, ...)
ROOT_ONLY = (b"checksum", b"render_html", b"handle_request", b"build_response",
             b"workloads/demo")

# One HTTP request, raw, over TCP ("HOST:PORT") or a Unix socket
# ("unix:PATH"); extra header lines as further arguments; the whole answer
# on stdout.
RAW_CLIENT = r"""
import socket, sys
where, path = sys.argv[1], sys.argv[2]
extra = "".join(h + "\r\n" for h in sys.argv[3:])
if where.startswith("unix:"):
    s = socket.socket(socket.AF_UNIX)
    s.connect(where[5:])
else:
    host, port = where.rsplit(":", 1)
    s = socket.create_connection((host, int(port)))
s.settimeout(120)
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (path, extra)).encode())
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
sys.stdout.buffer.write(data)
"""


def raw_get(where, path, headers=(), nobody=False, timeout=120):
    """(status, body) of GET path at where, as root or as uid nobody."""
    cmd = (AS_NOBODY if nobody else []) + [SYS_PYTHON, "-c", RAW_CLIENT, where, path] + \
        list(headers)
    p = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd="/")
    check(p.returncode == 0, "client %s: %s" % (cmd[-3:], p.stderr.decode(errors="replace")))
    head, _, body = p.stdout.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.1 (\d+)", head)
    check(m, "no HTTP answer from %s%s: %r" % (where, path, p.stdout[:200]))
    return int(m.group(1)), body


def pprof_raw(body, tmp):
    """`go tool pprof -raw` of a gzipped profile: its locations' function
    names and addresses, and the whole text."""
    p = go_pprof(body, tmp, "-raw")
    funcs, addrs, locs = set(), [], False
    for line in p.stdout.splitlines():
        if line.startswith("Locations"):
            locs = True
        elif line.startswith("Mappings"):
            locs = False
        m = re.match(r"\s*\d+: (0x[0-9a-f]+)(?: M=\d+)? (\S+)", line)
        if locs and m:
            addrs.append(int(m.group(1), 16))
            funcs.add(m.group(2))
    return funcs, addrs, p.stdout


def nobody_workload(tmp):
    """`recursive` where nobody may run it (a 0755 copy in a 0755 directory)."""
    os.chmod(tmp, 0o755)
    wl = os.path.join(tmp, "recursive")
    shutil.copy(workload("recursive"), wl)
    os.chmod(wl, 0o755)
    return wl


def test_endpoint_nobody_sees_only_its_own():
    """uid nobody asks for a profile while root's demo and nobody's own
    `recursive` run, over TCP loopback and over the Unix socket: it gets
    its own process's functions and none of root's (no name, no path, in
    any string of the profile), no kernel address (--kernel: its kernel
    frames are one [kernel] frame); root, at the same time, gets both. The
    socket file is 0666, root's, and gone after the daemon."""
    tmp = tempfile.mkdtemp(prefix="st-ep-who-")
    wl = nobody_workload(tmp)
    sock = os.path.join(tmp, "st.sock")
    s = Service(args=["--kernel", "--listen", "unix:" + sock])
    procs = []
    try:
        st = os.stat(sock)
        check(stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o666 and
              st.st_uid == 0, "socket file mode %o uid %d" % (st.st_mode, st.st_uid))
        procs.append(subprocess.Popen([workload("demo")], env=dict(os.environ, WL_SCALE="8"),
                                      stdout=subprocess.DEVNULL))
        procs.append(subprocess.Popen(AS_NOBODY + [wl], env=dict(os.environ, WL_SCALE="8"),
                                      stdout=subprocess.DEVNULL, cwd=tmp))
        # the windows once the workloads' tables are in: until then their
        # samples wait, and count in the window open when they are walked
        # (docs/service.md); sanitized with the load at 12, 3 s windows
        # opened 1 s after their start held none of either, 5 runs of 5
        pids, have, seen = {p.pid for p in procs}, set(), set()
        wait_for(lambda: have.update(pids_in_files(s, pids, seen)) or have == pids, 30,
                 "the workloads' samples never reached the files")
        got = {}

        def fetch(name, where, nobody):
            got[name] = raw_get(where, "/debug/pprof/profile?seconds=3", nobody=nobody)
        tcp = "127.0.0.1:%d" % s.port
        ts = [threading.Thread(target=fetch, args=("root", tcp, False)),
              threading.Thread(target=fetch, args=("nobody tcp", tcp, True))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        # one profile at a time for nobody: the Unix socket's after the TCP one
        fetch("nobody unix", "unix:" + sock, True)
        status, body = raw_get("unix:" + sock, "/metrics", nobody=True)
        check(status == 200 and b"stacktreed_samples_total" in body,
              "nobody's /metrics over the socket: %d %r" % (status, body[:100]))
        for p in procs:
            check(p.poll() is None, "a workload ended before the profiles were taken")
    finally:
        for p in procs:
            p.kill()
            p.wait()
        err = s.stop()
    check(not os.path.exists(sock), "the socket file outlived the daemon")
    for name, (status, body) in got.items():
        check(status == 200, "%s: status %d %r" % (name, status, body[:200]))
    root = gzip.decompress(got["root"][1])
    check(b"checksum" in root and b"rec_spin" in root,
          "root's profile lacks a workload's functions")
    for name in ("nobody tcp", "nobody unix"):
        data = gzip.decompress(got[name][1])
        leaked = [w.decode() for w in ROOT_ONLY if w in data]
        check(not leaked, "%s: root's %s in nobody's profile" % (name, leaked))
        funcs, addrs, raw = pprof_raw(got[name][1], tmp)
        check("rec_spin" in funcs and "rec_self" in funcs,
              "%s: nobody's own functions missing: %s" % (name, sorted(funcs)))
        kernel = [hex(a) for a in addrs if a >= 1 << 47]
        check(not kernel, "%s: kernel addresses %s" % (name, kernel))
        check("processes of uid 65534" in raw, "%s: header %s" % (name, raw[:300]))
    shutil.rmtree(tmp, ignore_errors=True)
    check("snapshot not written" not in err, err)


# 40 clients of one uid, each reconnecting as soon as it has its answer
# (every fourth asks for a 1 s profile, the others /metrics); prints the
# answers by kind
FLOOD = r"""
import socket, sys, threading, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
end = time.time() + seconds
counts = {"ok": 0, "busy": 0, "other": 0}
lock = threading.Lock()
def client(i):
    path = "/debug/pprof/profile?seconds=1" if i % 4 == 0 else "/metrics"
    while time.time() < end:
        head = b""
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.settimeout(5)
            s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
            head = s.recv(12)
            while s.recv(65536):
                pass
            s.close()
        except OSError:
            pass
        k = ("ok" if head.startswith(b"HTTP/1.1 200") else
             "busy" if head.startswith(b"HTTP/1.1 503") else "other")
        with lock:
            counts[k] += 1
ts = [threading.Thread(target=client, args=(i,)) for i in range(40)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(counts["ok"], counts["busy"], counts["other"])
"""


def test_endpoint_fair_to_root():
    """40 reconnecting clients of uid nobody on loopback hold at most their
    own places (4 connections, 1 profile): a root scraper of /metrics,
    every 0.1 s for 5 s meanwhile, gets at least 90% of its answers, each
    within 5 s. The refusals are counted by reason."""
    s = Service(interval="60")	# no snapshot meanwhile: the endpoint's fairness alone
    try:
        flood = subprocess.Popen(AS_NOBODY + [SYS_PYTHON, "-c", FLOOD, str(s.port), "7"],
                                 stdout=subprocess.PIPE, text=True, cwd="/")
        time.sleep(1)
        asked = answered = 0
        slowest = 0.0
        end = time.time() + 5
        while time.time() < end:
            a = time.time()
            asked += 1
            try:
                answered += s.get("/metrics", timeout=5)[0] == 200
            except OSError:
                pass
            slowest = max(slowest, time.time() - a)
            time.sleep(0.1)
        out, _ = flood.communicate(timeout=60)
        ok, busy, other = (int(x) for x in out.split())
        m = s.metrics()
    finally:
        s.stop()
    metric("endpoint.root_answered_under_flood", answered / asked)
    metric("endpoint.root_slowest_under_flood_s", slowest)
    check(answered >= 0.9 * asked, "root's scraper: %d of %d answered beside 40 clients of "
          "nobody (slowest %.2f s)" % (answered, asked, slowest))
    check(ok > 0, "nobody's clients got no answer at all (%d busy, %d other)" % (busy, other))
    refused = m['stacktreed_http_refused_total{reason="connections_per_client"}']
    check(refused > 0 and busy > 0, "nobody's clients were never held to their places: "
          "%d refused, %d busy answers" % (refused, busy))
    check(m['stacktreed_http_refused_total{reason="connections_full"}'] == 0,
          "all places were taken: %s" % m)


def host_address():
    """A non-loopback IPv4 address of this host (a client connecting to it
    from here is not on loopback), or None."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.search(r"\binet (\d+\.\d+\.\d+\.\d+)/", line)
        if m and not m.group(1).startswith("127."):
            return m.group(1)
    return None


def test_endpoint_bearer_token():
    """--listen 0.0.0.0:PORT with --listen-token-file: a client on a
    non-loopback address gets 403 without the token and with a wrong one,
    everything with it (root's demo in its profile); a Prometheus server
    scraping that address with `authorization: credentials_file` scrapes.
    A token file others may read stops the daemon at the start."""
    addr = host_address()
    if not addr:
        raise Skip("no non-loopback IPv4 address to be a remote client from")
    tmp = tempfile.mkdtemp(prefix="st-ep-tok-")
    token = "t0ken-" + os.urandom(12).hex()
    tok = os.path.join(tmp, "token")
    with open(os.open(tok, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(token + "\n")
    bad = os.path.join(tmp, "bad")
    shutil.copy(tok, bad)
    os.chmod(bad, 0o644)
    p = subprocess.run([STACKTREED, "-a", "-d", "1", "-o", os.path.join(tmp, "out"),
                        "--listen", "0.0.0.0:%d" % free_port(), "--listen-token-file", bad],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode != 0 and "--listen-token-file" in p.stderr and "600" in p.stderr,
          "a 0644 token file: exit %d, %s" % (p.returncode, p.stderr))
    s = Service(host="0.0.0.0", args=["--listen-token-file", tok])
    port = s.port
    where = "%s:%d" % (addr, port)
    auth = "Authorization: Bearer " + token
    demo = subprocess.Popen([workload("demo")], env=dict(os.environ, WL_SCALE="4"),
                            stdout=subprocess.DEVNULL)
    pport = free_port()
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n  - job_name: stacktreed\n"
                "    authorization:\n      credentials_file: %s\n"
                "    static_configs:\n      - targets: ['%s']\n" % (tok, where))
    prom = subprocess.Popen(["prometheus", "--config.file=" + cfg,
                             "--storage.tsdb.path=" + os.path.join(tmp, "data"),
                             "--web.listen-address=127.0.0.1:%d" % pport],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        check(raw_get(where, "/metrics")[0] == 403, "no token: not 403")
        check(raw_get(where, "/metrics", ["Authorization: Bearer x" + token])[0] == 403,
              "a wrong token: not 403")
        check(raw_get(where, "/debug/pprof/profile?seconds=1", ["Authorization: Basic eDp5"])[0]
              == 403, "another scheme: not 403")
        status, body = raw_get(where, "/debug/pprof/profile?seconds=2", [auth])
        check(status == 200, "the token: %d %r" % (status, body[:200]))
        # any of root's demo (a function, its path): under load the demo
        # gets a few samples a second, and a window holds only its own span
        check(any(n in gzip.decompress(body) for n in ROOT_ONLY),
              "the token holder does not see root's demo")
        # on loopback the token counts too: a wrong one refuses even root
        check(raw_get("127.0.0.1:%d" % port, "/metrics", ["Authorization: Bearer no"])[0] == 403,
              "root with a wrong token: not 403")
        status, body = raw_get("127.0.0.1:%d" % port, "/debug/pprof/profile?seconds=2",
                               [auth], nobody=True)
        check(status == 200 and any(n in gzip.decompress(body) for n in ROOT_ONLY),
              "nobody with the token does not see everything")
        up = []

        def scraped():
            q = "http://127.0.0.1:%d/api/v1/query?query=%s" % (
                pport, urllib.request.quote('up{job="stacktreed"}'))
            try:
                with urllib.request.urlopen(q, timeout=2) as r:
                    up[:] = json.load(r)["data"]["result"]
            except OSError:
                return False
            return bool(up) and up[0]["value"][1] == "1"
        wait_for(scraped, 30, "Prometheus with credentials_file did not scrape: %s" % up)
        m = s.metrics()
        check(m['stacktreed_http_refused_total{reason="remote_without_token"}'] >= 1 and
              m['stacktreed_http_refused_total{reason="wrong_token"}'] >= 3,
              "refusals by reason: %s" % m)
    finally:
        prom.terminate()
        prom.wait(timeout=20)
        demo.kill()
        demo.wait()
        s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def tls_files(tmp):
    """A self-signed certificate for 127.0.0.1 and its key (mode 0600)."""
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=stacktreed",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    os.chmod(key, 0o600)
    return cert, key


def test_endpoint_tls():
    """--listen-tls-cert/-key (issue 34 item 1's optional TLS): a client that
    trusts the certificate gets /metrics over TLS; one speaking plain HTTP to
    the port gets no answer, counted; a key others can read is refused
    before anything is loaded; and Prometheus scrapes it with the
    configuration docs/service.md gives (scheme https, tls_config ca_file,
    the bearer token from credentials_file), from a non-loopback address."""
    import ssl
    tmp = tempfile.mkdtemp(prefix="st-ep-tls-")
    cert, key = tls_files(tmp)
    shutil.copy(key, os.path.join(tmp, "open.pem"))
    os.chmod(os.path.join(tmp, "open.pem"), 0o644)
    p = subprocess.run([STACKTREED, "-a", "-d", "1", "-o", os.path.join(tmp, "x"), "--listen",
                        str(free_port()), "--listen-tls-cert", cert, "--listen-tls-key",
                        os.path.join(tmp, "open.pem")], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode != 0 and "--listen-tls-key" in p.stderr and "chmod 600" in p.stderr,
          "a key readable by others: exit %d, %s" % (p.returncode, p.stderr))
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("s3cret-for-tls\n")
    os.chmod(token, 0o600)
    s = Service(host="0.0.0.0", args=("--listen-tls-cert", cert, "--listen-tls-key", key,
                                      "--listen-token-file", token))
    pport = free_port()
    prom = None
    try:
        ctx = ssl.create_default_context(cafile=cert)
        url = "https://127.0.0.1:%d/metrics" % s.port
        with urllib.request.urlopen(url, context=ctx, timeout=10) as r:
            body = r.read().decode()
        check(r.status == 200 and "stacktreed_samples_total" in body,
              "/metrics over TLS: %d %s" % (r.status, body[:300]))
        # plain HTTP to the TLS port: no HTTP answer
        c = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            got = c.recv(4096)
        except ConnectionResetError:	# closed with our request unread
            got = b""
        c.close()
        check(not got.startswith(b"HTTP/"), "plain HTTP on the TLS port was answered: %r" % got)
        with urllib.request.urlopen(url, context=ctx, timeout=10) as r:
            body = r.read().decode()
        failed = [l for l in body.splitlines() if l.startswith("stacktreed_http_tls_failed_total")]
        check(failed and float(failed[0].split()[-1]) >= 1, "TLS failures not counted: %s" % failed)
        # Prometheus, as docs/service.md configures it, through the host's
        # own non-loopback address (so that the token is what lets it in)
        addr = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
        addr = [a for a in addr if ":" not in a and not a.startswith("127.")]
        if not addr:
            raise Skip("no non-loopback IPv4 address to scrape from")
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: stacktreed\n    scheme: https\n"
                    "    tls_config:\n      ca_file: %s\n      server_name: localhost\n"
                    "    authorization:\n      credentials_file: %s\n"
                    "    static_configs:\n      - targets: ['%s:%d']\n"
                    % (cert, token, addr[0], s.port))
        prom = subprocess.Popen(["prometheus", "--config.file=" + cfg,
                                 "--storage.tsdb.path=" + os.path.join(tmp, "data"),
                                 "--web.listen-address=127.0.0.1:%d" % pport],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        result = []

        def scraped():
            q = "http://127.0.0.1:%d/api/v1/query?query=%s" % (
                pport, urllib.request.quote('up{job="stacktreed"}'))
            try:
                with urllib.request.urlopen(q, timeout=2) as r:
                    result[:] = json.load(r)["data"]["result"]
            except OSError:
                return False
            return bool(result) and result[0]["value"][1] == "1"
        wait_for(scraped, 30, "Prometheus did not scrape over TLS: %s" % result)
    finally:
        if prom:
            prom.terminate()
            prom.wait(timeout=20)
        s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
