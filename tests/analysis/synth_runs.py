"""Synthetic run trees that follow docs/tidy-data.md, for testing the R analysis.

Every rate is piecewise constant, so the steady-state numbers the R code must
produce are known exactly. `python tests/analysis/synth_runs.py ROOT [--noise F]`
writes the tree of make_fig01_tree() below ROOT (noise only makes the plot look
like a measurement; tests use noise = 0).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from pathlib import Path

BIN_S = 0.1  # goodput / tcp sample interval
QUEUE_S = 0.05  # queue sample interval
LINK_MBPS = 100.0


def _ticks(start: float, stop: float, step: float) -> list[float]:
    """Sample times in (start, stop], on the global grid k * step."""
    first = int(round(start / step)) + 1
    last = int(round(stop / step))
    return [round(k * step, 6) for k in range(first, last + 1)]


def _rate(phases: list[tuple[float, float]], t: float) -> float:
    """Value of the phase containing t; phases are (until_s, value) in order."""
    for until, value in phases:
        if t <= until:
            return value
    return phases[-1][1]


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def write_run(run_dir: Path, *, experiment: str, point: str, repetition: int,
              flows: list[dict], phases: dict[int, list[tuple[float, float]]],
              qdelay_phases: list[tuple[float, float]], retrans: dict[int, int],
              status: str = "ok", fidelity_ok: bool = True, profile: str = "quick",
              noise: float = 0.0, seed: int = 0, with_run_json: bool = True) -> Path:
    """Write one run directory. phases[flow] gives that flow's goodput (Mbit/s)
    over time while it is active; retrans[flow] its retransmissions over its life."""
    rng = random.Random(seed * 1000 + repetition)
    goodput, tcp = [], []
    for f in flows:
        n, start, stop = f["flow"], f["start_s"], f["stop_s"]
        ticks = _ticks(start, stop, BIN_S)
        for i, t in enumerate(ticks):
            mbps = _rate(phases[n], t - BIN_S / 2)
            if noise:
                mbps = max(0.0, mbps * (1 + rng.gauss(0, noise)))
            nbytes = round(mbps * 1e6 * BIN_S / 8)
            goodput.append([n, t, BIN_S, nbytes, nbytes * 8 / BIN_S / 1e6])
            rtt = f["rtt_ms"] + _rate(qdelay_phases, t)
            total = 7 + round(retrans[n] * i / (len(ticks) - 1))
            tcp.append([n, t, f["cc"], "probe_bw", rtt, 1.0, f["rtt_ms"], 100, 90, 1448,
                        mbps, mbps, 0, total, mbps, f["rtt_ms"], 1.0, 2.0])
    end = max(f["stop_s"] for f in flows)
    queue = []
    for t in [round(k - QUEUE_S / 2, 6) for k in _ticks(0.0, end, QUEUE_S)]:  # off-grid
        q = _rate(qdelay_phases, t)
        backlog = round(q / 1e3 * LINK_MBPS * 1e6 / 8)
        queue.append([t, backlog, backlog // 1500, 0, 0, 0, q])
    if status == "ok":
        _write_csv(run_dir / "tidy" / "goodput.csv",
                   ["flow", "t_s", "interval_s", "bytes", "goodput_mbps"], goodput)
        _write_csv(run_dir / "tidy" / "tcp.csv",
                   ["flow", "t_s", "cc", "state", "rtt_ms", "rttvar_ms", "min_rtt_ms",
                    "cwnd_pkts", "inflight_pkts", "mss_bytes", "pacing_rate_mbps",
                    "delivery_rate_mbps", "bytes_acked", "retrans_total", "bbr_bw_mbps",
                    "bbr_min_rtt_ms", "bbr_pacing_gain", "bbr_cwnd_gain"], tcp)
        _write_csv(run_dir / "tidy" / "queue.csv",
                   ["t_s", "backlog_bytes", "backlog_pkts", "sent_bytes", "sent_pkts",
                    "drops", "qdelay_ms"], queue)
    run_dir.mkdir(parents=True, exist_ok=True)
    if with_run_json:
        checks = [{"name": "base_rtt", "subject": f"flow {f['flow']}",
                   "configured": f["rtt_ms"], "measured": f["rtt_ms"] + 0.1,
                   "tolerance": 1.0, "unit": "ms", "ok": True} for f in flows]
        if not fidelity_ok:
            checks.append({"name": "timer_lateness", "subject": "guest", "configured": 1.0,
                           "measured": 7.5, "tolerance": 1.0, "unit": "ms", "ok": False})
        meta = {
            "schema": 1, "status": status,
            "error": None if status == "ok" else "guest did not boot",
            "experiment": experiment, "point": point, "repetition": repetition,
            "seed": repetition, "profile": profile, "spec": {"name": experiment},
            "flows": [dict(f, sender=f"s{f['flow']}", receiver=f"r{f['flow']}") for f in flows],
            "bottleneck": {"rate_mbps": LINK_MBPS, "buffer_bytes": 2000000,
                           "aqm": "droptail", "shaper": "tbf"},
            "testbed": {"backend": "uml", "clock": "real", "kernel_release": "6.1.0-synthetic",
                        "kernel_sha256": "0123456789ab" + "f" * 52,
                        "modules": [],
                        "congestion_controls": ["reno", "cubic", "bbr"]},
            "git_revision": "abc123",
            "timings": {"boot_s": 2.1, "setup_s": 14.9, "experiment_s": end, "wall_s": end + 20},
            "fidelity": {"valid": fidelity_ok and status == "ok",
                         "checks": checks if status == "ok" else []},
        }
        (run_dir / "run.json").write_text(json.dumps(meta, indent=2))
    return run_dir


def fig01_run(root: Path, repetition: int, long_mbps: float, short_mbps: float, *,
              join_s: float = 2.0, stop_s: float = 60.0, warmup_s: float = 10.0,
              transient: tuple[float, float] = (40.0, 55.0), qdelay_ss: float = 20.0,
              **kwargs) -> Path:
    """Ma et al. Fig. 1 shape: flow 1 (10 ms) alone at 95 Mbit/s until flow 2
    (50 ms) joins at join_s; `transient` rates (flow 1, flow 2) for warmup_s; then
    short_mbps / long_mbps until flow 1 stops at stop_s; flow 2 stops join_s later.
    The queueing delay is 1 ms alone, 60 ms in the transient, qdelay_ss in steady
    state, 5 ms after flow 1 stops."""
    ss = join_s + warmup_s
    flows = [{"flow": 1, "cc": "bbr", "rtt_ms": 10.0, "start_s": 0.0, "stop_s": stop_s},
             {"flow": 2, "cc": "bbr", "rtt_ms": 50.0, "start_s": join_s,
              "stop_s": stop_s + join_s}]
    phases = {1: [(join_s, 95.0), (ss, transient[0]), (stop_s, short_mbps)],
              2: [(ss, transient[1]), (stop_s, long_mbps), (stop_s + join_s, 95.0)]}
    qdelay = [(join_s, 1.0), (ss, 60.0), (stop_s, qdelay_ss), (stop_s + join_s, 5.0)]
    run_dir = root / "runs" / "ma2019_fig01" / "base" / f"rep{repetition}"
    return write_run(run_dir, experiment="ma2019_fig01", point="base", repetition=repetition,
                     flows=flows, phases=phases, qdelay_phases=qdelay,
                     retrans={1: 100 * repetition, 2: 300}, **kwargs)


# The tree the tests use. Valid runs: rep1 (87.3 / 6.3) and rep3 (85.3 / 8.3),
# so the valid means are 86.3 and 7.3 Mbit/s. rep2 is invalid and rep4 failed:
# both must be excluded. rep5 has data but no run.json: it must be ignored.
FIG01_VALID = {1: (87.3, 6.3), 3: (85.3, 8.3)}


def make_fig01_tree(root: Path, noise: float = 0.0) -> Path:
    for rep, (long_mbps, short_mbps) in FIG01_VALID.items():
        fig01_run(root, rep, long_mbps, short_mbps, noise=noise, seed=1)
    fig01_run(root, 2, 45.0, 50.0, fidelity_ok=False, noise=noise)
    fig01_run(root, 4, 0.0, 0.0, status="failed")
    fig01_run(root, 5, 10.0, 90.0, with_run_json=False)
    return root


def main(make_tree, doc: str) -> None:
    """Command line of a synthetic-tree module: ROOT [--noise F] -> make_tree(ROOT, F)."""
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("root", type=Path)
    ap.add_argument("--noise", type=float, default=0.0)
    a = ap.parse_args()
    print(make_tree(a.root, a.noise))


if __name__ == "__main__":
    main(make_fig01_tree, __doc__)
