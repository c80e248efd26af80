#!/usr/bin/env python3
"""Where a testbed run's fixed cost goes inside the guest: the experiment driver's Python.

    .venv/bin/python bench/setup_profile.py [--flows 2] [--top 30] [--keep DIR]
        [--out bench/results/setup-profile-<date>.md]

Runs one short experiment on the real clock (BBR flows of 10 and 50 ms RTT,
10 Mbit/s, 3 s) with job["driver_profile"] set: the guest (guest.py) runs
`python3 -X importtime -c "import bbrlab.guest.driver"` first, then profiles the
driver with cProfile from the start of main() to the end of set-up (modules,
Mininet's dumbbell, shaping, sysctls, socket limits). On the real clock the
guest's clocks advance while it computes, so guest seconds here are host
seconds spent for the guest, ptrace stops included (on the virtual clock they
would read zero). Prints and writes: the set-up's guest time, the imports that
cost most, and the functions with the most cumulative and own time.
"""
import argparse
import datetime
import io
import json
import pathlib
import pstats
import re
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import spec  # noqa: E402
from bbrlab.host import runner  # noqa: E402
from bench_io import write_text_atomic  # noqa: E402


def make_job(flows: int) -> dict:
    rtts = [10, 50, 30, 70][:flows]
    raw = {"name": "setup_profile", "duration_s": 3, "clock": "real",
           "bottleneck": {"rate_mbps": 10, "buffer_bytes": 200000},
           "flows": [{"cc": "bbr", "rtt_ms": r} for r in rtts]}
    job = spec.expand(spec.resolve(raw))[0]
    job["driver_profile"] = True
    return job


def import_table(text: str, top: int) -> list:
    """python -X importtime's lines as (cumulative us, self us, module), the costliest first."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m:
            rows.append((int(m.group(2)), int(m.group(1)), len(m.group(3)), m.group(4)))
    total = max((r[0] for r in rows), default=0)
    tops = sorted((r for r in rows if r[2] <= 3), reverse=True)[:top]   # top-level and their children
    return total, tops


def stats_text(path: pathlib.Path, key: str, top: int) -> str:
    out = io.StringIO()
    pstats.Stats(str(path), stream=out).strip_dirs().sort_stats(key).print_stats(top)
    text = out.getvalue()
    return text[text.index("   ncalls"):] if "   ncalls" in text else text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=2)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--keep", help="keep the run directory here (default: a temporary one, removed)")
    parser.add_argument("--analyse", metavar="RUN_DIR", help="only analyse a run kept earlier with --keep")
    parser.add_argument("--out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.analyse:
            dest = pathlib.Path(args.analyse)
        else:
            dest = pathlib.Path(args.keep) if args.keep else pathlib.Path(tmp) / "run"
            runner.execute(make_job(args.flows), dest, "uml", progress=lambda m: print(m, flush=True))
        summary = json.loads((dest / "run.json").read_text())
        timeline = json.loads((dest / "raw" / "timeline.json").read_text())
        total, imports = import_table((dest / "raw" / "driver_importtime.txt").read_text(), args.top)
        prof = dest / "raw" / "driver_setup.pstats"
        lines = [f"# The driver's set-up in the guest, real clock ({datetime.date.today()})", "",
                 f"`bench/setup_profile.py --flows {args.flows}`; run status {summary['status']}", "",
                 f"- set-up (main() start to the end of set-up): {timeline['timings']['setup_s']} s of guest time",
                 f"- `import bbrlab.guest.driver` in a fresh interpreter: {total / 1e6:.2f} s", "",
                 "## Costliest imports (cumulative us, self us, module)", "", "```"]
        lines += [f"{cum:>9} {own:>9} {'  ' * depth}{mod}" for cum, own, depth, mod in imports]
        lines += ["```", "", "## Set-up by cumulative time", "", "```", stats_text(prof, "cumulative", args.top),
                  "```", "", "## Set-up by own time", "", "```", stats_text(prof, "tottime", args.top), "```", ""]
    text = "\n".join(lines)
    print(text)
    out = pathlib.Path(args.out or REPO / "bench" / "results" / f"setup-profile-{datetime.date.today()}.md")
    write_text_atomic(out, text)
    print(f"written: {out}")


if __name__ == "__main__":
    main()
