"""The netlink decoders, on replies captured in the testbed (tests/fixtures/netlink/,
written by a run with `snapshot_at_s`), checked against `ss -tinH` and `tc -s qdisc`
output taken a moment later in the same testbed."""
import re
import struct

import pytest

from bbrlab.guest import netlink


@pytest.fixture
def sockets(fixtures):
    return netlink.decode_tcp_dump([(fixtures / "netlink" / "sock_diag.bin").read_bytes()])


@pytest.fixture
def ss_text(fixtures):
    return (fixtures / "netlink" / "ss.txt").read_text()


def ss_entries(text):
    """(local, peer, detail line) per socket of `ss -tinH` output."""
    lines = text.splitlines()
    out = []
    for head, detail in zip(lines[::2], lines[1::2]):
        fields = head.split()
        out.append((fields[3], fields[4], detail))
    return out


def test_every_socket_of_ss_is_decoded_with_its_congestion_control(sockets, ss_text):
    decoded = {(f"{s['src']}:{s['sport']}", f"{s['dst']}:{s['dport']}"): s for s in sockets}
    entries = ss_entries(ss_text)
    assert len(entries) == len(sockets) == 2
    for local, peer, detail in entries:
        sock = decoded[(local, peer)]
        assert sock["state"] == "established"
        assert detail.split()[0] == sock["cc"]
        info = sock["tcp_info"]
        assert f"mss:{info['snd_mss']}" in detail
        assert f"pmtu:{info['pmtu']}" in detail and f"advmss:{info['advmss']}" in detail
        assert f"wscale:{info['snd_wscale']},{info['rcv_wscale']}" in detail
        assert f"minrtt:{info['min_rtt'] / 1000:g}" in detail


def test_bbr_info_matches_ss(sockets, ss_text):
    (bbr_sock,) = [s for s in sockets if s["cc"] == "bbr"]
    detail = next(d for _l, p, d in ss_entries(ss_text) if p.endswith(f":{bbr_sock['dport']}") and " bbr " in f" {d} ")
    bbr = bbr_sock["bbr"]
    m = re.search(r"bbr:\(bw:(\d+)bps,mrtt:([0-9.]+),pacing_gain:([0-9.]+),cwnd_gain:([0-9.]+)\)", detail)
    assert m, detail
    assert float(m.group(2)) == pytest.approx(bbr["min_rtt_us"] / 1000, abs=0.0015)
    # the pacing gain may have moved on in ProbeBW's cycle between the two reads
    gains = (1.25, 0.75, 1.0)
    assert any(abs(bbr["pacing_gain"] - g) < 0.01 for g in gains)
    assert any(abs(float(m.group(3)) - g) < 0.01 for g in gains)
    assert float(m.group(4)) == pytest.approx(bbr["cwnd_gain"], abs=0.01)
    # bw changes between the two reads at most by BBR's filter steps: same order of magnitude
    assert 0.5 < int(m.group(1)) / (bbr["bw_bytes_per_s"] * 8) < 2


def test_counters_are_consistent(sockets):
    (data,) = [s for s in sockets if s["tcp_info"]["bytes_acked"] > 1_000_000]
    info = data["tcp_info"]
    assert info["bytes_sent"] >= info["bytes_acked"] > 0
    assert info["delivered"] * info["snd_mss"] >= info["bytes_acked"] * 0.99
    assert 0 < info["rtt"] < 1_000_000 and info["min_rtt"] <= info["rtt"]


def test_qdisc_dump_matches_tc(fixtures):
    qdiscs = netlink.decode_qdisc_dump([(fixtures / "netlink" / "qdisc.bin").read_bytes()])
    tc = (fixtures / "netlink" / "tc.txt").read_text()
    root = [q for q in qdiscs if q["kind"] == "tbf"]
    leaf = [q for q in qdiscs if q["kind"] == "bfifo"]
    assert len(root) == 1 and len(leaf) == 1
    assert root[0]["handle"] == "1:0" and root[0]["parent"] == "root"
    assert leaf[0]["handle"] == "10:0" and leaf[0]["parent"] == "1:1"
    assert leaf[0]["ifindex"] == root[0]["ifindex"]
    sent = [int(x) for x in re.findall(r"Sent (\d+) bytes", tc)]
    # tc ran after the dump: its counters are ahead by at most a second at 100 Mbit/s
    assert 0 <= sent[0] - root[0]["bytes"] <= 12_500_000
    assert root[0]["packets"] > 0 and root[0]["bytes"] / root[0]["packets"] <= 1514


def test_truncated_tcp_info_decodes_the_fields_present():
    full = struct.pack("=8B", 1, 0, 0, 0, 0, 7, 0x97, 1) + struct.pack("=5I", 200000, 40000, 1448, 536, 12)
    info = netlink.decode_tcp_info(full)
    assert info["state"] == 1 and info["snd_mss"] == 1448 and info["unacked"] == 12
    assert info["snd_wscale"] == 7 and info["rcv_wscale"] == 9 and info["delivery_rate_app_limited"] == 1
    assert "sacked" not in info


def test_full_tcp_info_decodes_each_field_at_its_uapi_offset():
    """struct tcp_info of Linux 6.1 (include/uapi/linux/tcp.h): 232 bytes; each value packed at
    its offset in that header, so a field decoded from the wrong place shows."""
    offsets = {"rto": (8, "I"), "snd_mss": (16, "I"), "rtt": (68, "I"), "rttvar": (72, "I"),
               "snd_cwnd": (80, "I"), "rcv_space": (96, "I"), "total_retrans": (100, "I"),
               "pacing_rate": (104, "Q"), "bytes_acked": (120, "Q"), "bytes_received": (128, "Q"),
               "segs_out": (136, "I"), "notsent_bytes": (144, "I"), "min_rtt": (148, "I"),
               "delivery_rate": (160, "Q"), "busy_time": (168, "Q"), "delivered": (192, "I"),
               "bytes_sent": (200, "Q"), "bytes_retrans": (208, "Q"), "snd_wnd": (228, "I")}
    data = bytearray(232)
    expected = {}
    for k, (name, (offset, code)) in enumerate(sorted(offsets.items())):
        expected[name] = (k + 1) * 1_000_003 + (7 << 40 if code == "Q" else 0)
        struct.pack_into("=" + code, data, offset, expected[name])
    info = netlink.decode_tcp_info(bytes(data))
    assert {name: info[name] for name in expected} == expected
    # a kernel sending less (an older one): the fields up to min_rtt, none after
    short = netlink.decode_tcp_info(bytes(data[:152]))
    assert short["min_rtt"] == expected["min_rtt"] and "data_segs_in" not in short and "delivery_rate" not in short


def test_qdisc_dump_filtered_by_device_keeps_that_devices_qdiscs(fixtures):
    chunks = [(fixtures / "netlink" / "qdisc.bin").read_bytes()]
    every = netlink.decode_qdisc_dump(chunks)
    devices = {q["ifindex"] for q in every}
    assert len(devices) > 1
    for ifindex in devices:
        assert netlink.decode_qdisc_dump(chunks, ifindex) == [q for q in every if q["ifindex"] == ifindex]
    assert netlink.decode_qdisc_dump(chunks, max(devices) + 1) == []


def test_netlink_error_is_raised():
    err = struct.pack("=LHHLL", 36, netlink.NLMSG_ERROR, 0, 1, 0) + struct.pack("=i", -1) + bytes(16)
    assert list(netlink.iter_messages(err))[0][0] == netlink.NLMSG_ERROR
