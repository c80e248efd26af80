#!/usr/bin/env python3
"""What the spec fields do, measured: the numbers docs/specs.md and docs/tidy-data.md quote.

    .venv/bin/python bench/testbed_facts.py [--kernel build/kernel/linux] [--keep DIR]
        [--out bench/results/testbed-facts-<date>.md]

Boots the testbed four times on the virtual clock (about 2-3 host CPU-minutes in all):

- access links (`access_rate_mbps`): one CUBIC flow alone, 20 ms, a 10 Mbit/s bottleneck,
  behind a 100 Mbit/s access link for 0-4 s and behind a 4 Mbit/s one for 4-8 s: each
  flow's goodput over its own window (the first second left out) beside the goodput
  ceiling of the link that should bound it (`units.goodput_ceiling_mbps`). The same run's
  receivers use delayed ACKs (the default): their segments sent per data segment received.
- receivers without delayed ACKs (`delayed_ack: false`): one BBR flow, 20 Mbit/s, 20 ms,
  5 s with 1 % random loss: the receiver's segments sent against data segments received
  (the `delayed_ack` check requires at least 0.95).
- a deep buffer (64 BDP at 100 Mbit/s and 40 ms): one CUBIC flow for 7 s: the largest
  window its receiver advertised (the sender's `snd_wnd`), at 6 s and over the run, against
  the 8-MiB cap that Mininet's socket limits once set, and the share of the sender's busy
  time it was receive-window-limited (tcp_info's `rwnd_limited` over `busy_time`).
- per-flow backlog from header captures (`capture: bottleneck`): Ma et al.'s Fig. 8 deep
  dive (ma2019_fig08, its quick profile, 30 s): at each queue sample from 0 to 30 s, the
  per-flow backlogs of tidy/flow_queue.csv summed against the qdisc's own backlog in
  tidy/queue.csv, in packets: how many samples agree exactly, and the mean absolute
  difference.

The three small specs are those of tests/test_testbed_capabilities.py's booted tests
(tests/fixtures/capabilities/): the tests assert bounds, this script records the values.
"""
import argparse
import csv
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
sys.path.insert(0, str(REPO / "bench"))
from bbrlab.data import fidelity, tidy  # noqa: E402
from bbrlab.experiment import units  # noqa: E402
from bbrlab.guest import traffic  # noqa: E402
from bench_io import goodput_by_flow, write_text_atomic  # noqa: E402

# The specs of tests/test_testbed_capabilities.py's booted tests: the tests assert bounds, this
# script records the values.
SPECS = REPO / "tests" / "fixtures" / "capabilities"
NAMES = ("access", "lossack", "deep")
CAPTURE_SPEC = REPO / "mininet" / "specs" / "ma2019" / "ma2019_fig08.yaml"
OLD_CAP_BYTES = 8 * 2**20      # the receive window Mininet's 16-MiB socket maximum allowed


def run(spec: pathlib.Path, out: pathlib.Path, kernel: str, profile: str | None = None) -> pathlib.Path:
    cmd = [sys.executable, "-m", "bbrlab", "run", str(spec), "--out", str(out), "--kernel", kernel]
    if profile:
        cmd += ["--profile", profile]
    env = {**os.environ, "PYTHONPATH": str(REPO / "mininet")}
    print("== " + " ".join(cmd[3:]), flush=True)
    subprocess.run(cmd, check=True, env=env, cwd=REPO, stdout=subprocess.DEVNULL)
    run_dirs = sorted(out.glob("*/*/rep1"))
    assert len(run_dirs) == 1, run_dirs
    summary = json.loads((run_dirs[0] / "run.json").read_text())
    if not summary["fidelity"]["valid"]:
        raise SystemExit(f"{spec.name}: the run is not valid: {summary['fidelity']}")
    return run_dirs[0]


def sender_series(run_dir: pathlib.Path, flow: int) -> list:
    samples = tidy.read_jsonl(run_dir / "raw" / f"sockets_snd{flow}.jsonl")
    return fidelity.with_info(tidy.data_socket_series(samples, traffic.port(flow), local=False,
                                                      counter="bytes_acked"))


def access_facts(run_dir: pathlib.Path) -> dict:
    acks = {f: fidelity.acks_per_segment(run_dir / "raw", f) for f in (1, 2)}
    return {"fast_mbps": goodput_by_flow(run_dir, 1, 4)["1"], "fast_ceiling_mbps": units.goodput_ceiling_mbps(10),
            "slow_mbps": goodput_by_flow(run_dir, 5, 8)["2"], "slow_ceiling_mbps": units.goodput_ceiling_mbps(4),
            "delayed_acks_per_seg": {f: sent / received for f, (sent, received) in acks.items()},
            "delayed_acks": acks}


def quickack_facts(run_dir: pathlib.Path) -> dict:
    sent, received = fidelity.acks_per_segment(run_dir / "raw", 1)
    return {"segs_out": sent, "data_segs_in": received}


def deep_facts(run_dir: pathlib.Path) -> dict:
    series = sender_series(run_dir, 1)
    t0 = json.loads((run_dir / "raw" / "timeline.json").read_text())["t0"]
    at6 = min(series, key=lambda s: abs(s[0] - t0 - 6.0))
    last = series[-1][1]["info"]
    return {"snd_wnd_at_6s": at6[1]["info"]["snd_wnd"], "at_s": at6[0] - t0,
            "snd_wnd_max": max(s["info"].get("snd_wnd", 0) for _t, s in series),
            "rwnd_limited_us": last["rwnd_limited"], "busy_us": last["busy_time"]}


def capture_facts(run_dir: pathlib.Path, duration_s: float) -> dict:
    qdisc = {}
    with open(run_dir / "tidy" / "queue.csv") as f:
        for r in csv.DictReader(f):
            if 0 <= float(r["t_s"]) <= duration_s:
                qdisc[r["t_s"]] = int(r["backlog_pkts"])
    flows = {}
    with open(run_dir / "tidy" / "flow_queue.csv") as f:
        for r in csv.DictReader(f):
            if r["t_s"] in qdisc:
                flows[r["t_s"]] = flows.get(r["t_s"], 0) + int(r["backlog_pkts"])
    diffs = [abs(qdisc[t] - flows.get(t, 0)) for t in qdisc]
    return {"samples": len(diffs), "equal": sum(d == 0 for d in diffs),
            "mean_abs_diff_pkts": sum(diffs) / len(diffs), "max_abs_diff_pkts": max(diffs)}


def report(facts: dict, revision: str, kernel_sha: str) -> str:
    a, q, d, c = facts["access"], facts["lossack"], facts["deep"], facts["capture"]
    acks = ", ".join(f"flow {f}: {v:.3f}" for f, v in a["delayed_acks_per_seg"].items())
    return "\n".join([
        f"# What the spec fields do, measured ({datetime.date.today()})", "",
        f"`bench/testbed_facts.py` at revision {revision}, testbed kernel {kernel_sha[:12]}, virtual clock, "
        "seed 1 (each spec's default). Every run was valid.", "",
        "## Access links (`access_rate_mbps`)", "",
        "One CUBIC flow alone, 20 ms, 10 Mbit/s bottleneck (1 BDP); goodput over 1-4 s and 5-8 s:", "",
        "| access link | goodput (Mbit/s) | ceiling of the bounding link (Mbit/s) |", "|---|---|---|",
        f"| 100 Mbit/s (the bottleneck bounds it) | {a['fast_mbps']:.2f} | {a['fast_ceiling_mbps']:.2f} |",
        f"| 4 Mbit/s (the access link bounds it) | {a['slow_mbps']:.2f} | {a['slow_ceiling_mbps']:.2f} |", "",
        f"Receivers with delayed ACKs (the default), segments sent per data segment received: {acks}.", "",
        "## Receivers without delayed ACKs (`delayed_ack: false`)", "",
        f"One BBR flow, 20 Mbit/s, 20 ms, 1 % loss, 5 s: the receiver sent {q['segs_out']} segments for "
        f"{q['data_segs_in']} data segments received ({q['segs_out'] / q['data_segs_in']:.3f} per data segment).", "",
        "## A deep buffer (64 BDP at 100 Mbit/s and 40 ms)", "",
        f"One CUBIC flow, 7 s: advertised window (the sender's `snd_wnd`) {d['snd_wnd_at_6s'] / 1e6:.2f} MB "
        f"at {d['at_s']:.2f} s, at most {d['snd_wnd_max'] / 1e6:.2f} MB in the run (Mininet's socket limits "
        f"once capped it at {OLD_CAP_BYTES} bytes); receive-window-limited for {d['rwnd_limited_us']} of "
        f"the sender's {d['busy_us']} µs busy time (tcp_info).", "",
        "## Per-flow backlog from header captures (`capture: bottleneck`)", "",
        f"ma2019_fig08, quick profile (30 s, 100 Mbit/s, 2 MB): the per-flow backlogs summed equal the "
        f"qdisc's backlog at {c['equal']} of {c['samples']} queue samples from 0 to 30 s; mean absolute "
        f"difference {c['mean_abs_diff_pkts']:.2f} packets, largest {c['max_abs_diff_pkts']}.", "",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", default=str(REPO / "build" / "kernel" / "linux"))
    ap.add_argument("--keep", type=pathlib.Path, help="keep the runs here (default: a temporary directory)")
    ap.add_argument("--out", type=pathlib.Path,
                    default=REPO / "bench" / "results" / f"testbed-facts-{datetime.date.today()}.md")
    args = ap.parse_args()
    if not pathlib.Path(args.kernel).is_file():
        raise SystemExit(f"no testbed kernel at {args.kernel}: build it first (snakemake --cores all kernel)")
    with tempfile.TemporaryDirectory(prefix="testbed-facts-") as tmp:
        root = args.keep or pathlib.Path(tmp)
        facts = {}
        for name in NAMES:
            run_dir = run(SPECS / f"{name}.yaml", root / name, args.kernel)
            facts[name] = {"access": access_facts, "lossack": quickack_facts, "deep": deep_facts}[name](run_dir)
        fig08 = run(CAPTURE_SPEC, root / "capture", args.kernel, profile="quick")
        facts["capture"] = capture_facts(fig08, 30)
        kernel_sha = json.loads((fig08 / "run.json").read_text())["testbed"]["kernel_sha256"]
    revision = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True).stdout.strip()
    write_text_atomic(args.out, report(facts, revision, kernel_sha))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
