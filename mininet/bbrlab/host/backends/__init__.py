"""Testbed backends: where the guest side (bbrlab.guest) runs.

    uml     boots the User-Mode Linux testbed kernel as an ordinary process
            (default; no root, no KVM, no netem on the host needed)
    native  runs on this host's kernel as root, after checking it can
    ns3     simulates the dumbbell in ns-3 instead (ns3_backend.py)

Each is a subclass of base.Backend (the interface and its contracts); it takes a
prepared run directory (job.json inside) and returns a GuestResult; the host side
(runner.py) does the rest. phases.py times the guest's boot and set-up from its console;
tether.py is not a backend: the script every backend's testbed runs under (base.tethered).
"""
from .base import TETHER, Backend, GuestResult, build_guest_programs, tethered  # noqa: F401
from .errors import BackendError

NAMES = ("uml", "native", "ns3")      # the registered backends; backend_class() knows each


def backend_class(name: str) -> type:
    """The Backend subclass registered under `name` (imported only when asked for: the
    ns-3 and native modules are not needed to run on uml)."""
    if name == "uml":
        from .uml import UmlBackend
        return UmlBackend
    if name == "native":
        from .native import NativeBackend
        return NativeBackend
    if name == "ns3":
        from .ns3_backend import Ns3Backend
        return Ns3Backend
    raise BackendError(f"unknown backend {name!r} (choose {', '.join(NAMES)})")


def get(name: str, **kwargs) -> Backend:
    """An instance of the backend `name`, not yet checked (call its check())."""
    return backend_class(name)(**kwargs)


def is_simulated(name: str) -> bool:
    """Whether the backend `name` simulates the network (Backend.simulated); unknown or
    missing names (a run before backends were recorded) are not simulated."""
    return name in NAMES and backend_class(name).simulated
