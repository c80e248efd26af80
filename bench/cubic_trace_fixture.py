"""Write a CUBIC trace fixture for tests/kernel/test_fca_real_cubic.py from a probe's run.

Usage: .venv/bin/python bench/cubic_trace_fixture.py <run dir> <fixture name>

Reads each sender's socket samples (raw/sockets_snd<i>.jsonl; flow i's data connection is the
socket to port 5200 + i with the most bytes acknowledged, iperf3's control connection shares
the port) and keeps what the test reads: time from the first sample, TCP's congestion-avoidance
state (ca_state: 0 open, 1 disorder, 2 CWR, 3 recovery, 4 loss), smoothed RTT, bytes
acknowledged, retransmissions, MSS. Writes tests/fixtures/cubic_traces/<name>.csv.xz (to a
temporary name, then renamed).
"""
import csv
import io
import json
import lzma
import os
import pathlib
import sys

COLUMNS = ("flow", "t_s", "ca_state", "srtt_ms", "bytes_acked", "retrans_total", "mss_bytes")


def flow_rows(path, flow):
    by_sport = {}
    for line in open(path):
        sample = json.loads(line)
        for s in sample["socks"]:
            if s["dport"] == 5200 + flow and s.get("info"):
                i = s["info"]
                by_sport.setdefault(s["sport"], []).append(
                    (sample["t"], i["ca_state"], i["rtt"] / 1e3, i["bytes_acked"], i["total_retrans"], i["snd_mss"]))
    return max(by_sport.values(), key=lambda rows: rows[-1][3]) if by_sport else []


def main(run_dir, name):
    raw = pathlib.Path(run_dir) / "raw"
    senders = sorted(raw.glob("sockets_snd*.jsonl"), key=lambda p: int(p.stem.removeprefix("sockets_snd")))
    if not senders:
        sys.exit(f"{run_dir}: no raw/sockets_snd*.jsonl")
    flows = {int(p.stem.removeprefix("sockets_snd")): flow_rows(p, int(p.stem.removeprefix("sockets_snd")))
             for p in senders}
    t0 = min(rows[0][0] for rows in flows.values() if rows)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for flow, rows in flows.items():
        for t, ca, srtt, acked, retrans, mss in rows:
            w.writerow([flow, f"{t - t0:.4f}", ca, f"{srtt:.3f}", acked, retrans, mss])
    dest = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "cubic_traces" / f"{name}.csv.xz"
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".tmp")
    tmp.write_bytes(lzma.compress(out.getvalue().encode(), preset=9))
    os.replace(tmp, dest)
    print(dest, dest.stat().st_size, "bytes")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
