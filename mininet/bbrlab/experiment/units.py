"""Rate, size and bandwidth-delay-product arithmetic.

All helpers take SI units in their names: Mbit/s is 10**6 bit/s and a
"MB" in the papers is taken as 10**6 bytes (the BBQ paper's 2 MB buffer
is written as buffer_bytes: 2000000 in the specs, so no unit guessing
happens here).
"""

ETH_HEADER_BYTES = 14        # counted by tbf/htb on veth, not by TCP
IPV4_HEADER_BYTES = 20
TCP_HEADER_BYTES = 32        # 20 + 12 bytes of the timestamp option


def bdp_bytes(rate_mbps: float, rtt_ms: float) -> int:
    """Bandwidth-delay product in bytes, rounded down."""
    if rate_mbps <= 0 or rtt_ms < 0:
        raise ValueError(f"need rate_mbps > 0 and rtt_ms >= 0, got {rate_mbps}, {rtt_ms}")
    return int(rate_mbps * 1e6 / 8 * rtt_ms / 1e3)


def frame_bytes(mtu_bytes: int) -> int:
    """Bytes a full-sized segment occupies in the bottleneck queue."""
    return mtu_bytes + ETH_HEADER_BYTES


def mss_bytes(mtu_bytes: int) -> int:
    """TCP payload of a full-sized segment (IPv4, timestamps on)."""
    return mtu_bytes - IPV4_HEADER_BYTES - TCP_HEADER_BYTES


def goodput_ceiling_mbps(rate_mbps: float, mtu_bytes: int = 1500) -> float:
    """Highest TCP goodput a shaper counting Ethernet frames lets through."""
    return rate_mbps * mss_bytes(mtu_bytes) / frame_bytes(mtu_bytes)


def buffer_bytes(bottleneck: dict, rtt_ms: float, mtu_bytes: int = 1500) -> int:
    """Bottleneck buffer in bytes from exactly one of buffer_bytes,
    buffer_pkts (full-sized frames) or buffer_bdp (multiples of the BDP at
    `rtt_ms`). Never smaller than one full-sized frame."""
    given = [k for k in ("buffer_bytes", "buffer_pkts", "buffer_bdp") if k in bottleneck]
    if len(given) != 1:
        raise ValueError("give exactly one of buffer_bytes, buffer_pkts, buffer_bdp"
                         f" (got {', '.join(given) or 'none'})")
    if "buffer_bytes" in bottleneck:
        size = int(bottleneck["buffer_bytes"])
    elif "buffer_pkts" in bottleneck:
        size = int(bottleneck["buffer_pkts"]) * frame_bytes(mtu_bytes)
    else:
        size = int(bottleneck["buffer_bdp"] * bdp_bytes(bottleneck["rate_mbps"], rtt_ms))
    return max(size, frame_bytes(mtu_bytes))


def burst_bytes(rate_mbps: float, mtu_bytes: int = 1500, tick_ms: float = 5.0) -> int:
    """Token-bucket depth: what the link sends in `tick_ms`, at least two
    full frames. The shaper's timer fires late by up to a few ms in the UML
    guest (see the timer_lateness check); a bucket shallower than that loses
    the tokens of every late wake-up. Measured at 100 Mbit/s, two BBR flows,
    2 MB buffer: a 1-ms bucket dequeued at 97.3 Mbit/s, a 5-ms one at 99.9."""
    return max(int(rate_mbps * 1e6 / 8 * tick_ms / 1e3), 2 * frame_bytes(mtu_bytes))


# Large buffers. A flow that holds the whole bottleneck buffer has the buffer plus the BDP of the
# longest path in flight. Linux keeps it twice, as socket memory of full-sized segments (truesize about
# 1.6 times the payload with offloads off): in the sender's retransmission queue, and after a loss in
# the receiver's out-of-order queue; the receiver advertises half its buffer (tcp_adv_win_scale 1).
# TCP_MEMORY_PER_WINDOW budgets both, rounded up.
TCP_MEMORY_PER_WINDOW = 4
# Socket memory a 1-GB guest's tcp_mem already allows (about 90 MB, global): runs needing no more
# keep the base guest and tcp_mem; the per-socket maxima are raised in every run (guest.tune_tcp_memory).
TCP_MEMORY_IN_BASE_BYTES = 128 * 2**20


def window_bytes(job: dict) -> int:
    """Most bytes one flow can have in flight: the bottleneck buffer plus the BDP of the longest path."""
    bn = job["bottleneck"]
    rtt = max([f["rtt_ms"] for f in job["flows"]] + [c["rtt_ms"] for c in job["changes"]])
    return bn["buffer_bytes_resolved"] + bdp_bytes(bn["rate_mbps"], rtt)


def tcp_memory_bytes(job: dict) -> int:
    """Socket memory a run may need: per-socket buffer maximum and the guest's TCP memory budget."""
    return TCP_MEMORY_PER_WINDOW * window_bytes(job)
