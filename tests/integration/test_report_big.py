"""`stacktree report` on big profile.json files (issue 23, item 8): the
reader (user/model/profile_json.c over user/model/jsonpull.c) builds the
trees as it reads, so a 1 GB profile reads back in memory of about the
file's size (measured 0.95x: 953 MB of peak RSS for 1.0 GB, 16 s including
a 385 MB xtree), a file past 2^31 bytes is not refused for its size, and
anything after the document is refused. Files are generated in /tmp and
deleted after. Under the sanitizers (slower, 2-3x the memory) the profile
is 50 MB, saying so."""
import os
import shutil
import subprocess
import sys
import tempfile

from stcheck import STACKTREE, check, load, metric

MOD = "/usr/lib/x86_64-linux-gnu/libexample.so.1"
LEAVES = 1000	# per middle node


def head(samples):
    return ('{"event":"cpu-clock","frequency_hz":99,"duration_s":1.0,"samples":%d,"lost":0,'
            '"unresolved":0,"modules":[{"name":"%s","path":"%s","build_id":null}],"threads":'
            '[{"pid":1,"tid":1,"comm":"big","cgroup":"/","root":{"function":null,"offset":null,'
            '"module":null,"address":null,"kind":"root","base":0,"cum":%d,"calls":1,"children":['
            % (samples, MOD, MOD, samples))


def generate(path, size):
    """A profile.json of about size bytes in the writer's format: one
    thread, main nodes mid_function_N each with LEAVES leaves of one sample
    (file and line included); the number of leaves (= samples)."""
    leaf = ('{"function":"leaf_function_%d","offset":%d,"module":"' + MOD + '","address":'
            '"0x7f00%08x","kind":"callsite","file":"src/leaf.c","line":%d,"base":1,"cum":1,'
            '"calls":1,"children":[]}')
    block = ",".join(leaf % (i, i % 97, i * 16, i + 1) for i in range(LEAVES))
    mids = max(1, size // (len(block) + 160))
    with open(path, "w") as f:
        f.write(head(mids * LEAVES))
        for m in range(mids):
            f.write('%s{"function":"mid_function_%d","offset":12,"module":"%s","address":'
                    '"0x55%010x","kind":"callsite","base":0,"cum":%d,"calls":1,"children":['
                    % ("," if m else "", m, MOD, m * 64, LEAVES))
            f.write(block)
            f.write("]}")
        f.write("]}}]}\n")
    return mids * LEAVES


# runs a command and prints its peak RSS (KiB) last on stderr: a fresh
# process, so that no earlier child's maximum counts
PEAK = ("import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:])\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(r.returncode)\n")


def report(path, out, fmt="xtree"):
    """stacktree report on path: (exit status, stderr, its peak RSS in bytes)."""
    p = subprocess.run([sys.executable, "-c", PEAK, STACKTREE, "report", "--input", path,
                        "-o", out, "--format", fmt], capture_output=True, text=True, timeout=600)
    err, _, peak = p.stderr.rstrip("\n").rpartition("\n")
    return p.returncode, err, int(peak) * 1024


def test_report_reads_a_1gb_profile_in_bounded_memory():
    size = 1 << 30
    d = tempfile.mkdtemp(prefix="st-big-")
    path = os.path.join(d, "profile.json")
    try:
        samples = generate(path, size)
        real = os.path.getsize(path)
        rc, err, peak = report(path, os.path.join(d, "out"))
        check(rc == 0, "stacktree report on %d bytes: exit %d: %s" % (real, rc, err))
        check("(%d samples)" % samples in err, "samples: " + err)
        metric("report_big.rss_per_file_byte", peak / real)
        limit = 3 * real
        check(peak < limit, "peak RSS %d MB for a %d MB profile.json (want < %d MB)"
              % (peak >> 20, real >> 20, limit >> 20))
        x = open(os.path.join(d, "out", "xtree.txt")).read(1 << 16)
        check("mid_function_0" in x and "leaf_function_" in x, "xtree: " + x[:2000])
    finally:
        shutil.rmtree(d)


def test_report_reads_a_profile_past_2gib():
    """2.2 GB: a small profile with 2.2 GB of white space inside (valid
    JSON); the old reader passed the length as an int and said "buffer size
    overflow". 3 s (6 s under ASan)."""
    d = tempfile.mkdtemp(prefix="st-big-")
    path = os.path.join(d, "profile.json")
    try:
        with open(path, "w") as f:
            f.write(head(2).replace('"children":[', '"children":[\n'))
            pad = " " * (1 << 20) + "\n"
            for _ in range(2200):
                f.write(pad)
            f.write('{"function":"after_2gib","base":2,"cum":2}]}}]}\n')
        real = os.path.getsize(path)
        check(real > 2200 << 20, "generated %d bytes" % real)
        rc, err, _ = report(path, os.path.join(d, "out"), "json")
        check(rc == 0, "stacktree report on %d bytes: exit %d: %s" % (real, rc, err))
        prof = load(os.path.join(d, "out"), generated=True)
        names = [c.get("function") for c in prof["threads"][0]["root"]["children"]]
        check(names == ["after_2gib"], "children past 2 GiB: %s" % names)
    finally:
        shutil.rmtree(d)


def test_report_refuses_garbage_after_the_document():
    """A valid document followed by anything is refused with one line
    naming the byte: a 4 GiB sparse file (the rest NUL bytes) is refused at
    once, and text after the closing brace too."""
    d = tempfile.mkdtemp(prefix="st-big-")
    path = os.path.join(d, "profile.json")
    doc = head(1) + '{"function":"f","base":1,"cum":1}]}}]}\n'
    try:
        for tail, size in (("", 4 << 30), ("}", 0), ("garbage", 0), ('{"event":"x"}', 0)):
            with open(path, "w") as f:
                f.write(doc + tail)
                if size:
                    f.truncate(size)
            rc, err, _ = report(path, os.path.join(d, "out"))
            lines = err.strip().splitlines()
            check(rc != 0 and len(lines) == 1 and "garbage after the end of the document" in err
                  and "byte %d" % len(doc) in err and path in err,
                  "%r + %d bytes: exit %d: %r" % (tail, size, rc, err))
    finally:
        shutil.rmtree(d)
