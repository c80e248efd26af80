#!/usr/bin/env python3
"""Two revisions of the package, a paper's runs with several seeds each: did a change move what the flows see?

    .venv/bin/python bench/revision_seeds_bench.py BEFORE AFTER SPEC [--points 3] [--match TEXT] [--seeds 3]
        [--profile quick] [--from-s 10] [--out bench/results/revision-seeds-<date>.md]

Checks out BEFORE and AFTER (git revisions; AFTER may be `WORKTREE`) as
bench/revision_ab_bench.py does and runs, with each revision's own runner, the
first --points sweep points of SPEC (of those whose name contains --match) (a spec file, relative to the repository)
in the given profile with repetitions 1..--seeds (repetition k runs with the
spec's seed + k - 1), alternating the revisions (BEFORE first for odd seeds).
Reports per point and flow the mean goodput from --from-s to the end of each
run (tidy/goodput.csv) and each run's fidelity verdict, and per point and flow
whether the AFTER runs lie within the BEFORE runs' range widened by half of
it on each side (the check bench/receiver_bench.py makes). On the virtual
clock a run with the same seed and revision repeats itself; across revisions
any change of timing in the guest, even in set-up, can send a two-flow run
down another path, so the seeds' spread is what a change is judged against;
the report also counts the runs whose tidy goodput file is byte for byte the
same before and after (a change that leaves the guest's timing alone).
"""
import argparse
import collections
import csv
import datetime
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from bench_io import write_text_atomic  # noqa: E402
from revision_ab_bench import worktree  # noqa: E402

# Runs inside the revision's tree: its own spec expansion and runner.
CHILD = """
import sys
tree, spec_path, out, profile, rep, npoints, match = sys.argv[1:8]
sys.path.insert(0, tree + "/mininet")
from bbrlab.experiment import spec
from bbrlab.host import runner
jobs = spec.expand(spec.load(spec_path, profile=profile, overrides={"repetitions": int(rep)}))
points = [p for p in dict.fromkeys(j["point"] for j in jobs) if match in p][:int(npoints)]
for j in jobs:
    if j["repetition"] == int(rep) and j["point"] in points:
        print(j["point"], "seed", j["seed"], flush=True)
        runner.execute(j, runner.run_dir_name(out, j), "uml", progress=lambda m: None)
"""


def run_seed(tree, args, out: pathlib.Path, rep: int) -> None:
    subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-c", CHILD, str(tree), str(tree / args.spec),
                    str(out), args.profile, str(rep), str(args.points), args.match], check=True)


def goodputs(root: pathlib.Path, from_s: float) -> dict:
    """{point: {rep: ({flow: Mbit/s}, valid, digest of tidy/goodput.csv)}} of the runs under root."""
    out = collections.defaultdict(dict)
    for path in sorted(root.glob("*/*/rep*/tidy/goodput.csv")):
        run = json.loads((path.parents[1] / "run.json").read_text())
        acc = collections.defaultdict(lambda: [0, 0.0])
        with open(path, newline="") as fh:
            for r in csv.DictReader(fh):
                if float(r["t_s"]) > from_s:
                    acc[r["flow"]][0] += int(r["bytes"])
                    acc[r["flow"]][1] += float(r["interval_s"])
        flows = {f: b * 8 / s / 1e6 for f, (b, s) in sorted(acc.items()) if s > 0}
        out[path.parts[-4]][path.parts[-3]] = (flows, bool(run.get("fidelity", {}).get("valid")),
                                               hashlib.sha256(path.read_bytes()).hexdigest())
    return out


def report(args, before: dict, after: dict) -> str:
    lines = [f"# {args.before} against {args.after}, {args.seeds} seeds ({datetime.date.today()})", "",
             f"`bench/revision_seeds_bench.py {args.before} {args.after} {args.spec} --points {args.points} "
             f"{f'--match {args.match} ' if args.match else ''}--seeds {args.seeds} --profile {args.profile} --from-s {args.from_s:g}`: mean goodput per flow "
             f"after {args.from_s:g} s, Mbit/s, one run per revision and seed.", "",
             "| point | flow | before, per seed | after, per seed | within (before's range widened by half) |",
             "|---|---|---|---|---|"]
    for point in sorted(before):
        flows = sorted({f for flows, _, _ in before[point].values() for f in flows})
        for f in flows:
            b = [before[point][r][0][f] for r in sorted(before[point])]
            a = [after.get(point, {})[r][0][f] for r in sorted(after.get(point, {}))]
            lo, hi = min(b), max(b)
            slack = (hi - lo) / 2
            ok = all(lo - slack <= v <= hi + slack for v in a)
            lines.append(f"| {point} | {f} | {', '.join(f'{v:.2f}' for v in b)} | {', '.join(f'{v:.2f}' for v in a)} "
                         f"| {'yes' if ok else '**no**'} |")
    invalid = [(name, p, r) for name, runs in (("before", before), ("after", after))
               for p, reps in runs.items() for r, (_, valid, _) in reps.items() if not valid]
    same = [(p, r) for p, reps in before.items() for r, run in reps.items() if after.get(p, {}).get(r, (0, 0, ""))[2] == run[2]]
    total = sum(len(reps) for reps in before.values())
    lines += ["", f"Invalid runs: {invalid or 'none'}.",
              f"Runs whose tidy/goodput.csv is byte for byte the same before and after (same point and seed): "
              f"{len(same)} of {total}."]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("spec", help="spec file relative to the repository, e.g. mininet/specs/yang2019/yang2019_fig03.yaml")
    parser.add_argument("--points", type=int, default=3)
    parser.add_argument("--match", default="", help="only the points whose name contains this")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--from-s", type=float, default=10.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    if not (REPO / args.spec).is_file():
        parser.error(f"no spec file {args.spec} in {REPO}")
    out = pathlib.Path(args.out or REPO / "bench" / "results" / f"revision-seeds-{datetime.date.today()}.md")
    with tempfile.TemporaryDirectory(prefix="bbrlab-seeds-") as tmp:
        root = pathlib.Path(tmp)
        trees = {"before": worktree(args.before, root), "after": worktree(args.after, root)}
        try:
            for rep in range(1, args.seeds + 1):
                for name in (("before", "after") if rep % 2 else ("after", "before")):
                    print(f"== seed {rep}: {name} ({trees[name]})", flush=True)
                    run_seed(trees[name], args, root / "runs" / name, rep)
        finally:
            for tree in trees.values():
                if tree != REPO:
                    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                                   capture_output=True)
        text = report(args, goodputs(root / "runs" / "before", args.from_s), goodputs(root / "runs" / "after", args.from_s))
    write_text_atomic(out, text)
    print(text)


if __name__ == "__main__":
    main()
