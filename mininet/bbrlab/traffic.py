"""Bulk TCP flows with iperf3 and the schedule that starts them.

Flow i sends from snd<i> to an iperf3 server on rcv<i>, port 5200 + i, with
the flow's congestion control (`iperf3 -C`). Sender and receiver sockets are
sampled separately (samplers.py); iperf3's own JSON report is kept in raw/
as a cross-check only.
"""
BASE_PORT = 5200


def port(flow_number: int) -> int:
    return BASE_PORT + flow_number


def server_cmd(flow_number: int) -> list:
    return ["iperf3", "-s", "-1", "-p", str(port(flow_number)), "-J"]


def client_cmd(flow: dict, server_ip: str) -> list:
    seconds = flow["stop_s"] - flow["start_s"]
    return ["iperf3", "-c", server_ip, "-p", str(port(flow["flow"])), "-t", f"{seconds:g}",
            "-C", flow["cc"], "-J", "-i", "1"]


def schedule(job: dict) -> list:
    """Timed events (seconds after time zero), in order: flow starts and path changes."""
    events = [(f["start_s"], 0, "start", f["flow"], None) for f in job["flows"]]
    events += [(c["at_s"], 1, "rtt", c["flow"], c["rtt_ms"]) for c in job.get("changes", [])]
    return [{"at_s": at, "kind": kind, "flow": flow, "value": value}
            for at, _prio, kind, flow, value in sorted(events, key=lambda e: (e[0], e[1], e[3]))]
