#!/usr/bin/env python3
"""Host cost of the same run on the two substrates: UML's virtual clock and ns-3.

    .venv/bin/python bench/substrate_bench.py [--rounds 1] [--out bench/results/substrate-<date>]

Runs, in turn within each round so that machine drift hits both alike, the
quick profile's run of each setup on the uml backend and on the ns3 backend:

    ma2019_fig01   Ma et al. Fig. 1: BBR 10 vs 50 ms, 100 Mbit/s, 2 MB, 60 s
    tang_fig02     Tang Fig. 2: one BBR and one CUBIC flow alone (two runs),
                   10 Mbit/s, 200 ms, 1.5 BDP

Reports per run the host CPU and wall seconds (run.json timings) per
experiment second (boot and set-up included, as elsewhere in bench/), the
flows' mean goodput, and per setup the ratio uml / ns3 of host CPU per
experiment second. Writes <out>.csv and <out>.md.
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

SETUPS = {"ma2019_fig01": "mininet/specs/ma2019/ma2019_fig01.yaml",
          "tang_fig02": "mininet/specs/tang/tang_fig02.yaml"}
BACKENDS = ("uml", "ns3")


def mean_goodput(run_dir: pathlib.Path) -> str:
    """Each flow's mean goodput (Mbit/s) over the run, "a / b"."""
    by = {}
    with open(run_dir / "tidy" / "goodput.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            by.setdefault(r["flow"], []).append(float(r["goodput_mbps"]))
    return " / ".join(f"{statistics.mean(v):.1f}" for _f, v in sorted(by.items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / f"substrate-{datetime.date.today()}"))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bbrlab-substrate-") as root:
        for k in range(1, args.rounds + 1):
            for setup, path in SETUPS.items():
                for job in spec.expand(spec.load(REPO / path, profile="quick")):
                    for backend in BACKENDS:
                        run_dir = pathlib.Path(root) / f"{backend}_{k}" / setup / job["point"]
                        summary = runner.execute(job, run_dir, backend, progress=lambda m: print(m, flush=True))
                        t = summary["timings"]
                        rows.append({"round": k, "setup": setup, "point": job["point"], "backend": backend,
                                     "valid": summary["fidelity"]["valid"], "experiment_s": job["duration_s"],
                                     "host_cpu_s": t["host_cpu_s"], "wall_s": t["wall_s"],
                                     "cpu_per_exp_s": round(t["host_cpu_s"] / job["duration_s"], 3),
                                     "goodput_mbps": mean_goodput(run_dir)})
    out = pathlib.Path(args.out)
    with open(out.with_suffix(".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = [f"# Host cost per experiment second: UML virtual clock vs ns-3 ({datetime.date.today()})", "",
             f"Quick-profile runs, {args.rounds} round(s), the two substrates in turn. Boot and set-up included.", "",
             "| setup | point | backend | valid | host CPU s | wall s | CPU s per exp. s | goodput per flow (Mbit/s) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['setup']} | {r['point']} | {r['backend']} | {r['valid']} | {r['host_cpu_s']:.1f} | "
                     f"{r['wall_s']:.1f} | {r['cpu_per_exp_s']:.3f} | {r['goodput_mbps']} |")
    lines += ["", "| setup | uml / ns3, host CPU per experiment second (median over points and rounds) |", "|---|---|"]
    for setup in SETUPS:
        pairs = [(a["cpu_per_exp_s"], b["cpu_per_exp_s"]) for a in rows for b in rows
                 if a["setup"] == b["setup"] == setup and a["point"] == b["point"] and a["round"] == b["round"]
                 and a["backend"] == "uml" and b["backend"] == "ns3"]
        lines.append(f"| {setup} | {statistics.median(u / n for u, n in pairs):.1f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
