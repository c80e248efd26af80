"""A veth pair by the one rtnetlink request `ip link add ... type veth peer ...` sends.

Mininet makes each link's veth pair by running, in the first node's shell,

    ip link add name A address MAC_A type veth peer name B address MAC_B netns PID

one guest process per link (each costs a User-Mode Linux host 50-60 ms of CPU
to start). What that process does is send one RTM_NEWLINK request from the
first node's network namespace and read the kernel's answer (strace of
iproute2 6.1, Debian 12):

    ifinfomsg {all zero}
    IFLA_ADDRESS   MAC_A
    IFLA_IFNAME    "A"
    IFLA_LINKINFO  { IFLA_INFO_KIND "veth",
                     IFLA_INFO_DATA { VETH_INFO_PEER ifinfomsg {all zero}
                                                     IFLA_ADDRESS MAC_B
                                                     IFLA_NET_NS_PID PID
                                                     IFLA_IFNAME "B" } }

make_pair() sends the same request from the calling thread's namespace
(netns.in_netns takes it to the first node's), with one difference: the
peer's namespace is named by a file descriptor (IFLA_NET_NS_FD, what `ip ...
netns NAME` sends) opened before the switch, since a process id names the
namespace its process is in *now*, and the driver itself, whose pid names the
root namespace for Mininet's bridges, is in the first node's while it sends.
tests/test_setup_batch.py compares the devices it makes with those `ip` makes.
"""
import socket
import struct

from .rtnl import NLM_F_CREATE, NLM_F_EXCL, attr as _attr, send

RTM_NEWLINK = 16
IFLA_ADDRESS, IFLA_IFNAME, IFLA_LINKINFO, IFLA_NET_NS_FD = 1, 3, 18, 28
IFLA_INFO_KIND, IFLA_INFO_DATA = 1, 2
VETH_INFO_PEER = 1
IFINFOMSG = struct.pack("BxHiII", socket.AF_UNSPEC, 0, 0, 0, 0)


def _mac(text: str) -> bytes:
    parts = text.split(":")
    if len(parts) != 6:
        raise ValueError(f"not a MAC address: {text!r}")
    return bytes(int(p, 16) for p in parts)


def _name(text: str) -> bytes:
    if not 0 < len(text) < 16:
        raise ValueError(f"an interface name has 1-15 characters, got {text!r}")
    return text.encode() + b"\0"


def request(name1: str, name2: str, addr1=None, addr2=None, peer_netns_fd=None) -> bytes:
    """The RTM_NEWLINK message body (after the header) `ip link add` sends."""
    peer = IFINFOMSG
    if addr2 is not None:
        peer += _attr(IFLA_ADDRESS, _mac(addr2))
    if peer_netns_fd is not None:
        peer += _attr(IFLA_NET_NS_FD, struct.pack("I", peer_netns_fd))
    peer += _attr(IFLA_IFNAME, _name(name2))
    info = _attr(IFLA_INFO_KIND, b"veth") + _attr(IFLA_INFO_DATA, _attr(VETH_INFO_PEER, peer))
    body = IFINFOMSG
    if addr1 is not None:
        body += _attr(IFLA_ADDRESS, _mac(addr1))
    return body + _attr(IFLA_IFNAME, _name(name1)) + _attr(IFLA_LINKINFO, info)


def make_pair(name1: str, name2: str, addr1=None, addr2=None, peer_netns_fd=None) -> None:
    """Create veth `name1` here and its peer `name2` (in the namespace `peer_netns_fd` refers
    to, an open /proc/PID/ns/net; None: here); OSError names the pair and the kernel's reason."""
    send(RTM_NEWLINK, NLM_F_EXCL | NLM_F_CREATE, request(name1, name2, addr1, addr2, peer_netns_fd),
         f"veth pair {name1}/{name2}")
