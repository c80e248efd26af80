"""A receiver's quickack host route by the one rtnetlink request `ip route add` sends.

With `delayed_ack: false` each receiver gets a host route to its sender with the
quickack metric (shaping.quickack_route): the receiver's socket then acknowledges every
data segment at once. In the receiver's namespace that was an `ip` process started
through `mnexec`, two program starts per receiver (each guest process costs a User-Mode
Linux host 50-60 ms of CPU). What `ip route add A/32 dev D quickack 1` does is look the
device's index up and send one RTM_NEWROUTE request (strace of iproute2 6.1, Debian 12):

    nlmsghdr  flags NLM_F_REQUEST | NLM_F_ACK | NLM_F_EXCL | NLM_F_CREATE
    rtmsg     {family AF_INET, dst_len 32, src_len 0, tos 0, table RT_TABLE_MAIN,
               protocol RTPROT_BOOT, scope RT_SCOPE_LINK, type RTN_UNICAST, flags 0}
    RTA_DST      A
    RTA_OIF      index of D
    RTA_METRICS  { RTAX_QUICKACK 1 }

add_route() sends the same request from the calling thread's namespace (netns.in_netns
takes it to the receiver's).
"""
import socket
import struct

from .rtnl import NLM_F_CREATE, NLM_F_EXCL, attr, ifindex, send

RTM_NEWROUTE = 24
RT_TABLE_MAIN, RTPROT_BOOT, RT_SCOPE_LINK, RTN_UNICAST = 254, 3, 253, 1
RTA_DST, RTA_OIF, RTA_METRICS = 1, 4, 8
RTAX_QUICKACK = 15


def request(address: str, index: int) -> bytes:
    """The RTM_NEWROUTE message body (after the header) `ip route add ADDRESS/32 dev D quickack 1`
    sends, D having index `index`."""
    rtmsg = struct.pack("BBBBBBBBI", socket.AF_INET, 32, 0, 0, RT_TABLE_MAIN, RTPROT_BOOT, RT_SCOPE_LINK,
                        RTN_UNICAST, 0)
    return (rtmsg + attr(RTA_DST, socket.inet_aton(address)) + attr(RTA_OIF, struct.pack("I", index))
            + attr(RTA_METRICS, attr(RTAX_QUICKACK, struct.pack("I", 1))))


def add_route(address: str, dev: str) -> None:
    """Add the host route to `address` through `dev` with the quickack metric (in this thread's
    namespace); OSError names the route and the kernel's reason."""
    what = f"quickack route to {address} via {dev}"
    send(RTM_NEWROUTE, NLM_F_EXCL | NLM_F_CREATE, request(address, ifindex(dev, what)), what)
