"""What one run asks of a cluster node: CPUs, memory and a time limit.

The pipeline declares these on its `run` rule (Snakefile), so a batch
scheduler (profiles/slurm, profiles/cluster-generic) reserves what a run
needs and kills nothing that would have finished:

- one CPU: the testbed is one process on one core (User-Mode Linux has one
  virtual CPU), and the runner sleeps while the guest runs;
- memory: the guest's RAM (the UML backend's `mem=`, from guest_mem_mb: the
  base plus the socket memory a large bottleneck buffer needs; User-Mode Linux
  maps it from a file in the host's temporary directory, which counts towards the job),
  or for the ns-3 backend the simulator's (ns3_mem_mb: a base plus a part per packet
  of the run's window, measured by bench/ns3_memory.py), plus the host side (runner,
  tidy data, fidelity checks) plus, for runs with header captures, room to parse the
  captures (they are read whole);
- time: the runner's own timeout for the run (default_timeout: set-up
  plus the run, eight times its duration on the virtual clock) plus a margin,
  so that a stuck testbed is stopped by the runner, which records a failed
  run, before the scheduler kills the job.

It also gives what a run is expected to cost (expected_cpu_s, experiment/cost.py), so that the pipeline
starts the longest runs first: with the runs ordered longest first, the last
minutes of a profile do not leave cores idle behind one long run.
"""
import math

from ..experiment import units
from ..experiment.cost import expected_cpu_s  # noqa: F401  the `run` rule's priority

GUEST_MEM_MB = 1024          # the UML guest's memory for runs with ordinary buffers
HOST_SIDE_MB = 512           # runner + tidy + fidelity on an ordinary run
# Header captures: about 50 MB of pcap per 30 s at 100 Mbit/s (docs/tidy-data.md, "Per-flow queue
# share"), parsed into per-packet records: budget ten times the pcap size.
CAPTURE_PCAP_MB_PER_MBIT = 50 / (30 * 100)
CAPTURE_PARSE_FACTOR = 10
MARGIN_S = 300               # between the runner's timeout and the scheduler's limit
# The ns-3 program (backend "ns3") holds every packet it has in flight, queued at the bottleneck
# and in the sockets (the sender's unacknowledged and unsent data, the receiver's out-of-order
# data), as objects of a few hundred bytes to about 2 KB each (ns-3 does not allocate the
# payload); the sockets' 4 W limits (ns3_backend.socket_buffer_bytes) allocate nothing. So its
# memory is a base plus a part per packet of the run's window W (units.window_bytes in packets of
# the MTU; the flows share the buffer, so W bounds their packets together). Measured
# (bench/ns3_memory.py, bench/results/ns3-memory-2026-11-26.md, peak resident set of the
# program): NS3_BASE_MB_MEASURED at 2 BDP, and at most NS3_KB_PER_PACKET_MEASURED per packet
# of W over that base (CUBIC vs BBR, 80 ms, 32 BDP, 50 s with loss recovery at a full buffer:
# 69.6 MB for W = 22 000 packets). The budget takes twice each, as a run's recovery is not
# measured to its end (an episode at a deep buffer costs ns-3 about a host CPU-minute per
# simulated second) and longer runs go through many.
NS3_BASE_MB_MEASURED = 28.8
NS3_KB_PER_PACKET_MEASURED = 1.9
NS3_BASE_MB = 2 * NS3_BASE_MB_MEASURED
NS3_KB_PER_PACKET = 2 * NS3_KB_PER_PACKET_MEASURED


def default_timeout(job: dict) -> float:
    """Generous bound on a run's wall time, to catch a hung testbed (the runner's timeout): set-up
    plus the run. On the virtual clock the wall time is the run's host CPU cost (up to about 6 host
    CPU-s per experiment-s, bench/results/) stretched by whatever else shares the host's cores, and
    no result depends on it: 8 times the duration timed out a 20-s four-flow run at 100 Mbit/s on
    a host with three other testbeds running, so the bound is 30 times."""
    factor = 30.0 if job["clock"] == "virtual" else 1.5
    return 180 + 10 * len(job["flows"]) + factor * job["duration_s"]


def guest_mem_mb(job: dict) -> int:
    """The UML guest's memory (its `mem=`): the base, plus the socket memory of the run's
    window (units.tcp_memory_bytes) beyond what the base holds, in steps of 256 MB."""
    extra = max(0, units.tcp_memory_bytes(job) - units.TCP_MEMORY_IN_BASE_BYTES) / 2**20
    return GUEST_MEM_MB + int(math.ceil(extra / 256) * 256)


def ns3_mem_mb(job: dict) -> float:
    """The ns-3 program's memory for the run, in MB: NS3_BASE_MB plus NS3_KB_PER_PACKET per
    packet (of the run's MTU) of its window (units.window_bytes)."""
    window_pkts = units.window_bytes(job) / job["mtu_bytes"]
    return NS3_BASE_MB + NS3_KB_PER_PACKET * window_pkts / 1024


def pcap_mb(job: dict) -> float:
    """The size of a run's packet captures in MB (0 without captures)."""
    if job["capture"] == "none":
        return 0.0
    return CAPTURE_PCAP_MB_PER_MBIT * job["bottleneck"]["rate_mbps"] * job["duration_s"]


def capture_mem_mb(job: dict) -> float:
    """The memory parsing a run's packet captures takes, in MB (0 without captures)."""
    return CAPTURE_PARSE_FACTOR * pcap_mb(job)


def mem_mb(job: dict, backend: str = "uml") -> int:
    """The memory to ask a cluster node for one run, in MB, a multiple of 256: the host side, the
    UML guest's memory (backend "uml") or the ns-3 program's (backend "ns3", ns3_mem_mb) and,
    with a capture, room to parse the pcap files."""
    testbed = {"uml": guest_mem_mb, "ns3": ns3_mem_mb}.get(backend)
    total = HOST_SIDE_MB + (testbed(job) if testbed else 0)
    total += capture_mem_mb(job)
    return int(math.ceil(total / 256) * 256)


def runtime_min(job: dict, attempt: int = 1) -> int:
    """The scheduler's time limit in minutes (Snakemake's `runtime` resource); longer on a retry."""
    return int(math.ceil((default_timeout(job) + MARGIN_S) / 60)) * max(1, attempt)


def of_run(job: dict, backend: str = "uml") -> dict:
    """Snakemake's resources of one run: {"cpus": 1, "mem_mb": mem_mb(job, backend), "runtime":
    runtime_min(job)}."""
    return {"cpus": 1, "mem_mb": mem_mb(job, backend), "runtime": runtime_min(job)}
