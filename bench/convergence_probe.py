#!/usr/bin/env python3
"""How a claim's value over the first T seconds of a run approaches its value over the whole run.

    .venv/bin/python bench/convergence_probe.py RUN_DIR [--step 50] [--warmup 10] [--share-flow 1]

From the run's tidy/goodput.csv: for T = step, 2 step, ... up to the run's end, the steady-state
Jain's index of all flows and the share (%) of --share-flow's goodput, each over the window
[last start + warmup, T] as analysis/lib/metrics.R computes them (a goodput bin counts when it
lies entirely inside the window; a flow's goodput is its bytes over the summed bin lengths).
Against the value over the whole run it prints each T's distance and whether it lies inside the
band of claims/README.md's Verdict (Jain's index: 15 % of 1 - J, plus 0.005; a share: 15 % of
min(s, 100 - s), plus 0.05 points), and the first T from which every later T stays inside.

This is a probe for choosing candidate durations, not the evidence the shortened-transfer rule
(docs/specs.md, "Transfer length") requires: that compares with full 6000-s transfers.
"""
import argparse
import csv
import json
import pathlib
import sys


def read_goodput(run: pathlib.Path) -> dict:
    """{flow: [(t_s, interval_s, bytes)]} from run/tidy/goodput.csv."""
    out = {}
    with open(run / "tidy" / "goodput.csv") as f:
        for row in csv.DictReader(f):
            out.setdefault(int(row["flow"]), []).append(
                (float(row["t_s"]), float(row["interval_s"]), float(row["bytes"])))
    return out


def window_goodputs(bins: dict, start: float, end: float) -> dict:
    """{flow: Mbit/s} over the bins lying entirely inside [start, end]."""
    out = {}
    for flow, rows in bins.items():
        b = sum(by for t, i, by in rows if t - i >= start and t <= end)
        s = sum(i for t, i, _by in rows if t - i >= start and t <= end)
        out[flow] = b * 8 / s / 1e6 if s else float("nan")
    return out


def jain(values) -> float:
    """Jain's fairness index of the values."""
    v = list(values)
    return sum(v) ** 2 / (len(v) * sum(x * x for x in v))


def jain_band(j: float) -> float:
    """Half-width of the Verdict band around an index j."""
    return 0.15 * (1 - j) + 0.005


def share_band(s: float) -> float:
    """Half-width of the Verdict band around a share s (%)."""
    return 0.15 * min(s, 100 - s) + 0.05


def settled_from(series: list, final: float, band: float):
    """The first T from which every later value lies within band of final (None if the last does not)."""
    first = None
    for t, v in series:
        if abs(v - final) <= band:
            first = t if first is None else first
        else:
            first = None
    return first


def main(argv=None) -> None:
    """Print the table of one run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--step", type=float, default=50)
    parser.add_argument("--warmup", type=float, default=10)
    parser.add_argument("--share-flow", type=int, default=1)
    args = parser.parse_args(argv)
    run = pathlib.Path(args.run)
    job = json.loads((run / "job.json").read_text())
    bins = read_goodput(run)
    start = max(f["start_s"] for f in job["flows"]) + args.warmup
    end = min(f["stop_s"] for f in job["flows"])
    series, t = [], args.step
    while t <= end + 1e-9:
        g = window_goodputs(bins, start, t)
        total = sum(g.values())
        series.append((t, jain(g.values()), 100 * g[args.share_flow] / total if total else float("nan")))
        t += args.step
    if not series:
        sys.exit(f"{run}: shorter than one step ({args.step:g} s)")
    _t, j_end, s_end = series[-1]
    jb, sb = jain_band(j_end), share_band(s_end)
    print(f"{run}: {job['name']} / {job['point']}, {end:g} s; over [{start:g}, {end:g}] s:"
          f" Jain {j_end:.4f} (band +-{jb:.4f}), flow {args.share_flow}'s share {s_end:.2f} % (band +-{sb:.2f})")
    print("| T (s) | Jain [start, T] | - Jain(end) | inside | share % | - share(end) | inside |")
    print("|---|---|---|---|---|---|---|")
    for t, j, s in series:
        print(f"| {t:g} | {j:.4f} | {j - j_end:+.4f} | {'yes' if abs(j - j_end) <= jb else 'no'} | {s:.2f} |"
              f" {s - s_end:+.2f} | {'yes' if abs(s - s_end) <= sb else 'no'} |")
    print(f"settled (every later T inside the band): Jain from {settled_from([(t, j) for t, j, _s in series], j_end, jb)} s,"
          f" share from {settled_from([(t, s) for t, _j, s in series], s_end, sb)} s")


if __name__ == "__main__":
    main()
