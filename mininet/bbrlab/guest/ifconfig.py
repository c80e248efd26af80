"""What Mininet's `ifconfig DEV ADDR/LEN up` and `ifconfig lo up` do, by the same ioctls.

Mininet configures each host by running net-tools' ifconfig in the host's
shell: `ifconfig <host>-eth0 10.0.1.1/16 up` and `ifconfig lo up`, two guest
processes per host, and each guest process costs a User-Mode Linux host
50-60 ms of CPU to start. ifconfig itself is a handful of ioctls on an AF_INET
socket (strace of net-tools 2.10, Debian 12):

    ifconfig DEV A.B.C.D/LEN up   SIOCSIFADDR (the kernel gives the address its
                                  class's mask for now), SIOCGIFFLAGS and
                                  SIOCSIFFLAGS with IFF_UP|IFF_RUNNING (twice:
                                  once for the address, once for `up`), then
                                  SIOCSIFNETMASK (the kernel moves the prefix
                                  route and the broadcast address to LEN)
    ifconfig lo up                SIOCGIFFLAGS, SIOCSIFFLAGS with IFF_UP|IFF_RUNNING

The functions below make those calls, in that order, in the calling thread's
network namespace (netns.in_netns takes them to a host's), so the interface
ends as ifconfig leaves it: tests/test_setup_batch.py compares the two.
"""
import fcntl
import socket
import struct

SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
SIOCSIFADDR = 0x8916
SIOCSIFNETMASK = 0x891C
IFF_UP = 0x1
IFF_RUNNING = 0x40


def _ifreq_addr(dev: str, addr: str) -> bytes:
    """struct ifreq carrying a struct sockaddr_in."""
    return struct.pack("16sH2s4s8x", dev.encode(), socket.AF_INET, b"\0\0", socket.inet_aton(addr))


def _ioctl(sock, request: int, ifreq: bytes, what: str) -> bytes:
    try:
        return fcntl.ioctl(sock.fileno(), request, ifreq)
    except OSError as err:
        raise OSError(err.errno, f"{what}: {err.strerror}") from None


def _up(sock, dev: str) -> None:
    got = _ioctl(sock, SIOCGIFFLAGS, struct.pack("16sH22x", dev.encode(), 0), f"SIOCGIFFLAGS {dev}")
    flags = struct.unpack_from("H", got, 16)[0]
    _ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH22x", dev.encode(), flags | IFF_UP | IFF_RUNNING),
           f"SIOCSIFFLAGS {dev} up")


def netmask(prefix_len: int) -> str:
    """The dotted IPv4 netmask of a prefix length, "255.255.0.0" for 16; ValueError outside 0-32."""
    if not 0 <= prefix_len <= 32:
        raise ValueError(f"prefix length must be 0-32, got {prefix_len}")
    return socket.inet_ntoa(struct.pack("!I", (0xFFFFFFFF << (32 - prefix_len)) & 0xFFFFFFFF))


def address_up(dev: str, addr: str, prefix_len: int) -> None:
    """`ifconfig DEV ADDR/PREFIX_LEN up`."""
    mask = netmask(prefix_len)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        _ioctl(sock, SIOCSIFADDR, _ifreq_addr(dev, addr), f"SIOCSIFADDR {dev} {addr}")
        _up(sock, dev)
        _up(sock, dev)
        _ioctl(sock, SIOCSIFNETMASK, _ifreq_addr(dev, mask), f"SIOCSIFNETMASK {dev} {mask}")


def up(dev: str) -> None:
    """`ifconfig DEV up`."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        _up(sock, dev)
