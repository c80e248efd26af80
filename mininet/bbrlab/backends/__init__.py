"""Testbed backends: where the guest side (bbrlab.guest) runs.

    uml     boots the User-Mode Linux testbed kernel as an ordinary process
            (default; no root, no KVM, no netem on the host needed)
    native  runs on this host's kernel as root, after checking it can
    ns3     simulates the dumbbell in ns-3 instead (ns3_backend.py)

Each takes a prepared run directory (job.json inside) and returns a
GuestResult; the host side (runner.py) does the rest.
"""
import os
import pathlib
import subprocess
import sys
import time
from dataclasses import dataclass

TETHER = pathlib.Path(__file__).with_name("tether.py")


class BackendError(RuntimeError):
    """The backend cannot run here; the message says what is missing and how to fix it."""


@dataclass
class GuestResult:
    exit_status: int           # guest experiment's exit status, -1 if it never reported one
    timed_out: bool
    wall_s: float
    cpu_s: float               # host CPU seconds (user + system) of the testbed
    console: str               # path of the console log


def tethered(cmd, out, timeout_s: float, cwd=None, rmtree=None, after=None, env=None):
    """Run `cmd` under a tether (tether.py), output to the open file `out`, at most `timeout_s`.

    The testbed dies with this process however it ends (SIGKILL too: the tether sees
    the pipe close), and on the timeout. Returns (exit code, rusage of the tether and
    everything it reaped, timed_out)."""
    r, w = os.pipe()
    args = [sys.executable, "-S", str(TETHER), str(r)]
    if rmtree:
        args += ["--rmtree", str(rmtree)]
    if after:
        args += ["--after", after]
    try:
        proc = subprocess.Popen(args + ["--", *map(str, cmd)], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, pass_fds=(r,), cwd=cwd, env=env)
    finally:
        os.close(r)
    timed_out = False
    try:
        deadline = time.time() + timeout_s
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.time() > deadline:
                timed_out = True
                os.write(w, b"k")
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.2)
    except BaseException:
        # Ctrl-C, SIGTERM turned into SystemExit, ...: the closed pipe tells the tether to kill.
        os.close(w)
        w = None
        try:
            proc.wait(timeout=30)
        except BaseException:  # noqa: BLE001 - a second interrupt: the tether still sees the pipe closed
            pass
        raise
    finally:
        if w is not None:
            os.close(w)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage, timed_out


def build_guest_programs(*names) -> None:
    """The project's C programs the testbed runs (guest_programs.py: the flows' two ends, the
    UML guest's init), compiled on the host unless up to date: the uml and native backends'
    check(), before any testbed starts."""
    from .. import guest_programs
    try:
        for name in names:
            guest_programs.build(name)
    except guest_programs.ProgramBuildError as err:
        raise BackendError(str(err)) from None


def get(name: str, **kwargs):
    if name == "uml":
        from .uml import UmlBackend
        return UmlBackend(**kwargs)
    if name == "native":
        from .native import NativeBackend
        return NativeBackend(**kwargs)
    if name == "ns3":
        from .ns3_backend import Ns3Backend
        return Ns3Backend(**kwargs)
    raise BackendError(f"unknown backend {name!r} (choose uml, native or ns3)")
