#!/usr/bin/env python3
"""How often Adaptive-BBR's gain clamp [0.75, 1.25] binds, read from finished runs' socket samples.

    .venv/bin/python bench/abbr_clamp.py --runs results/quick/runs [--from 3]
        [--out bench/results/abbr-clamp-<date>.md]

For every Adaptive-BBR flow of every yang2019_* run below --runs (first repetition of each point),
over its PROBE_BW samples from --from seconds on (tidy/tcp.csv), the share of samples whose pacing
gain (the module's last per-ACK gain) is:

    at the floor 0.75      Eq. 5 below 0.75, i.e. Q > alpha + 2 BDP: the clamp binds
    below 0.75 + a/(8 BDP) Q > 2 BDP by Eq. 5 (BDP = bbr_bw x min_rtt, at least 1 packet)
    at the ceiling 1.25    Q < 1 packet ("Q == 0"), or the clamp's ceiling

with the flow's mean BDP in packets and the share of samples whose cwnd exceeds 2 BDP (the
ACK-aggregation allowance Linux 6.1 adds to BBR's cwnd target). alpha is the module's default, 3
packets, unless the flow's module_params set alpha_pkts. Reads runs only; boots nothing.
"""
import argparse
import csv
import datetime
import json
import pathlib

from bench_io import write_text_atomic

ALPHA_DEFAULT = 3


def flow_stats(run_dir: pathlib.Path, t_from: float) -> list:
    """One dict per Adaptive-BBR flow of the run: flow, rtt_ms, n, bdp, and the shares (0-1) floor,
    above_2bdp, ceiling, cwnd_above_2bdp over the flow's PROBE_BW samples after t_from."""
    meta = json.loads((run_dir / "run.json").read_text())
    flows = {str(f["flow"]): f for f in meta["spec"]["flows"]}
    acc = {}
    with open(run_dir / "tidy" / "tcp.csv") as f:
        for r in csv.DictReader(f):
            if r["cc"] != "adaptive_bbr" or r["state"] != "probe_bw" or not r["bbr_pacing_gain"] \
                    or float(r["t_s"]) < t_from:
                continue
            spec = flows[r["flow"]]
            alpha = (spec.get("module_params") or {}).get("alpha_pkts", ALPHA_DEFAULT)
            gain = float(r["bbr_pacing_gain"])
            bdp = float(r["bbr_bw_mbps"]) * 1e6 / 8 / float(r["mss_bytes"]) * float(r["bbr_min_rtt_ms"]) / 1e3
            s = acc.setdefault(r["flow"], {"flow": int(r["flow"]), "rtt_ms": spec["rtt_ms"], "n": 0, "bdp": 0.0,
                                           "floor": 0, "above_2bdp": 0, "ceiling": 0, "cwnd_above_2bdp": 0})
            s["n"] += 1
            s["bdp"] += bdp
            s["floor"] += gain <= 0.75
            s["above_2bdp"] += gain < 0.75 + alpha / (8 * max(bdp, 1.0)) - 1 / 512
            s["ceiling"] += gain >= 1.25
            s["cwnd_above_2bdp"] += float(r["cwnd_pkts"]) > 2 * bdp + 1
    out = []
    for s in sorted(acc.values(), key=lambda s: s["flow"]):
        n = s["n"]
        out.append({**s, "bdp": s["bdp"] / n,
                    **{k: s[k] / n for k in ("floor", "above_2bdp", "ceiling", "cwnd_above_2bdp")}})
    return out


def table(runs_root: pathlib.Path, t_from: float) -> list:
    """Markdown table rows (strings) over the first repetition of every yang2019_* point."""
    rows = ["| run (point) | flow | RTT (ms) | samples | mean BDP (pkts) | gain 0.75 (floor binds) "
            "| Q > 2 BDP | gain 1.25 | cwnd > 2 BDP |", "|---|---|---|---|---|---|---|---|---|"]
    for run_dir in sorted(runs_root.glob("yang2019_*/*/rep1")):
        if not (run_dir / "run.json").exists():
            continue
        for s in flow_stats(run_dir, t_from):
            rows.append(f"| {run_dir.parent.parent.name} ({run_dir.parent.name}) | {s['flow']} | {s['rtt_ms']} "
                        f"| {s['n']} | {s['bdp']:.1f} | {100 * s['floor']:.1f} % | {100 * s['above_2bdp']:.1f} % "
                        f"| {100 * s['ceiling']:.1f} % | {100 * s['cwnd_above_2bdp']:.0f} % |")
    return rows


def main() -> None:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=pathlib.Path, required=True, help="a results runs directory")
    ap.add_argument("--from", dest="t_from", type=float, default=3.0, help="seconds to skip (start-up)")
    ap.add_argument("--out", type=pathlib.Path,
                    default=pathlib.Path(f"bench/results/abbr-clamp-{datetime.date.today()}.md"))
    a = ap.parse_args()
    if not a.runs.is_dir():
        ap.error(f"--runs {a.runs}: not a directory")
    rows = table(a.runs, a.t_from)
    text = (f"# Adaptive-BBR's gain clamp in the runs ({a.runs}), {datetime.date.today()}\n\n"
            f"Written by `bench/abbr_clamp.py` (its docstring defines the columns); PROBE_BW socket samples "
            f"from {a.t_from:g} s on.\n\n" + "\n".join(rows) + "\n")
    write_text_atomic(a.out, text)
    print(a.out)


if __name__ == "__main__":
    main()
