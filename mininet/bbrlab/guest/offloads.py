"""Segmentation offloads (TSO, GSO, GRO) off and read back, without an `ethtool` process.

`ethtool -K DEV tso off gso off gro off` (shaping.offloads_off, the command the
run records) does what the kernel's per-feature ethtool ioctls do: ETHTOOL_STSO
clears every TSO feature (NETIF_F_ALL_TSO), ETHTOOL_SGSO NETIF_F_GSO and
ETHTOOL_SGRO NETIF_F_GRO (net/ethtool/ioctl.c, ethtool_set_one_feature). In
Linux 6.1, the testbed kernel, NETIF_F_ALL_TSO is the four features ethtool's
`tso` names (tx-tcp-, tx-tcp-ecn-, tx-tcp-mangleid-, tx-tcp6-segmentation), so
the two are the same; later kernels add TSO features the old ioctl leaves alone
(6.18's tx-tcp-accecn-segmentation), so the native backend keeps running
ethtool. Doing it
through SIOCETHTOOL from the experiment driver, inside the interface's network
namespace, saves one guest process per interface (ten in a two-flow dumbbell),
and each guest process costs the User-Mode Linux host 50-60 ms of CPU to start
(bench/results/host-cost-2026-11-23.md). The ETHTOOL_G* ioctls read the
features back, so every run records what its interfaces ended up with.
"""
import ctypes
import fcntl
import socket
import struct

SIOCETHTOOL = 0x8946
FEATURES = {   # name: (get, set) ethtool commands (include/uapi/linux/ethtool.h)
    "tso": (0x0000001E, 0x0000001F),
    "gso": (0x00000023, 0x00000024),
    "gro": (0x0000002B, 0x0000002C),
}


def _call(sock, dev: str, cmd: int, data: int = 0) -> int:
    """One ETHTOOL_* ioctl carrying a struct ethtool_value; returns its data field."""
    value = ctypes.create_string_buffer(struct.pack("II", cmd, data), 8)
    ifreq = struct.pack("16sP16x", dev.encode(), ctypes.addressof(value))
    try:
        fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)
    except OSError as err:
        raise OSError(err.errno, f"ethtool ioctl {cmd:#x} on {dev}: {err.strerror}") from None
    return struct.unpack("II", value.raw)[1]


def read(dev: str) -> dict:
    """{feature: on} for TSO, GSO and GRO of `dev` in the calling thread's namespace."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        return {name: bool(_call(sock, dev, get)) for name, (get, _set) in FEATURES.items()}


def turn_off(dev: str) -> dict:
    """TSO, GSO and GRO off on `dev`; returns what the device reports afterwards."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for _name, (_get, set_) in FEATURES.items():
            _call(sock, dev, set_, 0)
        return {name: bool(_call(sock, dev, get)) for name, (get, _set) in FEATURES.items()}
