"""Where the main job's time went: per rule, the jobs' summed wall time, from a Snakemake log.

    .venv/bin/python bench/main_job_breakdown.py .snakemake/log/<file>.snakemake.log [--runs results/quick/runs]

Snakemake writes a timestamp line before each job's header ("rule NAME:" or "localrule NAME:",
then "jobid: N") and before each "Finished jobid: N (Rule: NAME)". A job's time is from the
one to the other; the table sums them per rule (jobs run side by side on the cores, so the sum
exceeds the wall time) and names the first start and the last end. With --runs it adds the
runs' own host CPU seconds and experiment seconds from their run.json files. Prints Markdown.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import pathlib
import re

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
HEADER = re.compile(r"^(?:local)?rule (\w+):$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$")


def parse(log: pathlib.Path):
    """(per-rule list of job seconds, first start, last end) of a Snakemake log."""
    started, rule_of, per_rule = {}, {}, collections.defaultdict(list)
    now = first = last = None
    pending = None                      # a header seen, its jobid line not yet
    for line in log.read_text(errors="replace").splitlines():
        m = STAMP.match(line)
        if m:
            now = datetime.datetime.strptime(" ".join(m.group(1).split()), "%a %b %d %H:%M:%S %Y")
            first = first or now
            last = now
            continue
        m = HEADER.match(line)
        if m:
            pending = (m.group(1), now)
            continue
        m = JOBID.match(line)
        if m and pending:
            started[m.group(1)], rule_of[m.group(1)] = pending[1], pending[0]
            pending = None
            continue
        m = FINISHED.match(line)
        if m and m.group(1) in started and now is not None:
            per_rule[m.group(2)].append((now - started[m.group(1)]).total_seconds())
    return per_rule, first, last


def run_totals(runs: pathlib.Path):
    """(runs, valid, host CPU s, experiment s) of the run.json files below runs."""
    n = valid = 0
    cpu = exp = 0.0
    for meta in runs.rglob("run.json"):
        d = json.loads(meta.read_text())
        n += 1
        valid += bool((d.get("fidelity") or {}).get("valid"))
        cpu += float((d.get("timings") or {}).get("host_cpu_s") or 0)
        exp += float((d.get("timings") or {}).get("experiment_s") or 0)
    return n, valid, cpu, exp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", type=pathlib.Path)
    ap.add_argument("--runs", type=pathlib.Path)
    a = ap.parse_args()
    per_rule, first, last = parse(a.log)
    wall = (last - first).total_seconds() if first and last else 0.0
    print(f"Snakemake log `{a.log.name}`: first job {first}, last line {last}, {wall:.0f} s of wall time.\n")
    print("| rule | jobs | job time (s) | longest job (s) |")
    print("|---|---|---|---|")
    for rule, times in sorted(per_rule.items(), key=lambda kv: -sum(kv[1])):
        print(f"| {rule} | {len(times)} | {sum(times):.0f} | {max(times):.0f} |")
    if a.runs:
        n, valid, cpu, exp = run_totals(a.runs)
        print(f"\nRuns below `{a.runs}`: {n} ({valid} valid), {cpu:.0f} host CPU-s, {exp:.0f} experiment-s.")


if __name__ == "__main__":
    main()
