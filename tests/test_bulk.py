"""The flows' two ends (bbrlab/guest/bulk.c, built by guest_programs.py), on the host's loopback: no
testbed boot.

What the experiments rely on: the sender keeps writing for exactly its time
(also when a write is blocked on a full buffer), with the congestion control
asked for, and everything it wrote arrives; the receiver takes all that is
queued in one read and stays in the kernel until a block is full (the
properties that make it cheap on User-Mode Linux and keep the ACK stream
what iperf3's reads made it); a bad request fails with its reason."""
import json
import os
import pathlib
import signal
import socket
import subprocess
import time

import pytest

from bbrlab.experiment import testbed
from bbrlab.host import guest_programs
from bbrlab.guest import traffic

BULK = pathlib.Path(traffic.BULK)


@pytest.fixture(scope="module", autouse=True)
def built():
    return guest_programs.build("bulk")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_receiver(port):
    proc = subprocess.Popen([str(BULK), "receive", str(port)], stdout=subprocess.PIPE, text=True)
    assert json.loads(proc.stdout.readline()) == {"listening": port}
    return proc


def test_everything_written_arrives_and_the_sender_stops_on_time():
    port = free_port()
    rcv = start_receiver(port)
    t = time.monotonic()
    snd = subprocess.run([str(BULK), "send", "127.0.0.1", str(port), "1.5", "cubic"],
                         capture_output=True, text=True, timeout=30)
    elapsed = time.monotonic() - t
    assert snd.returncode == 0, snd.stderr
    sent = json.loads(snd.stdout)
    got = json.loads(rcv.communicate(timeout=30)[0])
    assert sent["cc"] == "cubic"                # the receiver's own socket uses the host's default
    assert 1.4 <= sent["end"] - sent["start"] <= 2.0
    assert elapsed < 5
    assert sent["bytes"] > 10 * 128 * 1024
    assert got["bytes"] == sent["bytes"] and got["eof"] is True


def report_against_a_peer_that_never_reads(seconds: str) -> dict:
    """The sender's report after `seconds` against a peer that accepts and never reads: every
    write blocks once the buffers are full."""
    with socket.socket() as lst:
        lst.bind(("127.0.0.1", 0))
        lst.listen(1)
        port = lst.getsockname()[1]
        snd = subprocess.Popen([str(BULK), "send", "127.0.0.1", str(port), seconds, "cubic"],
                               stdout=subprocess.PIPE, text=True)
        conn, _ = lst.accept()
        try:
            out, _ = snd.communicate(timeout=30)
        finally:
            conn.close()
    return json.loads(out)


def test_a_write_blocked_on_a_full_buffer_ends_at_the_deadline():
    report = report_against_a_peer_that_never_reads("1")
    assert 0.95 <= report["end"] - report["start"] <= 1.5
    assert 0 < report["bytes"] < 64 << 20


def test_no_write_blocks_longer_than_its_slice():
    # A blocked write's timeout is a timer-wheel timer, late by up to 1/8 of itself: a write
    # carrying the whole time left (minutes in a 6000-s run) ends the sender minutes late. So
    # each write blocks at most 10 s and is made again: with a peer that never reads, a 12-s
    # sender's longest write is the slice, and it stops within the slice's own lateness.
    report = report_against_a_peer_that_never_reads("12")
    assert 9.9 <= report["longest_write_s"] <= 10.7
    assert 0 <= report["overrun_s"] < 0.75
    assert 11.95 <= report["end"] - report["start"] <= 12.8


def test_one_read_takes_all_that_is_queued():
    port = free_port()
    rcv = start_receiver(port)
    with socket.create_connection(("127.0.0.1", port)) as s:
        time.sleep(0.3)                          # the receiver is in its read
        os.kill(rcv.pid, signal.SIGSTOP)
        payload = bytes(1 << 20)
        s.sendall(payload)                       # 1 MiB queued while it cannot read
        time.sleep(0.3)
        os.kill(rcv.pid, signal.SIGCONT)
    got = json.loads(rcv.communicate(timeout=30)[0])
    assert got["bytes"] == len(payload)
    assert got["reads"] <= (len(payload) >> 17) + 3      # 128-KiB reads (+ what arrived before the stop)


def test_data_arriving_in_small_pieces_is_taken_in_one_call_per_block():
    """The receiver stays in the kernel while a block fills (MSG_WAITALL): each arriving piece
    is copied when it arrives, as a read per wake-up would take it, but the process returns to
    user space once per 128 KiB, not once per piece (on User-Mode Linux each return is a
    ptrace stop). A receiver that returned per wake-up makes about one read per piece here."""
    port = free_port()
    rcv = start_receiver(port)
    pieces = 120
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(pieces):
            s.sendall(bytes(1448))
            time.sleep(0.002)                    # each piece arrives alone and wakes the receiver
    got = json.loads(rcv.communicate(timeout=30)[0])
    assert got["bytes"] == pieces * 1448 and got["eof"] is True
    assert got["reads"] <= 2                     # one full 128-KiB block, then the rest at the end of stream


def resident_anonymous_kb(pid: int) -> int:
    """RssAnon of /proc/<pid>/status: the process's anonymous memory (its static buffer included)
    that is in RAM, in kB."""
    status = pathlib.Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("RssAnon:")))


def test_the_receiver_consumes_the_data_without_copying_it():
    """tcp(7): recv() with MSG_TRUNC discards the data instead of copying it out; the kernel's side
    of the read (sequence, window, ACKs) is the same. A receiver that copied would touch every
    page of its 128-KiB block, whose first touch makes each page resident (32 pages, 128 kB);
    one that discards never touches the block, and its count of bytes stays exact."""
    port = free_port()
    rcv = start_receiver(port)
    with socket.create_connection(("127.0.0.1", port)) as s:
        time.sleep(0.3)                          # accepted, in its first read
        before = resident_anonymous_kb(rcv.pid)
        s.sendall(bytes(1 << 20))
        time.sleep(0.5)                          # 8 blocks read, the receiver waiting in its next read
        after = resident_anonymous_kb(rcv.pid)
    got = json.loads(rcv.communicate(timeout=30)[0])
    assert got["bytes"] == 1 << 20 and got["eof"] is True
    assert after - before < 64, f"RssAnon grew from {before} to {after} kB: the block was written"


def test_unknown_congestion_control_is_refused_by_name():
    port = free_port()
    rcv = start_receiver(port)
    try:
        snd = subprocess.run([str(BULK), "send", "127.0.0.1", str(port), "1", "no_such_cc"],
                             capture_output=True, text=True, timeout=30)
    finally:
        rcv.kill()
        rcv.wait()
    assert snd.returncode != 0
    assert "no_such_cc" in snd.stderr and "not available" in snd.stderr


@pytest.mark.parametrize("argv", [["send", "127.0.0.1", "5200", "0", "bbr"], ["send", "x"], ["listen", "1"]])
def test_bad_arguments_get_usage(argv):
    res = subprocess.run([str(BULK), *argv], capture_output=True, text=True, timeout=30)
    assert res.returncode == 2 and "usage" in res.stderr


def test_traffic_tool_choice():
    flow = {"flow": 2, "cc": "bbr", "start_s": 1.0, "stop_s": 11.0}
    assert traffic.client_cmd(flow, "10.0.0.4") == [traffic.BULK, "send", "10.0.0.4", "5202", "10", "bbr"]
    assert traffic.server_cmd(2) == [traffic.BULK, "receive", "5202"]
    assert traffic.client_cmd(flow, "10.0.0.4", "iperf3")[:2] == ["iperf3", "-c"]
    assert traffic.tool({}) == "bulk"
    with pytest.raises(ValueError, match="traffic_tool"):
        traffic.tool({"traffic_tool": "netperf"})


def test_missing_compiler_is_named(monkeypatch):
    monkeypatch.setattr(guest_programs, "CC", "no-such-cc")
    with pytest.raises(guest_programs.ProgramBuildError, match="no-such-cc.*apt-get install gcc"):
        guest_programs.build("bulk")


def test_rebuilt_only_when_the_source_changes(monkeypatch, tmp_path):
    source = tmp_path / "bulk.c"
    source.write_text(guest_programs.SOURCES["bulk"].read_text())
    monkeypatch.setitem(guest_programs.SOURCES, "bulk", source)
    monkeypatch.setattr(testbed, "BIN_DIR", tmp_path / "bin")
    first = guest_programs.build("bulk")
    assert first == tmp_path / "bin" / "bulk"
    stamp = first.stat().st_mtime_ns
    assert guest_programs.build("bulk").stat().st_mtime_ns == stamp            # up to date: left alone
    source.write_text(source.read_text().replace("usage: bulk receive", "usage:  bulk receive"))
    assert guest_programs.build("bulk").stat().st_mtime_ns != stamp
    res = subprocess.run([str(first)], capture_output=True, text=True)
    assert res.returncode == 2 and "usage:  bulk receive" in res.stderr
    # a source that does not compile: the error names it, the old binary stays
    source.write_text("int main( {")
    with pytest.raises(guest_programs.ProgramBuildError, match="cannot compile the testbed's bulk"):
        guest_programs.build("bulk")
    assert first.is_file()


def test_a_stopped_receiver_reports_what_it_got():
    """The experiment ends while a slow flow still drains its send buffer: SIGTERM makes the
    receiver report what it received, flagged, instead of dying without a report."""
    port = free_port()
    rcv = start_receiver(port)
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(bytes(300_000))
        time.sleep(0.3)
        rcv.terminate()
        got = json.loads(rcv.communicate(timeout=30)[0])
    assert rcv.returncode == 0
    assert got["eof"] is False and got["bytes"] == 300_000 and got["role"] == "receiver"
    # stopped before any sender came: a report of nothing
    rcv = start_receiver(free_port())
    rcv.terminate()
    assert json.loads(rcv.communicate(timeout=30)[0]) == {"role": "receiver", "port": int(rcv.args[-1]),
                                                          "bytes": 0, "reads": 0, "eof": False}


def test_a_stop_at_any_moment_ends_the_receiver():
    """SIGTERM just before the receiver blocks (a race the signal alone would lose: the read
    would wait for the sender) still ends it: twenty stops at varying moments."""
    for k in range(20):
        port = free_port()
        rcv = start_receiver(port)
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(bytes(1000 * k))
            time.sleep(0.0005 * k)
            rcv.terminate()
            got = json.loads(rcv.communicate(timeout=5)[0])
        assert got["eof"] is False and got["bytes"] <= 1000 * k
