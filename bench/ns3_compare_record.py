#!/usr/bin/env python3
"""ns-3, ns-3 under Linux's rules and the kernel testbed on the same papers' claims: the
pipelines' cost and the verdicts they disagree on (docs/ns3-backend.md).

    .venv/bin/python bench/ns3_compare_record.py --clone DIR [--papers tang yang2019]
        [--cores 2] [--out bench/results/ns3-compare-<date>.md]

DIR is a checkout whose kernel quick tree (DIR/results/quick/) the main job has built. In DIR,
one after the other and timed (wall, and CPU of every child process):

1. `snakemake --cores N --config backend=ns3 experiments=[E...]`: the papers' quick
   experiments in ns-3 (results/quick-ns3/);
2. the same with `ns3_rules=linux` (results/quick-ns3-linux/);
3. `snakemake --cores N --config compare_ns3=[P...] compare_ns3_linux=true`: the kernel
   pipeline, up to date but for the compare tables and the report.

Then reads step 3's per-claim tables (results/quick/report/generated/ns3_compare_<paper>.csv,
written by analysis/ns3_compare.R) and counts per paper: claims, the verdicts of each side,
the claims whose ns-3 and kernel verdicts differ, how many of those ns-3 under Linux's rules
settles as the kernel does, and where Linux's rules and the kernel still differ (listed with
their values). Also reads from the kernel quick tree the kernel-side numbers the doc quotes
beside ns-3's (bench/ns3_findings.py's readings of tidy data: steady-state goodput as
analysis/lib/metrics.R's ss_goodput_mbps, mean queueing delay as ss_qdelay_ms).
Writes the record (atomically) and prints it. Nothing here boots a testbed: step 3 finds the
kernel runs done.
"""
import argparse
import csv
import datetime
import os
import pathlib
import resource
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
sys.path.insert(0, str(REPO / "bench"))
from bench_io import write_text_atomic  # noqa: E402
from ns3_findings import mean_qdelay, spec_jobs, ss_goodput, steady_window  # noqa: E402

VERDICTS = ("reproduced", "qualitatively reproduced", "not reproduced", "not run")
# The kernel-side numbers docs/ns3-backend.md puts beside ns-3's: (what, experiment, point
# prefix, reading). Each is read from the kernel quick tree's repetition 1.
KERNEL_READINGS = (
    ("Ma et al.'s Fig. 1: the 10-ms flow's steady-state goodput (Mbit/s)", "ma2019_fig01", "base", "goodput", "1"),
    ("Tang's Fig. 2: BBR alone, goodput over the whole run (Mbit/s)", "tang_fig02", "f1_cc=bbr", "whole", "1"),
    ("Tang's Fig. 2: CUBIC alone at 1.5 BDP, mean queueing delay (ms)", "tang_fig02", "f1_cc=cubic", "qdelay", None),
    ("Yang et al.'s Fig. 3: BBQ's 5-ms flow, steady-state goodput (Mbit/s)", "yang2019_fig03",
     "f1_cc=bbq__f2_cc=bbq__mtu_bytes=1052__f1_module_params=none", "goodput", "1"),
    ("Yang et al.'s Fig. 3: Adaptive-BBR's 5-ms flow, steady-state goodput (Mbit/s)", "yang2019_fig03",
     "f1_cc=adaptive_bbr__f2_cc=adaptive_bbr__mtu_bytes=1052__f1_module_params=none", "goodput", "1"),
)


def quick_experiments(clone: pathlib.Path, papers: list) -> list:
    """The clone's quick-profile experiments of these papers (config/experiments.csv), in table order."""
    with open(clone / "config" / "experiments.csv", newline="") as fh:
        return [r["experiment"] for r in csv.DictReader(fh)
                if r["paper"] in papers and "quick" in r["profiles"].split()]


def timed(cmd: list, cwd: pathlib.Path, log: pathlib.Path) -> dict:
    """Run cmd in cwd (output to log); wall seconds and the CPU seconds of its children. Stops on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    with open(log, "w") as fh:
        rc = subprocess.run(cmd, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT).returncode
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.exit(f"ns3_compare_record: {' '.join(cmd)} failed (rc {rc}); see {log}")
    return {"wall_s": wall, "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)}


def runs_in(tree: pathlib.Path, experiments: list) -> int:
    """Valid or not, the runs with a run.json below tree/runs/<experiment>/."""
    return sum(len(list((tree / "runs" / e).glob("*/rep*/run.json"))) for e in experiments)


def compare_counts(table: pathlib.Path) -> dict:
    """Counts of one ns3_compare_<paper>.csv and the claims Linux's rules and the kernel still differ on."""
    with open(table, newline="") as fh:
        rows = list(csv.DictReader(fh))
    ran = lambda v: v not in ("", "not run")  # noqa: E731
    out = {"claims": len(rows),
           "differ": sum(r["differ"] == "TRUE" for r in rows),
           "settled": sum(r.get("linux_as_kernel") == "TRUE" for r in rows),
           "left": [r for r in rows if ran(r.get("linux_verdict", "")) and ran(r["kernel_verdict"])
                    and r["linux_verdict"] != r["kernel_verdict"]]}
    for side in ("ns3", "linux", "kernel"):
        out[side] = [sum((r.get(f"{side}_verdict") or "not run") == v for r in rows) for v in VERDICTS]
    return out


def kernel_reading(clone: pathlib.Path, experiment: str, point_prefix: str, what: str, flow):
    """One number from the kernel quick tree's repetition 1 of the point starting with point_prefix:
    a flow's steady-state goodput ("goodput"), its goodput over the whole run ("whole") or the mean
    queueing delay in the steady state ("qdelay")."""
    with open(clone / "config" / "experiments.csv", newline="") as fh:
        spec_path = next(clone / r["spec"] for r in csv.DictReader(fh) if r["experiment"] == experiment)
    jobs = [j for j in spec_jobs(spec_path, "quick", 1) if j["point"].startswith(point_prefix)]
    if not jobs:
        return None
    run_dir = clone / "results" / "quick" / "runs" / experiment / jobs[0]["point"] / "rep1"
    if not (run_dir / "tidy").is_dir():
        return None
    t0, t1 = (0, jobs[0]["duration_s"]) if what == "whole" else steady_window(jobs[0])
    return mean_qdelay(run_dir, t0, t1) if what == "qdelay" else ss_goodput(run_dir, t0, t1).get(flow)


def minutes(s: float) -> str:
    return f"{int(s // 60)} min {round(s % 60)} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clone", required=True, type=pathlib.Path)
    ap.add_argument("--papers", nargs="+", default=["tang", "yang2019"])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--out", type=pathlib.Path)
    args = ap.parse_args()
    clone = args.clone.resolve()
    if not (clone / "results" / "quick" / "runs").is_dir():
        sys.exit(f"ns3_compare_record: {clone}/results/quick/runs: no kernel quick tree (run the main job there first)")
    snakemake = str(clone / ".venv" / "bin" / "snakemake")
    experiments = quick_experiments(clone, args.papers)
    exp_list, paper_list = "[" + ",".join(experiments) + "]", "[" + ",".join(args.papers) + "]"
    logs = clone / "results" / "ns3-compare-logs"
    logs.mkdir(parents=True, exist_ok=True)
    steps = [
        ("ns-3", ["--config", "backend=ns3", f"experiments={exp_list}"], "quick-ns3"),
        ("ns-3 under Linux's rules", ["--config", "backend=ns3", "ns3_rules=linux", f"experiments={exp_list}"],
         "quick-ns3-linux"),
        ("kernel: compare tables and report", ["--config", f"compare_ns3={paper_list}", "compare_ns3_linux=true"],
         None),
    ]
    cost = []
    for name, config, tree in steps:
        print(f"ns3_compare_record: {name} ...", flush=True)
        t = timed([snakemake, "--cores", str(args.cores), *config], clone, logs / f"{tree or 'kernel'}.log")
        cost.append((name, t, runs_in(clone / "results" / tree, experiments) if tree else None))
    day = datetime.date.today().isoformat()
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True,
                         text=True).stdout.strip()
    lines = [f"# ns-3, ns-3 under Linux's rules and the kernel on the same claims ({day})", "",
             f"`bench/ns3_compare_record.py --clone` a checkout of {rev} whose kernel quick tree the main job "
             f"had built; papers {', '.join(args.papers)} ({len(experiments)} quick experiments); "
             f"`--cores {args.cores}` on a host with {os.cpu_count()} cores. Each pipeline run from a tree "
             "without its runs (ns-3), or with all of them (the kernel's, which only builds the compare "
             f"tables and the report). Host load average at the end: {os.getloadavg()[0]:.1f} "
             "(wall times compare only on a quiet host; CPU seconds are the steadier figure).", "",
             "| pipeline | runs | wall time | CPU (children) |", "|---|---|---|---|"]
    for name, t, n in cost:
        lines.append(f"| {name} | {n if n is not None else '-'} | {minutes(t['wall_s'])} | {t['cpu_s']:.0f} s |")
    lines += ["", "Verdicts per claim (`results/quick/report/generated/ns3_compare_<paper>.csv`); counts "
              "reproduced / qualitatively / not reproduced / not run:", "",
              "| paper | claims | ns-3 | ns-3, Linux's rules | kernel | ns-3 ≠ kernel | of those, Linux's rules give the kernel's verdict | Linux's rules ≠ kernel |",
              "|---|---|---|---|---|---|---|---|"]
    left = []
    for paper in args.papers:
        c = compare_counts(clone / "results" / "quick" / "report" / "generated" / f"ns3_compare_{paper}.csv")
        fmt = lambda v: " / ".join(map(str, v))  # noqa: E731
        lines.append(f"| {paper} | {c['claims']} | {fmt(c['ns3'])} | {fmt(c['linux'])} | {fmt(c['kernel'])} "
                     f"| {c['differ']} | {c['settled']} | {len(c['left'])} |")
        left += [(paper, r) for r in c["left"]]
    lines += ["", "Where Linux's rules and the kernel still differ:", "",
              "| paper | claim | published | ns-3 | ns-3, Linux's rules | kernel |", "|---|---|---|---|---|---|"]
    for paper, r in left:
        cell = lambda side: f"{r.get(side + '_mean', '')} ({r.get(side + '_verdict', '')})"  # noqa: E731
        lines.append(f"| {paper} | `{r['id']}` | {r['published']} {r['unit']} | {cell('ns3')} | {cell('linux')} "
                     f"| {cell('kernel')} |")
    lines += ["", "Kernel-side numbers from the same quick tree (repetition 1):", "",
              "| reading | value |", "|---|---|"]
    for what, experiment, point, kind, flow in KERNEL_READINGS:
        v = kernel_reading(clone, experiment, point, kind, flow)
        lines.append(f"| {what} | {'not in the tree' if v is None else f'{v:.2f}'} |")
    text = "\n".join(lines) + "\n"
    out = args.out or REPO / "bench" / "results" / f"ns3-compare-{day}.md"
    write_text_atomic(out, text)
    print(text)


if __name__ == "__main__":
    main()
