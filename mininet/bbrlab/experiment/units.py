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


# Large buffers: what the hosts' socket limits must hold (docs/clocks-and-fidelity.md, "Socket
# limits"; bench/results/deep-buffer-2026-11-26.md). W (window_bytes) is what one flow can have in
# flight: the bottleneck buffer plus the BDP of the longest path. A Linux sender may send only up to
# snd_una + snd_wnd (tcp_snd_wnd_test, net/ipv4/tcp_output.c): the receive window counts from the
# oldest unacknowledged byte, so in loss recovery it must cover the whole sequence span
# snd_una..snd_nxt -- segments lost, SACKed and retransmitted as well as new data -- not only what
# is in flight. That span reaches SPAN_WINDOWS x W: up to 2 W outstanding when the first loss is
# detected (a slow start still doubles in the round trip that carries the first drop, and dropped
# segments stay in the span), one round trip (W at the bottleneck's rate) of new data while the
# first hole is repaired, and one more when a retransmission is lost too and the head waits for
# the retransmission timeout. Measured at 128 BDP, 80 ms, CUBIC vs BBR-FCA: 1.4 W at the first
# loss, 2.0 W (then the ceiling) after 12 s of recovery with a retransmission lost.
SPAN_WINDOWS = 4
# The receiver advertises tcp_win_from_space(tcp_rmem[2]) at most, half its buffer with the
# guest's tcp_adv_win_scale of 1 (the other half covers skb overhead: a full segment's truesize
# is about 1.6 times its payload with offloads off, in the sender's retransmission queue and in
# the receiver's out-of-order queue alike). So each socket's maximum is twice the span;
# the sender gets the same, for the span and the data queued behind it.
SOCKET_MEMORY_PER_SPAN = 2
# Both sockets of a flow may hold their maximum at once (the sender its span and unsent data,
# the receiver the span beyond the hole); the spans of several flows share one bottleneck, so
# the guest's TCP memory (tcp_mem) is budgeted for one flow's two sockets.
SOCKETS_PER_BUDGET = 2
# Socket memory a 1-GB guest's tcp_mem already allows (about 90 MB, global): runs needing no more
# keep the base guest and tcp_mem; the per-socket maxima are raised in every run (guest.tune_tcp_memory).
TCP_MEMORY_IN_BASE_BYTES = 128 * 2**20
# The largest window TCP can advertise (RFC 7323: 65535 << 14 bytes).
MAX_TCP_WINDOW_BYTES = 65535 << 14
# Runs whose window W fits in the advertised window of Mininet's default socket maximum (16 MiB,
# advertising 8 MiB) keep the earlier sizing, EARLIER_PER_WINDOW x W per socket and as the guest's
# budget: the sizing every run of the paper profile's archive (data/paper) was made with. The socket
# maxima change what the flows see even where they never bind (the receive-buffer autotuning and
# the window scale follow them: measured 2026-11-26, a Kim et al. and a Yang et al. run changed),
# so applying the loss-recovery sizing to them would make every archived run of Ma et al., Kim et
# al., Yang et al. and Tang silently differ from a rerun. Whether those limits bound a run is checked per run, not assumed:
# the socket_buffers fidelity check fails any run whose receive window stood at its ceiling (or
# whose send buffer was full) for more than a small share of its busy time. The largest W of
# those four papers is 8.25 MB (Ma et al.'s Fig. 3 at 1 Gbit/s; tests/test_testbed_capabilities.py
# holds it); the deep buffers the loss-recovery sizing is for (Utsumi & Hasegawa's)
# reach 129 MB.
EARLIER_SIZING_MAX_WINDOW_BYTES = 8 * 2**20
EARLIER_PER_WINDOW = 4


def window_bytes(job: dict) -> int:
    """Most bytes one flow can have in flight: the bottleneck buffer plus the BDP of the longest path."""
    bn = job["bottleneck"]
    rtt = max([f["rtt_ms"] for f in job["flows"]] + [c["rtt_ms"] for c in job["changes"]])
    return bn["buffer_bytes_resolved"] + bdp_bytes(bn["rate_mbps"], rtt)


def span_bytes(job: dict) -> int:
    """The sequence span (snd_una..snd_nxt) a flow's receive window must cover: SPAN_WINDOWS x the
    run's window (check_span says whether TCP can advertise it)."""
    return SPAN_WINDOWS * window_bytes(job)


def check_span(job: dict) -> None:
    """ValueError, naming the run, its window and the limit, when the span is more than TCP can
    advertise (MAX_TCP_WINDOW_BYTES): such a run's flows would be bounded by their receive windows."""
    span = span_bytes(job)
    if span > MAX_TCP_WINDOW_BYTES:
        raise ValueError(f"{job.get('name', 'run')}/{job.get('point', 'base')}: a window of"
                         f" {window_bytes(job) / 1e6:g} MB (buffer plus BDP) needs a receive window of"
                         f" {span / 1e6:g} MB in loss recovery ({SPAN_WINDOWS} windows), more than TCP can"
                         f" advertise ({MAX_TCP_WINDOW_BYTES / 1e6:g} MB); nothing was booted. Make the buffer smaller.")


def earlier_sizing(job: dict) -> bool:
    """Whether the run keeps the earlier socket sizing (EARLIER_SIZING_MAX_WINDOW_BYTES)."""
    return window_bytes(job) <= EARLIER_SIZING_MAX_WINDOW_BYTES


def socket_buffer_bytes(job: dict) -> int:
    """Each socket's buffer maximum (tcp_rmem[2] and tcp_wmem[2]): SOCKET_MEMORY_PER_SPAN x the span,
    or EARLIER_PER_WINDOW x the window for a run of the earlier sizing."""
    if earlier_sizing(job):
        return EARLIER_PER_WINDOW * window_bytes(job)
    return SOCKET_MEMORY_PER_SPAN * span_bytes(job)


def tcp_memory_bytes(job: dict) -> int:
    """The guest's TCP memory budget for the run (tcp_mem, and the guest memory sized from it):
    SOCKETS_PER_BUDGET sockets at their maximum, or one socket's for a run of the earlier sizing."""
    if earlier_sizing(job):
        return socket_buffer_bytes(job)
    return SOCKETS_PER_BUDGET * socket_buffer_bytes(job)
