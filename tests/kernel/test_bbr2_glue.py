"""bbr2/bbr3's kernel glue on the host: what bbr2_main.h reads from the socket and the ACK's rate sample,
and what it does with bbr2_math.h's decisions (bounds, ProbeBW's phases, ProbeRTT, pacing rate, cwnd).

tests/kernel/test_bbr2_math.py tests the decisions alone; here the whole module (kernel/variants/bbr2.patch
or bbr3.patch applied to the kernel's tcp_bbr.c, bbr2_main.h and bbr2_math.h included) is compiled against
the kernel-API stand-ins of kernel/tests/glue/ (with the rate-sample fields tx_in_flight and lost of the
testbed's core patch kernel/patches/10-tcp-rate-tx-in-flight.patch) and driven through its
tcp_congestion_ops, as tests/kernel/test_variant_glue.py does for the other variants. A connection is put
into a state (max_bw 10,000 packets/s, min_rtt 10 ms: a BDP of 100 packets), one ACK with a constructed rate
sample is processed, and the decision is read where samplers read it (INET_DIAG_BBRINFO: the state in
bbr_bw_lo's low 3 bits, inflight_hi in bbr_bw_hi; the pacing rate; cwnd) and in struct bbr2.

Expected values come from the drafts' pseudocode (v2: draft-cardwell-iccrg-bbr-congestion-control-02;
v3: draft-ietf-ccwg-bbr) with the module parameters of mininet/bbrlab/experiment/variants.yaml (bbr2:
version 2, ProbeBW_UP cwnd gain 2, full_loss_cnt 3; bbr3: version 3, 2.25, 6; both: ProbeBW_DOWN pacing
0.9, BBRLossThresh 2 %, BBRBeta 0.7, BBRHeadroom 15 %, BBRProbeRTTCwndGain 0.5), not from the code.
Integer rounding is the module's documented one (gains in 1/256, packets floored) where it matters.
bench/glue_mutations.py applies wrong glues to bbr2_main.h one at a time and records that these tests
fail for each (bench/results/glue-mutations-*.md).

Skipped, with the reason, when gcc or patch is missing or no kernel source is at hand (build/kernel/src,
or the linux-source-6.1 tarball).
"""
import pytest

import variant_glue as vg
from test_variant_glue import glue  # noqa: F401  (the fixture: builds each variant once per module)
from variant_glue import BBR, BBR_UNIT, SOCK, TCP

NOW = 100_000_000                  # us: the connection's clock at the ACK (100 s)
MIN_RTT = 10_000                   # us
BW_PPS = 10_000                    # packets/s: BDP = 100 packets
BDP = 100
MSS = 1448
D = 1_000_000                      # tp->delivered
INF = 0xFFFFFFFF                   # "no bound" (the drafts' Infinity; bbr_bw_hi before the first bound)
STARTUP, DRAIN, DOWN, CRUISE, REFILL, UP, PROBE_RTT = range(7)   # README: bbr_bw_lo's low 3 bits

# The drafts' gains per state (pacing, cwnd); the fixture seeds them as the module would have on entry.
UP_CWND_GAIN = {"bbr2": 2.0, "bbr3": 2.25, "bbr2plus": 2.0, "bbr2_v2alpha": 2.0}
GAINS = {STARTUP: (2.77, 2.0), DRAIN: (0.5, 2.0), DOWN: (0.9, 2.0), CRUISE: (1.0, 2.0),
         REFILL: (1.0, 2.0), UP: (1.25, 2.0), PROBE_RTT: (1.0, 0.5)}
BOTH = pytest.mark.parametrize("variant", ["bbr2", "bbr3"])


def connection(g, variant, state, cwnd=150, inflight=100, inflight_hi=INF, **fields):
    """A bbr2/bbr3 connection at NOW in `state`: max_bw BW_PPS (both cycle maxima), min_rtt MIN_RTT measured
    now (no ProbeRTT due), pipe filled (except in STARTUP), the phase started now, no round or loss round
    ending unless the ACK says so, paced at the state's gain, cwnd and packets in flight as given; then
    struct bbr2's `fields`. As the stack would have it (tcp_cwnd_validate): the most sent in the last
    window, max_packets_out, is the packets in flight, and the flow is not cwnd-limited (tcp_sock's
    is_cwnd_limited) unless a test sets it."""
    sk = g.socket(MIN_RTT, MIN_RTT, NOW, delivered=D, snd_cwnd=cwnd, packets_out=inflight,
                  max_packets_out=inflight, is_cwnd_limited=0)
    bw = vg.bw_units(BW_PPS)
    pacing, cwnd_gain = GAINS[state]
    if state == UP:
        cwnd_gain = UP_CWND_GAIN[variant]
    g.set(sk, SOCK, sk_pacing_rate=int(pacing_rate(pacing)))   # the send quantum follows it
    j = g.jiffies.value
    g.set(sk, BBR, **{"state": state, "filled_pipe": int(state != STARTUP), "pacing_gain": int(pacing * BBR_UNIT),
                      "cwnd_gain": int(cwnd_gain * BBR_UNIT), "inflight_hi": inflight_hi, "min_rtt_stamp": j,
                      "probe_rtt_min_stamp": j, "next_rtt_delivered": D + 1, "loss_round_delivered": D + 1,
                      "cycle_stamp": NOW, "bw_hi[0]": bw, "bw_hi[1]": bw, **fields})
    return sk


def ack(g, sk, delivered=100, round_start=False, rtt_us=MIN_RTT, bw_pps=BW_PPS, **rs):
    """One ACK whose rate sample delivered `delivered` packets at bw_pps (interval accordingly), ending a
    round trip (and a loss round) or not; rs: further fields (tx_in_flight, lost, losses, ...). The packets
    in flight before the ACK (prior_in_flight) are, unless given, those in flight now plus those it ACKed."""
    rs.setdefault("acked_sacked", 1)
    rs.setdefault("prior_in_flight", g.get(sk, TCP, "packets_out") + rs["acked_sacked"])
    g.ack(sk, rtt_us=rtt_us, delivered=delivered, interval_us=round(delivered * 1e6 / bw_pps),
          prior_delivered=D + 1 if round_start else D - delivered, **rs)


def state(g, sk):
    """The state as samplers read it (bbr_bw_lo's low 3 bits); checked against struct bbr2's."""
    s = g.info(sk)["bw_lo"] & 7
    assert s == g.get(sk, BBR, "state")
    return s


def pacing_rate(gain, bw_pps=BW_PPS):
    """The drafts' pacing rate, bytes/s: gain x bw, 1 % below (BBRPacingMarginPercent)."""
    return gain * bw_pps * MSS * 0.99


def cwnd(g, sk):
    """The connection's cwnd (tcp_sock's snd_cwnd), packets."""
    return g.get(sk, TCP, "snd_cwnd")


# --- the loss-based upper bound inflight_hi (IsInflightTooHigh / BBRHandleInflightTooHigh) -------------

@BOTH
@pytest.mark.parametrize("tx_in_flight, lost, inflight_hi", [
    (120, 3, 120),   # 3/120 = 2.5 % > 2 %: max(tx_in_flight 120, 0.7 x min(BDP 100, cwnd 150) = 70)
    (50, 2, 70),     # 4 %: max(50, 70)
])
def test_probe_loss_above_2_percent_sets_inflight_hi_and_goes_down(glue, variant, tx_in_flight, lost,
                                                                   inflight_hi):
    """In ProbeBW_UP, rs.lost > 2 % of rs.tx_in_flight (the packets in flight when the sampled packet was
    sent, not those delivered, 200 here, nor in flight now, 150): inflight_hi = max(rs.tx_in_flight,
    BBRBeta x BBRTargetInflight()), the probe ends in ProbeBW_DOWN, paced at 0.9 x bw, and cwnd is capped
    at inflight_hi there. This ACK marked 1 of the lost packets (rs.losses); rs.lost counts all since the
    send."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=130, bw_probe_samples=1)
    ack(g, sk, delivered=200, tx_in_flight=tx_in_flight, lost=lost, losses=1, prior_in_flight=150)
    assert state(g, sk) == DOWN
    assert g.info(sk)["bw_hi"] == inflight_hi
    assert g.info(sk)["pacing_gain"] == int(0.9 * BBR_UNIT)
    assert g.get(sk, SOCK, "sk_pacing_rate") == pytest.approx(pacing_rate(0.9), rel=3e-3)
    assert cwnd(g, sk) == inflight_hi
    g.free(sk)


@BOTH
@pytest.mark.parametrize("tx_in_flight, lost", [
    (100, 2),        # exactly 2 %: not "too high" (the drafts' test is rs.lost > tx_in_flight x 2 %)
    (150, 1),        # 0.7 % (of the 40 delivered it would be 2.5 %)
])
def test_probe_loss_at_most_2_percent_keeps_probing(glue, variant, tx_in_flight, lost):
    """No bound yet and a loss rate of at most 2 % of rs.tx_in_flight: inflight_hi stays Infinity, the
    probe goes on (ProbeBW_UP, pacing 1.25 x bw)."""
    g = glue(variant)
    sk = connection(g, variant, UP, bw_probe_samples=1)
    ack(g, sk, delivered=40, tx_in_flight=tx_in_flight, lost=lost, losses=1)
    assert state(g, sk) == UP
    assert g.info(sk)["bw_hi"] == INF
    assert g.info(sk)["pacing_gain"] == 1.25 * BBR_UNIT
    assert g.get(sk, SOCK, "sk_pacing_rate") == pytest.approx(pacing_rate(1.25), rel=3e-3)
    g.free(sk)


@BOTH
def test_inflight_hi_follows_tx_in_flight_without_loss(glue, variant):
    """BBRAdaptUpperBounds(): with a safe loss rate and a bound in place, inflight_hi rises to
    rs.tx_in_flight (100, from 80; in flight now: 85). In ProbeBW_CRUISE cwnd is then capped at
    inflight_hi less BBRHeadroom: 100 - 15 = 85."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE, inflight_hi=80)
    ack(g, sk, tx_in_flight=100, prior_in_flight=85)
    assert g.info(sk)["bw_hi"] == 100
    assert cwnd(g, sk) == 85
    g.free(sk)


# --- per lost packet (v2 draft 4.5.6.2 BBRHandleLostPacket; v3 draft -06 5.5.10.2 HandleLostPacket) ----
# The testbed kernel calls the module for each packet it marks lost (kernel/patches/20-tcp-skb-marked-lost.patch),
# with tp->lost already counting it; the packet carries tx_in_flight and tp->lost from its transmission.


def lost_packet(g, sk, tx_in_flight, lost_since, **kw):
    """Mark one packet lost whose own loss rate is lost_since (itself included) of tx_in_flight: the packets
    lost since its transmission, tp->lost - P.lost, are `lost_since` once tp->lost counts it."""
    assert g.mark_lost(sk, tx_in_flight, g.get(sk, TCP, "lost") + 1 - lost_since, **kw), "no skb_marked_lost"


@BOTH
@pytest.mark.parametrize("tx_in_flight, lost_since, inflight_hi", [
    (120, 3, 119),   # 3/120 > 2 %; inflight_prev 119, lost_prev 2: prefix (2.38 - 2) / 0.98 -> 0
    (200, 10, 194),  # 5 %; inflight_prev 199, lost_prev 9: prefix (3.98 - 9) / 0.98 = -5.1 -> -5
    (50, 2, 70),     # 4 %; 49 + (0.98 - 1) / 0.98 -> 49, below 0.7 x BBRTargetInflight() = 70
])
def test_lost_packet_while_probing_sets_inflight_hi_where_the_loss_rate_crossed(glue, variant, tx_in_flight,
                                                                              lost_since, inflight_hi):
    """A packet sent while probing (bw_probe_samples) is marked lost, its own loss rate above 2 %: without
    waiting for an ACK, inflight_hi = max(BBRInflightHiFromLostPacket / InflightAtLoss, BBRBeta x
    BBRTargetInflight()) and ProbeBW_UP ends in DOWN (BBRHandleInflightTooHigh)."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=130, bw_probe_samples=1)
    lost_packet(g, sk, tx_in_flight, lost_since)
    assert state(g, sk) == DOWN
    assert g.get(sk, BBR, "inflight_hi") == inflight_hi
    assert g.get(sk, BBR, "bw_probe_samples") == 0
    g.free(sk)


@BOTH
@pytest.mark.parametrize("case", ["loss rate 2 %", "not probing", "send record used up"])
def test_lost_packet_leaves_the_bound_alone(glue, variant, case):
    """No bound and no phase change: a loss rate of exactly 2 % is not above BBRLossThresh; a packet not sent
    while probing (bw_probe_samples 0) returns before the check in both drafts; a packet whose send-time
    record is not its own (has_rate_info 0) is not checked (Google's code: delivered_mstamp 0)."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=130, bw_probe_samples=int(case != "not probing"))
    if case == "loss rate 2 %":
        lost_packet(g, sk, 150, 3)
    else:
        lost_packet(g, sk, 120, 10, has_rate_info=case != "send record used up")
    assert state(g, sk) == UP
    assert g.get(sk, BBR, "inflight_hi") == INF
    g.free(sk)


@pytest.mark.parametrize("variant", ["bbr2", "bbr3", "bbr2_v2alpha", "bbr2plus"])
def test_app_limited_lost_packet_ends_the_probe_without_a_bound(glue, variant):
    """BBRHandleInflightTooHigh() with rs.is_app_limited from the lost packet: the probe ends (DOWN,
    bw_probe_samples 0) but inflight_hi is not set from an app-limited flight."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=130, bw_probe_samples=1)
    lost_packet(g, sk, 120, 10, app_limited=True)
    assert state(g, sk) == DOWN
    assert g.get(sk, BBR, "inflight_hi") == INF
    g.free(sk)


@BOTH
def test_first_loss_of_a_round_restarts_the_loss_round_in_v3_only(glue, variant):
    """v3 draft -06 NoteLoss(): at a round trip's first loss, BBR.loss_round_delivered = C.delivered and
    loss_in_round = 1; later losses of the round leave it. The v2 draft has no NoteLoss(): its loss round
    and loss_in_round follow the ACKs (BBRUpdateCongestionSignals)."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE, loss_in_round=0)
    lost_packet(g, sk, 100, 1)
    g.set(sk, TCP, delivered=D + 50)
    lost_packet(g, sk, 100, 2)
    if variant == "bbr3":
        assert g.get(sk, BBR, "loss_round_delivered") == D
        assert g.get(sk, BBR, "loss_in_round") == 1
    else:
        assert g.get(sk, BBR, "loss_round_delivered") == D + 1
        assert g.get(sk, BBR, "loss_in_round") == 0
    assert state(g, sk) == CRUISE
    g.free(sk)


# --- cwnd bounded by the model, per state (BBRBoundCwndForModel) ---------------------------------------

@BOTH
@pytest.mark.parametrize("st, expected", [
    (DOWN, 40),       # inflight_hi
    (CRUISE, 34),     # inflight_hi - 15 % (6)
    (REFILL, 40),
    (UP, 40),
    (PROBE_RTT, 34),  # headroom as in CRUISE (the ProbeRTT cwnd, 50, is above it)
    (STARTUP, 151),   # no bound outside ProbeBW and ProbeRTT: cwnd grows by the packet ACKed
    (DRAIN, 151),
])
def test_inflight_hi_bounds_cwnd_in_the_drafts_states(glue, variant, st, expected):
    """inflight_hi = 40 and cwnd 150: cwnd is capped at inflight_hi in ProbeBW_DOWN/REFILL/UP, at
    BBRInflightWithHeadroom() in CRUISE and ProbeRTT, not at all in Startup and Drain (150 in flight keeps
    Drain going)."""
    g = glue(variant)
    sk = connection(g, variant, st, inflight=150 if st == DRAIN else 100, inflight_hi=40)
    ack(g, sk, tx_in_flight=30)
    assert state(g, sk) == st
    assert cwnd(g, sk) == expected
    g.free(sk)


# --- ProbeRTT (BBRProbeRTTCwndGain 0.5; v1: 4 packets) ------------------------------------------------

@BOTH
def test_probe_rtt_holds_cwnd_at_half_the_bdp(glue, variant):
    """ProbeRTTInterval (5 s) without a lower RTT sample: ProbeRTT, cwnd = BBRBDPMultiple(bw, 0.5) = 50
    packets (BBR v1: 4, next test), pacing gain 1, cwnd gain 0.5 as samplers see them."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE, inflight=150, probe_rtt_min_stamp=g.jiffies.value - 5_001)
    ack(g, sk, rtt_us=12_000)
    assert state(g, sk) == PROBE_RTT
    assert cwnd(g, sk) == BDP // 2
    info = g.info(sk)
    assert (info["pacing_gain"], info["cwnd_gain"]) == (BBR_UNIT, BBR_UNIT // 2)
    assert info["min_rtt"] == MIN_RTT
    g.free(sk)


def test_bbr_v1_probe_rtt_holds_cwnd_at_4_packets(glue):
    """The control: Linux's BBR (v1), compiled unpatched, in the same situation (its min_rtt is 10 s old)
    cuts cwnd to bbr_cwnd_min_target = 4 packets."""
    g = glue("bbr")
    sk = g.socket(MIN_RTT, MIN_RTT, NOW, delivered=D, snd_cwnd=150, packets_out=150)
    vg.probe_bw(g, sk, BW_PPS, 2, 1.0)
    g.set(sk, BBR, min_rtt_stamp=g.jiffies.value - 10_001)
    g.ack(sk, rtt_us=12_000, delivered=100, interval_us=MIN_RTT, prior_delivered=D - 100, acked_sacked=1,
          prior_in_flight=150)
    assert g.get(sk, BBR, "mode") == g.mode["probe_rtt"]
    assert cwnd(g, sk) == 4
    g.free(sk)


@BOTH
def test_probe_rtt_ends_in_cruise_with_the_saved_cwnd(glue, variant):
    """BBRCheckProbeRTTDone()/BBRExitProbeRTT(): 200 ms at the ProbeRTT cwnd and a round trip done, cwnd
    is restored (the 150 saved on entry, plus the packet ACKed) and ProbeBW resumes in CRUISE (pacing 1)."""
    g = glue(variant)
    sk = connection(g, variant, PROBE_RTT, cwnd=50, inflight=40, prior_cwnd=150,
                    probe_rtt_done_stamp=g.jiffies.value - 1, probe_rtt_round_done=1)
    ack(g, sk)
    assert state(g, sk) == CRUISE
    assert g.info(sk)["pacing_gain"] == BBR_UNIT
    assert cwnd(g, sk) == 151
    g.free(sk)


# --- ProbeBW's phases ----------------------------------------------------------------------------------

@BOTH
@pytest.mark.parametrize("inflight_hi, inflight, cruise", [
    (INF, 100, True),    # inflight <= BBRInflight(max_bw, 1) = 100 packets
    (INF, 101, False),
    (100, 85, True),     # and within the headroom: <= 100 - 15
    (100, 86, False),
])
def test_down_leaves_for_cruise_at_one_bdp_below_the_headroom(glue, variant, inflight_hi, inflight, cruise):
    """BBRCheckTimeToCruise(): ProbeBW_DOWN ends once inflight is at most the BDP and at most
    inflight_hi less 15 %."""
    g = glue(variant)
    sk = connection(g, variant, DOWN, inflight=inflight, inflight_hi=inflight_hi)
    ack(g, sk, tx_in_flight=80)
    assert state(g, sk) == (CRUISE if cruise else DOWN)
    assert g.info(sk)["pacing_gain"] == (BBR_UNIT if cruise else int(0.9 * BBR_UNIT))
    g.free(sk)


@BOTH
def test_refill_lasts_a_round_then_up_at_gain_1_25(glue, variant):
    """ProbeBW_REFILL (pacing 1) lasts one round trip; then ProbeBW_UP paces at 1.25 x bw with the cwnd gain
    of the version (v2 draft 2, v3 draft 2.25): cwnd (400 before the ACK) falls to its target, gain x BDP +
    extra_acked (1 packet: this ACK's, opening an aggregation epoch) + 2 packets (BBRQuantizationBudget in
    UP): 203 / 228."""
    g = glue(variant)
    sk = connection(g, variant, REFILL, cwnd=400)
    ack(g, sk)
    assert state(g, sk) == REFILL
    assert g.info(sk)["pacing_gain"] == BBR_UNIT
    g.set(sk, TCP, snd_cwnd=400)
    g.set_clock(sk, NOW + MIN_RTT)              # a min_rtt later: the ACK opens a new aggregation epoch
    ack(g, sk, round_start=True)
    assert state(g, sk) == UP
    info = g.info(sk)
    assert info["pacing_gain"] == 1.25 * BBR_UNIT
    assert info["cwnd_gain"] == int(UP_CWND_GAIN[variant] * BBR_UNIT)
    assert g.get(sk, SOCK, "sk_pacing_rate") == pytest.approx(pacing_rate(1.25), rel=3e-3)
    assert cwnd(g, sk) == round(UP_CWND_GAIN[variant] * BDP) + 1 + 2
    g.free(sk)


@pytest.mark.parametrize("variant, elapsed_us, inflight, down", [
    ("bbr2", 11_000, 128, True),   # a min_rtt elapsed and inflight > BBRInflight(max_bw, 1.25) = 125 + 2
    ("bbr2", 11_000, 127, False),
    ("bbr2", 9_000, 128, False),   # not yet a min_rtt in the phase
    ("bbr3", 11_000, 128, False),  # v3 leaves UP only when bandwidth stopped growing (next test)
])
def test_up_exit_v2_after_a_min_rtt_above_1_25_bdp(glue, variant, elapsed_us, inflight, down):
    """v2 draft BBRUpdateProbeBWCyclePhase(), ProbeBW_UP: DOWN once a min_rtt has elapsed in the phase
    and inflight exceeds BBRInflight(max_bw, 1.25); the v3 draft has no such exit."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=inflight, cycle_stamp=NOW - elapsed_us)
    ack(g, sk)
    assert state(g, sk) == (DOWN if down else UP)
    g.free(sk)


@pytest.mark.parametrize("variant, cwnd_limited, down", [
    ("bbr3", False, True),   # third round without 25 % growth: full_bw_now, go DOWN
    ("bbr3", True, False),   # cwnd-limited at inflight_hi: the estimator is reset, the probe goes on
    ("bbr2", False, False),  # v2: no such exit (a min_rtt has not elapsed)
])
def test_up_exit_v3_when_bandwidth_stops_growing(glue, variant, cwnd_limited, down):
    """v3 draft BBRCheckTimeToGoDown(): in ProbeBW_UP, at a round end whose delivery rate is not 25 % above
    full_bw for the third time, the probe ends, unless the flow is cwnd-limited with cwnd at inflight_hi
    (120 here; then BBRResetFullBW())."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight_hi=120, full_bw=vg.bw_units(BW_PPS), full_bw_cnt=2)
    g.set(sk, TCP, is_cwnd_limited=int(cwnd_limited))
    ack(g, sk, round_start=True, tx_in_flight=100)
    assert state(g, sk) == (DOWN if down else UP)
    if variant == "bbr3" and cwnd_limited:
        assert (g.get(sk, BBR, "full_bw_cnt"), g.get(sk, BBR, "full_bw_now")) == (0, 0)
    g.free(sk)


# --- when to probe, the max-bw filter, inflight_hi's probe slope, cwnd-limited (both drafts' pseudocode) ---

@BOTH
@pytest.mark.parametrize("random, wait_us", [(0, 2_000_000), (999_999, 2_999_999)])
def test_probe_wait_is_2_to_3_seconds_of_wall_clock(glue, variant, random, wait_us):
    """BBRPickProbeWait() (v2 draft 4.3.3.5; v3 draft -06 5.3.3.8): entering ProbeBW_DOWN, the wall-clock
    wait before the next probe is 2 s + a uniform 0..1 s (T_bbr "uniformly randomly distributed between 2
    and 3 secs"), and BBRCheckTimeToProbeBW() starts ProbeBW_REFILL once it has elapsed since DOWN started.
    DOWN is entered here as the drafts do it, by a probe's loss (first test); the random draw is the
    harness's (glue_random): 0 gives 2 s, 999,999 gives 2.999999 s. 1 ms before: still DOWN or CRUISE; 1 ms
    after: REFILL (pacing gain 1). The Reno-coexistence bound (0 or 1 rounds drawn, 63 needed) is not
    reached: no round ends."""
    g = glue(variant)
    g.random.value = random
    sk = connection(g, variant, UP, inflight=130, bw_probe_samples=1)
    ack(g, sk, delivered=200, tx_in_flight=120, lost=3, losses=1, prior_in_flight=150)
    assert state(g, sk) == DOWN
    assert g.get(sk, BBR, "probe_wait_us") == wait_us
    g.set_clock(sk, NOW + wait_us - 1_000)
    ack(g, sk)
    assert state(g, sk) in (DOWN, CRUISE)
    g.set_clock(sk, NOW + wait_us + 1_000)
    ack(g, sk)
    assert state(g, sk) == REFILL
    g.free(sk)


@BOTH
@pytest.mark.parametrize("snd_cwnd, rounds_before, refill", [
    (150, 61, False), (150, 62, True),     # BBRTargetInflight() = min(BDP 100, cwnd 150) = 100: 63 rounds
    (40, 38, False), (40, 39, True),       # min(BDP 100, cwnd 40) = 40: 40 rounds
])
def test_reno_coexistence_probe_after_min_target_inflight_63_rounds(glue, variant, snd_cwnd, rounds_before,
                                                                    refill):
    """BBRIsRenoCoexistenceProbeTime() (both drafts): ProbeBW_CRUISE probes (REFILL) once the round trips
    since the last probe reach min(BBRTargetInflight(), 63); the wall-clock wait (2 s) is far off. The ACK
    ends a round: rounds_before + 1 rounds."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE, cwnd=snd_cwnd, rounds_since_probe=rounds_before,
                    probe_wait_us=2_000_000)
    ack(g, sk, round_start=True)
    assert state(g, sk) == (REFILL if refill else CRUISE)
    g.free(sk)


@BOTH
@pytest.mark.parametrize("app_limited, bw_after", [(False, 8_000), (True, 10_000)])
def test_max_bw_filter_advances_a_cycle_when_probe_feedback_ends(glue, variant, app_limited, bw_after):
    """The max-bw filter keeps the maxima of the current and the previous ProbeBW cycle (MaxBwFilterLen = 2
    cycles); BBRAdaptUpperBounds() (v2 draft) / AdaptLongTermModel() (v3 draft) advance it
    (BBRAdvanceMaxBwFilter()) at the round end that closes the probe's feedback (ACKS_PROBE_STOPPING), when
    the sample is not app-limited. Previous cycle 10,000 packets/s, this one 8,000, the ACK's sample 5,000:
    max_bw becomes 8,000, as samplers see the model's bw; an app-limited sample leaves the filter (10,000)."""
    g = glue(variant)
    sk = connection(g, variant, DOWN, inflight=150, ack_phase=4, probe_wait_us=2_000_000,
                    **{"bw_hi[0]": vg.bw_units(10_000), "bw_hi[1]": vg.bw_units(8_000)})
    ack(g, sk, round_start=True, bw_pps=5_000, is_app_limited=int(app_limited))
    assert state(g, sk) == DOWN
    assert g.info(sk)["bw_lo"] & ~7 == pytest.approx(bw_after * MSS, rel=1e-3)
    assert g.get(sk, BBR, "ack_phase") == 0     # ACKS_INIT
    g.free(sk)


@BOTH
def test_inflight_hi_probe_slope_doubles_each_round(glue, variant):
    """BBRProbeInflightHiUpward() with BBRRaiseInflightHiSlope() (both drafts): in ProbeBW_UP, cwnd-limited at
    inflight_hi, inflight_hi grows by 1, 2, 4, ... packets in the 1st, 2nd, 3rd round of the probe (one
    packet per cwnd / 2^(n-1) packets ACKed; the slope is raised at each round's end). The probe's first
    round (as StartProbeBW_UP() leaves it, cwnd 100: one packet per 100 ACKed): 100 ACKed, +1 -> 101; the
    round ends (1 ACKed); 100 ACKed, +2 -> 103; the round ends; 100 ACKed, +4 -> 107."""
    g = glue(variant)
    sk = connection(g, variant, UP, cwnd=100, inflight_hi=100, probe_up_rounds=1, probe_up_cnt=100,
                    probe_up_acks=0)
    g.set(sk, TCP, is_cwnd_limited=1)
    grown = []
    for _ in range(3):
        ack(g, sk, acked_sacked=100)
        grown.append(g.info(sk)["bw_hi"])
        ack(g, sk, round_start=True, acked_sacked=1)
        assert state(g, sk) == UP
    assert grown == [101, 103, 107]
    g.free(sk)


@BOTH
@pytest.mark.parametrize("cwnd_limited, inflight_hi", [(False, 120), (True, 130)])
def test_inflight_hi_grows_only_while_cwnd_limited(glue, variant, cwnd_limited, inflight_hi):
    """BBRProbeInflightHiUpward(): inflight_hi grows only if C.is_cwnd_limited ("the connection has fully
    utilized C.cwnd", v3 draft -06 2.2) and cwnd >= inflight_hi. The flow here sent at most 100 packets in
    the last window (max_packets_out) with cwnd 150 and was not cwnd-limited (the stack's
    is_cwnd_limited): inflight_hi stays 120. Linux's tcp_is_cwnd_limited() would say it was (its slow-start
    clause, cwnd < 2 x max_packets_out, holds while ssthresh is infinite) and grow it. Cwnd-limited, 100
    ACKed at one packet per 10: 130."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight_hi=120, probe_up_rounds=1, probe_up_cnt=10, probe_up_acks=0)
    g.set(sk, TCP, is_cwnd_limited=int(cwnd_limited))
    ack(g, sk, acked_sacked=100)
    assert state(g, sk) == UP
    assert g.info(sk)["bw_hi"] == inflight_hi
    g.free(sk)


@pytest.mark.parametrize("variant, after", [("bbr3", DRAIN), ("bbr2", STARTUP)])
def test_startup_plateau_on_delivery_rate_v3_on_max_bw_v2(glue, variant, after):
    """Startup's full-bandwidth test at a round end, the third without 25 % growth: the v3 draft's
    CheckFullBWReached() compares the delivery-rate sample (RS.delivery_rate >= 1.25 x BBR.full_bw), the v2
    draft's BBRCheckFullPipe() BBR.max_bw. full_bw 10,000 packets/s, max_bw 13,000 (from an earlier burst),
    this round's sample 10,000: v3 sees the plateau and drains (150 in flight keep Drain); v2 sees max_bw
    still 30 % above full_bw and stays in Startup."""
    g = glue(variant)
    bw_hi = vg.bw_units(13_000)
    sk = connection(g, variant, STARTUP, inflight=150, full_bw=vg.bw_units(BW_PPS), full_bw_cnt=2,
                    **{"bw_hi[0]": bw_hi, "bw_hi[1]": bw_hi})
    ack(g, sk, round_start=True)
    assert state(g, sk) == after
    g.free(sk)


@BOTH
@pytest.mark.parametrize("snd_cwnd, after", [(203, 208), (206, 206)])
def test_startup_cwnd_target_includes_extra_acked(glue, variant, snd_cwnd, after):
    """BBRUpdateMaxInflight() (v2 draft 4.6.4.2, v3 draft -06 5.6.4.2): max_inflight = BDPMultiple(cwnd_gain)
    + BBR.extra_acked in every state, Startup too (Linux's BBR v1 adds the aggregation allowance only once
    the pipe is full). In Startup cwnd grows by the packets ACKed while below it: 2 x BDP = 200, + 5 (this
    ACK's 5 packets open an aggregation epoch) = 205; cwnd 203 grows to 208, cwnd 206 stays."""
    g = glue(variant)
    sk = connection(g, variant, STARTUP, cwnd=snd_cwnd)
    ack(g, sk, acked_sacked=5)
    assert state(g, sk) == STARTUP
    assert cwnd(g, sk) == after
    g.free(sk)


@pytest.mark.parametrize("variant, after", [("bbr3", 230), ("bbr2", 231)])
def test_startup_extra_acked_remembers_one_round_in_v3(glue, variant, after):
    """UpdateACKAggregation() (v3 draft -06 5.5.9): in Startup the extra_acked max filter remembers 1 round
    ("filter_len = 1"), afterwards 10; the v2 draft keeps 10 throughout. The filter's previous slot holds 40
    packets (a round ago); the ACK ends a round: v3 forgets them (max_inflight 200 + 1 = 201, cwnd 230
    stays), v2 keeps them (240: cwnd grows to 231)."""
    g = glue(variant)
    sk = connection(g, variant, STARTUP, cwnd=230, extra_acked_win_idx=0, extra_acked_win_rtts=0,
                    **{"extra_acked[0]": 0, "extra_acked[1]": 40})
    ack(g, sk, round_start=True)
    assert state(g, sk) == STARTUP
    assert cwnd(g, sk) == after
    g.free(sk)


# --- Drain (v2 draft 4.3.2; v3 draft -06 5.3.2) ------------------------------------------------------------

@pytest.mark.parametrize("variant, rounds_before, probe_bw", [
    ("bbr3", 2, False), ("bbr3", 3, True),     # the 4th round end in Drain: round_count > drain_start + 3
    ("bbr2", 3, False), ("bbr2", 6, False),    # v2 draft: no timeout
])
def test_drain_times_out_after_3_rounds_in_v3(glue, variant, rounds_before, probe_bw):
    """v3 draft -06 CheckDrainDone(): Drain ends when inflight is at most the BDP "or BBR.round_count >
    BBR.drain_start_round + 3", so that an overestimated bandwidth cannot hold the flow in Drain. 150 in
    flight (BDP 100) keep Drain going; the ACK ends a round. The v2 draft has no such timeout."""
    g = glue(variant)
    sk = connection(g, variant, DRAIN, inflight=150, drain_rounds=rounds_before)
    ack(g, sk, round_start=True)
    assert state(g, sk) == (DOWN if probe_bw else DRAIN)
    g.free(sk)


@pytest.mark.parametrize("preset, gain", [({}, BBR_UNIT // 2), ({"startup_cwnd_gain_pct": 289}, 88)])
def test_drain_paces_at_the_inverse_of_the_startup_cwnd_gain(glue, preset, gain):
    """BBREnterDrain() (v2 draft 4.3.2): pacing_gain = 1 / BBRStartupCwndGain, 0.5 with the drafts' cwnd gain
    2; with the v2alpha preset's 2.89, 1 / 2.89 (88/256, Google's code: 1 / 2.885). Startup ends here on its
    bandwidth plateau (third round without 25 % growth)."""
    g = glue("bbr2")
    for name, value in preset.items():
        assert g.param(name, value) == 0
    try:
        sk = connection(g, "bbr2", STARTUP, inflight=150, full_bw=vg.bw_units(BW_PPS), full_bw_cnt=2)
        ack(g, sk, round_start=True)
        assert state(g, sk) == DRAIN
        assert g.info(sk)["pacing_gain"] == gain
        g.free(sk)
    finally:
        assert g.param("startup_cwnd_gain_pct", 200) == 0


# --- precautionary ("risky") bandwidth probing (v3 draft -06 5.3.3.6; not in the v2 draft) --------------

@BOTH
def test_lossy_probe_is_remembered_in_v3(glue, variant):
    """HandleInflightTooHigh() (v3 draft -06): a probe ended by too much loss sets BBR.prev_probe_too_high."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=130, bw_probe_samples=1)
    ack(g, sk, delivered=200, tx_in_flight=120, lost=3, losses=1, prior_in_flight=150)
    assert state(g, sk) == DOWN
    assert g.get(sk, BBR, "prev_probe_too_high") == int(variant == "bbr3")
    g.free(sk)


@pytest.mark.parametrize("variant, inflight, down", [
    ("bbr3", 120, True), ("bbr3", 119, False), ("bbr2", 120, False),
])
def test_probe_after_a_lossy_one_stops_at_inflight_hi_in_v3(glue, variant, inflight, down):
    """Precautionary deceleration (v3 draft -06 IsTimeToGoDown()): after a probe with too much loss
    (prev_probe_too_high), the next ProbeBW_UP ends as soon as C.inflight reaches inflight_hi (120), marking
    the probe precautionary and clearing prev_probe_too_high. Below it the probe goes on; bbr2 (v2 draft)
    has no such exit."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=inflight, inflight_hi=120, prev_probe_too_high=1)
    ack(g, sk, tx_in_flight=100)
    assert state(g, sk) == (DOWN if down else UP)
    if down:
        assert (g.get(sk, BBR, "prev_probe_precautionary"), g.get(sk, BBR, "prev_probe_too_high")) == (1, 0)
    g.free(sk)


@pytest.mark.parametrize("variant, too_high, after", [
    ("bbr3", 0, REFILL), ("bbr3", 1, DOWN), ("bbr2", 0, DOWN),
])
def test_safe_precautionary_probe_probes_again_at_once_in_v3(glue, variant, too_high, after):
    """Precautionary acceleration (v3 draft -06 AdaptLongTermModel()): at the round end that closes the
    feedback of a precautionary probe (ACKS_PROBE_STOPPING), if it brought no excess loss
    (!prev_probe_too_high) the flow goes straight to ProbeBW_REFILL, skipping CRUISE; with loss it stays in
    DOWN (150 in flight). bbr2 (v2 draft) stays in DOWN."""
    g = glue(variant)
    sk = connection(g, variant, DOWN, inflight=150, inflight_hi=120, ack_phase=4, prev_probe_precautionary=1,
                    prev_probe_too_high=too_high, probe_wait_us=2_000_000)
    ack(g, sk, round_start=True, tx_in_flight=100)
    assert state(g, sk) == after
    if after == REFILL:
        assert g.get(sk, BBR, "prev_probe_precautionary") == 0
    g.free(sk)


# --- Startup's loss exit (v2 draft 4.3.1.3: BBRStartupFullLossCnt; v3 per Google's code: 6) ----------

@pytest.mark.parametrize("variant, events_before, exits", [
    ("bbr2", 1, False), ("bbr2", 2, True),     # this ACK is the 2nd / 3rd loss event of the round
    ("bbr3", 2, False), ("bbr3", 5, True),     # 3rd / 6th
])
def test_startup_ends_on_high_loss_after_full_loss_cnt_events(glue, variant, events_before, exits):
    """At the end of a round in fast recovery with at least full_loss_cnt loss events (bbr2 3, bbr3 6) and
    rs.lost > 2 % of rs.tx_in_flight (5 of 100; this ACK marked 1): the pipe is full, inflight_hi =
    max(BDP, inflight_latest) = 100 and Drain starts (pacing 1 / BBRStartupCwndGain = 0.5, v2 draft 4.3.2, v3
    draft -06 5.3.2; 150 packets in flight keep it)."""
    g = glue(variant)
    sk = connection(g, variant, STARTUP, inflight=150, loss_events_in_round=events_before, loss_in_round=1)
    g.set_ca_state(sk, 3)                       # TCP_CA_Recovery
    ack(g, sk, round_start=True, delivered=50, tx_in_flight=100, lost=5, losses=1)
    assert state(g, sk) == (DRAIN if exits else STARTUP)
    assert g.info(sk)["bw_hi"] == (BDP if exits else INF)
    if exits:
        assert g.info(sk)["pacing_gain"] == BBR_UNIT // 2
    g.free(sk)


# --- lower bounds (BBRAdaptLowerBoundsFromCongestion) ----------------------------------------------------

@BOTH
@pytest.mark.parametrize("st", [CRUISE, UP])
def test_lower_bounds_cut_on_a_lossy_round_outside_probing(glue, variant, st):
    """At the end of a loss round with loss (1 % of tx_in_flight, below the threshold) outside probing
    (CRUISE): bw_lo = max(bw_latest, 0.7 x max_bw) = 7,000 packets/s (the sample: 5,000) and inflight_lo =
    max(inflight_latest 50, 0.7 x cwnd 150) = 105; the pacing rate and cwnd follow. While probing (UP) the
    lower bounds are left alone (IsProbingBW())."""
    g = glue(variant)
    sk = connection(g, variant, st, bw_probe_samples=1)
    ack(g, sk, round_start=True, delivered=50, bw_pps=5_000, tx_in_flight=100, lost=1, losses=1)
    assert state(g, sk) == st
    if st == CRUISE:
        assert g.info(sk)["bw_lo"] & ~7 == pytest.approx(7_000 * MSS, rel=1e-3)
        assert g.get(sk, SOCK, "sk_pacing_rate") == pytest.approx(pacing_rate(1.0, 7_000), rel=1e-3)
        assert g.get(sk, BBR, "inflight_lo") == 105
        assert cwnd(g, sk) == 105
    else:
        assert (g.get(sk, BBR, "bw_lo"), g.get(sk, BBR, "inflight_lo")) == (INF, INF)
        assert g.info(sk)["bw_lo"] & ~7 == pytest.approx(BW_PPS * MSS, rel=1e-3)
        assert g.get(sk, SOCK, "sk_pacing_rate") == pytest.approx(pacing_rate(1.25), rel=3e-3)
    g.free(sk)


# --- loss recovery: RTO, fast recovery, undo (BBRSaveCwnd, BBROnEnterRTO, BBRModulateCwndForRecovery) ----

OPEN, RECOVERY, LOSS = 0, 3, 4          # icsk_ca_state
TX_START = 0                            # CA_EVENT_TX_START


@BOTH
def test_rto_saves_cwnd_and_ends_the_round(glue, variant):
    """An RTO (tcp_enter_loss: ssthresh, cwnd = in-flight + 1, then TCP_CA_Loss). v3 draft BBROnEnterRTO():
    BBR.prior_cwnd = BBRSaveCwnd() (outside recovery and ProbeRTT: cwnd, 150, not the older 200) and cwnd =
    packets_in_flight + 1. The module departs as documented in set_state's comment: the in-flight + 1 is
    left to Linux's tcp_enter_loss (the module does not touch cwnd, 101 stays), and, as Linux's BBR, it
    counts the RTO as the end of a round (round_start) and forgets the full-bandwidth count (full_bw 0)."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE, prior_cwnd=200, full_bw=vg.bw_units(BW_PPS))
    g.ssthresh(sk)
    assert g.get(sk, BBR, "prior_cwnd") == 150
    g.set(sk, TCP, snd_cwnd=100 + 1)
    g.set_ca_state(sk, LOSS)
    assert (g.get(sk, BBR, "prev_ca_state"), g.get(sk, BBR, "round_start"), g.get(sk, BBR, "full_bw")) == \
        (LOSS, 1, 0)
    assert cwnd(g, sk) == 101
    g.free(sk)


@BOTH
def test_leaving_rto_recovery_restores_the_saved_cwnd(glue, variant):
    """After an RTO, the first ACK once back in Open: BBRRestoreCwnd(), cwnd = max(cwnd, BBR.prior_cwnd) =
    150 (then the packet ACKed, 151); a second RTO while still in recovery keeps the larger saved cwnd
    (BBRSaveCwnd() in loss recovery: max(BBR.prior_cwnd, cwnd))."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE)
    g.ssthresh(sk)
    g.set(sk, TCP, snd_cwnd=101)
    g.set_ca_state(sk, LOSS)
    ack(g, sk)                               # an ACK in Loss
    g.ssthresh(sk)                           # a second RTO: the saved cwnd stays 150, not 102
    assert g.get(sk, BBR, "prior_cwnd") == 150
    g.set(sk, TCP, snd_cwnd=2)
    g.set_ca_state(sk, LOSS)
    g.set_ca_state(sk, OPEN)
    ack(g, sk)
    assert cwnd(g, sk) == 151
    g.free(sk)


def test_fast_recovery_starts_with_packet_conservation_in_v2(glue):
    """bbr2, entering fast recovery (ssthresh, then TCP_CA_Recovery): v2 draft 4.6.4.4,
    BBRModulateCwndForRecovery() with BBROnEnterFastRecovery(): cwnd = packets_in_flight +
    max(rs.newly_acked, 1) with BBR.packet_conservation (the module does it on the first ACK in recovery,
    where Linux calls it): 100 in flight + 5 ACKed = 105, whatever the 3 newly lost (150 - 3 would be 147).
    On the next ACK of the round, cwnd less the newly lost, then conservation: max(105 - 1, 100 + 10) = 110
    (without conservation, cwnd would grow by the 10 ACKed to 115)."""
    g = glue("bbr2")
    sk = connection(g, "bbr2", CRUISE)
    g.ssthresh(sk)
    g.set_ca_state(sk, RECOVERY)
    ack(g, sk, acked_sacked=5, losses=3)
    assert g.get(sk, BBR, "packet_conservation") == 1
    assert cwnd(g, sk) == 105
    assert g.get(sk, BBR, "prior_cwnd") == 150
    ack(g, sk, acked_sacked=10, losses=1)
    assert cwnd(g, sk) == 110
    g.free(sk)


def test_fast_recovery_only_saves_cwnd_in_v3(glue):
    """bbr3, the same ACKs: every v3 draft revision (-00 to -06, OnEnterFastRecovery(): SaveCwnd() only)
    and Google's code hold no packet conservation and do not take the newly lost off cwnd. cwnd is saved
    (150) and grows by the packets ACKed as outside recovery, up to its target 2 x BDP + extra_acked (5,
    this ACK's: it opens an aggregation epoch) = 205: 150 + 5 = 155, then 155 + 10 = 165 (v2: 105, 110)."""
    g = glue("bbr3")
    sk = connection(g, "bbr3", CRUISE)
    g.ssthresh(sk)
    g.set_ca_state(sk, RECOVERY)
    ack(g, sk, acked_sacked=5, losses=3)
    assert g.get(sk, BBR, "packet_conservation") == 0
    assert cwnd(g, sk) == 155
    assert g.get(sk, BBR, "prior_cwnd") == 150
    ack(g, sk, acked_sacked=10, losses=1)
    assert cwnd(g, sk) == 165
    g.free(sk)


def test_packet_conservation_ends_after_one_round_in_v2(glue):
    """The v2 draft (and the module's comment: packet conservation for one round): after one round trip in
    fast recovery packet_conservation is false and cwnd grows again by the packets ACKed (105 + 10 = 115,
    not max(105, 100 + 10) = 110)."""
    g = glue("bbr2")
    sk = connection(g, "bbr2", CRUISE)
    g.ssthresh(sk)
    g.set_ca_state(sk, RECOVERY)
    ack(g, sk, acked_sacked=5)
    assert cwnd(g, sk) == 105
    g.set(sk, TCP, delivered=D + 200)        # a round later: the sample's packet was sent after entry
    g.ack(sk, rtt_us=MIN_RTT, delivered=100, interval_us=MIN_RTT, prior_delivered=D + 100,
          acked_sacked=10, prior_in_flight=100)
    assert g.get(sk, BBR, "round_start") == 1
    assert g.get(sk, BBR, "packet_conservation") == 0
    assert cwnd(g, sk) == 115
    g.free(sk)


def test_bbr_v1_packet_conservation_ends_after_one_round(glue):
    """The control for the test above (written as an expected failure when it found the module holding
    conservation through all of recovery): Linux's BBR (v1), compiled unpatched, in the same
    situation starts fast recovery at 100 in flight + 5 ACKed = 105 and ends packet conservation at the
    next round's start (bbr_update_bw), so cwnd then grows by the 10 ACKed: 115."""
    g = glue("bbr")
    sk = g.socket(MIN_RTT, MIN_RTT, NOW, delivered=D, snd_cwnd=150, packets_out=100)
    vg.probe_bw(g, sk, BW_PPS, 2, 1.0)
    g.ssthresh(sk)
    g.set_ca_state(sk, RECOVERY)
    g.ack(sk, rtt_us=MIN_RTT, delivered=100, interval_us=MIN_RTT, prior_delivered=D - 100, acked_sacked=5,
          prior_in_flight=100)
    assert (g.get(sk, BBR, "packet_conservation"), cwnd(g, sk)) == (1, 105)
    g.set(sk, TCP, delivered=D + 200)
    g.ack(sk, rtt_us=MIN_RTT, delivered=100, interval_us=MIN_RTT, prior_delivered=D + 100,
          acked_sacked=10, prior_in_flight=100)
    assert (g.get(sk, BBR, "packet_conservation"), cwnd(g, sk)) == (0, 115)
    g.free(sk)


@BOTH
def test_undone_recovery_forgets_the_lower_bounds(glue, variant):
    """A spurious recovery undone (tcp_undo_cwnd_reduction sets cwnd to undo_cwnd's value). The module's
    documented departure (bbr2.patch/bbr3.patch header, undo_cwnd's comment: Google's code restores the old
    bounds, there is no room to keep them here): bw_lo and inflight_lo are reset to "no bound"
    (BBRResetLowerBounds()), the full-bandwidth estimator too (BBRResetFullBW()), and cwnd is returned
    unchanged (150; the saved cwnd comes back on leaving recovery, previous test). The model's bw is then
    max_bw again, as samplers see it."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE, bw_lo=vg.bw_units(7_000), inflight_lo=105,
                    full_bw=vg.bw_units(BW_PPS), full_bw_cnt=2)
    assert g.info(sk)["bw_lo"] & ~7 == pytest.approx(7_000 * MSS, rel=1e-3)
    assert g.undo_cwnd(sk) == 150
    assert (g.get(sk, BBR, "bw_lo"), g.get(sk, BBR, "inflight_lo")) == (INF, INF)
    assert (g.get(sk, BBR, "full_bw"), g.get(sk, BBR, "full_bw_cnt")) == (0, 0)
    assert g.info(sk)["bw_lo"] & ~7 == pytest.approx(BW_PPS * MSS, rel=1e-3)
    g.free(sk)


# --- restart from idle (BBRHandleRestartFromIdle) --------------------------------------------------------

@BOTH
@pytest.mark.parametrize("app_limited", [True, False])
def test_restart_from_idle_paces_at_bw_in_probe_bw(glue, variant, app_limited):
    """Sending again with nothing in flight (CA_EVENT_TX_START; Linux raises it only then) while
    app-limited: BBR.idle_restart = true and, in ProbeBW, BBRSetPacingRateWithGain(1): ProbeBW_DOWN's 0.9
    x bw becomes 1 x bw. Not app-limited: nothing changes."""
    g = glue(variant)
    sk = connection(g, variant, DOWN, inflight=0)
    g.set(sk, TCP, app_limited=D if app_limited else 0)
    g.cwnd_event(sk, TX_START)
    assert g.get(sk, BBR, "idle_restart") == int(app_limited)
    gain = 1.0 if app_limited else 0.9
    assert g.get(sk, SOCK, "sk_pacing_rate") == pytest.approx(pacing_rate(gain), rel=3e-3)
    assert state(g, sk) == DOWN
    g.free(sk)


@BOTH
def test_restart_from_idle_skips_a_due_probe_rtt(glue, variant):
    """BBRCheckProbeRTT(): ProbeRTT is entered on an expired probe_rtt_min_delay only when not
    BBR.idle_restart; the ACK delivering data (rs.delivered > 0) then clears idle_restart. The same ACK as
    test_probe_rtt_holds_cwnd_at_half_the_bdp, after an idle restart: CRUISE stays."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE, inflight=0, probe_rtt_min_stamp=g.jiffies.value - 5_001)
    g.set(sk, TCP, app_limited=D)
    g.cwnd_event(sk, TX_START)
    ack(g, sk, rtt_us=12_000)
    assert state(g, sk) == CRUISE
    assert g.get(sk, BBR, "idle_restart") == 0
    g.free(sk)


@BOTH
def test_restart_from_idle_in_probe_rtt_ends_a_finished_probe_rtt(glue, variant):
    """BBRHandleRestartFromIdle() in ProbeRTT: BBRCheckProbeRTTDone(); its 200 ms over, ProbeRTT ends at
    the restart (no ACK needed), cwnd restored to the saved 150, ProbeBW resumes in CRUISE."""
    g = glue(variant)
    sk = connection(g, variant, PROBE_RTT, cwnd=50, inflight=0, prior_cwnd=150,
                    probe_rtt_done_stamp=g.jiffies.value - 1)
    g.set(sk, TCP, app_limited=D)
    g.cwnd_event(sk, TX_START)
    assert state(g, sk) == CRUISE
    assert cwnd(g, sk) == 150
    g.free(sk)


@pytest.mark.parametrize("mutation", list(vg.BBR2_MUTATIONS))
def test_each_mutation_of_bbr2_main_names_one_place(mutation, tmp_path):
    """bench/glue_mutations.py's wrong bbr2/bbr3 glues still name exactly one place of bbr2_main.h."""
    variants = vg.REPO / "kernel" / "variants"
    out = vg.mutate(variants, tmp_path / "v", mutation)
    header = vg.BBR2_MUTATIONS[mutation][0]
    assert (out / header).read_text() != (variants / header).read_text()
