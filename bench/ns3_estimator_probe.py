#!/usr/bin/env python3
"""How much of an ns-3 result is ns-3 3.37's rate estimator and loss count: one experiment's
runs in ns-3 as ns-3 computes them and with Linux's rules, side by side.

    .venv/bin/python bench/ns3_estimator_probe.py mininet/specs/yang2019/yang2019_fig03.yaml \
        [--profile quick] [--from 10] [--out bench/results/ns3-estimator-<spec>-<date>.md]

For every run of the spec (the profile's durations, one repetition) it runs ns-3 twice:
as the pipeline does (ns-3's own delivery-rate interval and loss count), and with the two
experiment switches of the ns-3 backend on (Ns3Backend(linux_rate_interval=True,
linux_losses=True); docs/ns3-backend.md), which change only the project's own BBR
(bbq, bbq_drain, adaptive_bbr, bbr_e), never ns-3's TcpBbr or TcpCubic. It prints each
flow's mean goodput from --from seconds to the end (tidy/goodput.csv) and its mean RTT
(tidy/tcp.csv), and writes the table as Markdown. Nothing here is part of the pipeline.
"""
import argparse
import csv
import datetime
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import spec  # noqa: E402
from bbrlab.host import runner  # noqa: E402
from bench_io import write_text_atomic  # noqa: E402

SETTINGS = {"ns-3": {}, "Linux rules": {"linux_rate_interval": True, "linux_losses": True}}


def goodput(run_dir: pathlib.Path, t_from: float) -> dict:
    """Mbit/s per flow over the bins ending after t_from (tidy/goodput.csv)."""
    sums, secs = {}, {}
    with open(run_dir / "tidy" / "goodput.csv") as f:
        for r in csv.DictReader(f):
            if float(r["t_s"]) > t_from:
                sums[r["flow"]] = sums.get(r["flow"], 0) + int(r["bytes"])
                secs[r["flow"]] = secs.get(r["flow"], 0) + float(r["interval_s"])
    return {k: sums[k] * 8 / secs[k] / 1e6 for k in sums}


def mean_rtt(run_dir: pathlib.Path, t_from: float) -> dict:
    """ms per flow: the mean of the sender's smoothed RTT samples after t_from (tidy/tcp.csv)."""
    sums, n = {}, {}
    with open(run_dir / "tidy" / "tcp.csv") as f:
        for r in csv.DictReader(f):
            if float(r["t_s"]) > t_from and r["rtt_ms"] not in ("", "NA"):
                sums[r["flow"]] = sums.get(r["flow"], 0.0) + float(r["rtt_ms"])
                n[r["flow"]] = n.get(r["flow"], 0) + 1
    return {k: sums[k] / n[k] for k in sums}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--from", dest="t_from", type=float, default=10.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    jobs = [j for j in spec.expand(spec.load(args.spec, profile=args.profile)) if j["repetition"] == 1]
    lines = [f"# ns-3's rules against Linux's in ns-3: {pathlib.Path(args.spec).stem} ({datetime.date.today()})", "",
             f"`bench/ns3_estimator_probe.py {args.spec} --profile {args.profile} --from {args.t_from:g}`", "",
             f"Per flow: mean goodput (Mbit/s) after {args.t_from:g} s, mean sampled RTT (ms).", "",
             "| point | flow (cc, RTT) | " + " | ".join(SETTINGS) + " |", "|---|---|" + "---|" * len(SETTINGS)]
    with tempfile.TemporaryDirectory() as tmp:
        for job in jobs:
            results = {}
            for name, switches in SETTINGS.items():
                dest = pathlib.Path(tmp) / f"{job['point']}-{len(results)}"
                summary = runner.execute(job, dest, "ns3", progress=lambda *_: None, **switches)
                results[name] = (summary["status"], goodput(dest, args.t_from), mean_rtt(dest, args.t_from))
            for flow in job["flows"]:
                key = str(flow["flow"])
                cells = [f"{g.get(key, float('nan')):.2f} Mbit/s, {r.get(key, float('nan')):.1f} ms"
                         + ("" if status == "ok" else f" ({status})") for status, g, r in results.values()]
                lines.append(f"| {job['point']} | {key} ({flow['cc']}, {flow['rtt_ms']:g} ms) | " + " | ".join(cells) + " |")
            print("\n".join(lines[-len(job["flows"]):]), flush=True)
    text = "\n".join(lines) + "\n"
    out = pathlib.Path(args.out or REPO / "bench" / "results" /
                       f"ns3-estimator-{pathlib.Path(args.spec).stem}-{datetime.date.today()}.md")
    write_text_atomic(out, text)
    print(f"written: {out}")


if __name__ == "__main__":
    main()
