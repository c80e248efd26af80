#!/usr/bin/env python3
"""Two builds of the testbed kernel, the same runs, alternated in one call: what one build saves,
and whether the flows' bytes stay the same.

    .venv/bin/python bench/kernel_ab_bench.py KERNEL_A KERNEL_B [--label-a A] [--label-b B]
        [--rounds 2] [--experiments ma2019_fig01 tang_fig02 ...]
        [--checkout-a PATH] [--checkout-b PATH] [--out bench/results/kernel-ab-<date>]

For each experiment named (default: one per paper and the successors part), its first quick-profile
run that loads no variant module (so that neither build's modules enter), booted on kernel A and on
kernel B in turn: A first in odd rounds, B first in even ones, so that the shared host's drift hits
both alike. Reports per run the host CPU and wall seconds (run.json timings), per pair the ratio
B / A, and whether B's run holds A's bytes: every file of the run directory but run.json and the
two raw files that record the kernel itself (raw/console.log: its path, size and boot messages;
raw/timeline.json: host timings). Writes <out>.csv and <out>.md.

With --checkout-a/-b a side's runs go through another checkout of the repository (its own guest
code, by its `bbrlab run`): the same comparison for a change of the testbed's code together with,
or instead of, its kernel (the same kernel twice).
"""
import argparse
import csv
import datetime
import hashlib
import pathlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
sys.path.insert(0, str(REPO / "bench"))
from bbrlab.experiment import experiments, spec, variants  # noqa: E402
from bbrlab.host import runner  # noqa: E402
from bench_io import write_text_atomic  # noqa: E402

EXPERIMENTS = ("ma2019_fig01", "kim2019_fig02", "yang2019_fig04a", "tang_fig02", "utsumi2022_fig06_10",
               "successors_ma_fig05")
NOT_COMPARED = {"run.json", "raw/console.log", "raw/timeline.json"}


def first_builtin_job(experiment: str) -> dict:
    """The experiment's first quick-profile run whose flows use only the kernel's own congestion controls."""
    table, _papers = experiments.load(REPO)
    if experiment not in table:
        raise SystemExit(f"{experiment}: not an experiment of config/experiments.csv")
    path = REPO / table[experiment].spec
    for job in spec.expand(spec.load(path, profile="quick")):
        if not variants.used_by([job]):
            return job
    raise SystemExit(f"{experiment}: every quick run loads a variant module; name another experiment")


def digests(run_dir: pathlib.Path) -> dict:
    """sha256 of every compared file of a run directory, by its path in it."""
    return {str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run_dir.rglob("*")) if p.is_file() and str(p.relative_to(run_dir)) not in NOT_COMPARED}


def run_in_checkout(checkout: pathlib.Path, job: dict, root: pathlib.Path, kernel: pathlib.Path):
    """Boot the job's run with another checkout's `bbrlab run` (its spec, its guest code) under
    `root`; returns (run.json, the run directory)."""
    table, _papers = experiments.load(checkout)
    cmd = [sys.executable, "-m", "bbrlab", "run", str(checkout / table[job["name"]].spec), "--profile", "quick",
           "--point", job["point"], "--rep", str(job["repetition"]), "--out", str(root), "--backend", "uml",
           "--kernel", str(kernel)]
    res = subprocess.run(cmd, cwd=checkout, env=dict(os.environ, PYTHONPATH=str(checkout / "mininet")),
                         capture_output=True, text=True)
    print(res.stdout, end="", flush=True)
    run_dir = root / job["name"] / job["point"] / f"rep{job['repetition']}"
    if res.returncode != 0 or not (run_dir / "run.json").is_file():
        raise SystemExit(f"{checkout}: {job['name']} {job['point']} failed:\n{res.stdout}{res.stderr}")
    return json.loads((run_dir / "run.json").read_text()), run_dir


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_a")
    parser.add_argument("kernel_b")
    parser.add_argument("--label-a", default="A")
    parser.add_argument("--label-b", default="B")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--experiments", nargs="+", default=list(EXPERIMENTS))
    parser.add_argument("--checkout-a", help="run side A with this checkout's code (default: this one's)")
    parser.add_argument("--checkout-b", help="run side B with this checkout's code (default: this one's)")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / f"kernel-ab-{datetime.date.today()}"))
    args = parser.parse_args()
    checkouts = {args.label_a: args.checkout_a, args.label_b: args.checkout_b}
    checkouts = {label: pathlib.Path(c).resolve() if c else None for label, c in checkouts.items()}
    for label, c in checkouts.items():
        if c is not None and not (c / "mininet" / "bbrlab").is_dir():
            raise SystemExit(f"checkout {label}: not a checkout of this repository: {c}")
    kernels = {args.label_a: pathlib.Path(args.kernel_a).resolve(), args.label_b: pathlib.Path(args.kernel_b).resolve()}
    for label, k in kernels.items():
        if not k.is_file():
            raise SystemExit(f"kernel {label}: no such file: {k}")
    jobs = [first_builtin_job(e) for e in args.experiments]
    rows, files = [], {}
    with tempfile.TemporaryDirectory(prefix="bbrlab-kernel-ab-") as root:
        for k in range(1, args.rounds + 1):
            order = list(kernels) if k % 2 else list(kernels)[::-1]
            for job in jobs:
                for label in order:
                    if checkouts[label] is not None:
                        summary, run_dir = run_in_checkout(checkouts[label], job, pathlib.Path(root) / f"{label}_{k}",
                                                           kernels[label])
                    else:
                        run_dir = pathlib.Path(root) / f"{label}_{k}" / job["name"] / job["point"]
                        summary = runner.execute(job, run_dir, "uml", kernel=str(kernels[label]),
                                                 progress=lambda m: print(m, flush=True))
                    files[(label, k, job["name"])] = digests(run_dir)
                    t = summary["timings"]
                    rows.append({"round": k, "experiment": job["name"], "point": job["point"], "kernel": label,
                                 "valid": summary["fidelity"]["valid"], "experiment_s": job["duration_s"],
                                 "host_cpu_s": t["host_cpu_s"], "wall_s": t["wall_s"]})
    a, b = args.label_a, args.label_b
    pairs = []
    for k in range(1, args.rounds + 1):
        for job in jobs:
            ra, rb = ({r["kernel"]: r for r in rows if r["round"] == k and r["experiment"] == job["name"]}[x]
                      for x in (a, b))
            fa, fb = files[(a, k, job["name"])], files[(b, k, job["name"])]
            differ = sorted(n for n in set(fa) | set(fb) if fa.get(n) != fb.get(n))
            pairs.append({"round": k, "experiment": job["name"], "cpu_ratio": rb["host_cpu_s"] / ra["host_cpu_s"],
                          "wall_ratio": rb["wall_s"] / ra["wall_s"], "files": len(fa), "differ": differ})
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".csv.tmp"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out.with_suffix(".csv.tmp").rename(out.with_suffix(".csv"))
    lines = [f"# Two testbed kernel builds, the same runs ({datetime.date.today()})", "",
             f"`bench/kernel_ab_bench.py`, {args.rounds} round(s), the two builds in turn ({a} first in odd rounds).",
             f"{a}: `{kernels[a]}`; {b}: `{kernels[b]}`."]
    lines += [f"Side {label} ran the code of the checkout `{c}`." for label, c in checkouts.items() if c is not None]
    lines += ["Host CPU and wall seconds of the whole testbed run",
             "(boot and set-up included, run.json timings).", "",
             "| round | experiment | point | kernel | valid | exp. s | host CPU s | wall s |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['round']} | {r['experiment']} | {r['point']} | {r['kernel']} | {r['valid']} | {r['experiment_s']:g} | "
              f"{r['host_cpu_s']:.2f} | {r['wall_s']:.2f} |" for r in rows]
    lines += ["", f"| round | experiment | host CPU {b} / {a} | wall {b} / {a} | files compared | files that differ |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {p['round']} | {p['experiment']} | {p['cpu_ratio']:.3f} | {p['wall_ratio']:.3f} | {p['files']} | "
              f"{', '.join(p['differ']) or 'none'} |" for p in pairs]
    cpu_a = sum(r["host_cpu_s"] for r in rows if r["kernel"] == a)
    cpu_b = sum(r["host_cpu_s"] for r in rows if r["kernel"] == b)
    same = sum(1 for p in pairs if not p["differ"])
    lines += ["", f"Median ratio {b} / {a}: host CPU {statistics.median(p['cpu_ratio'] for p in pairs):.3f}, "
              f"wall {statistics.median(p['wall_ratio'] for p in pairs):.3f}; all runs' host CPU {cpu_b:.1f} / {cpu_a:.1f} s "
              f"= {cpu_b / cpu_a:.3f}.", f"Byte for byte the same (every compared file): {same} of {len(pairs)} pairs."]
    write_text_atomic(out.with_suffix(".md"), "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
