"""Per-flow bottleneck backlog from packet-header captures on both sides of the queue.

The bottleneck qdisc reports only its total backlog. With `capture: bottleneck`
the guest records the headers of every data packet at two points (guest/capture.py
says where and how):

  enqueue  the packet reaches the bottleneck qdisc. With `rtt_on: ingress`
           that is when it leaves its flow's ifb delay line (the ifb re-injects
           it into sw1, which forwards it straight into the bottleneck qdisc in
           the same softirq); otherwise when it arrives at sw1 from its sender.
  dequeue  the packet leaves the bottleneck qdisc for the link (a packet
           socket on the bottleneck interface sees transmitted packets after
           the qdisc).

Both captures keep only TCP packets from the sender subnet, the first
bytes of each (Ethernet + IPv4 + TCP with options). The queue is a FIFO, so
each flow's dequeued packets are an ordered subsequence of its enqueued ones:
walking both lists in order, every enqueued packet that is not the next one
dequeued was dropped at enqueue (tail drop or RED). Packets are matched on
(IP ID, TCP sequence number, length); the IP ID increments per packet of a
connection, so retransmissions of a sequence number are told apart. Then,
exactly (to the capture's time stamp resolution),

    backlog_i(t) = bytes of flow i enqueued (and not dropped) by t
                   - bytes of flow i dequeued by t

in frame bytes, the unit the qdisc counts. `flow_backlog_rows()` evaluates it
at the queue sampler's times, so the sum over flows can be checked against
the qdisc's own backlog at the same instants (fidelity.py). The pcap files
stay in raw/ (capture_enq_<i>.pcap, capture_deq.pcap).
"""
import bisect
import pathlib
import struct

PCAP_MAGIC = {0xA1B2C3D4: ("<", 1e-6), 0xA1B23C4D: ("<", 1e-9),
              0xD4C3B2A1: (">", 1e-6), 0x4D3CB2A1: (">", 1e-9)}
LINKTYPE_ETHERNET = 1
ETHERTYPE_IPV4 = b"\x08\x00"
FLOW_QUEUE_COLUMNS = ["t_s", "flow", "backlog_bytes", "backlog_pkts", "drops"]


class CaptureError(RuntimeError):
    """A capture file this module cannot read: not a pcap file, or not Ethernet frames.
    The message names the file and what is wrong with it."""


# --- on the host: pcap -> per-flow backlog ----------------------------------------------

def read_pcap(path) -> list:
    """[(t, src_ip, key, frame_bytes)] of the IPv4/TCP packets of a pcap file.

    key = (src port, dst port, IP ID, TCP seq, IP total length); frame_bytes is the
    original frame length (what a qdisc counts for the packet)."""
    data = pathlib.Path(path).read_bytes()
    if len(data) < 24:
        raise CaptureError(f"{path}: not a pcap file (only {len(data)} bytes)")
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic not in PCAP_MAGIC:
        raise CaptureError(f"{path}: not a pcap file (magic {magic:#x})")
    endian, frac = PCAP_MAGIC[magic]
    linktype = struct.unpack_from(endian + "I", data, 20)[0]
    if linktype != LINKTYPE_ETHERNET:
        raise CaptureError(f"{path}: link type {linktype}, expected Ethernet (1)")
    rec = struct.Struct(endian + "IIII")
    packets, off, n = [], 24, len(data)
    while off + 16 <= n:
        sec, sub, incl, orig = rec.unpack_from(data, off)
        off += 16
        if off + incl > n:
            break                 # truncated last record (capture killed mid-write)
        pkt = data[off:off + incl]
        off += incl
        if incl < 14 + 20 + 8 or pkt[12:14] != ETHERTYPE_IPV4 or pkt[23] != 6:
            continue
        ihl = (pkt[14] & 0x0F) * 4
        total_len, ip_id = struct.unpack_from("!HH", pkt, 16)
        if len(pkt) < 14 + ihl + 8:
            continue
        sport, dport, seq = struct.unpack_from("!HHI", pkt, 14 + ihl)
        packets.append((sec + sub * frac, pkt[26:30], (sport, dport, ip_id, seq, total_len), orig))
    return packets


def by_sender(packets: list) -> dict:
    """{sender IPv4 as dotted quad: [(t, key, bytes)]} in capture order."""
    out = {}
    for t, src, key, size in packets:
        out.setdefault(".".join(map(str, src)), []).append((t, key, size))
    return out


def match_fifo(enq: list, deq: list) -> dict:
    """Pair one flow's dequeued packets with its enqueued ones, FIFO order.

    Returns {"enq_t", "enq_bytes"} of the packets that entered the queue,
    {"deq_t", "deq_bytes"} of those that left it, "drop_t" (enqueue times of
    the packets skipped by the dequeue order: dropped at enqueue), "tail"
    ([(t, bytes)] enqueued after the last dequeued packet: still queued, or
    dropped, when the captures stopped) and "unmatched" (dequeued packets
    never seen at enqueue: a capture lost packets)."""
    positions = {}
    for j, (_t, key, _size) in enumerate(enq):
        positions.setdefault(key, []).append(j)
    enq_t, enq_b, deq_t, deq_b, drop_t = [], [], [], [], []
    unmatched, i = 0, 0
    for t, key, size in deq:
        candidates = positions.get(key, [])
        k = bisect.bisect_left(candidates, i)
        if k == len(candidates):
            unmatched += 1
            continue
        j = candidates[k]
        drop_t.extend(e[0] for e in enq[i:j])
        enq_t.append(enq[j][0])
        enq_b.append(enq[j][2])
        deq_t.append(t)
        deq_b.append(size)
        i = j + 1
    tail = enq[i:]
    return {"enq_t": enq_t, "enq_bytes": enq_b, "deq_t": deq_t, "deq_bytes": deq_b,
            "drop_t": drop_t, "tail": [(e[0], e[2]) for e in tail], "unmatched": unmatched}


def _cumulative(values: list) -> list:
    out, acc = [0], 0
    for v in values:
        acc += v
        out.append(acc)
    return out


def backlog_at(match: dict, times: list) -> list:
    """[(backlog_bytes, backlog_pkts, drops)] of one flow at each of `times` (sorted or not).

    Packets still in the queue when the dequeue capture stopped (the tail) count
    as backlog from their enqueue time on; drops are cumulative."""
    enq_t = match["enq_t"] + [t for t, _ in match["tail"]]
    enq_b = match["enq_bytes"] + [b for _, b in match["tail"]]
    order = sorted(range(len(enq_t)), key=enq_t.__getitem__)
    enq_t = [enq_t[k] for k in order]
    enq_cb = _cumulative([enq_b[k] for k in order])
    deq_t = match["deq_t"]                     # FIFO: dequeue times are non-decreasing
    deq_cb = _cumulative(match["deq_bytes"])
    drops = sorted(match["drop_t"])
    out = []
    for t in times:
        ne, nd = bisect.bisect_right(enq_t, t), bisect.bisect_right(deq_t, t)
        out.append((enq_cb[ne] - deq_cb[nd], ne - nd, bisect.bisect_right(drops, t)))
    return out


def flow_backlog_rows(raw: pathlib.Path, flows: list, t0: float, times: list) -> tuple:
    """Rows of tidy/flow_queue.csv at guest times `times`, and a per-flow summary.

    `flows`: [{"flow": i, "sender_ip": ...}] (timeline.json). Each flow's enqueue
    capture is raw/capture_enq_<i>.pcap; the dequeue capture raw/capture_deq.pcap."""
    deq = by_sender(read_pcap(raw / "capture_deq.pcap"))
    rows, summary = [], []
    per_flow = {}
    for f in flows:
        enq = by_sender(read_pcap(raw / f"capture_enq_{f['flow']}.pcap")).get(f["sender_ip"], [])
        m = match_fifo(enq, deq.get(f["sender_ip"], []))
        per_flow[f["flow"]] = backlog_at(m, times)
        summary.append({"flow": f["flow"], "enqueued_pkts": len(enq), "dequeued_pkts": len(m["deq_t"]),
                        "dropped_pkts": len(m["drop_t"]), "queued_at_end_pkts": len(m["tail"]),
                        "unmatched_pkts": m["unmatched"]})
    for k, t in enumerate(times):
        for f in flows:
            b, p, d = per_flow[f["flow"]][k]
            rows.append({"t_s": round(t - t0, 4), "flow": f["flow"], "backlog_bytes": b,
                         "backlog_pkts": p, "drops": d})
    return rows, summary
