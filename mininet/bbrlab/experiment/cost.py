"""What a run is expected to cost in host CPU-seconds, from its spec alone.

The pipeline starts the longest runs first by it (the `run` rule's priority, through
host/resources.py), and a spec with too many runs is refused with its cost in the message
(spec.check_run_count). An ordering and an order of magnitude, not a prediction to rely on.
"""

# Host CPU-seconds of a virtual-clock run, fitted by eye to the quick profile's measured runs
# (2026-11-23: 40 s at 20 Mbit/s about 40, 40 s at 100 Mbit/s about 90, 120 s at 100 Mbit/s
# with four flows about 210): boot and set-up, plus per experiment second a base and a part
# that grows with the bottleneck rate.
BOOT_CPU_S = 15
CPU_S_PER_S = 0.5
CPU_S_PER_S_PER_MBIT = 1 / 70


def expected_cpu_s(job: dict) -> float:
    """Rough host CPU-seconds of a run, for ordering runs longest first (the `run` rule's priority)."""
    return BOOT_CPU_S + job["duration_s"] * (CPU_S_PER_S + CPU_S_PER_S_PER_MBIT * job["bottleneck"]["rate_mbps"])
