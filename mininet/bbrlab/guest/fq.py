"""The sender's pacing qdisc by the one rtnetlink request `tc qdisc replace dev D root fq` sends.

Every sender gets fq as its root qdisc (`sender_qdisc: fq`, shaping.sender_qdisc): in
the sender's namespace that was a `tc` process started through `mnexec`, two program
starts per sender (each guest process costs a User-Mode Linux host 50-60 ms of CPU).
What `tc` does is look the device's index up and send one RTM_NEWQDISC request (strace
of iproute2 6.1, Debian 12):

    nlmsghdr  flags NLM_F_REQUEST | NLM_F_ACK | NLM_F_REPLACE | NLM_F_CREATE
    tcmsg     {family AF_UNSPEC, ifindex D, handle 0, parent TC_H_ROOT, info 0}
    TCA_KIND     "fq"
    TCA_OPTIONS  (empty: tc's fq parser opens the nest and sets nothing in it)

replace_root() sends the same request from the calling thread's namespace (netns.in_netns
takes it to the sender's). The handle 0 lets the kernel number the qdisc as it numbers
tc's; fq keeps its defaults as with tc (fq_init passes the empty options to fq_change,
which changes nothing and sizes the flow table as without them).
"""
import socket
import struct

from .rtnl import NLM_F_CREATE, NLM_F_REPLACE, attr, ifindex, send

RTM_NEWQDISC = 36
TC_H_ROOT = 0xFFFFFFFF
TCA_KIND, TCA_OPTIONS = 1, 2


def request(index: int) -> bytes:
    """The RTM_NEWQDISC message body (after the header) `tc qdisc replace dev D root fq` sends."""
    tcmsg = struct.pack("BxxxiIII", socket.AF_UNSPEC, index, 0, TC_H_ROOT, 0)
    return tcmsg + attr(TCA_KIND, b"fq\0") + attr(TCA_OPTIONS, b"")


def replace_root(dev: str) -> None:
    """Make fq, with its defaults, the root qdisc of `dev` (in this thread's namespace);
    OSError names the device and the kernel's reason (no such device, no fq in the kernel)."""
    what = f"fq on {dev}"
    send(RTM_NEWQDISC, NLM_F_REPLACE | NLM_F_CREATE, request(ifindex(dev, what)), what)
