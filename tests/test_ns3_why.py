"""Why ns-3's BBR leaves a lone flow at a few kbit/s where Linux's fills the link: the rate
sample's interval in ns-3 3.37's TcpRateLinux (bench/results/ns3-bbr-2026-11-23.md).

Linux (net/ipv4/tcp_rate.c) measures a delivery-rate sample over
max(send phase, ack phase), the ack phase running from the delivered-time stamp the
newest (s)acked packet took when it was sent (tp->delivered_mstamp, which
tcp_rate_skb_sent resets to the send time when nothing is in flight) to this ACK.
ns-3 3.37 resets the stamp the same way, but its ack phase runs from the stamp of the
packet the *previous* sample used (m_rateSample.m_priorTime before it is updated; ns-3
changed it in 3.41), and from time zero after a sample it invalidated. Two consequences,
each pinned on Tang's default setting (10 Mbit/s, 200 ms, 1.5 BDP, one flow):
- ns-3's own TcpBbr, after Startup's losses end in a retransmission timeout, takes
  samples whose interval is longer than the connection has existed (Linux invalidates
  them: their own interval is below min_rtt); ten quick rounds later they are its
  bandwidth estimate and the flow is paced at about 0.01 Mbit/s.
- Then with one packet in flight each sample spans the gap since the previous ACK plus
  one RTT (Linux's: that packet's RTT), so it reads 1/(gap + RTT) < the sending rate.
- The project's BBR, the same algorithm as Linux's, falls into the same trap; with the
  interval computed as Linux computes it (Ns3Backend(linux_rate_interval=True), an
  experiment switch) the same run fills the link as the kernel does (9.0 Mbit/s; Tang
  9.12).
- After the timeout the project's BBR stays in ns-3's loss state (CA_LOSS) for about
  19 s with a cwnd of 4: ns-3 3.37 reports a sample's losses as the change of the
  scoreboard's lost count, so every ACK that SACKs or acknowledges one of the segments
  the timeout marked lost counts as a new loss, and BBR's "cwnd - losses + acked"
  (Linux's bbr_set_cwnd) stays put; the ~340 segments that were really lost go out at
  4 per round trip. With Linux's count (Ns3Backend(linux_losses=True), an experiment
  switch) the cwnd grows on those ACKs and the state ends within 3.2 s.
- The pipeline's Linux rules (Ns3Backend(rules="linux"), `--config ns3_rules=linux`) put
  both together for `cc: bbr`: the project's BBR in place of TcpBbr, both switches on, and
  the lone flow fills the link where TcpBbr leaves it at 0.1 Mbit/s.
Five simulations, about 8 s of host CPU together.
"""
import json
import statistics

import pytest
import yaml

from bbrlab.experiment import spec
from bbrlab.host import runner
from bbrlab.host.backends import ns3_backend, ns3_trace
from conftest import goodput_by_flow
from test_ns3_backend import NS3_MISSING, needs_ns3

TANG = """
name: ns3why
duration_s: %(duration)d
sender_qdisc: fq
access_rate_mbps: 100
bottleneck: {rate_mbps: 10, buffer_bdp: 1.5}
flows:
  - {%(cc)s, rtt_ms: 200}
"""
TCPBBR = "cc: bbr"
PROJECT_BBR = "cc: bbq, module_params: {alpha_us: 10000000}"   # BBQ with rho = min_rtt: BBR v1
CA_LOSS = "4"          # TcpSocketState::TcpCongState_t
CWND_MIN_TARGET = 4    # BBR's cwnd floor (packets)
DELAYED_ACK_S = 0.040  # the receiver's delayed-ACK timer (dumbbell.cc: Linux's minimum)


def run(tmp_path_factory, cc, duration, name, **backend_args):
    job = spec.expand(spec.resolve(yaml.safe_load(TANG % {"cc": cc, "duration": duration})))[0]
    dest = tmp_path_factory.mktemp(name) / "run"
    summary = runner.execute(job, dest, "ns3", progress=lambda *_: None, cc_trace=True, **backend_args)
    assert summary["status"] == "ok"
    return dest, job


def trace(run_dir):
    return ns3_trace.rows(run_dir, 1)


def base_rtt_s(run_dir):
    """The path's RTT as ICMP measured it before the flow (raw/ping_1.txt)."""
    with open(run_dir / "raw" / "ping_1.txt") as f:
        times = [float(line.split("time=")[1].split()[0]) for line in f if "time=" in line]
    return min(times) / 1e3


@pytest.fixture(scope="module")
def tcpbbr(tmp_path_factory):
    if NS3_MISSING:
        pytest.skip(NS3_MISSING)
    return run(tmp_path_factory, TCPBBR, 11, "tcpbbr")


def loss_episode(rows):
    """The first CA_LOSS episode: its per-ACK rows and the first row after it."""
    start = next(i for i, r in enumerate(rows) if r["ca_state"] == CA_LOSS)
    end = next(i for i in range(start, len(rows)) if rows[i]["ca_state"] != CA_LOSS)
    return rows[start:end], rows[end]


@pytest.fixture(scope="module")
def project_bbr_linux_losses(tmp_path_factory):
    if NS3_MISSING:
        pytest.skip(NS3_MISSING)
    return run(tmp_path_factory, PROJECT_BBR, 10, "bbrlosses", linux_losses=True)


@pytest.fixture(scope="module")
def project_bbr(tmp_path_factory):
    if NS3_MISSING:
        pytest.skip(NS3_MISSING)
    return {fix: run(tmp_path_factory, PROJECT_BBR, 32, f"bbr{int(fix)}", linux_rate_interval=fix)
            for fix in (False, True)}


@needs_ns3
def test_tcpbbr_takes_samples_longer_than_the_connection(tcpbbr):
    """A sample's interval cannot begin before the flow did (Linux's starts at a send or
    an ACK of this connection). ns-3's TcpBbr takes such samples right after the
    retransmission timeout, and within a second its pacing rate is below 1 % of the link."""
    run_dir, job = tcpbbr
    rows = trace(run_dir)
    lead = ns3_backend.lead_s(job)
    rto = next(float(r["t_s"]) for r in rows if r["ca_state"] == CA_LOSS)
    impossible = [r for r in rows if r["valid"] == "1"
                  and int(r["ns3_interval_us"]) / 1e6 > float(r["t_s"]) - lead]
    after_rto = [r for r in impossible if float(r["t_s"]) >= rto]
    assert len(after_rto) >= 3, (rto, [(r["t_s"], r["ns3_interval_us"]) for r in impossible])
    # they are TcpBbr's samples (the rate it takes) and become its estimate
    first = float(after_rto[0]["t_s"])
    for r in after_rto:
        delivered_bits = float(r["delivered_pkts"]) * 1448 * 8
        assert int(r["delivery_rate_bps"]) == pytest.approx(delivered_bits / (int(r["ns3_interval_us"]) / 1e6),
                                                            rel=0.02)
    later = [int(r["pacing_bps"]) for r in rows if first + 1 <= float(r["t_s"])]
    assert later and max(later) < 0.01 * 10e6, later[:5]
    assert goodput_by_flow(run_dir, first + 1 - lead, 1e9)["1"] < 0.1


@needs_ns3
def test_tcpbbr_isolated_packet_sample_spans_the_gap_and_one_rtt(tcpbbr):
    """With one packet in flight Linux's sample spans that packet's RTT (delivered_mstamp
    reset at its send). ns-3's spans the time since the previous ACK plus one RTT: the
    previous packet's send, where the previous sample's interval began. (Were the cause
    a missing reset, it would span only the time since the previous ACK.)"""
    run_dir, job = tcpbbr
    rows = [r for r in trace(run_dir) if r["valid"] == "1"]
    base = base_rtt_s(run_dir)
    isolated = [(p, r) for p, r in zip(rows, rows[1:])
                if p["delivered_pkts"] == r["delivered_pkts"] == "1.000" and p["inflight"] == r["inflight"] == "0"]
    assert len(isolated) >= 3, len(isolated)
    for p, r in isolated:
        since_prev_ack = float(r["t_s"]) - float(p["t_s"])
        rtt = int(r["ns3_interval_us"]) / 1e6 - since_prev_ack
        # one RTT of an isolated packet: the path plus at most the delayed-ACK timer and queueing
        assert base <= rtt <= base + DELAYED_ACK_S + 0.005, (r["t_s"], rtt, base)
        assert since_prev_ack > 2 * rtt
        # so the rate read is the sending rate over (gap + RTT), below what was sent
        assert int(r["delivery_rate_bps"]) < 1448 * 8 / since_prev_ack


@needs_ns3
def test_project_bbr_escapes_only_with_linux_intervals(project_bbr):
    """The project's BBR (Linux's algorithm) alone on Tang's link: with ns-3's intervals it
    stays at a few packets per RTT, each sample one inter-ACK gap too long, which cancels
    the 1.25 probe (x 0.99 pacing margin); with Linux's it fills the link as the kernel
    does (9.0 Mbit/s) and Tang reports (9.12, over 90 % utilisation)."""
    (off_dir, job), (on_dir, _) = project_bbr[False], project_bbr[True]
    lead = ns3_backend.lead_s(job)
    off = goodput_by_flow(off_dir, 26, 32)["1"]
    on = goodput_by_flow(on_dir, 26, 32)["1"]
    assert off < 1.0, off
    assert on > 9.0, on
    # the trap: few packets per sample, ns-3's interval about one inter-ACK gap (1/4) longer
    # than Linux's, which cancels the probe's 1.25 x 0.99
    late = [int(r["ns3_interval_us"]) / int(r["linux_interval_us"]) for r in trace(off_dir)
            if float(r["t_s"]) > lead + 20 and r["ns3_interval_us"] != "-1"]
    assert len(late) > 50 and statistics.median(late) >= 1.2, (len(late), statistics.median(late))


@needs_ns3
def test_linux_rate_interval_is_opt_in_and_recorded(project_bbr):
    """The switch is off unless asked for, and a run that used it says so in raw/ns3.conf."""
    assert ns3_backend.Ns3Backend().linux_rate_interval is False
    for fix, (run_dir, _) in project_bbr.items():
        conf = (run_dir / "raw" / "ns3.conf").read_text().splitlines()
        assert ("linux_rate_interval=1" in conf) is fix, conf


@needs_ns3
def test_project_bbr_loss_state_is_held_by_ns3_loss_count(project_bbr, project_bbr_linux_losses):
    """Why the project's BBR (Linux's algorithm) stays in CA_LOSS for about 19 s after
    Startup's timeout. ns-3 leaves CA_LOSS at the first ACK at or above the highest
    sequence sent before the timeout (m_recover). The timeout marks every unsacked
    segment lost. ns-3 3.37 passes as the sample's losses the change of the lost count
    over the ACK, so each ACK that SACKs or acknowledges one of them reports a loss for
    each packet it delivers, and BBR's cwnd (cwnd - losses, then + acked, floor 4) does
    not grow. The segments really lost go out at the rate 4 packets per round trip
    allows. Linux counts only packets an ACK newly marks lost (tp->lost - lost): zero on
    these ACKs, so its cwnd grows by what they deliver. With that count the state ends
    within 3.2 s."""
    off_dir, _ = project_bbr[False]
    rows = trace(off_dir)
    episode, after = loss_episode(rows)
    first = episode[0]
    recover = int(first["high_seq"])          # m_recover = the highest sequence sent at the timeout
    mss = 1460
    outstanding = (recover - int(first["ack_seq"])) // mss
    assert outstanding > 1000, outstanding
    assert int(first["lost_out"]) > 700, first   # the timeout marked the unsacked ones lost
    # the state lasts until the cumulative ACK reaches m_recover, and that is long
    duration = float(after["t_s"]) - float(first["t_s"])
    assert all(int(r["ack_seq"]) < recover for r in episode)
    assert int(after["ack_seq"]) >= recover
    assert duration > 12, duration
    # ns-3's losses on every ACK: the fall of the lost count (never a rise: nothing newly
    # marked, Linux's count would be 0), equal to the packets the ACK delivered
    pairs = list(zip(episode, episode[1:]))
    assert all(int(r["losses"]) == int(p["lost_out"]) - int(r["lost_out"]) for p, r in pairs)
    delivering = [r for r in episode if int(r["acked"]) > 0]
    assert sum(r["losses"] == r["acked"] for r in delivering) >= 0.99 * len(delivering), len(delivering)
    # so the cwnd stays at BBR's floor
    cwnds = sorted(int(r["cwnd"]) for r in episode)
    assert cwnds[len(cwnds) // 2] <= CWND_MIN_TARGET + 1, cwnds[len(cwnds) // 2]
    # and the segments still lost once the cumulative ACK first moved (the others had
    # arrived) go out at one per ACK: their count times the ACK spacing is the rest of
    # the state's length
    moved = next(r for r in episode if int(r["ack_seq"]) > int(first["ack_seq"]))
    rest = [r for r in episode if float(r["t_s"]) > float(moved["t_s"])]
    retransmitted = int(after["retx_segs"]) - int(moved["retx_segs"])
    gaps = sorted(float(b["t_s"]) - float(a["t_s"]) for a, b in zip(rest, rest[1:]))
    left = float(after["t_s"]) - float(moved["t_s"])
    assert retransmitted > 250, retransmitted
    assert retransmitted * gaps[len(gaps) // 2] == pytest.approx(left, rel=0.2), (retransmitted, gaps[len(gaps) // 2], left)
    # Linux's loss count: the same timeout, no losses on those ACKs, the cwnd grows
    # and the state ends soon
    on_dir, _ = project_bbr_linux_losses
    episode, after = loss_episode(trace(on_dir))
    assert sum(int(r["losses"]) > 0 for r in episode) <= 0.01 * len(episode)
    assert max(int(r["cwnd"]) for r in episode) > 30
    assert float(after["t_s"]) - float(episode[0]["t_s"]) < 3.2
    assert (on_dir / "raw" / "ns3.conf").read_text().splitlines().count("linux_losses=1") == 1
    assert ns3_backend.Ns3Backend().linux_losses is False


@pytest.fixture(scope="module")
def linux_rules(tmp_path_factory):
    if NS3_MISSING:
        pytest.skip(NS3_MISSING)
    return run(tmp_path_factory, TCPBBR, 32, "linuxrules", rules="linux")


@needs_ns3
def test_linux_rules_run_cc_bbr_as_the_project_bbr_with_both_switches(linux_rules, tcpbbr):
    """`cc: bbr` under the Linux rules: the project's BBR v1 (its per-ACK records carry BBR's
    mode and gain cycle, which TcpBbr's do not), Linux's intervals and loss count on, the
    rules recorded; and the lone flow on Tang's link fills it (Tang: 9.12 Mbit/s) where
    ns-3's TcpBbr, the stock rules' `cc: bbr`, is paced at under 1 % of it."""
    run_dir, job = linux_rules
    conf = (run_dir / "raw" / "ns3.conf").read_text().splitlines()
    assert {"project_bbr=1", "linux_rate_interval=1", "linux_losses=1"} <= set(conf), conf
    assert json.loads((run_dir / "run.json").read_text())["testbed"]["ns3_rules"] == "linux"
    rows = trace(run_dir)
    assert "mode" in rows[0] and "cycle_idx" in rows[0] and "state" not in rows[0]
    assert {r["mode"] for r in rows} >= {"0", "2"}          # Startup, PROBE_BW
    assert goodput_by_flow(run_dir, 26, 32)["1"] > 9.0
    stock_dir, _ = tcpbbr
    stock_conf = (stock_dir / "raw" / "ns3.conf").read_text().splitlines()
    assert "project_bbr=1" not in stock_conf and "state" in trace(stock_dir)[0]
    assert json.loads((stock_dir / "run.json").read_text())["testbed"]["ns3_rules"] == "ns3"


def test_unknown_rules_are_refused():
    with pytest.raises(ns3_backend.BackendError, match="rules 'linx' unknown"):
        ns3_backend.Ns3Backend(rules="linx")
