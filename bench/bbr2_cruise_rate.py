#!/usr/bin/env python3
"""Delivery-rate samples against a BBR-type flow's bandwidth estimate and the link rate, per state.

    .venv/bin/python bench/bbr2_cruise_rate.py RUN_DIR [RUN_DIR ...] [--from 10] [--flow N]

Each RUN_DIR is one finished run (the directory holding run.json and tidy/, e.g.
results/quick/runs/utsumi2022_fig14/<point>/rep1). For every flow of a BBR-type congestion
control (a non-empty `bbr_bw_mbps` in tidy/tcp.csv; BBR-FCA's rows with its flag set, whose bw
column is the CUBIC estimate, are left out) it prints two Markdown tables, over two windows:

    steady        from --from s (default 10, the claims' warm-up) after the last flow's start
                  until the first flow's stop (analysis/lib/metrics.R's steady state)
    after Drain   from the flow's first sample with a cwnd gain below 2.5 (Startup and Drain
                  run at 2.89) until the first flow's stop

and within each window per state: the module's state for bbr2/bbr3/bbr2plus (ProbeBW's phases
DOWN/CRUISE/REFILL/UP); for the others (`state` probe_bw, or empty) PROBE_BW split by its pacing
gain (1.25 up, 0.75 down, 1 the cruising phases), ProbeRTT by a cwnd gain below 2.

Rates (Mbit/s of TCP payload, as tcp_info reports them):

    link          the payload rate of the configured bottleneck: rate_mbps x MSS / (MTU + 14),
                  the shaper counting whole Ethernet frames (100 Mbit/s, 1448-byte MSS: 95.64)
    delivery      `delivery_rate_mbps`: tcpi_delivery_rate, the rate sample of the last ACK
                  before the socket sample (one sample per sample_interval_s, not every ACK's)
    estimate      `bbr_bw_mbps`: BBR's max-filtered bandwidth (bbr2/bbr3: min(max_bw, bw_lo))
    pacing        `pacing_rate_mbps`: tcpi_pacing_rate (estimate x pacing gain x 0.99)

quantiles p5 / p25 / p50 / p75 / p95; est/deliv the median of the per-sample ratio; deliv > link
the share of delivery samples above the link's payload rate by more than 0.5 %, its max the
highest of them, its queue empty the share of them taken while the bottleneck queue was empty
(queueing delay below 0.5 ms): a link serialising at its rate cannot deliver above it, the
testbed's token-bucket shaper (tbf, `burst_bytes`: 5 ms of the rate) can while its bucket holds
tokens, i.e. after the queue has been empty.

Delay: `rtt_ms` (smoothed RTT) quantiles and mean (the claims' RTT, analysis/lib/metrics.R's
ss_rtt_ms, is this mean over the steady state); the bottleneck's queueing delay (`qdelay_ms` of
tidy/queue.csv, the sample nearest each socket sample, within 50 ms) quantiles; dq/dt the median
over consecutive socket samples of the same state of the change of that queueing delay per
second (ms/s: 10 ms/s means the flows send 1 % above the link rate); cwnd-lim the share of
samples with in-flight at 98 % of cwnd or more; app-lim the share of the sender's raw socket
samples (raw/sockets_snd<flow>.jsonl, every sampler tick) whose delivery_rate_app_limited is set,
rwnd/sndbuf the share of the window's time tcp_info counts as limited by the receive window or
the send buffer ("–" where raw/ or a column is absent, e.g. runs restored from the archive).

Reads runs only; boots nothing. Prints the tables to stdout.
"""
import argparse
import csv
import json
import math
import pathlib
import sys

PROBE_BW_PHASES = ("probe_bw_down", "probe_bw_cruise", "probe_bw_refill", "probe_bw_up")
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
ETH_HEADER = 14


def quantile(xs: list, q: float) -> float:
    """Linear-interpolated quantile (R's type 7) of a non-empty list."""
    s = sorted(xs)
    h = (len(s) - 1) * q
    lo = math.floor(h)
    return s[lo] + (h - lo) * (s[min(lo + 1, len(s) - 1)] - s[lo])


def qs(xs: list, fmt: str = "{:.1f}") -> str:
    """'p5 / p25 / p50 / p75 / p95' of xs, or '–'."""
    xs = [x for x in xs if x is not None]
    return " / ".join(fmt.format(quantile(xs, q)) for q in QUANTILES) if xs else "–"


def median(xs: list):
    xs = [x for x in xs if x is not None]
    return quantile(xs, 0.5) if xs else None


def num(v: str):
    return float(v) if v not in ("", None) else None


def state_of(r: dict) -> str:
    """The module's state, or for BBR-type modules reporting probe_bw (or nothing) the phase by gain."""
    st = r["state"]
    if st in PROBE_BW_PHASES or st in ("startup", "drain", "probe_rtt"):
        return st
    pg, cg = num(r["bbr_pacing_gain"]), num(r["bbr_cwnd_gain"])
    if pg is None or cg is None:
        return st or "?"
    if cg > 2.5:
        return "startup" if pg > 1.5 else "drain"
    if cg < 1.99:
        return "probe_rtt"
    if pg > 1.01:
        return "probe_bw (gain 1.25)"
    if pg < 0.99:
        return "probe_bw (gain 0.75)"
    return "probe_bw (gain 1)"


def read_queue(run_dir: pathlib.Path) -> list:
    """[(t_s, qdelay_ms)] of tidy/queue.csv, or [] when it has no qdelay_ms."""
    p = run_dir / "tidy" / "queue.csv"
    if not p.exists():
        return []
    with open(p) as f:
        rows = list(csv.DictReader(f))
    if not rows or "qdelay_ms" not in rows[0]:
        return []
    return [(float(r["t_s"]), float(r["qdelay_ms"])) for r in rows]


def nearest(queue: list, t: float, tol: float = 0.05):
    """The queueing delay of the queue sample nearest t (within tol), by bisection."""
    if not queue:
        return None
    lo, hi = 0, len(queue) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if queue[mid][0] <= t:
            lo = mid
        else:
            hi = mid
    best = min((queue[lo], queue[hi]), key=lambda x: abs(x[0] - t))
    return best[1] if abs(best[0] - t) <= tol + 1e-9 else None


def raw_limits(run_dir: pathlib.Path, flow: int, t_lo: float, t_hi: float) -> dict:
    """Shares over [t_lo, t_hi] from the sender's raw socket samples: app_limited (of samples),
    rwnd, sndbuf (of time). {} when raw/ is absent."""
    raw = run_dir / "raw"
    p = raw / f"sockets_snd{flow}.jsonl"
    if not p.exists() or not (raw / "timeline.json").exists():
        return {}
    t0 = json.loads((raw / "timeline.json").read_text())["t0"]
    n = app = 0
    first = last = None
    with open(p) as f:
        for line in f:
            rec = json.loads(line)
            socks = [s for s in rec.get("socks", []) if s.get("cc") and s.get("info")]
            if len(socks) != 1:
                continue
            t = rec["t"] - t0
            if not t_lo <= t <= t_hi:
                continue
            info = socks[0]["info"]
            n += 1
            app += bool(info.get("delivery_rate_app_limited"))
            if first is None:
                first = (t, info)
            last = (t, info)
    if not n or last[0] <= first[0]:
        return {}
    span_us = (last[0] - first[0]) * 1e6
    out = {"app_limited": app / n}
    for k, name in (("rwnd_limited", "rwnd"), ("sndbuf_limited", "sndbuf")):
        if k in last[1] and k in first[1]:
            out[name] = (last[1][k] - first[1][k]) / span_us
    return out


def flow_rows(run_dir: pathlib.Path, t_from: float, only_flow=None) -> list:
    """One dict per (flow, window, state) of the run's BBR-type flows, plus one 'all' per window."""
    meta = json.loads((run_dir / "run.json").read_text())
    spec = meta["spec"]
    flows = meta.get("flows") or spec["flows"]
    t_start = max(f["start_s"] for f in flows) + t_from
    t_stop = min(f["stop_s"] for f in flows)
    rate = meta["bottleneck"]["rate_mbps"]
    mtu = spec.get("mtu_bytes", 1500)
    queue = read_queue(run_dir)
    by_flow = {}
    with open(run_dir / "tidy" / "tcp.csv") as f:
        for r in csv.DictReader(f):
            if not r.get("bbr_bw_mbps") or r.get("variant_flag") == "1":
                continue
            if only_flow is not None and int(r["flow"]) != only_flow:
                continue
            by_flow.setdefault(int(r["flow"]), []).append(r)
    label = f"{meta['experiment']} / {meta.get('point_label') or meta['point']}"
    out = []
    for flow, rows in sorted(by_flow.items()):
        rows.sort(key=lambda r: float(r["t_s"]))
        mss = float(rows[0]["mss_bytes"])
        link = rate * mss / (mtu + ETH_HEADER)
        drained = next((float(r["t_s"]) for r in rows if num(r["bbr_cwnd_gain"]) is not None
                        and num(r["bbr_cwnd_gain"]) < 2.5), None)
        windows = [("steady", t_start)]
        if drained is not None:
            windows.append(("after Drain", drained))
        for wname, lo in windows:
            sel = [r for r in rows if lo <= float(r["t_s"]) <= t_stop]
            if not sel:
                continue
            limits = raw_limits(run_dir, flow, lo, t_stop)
            groups = {}
            for r in sel:
                groups.setdefault(state_of(r), []).append(r)
            # dq/dt over consecutive samples of the same state
            slopes = {}
            for a, b in zip(sel, sel[1:]):
                sa, sb = state_of(a), state_of(b)
                qa, qb = nearest(queue, float(a["t_s"])), nearest(queue, float(b["t_s"]))
                dt = float(b["t_s"]) - float(a["t_s"])
                if sa == sb and qa is not None and qb is not None and dt > 0:
                    slope = (qb - qa) / dt
                    slopes.setdefault(sa, []).append(slope)
                    slopes.setdefault("all", []).append(slope)
            order = sorted(groups, key=lambda s: (-len(groups[s]), s))
            for st in ["all"] + order:
                g = sel if st == "all" else groups[st]
                deliv = [num(r["delivery_rate_mbps"]) for r in g]
                est = [num(r["bbr_bw_mbps"]) for r in g]
                pacing = [num(r.get("pacing_rate_mbps")) for r in g]
                ratio = [e / d for e, d in zip(est, deliv) if e is not None and d]
                above = [r for r in g if num(r["delivery_rate_mbps"]) is not None
                         and num(r["delivery_rate_mbps"]) > link * 1.005]
                above_q = [nearest(queue, float(r["t_s"])) for r in above]
                above_q = [x for x in above_q if x is not None]
                cwnd_lim = [float(r["inflight_pkts"]) >= 0.98 * float(r["cwnd_pkts"]) for r in g
                            if r.get("inflight_pkts") not in ("", None)]
                out.append({
                    "run": label, "flow": flow, "cc": g[0]["cc"], "window": wname,
                    "from_s": lo, "to_s": t_stop, "state": st, "n": len(g), "share": len(g) / len(sel),
                    "link": link,
                    "deliv": qs(deliv),
                    "est": qs(est),
                    "pacing_med": median(pacing),
                    "ratio_med": median(ratio),
                    "est_link_med": median([e / link for e in est if e is not None]),
                    "above_link": (sum(d > link * 1.005 for d in deliv if d is not None)
                                   / max(1, sum(d is not None for d in deliv))),
                    "above_empty": (sum(x < 0.5 for x in above_q) / len(above_q)) if above_q else None,
                    "above_max": max((num(r["delivery_rate_mbps"]) for r in above), default=None),
                    "rtt": qs([num(r["rtt_ms"]) for r in g]),
                    "rtt_mean": sum(num(r["rtt_ms"]) for r in g) / len(g),
                    "queue": qs([nearest(queue, float(r["t_s"])) for r in g]),
                    "dqdt": median(slopes.get(st, [])),
                    "cwnd_lim": sum(cwnd_lim) / len(cwnd_lim) if cwnd_lim else None,
                    "limits": limits if st == "all" else {},
                })
    return out


def fmt(v, spec: str = "{:.2f}", none: str = "–") -> str:
    return none if v is None else spec.format(v)


def tables(rows: list) -> str:
    """The two Markdown tables."""
    a = ["| run | flow | window (s) | state | samples (share) | link | delivery p5/p25/p50/p75/p95 "
         "| estimate p5/p25/p50/p75/p95 | pacing p50 | est/deliv p50 | est/link p50 | deliv > link "
         "| its max | its queue empty |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    b = ["| run | flow | window (s) | state | RTT ms p5/p25/p50/p75/p95 | RTT mean | queue ms p5/p25/p50/p75/p95 "
         "| dq/dt p50 (ms/s) | cwnd-lim | app-lim | rwnd / sndbuf |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        win = f"{r['window']} {r['from_s']:.1f}–{r['to_s']:g}"
        head = f"| {r['run']} | {r['flow']} ({r['cc']}) | {win} | {r['state']} "
        a.append(head + f"| {r['n']} ({100 * r['share']:.0f} %) | {r['link']:.2f} | {r['deliv']} | {r['est']} "
                 f"| {fmt(r['pacing_med'])} | {fmt(r['ratio_med'], '{:.3f}')} "
                 f"| {fmt(r['est_link_med'], '{:.3f}')} | {100 * r['above_link']:.0f} % | {fmt(r['above_max'], '{:.1f}')} "
                 f"| {fmt(r['above_empty'], '{:.0%}')} |")
        lim = r["limits"]
        b.append(head + f"| {r['rtt']} | {r['rtt_mean']:.1f} | {r['queue']} | {fmt(r['dqdt'], '{:.1f}')} "
                 f"| {fmt(r['cwnd_lim'], '{:.0%}')} | {fmt(lim.get('app_limited'), '{:.0%}')} "
                 f"| {fmt(lim.get('rwnd'), '{:.0%}')} / {fmt(lim.get('sndbuf'), '{:.0%}')} |")
    return ("Rates (Mbit/s of payload)\n\n" + "\n".join(a) + "\n\nDelay and limits\n\n" + "\n".join(b) + "\n")


def main() -> None:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=pathlib.Path, help="run directories (holding run.json and tidy/)")
    ap.add_argument("--from", dest="t_from", type=float, default=10.0,
                    help="the steady window starts this many seconds after the last flow's start")
    ap.add_argument("--flow", type=int, default=None, help="only this flow of each run")
    a = ap.parse_args()
    rows = []
    for d in a.runs:
        if not (d / "run.json").exists():
            ap.error(f"{d}: no run.json (not a finished run)")
        rows += flow_rows(d, a.t_from, a.flow)
    if not rows:
        sys.exit("no BBR-type flow with a bandwidth estimate in these runs")
    sys.stdout.write(tables(rows))


if __name__ == "__main__":
    main()
