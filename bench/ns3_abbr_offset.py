#!/usr/bin/env python3
"""Where Adaptive-BBR's backlog estimate Q in ns-3 exceeds the bottleneck's backlog.

    .venv/bin/python bench/ns3_abbr_offset.py [--alphas 3 12] [--from 3]
        [--out bench/results/ns3-abbr-offset-<date>.md]

Yang et al.'s Q (Algorithm 1) is inflight - min_rtt x delivery rate, read on every ACK
(the ACK's prior_in_flight; ns3/bbr_variants.h). One Adaptive-BBR flow alone on Yang's
setting (20 Mbit/s, 5 ms, 1000-byte segments, 5 MB buffer, fq pacing) runs in ns-3 for
each alpha and ACK policy, with per-ACK records (Ns3Backend(cc_trace=True)). Over PROBE_BW
ACKs after --from seconds, Q is split into parts that each have a measured cause:

    Q = [inflight - rate x rtt]                        what is in flight beyond one RTT of
                                                       delivery (the ACK's own segments among it)
      + rate x (rtt - min_rtt)                         the queueing this ACK's segment met, in
                                                       packets at the measured rate
      + (rate_ns3 - rate_linux) x min_rtt, negated     ns-3 3.37's rate interval (one ACK gap
                                                       too long: docs/ns3-backend.md)

and the queueing part is compared with the queue disc's own backlog (qdisc.jsonl, time
samples every 50 ms): the segment's queueing delay also counts the packet in the device's
one-packet queue and the one being serialized, which the queue disc does not hold, and it
weights the queue by packets, which arrive when it is longer. Nothing here changes the
model; it explains a number the tests pin (tests/test_ns3_variants.py).
"""
import argparse
import csv
import datetime
import json
import pathlib
import statistics
import sys
import tempfile

import yaml

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import spec  # noqa: E402
from bbrlab.host import runner  # noqa: E402
from bench_io import write_text_atomic  # noqa: E402

SPEC = """
name: ns3abbroffset
duration_s: 8
sender_qdisc: fq
mtu_bytes: 1052
delayed_ack: %(dack)s
bottleneck: {rate_mbps: 20, buffer_bytes: 5000000}
flows:
  - {cc: adaptive_bbr, rtt_ms: 5, module_params: {alpha_pkts: %(alpha)d}}
"""
PROBE_BW = "2"
LINK_PKTS_PER_US = 20e6 / 8 / 1052 / 1e6


def decompose(run_dir: pathlib.Path, t_from: float) -> dict:
    with open(run_dir / "raw" / "cc_trace_1.csv") as f:
        rows = [r for r in csv.DictReader(f)
                if float(r["t_s"]) > t_from and r["mode"] == PROBE_BW and r["q_256"] not in ("", None)
                and float(r["ns3_interval_us"]) > 0 and float(r["linux_interval_us"]) > 0]
    if not rows:
        return {}
    mean = statistics.mean
    inflight = [float(r["prior_inflight"]) for r in rows]
    delivered = [float(r["delivered_pkts"]) for r in rows]
    rate_ns3 = [d / float(r["ns3_interval_us"]) for d, r in zip(delivered, rows)]
    rate_lin = [d / float(r["linux_interval_us"]) for d, r in zip(delivered, rows)]
    min_rtt = [float(r["min_rtt_us"]) for r in rows]
    rtt = [float(r["rtt_us"]) for r in rows]
    samples = [json.loads(line) for line in (run_dir / "raw" / "qdisc.jsonl").read_text().splitlines()]
    qdisc = [s["qdiscs"][0]["qlen"] for s in samples if s["t"] > t_from]
    return {
        "acks": len(rows),
        "q": mean(float(r["q_256"]) / 256 for r in rows),
        "beyond_one_rtt": mean(i - r * t for i, r, t in zip(inflight, rate_lin, rtt)),
        "acked_per_ack": mean(float(r["acked"]) for r in rows),
        "queueing_pkts": mean(r * (t - m) for r, t, m in zip(rate_lin, rtt, min_rtt)),
        "queueing_at_link_rate": mean((t - m) * LINK_PKTS_PER_US for t, m in zip(rtt, min_rtt)),
        "interval_error": mean((rl - rn) * m for rl, rn, m in zip(rate_lin, rate_ns3, min_rtt)),
        "qdisc_backlog": mean(qdisc) if qdisc else float("nan"),
        "goodput_share": mean(rate_lin) / LINK_PKTS_PER_US,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alphas", type=int, nargs="+", default=[3, 12])
    parser.add_argument("--from", dest="t_from", type=float, default=3.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    lines = [f"# Adaptive-BBR's Q in ns-3, decomposed ({datetime.date.today()})", "",
             f"`bench/ns3_abbr_offset.py --alphas {' '.join(map(str, args.alphas))} --from {args.t_from:g}`: "
             "one flow, 20 Mbit/s, 5 ms, 1000-byte segments, PROBE_BW ACKs after "
             f"{args.t_from:g} s; packets.", "",
             "| alpha | ACKs | Q | in flight beyond one RTT (ACKed per ACK) | queueing at the measured rate "
             "(at link rate) | ns-3 interval error | sum | queue disc backlog | Q - backlog | rate / link |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for alpha in args.alphas:
            for dack in (False, True):
                job = spec.expand(spec.resolve(yaml.safe_load(SPEC % {"alpha": alpha, "dack": str(dack).lower()})))[0]
                dest = pathlib.Path(tmp) / f"a{alpha}-{dack}"
                runner.execute(job, dest, "ns3", progress=lambda *_: None, cc_trace=True)
                d = decompose(dest, args.t_from)
                label = f"{alpha}, {'delayed ACKs' if dack else 'ACK per segment'}"
                if not d:
                    lines.append(f"| {label} | 0 | | | | | | | | |")
                    continue
                total = d["beyond_one_rtt"] + d["queueing_pkts"] + d["interval_error"]
                lines.append(f"| {label} | {d['acks']} | {d['q']:.2f} | {d['beyond_one_rtt']:.2f} "
                             f"({d['acked_per_ack']:.2f}) | {d['queueing_pkts']:.2f} ({d['queueing_at_link_rate']:.2f}) "
                             f"| {d['interval_error']:.2f} | {total:.2f} | {d['qdisc_backlog']:.2f} "
                             f"| {d['q'] - d['qdisc_backlog']:.2f} | {d['goodput_share']:.3f} |")
                print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    out = pathlib.Path(args.out or REPO / "bench" / "results" / f"ns3-abbr-offset-{datetime.date.today()}.md")
    write_text_atomic(out, text)
    print(f"written: {out}")


if __name__ == "__main__":
    main()
