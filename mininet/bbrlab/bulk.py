"""Bulk TCP sender and receiver: the flows' two ends, one system call per wake-up.

    python3 bulk.py receive PORT
    python3 bulk.py send HOST PORT SECONDS CC

What a bulk-transfer experiment needs from its traffic tool is a sender that
keeps its socket buffer full for a set time with a chosen congestion control,
and a receiver that reads everything as soon as it arrives. That is what
iperf3 does too (and what this package used until 2026-11-23), but on
User-Mode Linux each guest system call is a ptrace stop of a host process
(about 24 us of host CPU), and iperf3's server runs a whole select() loop per
arriving segment (select, reads until EAGAIN, clock reads: 5 stops per
segment), which made the receivers 94 % of a run's host cost
(bench/results/host-cost-2026-11-23.md).

This receiver blocks in recv_into() of a 128-KiB buffer (iperf3's default
block): it wakes when the socket becomes readable, as iperf3's select() does,
and one call takes all that is queued, as iperf3's reads do, so the kernel
sees the same reads at the same moments and sends the same ACKs
(tcp_cleanup_rbuf acts on what a read consumed; bench/receiver_bench.py
checks the ACK stream and the flows before and after). There is no control
connection: the run's schedule, not a protocol, says when each end starts.

The sender sets TCP_CONGESTION before connecting (as `iperf3 -C` does),
writes 128-KiB blocks from a blocking socket until SECONDS have passed since
the connection was established, then closes it; what is still buffered is
sent, as with iperf3. Each write carries the time left as its send timeout
(SO_SNDTIMEO), so a write blocked on a full buffer returns at the deadline
and a slow flow does not overrun by a block's transmission time.

Each end prints one JSON line when it finishes (bytes, times, the congestion
control the socket actually used); the experiment keeps it in raw/ as a
cross-check. The file is standalone (standard library only) so that the guest
starts it without importing the package.
"""
import json
import socket
import struct
import sys
import time

BLOCK = 128 * 1024


def receive(port: int) -> dict:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", port))
    listener.listen(1)
    print(json.dumps({"listening": port}), flush=True)
    conn, peer = listener.accept()
    listener.close()
    start = time.time()
    buf = bytearray(BLOCK)
    view = memoryview(buf)
    received, reads = 0, 0
    while True:
        n = conn.recv_into(view)
        if n == 0:
            break
        received += n
        reads += 1
    end = time.time()
    cc = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    conn.close()
    return {"role": "receiver", "port": port, "peer": f"{peer[0]}:{peer[1]}", "bytes": received,
            "reads": reads, "start": start, "end": end, "cc": cc}


def send(host: str, port: int, seconds: float, cc: str) -> dict:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    except OSError as err:
        raise SystemExit(f"bulk send: congestion control {cc!r} is not available: {err}")
    sock.connect((host, port))
    start = time.time()
    deadline = time.monotonic() + seconds
    block = memoryview(bytes(BLOCK))
    sent = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        # a write blocked on a full buffer returns (what it wrote, or EAGAIN) at the deadline
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                        struct.pack("ll", int(left), max(1, int(left % 1 * 1e6))))
        try:
            sent += sock.send(block)
        except BlockingIOError:
            break
    end = time.time()
    used = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    sock.close()
    return {"role": "sender", "port": port, "peer": f"{host}:{port}", "bytes": sent,
            "start": start, "end": end, "cc": used}


def main(argv) -> int:
    usage = "usage: bulk.py receive PORT | bulk.py send HOST PORT SECONDS CC"
    try:
        if argv[:1] == ["receive"] and len(argv) == 2:
            report = receive(int(argv[1]))
        elif argv[:1] == ["send"] and len(argv) == 5:
            seconds = float(argv[3])
            if not seconds > 0:
                raise ValueError(f"SECONDS must be positive, got {argv[3]}")
            report = send(argv[1], int(argv[2]), seconds, argv[4])
        else:
            print(usage, file=sys.stderr)
            return 2
    except ValueError as err:
        print(f"bulk.py: {err}\n{usage}", file=sys.stderr)
        return 2
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
