"""Where and how the guest captures packet headers at the bottleneck (`capture: bottleneck`).

The two capture points and what the captures are for are in data/capture.py, which reads
them (raw/capture_enq_<i>.pcap, raw/capture_deq.pcap); this module gives the guest the
interface and direction of each point, the tcpdump command that records it and the reading
of tcpdump's closing statistics (raw/capture.json).
"""
import re

from ..experiment.testbed import ifb_name

SNAPLEN = 96                      # Ethernet 14 + IPv4 20 + TCP 20..60 (timestamps: 32)
SENDER_FILTER = "tcp and src net 10.0.1.0/24"
STATS = re.compile(r"(\d+) packets? (captured|received by filter|dropped by kernel)")


def enqueue_point(flow_index: int, rtt_on: str, dumbbell) -> tuple:
    """(interface, direction) whose capture sees flow i's data packets as they reach the
    bottleneck qdisc: sent by its ifb, or received by sw1 from the sender."""
    if rtt_on == "ingress":
        return ifb_name(flow_index), "out"
    return dumbbell.sender_side_ports[flow_index], "in"


def tcpdump_cmd(dev: str, direction: str, out: str) -> list:
    """tcpdump writing headers of the senders' TCP packets seen on `dev` in `direction` (in|out)."""
    return ["tcpdump", "-i", dev, "-Q", direction, "-n", "-s", str(SNAPLEN), "-B", "16384", "--immediate-mode",
            "--time-stamp-precision=nano", "-Z", "root", "-w", out, SENDER_FILTER]


def capture_stats(text: str) -> dict:
    """tcpdump's closing statistics ('N packets captured', ..., 'N packets dropped by kernel')."""
    found = {kind: int(n) for n, kind in STATS.findall(text)}
    return {"captured": found.get("captured"), "received": found.get("received by filter"),
            "dropped_by_kernel": found.get("dropped by kernel")}
