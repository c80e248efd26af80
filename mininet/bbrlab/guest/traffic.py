"""Bulk TCP flows: the commands of their two ends.

Flow i sends from snd<i> to a receiver on rcv<i>, port 5200 + i, with the
flow's congestion control. The two ends are the project's bulk program (the
default: bulk.c, built by guest_programs.py; one system call per receiver wake-up,
which is what a User-Mode Linux run's host cost is made of) or, when the job
says `traffic_tool: iperf3` (bench/receiver_bench.py compares the two), iperf3
with `-C`. Sender and receiver sockets are sampled
separately (samplers.py); the tools' own reports are kept in raw/ as a
cross-check only. The schedule that starts the flows is experiment/testbed.py's
(the ns-3 backend follows it too).
"""
from ..experiment.testbed import binary, port

TOOLS = ("bulk", "iperf3")
BULK = str(binary("bulk"))     # built on the host (guest_programs.py) before the testbed starts


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

