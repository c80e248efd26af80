#!/usr/bin/env python3
"""What a run's measurement costs: sampling interval and header captures.

    .venv/bin/python bench/run_cost_bench.py [--duration 12] [--rounds 3]
                                             [--out bench/results/run-cost-<date>]

The Fig. 1 / Fig. 8 configuration (10-ms and 50-ms BBR flows, 100 Mbit/s,
2 MB, virtual clock) in three variants, run in turn within each round so that
machine drift hits all alike:

    coarse     sockets every 100 ms, queue every 50 ms (the specs' default)
    fine       sockets every 20 ms, queue every 10 ms (the Fig. 8 run)
    fine+cap   fine, plus header captures at the bottleneck (capture: bottleneck)

Reports per run the host wall and CPU seconds (run.json timings), and per
round the ratios fine/coarse and fine+cap/fine, and their medians. Writes
<out>.csv and <out>.md.
"""
import argparse
import csv
import datetime
import pathlib
import statistics
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import spec  # noqa: E402
from bbrlab.host import runner  # noqa: E402

VARIANTS = {
    "coarse": {"sample_interval_s": 0.1, "queue_sample_interval_s": 0.05},
    "fine": {"sample_interval_s": 0.02, "queue_sample_interval_s": 0.01},
    "fine+cap": {"sample_interval_s": 0.02, "queue_sample_interval_s": 0.01, "capture": "bottleneck"},
}


def make_job(variant, duration):
    raw = {"name": "cost_" + variant.replace("+", "_"), "duration_s": duration, "clock": "virtual",
           "bottleneck": {"rate_mbps": 100, "buffer_bytes": 2000000},
           "flows": [{"cc": "bbr", "rtt_ms": 10}, {"cc": "bbr", "rtt_ms": 50, "start_s": min(5, duration / 3)}],
           **VARIANTS[variant]}
    return spec.expand(spec.resolve(raw))[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / f"run-cost-{datetime.date.today()}"))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bbrlab-cost-") as root:
        for k in range(1, args.rounds + 1):
            for variant in VARIANTS:
                job = make_job(variant, args.duration)
                summary = runner.execute(job, pathlib.Path(root) / f"{variant}_{k}", "uml",
                                         progress=lambda m: print(m, flush=True))
                t = summary["timings"]
                rows.append({"round": k, "variant": variant, "valid": summary["fidelity"]["valid"],
                             "wall_s": t["wall_s"], "host_cpu_s": t["host_cpu_s"], "experiment_s": args.duration})
    by = {(r["round"], r["variant"]): r for r in rows}
    ratios = {name: [by[(k, a)][m] / by[(k, b)][m] for k in range(1, args.rounds + 1)]
              for name, a, b, m in [("fine/coarse wall", "fine", "coarse", "wall_s"),
                                    ("fine/coarse cpu", "fine", "coarse", "host_cpu_s"),
                                    ("fine+cap/fine wall", "fine+cap", "fine", "wall_s"),
                                    ("fine+cap/fine cpu", "fine+cap", "fine", "host_cpu_s")]}
    out = pathlib.Path(args.out)
    with open(out.with_suffix(".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [f"# Run cost: sampling and header captures ({datetime.date.today()})", "",
             f"Fig. 8 configuration, {args.duration:g}-s runs on the virtual clock, {args.rounds} rounds"
             " (variants in turn within a round). Host seconds per run:", "",
             "| variant | wall s (median) | CPU s (median) | valid |", "|---|---|---|---|"]
    for variant in VARIANTS:
        rs = [r for r in rows if r["variant"] == variant]
        lines.append(f"| {variant} | {statistics.median(r['wall_s'] for r in rs):.1f} | "
                     f"{statistics.median(r['host_cpu_s'] for r in rs):.1f} | "
                     f"{sum(r['valid'] for r in rs)}/{len(rs)} |")
    lines += ["", "| ratio, per round | median | min | max |", "|---|---|---|---|"]
    for name, vals in ratios.items():
        lines.append(f"| {name} | {statistics.median(vals):.2f} | {min(vals):.2f} | {max(vals):.2f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
