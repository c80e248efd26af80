"""Facts of the testbed that the host, the guest and the data stages share.

The guest builds the testbed by them, the host starts and watches it by them, data/ reads
what it wrote by them; keeping them here, below all three, lets each of those packages
know them without importing another (tests/test_imports.py holds the packages to that).
Standard library only, and cheap to import: the guest imports this module.

    port(flow)          the port flow `flow` (1-based) receives on: BASE_PORT + flow
    ifb_name(i)         flow i's (0-based) ifb device, the delay line of `rtt_on: ingress`
    schedule(job)       the run's timed events: flow starts and path changes
    BOOTED, SET_UP      the console lines by which the host times the guest's phases
    binary(name)        where the project's guest program `name` is (host/guest_programs.py
                        builds it there)
    is_simulated(name)  whether backend `name` simulates the network (no guest, no guest CPU)
"""
import pathlib

BASE_PORT = 5200

BOOTED = "bbrlab-guest: booted"                 # printed by guest_init.c once the kernel has booted
SET_UP = "measuring base RTT of each path"      # logged by the guest driver once the network is set up

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]
BIN_DIR = PACKAGE_DIR.parents[1] / "build" / "bin"
GUEST_PROGRAMS = ("bulk", "guest_init")         # bulk.c: the flows' two ends; guest_init.c: PID 1 of UML

# The backends (host/backends/) whose Backend.simulated is True; tests/test_backends.py checks
# that this agrees with the backend classes.
SIMULATED_BACKENDS = ("ns3",)


def port(flow_number: int) -> int:
    """The port flow `flow_number` (1-based) receives on: BASE_PORT + flow_number."""
    return BASE_PORT + flow_number


def ifb_name(flow_index: int) -> str:
    """The name of flow i's (0-based) ifb device, ifbflow<i + 1>, clear of the kernel's own ifb0/ifb1."""
    return f"ifbflow{flow_index + 1}"   # the kernel creates ifb0 and ifb1 itself


def schedule(job: dict) -> list:
    """Timed events (seconds after time zero), in order: flow starts and path changes."""
    events = [(f["start_s"], 0, "start", f["flow"], None) for f in job["flows"]]
    events += [(c["at_s"], 1, "rtt", c["flow"], c["rtt_ms"]) for c in job["changes"]]
    return [{"at_s": at, "kind": kind, "flow": flow, "value": value}
            for at, _prio, kind, flow, value in sorted(events, key=lambda e: (e[0], e[1], e[3]))]


def binary(name: str) -> pathlib.Path:
    """Where guest program `name` is (built or not); KeyError for a name not in GUEST_PROGRAMS."""
    if name not in GUEST_PROGRAMS:
        raise KeyError(f"no guest program {name!r} (have {', '.join(GUEST_PROGRAMS)})")
    return BIN_DIR / name


def is_simulated(name) -> bool:
    """Whether the backend `name` simulates the network; unknown or missing names (a run before
    backends were recorded) are not simulated."""
    return name in SIMULATED_BACKENDS
