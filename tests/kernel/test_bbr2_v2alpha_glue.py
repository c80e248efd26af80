"""bbr2_v2alpha's kernel glue on the host: where Google's BBRv2 alpha code differs from the v2 draft.

bbr2_v2alpha is bbr2_main.h compiled with BBR2_V2ALPHA (its BBR2_V2A parts); bbr2plus (BBRv2+) is built on the
same parts, since its authors wrote it on Google's v2alpha code. The connection, ACK and read-out helpers are
tests/kernel/test_bbr2_glue.py's (max_bw 10,000 packets/s, min_rtt 10 ms: a BDP of 100 packets).

The reference is Google's v2alpha code as read (github.com/google/bbr, branch v2alpha, net/ipv4/tcp_bbr2.c;
kernel/variants/README.md lists the places): each test states v2alpha's rule and, where it tells the two
apart, checks that bbr2 (the v2 draft) does otherwise. Google's constants on its 1/256 scale are
written out where they matter (the loss threshold 256 * 2 / 100 = 5, i.e. 5/256). bench/glue_mutations.py's
BBR2_MUTATIONS labelled "v2alpha" break one place each and must fail here.
"""
import pytest

import variant_glue as vg
from test_bbr2_glue import (BDP, BW_PPS, CRUISE, D, DOWN, DRAIN, INF, MIN_RTT, NOW, REFILL, STARTUP, UP, ack,
                            connection, cwnd, lost_packet, pacing_rate, state)
from test_variant_glue import glue  # noqa: F401  (the fixture)
from variant_glue import BBR, SOCK, TCP

V2A = "bbr2_v2alpha"
BOTH_V2A = pytest.mark.parametrize("variant", [V2A, "bbr2plus"])
OPEN, RECOVERY, LOSS = 0, 3, 4          # icsk_ca_state
MSS = 1448


def v2a_too_high(lost, tx_in_flight):
    """v2alpha's bbr2_is_inflight_too_high(): lost > tx_in_flight * 5 >> 8."""
    return lost > 0 and tx_in_flight and lost > (tx_in_flight * 5) >> 8


# --- loss recovery: no recovery step (v2alpha's bbr_set_cwnd() has none) --------------------------------

@BOTH_V2A
def test_fast_recovery_has_no_packet_conservation_nor_newly_lost_cut(glue, variant):
    """Entering fast recovery with 3 packets newly lost: v2alpha keeps growing cwnd by the packets ACKed up to
    its target (150 + 5, then + 10), with no packet conservation (bbr2, the v2 draft: 105, then 110)."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE)
    g.ssthresh(sk)
    g.set_ca_state(sk, RECOVERY)
    ack(g, sk, acked_sacked=5, losses=3)
    assert (g.get(sk, BBR, "packet_conservation"), cwnd(g, sk)) == (0, 155)
    ack(g, sk, acked_sacked=10, losses=1)
    assert cwnd(g, sk) == 165
    g.free(sk)


@pytest.mark.parametrize("variant, after", [(V2A, 122), ("bbr2plus", 122), ("bbr2", 151)])
def test_leaving_fast_recovery_does_not_restore_the_saved_cwnd(glue, variant, after):
    """v2alpha restores the cwnd saved on entering loss recovery only when an RTO's Loss state ends
    (bbr2_set_state()), not when fast recovery ends: cwnd 120 in recovery grows by one per ACK (121, 122)
    and stays. bbr2 (v2 draft BBRRestoreCwnd()) takes the saved 150 back (then + 1)."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE)
    g.ssthresh(sk)                           # saves 150
    g.set(sk, TCP, snd_cwnd=120)
    g.set_ca_state(sk, RECOVERY)
    if variant == "bbr2":
        g.set(sk, BBR, packet_conservation=0)
        g.set(sk, BBR, prev_ca_state=RECOVERY)
    ack(g, sk)
    g.set_ca_state(sk, OPEN)
    ack(g, sk)
    assert cwnd(g, sk) == after
    g.free(sk)


def test_leaving_an_rto_restores_the_saved_cwnd(glue):
    """After an RTO in CRUISE (ssthresh saves 150, the stack sets cwnd to 101, then Loss), the first ACK back
    in Open restores cwnd to max(cwnd, saved) = 150; + 1 ACKed would be 151, but the RTO also set
    inflight_lo to the saved 150 (next test), which caps cwnd."""
    g = glue(V2A)
    sk = connection(g, V2A, CRUISE)
    g.ssthresh(sk)
    g.set(sk, TCP, snd_cwnd=101)
    g.set_ca_state(sk, LOSS)
    g.set_ca_state(sk, OPEN)
    ack(g, sk)
    assert (cwnd(g, sk), g.get(sk, BBR, "inflight_lo")) == (150, 150)
    g.free(sk)


@pytest.mark.parametrize("variant, probing, inflight_lo", [
    (V2A, False, 150), ("bbr2plus", False, 150), (V2A, True, INF), ("bbr2", False, INF)])
def test_rto_outside_probing_starts_inflight_lo_from_the_saved_cwnd(glue, variant, probing, inflight_lo):
    """v2alpha's bbr2_set_state(TCP_CA_Loss): outside bandwidth probing, an unset inflight_lo starts at the
    cwnd saved before the RTO (150), not at the cwnd after it (the stack's in-flight + 1). While probing (UP)
    it stays unset; bbr2 does not seed it."""
    g = glue(variant)
    sk = connection(g, variant, UP if probing else CRUISE)
    g.ssthresh(sk)
    g.set(sk, TCP, snd_cwnd=101)
    g.set_ca_state(sk, LOSS)
    assert g.get(sk, BBR, "inflight_lo") == inflight_lo
    g.free(sk)


# --- precautionary ("risky") probing: prev_probe_too_high, stopped_risky_probe ----------------------------

@pytest.mark.parametrize("variant, remembered", [(V2A, 1), ("bbr2plus", 1), ("bbr2", 0)])
def test_lossy_probe_is_remembered(glue, variant, remembered):
    """v2alpha's bbr2_handle_inflight_too_high() sets prev_probe_too_high (the v2 draft has no such flag)."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=130, bw_probe_samples=1)
    ack(g, sk, delivered=200, tx_in_flight=120, lost=3, losses=1, prior_in_flight=150)
    assert state(g, sk) == DOWN
    assert g.get(sk, BBR, "prev_probe_too_high") == remembered
    g.free(sk)


@pytest.mark.parametrize("variant, prior, down", [
    (V2A, 120, True), (V2A, 105, False), ("bbr2plus", 120, True), ("bbr2", 120, False)])
def test_probe_after_a_lossy_one_stops_at_inflight_hi(glue, variant, prior, down):
    """v2alpha's ProbeBW_UP: after a lossy probe (prev_probe_too_high), UP ends (stopped_risky_probe) once the
    in-flight volume before the ACK, at the earliest departure time plus one send quantum (pacing gain 1.25 >
    1), reaches inflight_hi (120): 120 + the quantum does, 105 + 12 does not. bbr2 has no such exit; BBRv2+
    goes straight to DOWN, not to POST_UP."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=100, inflight_hi=120, prev_probe_too_high=1)
    ack(g, sk, tx_in_flight=100, prior_in_flight=prior)
    assert state(g, sk) == (DOWN if down else UP)
    if down:
        assert (g.get(sk, BBR, "prev_probe_precautionary"), g.get(sk, BBR, "prev_probe_too_high")) == (1, 0)
    g.free(sk)


@pytest.mark.parametrize("variant, too_high, after", [(V2A, 0, REFILL), (V2A, 1, DOWN), ("bbr2", 0, DOWN)])
def test_safe_risky_probe_probes_again_at_once(glue, variant, too_high, after):
    """v2alpha's bbr2_adapt_upper_bounds(): at the round end closing a stopped risky probe's feedback, with no
    excess loss since, it probes again at once (REFILL); with loss it stays in DOWN. bbr2 stays in DOWN."""
    g = glue(variant)
    sk = connection(g, variant, DOWN, inflight=150, inflight_hi=120, ack_phase=4, prev_probe_precautionary=1,
                    prev_probe_too_high=too_high, probe_wait_us=2_000_000)
    ack(g, sk, round_start=True, tx_in_flight=100)
    assert state(g, sk) == after
    g.free(sk)


# --- the loss threshold on v2alpha's 1/256 scale ----------------------------------------------------------

@pytest.mark.parametrize("variant, lost, down", [
    (V2A, 2, True), ("bbr2plus", 2, True), (V2A, 1, False), ("bbr2", 2, False), ("bbr2", 3, True)])
def test_probe_loss_threshold_is_5_of_256(glue, variant, lost, down):
    """An ACK in UP whose sampled packet saw `lost` of 100 in flight lost since its send: v2alpha's threshold
    100 * 5 >> 8 = 1, so 2 losses end the probe (1.95 %); the v2 draft's 2 % needs 3."""
    assert v2a_too_high(2, 100) and not v2a_too_high(1, 100)
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=100, bw_probe_samples=1)
    ack(g, sk, tx_in_flight=100, lost=lost, losses=1)
    assert state(g, sk) == (DOWN if down else UP)
    g.free(sk)


# --- per lost packet: v2alpha's bbr2_skb_marked_lost() ----------------------------------------------------

@BOTH_V2A
@pytest.mark.parametrize("tx_in_flight, lost_since, inflight_hi", [
    (120, 3, 120),   # budget ceil(119 x 5 / 256) = 3 > 2 lost before: 119 + (1 << 8) / 251 = 120
    (200, 10, 199),  # budget ceil(199 x 5 / 256) = 4 <= 9 lost before: prefix 0, 199 (the drafts: 194)
    (150, 3, 150),   # 3 > 150 x 5 >> 8 = 2: too much loss on the 1/256 scale (the drafts: exactly 2 %, not)
    (50, 2, 71),     # 49 + 0, below 0.7 x BBRTargetInflight() = 0.7 x (BDP 100 + UP's 2 of budget) = 71
])
def test_lost_packet_sets_inflight_hi_from_its_loss_budget(glue, variant, tx_in_flight, lost_since,
                                                          inflight_hi):
    """A packet sent while probing is marked lost with too much loss since its send (v2alpha's threshold):
    inflight_hi = max(the volume before it plus the rest of its loss budget, rounded up, / (1 - 5/256),
    never below the volume before it; 0.7 x BBRTargetInflight()) and UP ends."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=130, bw_probe_samples=1)
    lost_packet(g, sk, tx_in_flight, lost_since)
    assert state(g, sk) == DOWN
    assert g.get(sk, BBR, "inflight_hi") == inflight_hi
    g.free(sk)


@BOTH_V2A
def test_first_lost_packet_of_a_round_restarts_the_loss_round(glue, variant):
    """v2alpha, as the v3 draft's NoteLoss(): the round trip's first lost packet sets loss_round_delivered to
    C.delivered and loss_in_round; a later loss of the round leaves them (bbr2: neither,
    test_bbr2_glue.py)."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE, loss_in_round=0)
    lost_packet(g, sk, 100, 1)
    g.set(sk, TCP, delivered=D + 50)
    lost_packet(g, sk, 100, 2)
    assert (g.get(sk, BBR, "loss_round_delivered"), g.get(sk, BBR, "loss_in_round")) == (D, 1)
    g.free(sk)


# --- in flight at the earliest departure time, before the ACK --------------------------------------------

@pytest.mark.parametrize("variant, ahead_us, after", [
    ("bbr2", 1000, DOWN), (V2A, 0, DOWN), (V2A, 1000, CRUISE)])
def test_down_ends_on_the_in_flight_volume_at_the_earliest_departure_time(glue, variant, ahead_us, after):
    """ProbeBW_DOWN ends (CRUISE) when in flight is at most the BDP (100). 105 in flight, 106 before the
    ACK: v2alpha counts what is still in flight when the next packet may leave (tcp_wstamp_ns ahead of
    the clock): 1 ms at 10 packets/ms is 10 fewer, 96, and it cruises; bbr2 counts the 105 now."""
    g = glue(variant)
    sk = connection(g, variant, DOWN, inflight=105)
    g.set(sk, TCP, tcp_wstamp_ns=NOW * 1000 + ahead_us * 1000)
    ack(g, sk)
    assert state(g, sk) == after
    g.free(sk)


@pytest.mark.parametrize("variant, down", [(V2A, True), ("bbr2", False)])
def test_up_exit_counts_the_in_flight_before_the_ack(glue, variant, down):
    """v2alpha's UP exit (a min_rtt elapsed, in flight at least BBRInflight(max_bw, 1.25) = 127) reads the
    packets in flight before this ACK (130) plus a send quantum, not the 100 left after it (bbr2)."""
    g = glue(variant)
    sk = connection(g, variant, UP, inflight=100, cycle_stamp=NOW - 2 * MIN_RTT)
    ack(g, sk, prior_in_flight=130)
    assert state(g, sk) == (DOWN if down else UP)
    g.free(sk)


@pytest.mark.parametrize("variant, inflight_lo", [(V2A, 150), ("bbr2", 200)])
def test_cruise_clamps_inflight_lo_to_inflight_hi(glue, variant, inflight_lo):
    """v2alpha's bbr2_start_bw_probe_cruise(): a set inflight_lo is clamped to inflight_hi on entering
    CRUISE (200 -> 150); bbr2 leaves it."""
    g = glue(variant)
    sk = connection(g, variant, DOWN, inflight=50, inflight_hi=150, inflight_lo=200)
    ack(g, sk)
    assert state(g, sk) == CRUISE
    assert g.get(sk, BBR, "inflight_lo") == inflight_lo
    g.free(sk)


# --- Startup and Drain ------------------------------------------------------------------------------------

@pytest.mark.parametrize("variant, events_before, inflight_hi", [(V2A, 7, BDP), ("bbr2", 2, 150)])
def test_startup_loss_exit_bounds_inflight_hi_at_the_bdp(glue, variant, events_before, inflight_hi):
    """Startup's loss exit (the round's 8th loss event for v2alpha, 3rd for bbr2; 5 of 100 lost): v2alpha's
    bbr2_handle_queue_too_high_in_startup() sets inflight_hi = BBRInflight(max_bw, 1) = 100, without the
    v3 draft's max(.., inflight_latest = 150) that bbr2 takes; entering Drain v2alpha sets ssthresh to the
    same 100 and resets the round's congestion signals."""
    g = glue(variant)
    sk = connection(g, variant, STARTUP, inflight=150, loss_events_in_round=events_before, loss_in_round=1,
                    inflight_latest=150)
    g.set_ca_state(sk, RECOVERY)
    ack(g, sk, round_start=True, delivered=50, tx_in_flight=100, lost=5, losses=1)
    assert state(g, sk) == DRAIN
    assert g.get(sk, BBR, "inflight_hi") == inflight_hi
    assert g.get(sk, TCP, "snd_ssthresh") == (BDP if variant == V2A else 0x7FFFFFFF)   # TCP_INFINITE_SSTHRESH
    g.free(sk)


@pytest.mark.parametrize("variant, inflight_hi", [(V2A, BDP), ("bbr2", INF)])
def test_startup_loss_exit_is_checked_before_the_bandwidth_plateau(glue, variant, inflight_hi):
    """An ACK that ends Startup both ways (a third round without 25 % growth, and high loss): v2alpha checks
    the loss exit first and sets inflight_hi; bbr2 checks the plateau first, the pipe is full, and the loss
    exit (Startup only) no longer applies."""
    g = glue(variant)
    events = 7 if variant == V2A else 2
    sk = connection(g, variant, STARTUP, inflight=150, loss_events_in_round=events, loss_in_round=1,
                    full_bw=vg.bw_units(BW_PPS), full_bw_cnt=2)
    g.set_ca_state(sk, RECOVERY)
    ack(g, sk, round_start=True, delivered=50, tx_in_flight=100, lost=5, losses=1)
    assert state(g, sk) == DRAIN
    assert g.get(sk, BBR, "inflight_hi") == inflight_hi
    g.free(sk)


@pytest.mark.parametrize("variant, after", [(V2A, 19), ("bbr2", 18)])
def test_startup_cwnd_grows_while_below_twice_the_initial_cwnd(glue, variant, after):
    """v2alpha's Startup: cwnd grows by the packets ACKed while below its target or below twice the initial
    cwnd (20). With a target of about 16 (500 packets/s: BDP 5 x 2.89 + aggregation) cwnd 18 still grows to
    19; the v2 draft grows past the target only before 10 packets were delivered (bbr2: stays 18)."""
    g = glue(variant)
    low = vg.bw_units(500)
    sk = connection(g, variant, STARTUP, cwnd=18, inflight=18, **{"bw_hi[0]": low, "bw_hi[1]": low})
    g.set(sk, SOCK, sk_pacing_rate=int(pacing_rate(2.89, 500)))
    ack(g, sk, delivered=5, bw_pps=500)
    assert cwnd(g, sk) == after
    g.free(sk)


# --- ProbeRTT's clock and the send quantum -----------------------------------------------------------------

@pytest.mark.parametrize("variant, renewed", [(V2A, True), ("bbr2", False)])
def test_an_rtt_equal_to_the_minimum_renews_the_probe_rtt_timer(glue, variant, renewed):
    """v2alpha's bbr_update_min_rtt(): an RTT sample equal to probe_rtt_min_us (10 ms, taken 1 s ago) renews
    its time stamp, postponing ProbeRTT; the v2 draft renews it only on a lower sample."""
    g = glue(variant)
    j = g.jiffies.value
    sk = connection(g, variant, CRUISE, probe_rtt_min_stamp=j - 1000)
    ack(g, sk, rtt_us=MIN_RTT)
    assert (g.get(sk, BBR, "probe_rtt_min_stamp") == g.jiffies.value) == renewed
    g.free(sk)


@pytest.mark.parametrize("variant, min_after", [(V2A, MIN_RTT), ("bbr2", MIN_RTT + 5000)])
def test_a_delayed_ack_does_not_replace_an_expired_minimum(glue, variant, min_after):
    """Once the ProbeRTT interval (5 s) has passed, v2alpha takes a new probe_rtt_min_us from any RTT sample
    except a delayed ACK's (rs->is_ack_delayed); the v2 draft takes any sample."""
    g = glue(variant)
    j = g.jiffies.value
    sk = connection(g, variant, CRUISE, probe_rtt_min_stamp=j - 6000)
    ack(g, sk, rtt_us=MIN_RTT + 5000, is_ack_delayed=1)
    assert g.get(sk, BBR, "probe_rtt_min_us") == min_after
    g.free(sk)


@pytest.mark.parametrize("variant", [V2A, "bbr2"])
def test_send_quantum_has_the_min_rtt_bonus(glue, variant):
    """At a 1 ms min_rtt v2alpha's send quantum (bbr_tso_segs_generic(), tso_rtt_shift 9) adds 64 KB >> (1000
    >> 9) = 32 KB to the pacing rate's 1 ms of bytes; the quantization budget floors the cwnd target at three
    quanta. In CRUISE with a BDP of 10 packets cwnd 200 falls to that floor: v2alpha 3 x (rate / 1024 +
    32768) / 1448 segments, bbr2 3 x (rate / 1024) / 1448."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE, cwnd=200, min_rtt_us=1000)
    ack(g, sk)
    rate = g.get(sk, SOCK, "sk_pacing_rate")
    quantum = ((rate >> 10) + (32768 if variant == V2A else 0)) // MSS
    assert cwnd(g, sk) == 3 * max(quantum, 2)
    g.free(sk)
