#!/usr/bin/env python3
"""Fidelity and cost of the UML testbed, by bottleneck rate, flow count and clock.

    .venv/bin/python bench/fidelity_bench.py [--duration 20] [--rates 10,100,400,1000]
                                             [--flows 1,2] [--out bench/results/fidelity-<date>]

For every rate x {1, 2 BBR flows} x {real, virtual clock} one run of a
`duration`-second experiment (20-ms paths, one-BDP buffer), then a pair of
real-clock runs sharing the two cores at the same time, compared with the
virtual-clock run of the same configuration. Reports per run: dequeue rate
while backlogged vs configured, aggregate goodput, worst base-RTT error, host
CPU-seconds and wall seconds per experiment-second, and the fidelity verdict.
Writes <out>.csv and <out>.md.
"""
import argparse
import concurrent.futures
import csv
import datetime
import json
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import spec  # noqa: E402
from bbrlab.host import runner  # noqa: E402


def make_job(rate, flows, clock, duration):
    raw = {"name": f"bench_{rate:g}m_{flows}f_{clock}".replace(".", "_"), "duration_s": duration, "clock": clock,
           "bottleneck": {"rate_mbps": rate, "buffer_bdp": 1.0},
           "flows": [{"cc": "bbr", "rtt_ms": 20, "count": flows}]}
    return spec.expand(spec.resolve(raw))[0]


def goodput_mbps(run_dir, t_from, t_to):
    total, secs = 0, {}
    with open(run_dir / "tidy" / "goodput.csv") as f:
        for r in csv.DictReader(f):
            if t_from < float(r["t_s"]) <= t_to:
                total += int(r["bytes"])
                secs[r["flow"]] = secs.get(r["flow"], 0) + float(r["interval_s"])
    return total * 8 / max(secs.values()) / 1e6 if secs else None


def measure(job, root, tag=""):
    dest = pathlib.Path(root) / (job["name"] + tag)
    try:
        summary = runner.execute(job, dest, "uml", progress=lambda m: print(m, flush=True))
    except runner.RunFailed as err:
        return {"run": job["name"] + tag, "status": "failed", "error": str(err).splitlines()[0]}
    checks = summary["fidelity"]["checks"]
    rate = next(c for c in checks if c["name"] == "bottleneck_rate")
    rtt_err = max(abs(c["measured"] - c["configured"]) for c in checks if c["name"] == "base_rtt" and c["measured"] is not None)
    cpu = next(c for c in checks if c["name"] == "guest_cpu")["measured"]
    duration = job["duration_s"]
    t = summary["timings"]
    return {"run": job["name"] + tag, "status": "ok", "rate_mbps": job["bottleneck"]["rate_mbps"],
            "flows": len(job["flows"]), "clock": job["clock"],
            "dequeue_mbps": rate["measured"], "goodput_mbps": round(goodput_mbps(dest, 5, duration - 1) or 0, 2),
            "rtt_err_ms": round(rtt_err, 3), "guest_cpu": cpu,
            "host_cpu_per_s": round(t["host_cpu_s"] / duration, 3), "wall_per_s": round(t["wall_s"] / duration, 3),
            "valid": summary["fidelity"]["valid"],
            "failed_checks": " ".join(f"{c['name']}:{c['subject']}" for c in checks if not c["ok"])}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=20)
    parser.add_argument("--rates", default="10,100,400,1000")
    parser.add_argument("--flows", default="1,2", help="flow counts to measure")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / f"fidelity-{datetime.date.today()}"))
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    root = tempfile.mkdtemp(prefix="bbrlab-bench-")
    rows = []
    for rate in rates:
        for flows in [int(n) for n in args.flows.split(",")]:
            for clock in ("real", "virtual"):
                rows.append(measure(make_job(rate, flows, clock, args.duration), root))
    # Two real-clock runs at once on the two cores, against the virtual-clock reference.
    job = make_job(100, 2, "real", args.duration)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        pair = list(pool.map(lambda tag: measure(job, root, tag), ["_parallel_a", "_parallel_b"]))
    rows += pair
    reference = next(r for r in rows if r.get("rate_mbps") == 100 and r.get("flows") == 2 and r.get("clock") == "virtual")
    for r in pair:
        if r["status"] == "ok" and reference["status"] == "ok":
            r["drift_vs_virtual_pct"] = round(100 * (r["goodput_mbps"] / reference["goodput_mbps"] - 1), 2)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    columns = ["run", "status", "rate_mbps", "flows", "clock", "dequeue_mbps", "goodput_mbps", "rtt_err_ms",
               "guest_cpu", "host_cpu_per_s", "wall_per_s", "valid", "failed_checks", "drift_vs_virtual_pct", "error"]
    with open(out.with_suffix(".csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    lines = ["| run | configured Mbit/s | flows | clock | dequeue Mbit/s | goodput Mbit/s | base-RTT err ms | "
             "guest CPU | host CPU s / exp s | wall s / exp s | fidelity |", "|" + "---|" * 11]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['run']} | | | | | | | | | | failed: {r['error']} |")
            continue
        verdict = "valid" if r["valid"] else f"INVALID ({r['failed_checks']})"
        if "drift_vs_virtual_pct" in r:
            verdict += f"; goodput {r['drift_vs_virtual_pct']:+.1f} % vs virtual"
        lines.append(f"| {r['run']} | {r['rate_mbps']:g} | {r['flows']} | {r['clock']} | {r['dequeue_mbps']} | "
                     f"{r['goodput_mbps']} | {r['rtt_err_ms']} | {r['guest_cpu']} | {r['host_cpu_per_s']} | "
                     f"{r['wall_per_s']} | {verdict} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(json.dumps({"csv": str(out.with_suffix('.csv')), "md": str(out.with_suffix('.md'))}))


if __name__ == "__main__":
    main()
