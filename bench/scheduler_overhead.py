"""What the Snakemake process itself costs while the pipeline runs: its own CPU seconds (not its
jobs'), the jobs' CPU seconds and the wall time, for Snakemake invocations side by side.

    .venv/bin/python bench/scheduler_overhead.py --pipeline DIR --experiments E1 E2 ... \\
        --side "defaults=--workflow-profile none" --side "profile="

DIR is a checkout that has run the quick profile (its results/quick exists). For each side, in
order and again for --rounds, `snakemake --cores all` runs with the side's extra arguments and
`--forcerun` naming every run.json of the named experiments, so exactly those runs and the
outputs downstream of them run again (a deleted run whose downstream outputs stand is not rerun:
Snakemake reruns upstream only for an outdated target). Snakemake's own CPU is read from
/proc/<pid>/stat every 0.5 s while it runs (utime + stime of the process, not its children);
the jobs' CPU is the children's rusage less nothing (every job is a child or grandchild that was
waited for). Writes a Markdown table to stdout. The host need not be idle (other load slows the
wall time, not a process's CPU seconds much); the sides alternate so that drift hits both.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import shlex
import subprocess
import time

TICK = os.sysconf("SC_CLK_TCK")


def own_cpu_s(pid: int) -> float | None:
    """utime + stime of process pid in seconds (None once it is gone)."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def one(pipeline: pathlib.Path, experiments: list[str], extra: list[str]) -> dict:
    forced = sorted(str(p.relative_to(pipeline)) for e in experiments
                    for p in (pipeline / "results" / "quick" / "runs" / e).rglob("run.json"))
    if not forced:
        raise SystemExit(f"no run.json of {', '.join(experiments)} below {pipeline}/results/quick/runs")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen([str(pipeline / ".venv" / "bin" / "snakemake"), "--cores", "all",
                             "--config", "progress=false", *extra, "--forcerun", *forced],
                            cwd=pipeline, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    own = 0.0
    while proc.poll() is None:
        v = own_cpu_s(proc.pid)
        own = v if v is not None else own
        time.sleep(0.5)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    runs = sum(1 for e in experiments for _ in (pipeline / "results" / "quick" / "runs" / e).rglob("run.json"))
    return {"rc": proc.returncode, "wall": wall, "own": own, "total": total, "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pipeline", type=pathlib.Path, required=True)
    ap.add_argument("--experiments", nargs="+", required=True)
    ap.add_argument("--side", action="append", required=True, help="NAME=extra snakemake arguments")
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    sides = [s.split("=", 1) for s in a.side]
    print(f"Experiments {', '.join(a.experiments)} rerun in `{a.pipeline}`, {a.rounds} round(s), sides alternating.\n")
    print("| side | round | rc | runs | wall (s) | Snakemake's own CPU (s) | all CPU (s) |")
    print("|---|---|---|---|---|---|---|")
    for k in range(a.rounds):
        for name, extra in sides:
            r = one(a.pipeline, a.experiments, shlex.split(extra))
            print(f"| {name} | {k + 1} | {r['rc']} | {r['runs']} | {r['wall']:.0f} | {r['own']:.1f} | {r['total']:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
