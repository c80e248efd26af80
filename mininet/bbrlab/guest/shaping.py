"""Traffic control on the dumbbell: bottleneck rate and buffer, AQM, per-flow
propagation delay, sender pacing qdisc, access links, random loss, receivers
without delayed ACKs, segmentation offloads.

The functions return command lines (lists of argv); driver.py runs them in the
right network namespace. Keeping them pure makes every knob testable without
a testbed.
"""
import math

from ..experiment import units
from ..experiment.testbed import ifb_name

NETEM_LIMIT_PKTS = 100000   # netem's default 1000 packets would drop ACKs at high BDPs


def offloads_off(dev: str) -> list:
    """TSO/GSO/GRO off, so the bottleneck queue limit counts real packets."""
    return [["ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off"]]


def sender_qdisc(dev: str, kind: str) -> list:
    """The commands setting the sender's pacing qdisc on `dev`: fq as its root for kind "fq", nothing
    for any other kind (the interface keeps its default qdisc)."""
    if kind == "fq":
        return [["tc", "qdisc", "replace", "dev", dev, "root", "fq"]]
    return []


ACCESS_QUEUE_PKTS = 1000   # an access link's own queue: a NIC's default txqueuelen


def access_link(dev: str, rate_mbps: float, sender_qdisc_kind: str, mtu_bytes: int = 1500) -> list:
    """The sender's access link: data leaving the sender at `rate_mbps` (tbf with the bottleneck's
    5-ms bucket), the pacing qdisc (fq) under it as on a host whose NIC has that rate; without fq,
    a FIFO of ACCESS_QUEUE_PKTS full-sized frames."""
    frame = units.frame_bytes(mtu_bytes)
    cmds = [["tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "tbf", "rate", _rate(rate_mbps),
             "burst", str(units.burst_bytes(rate_mbps, mtu_bytes)), "limit", str(ACCESS_QUEUE_PKTS * frame)]]
    if sender_qdisc_kind == "fq":
        cmds.append(["tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "fq"])
    return cmds


def netem_loss(dev: str, loss_rate: float, seed=None) -> list:
    """Random loss of `loss_rate` (a fraction) of the packets leaving `dev`, each independently.
    `seed` seeds netem's generator where the kernel and tc have it (Linux 6.8 and later)."""
    cmd = ["tc", "qdisc", "replace", "dev", dev, "root", "handle", "3:", "netem",
           "loss", "random", f"{loss_rate * 100:.8g}%", "limit", str(NETEM_LIMIT_PKTS)]
    if seed is not None:
        cmd += ["seed", str(seed)]
    return [cmd]


def quickack_route(sender_ip: str, dev: str) -> list:
    """A host route from a receiver to its sender with the quickack metric: the receiver's socket
    acknowledges every data segment at once instead of delaying ACKs (tcp_in_quickack_mode)."""
    return [["ip", "route", "add", f"{sender_ip}/32", "dev", dev, "quickack", "1"]]


def netem_delay(dev: str, delay_ms: float, change: bool = False) -> list:
    """The command putting a netem of `delay_ms` (handle 2:, NETEM_LIMIT_PKTS) at dev's root;
    change=True changes an existing one in place (tc qdisc change) instead of replacing it."""
    verb = "change" if change else "replace"
    return [["tc", "qdisc", verb, "dev", dev, "root", "handle", "2:", "netem",
             "delay", f"{delay_ms:g}ms", "limit", str(NETEM_LIMIT_PKTS)]]


def _rate(rate_mbps: float) -> str:
    return f"{int(round(rate_mbps * 1e6))}bit"


def _leaf(dev: str, parent: str, bottleneck: dict) -> list:
    """The queue behind the shaper: byte-limited FIFO (drop-tail) or RED."""
    limit = bottleneck["buffer_bytes_resolved"]
    aqm = bottleneck["aqm"]
    base = ["tc", "qdisc", "add", "dev", dev, "parent", parent, "handle", "10:"]
    if aqm["kind"] == "droptail":
        return [base + ["bfifo", "limit", str(limit)]]
    avpkt = 1000
    # tc-red(8): burst = (2 * min + max) / (3 * avpkt), in packets
    burst = math.ceil((2 * aqm["min_bytes"] + aqm["max_bytes"]) / (3 * avpkt)) + 1
    cmd = base + ["red", "limit", str(max(limit, aqm["max_bytes"] * 2)),
                  "min", str(aqm["min_bytes"]), "max", str(aqm["max_bytes"]),
                  "avpkt", str(avpkt), "burst", str(burst),
                  "probability", f"{aqm['probability']:g}",
                  "bandwidth", _rate(bottleneck["rate_mbps"])]
    if aqm["ecn"]:
        cmd.append("ecn")
    return [cmd]


def bottleneck(dev: str, bottleneck: dict) -> list:
    """Shaper at `rate_mbps` on `dev` with the configured queue behind it."""
    rate = _rate(bottleneck["rate_mbps"])
    burst = str(bottleneck["burst_bytes"])
    if bottleneck["shaper"] == "tbf":
        cmds = [["tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "tbf",
                 "rate", rate, "burst", burst, "limit", str(bottleneck["buffer_bytes_resolved"])]]
        parent = "1:1"
    else:
        cmds = [["tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "1"],
                ["tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb",
                 "rate", rate, "ceil", rate, "burst", burst, "cburst", burst, "quantum", "1514"]]
        parent = "1:1"
    return cmds + _leaf(dev, parent, bottleneck)


def ingress_redirect(port: str, ifb: str) -> list:
    """Send everything arriving on `port` through `ifb`'s egress qdisc and back."""
    return [["ip", "link", "add", ifb, "type", "ifb"],
            ["ip", "link", "set", ifb, "up"],
            ["tc", "qdisc", "add", "dev", port, "handle", "ffff:", "ingress"],
            ["tc", "filter", "add", "dev", port, "parent", "ffff:", "protocol", "all", "u32",
             "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", ifb]]


def delay_device(flow_index: int, rtt_on: str, dumbbell) -> tuple:
    """(node, interface) whose egress qdisc gets flow i's netem delay (the whole RTT).

    `ingress` (default): data packets as they enter sw1 from the sender, through
    an ifb device. The sender keeps its fq pacing qdisc, and netem takes
    ownership of each packet (skb_orphan_partial) as a real NIC's transmit
    completion would: packets queued further down the emulated path no longer
    count against the sender's TCP Small Queues budget. Without that, a veth
    path keeps every packet charged to its socket until the receiver consumes
    it, and TSQ caps each flow's share of the bottleneck queue at about 1 ms of
    its pacing rate (the report's "What the testbed taught us",
    paper/sections/testbed_findings.tex, "Netem on the data path").
    `switch`: sw1's port toward the sender (delays ACKs). `receiver`: the
    receiver's interface (delays ACKs). `data`: sw2's port toward the receiver
    (data, after the bottleneck). `sender`: the sender's own interface (data;
    replaces fq, so TCP paces internally)."""
    if rtt_on == "ingress":
        return dumbbell.net.get("sw1"), ifb_name(flow_index)
    if rtt_on == "switch":
        return dumbbell.net.get("sw1"), dumbbell.sender_side_ports[flow_index]
    if rtt_on == "data":
        return dumbbell.net.get("sw2"), dumbbell.receiver_side_ports[flow_index]
    if rtt_on == "sender":
        sender = dumbbell.senders[flow_index]
        return sender, sender.defaultIntf().name
    receiver = dumbbell.receivers[flow_index]
    return receiver, receiver.defaultIntf().name
