"""The BPF programs against the verifier: each program's verified
instructions (bpf_prog_info.verified_insns, printed by `stacktreed -v`) in
every mode, against the budget written beside the program in bpf/
(`#define ST_BUDGET_<PROGRAM> <percent>` of the kernel's 1,000,000-instruction
limit), with the headroom printed; and which programs each mode loads: one a
mode does not use is neither loaded nor verified. The full timer program is
loaded after the launch (user/collect/session.c): STACKTREED_TEST_LATE=all
has it walk every runtime at once and its load waited for, so that its
figures are printed; without it, `-- true` loads it walking no runtime."""
import glob
import os
import re
import shutil
import subprocess
import tempfile

from stcheck import ROOT, STACKTREED, check, metric

LIMIT = 1000000  # BPF_COMPLEXITY_LIMIT_INSNS
VERIFIED = re.compile(r"^stacktreed: BPF program (\w+): (\d+) instructions verified", re.M)
LATE = re.compile(r"^stacktreed: BPF program (on_timer_\w+): \d+ instructions verified .*; "
                  r"walking ([\w ]+), loaded on a thread", re.M)
BUDGET = re.compile(r"^#define ST_BUDGET_(\w+)\s+(\d+)\b", re.M)


def budgets():
    """{program: percent} from the ST_BUDGET_* defines of bpf/*.bpf.[ch]."""
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "bpf", "*.bpf.[ch]"))):
        with open(path) as f:
            for m in BUDGET.finditer(f.read()):
                name = m.group(1).lower()
                check(name not in found, "ST_BUDGET_%s defined twice" % m.group(1))
                found[name] = int(m.group(2))
    return found


def run_v(args, late="all"):
    """stderr of one `stacktreed -v ARGS -- true` (STACKTREED_TEST_LATE=late)."""
    out = tempfile.mkdtemp(prefix="st-it-verifier-")
    try:
        p = subprocess.run([STACKTREED, "-v", "-o", out] + args + ["--", "true"],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, STACKTREED_TEST_LATE=late))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    check(p.returncode == 0, "stacktreed %s exited %d: %s" % (args, p.returncode,
                                                             p.stderr[-2000:]))
    return p.stderr


def loaded(args):
    """{program: verified instructions} of one `stacktreed -v ARGS -- true`,
    the full timer program walking every runtime."""
    progs = {m.group(1): int(m.group(2)) for m in VERIFIED.finditer(run_v(args))}
    check(progs, "stacktreed -v %s printed no verified instruction counts" % args)
    return progs


def test_true_loads_no_runtime_walker():
    """`-- true` is neither Python nor Java: its full timer program, loaded
    after the launch, walks no runtime (they are verified only once a
    process of theirs is seen)."""
    for unwind in ("fp", "auto"):
        err = run_v(["--unwind", unwind], late="wait")
        late = LATE.findall(err)
        check(len(late) == 1, "--unwind %s -- true: not one full timer program loaded "
              "after the launch: %s" % (unwind, late))
        check(late[0][1] == "no runtime", "--unwind %s -- true loaded %s walking %s"
              % (unwind, late[0][0], late[0][1]))


def test_verified_instructions_within_budgets():
    budget = budgets()
    check(budget, "no ST_BUDGET_* define in bpf/")
    worst = {}  # program -> (verified instructions, the mode that took most)

    def note(args, progs):
        for name, n in progs.items():
            check(name in budget, "program %s has no ST_BUDGET_%s beside it in bpf/"
                  % (name, name.upper()))
            if n > worst.get(name, (-1, ""))[0]:
                worst[name] = (n, " ".join(args))

    for unwind in ("fp", "dwarf", "auto"):
        variant = "fp" if unwind == "fp" else "dwarf"
        for event in ("cpu", "faults", "cpu,faults", "wall", "cpu,offcpu"):
            # two events with --kernel: the timer's and the off-CPU
            # program's largest (offcpu alone loads the same program)
            args = ["--unwind", unwind, "--event", event] + \
                (["--kernel"] if "," in event else [])
            progs = loaded(args)
            want = set()
            if {"cpu", "wall"} & set(event.split(",")):
                # the dispatcher, the early program, the full one (late);
                # a launched command sampled on the timer alone, deferred
                # (every --unwind mode): the early object's
                # (bpf/early.bpf.c) in place of on_timer_early
                early = "on_early" if event == "cpu" else "on_timer_early"
                want |= {"on_timer", early, "on_timer_" + variant}
            if "faults" in event.split(","):
                want.add("on_fault_" + variant)
            if {"offcpu", "wall"} & set(event.split(",")):
                want.add("on_offcpu_" + variant)
            sampling = {p for p in progs
                        if p.startswith(("on_timer", "on_fault", "on_offcpu", "on_early"))}
            check(sampling == want, "%s loaded the sampling programs %s, not %s"
                  % (" ".join(args), sorted(sampling), sorted(want)))
            for life in ("on_fork", "on_exec", "on_exit"):
                check(life in progs, "%s did not load %s" % (" ".join(args), life))
            note(args, progs)
    # the benchmark's program, only when asked for
    args = ["--unwind", "fp", "--bench-bare"]
    progs = loaded(args)
    check("on_timer_bare" in progs and "on_timer_fp" not in progs,
          "--bench-bare loaded %s" % sorted(progs))
    note(args, progs)

    print("  %-16s %9s %7s %9s %9s  %s" % ("program", "verified", "budget", "of limit",
                                           "headroom", "(largest in)"))
    over = []
    for name in sorted(worst):
        n, where = worst[name]
        cap = budget[name] * LIMIT // 100
        metric("verified_insns." + name, n)
        print("  %-16s %9d %6d%% %8.1f%% %9d  (%s)" % (name, n, budget[name], 100.0 * n / LIMIT,
                                                      cap - n, where))
        if n > cap:
            over.append("%s: %d instructions verified, over its budget of %d%% (%d)"
                        % (name, n, budget[name], cap))
    # (on_prepare_exec is loaded on kernels from 6.10 only)
    unused = sorted(set(budget) - set(worst) - {"on_prepare_exec"})
    check(not unused, "budgets of programs no mode loaded: %s" % unused)
    check(not over, "; ".join(over))
