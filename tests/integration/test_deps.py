"""The packages `make demo` installs (issue 21 item 6): scripts/deps.sh's
build set is what building and running need, each package there for a
reason found in the tree, and its dependency closure (apt-cache, from this
machine's package lists) holds none of the test toolchain; the test set is
the build set and the rest, as `make test` and .ci/run install it."""
import os
import re
import shutil
import subprocess

from stcheck import ROOT, check

DEPS = os.path.join(ROOT, "scripts", "deps.sh")

# Why each build package is needed: a pattern that must occur in the files
# named (a package whose reason is gone fails here, to be dropped).
REASONS = {
    "make": ("Makefile", r"^all:"),
    "gcc": ("Makefile", r"CC\s+\?= cc"),
    "clang": ("Makefile", r"-target bpf"),
    "pkg-config": ("Makefile", r"pkg-config"),
    "bpftool": ("Makefile", r"gen skeleton"),
    "libbpf-dev": ("user/collect/session.c", r"<bpf/libbpf.h>"),
    "libelf-dev": ("binsym", r"<(gelf|libelf)\.h>"),
    "libdw-dev": ("binsym", r"<elfutils/libdw"),
    "zlib1g-dev": ("Makefile", r"-lz\b"),
    "libjson-c-dev": ("Makefile", r"json-c"),
    "protobuf-c-compiler": ("Makefile", r"protoc-c"),
    "libprotobuf-c-dev": ("Makefile", r"-lprotobuf-c"),
    "libiberty-dev": ("Makefile", r"-liberty"),
    "libssl-dev": ("Makefile", r"-lssl"),
    "libdebuginfod-dev": ("binsym/debuginfod.c", r"<elfutils/debuginfod\.h>"),
    "util-linux": ("user/collect/faults/forcefault.c", r"mkswap"),
    "kmod": ("user/collect/faults/forcefault.c", r"modprobe"),
}
# The test toolchain the issue saw `make demo` install
HEAVY = {"nodejs", "golang-go", "bpftrace", "debuginfod", "linux-perf", "prometheus",
         "python3.11-dbg", "sqlite3", "lld-14", "libclang-rt-14-dev", "libcmocka-dev",
         "libc6-dbg", "python3", "jq", "libxml2-utils", "g++", "llvm", "elfutils", "ffmpeg"}


def pkgs(which):
    p = subprocess.run([DEPS, which, "--list"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "deps.sh %s --list: %s" % (which, p.stderr))
    return p.stdout.split()


def found(where, pattern):
    path = os.path.join(ROOT, where)
    files = [path] if os.path.isfile(path) else [
        os.path.join(b, f) for b, _, fs in os.walk(path) for f in fs if f.endswith((".c", ".h"))]
    return any(re.search(pattern, open(f, errors="replace").read(), re.M) for f in files)


def test_deps_demo_installs_only_build():
    build, test = pkgs("build"), pkgs("test")
    check(set(build) == set(REASONS), "build set %s, reasons known for %s"
          % (sorted(build), sorted(REASONS)))
    for p in build:
        where, pattern = REASONS[p]
        check(found(where, pattern), "%s: no %r in %s any more" % (p, pattern, where))
    check(test[:len(build)] == build and not set(test[len(build):]) & set(build),
          "the test set is not the build set and the rest")
    check(HEAVY <= set(test), "test set misses %s" % sorted(HEAVY - set(test)))
    mk = open(os.path.join(ROOT, "Makefile")).read()
    check(re.search(r"^demo: deps$", mk, re.M) and re.search(r"^deps:\n\t@scripts/deps.sh build$",
                                                             mk, re.M),
          "make demo does not install the build set only")
    check(re.search(r"^test: test-deps", mk, re.M), "make test does not install the test set")
    check(re.search(r"^scripts/deps.sh test", open(os.path.join(ROOT, ".ci/run")).read(), re.M),
          ".ci/run does not install the test set")
    if not shutil.which("apt-cache"):
        return
    p = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                        "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] + build,
                       capture_output=True, text=True, timeout=120)
    closure = {l for l in p.stdout.splitlines() if l and not l.startswith(" ")}
    check(set(build) <= closure, "apt-cache knows no %s" % sorted(set(build) - closure))
    pulled = HEAVY & closure
    check(not pulled, "make demo's packages pull in %s" % sorted(pulled))
