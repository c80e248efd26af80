"""Synthetic run trees for every Ma et al. (2019) experiment, for the R figure
scripts and the metrics of analysis/lib/metrics.R.

Unlike synth_runs.py, the socket samples are mutually consistent: bytes_acked
integrates the goodput, each flow's share of the bottleneck backlog equals its
share of the goodput, and inflight = (goodput x base RTT + own backlog) / mss.
With flow_queue=True a run also has tidy/flow_queue.csv: each active flow's
backlog (its goodput share of the total) at the queue samples. All rates are piecewise
constant; the numbers the R code must produce are known.

    python tests/analysis/synth_ma2019.py ROOT [--noise F]

writes make_tree(ROOT) (noise only makes the plots look like measurements).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import synth_runs
from synth_runs import _ticks, _write_csv

MSS = 1448
FRAME = 1514

GOODPUT_HEADER = ["flow", "t_s", "interval_s", "bytes", "goodput_mbps"]
TCP_HEADER = ["flow", "t_s", "cc", "state", "rtt_ms", "rttvar_ms", "min_rtt_ms", "cwnd_pkts",
              "inflight_pkts", "mss_bytes", "pacing_rate_mbps", "delivery_rate_mbps",
              "bytes_acked", "retrans_total", "bbr_bw_mbps", "bbr_min_rtt_ms",
              "bbr_pacing_gain", "bbr_cwnd_gain"]
QUEUE_HEADER = ["t_s", "backlog_bytes", "backlog_pkts", "sent_bytes", "sent_pkts", "drops",
                "qdelay_ms"]
FLOW_QUEUE_HEADER = ["t_s", "flow", "backlog_bytes", "backlog_pkts", "drops"]


def step(phases, t):
    """Value of the phase containing t; phases are (until_s, value) in order."""
    for until, value in phases:
        if t <= until:
            return value
    return phases[-1][1]


def flow(n, cc, rtt_ms, start_s=0.0, stop_s=30.0, label=None):
    return {"flow": n, "cc": cc, "rtt_ms": rtt_ms, "start_s": start_s, "stop_s": stop_s,
            "label": label or f"{rtt_ms:g} ms RTT"}


def write_run(root: Path, experiment: str, point: str, repetition: int, flows: list, *,
              rate=lambda f, t: 50.0, qdelay=lambda t: 20.0, gain=lambda f, t: 1.0,
              state=lambda f, t: "probe_bw", retrans=None, link_mbps=100.0, duration_s=None,
              spec_extra=None, sample_s=0.1, queue_s=0.05, valid=True, failed_check=None,
              status="ok", noise=0.0, seed=0, flow_queue=False, link_util=0.99,
              cwnd_slack=lambda f, t: 10) -> Path:
    """One run directory root/runs/<experiment>/<point>/rep<k>. rate(f, t): goodput of
    flow f (Mbit/s) while active; qdelay(t): bottleneck queueing delay (ms);
    link_util: the bottleneck's dequeue rate / link_mbps (queue.csv sent_bytes);
    cwnd_slack(f, t): cwnd - inflight, packets."""
    rng = random.Random(hash((experiment, point, repetition, seed)) & 0xFFFF)
    duration_s = duration_s or max(f["stop_s"] for f in flows)
    retrans = retrans or {}
    active = lambda f, t: f["start_s"] < t <= f["stop_s"]  # noqa: E731

    def total_rate(t):
        return sum(rate(g, t) for g in flows if active(g, t)) or 1.0

    goodput, tcp = [], []
    for f in flows:
        n, acked = f["flow"], 0.0
        ticks = _ticks(f["start_s"], f["stop_s"], sample_s)
        for i, t in enumerate(ticks):
            mbps = rate(f, t - sample_s / 2)
            if noise:
                mbps = max(0.0, mbps * (1 + rng.gauss(0, noise)))
            nbytes = round(mbps * 1e6 * sample_s / 8)
            acked += nbytes
            goodput.append([n, t, sample_s, nbytes, nbytes * 8 / sample_s / 1e6])
            q_pkts = qdelay(t) / 1e3 * link_mbps * 1e6 / 8 / FRAME
            own = q_pkts * rate(f, t) / total_rate(t) * MSS
            inflight = round((rate(f, t) * 1e6 / 8 * f["rtt_ms"] / 1e3 + own) / MSS)
            total = round(retrans.get(n, 0) * i / max(1, len(ticks) - 1))
            tcp.append([n, t, f["cc"], state(f, t), f["rtt_ms"] + qdelay(t), 1.0, f["rtt_ms"],
                        inflight + cwnd_slack(f, t), inflight, MSS, mbps, mbps, round(acked), total, mbps,
                        f["rtt_ms"], gain(f, t), 2.0])
    queue, per_flow = [], []
    for t in _ticks(-1.0, duration_s + 1, queue_s):
        q = qdelay(t)
        backlog = round(q / 1e3 * link_mbps * 1e6 / 8)
        sent = round(link_util * link_mbps * 1e6 / 8 * max(0.0, t + 1))
        queue.append([t, backlog, round(backlog / FRAME), sent, round(sent / FRAME), 0, q])
        for f in flows:
            own = round(backlog / FRAME * rate(f, t) / total_rate(t)) if active(f, t) else 0
            per_flow.append([t, f["flow"], own * FRAME, own, 0])
    run_dir = root / "runs" / experiment / point / f"rep{repetition}"
    if status == "ok":
        _write_csv(run_dir / "tidy" / "goodput.csv", GOODPUT_HEADER, goodput)
        _write_csv(run_dir / "tidy" / "tcp.csv", TCP_HEADER, tcp)
        _write_csv(run_dir / "tidy" / "queue.csv", QUEUE_HEADER, queue)
        if flow_queue:
            _write_csv(run_dir / "tidy" / "flow_queue.csv", FLOW_QUEUE_HEADER, per_flow)
    run_dir.mkdir(parents=True, exist_ok=True)
    checks = [{"name": "base_rtt", "subject": f"flow {f['flow']}", "configured": f["rtt_ms"],
               "measured": f["rtt_ms"], "tolerance": 1.0, "unit": "ms", "ok": True} for f in flows]
    if failed_check:
        checks.append({"name": failed_check, "subject": "bottleneck", "configured": link_mbps,
                       "measured": 0.8 * link_mbps, "tolerance": 0.05, "unit": "Mbit/s", "ok": False})
    spec = {"name": experiment, "duration_s": duration_s, "sample_interval_s": sample_s,
            "queue_sample_interval_s": queue_s, "changes": [],
            "bottleneck": {"rate_mbps": link_mbps, "buffer_bytes": 2000000,
                           "aqm": {"kind": "droptail"}}}
    spec.update(spec_extra or {})
    meta = {"schema": 1, "status": status, "error": None if status == "ok" else "guest did not boot",
            "experiment": experiment, "point": point, "repetition": repetition, "seed": repetition,
            "profile": "quick", "spec": spec,
            "flows": [dict(f, sender=f"snd{f['flow']}", receiver=f"rcv{f['flow']}") for f in flows],
            "bottleneck": {"rate_mbps": link_mbps, "buffer_bytes": 2000000,
                           "aqm": spec["bottleneck"]["aqm"]["kind"], "shaper": "tbf"},
            "testbed": {"backend": "uml", "clock": "virtual", "kernel_release": "6.1.0-synthetic",
                        "congestion_controls": ["reno", "cubic", "bbr", "bbq", "bbq_drain"]},
            "git_revision": "synthetic",
            "timings": {"wall_s": duration_s + 20, "experiment_s": duration_s},
            "fidelity": {"valid": valid and status == "ok" and not failed_check,
                         "checks": checks if status == "ok" else []}}
    (run_dir / "run.json").write_text(json.dumps(meta, indent=1))
    return run_dir


def two_flow_rates(short_share: float, link: float = 100.0, efficiency: float = 0.95):
    """rate(f, t) giving flow 1 `short_share` % of efficiency * link, flow 2 the rest."""
    total = link * efficiency
    return lambda f, t: total * (short_share if f["flow"] == 1 else 100 - short_share) / 100


# ---- the experiments --------------------------------------------------------------

# Fig. 3: short-flow share per rate and repetition; rep 2 at 1000 Mbit/s is invalid.
FIG03_SHARE = {10: (30.0, 34.0), 100: (10.0, 12.0), 1000: (8.0, 8.0)}


def fig03(root, noise=0.0):
    for rate_mbps, shares in FIG03_SHARE.items():
        for rep, share in enumerate(shares, 1):
            write_run(root, "ma2019_fig03", f"rate_mbps={rate_mbps}", rep,
                      [flow(1, "bbr", 10), flow(2, "bbr", 50)], link_mbps=rate_mbps,
                      rate=two_flow_rates(share, rate_mbps), noise=noise,
                      failed_check="bottleneck_rate" if (rate_mbps, rep) == (1000, 2) else None)


# Fig. 4: (max_bytes, probability) -> (10-ms share %, retrans of 50-ms, of 10-ms over 30 s)
FIG04 = {(500000, 0.02): (10.0, 2500, 700), (500000, 0.1): (14.0, 5000, 1500),
         (330000, 0.02): (13.0, 4300, 1300), (330000, 0.1): (16.0, 6000, 2000)}


def fig04(root, noise=0.0):
    for (mx, pr), (share, r50, r10) in FIG04.items():
        point = f"aqm_max_bytes={mx}__aqm_probability={str(pr).replace('.', '_')}"
        aqm = {"kind": "red", "min_bytes": 170000, "max_bytes": mx, "probability": pr}
        write_run(root, "ma2019_fig04", point, 1, [flow(1, "bbr", 10), flow(2, "bbr", 50)],
                  rate=two_flow_rates(share), retrans={1: r10, 2: r50}, noise=noise,
                  spec_extra={"bottleneck": {"rate_mbps": 100, "buffer_bytes": 2000000, "aqm": aqm}})


# Fig. 5: RTT of flow B -> flow A's share %
FIG05_SHARE = {10: 48.0, 15: 24.0, 30: 8.0, 100: 4.0}


def fig05(root, noise=0.0):
    for rtt_b, share in FIG05_SHARE.items():
        write_run(root, "ma2019_fig05", f"f2_rtt_ms={rtt_b}", 1,
                  [flow(1, "bbr", 10, label="flow A (10 ms)"), flow(2, "bbr", rtt_b, label="flow B")],
                  rate=two_flow_rates(share), noise=noise)


# Fig. 6: number of 10-ms flows -> the 50-ms flow's share %
FIG06_LONG = {1: 85.0, 5: 60.0, 20: 50.0}


def fig06(root, noise=0.0):
    for n, long_share in FIG06_LONG.items():
        flows = [flow(1, "bbr", 50)] + [flow(k + 2, "bbr", 10) for k in range(n)]
        rate = lambda f, t, ls=long_share, n=n: 95 * (ls if f["flow"] == 1 else (100 - ls) / n) / 100  # noqa: E731
        write_run(root, "ma2019_fig06", f"f2_count={n}", 1, flows, rate=rate, noise=noise)


FIG07_CHANGES = [{"at_s": 20, "flow": 1, "rtt_ms": 10}, {"at_s": 40, "flow": 2, "rtt_ms": 20}]


def fig07(root, noise=0.0):
    def rate(f, t):  # flow 1 wins from 30 s, flow 2 from 50 s
        winner = 1 if 30 <= t < 50 else (2 if t >= 50 else None)
        return 47.5 if winner is None else (80.0 if f["flow"] == winner else 15.0)
    write_run(root, "ma2019_fig07", "base", 1,
              [flow(1, "bbr", 5, stop_s=60, label="flow 1"), flow(2, "bbr", 5, stop_s=60, label="flow 2")],
              rate=rate, noise=noise, spec_extra={"changes": FIG07_CHANGES})


def fig08(root, noise=0.0):
    """Fig. 1 shape at fine sampling: the 50-ms flow joins at 5 s and is in ProbeRTT
    from 15.2 to 15.4 s, when the 10-ms flow takes the link."""
    def rate(f, t):
        if f["flow"] == 1:
            return 95.0 if t <= 5 else (90.0 if 15.2 < t <= 15.6 else 10.0)
        return 5.0 if 15.2 < t <= 15.6 else 85.0
    qd = lambda t: 1.0 if t <= 5 else (2.0 if 15.2 < t <= 15.4 else 30.0)  # noqa: E731
    st = lambda f, t: "probe_rtt" if f["flow"] == 2 and 15.2 < t <= 15.4 else "probe_bw"  # noqa: E731
    # flow 1 is cwnd-bound (inflight = cwnd), flow 2 is not (10 packets below)
    write_run(root, "ma2019_fig08", "base", 1,
              [flow(1, "bbr", 10, 0, 30, "10 ms RTT"), flow(2, "bbr", 50, 5, 30, "50 ms RTT")],
              rate=rate, qdelay=qd, state=st, sample_s=0.02, queue_s=0.01, noise=noise,
              flow_queue=True, cwnd_slack=lambda f, t: 0 if f["flow"] == 1 else 10)


def fig12_gain(f, t):
    """Flow 1 drains (0.75) 3 of every 4 samples; flow 2 cycles 1.25, 0.75, then 6 x 1."""
    k = round(t / 0.01)
    if f["flow"] == 1:
        return 1.0 if k % 4 == 0 else 0.75
    return [1.25, 0.75, 1, 1, 1, 1, 1, 1][(k // 5) % 8]


def fig12(root, noise=0.0):
    """60 s like the Fig. 1 run it is compared with; the queueing delay rises by 1 ms
    per 10 ms through each of flow 1's drain periods and falls back after it."""
    write_run(root, "ma2019_fig12", "base", 1,
              [flow(1, "bbq_drain", 10, 0, 60, "10 ms RTT"), flow(2, "bbq_drain", 50, 5, 60, "50 ms RTT")],
              rate=two_flow_rates(5.0), gain=fig12_gain, sample_s=0.01, queue_s=0.01,
              qdelay=lambda t: 20 + (round(t / 0.01) - 1) % 4, noise=noise)


# Fig. 13: algorithm -> (10-ms goodput, 50-ms goodput, queueing delay ms); the 10-ms
# flow leaves at 35 s of 45 s; the 50-ms flow reaches the link 1.5 s later. Both flows
# are in ProbeRTT together from 12.0 to 12.2 s (the claims' window starts after it);
# before 12.2 s the 10-ms flow gets half its later goodput.
FIG13 = {"bbq": (51.4, 42.5, 8.3), "bbr": (10.0, 85.0, 23.4)}


def fig13(root, noise=0.0):
    for cc, (g10, g50, qd) in FIG13.items():
        def rate(f, t, g10=g10, g50=g50):
            if f["flow"] == 1:
                return g10 if t > 12.2 else g10 / 2
            return g50 if t <= 35 else (60.0 if t <= 36.5 else 95.0)
        for rep in (1, 2):
            write_run(root, "ma2019_fig13", f"f1_cc={cc}__f2_cc={cc}", rep,
                      [flow(1, cc, 10, 0, 35, "10 ms RTT"), flow(2, cc, 50, 0, 45, "50 ms RTT")],
                      rate=rate, qdelay=lambda t, qd=qd: qd, duration_s=45, noise=noise,
                      state=lambda f, t: "probe_rtt" if 12.0 < t <= 12.2 else "probe_bw")


# Figs. 14-17: x -> (BBR short-flow share %, BBQ short-flow share %)
FIG14 = {10: (30.0, 46.56), 100: (10.0, 50.0), 400: (8.0, 49.12)}
FIG15 = {10: (48.0, 50.0), 50: (10.0, 42.0), 100: (8.0, 37.1)}
FIG16 = {1: (15.0, 40.0), 20: (2.5, 3.0)}
FIG17 = {(5, 10): (30.0, 48.0), (20, 50): (10.0, 44.0), (200, 300): (25.0, 46.03)}


def fig14_17(root, noise=0.0):
    for cc, i in (("bbr", 0), ("bbq", 1)):
        arm = f"f1_cc={cc}__f2_cc={cc}"
        for rate_mbps, shares in FIG14.items():
            write_run(root, "ma2019_fig14", f"{arm}__rate_mbps={rate_mbps}", 1,
                      [flow(1, cc, 10), flow(2, cc, 50)], link_mbps=rate_mbps,
                      rate=two_flow_rates(shares[i], rate_mbps), noise=noise)
        for rtt, shares in FIG15.items():
            write_run(root, "ma2019_fig15", f"{arm}__f2_rtt_ms={rtt}", 1,
                      [flow(1, cc, 10), flow(2, cc, rtt, label="other flow")],
                      rate=two_flow_rates(shares[i]), noise=noise)
        for n, shares in FIG16.items():
            per_short = shares[i]
            flows = [flow(1, cc, 50)] + [flow(k + 2, cc, 10) for k in range(n)]
            rate = lambda f, t, s=per_short, n=n: 0.95 * (100 - n * s if f["flow"] == 1 else s)  # noqa: E731
            write_run(root, "ma2019_fig16", f"{arm}__f2_count={n}", 1, flows, rate=rate, noise=noise)
        for (a, b), shares in FIG17.items():
            write_run(root, "ma2019_fig17", f"{arm}__f1_rtt_ms={a}__f2_rtt_ms={b}", 1,
                      [flow(1, cc, a, label="shorter RTT"), flow(2, cc, b, label="longer RTT")],
                      rate=two_flow_rates(shares[i]), noise=noise)
    # a run mixing algorithms (the cartesian sweep would make one): drawn in grey
    write_run(root, "ma2019_fig14", "f1_cc=bbq__f2_cc=bbr__rate_mbps=100", 1,
              [flow(1, "bbq", 10), flow(2, "bbr", 50)], rate=two_flow_rates(20.0), noise=noise)


def fig01(root, noise=0.0):
    """Fig. 1 (used as the BBR reference of Fig. 12): 10-ms flow 6.3 % of 95 Mbit/s."""
    write_run(root, "ma2019_fig01", "base", 1,
              [flow(1, "bbr", 10, 0, 60, "10 ms RTT"), flow(2, "bbr", 50, 5, 60, "50 ms RTT")],
              rate=two_flow_rates(10.0), noise=noise)


BUILDERS = [fig01, fig03, fig04, fig05, fig06, fig07, fig08, fig12, fig13, fig14_17]


def make_tree(root: Path, noise: float = 0.0) -> Path:
    for build in BUILDERS:
        build(root, noise)
    return root


if __name__ == "__main__":
    synth_runs.main(make_tree, __doc__)
