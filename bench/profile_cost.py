#!/usr/bin/env python3
"""What a profile's archived runs cost, per paper, from a results archive's manifest.

    .venv/bin/python bench/profile_cost.py data/paper [--controls data/paper-controls]
                                           [--out bench/results/paper-profile-cost-<date>]

Reads data/<profile>/manifest.csv (bbrlab/data/archive.py: per run its host CPU seconds,
wall seconds and experiment seconds, as its run.json recorded them on the machine that ran
it, named in the `host` column) and config/experiments.csv (which paper each experiment
belongs to). Per paper: runs (valid / invalid), experiment hours, host CPU hours, host CPU
per experiment second, the sum of the runs' wall times, and the archive's bytes. Runs the
profile plans but the archive lacks are counted from the plan (experiment/repetitions.py)
as "missing". --controls: the transfer-length rule's controls archive (bbrlab/experiment/
controls.py: the full-length control runs of shortened specs), in a row of its own, counted in
the total. Writes <out>.md (atomically) and prints it.
"""
import argparse
import collections
import csv
import datetime
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import experiments, repetitions  # noqa: E402
from bench_io import write_text_atomic  # noqa: E402


def planned(profile: str) -> dict:
    """{experiment: number of runs the profile plans} for every experiment of the profile."""
    exps = experiments.load(REPO)[0]
    return {e.name: len(repetitions.runs(REPO / e.spec, profile=profile))
            for e in experiments.of_profile(exps, profile)}


def table(archive: pathlib.Path, controls: pathlib.Path = None) -> str:
    rows = list(csv.DictReader((archive / "manifest.csv").open(newline="")))
    extra = list(csv.DictReader((controls / "manifest.csv").open(newline=""))) if controls else []
    if not rows:
        raise SystemExit(f"{archive}/manifest.csv: no runs")
    profile = rows[0]["profile"]
    exps = experiments.load(REPO)[0]
    plan = planned(profile)
    acc = collections.defaultdict(lambda: collections.Counter())
    for r in rows:
        paper = _part(exps[r["experiment"]]) if r["experiment"] in exps else "(not in the table)"
        a = acc[paper]
        a["runs"] += 1
        a["valid"] += r["valid"] == "true"
        for col in ("experiment_s", "host_cpu_s", "wall_s", "bytes"):
            a[col] += float(r[col] or 0)
    for name, n in plan.items():
        acc[_part(exps[name])]["planned"] += n
    for r in extra:
        a = acc[f"transfer-length controls (`{controls}`)"]
        a["runs"] += 1
        a["planned"] += 1
        a["valid"] += r["valid"] == "true"
        for col in ("experiment_s", "host_cpu_s", "wall_s", "bytes"):
            a[col] += float(r[col] or 0)
    hosts = sorted({r["host"] for r in rows + extra})
    out = [f"# What the `{profile}` profile's archived runs cost, per paper",
           "",
           f"From `{archive}/manifest.csv` ({len(rows)} runs, archived {min(r['archived_at'] for r in rows)}"
           f" to {max(r['archived_at'] for r in rows)}, on host(s) {', '.join(hosts)})"
           + (f" and `{controls}/manifest.csv` ({len(extra)} runs; their planned count is what it holds)." if controls else "."),
           "Host CPU is the testbed's (the UML kernel's process tree), boot and set-up included; wall is the"
           " sum of the runs' wall times (runs that ran side by side overlap in it; on a shared host it includes waiting for a core).",
           "",
           "| paper | runs archived / planned | valid | experiment h | host CPU h | CPU s per experiment s | wall h (sum) | archive MB |",
           "|---|---|---|---|---|---|---|---|"]
    total = collections.Counter()
    for paper in sorted(acc):
        a = acc[paper]
        total.update(a)
        out.append(_line(paper, a))
    out.append(_line("**all**", total))
    return "\n".join(out) + "\n"


def _part(experiment) -> str:
    """The paper an experiment belongs to, or the report part that shows it (e.g. successors)."""
    return experiment.paper or f"{pathlib.Path(experiment.section).stem} (no paper)"


def _line(name, a) -> str:
    rate = a["host_cpu_s"] / a["experiment_s"] if a["experiment_s"] else float("nan")
    return (f"| {name} | {a['runs']} / {a['planned']} | {a['valid']} | {a['experiment_s'] / 3600:.2f} | "
            f"{a['host_cpu_s'] / 3600:.2f} | {rate:.3f} | {a['wall_s'] / 3600:.2f} | {a['bytes'] / 1e6:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("archive", type=pathlib.Path)
    ap.add_argument("--controls", type=pathlib.Path, help="the controls archive, e.g. data/paper-controls")
    ap.add_argument("--out", type=pathlib.Path)
    args = ap.parse_args()
    text = table(args.archive, args.controls)
    print(text, end="")
    if args.out:
        write_text_atomic(args.out.with_suffix(".md"), text)


if __name__ == "__main__":
    main()
