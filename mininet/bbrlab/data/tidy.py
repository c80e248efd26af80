"""raw/ -> tidy/*.csv, following docs/tidy-data.md.

Sockets are matched to flows by port: flow i's iperf3 server listens on
5200 + i; its control connection and its data connection share that port,
and the data connection is the one that moved the most bytes.
"""
import csv
import json
import pathlib

from ..experiment import testbed, variants
from . import capture

GOODPUT_COLUMNS = ["flow", "t_s", "interval_s", "bytes", "goodput_mbps"]
TCP_COLUMNS = ["flow", "t_s", "cc", "state", "rtt_ms", "rttvar_ms", "min_rtt_ms", "cwnd_pkts",
               "inflight_pkts", "mss_bytes", "pacing_rate_mbps", "delivery_rate_mbps", "bytes_acked",
               "retrans_total", "bbr_bw_mbps", "bbr_min_rtt_ms", "bbr_pacing_gain", "bbr_cwnd_gain",
               "variant_flag", "variant_estimate_mbps", "bbr_inflight_hi_pkts"]
QUEUE_COLUMNS = ["t_s", "backlog_bytes", "backlog_pkts", "sent_bytes", "sent_pkts", "drops", "qdelay_ms"]

U32_MAX = 0xFFFFFFFF
U64_MAX = 0xFFFFFFFFFFFFFFFF


def read_jsonl(path: pathlib.Path) -> list:
    """JSON lines; a truncated last line (sampler killed mid-write) is skipped."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def data_socket_series(samples: list, port: int, local: bool, counter: str) -> list:
    """[(t, sock)] of the connection on `port` that moved the most bytes.

    local=True: `port` is the socket's own port (receiver); else the peer's."""
    by_key, best = {}, {}
    for rec in samples:
        for sock in rec.get("socks", []):
            if (sock["sport"] if local else sock["dport"]) != port:
                continue
            key = (sock["src"], sock["sport"], sock["dst"], sock["dport"])
            by_key.setdefault(key, []).append((rec["t"], sock))
            best[key] = max(best.get(key, 0), sock["info"].get(counter, 0))
    if not best:
        return []
    return by_key[max(best, key=best.get)]


def goodput_rows(flow: int, samples: list, t0: float) -> list:
    """Receiver-side goodput between consecutive samples of the data connection."""
    series = data_socket_series(samples, testbed.port(flow), local=True, counter="bytes_received")
    if not series:
        return []
    times = [rec["t"] for rec in samples]
    first_t = series[0][0]
    earlier = [t for t in times if t < first_t]
    # The connection appeared between two samples: count its first bytes from the one before.
    prev_t, prev_bytes = (earlier[-1], 0) if earlier else (None, None)
    rows = []
    for t, sock in series:
        received = sock["info"].get("bytes_received", 0)
        if prev_t is not None and t > prev_t:
            dt = t - prev_t
            delta = received - prev_bytes
            rows.append({"flow": flow, "t_s": round(t - t0, 4), "interval_s": round(dt, 6),
                         "bytes": delta, "goodput_mbps": round(delta * 8 / dt / 1e6, 6)})
        prev_t, prev_bytes = t, received
    return rows


# bbr2/bbr3/bbr2plus (variants.yaml phase_in_bw): state in bbr_bw_lo's low 3 bits, inflight_hi in
# bbr_bw_hi (kernel/variants/README.md "What samplers see").
BBR2_STATES = ("startup", "drain", "probe_bw_down", "probe_bw_cruise", "probe_bw_refill",
               "probe_bw_up", "probe_rtt")


def bbr2_fields(bbr: dict) -> dict:
    """state, bbr_bw_mbps and bbr_inflight_hi_pkts of a bbr2/bbr3 socket's BBR info."""
    raw = bbr.get("bw_bytes_per_s") if bbr else None
    if raw is None:
        return {}
    lo, hi = raw & U32_MAX, raw >> 32
    code = lo & 7
    return {"state": BBR2_STATES[code] if code < len(BBR2_STATES) else "",
            "bbr_bw_mbps": _mbps(lo & ~7), "bbr_inflight_hi_pkts": None if hi == U32_MAX else hi}


def bbr_state(cc: str, bbr: dict) -> str:
    """BBR's mode, inferred from its gains (Linux 6.1 tcp_bbr.c constants), for bbr and
    the variants that keep BBR's gains per mode (variants.yaml bbr_modes)."""
    if not bbr or not variants.bbr_modes(cc):
        return ""
    pacing, cwnd = bbr["pacing_gain"], bbr["cwnd_gain"]
    if pacing == 0:
        return ""          # the connection has no BBR state yet
    if pacing > 2.5:
        return "startup"
    if pacing < 0.5:
        return "drain"
    if pacing == 1.0 and cwnd == 1.0:
        return "probe_rtt"
    return "probe_bw"


def bbr_bandwidth(cc: str, bbr: dict) -> dict:
    """bbr_bw_mbps, variant_flag and variant_estimate_mbps from BBR info's bandwidth.

    The variants with state_in_bw_bit0 in variants.yaml keep a flag in bit 0 of the
    bandwidth (kernel/variants/README.md): variant_flag is that bit, the rest is
    bbr_bw_mbps, except while the flag is 1 for a variant with estimate_while_flagged:
    then the rest is that other rate, variant_estimate_mbps, and bbr_bw_mbps is empty."""
    bw = bbr.get("bw_bytes_per_s") if bbr else None
    if not variants.state_in_bw_bit0(cc) or bw in (None, U64_MAX):
        return {"bbr_bw_mbps": _mbps(bw)}
    flag, bw = bw & 1, bw & ~1
    if flag and variants.estimate_while_flagged(cc) is not None:
        return {"variant_flag": flag, "variant_estimate_mbps": _mbps(bw)}
    return {"variant_flag": flag, "bbr_bw_mbps": _mbps(bw)}


def _ms(us):
    return None if us in (None, U32_MAX) else round(us / 1000.0, 3)


def _mbps(bytes_per_s):
    return None if bytes_per_s in (None, U64_MAX) else round(bytes_per_s * 8 / 1e6, 4)


def tcp_rows(flow: int, samples: list, t0: float) -> list:
    """Rows of tidy/tcp.csv (TCP_COLUMNS) for one flow from its sender's socket samples: the data
    connection to the flow's port (data_socket_series), without handshake samples; times relative
    to t0; sentinel values (all ones) become None."""
    rows = []
    for t, sock in data_socket_series(samples, testbed.port(flow), local=False, counter="bytes_acked"):
        if sock["state"] in ("syn_sent", "syn_recv"):
            continue          # handshake: congestion control and RTT not settled yet
        info, bbr = sock["info"], sock.get("bbr") or {}
        inflight = None
        if "unacked" in info:
            inflight = info["unacked"] - info.get("sacked", 0) - info.get("lost", 0) + info.get("retrans", 0)
        rows.append({
            "flow": flow, "t_s": round(t - t0, 4), "cc": sock.get("cc") or "",
            "state": bbr_state(sock.get("cc"), bbr),
            "rtt_ms": _ms(info.get("rtt")), "rttvar_ms": _ms(info.get("rttvar")),
            "min_rtt_ms": _ms(info.get("min_rtt")), "cwnd_pkts": info.get("snd_cwnd"),
            "inflight_pkts": inflight, "mss_bytes": info.get("snd_mss"),
            "pacing_rate_mbps": _mbps(info.get("pacing_rate")),
            "delivery_rate_mbps": _mbps(info.get("delivery_rate")),
            "bytes_acked": info.get("bytes_acked"), "retrans_total": info.get("total_retrans"),
            **bbr_bandwidth(sock.get("cc"), bbr),
            "bbr_min_rtt_ms": _ms(bbr.get("min_rtt_us")) if bbr else None,
            "bbr_pacing_gain": bbr.get("pacing_gain"), "bbr_cwnd_gain": bbr.get("cwnd_gain"),
        })
        if variants.phase_in_bw(sock.get("cc")):
            rows[-1].update(bbr2_fields(bbr))
    return rows


def queue_samples(samples: list) -> list:
    """[(record, root qdisc)] of the samples that caught the bottleneck's root qdisc."""
    out = []
    for rec in samples:
        root = next((q for q in rec.get("qdiscs", []) if q.get("parent") == "root"), None)
        if root is not None and "backlog" in root:
            out.append((rec, root))
    return out


def queue_rows(samples: list, t0: float, rate_mbps: float) -> list:
    """Rows of tidy/queue.csv from queue_samples()."""
    rows = []
    for rec, root in samples:
        qdiscs = rec["qdiscs"]
        # RED's early drops are counted by the leaf only, drop-tail by both: take the larger.
        drops = max(q.get("drops", 0) for q in qdiscs)
        rows.append({"t_s": round(rec["t"] - t0, 4), "backlog_bytes": root["backlog"],
                     "backlog_pkts": root["qlen"], "sent_bytes": root["bytes"], "sent_pkts": root["packets"],
                     "drops": drops, "qdelay_ms": round(root["backlog"] * 8 / (rate_mbps * 1e6) * 1e3, 4)})
    return rows


def write_csv(path: pathlib.Path, columns: list, rows: list) -> None:
    """Write rows as CSV with exactly `columns` (None as an empty field) to path.csv.tmp, then rename
    it to path, so a reader never sees half a file. Row keys not in columns are left out."""
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="raise")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in columns})
    tmp.rename(path)


def make_tidy(run_dir: pathlib.Path, job: dict) -> dict:
    """Write tidy/goodput.csv, tidy/tcp.csv, tidy/queue.csv; return the rows for fidelity checks."""
    raw = run_dir / "raw"
    timeline = json.loads((raw / "timeline.json").read_text())
    t0 = timeline["t0"]
    goodput, tcp = [], []
    for flow in job["flows"]:
        n = flow["flow"]
        goodput += goodput_rows(n, read_jsonl(raw / f"sockets_rcv{n}.jsonl"), t0)
        tcp += tcp_rows(n, read_jsonl(raw / f"sockets_snd{n}.jsonl"), t0)
    qdisc = queue_samples(read_jsonl(raw / "qdisc.jsonl"))
    queue = queue_rows(qdisc, t0, job["bottleneck"]["rate_mbps"])
    out = run_dir / "tidy"
    out.mkdir(exist_ok=True)
    write_csv(out / "goodput.csv", GOODPUT_COLUMNS, goodput)
    write_csv(out / "tcp.csv", TCP_COLUMNS, tcp)
    write_csv(out / "queue.csv", QUEUE_COLUMNS, queue)
    data = {"goodput": goodput, "tcp": tcp, "queue": queue, "timeline": timeline}
    if job["capture"] == "bottleneck":
        times = [rec["t"] for rec, _root in qdisc]
        data["flow_queue"], data["capture"] = capture.flow_backlog_rows(raw, timeline["flows"], t0, times)
        write_csv(out / "flow_queue.csv", capture.FLOW_QUEUE_COLUMNS, data["flow_queue"])
    return data
