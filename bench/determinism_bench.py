#!/usr/bin/env python3
"""Same spec, same seed, virtual clock: do two testbed runs give the same numbers?

    nice -n 19 .venv/bin/python bench/determinism_bench.py --arm seeded [--arm unseeded]
        [--kernel build/kernel/linux] [--duration 25] [--seed 1] [--other-seed 2]
        [--jobs 1] [--keep DIR] [--note TEXT] [--out bench/results/determinism-<date>]

The setup is a cut of Ma et al.'s Fig. 1 (ma2019_fig01: a 10-ms and a 50-ms
RTT BBR flow on a 100 Mbit/s, 2 MB tbf bottleneck, the 50-ms flow starting
at 5 s) on the virtual clock, --duration seconds long. Each arm boots it
three times: twice with --seed (runs A and B) and once with --other-seed
(run C), and compares each flow's goodput time series (tidy/goodput.csv,
receiver-side, one value per 0.1-s sample) of A with B and of A with C:
how many samples are identical, the first time at which they differ, the
largest difference (Mbit/s) and each run's mean goodput.

Arms (how the guest is booted, backends/uml.py):

    unseeded   seed_guest=False: the kernel command line as before seeding
               existed (the guest's randomness comes from the host, its wall
               clock starts at the host's time of boot)
    seeded     the run's seed on the command line (bbrlab.seed=, the Python
               hash seed) and the guest's wall clock pinned; whether the
               kernel honoured the seed is read from run.json
               (testbed.randomness.kernel_seed: None on an unpatched kernel)

Results accumulate in <out>.json (one entry per arm and kernel, a re-run of
the same arm and kernel replaces its entry) and <out>.md is rewritten from
it, so the arms can be measured in separate invocations (e.g. before and
after a kernel rebuild).
"""
import argparse
import concurrent.futures
import csv
import datetime
import hashlib
import json
import os
import pathlib
import statistics
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import spec  # noqa: E402
from bbrlab.host import runner  # noqa: E402

SPEC = REPO / "mininet" / "specs" / "ma2019" / "ma2019_fig01.yaml"
ARMS = {"unseeded": {"seed_guest": False}, "seeded": {"seed_guest": True}}


def goodput_series(run_dir: pathlib.Path) -> dict:
    """{flow: [(t_s, bytes), ...]} from a run's tidy/goodput.csv, in time order."""
    by = {}
    with open(run_dir / "tidy" / "goodput.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            by.setdefault(r["flow"], []).append((float(r["t_s"]), int(r["bytes"]), float(r["goodput_mbps"])))
    return {f: sorted(v) for f, v in by.items()}


def compare(a: dict, b: dict) -> dict:
    """Per flow: samples compared (by position), identical samples (same time and same bytes),
    the first sample time at which they differ (None: never), the largest goodput difference
    (Mbit/s) and the two mean goodputs."""
    out = {}
    for flow in sorted(set(a) | set(b)):
        sa, sb = a.get(flow, []), b.get(flow, [])
        n = min(len(sa), len(sb))
        same = [sa[i][:2] == sb[i][:2] for i in range(n)]
        first = next((sa[i][0] for i in range(n) if not same[i]), None)
        if first is None and len(sa) != len(sb):
            first = (sa if len(sa) > n else sb)[n][0]
        out[flow] = {"samples": [len(sa), len(sb)], "identical": sum(same),
                     "first_difference_s": first,
                     "max_abs_diff_mbps": round(max((abs(sa[i][2] - sb[i][2]) for i in range(n)), default=0.0), 3),
                     "mean_mbps": [round(statistics.mean(x[2] for x in s), 3) if s else None for s in (sa, sb)],
                     "time_grid_identical": [x[0] for x in sa] == [x[0] for x in sb]}
    return out


def differing_files(a: pathlib.Path, b: pathlib.Path) -> list:
    """The files of raw/ and tidy/ whose bytes differ between two runs (console.log aside: it
    names each run's own host directories)."""
    names = sorted({str(p.relative_to(d)) for d in (a, b) for sub in ("raw", "tidy")
                    for p in (d / sub).glob("*") if p.is_file()} - {"raw/console.log"})
    return [n for n in names if not ((a / n).is_file() and (b / n).is_file()
                                     and (a / n).read_bytes() == (b / n).read_bytes())]


def kernel_id(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:12]


def run_arm(arm: str, kernel: pathlib.Path, duration: float, seeds: list, root: pathlib.Path, jobs: int = 1) -> dict:
    """Runs A, B, C of one arm (`jobs` at a time: on the virtual clock, runs side by side
    cannot disturb each other's numbers) and their comparisons."""
    def one(name, seed):
        overrides = {"duration_s": duration, "clock": "virtual", "seed": seed, "repetitions": 1}
        (job,) = spec.expand(spec.load(SPEC, overrides=overrides))
        return runner.execute(job, root / arm / name, "uml", kernel=str(kernel),
                              progress=lambda m: print(f"{arm}/{name}: {m}", flush=True), **ARMS[arm])

    kernel_sha = kernel_id(kernel)          # before the runs: a rebuild meanwhile would remove the file
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        summaries = dict(zip("ABC", pool.map(one, "ABC", seeds)))
    runs = {}
    for name, seed in zip("ABC", seeds):
        summary, run_dir = summaries[name], root / arm / name
        runs[name] = {"seed": seed, "dir": str(run_dir), "valid": summary["fidelity"]["valid"],
                      "randomness": summary["testbed"].get("randomness"),
                      "command_line": (run_dir / "raw" / "console.log").read_text().splitlines()[0],
                      "wall_s": summary["timings"]["wall_s"], "host_cpu_s": summary["timings"]["host_cpu_s"],
                      "series": goodput_series(run_dir)}
    return {"arm": arm, "kernel": str(kernel), "kernel_sha256": kernel_sha, "duration_s": duration,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "runs": {k: {x: y for x, y in v.items() if x != "series"} for k, v in runs.items()},
            "same_seed": compare(runs["A"]["series"], runs["B"]["series"]),
            "same_seed_files_differing": differing_files(root / arm / "A", root / arm / "B"),
            "other_seed": compare(runs["A"]["series"], runs["C"]["series"])}


def fmt_first(x):
    return "never" if x is None else f"{x:.1f} s"


def markdown(entries: list) -> str:
    lines = ["# Determinism on the virtual clock: same spec, same seed (bench/determinism_bench.py)", "",
             "ma2019_fig01 cut to the given duration (BBR 10 ms vs 50 ms RTT, 100 Mbit/s, 2 MB tbf,"
             " the 50-ms flow from 5 s), virtual clock. Runs A and B share a seed, run C has another."
             " Per flow, receiver goodput samples (0.1 s) of A compared with B and with C, by position: a sample"
             " is identical when its time (tidy's 0.1-ms rounding) and its byte count are; the largest"
             " difference is of the goodput values.", ""]
    for e in entries:
        seeds = ", ".join(f"{k}: seed {v['seed']}" for k, v in e["runs"].items())
        kseeds = ", ".join(f"{k}: {(v['randomness'] or {}).get('kernel_seed')}" for k, v in e["runs"].items())
        lines += [f"## arm `{e['arm']}`, kernel {e['kernel_sha256']} ({e['date']})", ""]
        if e.get("note"):
            lines += [e["note"], ""]
        lines += [
                  f"{e['duration_s']:g}-s runs; {seeds}. Seed the kernel reported (None: host randomness): {kseeds}."
                  f" Fidelity valid: {', '.join(str(v['valid']) for v in e['runs'].values())}."
                  f" Wall s: {', '.join(str(round(v['wall_s'])) for v in e['runs'].values())}.", "",
                  "| pair | flow | identical samples | first difference | max abs diff (Mbit/s) | mean goodput (Mbit/s) |",
                  "|---|---|---|---|---|---|"]
        for pair, key in (("A vs B (same seed)", "same_seed"), ("A vs C (other seed)", "other_seed")):
            for flow, c in e[key].items():
                lines.append(f"| {pair} | {flow} | {c['identical']}/{max(c['samples'])} | {fmt_first(c['first_difference_s'])}"
                             f" | {c['max_abs_diff_mbps']:.2f} | {c['mean_mbps'][0]:.2f} / {c['mean_mbps'][1]:.2f} |")
        if "same_seed_files_differing" in e:
            diff = e["same_seed_files_differing"]
            lines += ["", f"Files of raw/ and tidy/ (console.log aside) that differ between A and B: "
                      + (", ".join(diff) if diff else "none (byte-identical)") + "."]
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arm", action="append", choices=sorted(ARMS), required=True)
    parser.add_argument("--kernel", default=str(REPO / "build" / "kernel" / "linux"))
    parser.add_argument("--duration", type=float, default=25.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--other-seed", type=int, default=2)
    parser.add_argument("--keep", help="keep the runs in this directory (default: a temporary one)")
    parser.add_argument("--jobs", type=int, default=1, help="runs booted at a time (1 to 3)")
    parser.add_argument("--note", default="", help="a sentence printed under the arm's heading (what was tested)")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / f"determinism-{datetime.date.today()}"))
    args = parser.parse_args()
    if not 1 <= args.jobs <= 3:
        parser.error("--jobs must be 1, 2 or 3")
    kernel = pathlib.Path(args.kernel).resolve()
    if not os.access(kernel, os.X_OK):
        parser.error(f"--kernel {kernel}: not an executable testbed kernel (build it with kernel/build-uml.sh)")
    if args.seed == args.other_seed:
        parser.error("--other-seed must differ from --seed")
    out = pathlib.Path(args.out)
    store = out.with_suffix(".json")
    entries = json.loads(store.read_text()) if store.exists() else []
    with tempfile.TemporaryDirectory(prefix="bbrlab-determinism-") as tmp:
        root = pathlib.Path(args.keep or tmp)
        for arm in args.arm:
            entry = run_arm(arm, kernel, args.duration, [args.seed, args.seed, args.other_seed], root, args.jobs)
            entry["note"] = args.note
            entries = [e for e in entries if (e["arm"], e["kernel_sha256"]) != (arm, entry["kernel_sha256"])]
            entries.append(entry)
            for path, text in ((store, json.dumps(entries, indent=1)), (out.with_suffix(".md"), markdown(entries))):
                tmp_path = path.with_name(path.name + ".tmp")
                tmp_path.write_text(text)
                tmp_path.rename(path)
            print(markdown([entry]), flush=True)


if __name__ == "__main__":
    main()
