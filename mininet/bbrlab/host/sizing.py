"""Every run sized before anything boots: what it asks of this machine against what it has.

run_spec_file calls check() for the runs it is about to boot (after the backend's own checks,
before the first boot). For each run it estimates

- memory: the testbed's (the UML guest's `mem=` or the ns-3 program's, resources.py), the host
  side (runner, tidy, fidelity) and, with header captures, parsing the captures, which are read
  whole: resources.mem_mb's parts, against MemAvailable now (the runs go one after the other);
- disk: the raw files it writes (they stay in the run's raw/): the samplers' JSON lines (measured
  2026-11-28 on two runs: about 0.7 to 1.2 kB per sample per socket file, two files per flow, and
  0.4 kB per queue sample; budgeted at RAW_SOCKET_KB_PER_SAMPLE and RAW_QUEUE_KB_PER_SAMPLE) plus
  the packet captures (resources.pcap_mb), against the free space of the results tree, all the
  runs together;
- wall time: resources.expected_cpu_s (an estimate) and the runner's timeout (default_timeout,
  the bound), said in the refusal so that its cost is plain.

A run that does not fit is refused with its numbers (SizeError, a BackendError: exit status 3)
and nothing is booted.
"""
import pathlib
import shutil

from . import resources
from .backends import BackendError

RAW_SOCKET_KB_PER_SAMPLE = 2.0
RAW_QUEUE_KB_PER_SAMPLE = 0.5
RAW_FIXED_MB = 1.0          # console log, timeline, iperf/ping output, CPU samples


class SizeError(BackendError):
    """A run does not fit this machine; the message gives its numbers and the machine's."""


def raw_disk_mb(job: dict) -> float:
    """The raw files' size of a run, in MB (module doc)."""
    samples = job["duration_s"] / job["sample_interval_s"]
    queue_samples = job["duration_s"] / job["queue_sample_interval_s"]
    kb = samples * 2 * len(job["flows"]) * RAW_SOCKET_KB_PER_SAMPLE + queue_samples * RAW_QUEUE_KB_PER_SAMPLE
    return RAW_FIXED_MB + kb / 1024 + resources.pcap_mb(job)


def size(job: dict, backend: str = "uml") -> dict:
    """What one run asks: {"testbed_mem_mb", "capture_mem_mb", "host_mem_mb", "mem_mb" (their sum),
    "disk_mb", "wall_s" (estimate), "timeout_s" (the runner's bound)}."""
    testbed = {"uml": resources.guest_mem_mb, "ns3": resources.ns3_mem_mb}.get(backend)
    parts = {"testbed_mem_mb": float(testbed(job)) if testbed else 0.0,
             "capture_mem_mb": resources.capture_mem_mb(job), "host_mem_mb": float(resources.HOST_SIDE_MB)}
    return dict(parts, mem_mb=sum(parts.values()), disk_mb=raw_disk_mb(job),
                wall_s=resources.expected_cpu_s(job), timeout_s=resources.default_timeout(job))


def mem_available_mb(meminfo="/proc/meminfo"):
    """MemAvailable in MB, None when the file does not say."""
    try:
        for line in pathlib.Path(meminfo).read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def free_disk_mb(path) -> float:
    """Free space, in MB, of the file system holding `path` (or its nearest existing parent)."""
    path = pathlib.Path(path).resolve()
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free / 2**20


def check(jobs, out_root, backend: str = "uml", meminfo="/proc/meminfo", free_mb=None) -> list:
    """size() of every run, SizeError naming the first run that does not fit (memory) or the
    runs' raw files not fitting the results tree's free space together; returns the sizes."""
    sizes = [size(job, backend) for job in jobs]
    available = mem_available_mb(meminfo)
    for job, need in zip(jobs, sizes):
        if available is not None and need["mem_mb"] > available:
            raise SizeError(
                f"{job['name']}/{job['point']}/rep{job['repetition']}: needs {need['mem_mb']:,.0f} MB of memory "
                f"(testbed {need['testbed_mem_mb']:,.0f}, parsing its packet captures {need['capture_mem_mb']:,.0f}, "
                f"host side {need['host_mem_mb']:,.0f}), but this host has {available:,} MB available "
                f"(MemAvailable in {meminfo}); its raw files take about {need['disk_mb']:,.0f} MB and it runs "
                f"about {need['wall_s']:,.0f} s (timeout {need['timeout_s']:,.0f} s). Nothing was booted.")
    disk = sum(s["disk_mb"] for s in sizes)
    free = free_disk_mb(out_root) if free_mb is None else free_mb
    if disk > free:
        largest = max(range(len(jobs)), key=lambda k: sizes[k]["disk_mb"])
        job = jobs[largest]
        raise SizeError(
            f"{len(jobs)} run(s) write about {disk:,.0f} MB of raw files (the largest, {job['name']}/{job['point']}"
            f"/rep{job['repetition']}, {sizes[largest]['disk_mb']:,.0f} MB), but {out_root} has {free:,.0f} MB free."
            " Nothing was booted.")
    return sizes
