"""Testbed capabilities: random loss, access links of their own rate, receivers without
delayed ACKs, large buffers (guest memory sized from the spec, checked before boot).

Spec checks, tc command lines and the memory check run without a testbed; two short
virtual-clock runs boot it (measured here: 21-35 s and 23-51 s, the longer while the
two cores also ran a pipeline; about 1.5 min for the file)."""
import json
import math
import pathlib
import stat

import pytest

from bbrlab.experiment import experiments, spec, units
from bbrlab.host import resources
from bbrlab.guest import shaping, traffic
from bbrlab.data import fidelity, tidy
from bbrlab.host.backends import BackendError, uml
from conftest import FIXTURES, cli, goodput_by_flow, write_spec

CAPABILITIES = FIXTURES / "capabilities"     # the booted tests' specs (bench/testbed_facts.py boots them too)
BASE = {"name": "cap", "duration_s": 10, "bottleneck": {"rate_mbps": 10, "buffer_bdp": 1.5},
        "flows": [{"cc": "bbr", "rtt_ms": 20}, {"cc": "cubic", "rtt_ms": 20}]}


def job_of(**over):
    return spec.expand(spec.resolve(spec.deep_merge(BASE, over)))[0]


# --- spec fields --------------------------------------------------------------------------

@pytest.mark.parametrize("over, field", [
    ({"bottleneck": {"loss_rate": 1.0}}, "bottleneck.loss_rate"),
    ({"bottleneck": {"loss_rate": -0.1}}, "bottleneck.loss_rate"),
    ({"access_rate_mbps": 0}, "access_rate_mbps"),
    ({"delayed_ack": "no"}, "delayed_ack"),
    ({"bottleneck": {"loss_rate": 0.01}, "rtt_on": "data"}, "bottleneck.loss_rate"),
    ({"access_rate_mbps": 100, "rtt_on": "sender", "sender_qdisc": "none"}, "access_rate_mbps"),
])
def test_bad_capability_fields_name_file_and_field(over, field):
    with pytest.raises(spec.SpecError, match=rf"^my\.yaml: {field.replace('.', '[.]')}: "):
        spec.resolve(spec.deep_merge(BASE, over), source="my.yaml")


def test_bad_per_flow_access_rate_names_the_flow():
    raw = spec.deep_merge(BASE, {"rtt_on": "sender", "sender_qdisc": "none"})
    raw["flows"][1]["access_rate_mbps"] = 5
    with pytest.raises(spec.SpecError, match=r"^s\.yaml: flows\.2\.access_rate_mbps: needs rtt_on"):
        spec.resolve(raw, source="s.yaml")


def test_access_rate_applies_to_every_flow_unless_a_flow_has_its_own():
    raw = spec.deep_merge(BASE, {"access_rate_mbps": 100})
    raw["flows"][1]["access_rate_mbps"] = 4
    flows = spec.expand(spec.resolve(raw))[0]["flows"]
    assert [f["access_rate_mbps"] for f in flows] == [100, 4]
    assert job_of()["flows"][0]["access_rate_mbps"] is None   # unset: no access shaper (every field is filled)


def test_capability_fields_sweep():
    raw = spec.deep_merge(BASE, {"bottleneck": {"loss_rate": 0}, "delayed_ack": True,
                                 "sweep": {"bottleneck.loss_rate": [0.0001, 0.01], "delayed_ack": [True, False]}})
    runs = spec.expand(spec.resolve(raw))
    assert {(r["bottleneck"]["loss_rate"], r["delayed_ack"]) for r in runs} == {
        (0.0001, True), (0.0001, False), (0.01, True), (0.01, False)}
    assert len({r["point_label"] for r in runs}) == 4, [r["point_label"] for r in runs]


# --- tc and ip command lines --------------------------------------------------------------

def test_access_link_is_a_token_bucket_with_the_pacing_qdisc_under_it():
    fq = shaping.access_link("snd1-eth0", 100, "fq")
    assert fq[0][:8] == ["tc", "qdisc", "replace", "dev", "snd1-eth0", "root", "handle", "1:"]
    assert fq[0][8:12] == ["tbf", "rate", "100000000bit", "burst"]
    assert fq[1] == ["tc", "qdisc", "add", "dev", "snd1-eth0", "parent", "1:1", "handle", "10:", "fq"]
    assert len(shaping.access_link("snd1-eth0", 100, "none")) == 1


def test_loss_netem_takes_a_fraction_and_a_seed_only_where_given():
    cmd, = shaping.netem_loss("sw2-eth2", 0.0001)
    assert cmd[cmd.index("loss"):cmd.index("loss") + 3] == ["loss", "random", "0.01%"]
    assert "seed" not in cmd
    assert shaping.netem_loss("sw2-eth2", 0.01, seed=7)[0][-2:] == ["seed", "7"]


def test_quickack_route():
    assert shaping.quickack_route("10.0.1.2", "rcv2-eth0") == [
        ["ip", "route", "add", "10.0.1.2/32", "dev", "rcv2-eth0", "quickack", "1"]]


# --- large buffers: guest memory --------------------------------------------------------------

def test_guest_memory_grows_with_the_buffer_and_the_cluster_asks_for_the_same():
    ordinary = job_of()
    assert resources.guest_mem_mb(ordinary) == 1024
    big = job_of(bottleneck={"rate_mbps": 100, "buffer_bdp": 128, "bdp_rtt_ms": 40},
                 flows=[{"cc": "bbr", "rtt_ms": 40}, {"cc": "cubic", "rtt_ms": 40}])
    assert big["bottleneck"]["buffer_bytes_resolved"] == 64_000_000
    assert units.window_bytes(big) == 64_500_000
    assert resources.guest_mem_mb(big) == 2048          # 1024 + 2 sockets x 2 x 4 windows, less the base
    bigger = job_of(bottleneck={"rate_mbps": 100, "buffer_bdp": 128},
                    flows=[{"cc": "bbr", "rtt_ms": 80}, {"cc": "cubic", "rtt_ms": 80}])
    assert bigger["bottleneck"]["buffer_bytes_resolved"] == 128_000_000
    assert resources.guest_mem_mb(bigger) == 3072
    for job in (ordinary, big, bigger):
        assert resources.mem_mb(job) == resources.HOST_SIDE_MB + resources.guest_mem_mb(job)
        cmd = uml.UmlBackend(kernel="/bin/true").command("/tmp/x", "virtual", "/tmp/u",
                                                          uml.UmlBackend().guest_mem_mb(job))
        assert f"mem={resources.guest_mem_mb(job)}M" in cmd


def test_memory_check_reads_memavailable(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  4000000 kB\nMemFree:  100 kB\nMemAvailable:  1200000 kB\n")
    backend = uml.UmlBackend(kernel="/bin/true")
    backend.check_job(job_of(), meminfo=meminfo)              # 1024 MB of 1171 MB available
    big = job_of(bottleneck={"rate_mbps": 100, "buffer_bdp": 128, "bdp_rtt_ms": 40})
    with pytest.raises(BackendError, match=r"cap/base: the testbed guest needs 2048 MB .* only 1171 MB available"):
        backend.check_job(big, meminfo=meminfo)


def test_socket_limits_cover_the_span_of_a_loss_recovery(tmp_path):
    """At Utsumi's deepest point (128 BDP, 80 ms: W = 129 MB) each socket may hold 8 W, so the
    receiver's advertised ceiling, as the socket_buffers check computes it from tcp_rmem, is the
    span of 4 W; a span TCP cannot advertise is refused before boot, naming the limit."""
    deep = job_of(bottleneck={"rate_mbps": 100, "buffer_bdp": 128},
                  flows=[{"cc": "cubic", "rtt_ms": 80}, {"cc": "bbr_fca", "rtt_ms": 80}])
    assert units.window_bytes(deep) == 129_000_000
    assert units.span_bytes(deep) == 516_000_000
    assert units.socket_buffer_bytes(deep) == 1_032_000_000
    assert units.tcp_memory_bytes(deep) == 2_064_000_000
    assert units.socket_buffer_bytes(deep) < 2**31                       # a sysctl int
    assert units.span_bytes(deep) <= units.MAX_TCP_WINDOW_BYTES
    ceiling = fidelity.window_ceiling_of(units.socket_buffer_bytes(deep), 1)
    assert ceiling == units.span_bytes(deep)
    units.check_span(deep)
    too_deep = job_of(bottleneck={"rate_mbps": 1000, "buffer_bdp": 120})     # 300 MB at 20 ms
    with pytest.raises(ValueError, match=r"cap/base: a window of 302.5 MB .* needs a receive window of 1210 MB"
                                         r" in loss recovery \(4 windows\), more than TCP can advertise \(1073\.73 MB\)"):
        units.check_span(too_deep)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  100000000 kB\nMemAvailable:  100000000 kB\n")
    with pytest.raises(BackendError, match="more than TCP can advertise"):
        uml.UmlBackend(kernel="/bin/true").check_job(too_deep, meminfo=meminfo)


def test_windows_up_to_8_mib_keep_the_sizing_the_archive_was_made_with():
    """The archived paper-profile runs (data/paper) were made with 4 W per socket (at least
    Mininet's 16 MiB, tune_tcp_memory never lowers) and a 4-W guest budget; the socket maxima
    change what flows see even where they never bind, so windows up to 8 MiB keep that sizing
    and the loss-recovery sizing starts above (units.EARLIER_SIZING_MAX_WINDOW_BYTES)."""
    def job_with_window(buffer_bytes):
        raw = dict(BASE, bottleneck={"rate_mbps": 100, "buffer_bytes": buffer_bytes},
                   flows=[{"cc": "cubic", "rtt_ms": 40}, {"cc": "bbr", "rtt_ms": 40}])
        return spec.expand(spec.resolve(raw))[0]
    bdp = units.bdp_bytes(100, 40)
    at = job_with_window(8 * 2**20 - bdp)
    assert units.window_bytes(at) == 8 * 2**20
    assert units.socket_buffer_bytes(at) == units.tcp_memory_bytes(at) == 4 * 8 * 2**20
    above = job_with_window(8 * 2**20 - bdp + 1)
    assert units.socket_buffer_bytes(above) == 8 * units.window_bytes(above)
    assert units.tcp_memory_bytes(above) == 16 * units.window_bytes(above)
    # Kim et al.'s Fig. 3 at 100 Mbit/s, as archived: 4 W = 11 MB, under Mininet's 16 MiB (kept)
    repo = pathlib.Path(__file__).resolve().parents[1]
    kim = [j for j in spec.expand(spec.load(repo / "mininet/specs/kim2019/kim2019_fig03.yaml", profile="paper"))
           if j["bottleneck"]["rate_mbps"] == 100][0]
    assert units.socket_buffer_bytes(kim) == 4 * units.window_bytes(kim) == 11_000_000



def test_every_run_of_the_four_papers_before_utsumi_keeps_the_earlier_sizing():
    """docs/specs.md: every paper-profile run of Ma et al., Kim et al., Yang et al. and Tang has a
    window W of at most 8 MiB, so all keep the sizing their archived runs were made with; the
    largest is Ma et al.'s Fig. 3 at 1 Gbit/s (the BDP of 1000 Mbit/s x 50 ms, 6.25 MB, + its 2-MB
    buffer: 8.25 MB)."""
    repo = pathlib.Path(__file__).resolve().parents[1]
    table = experiments.load(repo)[0]
    windows = {(name, j["point"]): units.window_bytes(j)
               for name, e in table.items() if e.paper in ("ma2019", "kim2019", "yang2019", "tang")
               and "paper" in e.profiles
               for j in spec.expand(spec.load(repo / e.spec, profile="paper"))}
    assert max(windows.values()) <= units.EARLIER_SIZING_MAX_WINDOW_BYTES == 8 * 2**20
    assert max(windows, key=windows.get) == ("ma2019_fig03", "rate_mbps=1000")
    assert max(windows.values()) == 8_250_000

def test_a_buffer_the_host_cannot_hold_fails_before_boot(tmp_path):
    """A 100-GB buffer: the run is refused with the reason, and the kernel is never started
    (a stand-in kernel that would leave a mark)."""
    mark = tmp_path / "booted"
    fake = tmp_path / "linux"
    fake.write_text(f"#!/bin/sh\ntouch {mark}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    spec_file = write_spec(tmp_path / "huge.yaml", """
name: huge
duration_s: 5
bottleneck: {rate_mbps: 100, buffer_bytes: 100000000000}
flows:
  - {cc: bbr, rtt_ms: 40}
""")
    res = cli("run", spec_file, "--out", tmp_path / "out", "--kernel", fake)
    assert res.returncode != 0
    assert "huge/base: the testbed guest needs" in res.stderr and "MemAvailable" in res.stderr, res.stderr
    assert "nothing was booted" in res.stderr
    assert not mark.exists()
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*"))


# --- booted ---------------------------------------------------------------------------------

def _last_info(raw, name, flow, local, counter):
    """The counters of the connection's last sample that has them (fidelity.with_info)."""
    series = tidy.data_socket_series(tidy.read_jsonl(raw / name), traffic.port(flow), local=local, counter=counter)
    return fidelity.with_info(series)[-1][1]["info"]


def test_random_loss_and_receivers_without_delayed_acks(tmp_path, kernel):
    """1 % loss after the bottleneck, receivers with quickack, 5 s on 20 Mbit/s (about 8000
    packets): the loss netem's drops are within 4 standard deviations of the binomial count
    for the packets it saw, it saw the data segments only (no ACKs), and the receiver sent
    one segment per data segment. Measured: 21-35 s."""
    spec_file = write_spec(tmp_path / "lossack.yaml", (CAPABILITIES / "lossack.yaml").read_text())
    res = cli("run", spec_file, "--out", tmp_path / "out", "--kernel", kernel)
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = tmp_path / "out" / "lossack" / "base" / "rep1"
    raw = run_dir / "raw"
    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["fidelity"]["valid"], summary["fidelity"]
    seen, dropped = fidelity.loss_counts(raw)
    p = 0.01
    assert seen > 5000
    assert abs(dropped - seen * p) <= 4 * math.sqrt(seen * p * (1 - p)), (dropped, seen)
    # data direction only: the netem saw the sender's data segments and no ACKs (there are as many
    # as data segments, so with them it would see twice as many). Beyond the data socket's last
    # sampled count it also sees what the sender sent after that sample and the control
    # connection's and handshakes' packets: allowed, up to one sample interval (0.1 s) at the link
    # rate, 167 packets of 1500 bytes (a run has shown 75).
    sender = _last_info(raw, "sockets_snd1.jsonl", 1, False, "bytes_acked")
    one_interval = math.ceil(20e6 * 0.1 / (1500 * 8))
    assert 0.95 * sender["data_segs_out"] <= seen <= sender["data_segs_out"] + one_interval, (seen, sender)
    assert sender["total_retrans"] >= 0.8 * dropped
    # one ACK per data segment (the receiver's socket counters at the end of the run)
    receiver = _last_info(raw, "sockets_rcv1.jsonl", 1, True, "bytes_received")
    assert receiver["segs_out"] >= 0.98 * receiver["data_segs_in"], receiver
    names = {c["name"] for c in summary["fidelity"]["checks"]}
    assert {"random_loss", "delayed_ack"} <= names
    timeline = json.loads((raw / "timeline.json").read_text())
    assert timeline["loss_seeded"] is False          # Linux 6.1's netem has no seed
    assert summary["testbed"]["guest_mem_mb"] == 1024


def test_access_links_bound_a_lone_flow(tmp_path, kernel):
    """10 Mbit/s bottleneck; a lone CUBIC flow behind a 100 Mbit/s access link (0-4 s) is bounded
    by the bottleneck, one behind a 4 Mbit/s access link (4-8 s) by its access link. Also the
    contrast to the test above: with delayed ACKs (the default) a receiver sends about one
    segment per two data segments. Measured: 23-51 s."""
    spec_file = write_spec(tmp_path / "access.yaml", (CAPABILITIES / "access.yaml").read_text())
    res = cli("run", spec_file, "--out", tmp_path / "out", "--kernel", kernel)
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = tmp_path / "out" / "access" / "base" / "rep1"
    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["fidelity"]["valid"], summary["fidelity"]
    fast = goodput_by_flow(run_dir, 1, 4)["1"]
    slow = goodput_by_flow(run_dir, 5, 8)["2"]
    assert 0.9 * units.goodput_ceiling_mbps(10) <= fast <= units.goodput_ceiling_mbps(10) * 1.02, fast
    assert 0.9 * units.goodput_ceiling_mbps(4) <= slow <= units.goodput_ceiling_mbps(4) * 1.02, slow
    raw = run_dir / "raw"
    for flow in (1, 2):
        receiver = _last_info(raw, f"sockets_rcv{flow}.jsonl", flow, True, "bytes_received")
        assert receiver["segs_out"] <= 0.75 * receiver["data_segs_in"], receiver


def test_a_deep_buffer_lets_a_window_grow_past_mininets_socket_limits(tmp_path, kernel):
    """One CUBIC flow, 100 Mbit/s, 40 ms, 64 BDP (32 MB): in 7 s of slow start its window grows
    past 8 MiB, which is all a receiver could advertise with Mininet's socket maximum of 16 MiB
    (mininet.util.fixLimits, which overwrote the guest's raised limits until the guest raised
    them in every host's namespace after building the dumbbell); the run is valid, its sender
    not bounded by the receive window. Measured: about 65 s."""
    spec_file = write_spec(tmp_path / "deep.yaml", (CAPABILITIES / "deep.yaml").read_text())
    res = cli("run", spec_file, "--out", tmp_path / "out", "--kernel", kernel)
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = tmp_path / "out" / "deep" / "base" / "rep1"
    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["fidelity"]["valid"], summary["fidelity"]
    series = tidy.data_socket_series(tidy.read_jsonl(run_dir / "raw" / "sockets_snd1.jsonl"), traffic.port(1),
                                     local=False, counter="bytes_acked")
    largest = max(info["info"].get("snd_wnd", 0) for _t, info in series)
    assert largest > 8 * 2**20 * 1.05, largest


def test_loss_check_holds_the_drop_count_to_the_binomial_tolerance(tmp_path):
    job = job_of(bottleneck={"rate_mbps": 10, "buffer_bdp": 1.5, "loss_rate": 0.01})

    def verdict(sent, dropped):
        (tmp_path / "loss.json").write_text(json.dumps([{"flow": 1, "dev": "sw2-eth2", "tc":
            f"qdisc netem 3: root refcnt 2 limit 100000 loss 1%\n Sent 1 bytes {sent} pkt (dropped {dropped},"
            " overlimits 0 requeues 0)\n"}]))
        return fidelity.loss_check(tmp_path, job)

    assert verdict(9900, 100)["ok"]                   # 100 of 10000, sigma 9.95
    assert verdict(9861, 139)["ok"]                   # 3.9 sigma
    assert not verdict(9859, 141)["ok"]               # 4.1 sigma
    assert not verdict(9800, 200)["ok"]               # twice the rate
    (tmp_path / "loss.json").unlink()
    assert not fidelity.loss_check(tmp_path, job)["ok"]


def test_socket_buffer_check(tmp_path):
    """A flow held by a host's socket buffer limits makes a run invalid: more than 5 % of its busy
    time limited by the receive window while the advertised window stood at the ceiling its
    receiver's tcp_rmem allows (Mininet's 16-MiB maximum: 8 MiB), or by its send buffer. Time
    limited by a window below the ceiling (autotuning in slow start) is noted, not failed; a run
    that did not record its limits is judged on the limited time alone."""
    job = job_of(flows=[{"cc": "cubic", "rtt_ms": 40}])

    def verdict(rwnd_limited_us, peak_wnd, rmem_max=16 * 2**20, sndbuf_limited_us=0):
        sock = {"src": "10.0.1.1", "sport": 40000, "dst": "10.0.2.1", "dport": traffic.port(1),
                "info": {"bytes_acked": 10**9, "busy_time": 10_000_000, "rwnd_limited": rwnd_limited_us,
                         "sndbuf_limited": sndbuf_limited_us, "snd_wnd": peak_wnd}}
        (tmp_path / "sockets_snd1.jsonl").write_text(json.dumps({"t": 1.0, "socks": [sock]}) + "\n")
        limits = tmp_path / "socket_limits.json"
        if rmem_max is None:
            limits.unlink(missing_ok=True)
        else:
            limits.write_text(json.dumps([{"flow": 1, "tcp_rmem": [10240, 87380, rmem_max], "tcp_adv_win_scale": 1}]))
        return fidelity.socket_buffer_checks(tmp_path, job)[0]["ok"]

    assert verdict(280_000, 8_387_584)                        # 2.8 %: fine wherever the window stood
    assert not verdict(600_000, 8_387_584)                    # 6 % at the 8-MiB ceiling (the Mininet cap)
    assert verdict(600_000, 5_000_000)                        # 6 % below it: autotuning, not a limit
    assert verdict(600_000, 8_387_584, rmem_max=130_000_000)  # a raised ceiling (65 MB) far above
    assert not verdict(0, 5_000_000, sndbuf_limited_us=600_000)
    assert not verdict(600_000, 5_000_000, rmem_max=None)    # no limits recorded: the limited time decides
    assert verdict(280_000, 5_000_000, rmem_max=None)
