"""Minimal netlink readers for the samplers: TCP sockets (sock_diag) and
queueing-discipline statistics (rtnetlink).

Reading the kernel's structures directly keeps a 10-Hz sampler cheap inside
the testbed (no `ss`/`tc` process per sample) and gives exact fields:
`tcp_info` as defined in include/uapi/linux/tcp.h and BBR's `tcp_bbr_info`
from include/uapi/linux/inet_diag.h. The decoders take raw bytes so they are
tested on messages captured from the testbed (tests/fixtures/netlink/).
"""
import socket
import struct

from .rtnl import message

NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NETLINK_ROUTE, NETLINK_SOCK_DIAG = 0, 4
SOCK_DIAG_BY_FAMILY = 20
RTM_NEWQDISC, RTM_GETQDISC = 36, 38

INET_DIAG_INFO, INET_DIAG_VEGASINFO, INET_DIAG_CONG, INET_DIAG_BBRINFO = 2, 3, 4, 16
TCA_KIND, TCA_STATS, TCA_STATS2 = 1, 3, 7
TCA_STATS_BASIC, TCA_STATS_QUEUE = 1, 3

TCP_STATES = ["", "established", "syn_sent", "syn_recv", "fin_wait1", "fin_wait2",
              "time_wait", "close", "close_wait", "last_ack", "listen", "closing"]
# Every state but LISTEN and TIME_WAIT: connections that carry data.
STATE_MASK = 0xFFF & ~(1 << 10) & ~(1 << 6)

# struct tcp_info, Linux 6.1, in order: (name, struct code). The first eight
# one-byte fields include two bit-field bytes that are split after unpacking.
TCP_INFO_FIELDS = [
    ("state", "B"), ("ca_state", "B"), ("retransmits", "B"), ("probes", "B"),
    ("backoff", "B"), ("options", "B"), ("wscale", "B"), ("flags", "B"),
    ("rto", "I"), ("ato", "I"), ("snd_mss", "I"), ("rcv_mss", "I"),
    ("unacked", "I"), ("sacked", "I"), ("lost", "I"), ("retrans", "I"), ("fackets", "I"),
    ("last_data_sent", "I"), ("last_ack_sent", "I"), ("last_data_recv", "I"), ("last_ack_recv", "I"),
    ("pmtu", "I"), ("rcv_ssthresh", "I"), ("rtt", "I"), ("rttvar", "I"),
    ("snd_ssthresh", "I"), ("snd_cwnd", "I"), ("advmss", "I"), ("reordering", "I"),
    ("rcv_rtt", "I"), ("rcv_space", "I"), ("total_retrans", "I"),
    ("pacing_rate", "Q"), ("max_pacing_rate", "Q"), ("bytes_acked", "Q"), ("bytes_received", "Q"),
    ("segs_out", "I"), ("segs_in", "I"), ("notsent_bytes", "I"), ("min_rtt", "I"),
    ("data_segs_in", "I"), ("data_segs_out", "I"), ("delivery_rate", "Q"),
    ("busy_time", "Q"), ("rwnd_limited", "Q"), ("sndbuf_limited", "Q"),
    ("delivered", "I"), ("delivered_ce", "I"), ("bytes_sent", "Q"), ("bytes_retrans", "Q"),
    ("dsack_dups", "I"), ("reord_seen", "I"), ("rcv_ooopack", "I"), ("snd_wnd", "I"),
]


def iter_messages(data: bytes):
    """Yield (type, payload) of each netlink message in a receive buffer."""
    offset = 0
    while offset + 16 <= len(data):
        length, msg_type, _flags, _seq, _pid = struct.unpack_from("=LHHLL", data, offset)
        if length < 16:
            break
        yield msg_type, data[offset + 16: offset + length]
        offset += (length + 3) & ~3


def iter_attrs(data: bytes, offset: int = 0):
    """Yield (type, payload) of each rtattr starting at `offset`."""
    while offset + 4 <= len(data):
        length, attr_type = struct.unpack_from("=HH", data, offset)
        if length < 4:
            break
        yield attr_type & 0x3FFF, data[offset + 4: offset + length]
        offset += (length + 3) & ~3


# tcp_info's first k fields as one struct, for every k, compiled once: the sampler decodes every
# socket of every sample, and one unpack is several times cheaper than one per field.
_TCP_INFO_NAMES = [name for name, _code in TCP_INFO_FIELDS]
_TCP_INFO_PREFIXES = [struct.Struct("=" + "".join(code for _n, code in TCP_INFO_FIELDS[:k]))
                      for k in range(len(TCP_INFO_FIELDS) + 1)]


def decode_tcp_info(data: bytes) -> dict:
    """Decode as many tcp_info fields as the kernel sent."""
    count = len(TCP_INFO_FIELDS)
    while _TCP_INFO_PREFIXES[count].size > len(data):
        count -= 1
    out = dict(zip(_TCP_INFO_NAMES, _TCP_INFO_PREFIXES[count].unpack_from(data)))
    if "wscale" in out:
        wscale = out.pop("wscale")
        out["snd_wscale"], out["rcv_wscale"] = wscale & 0xF, wscale >> 4
    if "flags" in out:
        out["delivery_rate_app_limited"] = out.pop("flags") & 0x1
    return out


def decode_bbr_info(data: bytes) -> dict:
    """struct tcp_bbr_info (INET_DIAG_BBRINFO) as {bw_bytes_per_s (the 64-bit bandwidth as reported,
    flag bits included), min_rtt_us, pacing_gain, cwnd_gain (gains as factors, 256 = 1.0)}."""
    bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain = struct.unpack_from("=5I", data)
    return {"bw_bytes_per_s": (bw_hi << 32) | bw_lo, "min_rtt_us": min_rtt,
            "pacing_gain": pacing_gain / 256.0, "cwnd_gain": cwnd_gain / 256.0}


def decode_inet_diag(payload: bytes) -> dict:
    """One SOCK_DIAG_BY_FAMILY reply (struct inet_diag_msg + attributes)."""
    family, state, _timer, _retrans = struct.unpack_from("=BBBB", payload, 0)
    sport, dport = struct.unpack_from("!HH", payload, 4)
    if family == socket.AF_INET:
        src = socket.inet_ntop(family, payload[8:12])
        dst = socket.inet_ntop(family, payload[24:28])
    else:  # IPv6; IPv4-mapped addresses (dual-stack listeners such as iperf3's) read as IPv4
        src = socket.inet_ntop(family, payload[8:24]).removeprefix("::ffff:")
        dst = socket.inet_ntop(family, payload[24:40]).removeprefix("::ffff:")
    sock = {"src": src, "sport": sport, "dst": dst, "dport": dport,
            "state": TCP_STATES[state] if state < len(TCP_STATES) else str(state)}
    for attr_type, value in iter_attrs(payload, 72):
        if attr_type == INET_DIAG_INFO:
            sock["tcp_info"] = decode_tcp_info(value)
        elif attr_type == INET_DIAG_CONG:
            sock["cc"] = value.split(b"\0", 1)[0].decode()
        elif attr_type == INET_DIAG_BBRINFO:
            sock["bbr"] = decode_bbr_info(value)
    return sock


def decode_qdisc(payload: bytes) -> dict:
    """One RTM_NEWQDISC message (struct tcmsg + attributes)."""
    _family, ifindex, handle, parent = struct.unpack_from("=B3xiII", payload, 0)
    qd = {"ifindex": ifindex, "handle": f"{handle >> 16:x}:{handle & 0xFFFF:x}",
          "parent": "root" if parent == 0xFFFFFFFF else f"{parent >> 16:x}:{parent & 0xFFFF:x}"}
    for attr_type, value in iter_attrs(payload, 20):
        if attr_type == TCA_KIND:
            qd["kind"] = value.split(b"\0", 1)[0].decode()
        elif attr_type == TCA_STATS2:
            for sub_type, sub in iter_attrs(value):
                if sub_type == TCA_STATS_BASIC:
                    qd["bytes"], qd["packets"] = struct.unpack_from("=QI", sub)
                elif sub_type == TCA_STATS_QUEUE:
                    (qd["qlen"], qd["backlog"], qd["drops"], qd["requeues"],
                     qd["overlimits"]) = struct.unpack_from("=5I", sub)
    return qd


_RECV_BUFFER = bytearray(1 << 20)


def _dump(protocol: int, request: bytes, sock=None) -> list:
    """Send a dump request; return the raw reply buffers (for decoding or capture)."""
    own = sock is None
    sock = sock or socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, protocol)
    try:
        sock.send(request)
        chunks = []
        view = memoryview(_RECV_BUFFER)
        while True:
            # into one buffer allocated once: a fresh 1-MiB bytes per call costs the sampler an
            # mmap, a munmap and page faults each time, and in the UML testbed each is a ptrace stop
            data = bytes(view[:sock.recv_into(view)])
            chunks.append(data)
            types = [t for t, _ in iter_messages(data)]
            if NLMSG_ERROR in types:
                for t, payload in iter_messages(data):
                    if t == NLMSG_ERROR:
                        (err,) = struct.unpack_from("=i", payload)
                        if err:
                            raise OSError(-err, f"netlink dump failed: {err}")
            if NLMSG_DONE in types or not data:
                return chunks
    finally:
        if own:
            sock.close()


def tcp_dump_request(family=socket.AF_INET, seq=1) -> bytes:
    """The netlink message asking sock_diag for every TCP socket of `family` in STATE_MASK's states,
    with tcp_info, the congestion control's info and its name."""
    ext = (1 << (INET_DIAG_INFO - 1)) | (1 << (INET_DIAG_VEGASINFO - 1)) | (1 << (INET_DIAG_CONG - 1))
    req = struct.pack("=BBBxI", family, socket.IPPROTO_TCP, ext, STATE_MASK) + bytes(48)
    return message(SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, req, seq)


def qdisc_dump_request(seq=1) -> bytes:
    """The rtnetlink message asking for every qdisc of the namespace (RTM_GETQDISC dump)."""
    return message(RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, struct.pack("=B3xiIII", 0, 0, 0, 0, 0), seq)


def decode_tcp_dump(chunks) -> list:
    """The sockets (decode_inet_diag) of a sock_diag dump's reply chunks; other messages are skipped."""
    return [decode_inet_diag(p) for c in chunks for t, p in iter_messages(c) if t == SOCK_DIAG_BY_FAMILY]


def decode_qdisc_dump(chunks, ifindex=None) -> list:
    """The qdiscs (decode_qdisc) of an RTM_GETQDISC dump's reply chunks, only device `ifindex`'s when
    given (the others are not decoded); other messages are skipped."""
    return [decode_qdisc(p) for c in chunks for t, p in iter_messages(c)
            if t == RTM_NEWQDISC and (ifindex is None or struct.unpack_from("=i", p, 4)[0] == ifindex)]


class TcpSockets:
    """Reusable sock_diag reader of the current network namespace (IPv4 and IPv6 sockets)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
        self.seq = 0

    def raw(self) -> list:
        """One dump of the namespace's IPv4 then IPv6 TCP sockets: the raw reply chunks (bytes); OSError
        when the kernel answers with an error."""
        chunks = []
        for family in (socket.AF_INET, socket.AF_INET6):
            self.seq += 1
            chunks += _dump(NETLINK_SOCK_DIAG, tcp_dump_request(family, seq=self.seq), self.sock)
        return chunks

    def read(self) -> list:
        """One dump, decoded: a dict per socket (decode_inet_diag)."""
        return decode_tcp_dump(self.raw())


class Qdiscs:
    """Reusable rtnetlink reader of qdisc statistics, optionally one device."""

    def __init__(self, ifindex=None):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
        self.ifindex = ifindex
        self.seq = 0

    def raw(self) -> list:
        """One dump of the namespace's qdiscs: the raw reply chunks (bytes), every device's."""
        self.seq += 1
        return _dump(NETLINK_ROUTE, qdisc_dump_request(seq=self.seq), self.sock)

    def read(self) -> list:
        """One dump, decoded (decode_qdisc), keeping only the device given at construction (all without)."""
        return decode_qdisc_dump(self.raw(), self.ifindex)
