"""Readable names (issue 11, item 1): g++ compiling a C++ file (cc1plus, a
real C++ program from Debian) is profiled; no function in its xtree is
left mangled, profile.json keeps the mangled name as system_name, and
--no-demangle keeps the names as the symbol tables have them."""
import os
import shutil
import tempfile

from stcheck import check, check_invariants, load, nodes, run_profiled

GXX = shutil.which("g++")


def cxx_source(path, n):
    with open(path, "w") as f:
        f.write("#include <map>\n#include <vector>\n#include <string>\n#include <algorithm>\n"
                "#include <functional>\nnamespace app {\n"
                "template <typename T> struct Box { T v; Box(T x) : v(x) {} "
                "T get() const { return v; } };\n}\n")
        for i in range(n):
            f.write("int use%d(int k) {\n std::map<std::string, int> m; "
                    "std::vector<app::Box<int>> v;\n for (int i = 0; i < k; i++) "
                    "{ m[std::to_string(i + %d)] = i; v.emplace_back(i); }\n"
                    " std::sort(v.begin(), v.end(), [](const app::Box<int> &a, "
                    "const app::Box<int> &b) { return a.get() > b.get(); });\n"
                    " std::function<int(int)> f = [&](int x) { return x + v.front().get(); };\n"
                    " return f(k) + (int)m.size();\n}\n" % (i, i))
    return path


def cc1plus(prof):
    ts = [t for t in prof["threads"] if t["comm"] == "cc1plus"]
    check(len(ts) == 1, "threads: %s" % [(t["pid"], t["comm"]) for t in prof["threads"]])
    return ts[0]


def test_cpp_names_are_demangled():
    check(GXX, "g++ is not installed (scripts/deps.sh installs it)")
    tmp = tempfile.mkdtemp(prefix="st-cxx-")
    try:
        src = cxx_source(os.path.join(tmp, "t.cc"), 40)
        out, err, _ = run_profiled(["-F", "499", "--", GXX, "-O2", "-c", src, "-o",
                                    os.path.join(tmp, "t.o")])
        prof = load(out)
        check_invariants(prof)
        t = cc1plus(prof)
        named = [n for n, _, _ in nodes(t["root"]) if n["function"]]
        mangled = [n["function"] for n in named if n["function"].startswith(("_Z", "_R"))]
        check(not mangled, "%d mangled names left, e.g. %s" % (len(mangled), mangled[:3]))
        demangled = [n for n in named if n.get("system_name")]
        check(len(demangled) > 20 and all(n["system_name"].startswith("_Z") for n in demangled),
              "%d nodes carry system_name" % len(demangled))
        check(any("::" in n["function"] and "(" in n["function"] for n in demangled),
              "no C++ qualified name among %s" % [n["function"] for n in demangled[:5]])
        with open(os.path.join(out, "xtree.txt")) as f:
            xtree = f.read()
        check(" _Z" not in xtree, "a mangled name in xtree.txt")
        check("toplev::main(int, char**)" in xtree, "cc1plus's toplev::main not in xtree.txt")
        # --no-demangle: as in the symbol table, and no system_name (leaves
        # are enough: --unwind fp compiles no CFI for cc1plus's 30 MB)
        out, err, _ = run_profiled(["-F", "199", "--unwind", "fp", "--no-demangle", "--", GXX,
                                    "-O2", "-c", src,
                                    "-o", os.path.join(tmp, "t.o")])
        t = cc1plus(load(out))
        names = [n["function"] for n, _, _ in nodes(t["root"]) if n["function"]]
        check(any(n.startswith("_Z") for n in names) and
              not any(n.get("system_name") for n, _, _ in nodes(t["root"])),
              "--no-demangle: %s" % names[:5])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
