#!/usr/bin/env python3
"""How far a run's flows stretched their socket limits: the sequence span each sender kept
outstanding, against the window the run was sized for.

    .venv/bin/python bench/window_span.py RUN_DIR [RUN_DIR ...]

For each run (a directory with job.json and raw/), per flow, from the sender's sampled
tcp_info: the largest sequence span snd_una..snd_nxt (tcp_info `unacked`, segments, times
snd_mss), in bytes and in multiples of the run's window W (units.window_bytes: bottleneck
buffer plus the longest path's BDP); the largest advertised window (snd_wnd) against the
receiver's ceiling (raw/socket_limits.json); the receive-window-limited seconds, all and
those accrued at the ceiling (as fidelity.socket_buffer_checks counts them); the send-buffer-
limited seconds; the largest smoothed RTT; retransmitted segments. Per run: when the
bottleneck queue first held 90 % of its buffer, and its peak. Prints one Markdown table.
"""
import json
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.data import fidelity, tidy  # noqa: E402
from bbrlab.experiment import units  # noqa: E402
from bbrlab.guest import traffic  # noqa: E402


def flow_span(raw: pathlib.Path, flow: int, window: int) -> dict:
    """The sender-side numbers of one flow (see the module docstring)."""
    series = fidelity.with_info(tidy.data_socket_series(
        tidy.read_jsonl(raw / f"sockets_snd{flow}.jsonl"), traffic.port(flow), local=False, counter="bytes_acked"))
    ceiling = fidelity.window_ceiling(raw, flow)
    span, t_span, wnd, rtt, capped, before = 0, None, 0, 0, 0, 0
    for t, sock in series:
        info = sock["info"]
        s = (info.get("unacked") or 0) * (info.get("snd_mss") or 0)
        if s > span:
            span, t_span = s, t
        wnd = max(wnd, info.get("snd_wnd") or 0)
        rtt = max(rtt, info.get("rtt") or 0)
        now = info.get("rwnd_limited") or 0
        if ceiling and (info.get("snd_wnd") or 0) >= fidelity.AT_CEILING * ceiling:
            capped += max(0, now - before)
        before = now
    last = series[-1][1]["info"] if series else {}
    t0 = series[0][0] if series else 0
    return {"flow": flow, "span_bytes": span, "span_w": span / window, "span_at_s": (t_span or t0) - t0,
            "peak_snd_wnd": wnd, "ceiling": ceiling, "rwnd_limited_s": (last.get("rwnd_limited") or 0) / 1e6,
            "rwnd_at_ceiling_s": capped / 1e6, "sndbuf_limited_s": (last.get("sndbuf_limited") or 0) / 1e6,
            "busy_s": (last.get("busy_time") or 0) / 1e6, "max_rtt_s": rtt / 1e6,
            "retrans_segs": last.get("total_retrans")}


def queue_fill(raw: pathlib.Path, buffer_bytes: int) -> tuple:
    """(seconds from the first queue sample to the first holding 90 % of the buffer, or None;
    the peak backlog in bytes)."""
    qs = [(rec["t"], root["backlog"]) for rec, root in tidy.queue_samples(tidy.read_jsonl(raw / "qdisc.jsonl"))]
    first = next((t for t, b in qs if b >= 0.9 * buffer_bytes), None)
    t0 = qs[0][0] if qs else 0
    return (None if first is None else first - t0), max((b for _t, b in qs), default=0)


def main(argv=None) -> None:
    """Print the table for every run directory given."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.exit(__doc__)
    print("| run | flow | W (MB) | span peak (MB) | span / W | at (s) | peak snd_wnd (MB) | ceiling (MB)"
          " | rwnd-limited s (at ceiling) | sndbuf-limited s | busy s | max RTT s | retrans | queue 90 % at (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for arg in argv:
        run = pathlib.Path(arg)
        job = json.loads((run / "job.json").read_text())
        window = units.window_bytes(job)
        fill, _peak = queue_fill(run / "raw", job["bottleneck"]["buffer_bytes_resolved"])
        for flow in job["flows"]:
            r = flow_span(run / "raw", flow["flow"], window)
            print(f"| {run.name} | {flow['flow']} {flow['cc']} | {window / 1e6:.0f} | {r['span_bytes'] / 1e6:.1f} | "
                  f"{r['span_w']:.2f} | {r['span_at_s']:.0f} | {r['peak_snd_wnd'] / 1e6:.1f} | "
                  f"{(r['ceiling'] or 0) / 1e6:.0f} | {r['rwnd_limited_s']:.1f} ({r['rwnd_at_ceiling_s']:.1f}) | "
                  f"{r['sndbuf_limited_s']:.1f} | {r['busy_s']:.0f} | {r['max_rtt_s']:.2f} | {r['retrans_segs']} | "
                  f"{'never' if fill is None else f'{fill:.0f}'} |")


if __name__ == "__main__":
    main()
