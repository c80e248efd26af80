#!/usr/bin/env python3
"""Open vSwitch against Linux bridges in the UML testbed, side by side.

    nice -n 19 .venv/bin/python bench/ovs_bench.py [--rounds 1] [--duration-s 60]
                                                   [--out bench/results/ovs-<date>]

Runs the quick profile's Ma et al. Fig. 1 run (two BBR flows, 10 and 50 ms
RTT, 100 Mbit/s, 2 MB buffer, virtual clock) once per switch kind and round,
the two switch kinds in turn within each round (the order alternating between
rounds) so that machine drift hits both alike. `--duration-s` shortens the run
where the host is too busy for the full 60 s.

Reports per run: the fidelity verdict (and the checks that failed), host CPU
and wall seconds per experiment second (boot and set-up included, as elsewhere
in bench/), each flow's mean goodput after the 50-ms flow's start-up (from 10 s
on; Ma et al. exclude start-up and publish 6.3 Mbit/s for the 10-ms flow and
87.3 Mbit/s for the 50-ms flow) and, for OVS, the datapath's missed and lost
upcalls (raw/ovs.txt). Writes <out>.csv and <out>.md.
"""
import argparse
import csv
import datetime
import json
import pathlib
import re
import statistics
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import spec  # noqa: E402
from bbrlab.host import runner  # noqa: E402

SPEC = REPO / "mininet" / "specs" / "ma2019" / "ma2019_fig01.yaml"
SWITCHES = ("linuxbridge", "ovs")
STEADY_FROM_S = 10.0      # the 50-ms flow starts at 5 s; its start-up is over by 10 s


def goodput_after(run_dir: pathlib.Path, t_from: float) -> dict:
    """Each flow's mean goodput (Mbit/s) over the bins ending after t_from."""
    sums, secs = {}, {}
    with open(run_dir / "tidy" / "goodput.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            if float(r["t_s"]) > t_from:
                sums[r["flow"]] = sums.get(r["flow"], 0) + int(r["bytes"])
                secs[r["flow"]] = secs.get(r["flow"], 0) + float(r["interval_s"])
    return {f: sums[f] * 8 / secs[f] / 1e6 for f in sorted(sums)}


def upcalls(run_dir: pathlib.Path) -> str:
    """'missed/lost' from `ovs-dpctl show` in raw/ovs.txt; '' for a Linux-bridge run."""
    path = run_dir / "raw" / "ovs.txt"
    if not path.exists():
        return ""
    m = re.search(r"missed:(\d+) lost:(\d+)", path.read_text())
    return f"{m.group(1)}/{m.group(2)}" if m else "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--duration-s", type=float, default=None,
                        help="experiment length (default: the quick profile's 60 s)")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / f"ovs-{datetime.date.today()}"))
    args = parser.parse_args()
    (job,) = spec.expand(spec.load(SPEC, profile="quick"))
    if args.duration_s:
        if args.duration_s <= STEADY_FROM_S:
            parser.error(f"--duration-s must exceed {STEADY_FROM_S:g} s (the goodputs are taken after it)")
        job = dict(job, duration_s=args.duration_s,
                   flows=[dict(f, stop_s=min(f["stop_s"], args.duration_s)) for f in job["flows"]])
    rows = []
    with tempfile.TemporaryDirectory(prefix="bbrlab-ovs-bench-") as root:
        for k in range(1, args.rounds + 1):
            order = SWITCHES if k % 2 else SWITCHES[::-1]
            for switch in order:
                run_dir = pathlib.Path(root) / f"{switch}_{k}"
                summary = runner.execute(dict(job, switch=switch), run_dir, "uml",
                                         progress=lambda m: print(m, flush=True))
                t = summary["timings"]
                failed = [f"{c['name']} {c['subject']}" for c in summary["fidelity"]["checks"] if not c["ok"]]
                measured = {c["name"]: c["measured"] for c in summary["fidelity"]["checks"]}
                gp = goodput_after(run_dir, STEADY_FROM_S) if summary["status"] == "ok" else {}
                rows.append({"round": k, "switch": switch, "status": summary["status"],
                             "valid": summary["fidelity"]["valid"], "failed_checks": "; ".join(failed),
                             "experiment_s": job["duration_s"], "host_cpu_s": t["host_cpu_s"],
                             "wall_s": t["wall_s"], "setup_s": t.get("setup_s"),
                             "cpu_per_exp_s": round(t["host_cpu_s"] / job["duration_s"], 3),
                             "wall_per_exp_s": round(t["wall_s"] / job["duration_s"], 3),
                             "goodput_10ms_mbps": round(gp.get("1", float("nan")), 1),
                             "goodput_50ms_mbps": round(gp.get("2", float("nan")), 1),
                             "base_rtt_ms": " / ".join(str(c["measured"]) for c in summary["fidelity"]["checks"]
                                                       if c["name"] == "base_rtt"),
                             "bottleneck_rate_mbps": measured.get("bottleneck_rate"),
                             "guest_cpu_busy": measured.get("guest_cpu"),
                             "timer_lateness_p99_ms": measured.get("timer_lateness"),
                             "upcalls_missed_lost": upcalls(run_dir)})
                print(json.dumps(rows[-1]), flush=True)
    out = pathlib.Path(args.out)
    tmp_csv, tmp_md = out.with_suffix(".csv.tmp"), out.with_suffix(".md.tmp")
    with open(tmp_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [f"# Open vSwitch vs Linux bridges in the UML testbed ({datetime.date.today()})", "",
             f"Ma et al. Fig. 1 (quick profile, virtual clock), {job['duration_s']:g} s of experiment, "
             f"{args.rounds} round(s), the two switch kinds in turn. Boot and set-up included in the cost. "
             f"Goodput: mean from {STEADY_FROM_S:g} s to the end (published: 10-ms flow 6.3, 50-ms flow 87.3 Mbit/s).", "",
             "| round | switch | valid | failed checks | base RTT ms | bottleneck Mbit/s | guest CPU busy "
             "| timer lateness p99 ms | host CPU s | wall s | set-up s (guest) | CPU s per exp. s "
             "| wall s per exp. s | 10-ms flow Mbit/s | 50-ms flow Mbit/s | upcalls missed/lost |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['round']} | {r['switch']} | {r['valid']} | {r['failed_checks'] or '-'} | {r['base_rtt_ms']} "
                     f"| {r['bottleneck_rate_mbps']} | {r['guest_cpu_busy']} | {r['timer_lateness_p99_ms']} | {r['host_cpu_s']:.1f} "
                     f"| {r['wall_s']:.1f} | {r['setup_s']} | {r['cpu_per_exp_s']:.3f} | {r['wall_per_exp_s']:.3f} "
                     f"| {r['goodput_10ms_mbps']} | {r['goodput_50ms_mbps']} | {r['upcalls_missed_lost'] or '-'} |")
    ratio = [a["cpu_per_exp_s"] / b["cpu_per_exp_s"] for a in rows for b in rows
             if a["round"] == b["round"] and a["switch"] == "ovs" and b["switch"] == "linuxbridge"]
    lines += ["", f"ovs / linuxbridge, host CPU per experiment second (median over rounds): "
                  f"{statistics.median(ratio):.2f}"]
    tmp_md.write_text("\n".join(lines) + "\n")
    tmp_csv.rename(out.with_suffix(".csv"))
    tmp_md.rename(out.with_suffix(".md"))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
