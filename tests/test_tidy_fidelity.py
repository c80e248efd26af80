"""raw -> tidy and the fidelity checks, on a real 30-s two-flow run captured from the
testbed (tests/fixtures/run_fig1short.tar.xz: 10-ms and 50-ms BBR flows, 100 Mbit/s,
2 MB buffer, the 50-ms flow starting at 5 s)."""
import copy
import csv
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from bbrlab.experiment import spec, units
from bbrlab.data import fidelity, tidy

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def run(tmp_path, fixtures):
    with tarfile.open(fixtures / "run_fig1short.tar.xz") as tar:
        tar.extractall(tmp_path)
    # a run resolved by an earlier revision: the defaults added since filled in, as retidy does
    job = spec.complete(json.loads((tmp_path / "job.json").read_text()))
    return tmp_path, job


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def final_bytes_received(raw, flow):
    """Largest bytes_received among the receiver's sockets on the flow's port, read directly."""
    best = 0
    for rec in tidy.read_jsonl(raw / f"sockets_rcv{flow}.jsonl"):
        for s in rec["socks"]:
            if s["sport"] == 5200 + flow:
                best = max(best, s["info"].get("bytes_received", 0))
    return best


def test_goodput_conserves_received_bytes(run):
    run_dir, job = run
    tidy.make_tidy(run_dir, job)
    goodput = rows(run_dir / "tidy" / "goodput.csv")
    for flow in (1, 2):
        total = sum(int(r["bytes"]) for r in goodput if r["flow"] == str(flow))
        assert total == final_bytes_received(run_dir / "raw", flow)
        assert total > 50_000_000          # the data connection, not iperf3's control connection


def test_goodput_bins_are_100ms_and_start_with_the_flow(run):
    run_dir, job = run
    tidy.make_tidy(run_dir, job)
    goodput = rows(run_dir / "tidy" / "goodput.csv")
    intervals = sorted(float(r["interval_s"]) for r in goodput)
    assert intervals[len(intervals) // 2] == pytest.approx(0.1, abs=0.005)
    first2 = min(float(r["t_s"]) for r in goodput if r["flow"] == "2")
    assert 5.0 <= first2 <= 6.0
    for r in goodput:
        assert float(r["goodput_mbps"]) == pytest.approx(int(r["bytes"]) * 8 / float(r["interval_s"]) / 1e6, rel=1e-3)


def test_receivers_got_what_the_bottleneck_sent(run):
    """Goodput (receiver sockets) against the bottleneck qdisc's byte counter over the
    same 19 s: two independent measurements, equal up to header overhead."""
    run_dir, job = run
    tidy.make_tidy(run_dir, job)
    goodput = [r for r in rows(run_dir / "tidy" / "goodput.csv") if 10 < float(r["t_s"]) <= 29]
    received = sum(int(r["bytes"]) for r in goodput)
    queue = [r for r in rows(run_dir / "tidy" / "queue.csv") if 10 <= float(r["t_s"]) <= 29]
    seconds = float(queue[-1]["t_s"]) - float(queue[0]["t_s"])
    sent = int(queue[-1]["sent_bytes"]) - int(queue[0]["sent_bytes"])
    assert received == pytest.approx(sent * units.mss_bytes(1500) / units.frame_bytes(1500), rel=0.02)
    assert sent * 8 / seconds / 1e6 <= 100 * 1.01


def test_sender_state_series(run):
    run_dir, job = run
    tidy.make_tidy(run_dir, job)
    tcp = rows(run_dir / "tidy" / "tcp.csv")
    flow2 = [r for r in tcp if r["flow"] == "2"]
    states = [r["state"] for r in flow2 if r["state"]]
    assert states[0] == "startup" and {r["cc"] for r in flow2} == {"bbr"}
    assert states.count("probe_bw") > len(states) / 2
    min_rtts = [float(r["min_rtt_ms"]) for r in flow2 if r["min_rtt_ms"]]
    assert min(min_rtts) == pytest.approx(50, abs=1)
    for r in flow2:
        assert int(r["inflight_pkts"]) >= 0 and int(r["cwnd_pkts"]) >= 4


def test_queue_rows(run):
    run_dir, job = run
    tidy.make_tidy(run_dir, job)
    queue = rows(run_dir / "tidy" / "queue.csv")
    assert len(queue) > 500                        # 20 Hz over 30 s
    sent = [int(r["sent_bytes"]) for r in queue]
    assert sent == sorted(sent)
    for r in queue:
        assert 0 <= int(r["backlog_bytes"]) <= 2_000_000
        assert float(r["qdelay_ms"]) == pytest.approx(int(r["backlog_bytes"]) * 8 / 1e8 * 1e3, abs=1e-3)


def test_truncated_sampler_line_is_skipped(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"t": 1, "socks": []}\n{"t": 2, "so')
    assert tidy.read_jsonl(path) == [{"t": 1, "socks": []}]


def test_ping_parser_on_real_output(run):
    run_dir, _job = run
    rtts = fidelity.ping_rtts((run_dir / "raw" / "ping_2.txt").read_text())
    assert len(rtts) == 11
    assert rtts[0] > rtts[1]                     # the first reply waited for ARP
    assert all(abs(r - 50) < 1 for r in rtts[1:])


def test_real_run_passes_and_a_misconfigured_one_fails(run):
    run_dir, job = run
    data = tidy.make_tidy(run_dir, job)
    verdict = fidelity.evaluate(run_dir, job, data)
    assert verdict["valid"], verdict
    names = {c["name"] for c in verdict["checks"]}
    assert names == {"base_rtt", "bottleneck_rate", "guest_cpu", "timer_lateness", "sender_decoupled",
                     "socket_buffers"}
    wrong = copy.deepcopy(job)
    wrong["flows"][1]["rtt_ms"] = 48.5               # the path really had 50 ms
    wrong["bottleneck"]["rate_mbps"] = 90             # and the link really ran at 100
    verdict = fidelity.evaluate(run_dir, wrong, data)
    failed = {(c["name"], c["subject"]) for c in verdict["checks"] if not c["ok"]}
    assert failed == {("base_rtt", "flow 2"), ("bottleneck_rate", "bottleneck")}
    assert not verdict["valid"]


def queue_series(rate_mbps, backlog, seconds=3.0, dt=0.05):
    out, sent = [], 0
    for k in range(int(seconds / dt) + 1):
        out.append({"t_s": k * dt, "backlog_bytes": backlog, "sent_bytes": int(sent)})
        sent += rate_mbps * 1e6 / 8 * dt
    return out


@pytest.mark.parametrize("achieved, ok", [(99.0, True), (94.0, False), (106.0, False)])
def test_rate_check_while_backlogged(achieved, ok):
    job = {"bottleneck": {"rate_mbps": 100}, "fidelity": {"rate_tolerance": 0.05}, "mtu_bytes": 1500}
    result = fidelity.rate_check(queue_series(achieved, 50_000), job)
    assert result["ok"] is ok and result["measured"] == pytest.approx(achieved, rel=1e-3)


def test_rate_not_judged_without_backlog():
    job = {"bottleneck": {"rate_mbps": 100}, "fidelity": {"rate_tolerance": 0.05}, "mtu_bytes": 1500}
    result = fidelity.rate_check(queue_series(50, 0), job)
    assert result["ok"] and result["measured"] is None and "not checked" in result["note"]


@pytest.mark.parametrize("cc, bw, expected", [
    ("bbr", 12_500_001, {"bbr_bw_mbps": 100.0, "variant_flag": None, "variant_estimate_mbps": None}),
    ("bbq", 12_500_001, {"bbr_bw_mbps": 100.0, "variant_flag": 1, "variant_estimate_mbps": None}),
    ("bbq", 12_500_000, {"bbr_bw_mbps": 100.0, "variant_flag": 0, "variant_estimate_mbps": None}),
    ("bbr_fca", 12_500_000, {"bbr_bw_mbps": 100.0, "variant_flag": 0, "variant_estimate_mbps": None}),
    ("bbr_fca", 2_500_001, {"bbr_bw_mbps": None, "variant_flag": 1, "variant_estimate_mbps": 20.0}),
    ("bbr_e", 12_500_001, {"bbr_bw_mbps": 100.0, "variant_flag": None, "variant_estimate_mbps": None}),
])
def test_variant_flag_in_bit_0_of_the_bandwidth(cc, bw, expected):
    """bbq and bbr_fca flag a state in bit 0 of bbr_bw_lo (kernel/variants/README.md); bbr_fca then
    reports its CUBIC rate estimate instead of the bandwidth."""
    sock = {"src": "10.0.0.1", "sport": 40000, "dst": "10.0.0.2", "dport": 5201, "state": "established",
            "cc": cc, "info": {"bytes_acked": 1}, "bbr": {"bw_bytes_per_s": bw, "min_rtt_us": 10_000,
                                                          "pacing_gain": 1.0, "cwnd_gain": 2.0}}
    (row,) = tidy.tcp_rows(1, [{"t": 101.0, "socks": [sock]}], t0=100.0)
    assert {k: row.get(k) for k in expected} == expected


def test_mode_from_gains_for_variants_that_keep_bbrs_gains():
    """ProbeRTT is pacing gain 1 with cwnd gain 1: read off the gains for bbr and the
    variants that keep BBR's gains per mode (variants.yaml bbr_modes), not for BBR-E,
    whose ProbeBW uses cwnd gain 1 too."""
    probe_rtt = {"pacing_gain": 1.0, "cwnd_gain": 1.0}
    cruise = {"pacing_gain": 1.0, "cwnd_gain": 2.0}
    for cc in ("bbr", "bbq", "bbq_drain", "adaptive_bbr"):
        assert tidy.bbr_state(cc, probe_rtt) == "probe_rtt"
        assert tidy.bbr_state(cc, cruise) == "probe_bw"
    for cc in ("bbr_e", "bbr_fca", "cubic"):
        assert tidy.bbr_state(cc, probe_rtt) == ""


def test_retidy_rewrites_tidy_data_from_raw_and_records_it(run):
    run, job = run
    tidy.make_tidy(run, job)
    before = {p.name: p.read_text() for p in (run / "tidy").glob("*.csv")}
    for p in (run / "tidy").glob("*.csv"):
        p.unlink()
    proc = subprocess.run([sys.executable, "-m", "bbrlab", "tidy", str(run)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO / "mininet")}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    after = {p.name: p.read_text() for p in (run / "tidy").glob("*.csv")}
    assert after == before                      # the same parsers give the same tidy data
    meta = json.loads((run / "run.json").read_text())
    assert meta["tidy_rewritten"]["git_revision"] and meta["fidelity"]["valid"]


def test_retidy_refuses_a_directory_that_is_not_a_run(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bbrlab", "tidy", str(tmp_path)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO / "mininet")}, timeout=120)
    assert proc.returncode != 0 and "not a finished run" in (proc.stderr + proc.stdout)


def fca_job(job):
    """The fixture's run as if flow 1 had been bbr_fca (the variant with a failure counter)."""
    job = copy.deepcopy(job)
    job["flows"][0]["cc"] = "bbr_fca"
    job["modules"] = [{"name": "bbr_fca", "path": "/x/bbr_fca.ko", "params": {}}]
    return job


@pytest.mark.parametrize("recorded, ok, measured", [
    ({"alloc_failures": "0", "recent_pct": "200"}, True, 0),
    ({"alloc_failures": "3", "recent_pct": "200"}, False, 3),
    ({"recent_pct": "200"}, False, None),                 # a module without the counter
    (None, False, None),                                   # the module was not loaded at the end
])
def test_variant_state_marks_a_run_with_plain_bbr_connections_invalid(run, recorded, ok, measured):
    """bbr_fca connections whose per-connection state could not be allocated ran as plain BBR: the
    module counts them (alloc_failures), the guest records it, and any such connection, or a missing
    count, makes the run invalid."""
    run_dir, job = run
    job = fca_job(job)
    data = tidy.make_tidy(run_dir, job)
    (run_dir / "raw" / "modules.json").write_text(json.dumps([{"name": "bbr_fca", "parameters": recorded}]))
    verdict = fidelity.evaluate(run_dir, job, data)
    (state,) = [c for c in verdict["checks"] if c["name"] == "variant_state"]
    assert (state["ok"], state["measured"], state["subject"]) == (ok, measured, "module bbr_fca")
    assert verdict["valid"] is ok
    if not ok:
        assert state["note"]


def test_variant_state_without_the_guests_record_is_invalid(run):
    run_dir, job = run
    job = fca_job(job)
    data = tidy.make_tidy(run_dir, job)
    verdict = fidelity.evaluate(run_dir, job, data)
    (state,) = [c for c in verdict["checks"] if c["name"] == "variant_state"]
    assert not state["ok"] and "no raw/modules.json" in state["note"] and not verdict["valid"]


def test_guest_records_module_parameters_at_the_end(tmp_path):
    """guest.module_state reads each loaded variant's /sys/module/<name>/parameters/ into
    raw/modules.json, which variant_state reads."""
    from bbrlab.guest import driver as guest
    params = tmp_path / "sys" / "bbr_fca" / "parameters"
    params.mkdir(parents=True)
    (params / "alloc_failures").write_text("2\n")
    (params / "recent_pct").write_text("200\n")
    raw = tmp_path / "raw"
    raw.mkdir()
    job = {"modules": [{"name": "bbr_fca"}, {"name": "bbq"}],
           "flows": [{"flow": 1, "cc": "bbr_fca"}, {"flow": 2, "cc": "bbq"}]}
    guest.module_state(job, raw, sys_module=str(tmp_path / "sys"))
    state = json.loads((raw / "modules.json").read_text())
    assert state == [{"name": "bbr_fca", "parameters": {"alloc_failures": "2", "recent_pct": "200"}},
                     {"name": "bbq", "parameters": None}]
    (check,) = fidelity.variant_state_checks(raw, job)        # bbq keeps no counter: no check
    assert not check["ok"] and check["measured"] == 2


def write_pcap(path, times):
    """A pcap of one TCP/IPv4 Ethernet frame per time (microsecond timestamps)."""
    import struct
    frame = (b"\x00" * 12 + b"\x08\x00" + bytes([0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 1, 1, 10, 0, 2, 1])
             + struct.pack("!HHIIHHHH", 5201, 40000, 1, 0, 0x5010, 1000, 0, 0))
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for t in times:
            f.write(struct.pack("<IIII", int(t), int(round(t % 1 * 1e6)), len(frame), len(frame)) + frame)


@pytest.mark.parametrize("last_s, dropped, expected", [(11.05, 0, True), (9.5, 0, False), (11.05, 3, False)])
def test_packets_unread_at_the_capture_stop_count_only_inside_the_window(tmp_path, last_s, dropped, expected):
    """tcpdump stopped after the tail counts as received the packets still in its buffer; they
    come after all it wrote (FIFO). Seen in CI: 45 222 of 45 223 captured, the last written 1.05 s
    after the 10-s window. Such a packet is no loss of the run; one the buffer held before the
    window's end, or any kernel drop, is."""
    t0 = 1_704_067_201.0
    write_pcap(tmp_path / "capture_deq.pcap", [t0 + 1.0, t0 + 5.0, t0 + last_s])
    stat = {"name": "deq", "dev": "sw1-eth1", "captured": 3, "received": 4, "dropped_by_kernel": dropped, "exit": 0}
    assert fidelity.unread_after_window(tmp_path, stat, t0 + 10.0) is expected
    # more captured than received, or no such file: never excused
    assert fidelity.unread_after_window(tmp_path, dict(stat, captured=5), t0 + 10.0) is False
    assert fidelity.unread_after_window(tmp_path, dict(stat, name="enq_1"), t0 + 10.0) is False


def test_a_last_sample_without_tcp_info_does_not_void_the_socket_checks():
    """Captured in CI (tests/test_testbed_capabilities.py's access-link run): flow 2 stops at the
    run's end, the receiver closes too, and the sampler's last look finds the sender's socket as a
    time-wait socket in FIN_WAIT2, which sock_diag lists without tcp_info. The socket-buffer and
    delayed-ACK checks read the last sample that has counters (4.17 s busy, never limited), not
    the empty one (which left the check without a measurement, so the run was flagged)."""
    raw = Path(__file__).parent / "fixtures" / "fin_wait2"
    samples = tidy.read_jsonl(raw / "sockets_snd2.jsonl")
    last = tidy.data_socket_series(samples, 5202, local=False, counter="bytes_acked")[-1][1]
    assert last["state"] == "fin_wait2" and last["info"] == {}          # the case itself
    job = {"flows": [{"flow": 2, "cc": "cubic", "rtt_ms": 20}]}
    check = fidelity.socket_buffer_checks(raw, job)[0]
    assert check["ok"] and check["measured"] == 0.0, check
    assert "of 4.17 s busy" in check["note"]
    sent, received = fidelity.acks_per_segment(raw, 2)
    assert received > 1000 and 0.4 < sent / received < 0.7               # delayed ACKs, one per two
