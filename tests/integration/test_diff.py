"""Integration test of `stacktree diff` (issue 36 item 4): two runs of the
phases workload whose phases moved (WL_PHASES: phase_a shrunk to a quarter,
phase_b tripled), compared. The text's deltas of phase_a and phase_b match
the change of their shares of the CPU time each run measured itself
(tolerance: the sampling's spread at these sample counts, ~2 points, and
the start-up and the phases' edges, plus margin for a busy machine); the
differential flame graph parses (xml.etree) and colours phase_b red and
phase_a blue; the difffolded lines add up to B's samples; B read as pprof
(profile.pb.gz) moves the phases as B's profile.json does."""
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from stcheck import STACKTREE, check, load, run_profiled, workload

SVG_NS = "{http://www.w3.org/2000/svg}"
TOLERANCE = 8.0  # points of %


def run(phases):
    """One profiled run: (its directory, {phase: share of the phases' CPU %})."""
    out, _, rep = run_profiled(["-F", "499", "--", workload("phases")],
                               {"WL_SCALE": "0.5", "WL_PHASES": phases})
    cpu = rep["phases"]
    check(len(cpu) == 3, "the workload reported %s" % cpu)
    total = sum(cpu.values())
    return out, {k: 100.0 * v / total for k, v in cpu.items()}


def diff(a, b, *args):
    p = subprocess.run([STACKTREE, "diff", a, b] + list(args), capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0, "stacktree diff %s: %s" % (list(args), p.stderr))
    return p.stdout


def function_row(text, name):
    """The functions table's row of name: (self A, self B, dself, total A,
    total B, dtotal)."""
    m = re.search(r"^\s*([\d.]+)%\s+([\d.]+)%\s+([-+][\d.]+)\s+([\d.]+)%\s+([\d.]+)%\s+"
                  r"([-+][\d.]+)\s+" + re.escape(name) + r" \[", text, re.M)
    check(m, "no row of %s in:\n%s" % (name, text))
    return tuple(float(g) for g in m.groups())


def test_diff_phases_moved():
    a, share_a = run("1,1,1")
    b, share_b = run("0.25,3,1")
    tmp = tempfile.mkdtemp(prefix="st-it-diff-")
    try:
        text = diff(a, b)
        samples_b = load(b)["samples"]
        for phase in ("phase_a", "phase_b"):
            row = function_row(text, phase)
            want = share_b[phase] - share_a[phase]
            print("  %s: total delta %+.2f points, the workload's own %+.2f"
                  % (phase, row[5], want))
            # the phases' shares of the CPU time the workload measured;
            # the profile's samples also hold start-up and exit
            check(abs(row[5] - want) <= TOLERANCE,
                  "%s: total delta %+.2f points, the workload's own %+.2f (tolerance %.0f)\n%s"
                  % (phase, row[5], want, TOLERANCE, text))
        check(function_row(text, "phase_b")[5] > 20 and function_row(text, "phase_a")[5] < -20,
              "the move is not shown:\n" + text)
        # the paths: main's callees with their deltas
        check(re.search(r"^\s*[\d.]+%\s+[\d.]+%\s+\+[\d.]+\s+phase_b$", text, re.M),
              "no path of phase_b:\n" + text)

        svg = os.path.join(tmp, "diff.svg")
        p = subprocess.run([STACKTREE, "diff", a, b, "-o", svg], capture_output=True,
                           text=True, timeout=120)
        check(p.returncode == 0 and os.path.exists(svg), "diff -o diff.svg: %s" % p.stderr)
        fills = {}
        for g in ET.parse(svg).getroot().iter(SVG_NS + "g"):
            rect = g.find(SVG_NS + "rect")
            if g.get("data-n") in ("phase_a", "phase_b") and rect is not None:
                fills[g.get("data-n")] = rect.get("fill")
        check(set(fills) == {"phase_a", "phase_b"}, "boxes drawn: %s" % fills)
        rgb = {k: (int(v[1:3], 16), int(v[3:5], 16), int(v[5:7], 16)) for k, v in fills.items()}
        check(rgb["phase_b"][0] == 255 and rgb["phase_b"][2] < 128,
              "phase_b grew but is %s" % fills["phase_b"])
        check(rgb["phase_a"][2] == 255 and rgb["phase_a"][0] < 128,
              "phase_a shrank but is %s" % fills["phase_a"])

        # B as pprof (stacktree report --format pprof): the same deltas
        pb = os.path.join(tmp, "b.pb.gz")
        p = subprocess.run([STACKTREE, "report", "--input", b, "-o", pb], capture_output=True,
                           text=True, timeout=120)
        check(p.returncode == 0, "report -o b.pb.gz: %s" % p.stderr)
        via_pprof = diff(a, pb)
        for phase in ("phase_a", "phase_b"):
            check(abs(function_row(via_pprof, phase)[5] - function_row(text, phase)[5]) < 0.01,
                  "%s: B as pprof moves %+.2f, as profile.json %+.2f" % (
                      phase, function_row(via_pprof, phase)[5], function_row(text, phase)[5]))

        folded = diff(a, b, "--format", "folded")
        total_b = sum(int(line.rsplit(" ", 1)[1]) for line in folded.splitlines())
        check(total_b == samples_b, "difffolded's B column sums to %d, B has %d samples"
              % (total_b, samples_b))
    finally:
        for d in (a, b, tmp):
            shutil.rmtree(d, ignore_errors=True)
