"""bbr2/bbr3 in the testbed: their mechanisms as the drafts specify them, seen in the sampled state.

draft-cardwell-iccrg-bbr-congestion-control-02 (v2) and draft-ietf-ccwg-bbr (v3): ProbeBW cycles
through DOWN, CRUISE, REFILL and UP; ProbeRTT holds cwnd at half the estimated BDP
(BBRProbeRTTCwndGain = 0.5; BBR v1 held 4 packets); a probe whose loss rate exceeds
BBRLossThresh = 2 % sets (cuts) inflight_hi. The modules report their state in the tidy `state`
column and inflight_hi in `bbr_inflight_hi_pkts` (kernel/variants/README.md).

Short runs on the virtual clock, sampled every 10 ms (the shallow-buffer ones every 100 ms):
- lone: one bbr2 flow alone, 20 Mbit/s, 40 ms, 2-BDP buffer, 12 s (ProbeRTT comes after 5 s);
- loss: a bbr2 flow and a bbr3 flow whose loss threshold is set to 100 % (loss_thresh_bp=10000:
  the probe is never "too high", a deliberately wrong module), 3 % random loss, 0.5-BDP buffer, 10 s;
- shallow: four bbr, four bbr2, four bbr3 flows (three runs of 10 s), 0.1-BDP buffer: v2/v3
  retransmit far less than v1 (the shallow-buffer case of Google's nsperf scripts).

The probe spacing (the lone flow's waits from DOWN to REFILL) is the drafts' 2-3 s.

Mutations tried (2026-11-26): probe_rtt_cwnd_gain_pct=1 (ProbeRTT at 4 packets, as BBR v1) fails
the ProbeRTT test (cwnd 4 against a 68-packet BDP); down_gain_pct=75 fails the cycle test's gains;
the loss test carries its own wrong module (the bbr3 flow above).

The modules need the testbed kernel patch kernel/patches/10-tcp-rate-tx-in-flight.patch: without it
in the kernel tree the tests are skipped, naming it. BBRLAB_TEST_KERNEL=<tree>/linux runs them against
another kernel tree built by kernel/build-uml.sh <tree> (modules are then built against <tree>/src).
"""
import csv
import os
import pathlib
import statistics

import pytest

from conftest import cli, write_spec

CORE_PATCH = "10-tcp-rate-tx-in-flight.patch"
INTERVAL_S = 0.01
RATE_MBPS, RTT_MS = 20, 40
PROBE_BW = ("probe_bw_down", "probe_bw_cruise", "probe_bw_refill", "probe_bw_up")
# The drafts' ProbeBW cycle: DOWN -> CRUISE -> REFILL -> UP -> DOWN; DOWN goes straight to
# REFILL when it is time to probe before inflight drained (BBRCheckTimeToProbeBW() in DOWN).
NEXT = {"probe_bw_down": {"probe_bw_cruise", "probe_bw_refill"}, "probe_bw_cruise": {"probe_bw_refill"},
        "probe_bw_refill": {"probe_bw_up"}, "probe_bw_up": {"probe_bw_down"}}

LONE = f"""
name: bbr2_lone
duration_s: 12
clock: virtual
sample_interval_s: {INTERVAL_S}
queue_sample_interval_s: {INTERVAL_S}
bottleneck: {{rate_mbps: {RATE_MBPS}, buffer_bdp: 2}}
flows:
  - {{cc: bbr2, rtt_ms: {RTT_MS}}}
"""
LOSS = f"""
name: bbr2_loss
duration_s: 10
clock: virtual
sample_interval_s: {INTERVAL_S}
queue_sample_interval_s: {INTERVAL_S}
bottleneck: {{rate_mbps: {RATE_MBPS}, buffer_bdp: 0.5, loss_rate: 0.03}}
flows:
  - {{cc: bbr2, rtt_ms: {RTT_MS}}}
  - {{cc: bbr3, rtt_ms: {RTT_MS}, module_params: {{loss_thresh_bp: 10000}}}}
"""

# Google's nsperf "shallow" case: several flows, a 0.1-BDP buffer; BBR v1 keeps its inflight at
# 2 BDP whatever the loss, v2/v3 bound it by the loss rate (inflight_hi, inflight_lo). 30 s, so that
# the rates measure that steady state and not Startup's losses: in 10-s runs they weighed enough
# that bbr3 reached 4.05 % against bbr's 14.9 % at seed 11 (bench/testbed_seeds.py), a ratio of 0.27.
SHALLOW = """
name: shallow_{cc}
duration_s: 30
clock: virtual
sample_interval_s: 0.1
bottleneck: {{rate_mbps: {rate}, buffer_bdp: 0.1}}
flows:
  - {{cc: {cc}, rtt_ms: {rtt}, count: 4}}
"""


@pytest.fixture(scope="module")
def bbr2_kernel(request):
    """The kernel binary to boot: BBRLAB_TEST_KERNEL, or the testbed kernel (`kernel` fixture);
    skipped when its tree was not built with the core patch."""
    path = os.environ.get("BBRLAB_TEST_KERNEL")
    path = pathlib.Path(path) if path else request.getfixturevalue("kernel")
    patches = pathlib.Path(path).resolve().parent / "src.patches"
    if not (patches / CORE_PATCH).is_file():
        pytest.skip(f"the kernel {path} was built without kernel/patches/{CORE_PATCH} "
                    f"(bbr2/bbr3 need it): rebuild it with kernel/build-uml.sh")
    return path


def run_spec(kernel, tmp_path_factory, name, text):
    out = tmp_path_factory.mktemp(name)
    res = cli("run", write_spec(out / "spec.yaml", text), "--out", out, "--kernel", kernel)
    assert res.returncode == 0, res.stdout + res.stderr
    with open(out / name / "base" / "rep1" / "tidy" / "tcp.csv") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def lone(bbr2_kernel, tmp_path_factory):
    return run_spec(bbr2_kernel, tmp_path_factory, "bbr2_lone", LONE)


@pytest.fixture(scope="module")
def loss(bbr2_kernel, tmp_path_factory):
    return run_spec(bbr2_kernel, tmp_path_factory, "bbr2_loss", LOSS)


@pytest.fixture(scope="module")
def shallow(bbr2_kernel, tmp_path_factory):
    """{cc: retransmitted / delivered packets} of four flows of cc at a 0.1-BDP buffer."""
    out = {}
    for cc in ("bbr", "bbr2", "bbr3"):
        rows = run_spec(bbr2_kernel, tmp_path_factory, f"shallow_{cc}",
                        SHALLOW.format(cc=cc, rate=RATE_MBPS, rtt=RTT_MS))
        last = {r["flow"]: r for r in rows}
        retrans = sum(int(r["retrans_total"]) for r in last.values())
        delivered = sum(int(r["bytes_acked"]) // int(r["mss_bytes"]) for r in last.values())
        assert len(last) == 4 and delivered > 10000, (cc, len(last), delivered)
        out[cc] = retrans / delivered
    return out


def runs_of(rows):
    """[(state, [rows])] of consecutive samples in one state."""
    out = []
    for r in rows:
        if out and out[-1][0] == r["state"]:
            out[-1][1].append(r)
        else:
            out.append((r["state"], [r]))
    return out


def test_probe_bw_cycles_through_down_cruise_refill_up(lone):
    rows = [r for r in lone if r["flow"] == "1" and r["state"]]
    assert rows and rows[0]["state"] == "startup", rows[:3]
    seq = [s for s, _ in runs_of(rows)]
    print("states:", " ".join(seq))
    for a, b in zip(seq, seq[1:]):
        if a in NEXT and b in PROBE_BW:
            assert b in NEXT[a], f"{a} -> {b} is not a transition of the drafts' ProbeBW cycle: {seq}"
    # ProbeRTT resumes ProbeBW in CRUISE (BBRExitProbeRTT(): StartProbeBW_DOWN then _CRUISE)
    for a, b in zip(seq, seq[1:]):
        if a == "probe_rtt":
            assert b == "probe_bw_cruise", seq
    # at least two full cycles, each phase with the drafts' pacing gain
    ups = [i for i, s in enumerate(seq) if s == "probe_bw_up"]
    assert len(ups) >= 2, seq
    assert {"probe_bw_down", "probe_bw_cruise", "probe_bw_refill", "probe_bw_up"} <= set(seq), seq
    # (gains are reported in 1/256: 0.9 is 230/256)
    gains = {s: {round(float(r["bbr_pacing_gain"]), 2) for r in rows if r["state"] == s} for s in PROBE_BW}
    assert gains == {"probe_bw_down": {0.9}, "probe_bw_cruise": {1.0},
                     "probe_bw_refill": {1.0}, "probe_bw_up": {1.25}}, gains


def test_probe_spacing_is_the_drafts_2_to_3_seconds(lone):
    """BBRPickProbeWait() (both drafts): the next probe (REFILL) starts 2 s + U(0, 1 s) of wall clock after
    ProbeBW_DOWN started (ProbeBW's clock restarts there, and on leaving ProbeRTT), or after min(BDP in
    packets, 63) round trips if that comes first: here the BDP is 69 packets and a round at least 40 ms, so
    62-63 rounds take at least 2.48 s and the wall clock decides. Measured on the virtual clock from the
    sampled state of the lone flow, to within the 10-ms sampling. Measured 2026-11-28: 2.51 and 2.10 s (the
    first probe's DOWN lasted under one sample). A wait of 0.2-0.3 s, or a Reno bound of a few rounds, would
    put waits below 0.5 s (not tried on the testbed; the glue test of the same rule fails for it)."""
    rows = [r for r in lone if r["flow"] == "1" and r["state"]]
    runs = runs_of(rows)
    waits, clock = [], None
    for i, (st, rs) in enumerate(runs):
        t0 = float(rs[0]["t_s"])
        if st == "probe_bw_down" or (st == "probe_bw_cruise" and i and runs[i - 1][0] == "probe_rtt"):
            clock = t0
        elif st == "probe_bw_refill" and clock is not None:
            waits.append(round(t0 - clock, 3))
            clock = None
    print("waits from DOWN (or ProbeRTT's end) to REFILL, s:", waits)
    assert len(waits) >= 2, [s for s, _ in runs]
    assert all(2.0 - 2 * INTERVAL_S <= w <= 3.0 + 2 * INTERVAL_S for w in waits), waits


def test_probe_rtt_holds_half_the_bdp_not_four_packets(lone):
    rows = [r for r in lone if r["flow"] == "1"]
    probe = [r for r in rows if r["state"] == "probe_rtt"]
    assert len(probe) >= 10, "no ProbeRTT in 12 s (the drafts enter it after 5 s without a new min_rtt)"
    assert {r["bbr_cwnd_gain"] for r in probe} == {"0.5"}
    # the estimated BDP in packets from the module's own estimates at that time
    bdp = [float(r["bbr_bw_mbps"]) * 1e6 / 8 * float(r["bbr_min_rtt_ms"]) / 1e3 / int(r["mss_bytes"])
           for r in probe]
    # after the first ProbeRTT sample (cwnd is cut on the next ACKs)
    cwnd = [int(r["cwnd_pkts"]) for r in probe[2:]]
    ratio = statistics.median(c / b for c, b in zip(cwnd, bdp[2:]))
    print(f"ProbeRTT cwnd {statistics.median(cwnd)} packets, BDP {statistics.median(bdp):.1f}: ratio {ratio:.2f}")
    assert statistics.median(bdp) > 40           # a BDP where 0.5 BDP and 4 packets differ
    assert 0.4 <= ratio <= 0.6, ratio
    assert min(cwnd) > 8, cwnd


def test_loss_above_two_percent_in_a_probe_sets_inflight_hi(loss):
    steady = [r for r in loss if 3.0 < float(r["t_s"]) and r["state"].startswith("probe_bw")]
    by_flow = {f: [r for r in steady if r["flow"] == f] for f in ("1", "2")}
    assert all(len(v) > 100 for v in by_flow.values()), {f: len(v) for f, v in by_flow.items()}
    his = [int(r["bbr_inflight_hi_pkts"]) for r in by_flow["1"] if r["bbr_inflight_hi_pkts"]]
    bdp = RATE_MBPS * 1e6 / 8 * RTT_MS / 1e3 / 1500
    print(f"bbr2 inflight_hi: {len(his)} of {len(by_flow['1'])} samples, median {statistics.median(his) if his else None}"
          f" (path BDP {bdp:.0f} packets)")
    # the draft's module: 3 % random loss is above the 2 % threshold, so its probes set inflight_hi ...
    assert len(his) >= 0.9 * len(by_flow["1"]), len(his)
    # ... to a volume the path can hold (at most the BDP plus the 0.5-BDP buffer, with slack)
    assert statistics.median(his) <= 2 * bdp, his
    # and cwnd stays within it outside CRUISE (BBRBoundCwndForModel())
    for r in by_flow["1"]:
        if r["bbr_inflight_hi_pkts"] and r["state"] != "probe_bw_cruise":
            assert int(r["cwnd_pkts"]) <= int(r["bbr_inflight_hi_pkts"]) + 2, r
    # the same algorithm with the threshold at 100 % (a wrong threshold) never sets it
    assert not any(r["bbr_inflight_hi_pkts"] for r in by_flow["2"])


def test_shallow_buffer_retransmissions_far_below_bbr_v1(shallow):
    """Four flows, 0.1-BDP buffer: v2 and v3 retransmit at most a quarter of what v1 does (measured
    2026-11-26 in 30-s runs, seeds 1-12, the module with packet conservation ending after a round:
    bbr 13.3-19.5 %, bbr2 1.7-2.4 %, bbr3 2.1-2.8 %, ratios 0.11-0.18; bbr2 without its loss response,
    loss_thresh_bp=10000 beta_pct=100, 23 % at seed 1, which fails)."""
    print({cc: f"{rate:.2%}" for cc, rate in shallow.items()})
    assert shallow["bbr"] > 0.05, shallow            # the case is one where v1 loses a lot
    for cc in ("bbr2", "bbr3"):
        assert shallow[cc] <= 0.25 * shallow["bbr"], shallow
