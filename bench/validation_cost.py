#!/usr/bin/env python3
"""What validating and expanding a spec costs as its sweep grows, for this checkout's code and,
side by side, another checkout's (e.g. a revision before sweep expansion was made linear).

    .venv/bin/python bench/validation_cost.py [--points 1000 3000 10000] [--other PATH/mininet]
                                              [--out bench/results/validation-cost-<date>]

Per number of sweep points N: the CPU seconds of spec.resolve (validation, every sweep value
applied) and of spec.expand (the N resolved runs) of a two-flow spec sweeping the bottleneck
rate over N values, each measured in a fresh interpreter (so one code's import and caches do
not serve the other). This checkout's code runs with its run cap raised to N. Writes <out>.md
(atomically) and prints it.
"""
import argparse
import datetime
import json
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from bench_io import write_text_atomic  # noqa: E402

PROBE = r"""
import json, sys, time, inspect
from bbrlab.experiment import spec
n = int(sys.argv[1])
raw = {"name": "t", "duration_s": 30, "bottleneck": {"rate_mbps": 100, "buffer_bytes": 2000000},
       "flows": [{"cc": "bbr", "rtt_ms": 10}, {"cc": "bbr", "rtt_ms": 50, "start_s": 5}],
       "sweep": {"bottleneck.rate_mbps": [1 + i / 1000 for i in range(n)]}}
capped = "limits" in inspect.signature(spec.resolve).parameters
kw = {"limits": {"runs": n}} if capped else {}
t0 = time.process_time(); s = spec.resolve(raw, **kw); t1 = time.process_time()
runs = spec.expand(s, **kw); t2 = time.process_time()
print(json.dumps({"resolve_s": t1 - t0, "expand_s": t2 - t1, "runs": len(runs)}))
"""


def measure(mininet: pathlib.Path, n: int) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, str(n)], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(mininet), "PATH": "/usr/bin:/bin"})
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, nargs="+", default=[1000, 3000, 10000])
    ap.add_argument("--other", type=pathlib.Path, help="another checkout's mininet/ directory")
    ap.add_argument("--out", type=pathlib.Path,
                    default=REPO / "bench" / "results" / f"validation-cost-{datetime.date.today()}")
    args = ap.parse_args()
    codes = [("this checkout", REPO / "mininet")] + ([(f"other (`{args.other}`)", args.other)] if args.other else [])
    lines = [f"# Spec validation and expansion cost ({datetime.date.today()})", "",
             "CPU seconds (process time) of spec.resolve and spec.expand, a two-flow spec sweeping",
             "bottleneck.rate_mbps over N values; each cell a fresh interpreter (bench/validation_cost.py).",
             "", "| code | N | resolve (s) | expand (s) | per point (ms) |", "|---|---|---|---|---|"]
    for name, where in codes:
        for n in args.points:
            m = measure(where, n)
            assert m["runs"] == n
            lines.append(f"| {name} | {n} | {m['resolve_s']:.2f} | {m['expand_s']:.2f} | "
                         f"{1000 * (m['resolve_s'] + m['expand_s']) / n:.2f} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    write_text_atomic(args.out.with_suffix(".md"), text)
    print(text)


if __name__ == "__main__":
    main()
