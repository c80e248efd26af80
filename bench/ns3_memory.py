#!/usr/bin/env python3
"""Peak resident memory of an ns-3 run: the simulator's and the host side's, against the buffer.

    .venv/bin/python bench/ns3_memory.py [--cases shallow:10 bbr80ms128:75 ...] [--duration S]
        [--rows EARLIER.jsonl] [--out bench/results/ns3-memory-<date>.md]

Each case is one run of a project spec's point on the ns3 backend, through the runner
(runner.execute: the path `bbrlab run --backend ns3` and the pipeline take), in a child
process of its own so that its peaks are its own:

- the simulator: run.json's timings.simulation_peak_rss_mb (the wait's ru_maxrss of the
  tether and the ns-3 program it reaped, ns3_backend.py);
- the host side: the child's own ru_maxrss (runner, tidy data, fidelity checks: what
  resources.HOST_SIDE_MB budgets).

Beside them what the run held at its peak, from its tidy data: the bottleneck queue's
largest backlog (tidy/queue.csv) and the flows' largest summed congestion window
(tidy/tcp.csv), so the result shows whether the buffer filled. resources.ns3_mem_mb is
fitted to these numbers (bench/results/ns3-memory-<date>.md); nothing here changes it.
Runs only the simulator (no testbed boot): at 100 Mbit/s about 0.5-2 host CPU-s per
simulated second, but tens in a loss recovery at a deep buffer's window (the result file's
reading), so a deep case's seconds are chosen to end about when its buffer first fills.
"""
import argparse
import csv
import datetime
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "mininet"))
from bench_io import write_text_atomic  # noqa: E402

SPECS = REPO / "mininet" / "specs" / "utsumi2022"
FIG06 = SPECS / "utsumi2022_fig06_10.yaml"
FIG04 = SPECS / "utsumi2022_fig04.yaml"
FIG09 = SPECS / "utsumi2022_fig09_13.yaml"
# name: (spec, point, what it is)
CASES = {
    "shallow": (FIG06, "f2_cc=bbr__f2_module_params=none__f1_rtt_ms=40__f2_rtt_ms=40__buffer_bdp=2",
                "CUBIC vs BBR, 40 ms, 2 BDP"),
    "bbr80ms16": (FIG06, "f2_cc=bbr__f2_module_params=none__f1_rtt_ms=80__f2_rtt_ms=80__buffer_bdp=16",
                  "CUBIC vs BBR, 80 ms, 16 BDP"),
    "bbr80ms32": (FIG06, "f2_cc=bbr__f2_module_params=none__f1_rtt_ms=80__f2_rtt_ms=80__buffer_bdp=32",
                  "CUBIC vs BBR, 80 ms, 32 BDP"),
    "bbr80ms64": (FIG06, "f2_cc=bbr__f2_module_params=none__f1_rtt_ms=80__f2_rtt_ms=80__buffer_bdp=64",
                  "CUBIC vs BBR, 80 ms, 64 BDP"),
    "bbr80ms128": (FIG06, "f2_cc=bbr__f2_module_params=none__f1_rtt_ms=80__f2_rtt_ms=80__buffer_bdp=128",
                   "CUBIC vs BBR, 80 ms, 128 BDP"),
    "fca80ms128": (FIG06, "f2_cc=bbr_fca__f2_module_params=none__f1_rtt_ms=80__f2_rtt_ms=80__buffer_bdp=128",
                   "CUBIC vs BBR-FCA, 80 ms, 128 BDP"),
    "cubic40ms32": (FIG04, "buffer_bdp=32", "two CUBIC, 40 ms, 32 BDP"),
    "cubic40ms128": (FIG04, "buffer_bdp=128", "two CUBIC, 40 ms, 128 BDP"),
    "many40ms64": (FIG09, "f2_cc=bbr__f2_module_params=none__f1_rtt_ms=40__f2_rtt_ms=40__f1_count=5__f2_count=5",
                   "five CUBIC vs five BBR, 40 ms, 64 BDP"),
}


def one(spec_path: str, point: str, duration_s: float, dest: str) -> None:
    """In the child: run the point for duration_s into dest and print the child's own peak (MB)."""
    from bbrlab.experiment import repetitions
    from bbrlab.host import runner
    jobs = [j for j in repetitions.runs(spec_path, profile="paper", overrides={"duration_s": duration_s})
            if j["point"] == point and j["repetition"] == 1]
    if len(jobs) != 1:
        raise SystemExit(f"{spec_path}: no single run of point {point}")
    runner.execute(jobs[0], pathlib.Path(dest), "ns3", progress=lambda *_: None)
    print(json.dumps({"host_side_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


def column_max(path: pathlib.Path, column: str, by_time_sum=False) -> float:
    """Largest value of a tidy column (by_time_sum: of its sum over the rows of one t_s)."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if not by_time_sum:
        return max(float(r[column]) for r in rows if r[column] not in ("", "NA"))
    sums = {}
    for r in rows:
        if r[column] not in ("", "NA"):
            sums[r["t_s"]] = sums.get(r["t_s"], 0.0) + float(r[column])
    return max(sums.values())


def measure(name: str, duration_s: float, tmp: pathlib.Path) -> dict:
    """One case in a child process: its peaks and what the run held."""
    spec_path, point, what = CASES[name]
    dest = tmp / name
    env = dict(os.environ, PYTHONPATH=str(REPO / "mininet"))
    res = subprocess.run([sys.executable, __file__, "--one", str(spec_path), point, str(duration_s), str(dest)],
                         capture_output=True, text=True, env=env, cwd=REPO)
    if res.returncode != 0:
        raise SystemExit(f"{name}: the run failed:\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
    host = json.loads(res.stdout.strip().splitlines()[-1])
    summary = json.loads((dest / "run.json").read_text())
    timings = summary["timings"]
    with open(dest / "raw" / "ns3.conf") as f:
        conf = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    return {"case": name, "what": what, "duration_s": duration_s,
            "buffer": conf["buffer"], "socket_buffer_bytes": int(conf["socket_buffer_bytes"]),
            "sim_peak_mb": timings["simulation_peak_rss_mb"], "host_side_peak_mb": host["host_side_peak_mb"],
            "host_cpu_s": timings["host_cpu_s"], "wall_s": timings["wall_s"],
            "max_backlog_bytes": column_max(dest / "tidy" / "queue.csv", "backlog_bytes"),
            "max_backlog_pkts": column_max(dest / "tidy" / "queue.csv", "backlog_pkts"),
            "max_cwnd_sum_pkts": column_max(dest / "tidy" / "tcp.csv", "cwnd_pkts", by_time_sum=True),
            "valid": summary.get("fidelity", {}).get("valid")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["shallow:10", "bbr80ms32:50", "cubic40ms128:50", "bbr80ms128:75"],
                        help=f"CASE[:SECONDS] each, CASE one of {', '.join(CASES)}; SECONDS simulated (default --duration)")
    parser.add_argument("--duration", type=float, default=30.0, help="simulated seconds of a case without its own")
    parser.add_argument("--out")
    parser.add_argument("--rows", help="rows of an earlier call (its printed JSON lines) to put first in the result")
    parser.add_argument("--one", nargs=4, metavar=("SPEC", "POINT", "DURATION", "DEST"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        spec_path, point, duration, dest = args.one
        one(spec_path, point, float(duration), dest)
        return
    cases = []
    for case in args.cases:
        name, _, seconds = case.partition(":")
        if name not in CASES:
            parser.error(f"--cases: {name!r} is not a case (cases: {', '.join(CASES)})")
        try:
            cases.append((name, float(seconds) if seconds else args.duration))
        except ValueError:
            parser.error(f"--cases: {case!r}: {seconds!r} is not a number of seconds")
    out = pathlib.Path(args.out or REPO / "bench" / "results" / f"ns3-memory-{datetime.date.today()}.md")
    rows = []
    if args.rows:
        rows = [json.loads(line) for line in pathlib.Path(args.rows).read_text().splitlines() if line.startswith("{")]
    command = " ".join(["bench/ns3_memory.py", "--cases", *args.cases] + (["--rows", args.rows] if args.rows else []))
    with tempfile.TemporaryDirectory() as tmp:
        for name, duration_s in cases:
            rows.append(measure(name, duration_s, pathlib.Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
            write_text_atomic(out, report(rows, command))      # after each case: a long case's result is kept
    write_text_atomic(out, report(rows, command))
    print(f"written: {out}")


def report(rows: list, command: str) -> str:
    """The result file's text: the table and the raw rows."""
    lines = [f"# Peak memory of ns-3 runs ({datetime.date.today()})", "",
             f"`{command}`: one run per case "
             "(repetition 1 of the spec's point, the paper profile's settings, the case's simulated seconds) on the ns3 "
             "backend through runner.execute. Simulator: run.json's simulation_peak_rss_mb (ru_maxrss of the "
             "ns-3 program). Host side: the child process's own ru_maxrss (runner, tidy, fidelity). Queue and "
             "window: the largest values in the run's tidy data. MB = 2^20 bytes.", "",
             "| case | run | buffer | socket buffer MB | simulator peak MB | host side peak MB | max backlog MB "
             "(pkts) | max cwnd sum (pkts) | host CPU s | wall s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['what']}, {r['duration_s']:g} s | {r['buffer']} | "
                     f"{r['socket_buffer_bytes'] / 2**20:.0f} | {r['sim_peak_mb']:.1f} | {r['host_side_peak_mb']:.1f} | "
                     f"{r['max_backlog_bytes'] / 2**20:.1f} ({r['max_backlog_pkts']:.0f}) | "
                     f"{r['max_cwnd_sum_pkts']:.0f} | {r['host_cpu_s']:.1f} | {r['wall_s']:.1f} |")
    lines += ["", "Raw rows (JSON):", "", "```"] + [json.dumps(r) for r in rows] + ["```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
