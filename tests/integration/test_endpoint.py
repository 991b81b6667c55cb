"""Integration tests of the live endpoint (--listen, issue 21 item 1) with
real clients: `go tool pprof` pulls a profile while the service writes its
snapshots (the same samples in both), a Prometheus server scrapes /metrics,
and hostile clients (one that never reads, one that never finishes its
request, more than the bounds allow) leave sampling and snapshots on
schedule."""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request

from stcheck import Daemon, check, function_cum, load, metric, wait_for, workload

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

    def __init__(self, interval="2"):
        self.dir = tempfile.mkdtemp(prefix="st-ep-")
        self.port = free_port()
        self.d = Daemon(["-a", "-F", "199", "--interval", interval, "-o", self.dir,
                         "--listen", str(self.port)])
        self.url = "http://127.0.0.1:%d" % self.port

    def get(self, path, timeout=10):
        with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
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


def test_endpoint_go_pprof():
    """A `go tool pprof` request covering a whole run of the demo workload:
    its functions' shares are the snapshot files' (the same samples: the
    request takes none from them), the same totals, the build id of the
    files' modules; the comm filter keeps only the demo."""
    s = Service()
    tmp = tempfile.mkdtemp(prefix="st-ep-go-")
    env = dict(os.environ, HOME=tmp, GOCACHE=os.path.join(tmp, "gocache"),
               PPROF_TMPDIR=tmp)
    try:
        go = subprocess.Popen(["go", "tool", "pprof", "-top",
                               s.url + "/debug/pprof/profile?seconds=7&comm=demo"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        wait_for(lambda: s.metrics()["stacktreed_http_profiles_open"] == 1, 10,
                 "go tool pprof's request did not open a profile")
        demo = subprocess.run([workload("demo")], env=dict(os.environ, WL_SCALE="1"),
                              timeout=60)
        check(demo.returncode == 0, "demo exited %d" % demo.returncode)
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
    check(total > 300, "the files hold %d demo samples (3 s at 199 Hz expected)" % total)
    m = re.search(r"Total samples = ([\d.]+)(ms|s)", out)
    check(m, "no total in go tool pprof's output: %s" % out)
    secs = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    metric("endpoint.pprof_vs_files", secs * 199 / total)
    # the same samples: the cpu total is samples x period (1/199 s)
    check(abs(secs * 199 - total) <= 0.02 * total + 2,
          "pprof total %.0f samples, the files %d" % (secs * 199, total))
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
    holds all of its samples."""
    demo = subprocess.Popen([workload("demo")], env=dict(os.environ, WL_SCALE="4"))
    out_dir = tempfile.mkdtemp(prefix="st-ep-pid-")
    tmp = tempfile.mkdtemp(prefix="st-ep-go-")
    port = free_port()
    d = Daemon(["--pid", str(demo.pid), "-F", "199", "-o", out_dir, "--listen", str(port)])
    try:
        go = subprocess.run(["go", "tool", "pprof", "-top",
                             "http://127.0.0.1:%d/debug/pprof/profile?seconds=2" % port],
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
    check(1.5 <= secs <= 2.5, "a 2 s profile of a busy thread holds %.2f s" % secs)
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

        # a client that asks for an hour and hangs up gives its place back
        gone = socket.create_connection(("127.0.0.1", s.port))
        gone.sendall(b"GET /debug/pprof/profile?seconds=3600 HTTP/1.1\r\nHost: x\r\n\r\n")
        wait_for(lambda: s.metrics()["stacktreed_http_profiles_open"] >= 1, 5,
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
    finally:
        for c in socks:
            c.close()
        err = s.stop()
    check("snapshot not written" not in err, "a snapshot failed: %s" % err)
