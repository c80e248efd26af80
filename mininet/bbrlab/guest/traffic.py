"""Bulk TCP flows and the schedule that starts them.

Flow i sends from snd<i> to a receiver on rcv<i>, port 5200 + i, with the
flow's congestion control. The two ends are the project's bulk program (the
default: bulk.c, built by guest_programs.py; one system call per receiver wake-up,
which is what a User-Mode Linux run's host cost is made of) or, when the job
says `traffic_tool: iperf3` (bench/receiver_bench.py compares the two), iperf3
with `-C`. Sender and receiver sockets are sampled
separately (samplers.py); the tools' own reports are kept in raw/ as a
cross-check only.
"""
from ..host import guest_programs

BASE_PORT = 5200
TOOLS = ("bulk", "iperf3")
BULK = str(guest_programs.binary("bulk"))     # built on the host before the testbed starts


def port(flow_number: int) -> int:
    """The port flow `flow_number` (1-based) receives on: BASE_PORT + flow_number."""
    return BASE_PORT + flow_number


def tool(job: dict) -> str:
    """The job's traffic tool ("bulk" unless traffic_tool says otherwise); ValueError for one not in
    TOOLS."""
    name = job.get("traffic_tool", "bulk")
    if name not in TOOLS:
        raise ValueError(f"traffic_tool must be one of {', '.join(TOOLS)}, got {name!r}")
    return name


def server_cmd(flow_number: int, name: str = "bulk") -> list:
    """The receiver's argv for flow `flow_number` with tool `name`: bulk receives on the flow's port;
    iperf3 serves one test there (-1) and reports JSON."""
    if name == "iperf3":
        return ["iperf3", "-s", "-1", "-p", str(port(flow_number)), "-J"]
    return [BULK, "receive", str(port(flow_number))]


def client_cmd(flow: dict, server_ip: str, name: str = "bulk") -> list:
    """The sender's argv for `flow` toward server_ip with tool `name`: sends for stop_s - start_s
    seconds to the flow's port with the flow's congestion control (iperf3 with JSON reports each
    second)."""
    seconds = flow["stop_s"] - flow["start_s"]
    if name == "iperf3":
        return ["iperf3", "-c", server_ip, "-p", str(port(flow["flow"])), "-t", f"{seconds:g}",
                "-C", flow["cc"], "-J", "-i", "1"]
    return [BULK, "send", server_ip, str(port(flow["flow"])), f"{seconds:g}", flow["cc"]]


def schedule(job: dict) -> list:
    """Timed events (seconds after time zero), in order: flow starts and path changes."""
    events = [(f["start_s"], 0, "start", f["flow"], None) for f in job["flows"]]
    events += [(c["at_s"], 1, "rtt", c["flow"], c["rtt_ms"]) for c in job["changes"]]
    return [{"at_s": at, "kind": kind, "flow": flow, "value": value}
            for at, _prio, kind, flow, value in sorted(events, key=lambda e: (e[0], e[1], e[3]))]
