#!/usr/bin/env python3
"""Two revisions of the package, the same run, alternated in one call: what a change saved.

    .venv/bin/python bench/revision_ab_bench.py BEFORE AFTER [--rounds 2] [--rate 100]
        [--duration 12] [--out bench/results/revision-ab-<date>.md]

Checks out BEFORE and AFTER (any git revisions; AFTER may be `WORKTREE`, this
checkout as it is) into temporary worktrees that share this checkout's .venv
and testbed kernel (build/kernel: the kernel's inputs must be the same in
both), and runs each revision's own bench/host_cost_profile.py on the same
job (two BBR flows of 10 and 50 ms RTT, the second from 2 s, 2 MB buffer,
virtual clock, seed 1), BEFORE then AFTER, for --rounds rounds. The shared
host's speed drifts by a factor of several within an hour, so only runs
made side by side in one call are compared, and the report gives per round
the ratio BEFORE / AFTER of the whole run's host CPU, of each phase's, and
of the steady state's, plus what the flows saw.
"""
import argparse
import datetime
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import host_cost_compare as compare  # noqa: E402
from bench_io import write_text_atomic  # noqa: E402


def worktree(rev: str, root: pathlib.Path) -> pathlib.Path:
    if rev == "WORKTREE":
        return REPO
    path = root / rev.replace("/", "_")
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), rev],
                   check=True, capture_output=True)
    (path / ".venv").symlink_to(REPO / ".venv")
    (path / "build").mkdir(exist_ok=True)
    (path / "build" / "kernel").symlink_to(REPO / "build" / "kernel")
    return path


def profile(tree: pathlib.Path, tag: str, args, keep: pathlib.Path) -> dict:
    out = keep / f"{tag}.json"
    subprocess.run([str(REPO / ".venv" / "bin" / "python"), str(tree / "bench" / "host_cost_profile.py"),
                    "--duration", str(args.duration), "--rate", str(args.rate), "--tag", tag,
                    "--keep", str(keep / tag), "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    result = json.loads(out.read_text())
    run = keep / tag / "run"
    return {"cost": compare.cost(result), "flows": compare.flow_metrics(run),
            "phases": {p["phase"]: p["host_cpu_s"] for p in result["phases"]},
            "forks_setup": (result["guest_marks"]["setup_done"]["processes"]
                            - result["guest_marks"]["start"]["processes"]) if result.get("guest_marks") else None}


def report(args, rounds) -> str:
    lines = [f"# {args.before} against {args.after}: one run each, alternated ({datetime.date.today()})", "",
             f"`bench/revision_ab_bench.py {args.before} {args.after} --rounds {args.rounds} --rate {args.rate:g} "
             f"--duration {args.duration:g}`", "",
             "| round | revision | whole-run host CPU-s | steady state CPU-s per exp-s | guest processes in set-up "
             "| flow: goodput Mbit/s, mean RTT ms | valid |", "|---|---|---|---|---|---|---|"]
    for k, (b, a) in enumerate(rounds, 1):
        for name, r in ((args.before, b), (args.after, a)):
            flows = "; ".join(f"{f}: {v['goodput_mbps']:.2f}, {v['rtt_ms']:.1f}" for f, v in r["flows"]["flows"].items())
            lines.append(f"| {k} | {name} | {r['cost']['run_host_cpu_s']:.1f} | {r['cost']['uml_cpu_per_s']:.3f} | "
                         f"{r['forks_setup']} | {flows} | {r['flows']['valid']} |")
    ratio = [b["cost"]["run_host_cpu_s"] / a["cost"]["run_host_cpu_s"] for b, a in rounds]
    steady = [b["cost"]["uml_cpu_per_s"] / a["cost"]["uml_cpu_per_s"] for b, a in rounds]
    lines += ["", f"Whole run, {args.before} / {args.after} per round: "
              + ", ".join(f"{x:.2f}" for x in ratio) + f" (median {statistics.median(ratio):.2f}); steady state: "
              + ", ".join(f"{x:.2f}" for x in steady) + ".", "",
              "Host CPU-s per phase (medians over rounds):", "", f"| phase | {args.before} | {args.after} |", "|---|---|---|"]
    # Phases pair up by position when both revisions split the run alike (a renamed phase keeps
    # its place), else by name; a phase only one side has reads 0 on the other.
    names_b, names_a = list(rounds[0][0]["phases"]), list(rounds[0][1]["phases"])
    pairs = list(zip(names_b, names_a)) if len(names_b) == len(names_a) else [(n, n) for n in names_b]
    for phase_b, phase_a in pairs:
        b = statistics.median(r[0]["phases"].get(phase_b, 0) for r in rounds)
        a = statistics.median(r[1]["phases"].get(phase_a, 0) for r in rounds)
        label = phase_a if phase_a == phase_b else f"{phase_a} (before: {phase_b})"
        lines.append(f"| {label} | {b:.2f} | {a:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--duration", type=float, default=12)
    parser.add_argument("--out")
    args = parser.parse_args()
    out = pathlib.Path(args.out or REPO / "bench" / "results" / f"revision-ab-{datetime.date.today()}.md")
    with tempfile.TemporaryDirectory(prefix="bbrlab-ab-") as tmp:
        root = pathlib.Path(tmp)
        trees = [worktree(args.before, root), worktree(args.after, root)]
        rounds = []
        try:
            for k in range(args.rounds):
                pair = []
                for tree, name in zip(trees, ("before", "after")):
                    print(f"== round {k + 1}: {name} ({tree})", flush=True)
                    pair.append(profile(tree, f"{name}-{k + 1}", args, root))
                rounds.append(pair)
        finally:
            for tree in trees:
                if tree != REPO:
                    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                                   capture_output=True)
    text = report(args, rounds)
    write_text_atomic(out, text)
    print(text)


if __name__ == "__main__":
    main()
