#!/usr/bin/env python3
"""The run-to-run spread the backend cross-check holds a difference to, measured.

    .venv/bin/python bench/seed_spread.py [--seeds 1 2 3] [--keep DIR]
        [--out bench/results/seed-spread-<date>.md]

analysis/crosscheck.R compares the same runs on two backends and calls a difference
"within" when it is no larger than the spread of two independent runs of one
configuration on the uml backend (its SPREAD constants, docs/native-backend.md). On the
virtual clock a run is a function of its spec and seed, so two independent runs are two
seeds. This script runs the five configurations the constants were first measured on
(Ma et al.'s quick profile, 30 s: Fig. 3 at 10 and at 100 Mbit/s, Fig. 5 at 10 vs 100 ms,
Fig. 6 with one and with five 10-ms flows against one 50-ms flow; BBR only) once per seed
(a copy of the spec with `seed: <n>`, its name kept), then runs crosscheck.R on every pair
of seeds as if they were two backends, and records per metric the largest difference, the
largest difference over the spread crosscheck.R allows, and how many compared values lie
within it. About 15 runs of 30 s: 3-4 host CPU-minutes.
"""
import argparse
import csv
import datetime
import itertools
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import yaml

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from bench_io import write_text_atomic  # noqa: E402

CONFIGS = [("ma2019_fig03", "rate_mbps=10"), ("ma2019_fig03", "rate_mbps=100"),
           ("ma2019_fig05", "f2_rtt_ms=100"), ("ma2019_fig06", "f2_count=1"), ("ma2019_fig06", "f2_count=5")]
METRICS = ("goodput_mbps", "share_pct", "util_pct", "rtt_ms", "qdelay_ms")


def seeded_copy(experiment: str, seed: int, where: pathlib.Path) -> pathlib.Path:
    """The spec with `seed: <seed>` (its name kept, so crosscheck.R pairs the runs)."""
    raw = yaml.safe_load((REPO / "mininet" / "specs" / "ma2019" / f"{experiment}.yaml").read_text())
    raw["seed"] = seed
    path = where / f"seed{seed}" / f"{experiment}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def run_tree(seed: int, root: pathlib.Path, kernel: str) -> pathlib.Path:
    tree = root / f"seed{seed}" / "runs"
    env = {**os.environ, "PYTHONPATH": str(REPO / "mininet")}
    for experiment, point in CONFIGS:
        if (tree / experiment / point / "rep1" / "run.json").is_file():
            continue
        spec = seeded_copy(experiment, seed, root / "specs")
        print(f"== seed {seed}: {experiment} {point}", flush=True)
        subprocess.run([sys.executable, "-m", "bbrlab", "run", str(spec), "--profile", "quick", "--point", point,
                        "--out", str(tree), "--kernel", kernel], check=True, env=env, cwd=REPO,
                       stdout=subprocess.DEVNULL)
    return tree


def rate_mbps(tree: pathlib.Path, experiment: str, point: str) -> float:
    return json.loads((tree / experiment / point / "rep1" / "run.json").read_text())["bottleneck"]["rate_mbps"]


def compare(a: int, b: int, trees: dict, root: pathlib.Path) -> list:
    out = root / f"seed{a}-vs-seed{b}.csv"
    subprocess.run(["Rscript", str(REPO / "analysis" / "crosscheck.R"), str(trees[a]), str(trees[b]), str(out),
                    "10", f"seed{a},seed{b}"], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    with open(out) as f:
        rows = [r for r in csv.DictReader(f) if r["diff"] not in ("", "NA")]
    for r in rows:
        r["rate_mbps"] = rate_mbps(trees[a], r["experiment"], r["point"])
    return rows


def report(rows: list, seeds: list, revision: str) -> str:
    lines = [f"# The run-to-run spread, measured with seeds ({datetime.date.today()})", "",
             f"`bench/seed_spread.py` at revision {revision}: Ma et al.'s quick-profile runs (30 s, virtual clock) of "
             f"five configurations, seeds {', '.join(map(str, seeds))}; `analysis/crosscheck.R` on every pair of seeds "
             "(steady state from 10 s). \"Spread\" is what crosscheck.R allows a difference between two backends, "
             "with its constants as this script read them:", "", "```",
             *[line for line in (REPO / "analysis" / "crosscheck.R").read_text().splitlines()
               if line.startswith("SPREAD_")], "```", "",
             "| metric | compared values | within the spread | largest difference | largest difference / spread |",
             "|---|---|---|---|---|"]
    for metric in METRICS:
        sel = [r for r in rows if r["metric"] == metric]
        if not sel:
            continue
        diffs = [abs(float(r["diff"])) for r in sel]
        ratio = max(abs(float(r["diff"])) / float(r["spread"]) for r in sel)
        within = sum(r["within"] == "TRUE" for r in sel)
        largest = f"{max(diffs):.2f}"
        if metric == "goodput_mbps":
            largest += f" ({max(abs(float(r['diff'])) / r['rate_mbps'] for r in sel):.2%} of the bottleneck rate)"
        lines.append(f"| {metric} ({sel[0]['unit']}) | {len(sel)} | {within} | {largest} | {ratio:.2f} |")
    lines += ["", "Per configuration and pair, the largest difference over the spread:", "",
              "| experiment | point | seeds | metric | flow | difference | spread |", "|---|---|---|---|---|---|---|"]
    for (experiment, point), group in itertools.groupby(sorted(rows, key=lambda r: (r["experiment"], r["point"])),
                                                        key=lambda r: (r["experiment"], r["point"])):
        worst = max(group, key=lambda r: abs(float(r["diff"])) / float(r["spread"]))
        lines.append(f"| {experiment} | {point} | {worst['pair']} | {worst['metric']} | "
                     f"{worst['flow'] if worst['flow'] not in ('', 'NA') else 'all'} | {float(worst['diff']):+.2f} | "
                     f"±{float(worst['spread']):.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--kernel", default=str(REPO / "build" / "kernel" / "linux"))
    ap.add_argument("--keep", type=pathlib.Path, help="keep the runs here and reuse those already there")
    ap.add_argument("--out", type=pathlib.Path,
                    default=REPO / "bench" / "results" / f"seed-spread-{datetime.date.today()}.md")
    args = ap.parse_args()
    if len(set(args.seeds)) < 2:
        raise SystemExit("--seeds: give at least two different seeds")
    if not pathlib.Path(args.kernel).is_file():
        raise SystemExit(f"no testbed kernel at {args.kernel}: build it first (snakemake --cores all kernel)")
    with tempfile.TemporaryDirectory(prefix="seed-spread-") as tmp:
        root = args.keep or pathlib.Path(tmp)
        trees = {seed: run_tree(seed, root, args.kernel) for seed in args.seeds}
        rows = []
        for a, b in itertools.combinations(args.seeds, 2):
            rows += [dict(r, pair=f"{a}-{b}") for r in compare(a, b, trees, root)]
    revision = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True).stdout.strip()
    write_text_atomic(args.out, report(rows, args.seeds, revision))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
