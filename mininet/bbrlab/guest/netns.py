"""Run a call inside another process's network namespace, or a new one, and come back.

The experiment driver and the sampler open sockets (sock_diag, ethtool and
interface ioctls) in the Mininet hosts' namespaces this way instead of starting
a process there: a socket stays in the namespace it was created in, so one
setns() there and one back is enough, and each guest process costs a User-Mode
Linux host 50-60 ms of CPU to start.
"""
import ctypes
import os

CLONE_NEWNET = 0x40000000


def in_netns(pid, make):
    """Call make() inside the network namespace of process `pid` (None: this one)."""
    if pid is None:
        return make()

    def enter(libc):
        target = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        try:
            return libc.setns(target, CLONE_NEWNET)
        finally:
            os.close(target)
    return _away(enter, f"setns into the namespace of pid {pid}", make)


def in_new_netns(make):
    """Call make() inside a new network namespace and come back: a process make() starts stays in
    it (a new process is created in its creator's namespaces) and keeps it alive."""
    return _away(lambda libc: libc.unshare(CLONE_NEWNET), "unshare of the network namespace", make)


def _away(enter, what, make):
    """Leave this thread's network namespace by enter(libc) (0 on success, else OSError naming
    `what`), call make() there and come back to this one."""
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        if enter(libc) != 0:
            raise OSError(ctypes.get_errno(), what)
        try:
            return make()
        finally:
            libc.setns(own, CLONE_NEWNET)
    finally:
        os.close(own)
