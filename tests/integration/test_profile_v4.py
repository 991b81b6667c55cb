"""test_profile_v4.py - profile.json version 4's tables and rows (written
as version 5, docs/reports.md): a tree
1000 frames deep written by `stacktree report` is read back by it, and by
python's json, python3-jsonschema and stcheck.load() at python's default
recursion limit (issue 36: version 3 nested a node per level); the checked-in
version 3 file (tests/fuzz/corpus/json/version3.json, from the version 3
writer) is still read, and its version 5 copy loads to the same trees in
stcheck.load()'s shape; stcheck's validator, the schema's definitions
inlined, finds the errors the schema as written finds (version 4's arcflow
and version 5's). Offline: no BPF, no root."""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

from stcheck import ROOT, SCHEMA, STACKTREE, check, inline_defs, load

DEPTH = 1000
V3 = os.path.join(ROOT, "tests", "fuzz", "corpus", "json", "version3.json")
# the version 4 writer's copy of the v3 file, with its arcflow (names in rows)
V4AF = os.path.join(ROOT, "tests", "fuzz", "corpus", "json", "v4-arcflow-version3.json")


def report(args):
    p = subprocess.run([STACKTREE, "report"] + args, capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0, "stacktree report %s: %s" % (" ".join(args), p.stderr))
    return p


def test_profile_v4_deep_tree_default_recursion():
    tmp = tempfile.mkdtemp(prefix="st-it-v4deep-")
    try:
        folded = os.path.join(tmp, "deep.folded")
        with open(folded, "w") as f:
            f.write("deep;" + ";".join("f%d" % (i % 5) for i in range(DEPTH)) + " 3\n")
            f.write("deep;" + ";".join("f%d" % (i % 5) for i in range(DEPTH // 2)) + " 2\n")
        out = os.path.join(tmp, "a")
        report(["--folded", folded, "--format", "json", "-o", out])
        # read back by the C reader, written again the same
        again = os.path.join(tmp, "b")
        report(["--input", os.path.join(out, "profile.json"), "--format", "json", "-o", again])
        with open(os.path.join(out, "profile.json")) as a, \
                open(os.path.join(again, "profile.json")) as b:
            check(a.read() == b.read(), "profile.json read and written again differs")
        # python at its default recursion limit: json, the schema, load()
        code = ("import sys; sys.path.insert(0, %r); import stcheck\n"
                "limit = sys.getrecursionlimit()\n"
                "p = stcheck.load(%r, generated=True)\n"
                "n, d = p['threads'][0]['root'], 0\n"
                "while n['children']:\n"
                "    check = len(n['children']) == 1 and n['cum'] == (5 if d <= %d else 3)\n"
                "    assert check, (d, n['cum'])\n"
                "    n, d = n['children'][0], d + 1\n"
                "print(limit, sys.getrecursionlimit(), d, n['base'])\n"
                % (os.path.dirname(os.path.abspath(__file__)), out, DEPTH // 2 + 1))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
        check(p.returncode == 0, "stcheck.load() of a %d-deep tree: %s" % (DEPTH, p.stderr[-800:]))
        limit, after, depth, base = (int(x) for x in p.stdout.split())
        check(limit == after <= 1000, "the recursion limit was raised: %d -> %d" % (limit, after))
        # the root, the comm's frame ("deep"), then DEPTH frames
        check(depth == DEPTH + 1 and base == 3, "depth %d, leaf base %d" % (depth, base))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def strip(node):
    """(frame keys, [children]) of a tree, iteratively, for comparing."""
    out = []
    stack = [(node, out)]
    while stack:
        n, into = stack.pop()
        kids = []
        into.append((sorted((k, repr(v)) for k, v in n.items() if k != "children"), kids))
        for c in reversed(n["children"]):
            stack.append((c, kids))
    return out


def test_profile_v4_reads_version3():
    tmp = tempfile.mkdtemp(prefix="st-it-v4v3-")
    try:
        v3 = load(V3, generated=True)
        check(v3["version"] == 3 and len(v3["threads"]) == 2, "the v3 fixture changed")
        out = os.path.join(tmp, "v4")
        report(["--input", V3, "--format", "json,xtree", "-o", out])
        v4 = load(out, generated=True)
        check(v4["version"] == 5, "written as version %s" % v4["version"])
        for a, b in zip(v3["threads"], v4["threads"]):
            check(strip(a["root"]) == strip(b["root"]),
                  "thread %d: the v4 copy loads to other nodes than the v3 file" % a["tid"])
        for key in ("samples", "notes", "lost_by", "modules", "unresolved_by"):
            check(v3[key] == v4[key], "%s: %r != %r" % (key, v3[key], v4[key]))
        # and xtree.txt is the one the v3 file gives
        x3 = os.path.join(tmp, "x3")
        report(["--input", V3, "--format", "xtree", "-o", x3])
        body = [open(os.path.join(d, "xtree.txt")).read().split("\n# ", 1)[-1] for d in (out, x3)]
        check(body[0] == body[1], "xtree.txt from the v4 copy differs from the v3 file's")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_profile_v4_schema_inlined_same_errors():
    """stcheck.validate()'s schema, its $defs inlined (twice as fast on a
    Java profile's 22,600 node rows), against the schema as written: the
    same errors, by instance path and message, on the version 3 fixture,
    a version 4 file with its arcflow, a version 5 profile and copies of
    each with an error planted in each kind of row."""
    import jsonschema
    with open(SCHEMA) as f:
        schema = json.load(f)
    plain = jsonschema.Draft202012Validator(schema)
    inlined = jsonschema.Draft202012Validator(inline_defs(schema, schema["$defs"]))
    check("$ref" not in json.dumps(inlined.schema["properties"]["frames"]),
          "the frames' definition was not inlined")
    tmp = tempfile.mkdtemp(prefix="st-it-v4schema-")
    try:
        out = os.path.join(tmp, "v4")
        report(["--input", V3, "--format", "json", "-o", out])
        with open(os.path.join(out, "profile.json")) as f:
            v4 = json.load(f)
        with open(V3) as f:
            v3 = json.load(f)
        with open(V4AF) as f:
            v4af = json.load(f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def planted(doc, edit):
        doc = copy.deepcopy(doc)
        edit(doc)
        return doc

    def deepest(doc):
        n = doc["threads"][0]["root"]
        while n["children"]:
            n = n["children"][-1]
        return n

    docs = [v3, v4, v4af,
            planted(v3, lambda d: deepest(d).update(base=-1)),
            planted(v3, lambda d: deepest(d).update(function=7)),
            planted(v4, lambda d: d["threads"][0]["nodes"][1].__setitem__(2, -1)),
            planted(v4, lambda d: d["threads"][0]["nodes"][1].append(0)),
            planted(v4, lambda d: d["frames"][0].__setitem__(1, "native")),
            planted(v4, lambda d: d["frames"].append([0])),
            planted(v4, lambda d: d["strings"].append({"text": 1})),
            planted(v4, lambda d: d["threads"][0].pop("nodes")),
            planted(v4, lambda d: d.setdefault("arcflow", []).append({"index": -1})),
            planted(v4, lambda d: d["arcflow"][0][6][0].__setitem__(4, 2)),
            planted(v4, lambda d: d["arcflow"][1].append([])),
            planted(v4, lambda d: d["arcflow"][1][5][0].__setitem__(0, "main")),
            planted(v4af, lambda d: d["arcflow"].append(v4["arcflow"][0])),
            planted(v4af, lambda d: d["arcflow"][0]["children"][0].__setitem__("cum", -1))]
    found = 0
    for i, doc in enumerate(docs):
        a, b = ([(list(e.absolute_path), e.message) for e in v.iter_errors(doc)]
                for v in (plain, inlined))
        check(sorted(map(repr, a)) == sorted(map(repr, b)),
              "document %d: the schema as written finds %s, inlined %s" % (i, a, b))
        check(bool(a) == (i >= 3), "document %d: errors %s" % (i, a))
        found += len(a)
    print("    %d documents, %d errors found alike" % (len(docs), found))
