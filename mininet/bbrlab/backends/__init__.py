"""Testbed backends: where the guest side (bbrlab.guest) runs.

    uml     boots the User-Mode Linux testbed kernel as an ordinary process
            (default; no root, no KVM, no netem on the host needed)
    native  runs on this host's kernel as root, after checking it can

Both take a prepared run directory (job.json inside) and return a
GuestResult; the host side (runner.py) does the rest.
"""
from dataclasses import dataclass


class BackendError(RuntimeError):
    """The backend cannot run here; the message says what is missing and how to fix it."""


@dataclass
class GuestResult:
    exit_status: int           # guest experiment's exit status, -1 if it never reported one
    timed_out: bool
    wall_s: float
    cpu_s: float               # host CPU seconds (user + system) of the testbed
    console: str               # path of the console log


def get(name: str, **kwargs):
    if name == "uml":
        from .uml import UmlBackend
        return UmlBackend(**kwargs)
    if name == "native":
        from .native import NativeBackend
        return NativeBackend(**kwargs)
    raise BackendError(f"unknown backend {name!r} (choose uml or native)")
