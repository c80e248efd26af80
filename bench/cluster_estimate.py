#!/usr/bin/env python3
"""How long a profile takes on N cluster cores, extrapolated from measured runs.

    .venv/bin/python bench/cluster_estimate.py RUNS_DIR [RUNS_DIR ...] [--profile paper]
                       [--experiment NAME ...] [--cores 2 8 32 128] [--out bench/results/cluster-estimate-<date>]

Each RUNS_DIR holds finished runs (run.json, e.g. results/quick/runs). From each
its measured host CPU seconds per experiment second (run.json timings:
host_cpu_s / experiment_s, boot and set-up included) is taken; where a point
has runs of several lengths (a quick run and a longer one that filled its
buffer), only its longest runs count; every run of
the target profile (its specs expanded, config/experiments.csv) gets the rate
of the measured run of the same experiment and sweep point, else the mean
rate of that experiment's measured runs, else the mean of all, and a
host-CPU estimate of rate x its duration. On the virtual clock a run is
CPU-bound on its one core (measured: wall 40.9 s against 39.3 s of host CPU,
bench/results/run-cost-2026-11-22.md), so a run's wall time on a cluster
core is taken to be that estimate. The runs are then placed on N cores,
longest first, each on the core that frees first (what a scheduler with N
free cores does with independent jobs): the time the last one ends is the
estimate. Rates measured over short runs include a fixed boot and set-up
cost spread over few seconds, so the estimates for longer runs are on the
high side. Writes <out>.md and prints it.
"""
import argparse
import datetime
import heapq
import json
import pathlib
import statistics
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import experiments, repetitions  # noqa: E402


def measured_rates(runs_dirs) -> dict:
    """{(experiment, point): host CPU s per experiment s} of the complete, ok runs below the
    directories (one directory or a list): the mean over each point's longest runs."""
    runs = {}
    for runs_dir in [runs_dirs] if isinstance(runs_dirs, pathlib.Path) else runs_dirs:
        for path in sorted(runs_dir.glob("*/*/rep*/run.json")):
            run = json.loads(path.read_text())
            timings = run.get("timings", {})
            if run.get("status") != "ok" or not timings.get("experiment_s") or not timings.get("host_cpu_s"):
                continue
            runs.setdefault((run["experiment"], run["point"]), []).append(
                (timings["experiment_s"], timings["host_cpu_s"] / timings["experiment_s"]))
    rates = {}
    for key, measured in runs.items():
        longest = max(length for length, _rate in measured)
        rates[key] = statistics.mean(rate for length, rate in measured if length == longest)
    return rates


def spec_file(experiment: str) -> pathlib.Path:
    return REPO / experiments.load(REPO)[0][experiment].spec


def estimate(experiments, profile, rates):
    by_experiment = {}
    for (exp, _point), rate in rates.items():
        by_experiment.setdefault(exp, []).append(rate)
    overall = statistics.mean(rates.values())
    runs, sources = [], {"point": 0, "experiment": 0, "all": 0}
    for exp in experiments:
        for job in repetitions.runs(spec_file(exp), profile=profile):
            if (exp, job["point"]) in rates:
                rate, source = rates[(exp, job["point"])], "point"
            elif exp in by_experiment:
                rate, source = statistics.mean(by_experiment[exp]), "experiment"
            else:
                rate, source = overall, "all"
            sources[source] += 1
            runs.append((exp, job["point"], job["repetition"], job["duration_s"], rate * job["duration_s"]))
    return runs, sources


def makespan(durations, cores: int) -> float:
    """Longest-first list scheduling of independent jobs on `cores` identical cores."""
    free = [0.0] * min(cores, max(1, len(durations)))
    heapq.heapify(free)
    end = 0.0
    for d in sorted(durations, reverse=True):
        start = heapq.heappop(free)
        heapq.heappush(free, start + d)
        end = max(end, start + d)
    return end


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs_dir", type=pathlib.Path, nargs="+")
    parser.add_argument("--profile", default="paper")
    parser.add_argument("--experiment", action="append", default=[],
                        help="estimate only these experiments of the profile (default: all of them)")
    parser.add_argument("--cores", type=int, nargs="+", default=[2, 8, 32, 128, 512])
    parser.add_argument("--out", type=pathlib.Path,
                        default=REPO / "bench" / "results" / f"cluster-estimate-{datetime.date.today()}")
    args = parser.parse_args(argv)
    rates = measured_rates(args.runs_dir)
    if not rates:
        print(f"no complete runs below {args.runs_dir}", file=sys.stderr)
        return 2
    names = [e.name for e in experiments.of_profile(experiments.load(REPO)[0], args.profile)]
    unknown = sorted(set(args.experiment) - set(names))
    if unknown:
        print(f"not experiments of profile {args.profile}: {', '.join(unknown)}", file=sys.stderr)
        return 2
    runs, sources = estimate([n for n in names if not args.experiment or n in args.experiment], args.profile, rates)
    cpu = [r[4] for r in runs]
    longest = max(runs, key=lambda r: r[4])
    lines = [f"# Profile `{args.profile}` on N cluster cores (extrapolated)", "",
             f"Measured: {len(rates)} points below {', '.join(f'`{d}`' for d in args.runs_dir)}, host CPU per experiment second "
             f"{min(rates.values()):.2f}-{max(rates.values()):.2f} (mean {statistics.mean(rates.values()):.2f}).",
             f"Profile `{args.profile}`: {len(runs)} runs, {hours(sum(r[3] for r in runs))} of experiment time; "
             f"rates taken from the same sweep point for {sources['point']} runs, from the same experiment "
             f"for {sources['experiment']}, from the mean of all for {sources['all']}.",
             f"Estimated host CPU: {hours(sum(cpu))}; longest run: {longest[0]} {longest[1]} "
             f"({longest[3]:g} s, about {hours(longest[4])}), the floor on any number of cores.", "",
             "| cores | estimated wall time |", "|---|---|"]
    lines += [f"| {n} | {hours(makespan(cpu, n))} |" for n in args.cores]
    lines += ["", "Measured rates (host CPU s per experiment s):", "", "| experiment | point | rate |", "|---|---|---|"]
    lines += [f"| {exp} | {point} | {rate:.2f} |" for (exp, point), rate in sorted(rates.items())]
    text = "\n".join(lines) + "\n"
    args.out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
