#!/usr/bin/env python3
"""Paired host-cost runs side by side: what they cost and what the flows saw.

    .venv/bin/python bench/host_cost_compare.py RESULT.json:RUN_DIR [RESULT.json:RUN_DIR ...]

Each argument pairs the JSON written by host_cost_profile.py with the run
directory it kept (--keep DIR: the run is DIR/run). Prints, per run, the host
CPU per experiment-second over the profile window, the receivers' guest
wake-ups and host ptrace stops, and per flow the mean goodput, mean RTT,
retransmissions and the mean bottleneck backlog over the whole run (after
the last flow's start), and the ACK stream the senders heard, so a change that saves host CPU can be checked
against the run-to-run spread of what the flows see.
"""
import csv
import json
import pathlib
import statistics
import sys


def flow_metrics(run: pathlib.Path) -> dict:
    summary = json.loads((run / "run.json").read_text())
    start = max(f["start_s"] for f in summary["flows"]) + 1.0
    stop = min(f["stop_s"] for f in summary["flows"])
    tidy = run / "tidy"
    good, rtt, retr = {}, {}, {}
    for row in csv.DictReader(open(tidy / "goodput.csv")):
        if start <= float(row["t_s"]) <= stop:
            good.setdefault(row["flow"], []).append(float(row["goodput_mbps"]))
    for row in csv.DictReader(open(tidy / "tcp.csv")):
        if start <= float(row["t_s"]) <= stop and row["rtt_ms"]:
            rtt.setdefault(row["flow"], []).append(float(row["rtt_ms"]))
        if row["retrans_total"]:
            retr[row["flow"]] = int(row["retrans_total"])
    backlog = [float(r["backlog_bytes"]) for r in csv.DictReader(open(tidy / "queue.csv"))
               if start <= float(r["t_s"]) <= stop]
    return {"valid": summary["fidelity"]["valid"],
            "flows": {f: {"goodput_mbps": statistics.mean(good[f]), "rtt_ms": statistics.mean(rtt[f]),
                          "retrans": retr.get(f)} for f in sorted(good)},
            "backlog_kb": statistics.mean(backlog) / 1e3, "window_s": (start, stop)}


def ack_stream(run: pathlib.Path) -> dict:
    """Per flow, what the sender hears: the receiver's ACKs per data segment (tcp_info segs_out /
    data_segs_in at its last sample) and the smallest receive window the sender saw (snd_wnd)."""
    out = {}
    for rcv in sorted((run / "raw").glob("sockets_rcv*.jsonl")):
        flow = rcv.stem.replace("sockets_rcv", "")
        last, wnd = None, []
        for line in open(rcv):
            for s in json.loads(line)["socks"]:
                if s["info"].get("data_segs_in", 0) > 1000:
                    last = s["info"]
        for line in open(run / "raw" / f"sockets_snd{flow}.jsonl"):
            for s in json.loads(line)["socks"]:
                if s["info"].get("data_segs_out", 0) > 1000 and s["info"].get("snd_wnd"):
                    wnd.append(s["info"]["snd_wnd"])
        out[flow] = {"acks_per_seg": last["segs_out"] / last["data_segs_in"] if last else None,
                     "min_rwnd_mb": min(wnd) / 1e6 if wnd else None}
    return out


def cost(result: dict) -> dict:
    w, tck = result["window_experiment_s"], result["clk_tck"]
    cpu = sum(r["host"]["utime"] + r["host"]["stime"] for r in result["rows"]) / tck / w
    uml = sum(r["host"]["utime"] + r["host"]["stime"] for r in result["rows"] if not r["what"].startswith("host ")) / tck / w
    recv = [r for r in result["rows"] if "(receiver)" in r["what"]]
    return {"host_cpu_per_s": cpu, "uml_cpu_per_s": uml,
            "receiver_wakeups_per_s": sum(r["guest"].get("nvcsw", 0) for r in recv) / w,
            "receiver_stops_per_s": sum(r["host"]["nvcsw"] for r in recv) / w,
            "all_stops_per_s": sum(r["host"]["nvcsw"] for r in result["rows"]
                                   if not r["what"].startswith(("host ", "UML kernel"))) / w,
            "run_host_cpu_s": result["run"]["timings"]["host_cpu_s"], "run_wall_s": result["run"]["timings"]["wall_s"]}


def receiver(run: dict) -> str:
    """The receiving end of a run: its tool (iperf3 before 2026-11-23's bulk.py) and SO_RCVLOWAT."""
    name = run.get("traffic_tool", "iperf3")
    return name + (f" lowat {run['receiver_lowat_bytes']}" if run.get("receiver_lowat_bytes") else "")


def main(argv):
    if not argv:
        sys.exit(__doc__)
    print("| run | receiver | UML host CPU-s per exp-s (window) | receiver wake-ups/s | receiver stops/s | all guest stops/s"
          " | whole-run host CPU-s | flow: goodput Mbit/s, mean RTT ms, retrans | mean backlog kB"
          " | flow: ACKs per data segment, min rwnd MB | valid |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for arg in argv:
        res_path, run_dir = arg.split(":", 1)
        result = json.loads(pathlib.Path(res_path).read_text())
        c, m = cost(result), flow_metrics(pathlib.Path(run_dir))
        acks = "; ".join(f"{f}: {v['acks_per_seg']:.3f}, {v['min_rwnd_mb']:.2f}" for f, v in ack_stream(pathlib.Path(run_dir)).items())
        flows = "; ".join(f"{f}: {v['goodput_mbps']:.2f}, {v['rtt_ms']:.1f}, {v['retrans']}" for f, v in m["flows"].items())
        print(f"| {result['run']['tag']} | {receiver(result['run'])} | {c['uml_cpu_per_s']:.3f} | "
              f"{c['receiver_wakeups_per_s']:.0f} | {c['receiver_stops_per_s']:.0f} | {c['all_stops_per_s']:.0f} | "
              f"{c['run_host_cpu_s']:.1f} | {flows} | {m['backlog_kb']:.0f} | {acks} | {m['valid']} |")


if __name__ == "__main__":
    main(sys.argv[1:])
