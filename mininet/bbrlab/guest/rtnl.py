"""One rtnetlink request and the kernel's acknowledgement of it.

The set-up sends a few requests itself that iproute2 would otherwise send from
a process of its own (veth.py, fq.py, quickack.py): each guest process costs a
User-Mode Linux host 50-60 ms of CPU to start. The request goes out from the calling
thread's network namespace (netns.in_netns takes it elsewhere).
"""
import os
import socket
import struct

NETLINK_ROUTE = 0
NLMSG_ERROR = 2
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
NLM_F_REPLACE, NLM_F_EXCL, NLM_F_CREATE = 0x100, 0x200, 0x400


def attr(kind: int, payload: bytes) -> bytes:
    """One netlink attribute, padded to 4 bytes."""
    data = struct.pack("HH", 4 + len(payload), kind) + payload
    return data + b"\0" * (-len(data) % 4)


def ifindex(dev: str, what: str) -> int:
    """The index of device `dev` in this thread's namespace; OSError "<what>: no such device"."""
    try:
        return socket.if_nametoindex(dev)
    except OSError as e:
        raise OSError(e.errno, f"{what}: no such device") from None


def message(msg_type: int, flags: int, body: bytes, seq: int = 1) -> bytes:
    """The request: a netlink header (port id 0: the kernel's) before `body`."""
    return struct.pack("IHHII", 16 + len(body), msg_type, flags, seq, 0) + body


def send(msg_type: int, flags: int, body: bytes, what: str) -> None:
    """Send one request (NLM_F_REQUEST | NLM_F_ACK added to `flags`) and wait for its
    acknowledgement; OSError naming `what` and the kernel's reason when it refuses."""
    seq = 1
    msg = message(msg_type, flags | NLM_F_REQUEST | NLM_F_ACK, body, seq)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE) as sock:
        sock.bind((0, 0))
        sock.send(msg)
        while True:
            reply = sock.recv(65536)
            _length, kind, _flags, rseq, _pid = struct.unpack_from("IHHII", reply)
            if kind == NLMSG_ERROR and rseq == seq:
                code = -struct.unpack_from("i", reply, 16)[0]
                if code:
                    raise OSError(code, f"{what}: {os.strerror(code)}")
                return
