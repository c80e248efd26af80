"""SO_RCVLOWAT on the iperf3 receivers' data sockets: a measured host-cost saving, not used.

On User-Mode Linux the dominant host cost of a bulk flow is its receiver
waking once per arriving segment: iperf3's server sleeps in select() and
each segment makes the socket readable, so it runs one round of its select()
loop (select, non-blocking reads, clock reads: 5.0 ptrace stops of the host
process carrying it, measured) per 1448-byte segment. With SO_RCVLOWAT the
socket becomes readable (and wakes the reader) only once that many bytes
are queued, so one wake-up drains many segments.

iperf3 has no option for it, so the experiment driver sets it from outside:
it duplicates the server's data socket (pidfd_getfd, Linux 5.6) and calls
setsockopt on the copy, which acts on the same socket. The data socket is
the later of the two established connections the server holds on its port
(the first is iperf3's control connection, which must keep waking on its
1-byte messages and so is left alone).

It is NOT used by any experiment: it changes what the senders see. The
kernel ACKs most segments on arrival, but a read can send an ACK too
(tcp_cleanup_rbuf: a pending ACK or a window update once the application
has consumed data), so reading in 32-KB lumps instead of per segment
changes the ACK stream: in paired 100-Mbit/s two-flow runs
(bench/host_cost_profile.py --lowat, bench/results/host-cost-2026-11-23.md)
the receivers sent 0.514-0.533 ACKs per data segment instead of 0.574-0.581.
It cut the host CPU per experiment-second about fivefold; it stays an
opt-in (job["receiver_lowat_bytes"], set only by that bench) to measure
that. tcp_set_rcvlowat also raises the receive buffer (and clamps the
window) when 2 x lowat exceeds it, which LOWAT_MAX keeps below the
87380-byte default tcp_rmem the sockets start with.
"""
import ctypes
import os
import socket
import threading
import time

SYS_PIDFD_GETFD = 438
LOWAT_MAX = 32768      # 2 x lowat (tcp_adv_win_scale 1) stays below the 87380-byte initial receive buffer


def established_sockets(pid: int, port: int) -> list:
    """[(inode, fd)] of the ESTABLISHED TCP sockets process `pid` holds with local port `port`."""
    inodes = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = open(f"/proc/{pid}/net/{table}").read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if int(f[1].rsplit(":", 1)[1], 16) == port and f[3] == "01":
                inodes.add(int(f[9]))
    held = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and int(target[8:-1]) in inodes:
            held.append((int(target[8:-1]), int(fd)))
    return sorted(held)


def set_lowat(pid: int, fd: int, lowat: int) -> int:
    """setsockopt(SO_RCVLOWAT) on process pid's descriptor fd; returns the value the socket reports."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        copy = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
        if copy < 0:
            raise OSError(ctypes.get_errno(), f"pidfd_getfd of fd {fd} of pid {pid}")
    finally:
        os.close(pidfd)
    sock = socket.socket(fileno=copy)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT, lowat)
        return sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT)
    finally:
        sock.close()


def apply_when_connected(pid: int, port: int, lowat: int, log, timeout_s: float = 20.0) -> threading.Thread:
    """In the background: wait for the server's data connection, then set SO_RCVLOWAT on it."""
    if not 1 <= lowat <= LOWAT_MAX:
        raise ValueError(f"receiver_lowat_bytes must be 1..{LOWAT_MAX}, got {lowat}")

    def body():
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            held = established_sockets(pid, port)
            if len(held) >= 2:
                _inode, fd = held[-1]
                log(f"SO_RCVLOWAT {set_lowat(pid, fd, lowat)} on the data socket of port {port}")
                return
            time.sleep(0.005)
        log(f"SO_RCVLOWAT not set: no data connection on port {port} within {timeout_s:g} s")

    thread = threading.Thread(target=body, daemon=True, name=f"rcvlowat-{port}")
    thread.start()
    return thread
