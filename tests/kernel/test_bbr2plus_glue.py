"""bbr2plus (BBRv2+) on the host: the mechanisms BBRv2+ adds to BBRv2, driven through the module's own
tcp_congestion_ops as tests/kernel/test_bbr2_glue.py does for bbr2/bbr3 (same connection: max_bw 10,000
packets/s, min_rtt 10 ms, a BDP of 100 packets).

Expected values come from BBRv2+'s description (Yang et al.; the authors' module defaults, the variants
README's "bbr2plus against the authors' code"), not from the code: PRE_UP one round at pacing gain 1.10,
GUARD one round at 1.0, UP only if GUARD's smoothed RTT (EWMA 1/8 of the round's samples) is at most the
last round's + min(2 %, 2 ms), else DOWN_SLIGHTLY at 0.90; UP's BBRv2 exit leads to POST_UP (one round
at 1.0), then UP again if the probe's min RTT rose at most min(2 %, 2 ms) over the one before it, else
DOWN (Google's v2alpha 0.75, the bbr2plus default); a probe every 8 + U{0..3} CRUISE rounds, not after
2-3 s; the max-bw filter advanced at a round's end in CRUISE/DOWN when the round's min RTT exceeds 1.10 x
the last 4 rounds' min, or 25 rounds after a sample last reached max_bw; a cwnd allowance of max_bw x
rttvar x 2 (2.89 before Startup's Drain ended) when rttvar > 40 % of min_rtt; the switch to plain BBRv2
(from Startup) after 2 CRUISE phases whose min RTT exceeded min(the last CRUISE's, min_rtt) + 10 % of the
reference RTT, and back after 4 with min RTT <= min_rtt + 5 %. Samplers see PRE_UP/GUARD as REFILL,
POST_UP as UP, DOWN_SLIGHTLY as DOWN (bbr_bw_lo's low 3 bits).

bench/glue_mutations.py applies the wrong implementations of variant_glue.BBR2PLUS_MUTATIONS one at a
time and records that these tests fail for each.
"""
import ctypes

import pytest

import variant_glue as vg
from test_bbr2_glue import (BW_PPS, D, MIN_RTT, NOW, BBR_UNIT, connection, ack, state, pacing_rate, cwnd,
                            CRUISE, DOWN, REFILL, UP, STARTUP)
from test_variant_glue import glue  # noqa: F401  (the fixture: builds each variant once per module)
from variant_glue import BBR, SOCK, TCP, FCA as PLUS

V = "bbr2plus"
NONE, PRE_UP, GUARD, POST_UP, DOWN_SLIGHTLY = range(5)     # BBRv2+'s sub-phases (struct bbr2p's phase)


def plus(g, sk, **fields):
    """Write struct bbr2p's fields (BBRv2+'s per-connection state)."""
    g.set(sk, PLUS, **fields)


def pget(g, sk, name):
    return g.get(sk, PLUS, name)


def gain(g, sk):
    """The pacing gain samplers read (bbr_pacing_gain, 1/256)."""
    return g.info(sk)["pacing_gain"]


def rate(g, sk):
    return g.get(sk, SOCK, "sk_pacing_rate")


# --- delay-guided probing: REFILL -> PRE_UP -> GUARD -> UP or DOWN_SLIGHTLY ----------------------------

def test_refill_round_end_starts_pre_up_at_1_10(glue):
    """A round of REFILL is followed by PRE_UP: one round paced at 1.10 x bw (samplers: still REFILL),
    not BBRv2's UP at 1.25."""
    g = glue(V)
    sk = connection(g, V, REFILL)
    ack(g, sk, round_start=True)
    assert state(g, sk) == REFILL and pget(g, sk, "phase") == PRE_UP
    assert gain(g, sk) == int(1.10 * BBR_UNIT)
    assert rate(g, sk) == pytest.approx(pacing_rate(1.10), rel=0.01)
    assert g.get(sk, BBR, "bw_probe_samples") == 0          # PRE_UP is no loss probe


def test_pre_up_lasts_one_round_then_guard_at_1_0(glue):
    g = glue(V)
    sk = connection(g, V, REFILL)
    ack(g, sk, round_start=True)                            # REFILL -> PRE_UP
    ack(g, sk)                                              # within PRE_UP's round
    assert pget(g, sk, "phase") == PRE_UP
    g.set(sk, BBR, next_rtt_delivered=D + 1)
    ack(g, sk, round_start=True)                            # PRE_UP's round ends
    assert state(g, sk) == REFILL and pget(g, sk, "phase") == GUARD
    assert gain(g, sk) == BBR_UNIT


@pytest.mark.parametrize("srtt_last, srtt_cur, up", [
    (10_000, 10_200, True),      # 2 % of 10 ms = 0.2 ms < 2 ms: at the bound
    (10_000, 10_201, False),
    (200_000, 202_000, True),    # 2 % of 200 ms = 4 ms: the 2 ms cap applies
    (200_000, 202_001, False),
    (10_000, 9_000, True),       # RTT fell
])
def test_guard_goes_up_only_if_srtt_rose_at_most_min_2pct_2ms(glue, srtt_last, srtt_cur, up):
    """At GUARD's round end: UP (1.25, a loss probe) if this round's smoothed RTT <= the last round's +
    min(2 %, 2 ms); else DOWN_SLIGHTLY, a DOWN paced at 0.90 (not the 0.75 of DOWN)."""
    g = glue(V)
    sk = connection(g, V, REFILL)
    plus(g, sk, phase=GUARD, srtt_last=srtt_last, srtt_cur=srtt_cur, min_cur=MIN_RTT, min_last=MIN_RTT)
    ack(g, sk, round_start=True, rtt_us=srtt_cur)
    if up:
        assert state(g, sk) == UP and pget(g, sk, "phase") == NONE
        assert gain(g, sk) == int(1.25 * BBR_UNIT)
        assert g.get(sk, BBR, "bw_probe_samples") == 1
    else:
        assert state(g, sk) == DOWN and pget(g, sk, "phase") == DOWN_SLIGHTLY
        assert gain(g, sk) == int(0.90 * BBR_UNIT)
        assert rate(g, sk) == pytest.approx(pacing_rate(0.90), rel=0.01)


def test_plain_down_paces_at_v2alpha_0_75(glue):
    """DOWN after a probe is v2alpha's 0.75 (the bbr2plus default), which DOWN_SLIGHTLY's 0.90 is not."""
    g = glue(V)
    sk = connection(g, V, REFILL)
    plus(g, sk, phase=POST_UP, min_before_probe=10_000, min_last=10_500, min_cur=10_500)
    g.set(sk, BBR, state=UP)
    ack(g, sk, round_start=True)
    assert state(g, sk) == DOWN and pget(g, sk, "phase") == NONE
    assert gain(g, sk) == int(0.75 * BBR_UNIT)


# --- UP -> POST_UP -> UP again or DOWN ------------------------------------------------------------------

def test_up_exit_leads_to_post_up_for_one_round(glue):
    """UP ends as in BBRv2 (a min_rtt elapsed, inflight > 1.25 BDP) but in POST_UP: paced at 1.0 for one
    round (a new round starts; samplers: still UP), not DOWN."""
    g = glue(V)
    sk = connection(g, V, UP, inflight=130, cycle_stamp=NOW - 2 * MIN_RTT)
    g.set(sk, TCP, delivered=D + 500)
    ack(g, sk)
    assert state(g, sk) == UP and pget(g, sk, "phase") == POST_UP
    assert gain(g, sk) == BBR_UNIT
    assert g.get(sk, BBR, "next_rtt_delivered") == D + 500      # a round from now


@pytest.mark.parametrize("before, probe_min, again", [
    (10_000, 10_200, True),      # +2 %: at the bound
    (10_000, 10_201, False),
    (200_000, 202_000, True),    # 2 ms cap
    (200_000, 202_001, False),
])
def test_post_up_probes_again_only_if_min_rtt_rose_at_most_min_2pct_2ms(glue, before, probe_min, again):
    """At POST_UP's round end the probe's min RTT (the round before POST_UP's) is compared with the min RTT
    before the probe: at most + min(2 %, 2 ms): UP again (1.25); else DOWN."""
    g = glue(V)
    sk = connection(g, V, UP)
    plus(g, sk, phase=POST_UP, min_before_probe=before, min_last=probe_min, min_cur=before)  # POST_UP's own
    ack(g, sk, round_start=True, rtt_us=before)                                             # round: no rise
    if again:
        assert state(g, sk) == UP and pget(g, sk, "phase") == NONE
        assert gain(g, sk) == int(1.25 * BBR_UNIT)
    else:
        assert state(g, sk) == DOWN and pget(g, sk, "phase") == NONE


def test_post_up_loss_cuts_inflight_hi_but_stays(glue):
    """Loss above 2 % in POST_UP's round still cuts inflight_hi (the probe's feedback), but only UP
    itself is ended by it (POST_UP ends at its round's end)."""
    g = glue(V)
    sk = connection(g, V, UP, bw_probe_samples=1)
    plus(g, sk, phase=POST_UP, min_before_probe=MIN_RTT, min_last=MIN_RTT, min_cur=MIN_RTT)
    ack(g, sk, delivered=200, tx_in_flight=120, lost=3, losses=1, prior_in_flight=150)
    assert g.info(sk)["bw_hi"] == 120
    assert state(g, sk) == UP and pget(g, sk, "phase") == POST_UP


# --- probe timing: 8 + U{0..3} CRUISE rounds ------------------------------------------------------------

@pytest.mark.parametrize("rnd, rounds", [(0, 8), (4, 8), (3, 11), (7, 11), (1, 9)])
def test_probe_wait_is_8_plus_u0_3_rounds(glue, rnd, rounds):
    """Each DOWN draws the CRUISE rounds to the next probe: 8 + U{0..3} (the harness's random value r
    gives r mod 4)."""
    g = glue(V)
    g.random.value = rnd
    sk = connection(g, V, REFILL)
    plus(g, sk, phase=GUARD, srtt_last=10_000, srtt_cur=20_000)
    ack(g, sk, round_start=True)                                    # GUARD -> DOWN_SLIGHTLY
    g.random.value = 0
    assert pget(g, sk, "probe_wait_rounds") == rounds


def test_probe_after_the_drawn_number_of_cruise_rounds(glue):
    """With 9 rounds drawn, CRUISE probes (REFILL) at the end of its 9th round, not before."""
    g = glue(V)
    sk = connection(g, V, CRUISE)
    plus(g, sk, probe_wait_rounds=9)
    for i in range(1, 10):
        g.set(sk, BBR, next_rtt_delivered=D + 1)
        ack(g, sk, round_start=True, bw_pps=BW_PPS // 2)
        assert state(g, sk) == (REFILL if i == 9 else CRUISE), i


def test_rounds_outside_cruise_do_not_count(glue):
    """A round that ends in DOWN (inflight still above the BDP) leaves the CRUISE-round count alone."""
    g = glue(V)
    sk = connection(g, V, DOWN, inflight=130)
    plus(g, sk, probe_wait_rounds=5, min_cur=MIN_RTT, **{f"round_min[{i}]": MIN_RTT for i in range(4)})
    ack(g, sk, round_start=True, bw_pps=5_000)
    assert state(g, sk) == DOWN and pget(g, sk, "probe_wait_rounds") == 5


@pytest.mark.parametrize("variant, probes", [("bbr2plus", False), ("bbr2", True)])
def test_cruise_ignores_bbrv2s_wall_clock(glue, variant, probes):
    """5 s after DOWN began (beyond BBRv2's 2-3 s) BBRv2 probes; BBRv2+ with CRUISE rounds to go does
    not."""
    g = glue(variant)
    sk = connection(g, variant, CRUISE, cycle_stamp=NOW - 5_000_000, probe_wait_us=2_500_000)
    if variant == V:
        plus(g, sk, probe_wait_rounds=5)
    ack(g, sk)
    assert (state(g, sk) == REFILL) == probes


def test_reno_coexistence_bound_still_applies(glue):
    """min(BDP, 63) rounds since the last probe end CRUISE whatever the CRUISE-round count."""
    g = glue(V)
    sk = connection(g, V, CRUISE, rounds_since_probe=62)
    plus(g, sk, probe_wait_rounds=10)
    ack(g, sk, round_start=True, bw_pps=BW_PPS // 2)
    assert state(g, sk) == REFILL


# --- the max-bw filter: advanced on an RTT rise of 10 % or after 25 rounds ------------------------------

OLD, CUR = vg.bw_units(12_000), vg.bw_units(11_000)


def advanced(g, sk):
    return g.get(sk, BBR, "bw_hi[0]") == CUR and g.get(sk, BBR, "bw_hi[1]") == 0


@pytest.mark.parametrize("st", [CRUISE, DOWN])
@pytest.mark.parametrize("round_min, adv", [(11_001, True), (11_000, False), (10_000, False)])
def test_filter_advances_when_a_rounds_min_rtt_rose_10pct(glue, st, round_min, adv):
    """At a round's end in CRUISE or DOWN: the round's min RTT above 1.10 x the smallest of the last 4
    rounds' (10 ms) advances the filter (the previous cycle's max is forgotten)."""
    g = glue(V)
    sk = connection(g, V, st, inflight=130, **{"bw_hi[0]": OLD, "bw_hi[1]": CUR})
    plus(g, sk, min_cur=round_min, min_last=10_000, **{f"round_min[{i}]": 10_000 + 300 * i for i in range(4)},
         probe_wait_rounds=10, rounds_since_advance=3)
    ack(g, sk, round_start=True, bw_pps=5_000, rtt_us=round_min)
    assert advanced(g, sk) == adv


@pytest.mark.parametrize("rounds_at_12ms, adv", [(5, False), (4, True)])
def test_filter_window_is_the_last_4_rounds(glue, rounds_at_12ms, adv):
    """The reference is the min of the last 4 rounds: after a 10 ms round and 5 rounds at 12 ms the
    10 ms is 5 rounds back and no longer counts (12 ms against 12 ms: no advance); after 4 it still
    counts (12 ms > 1.10 x 10 ms: advance)."""
    g = glue(V)
    sk = connection(g, V, CRUISE, **{"bw_hi[0]": OLD, "bw_hi[1]": CUR})
    plus(g, sk, min_cur=10_000, probe_wait_rounds=20, rounds_since_advance=0,
         **{f"round_min[{i}]": 10_000 for i in range(4)})
    for _ in range(rounds_at_12ms):
        g.set(sk, BBR, next_rtt_delivered=D + 1)
        ack(g, sk, round_start=True, bw_pps=5_000, rtt_us=12_000)
    plus(g, sk, rounds_since_advance=0)
    g.set(sk, BBR, **{"bw_hi[0]": OLD, "bw_hi[1]": CUR})
    g.set(sk, BBR, next_rtt_delivered=D + 1)
    ack(g, sk, round_start=True, bw_pps=5_000, rtt_us=12_000)
    assert advanced(g, sk) == adv


@pytest.mark.parametrize("since, adv", [(24, True), (23, False)])
def test_filter_advances_25_rounds_after_max_bw_was_sampled(glue, since, adv):
    g = glue(V)
    sk = connection(g, V, CRUISE, **{"bw_hi[0]": OLD, "bw_hi[1]": CUR})
    plus(g, sk, min_cur=MIN_RTT, probe_wait_rounds=10, rounds_since_advance=since,
         **{f"round_min[{i}]": MIN_RTT for i in range(4)})
    ack(g, sk, round_start=True, bw_pps=5_000)      # the 25th (24th) round without a max_bw sample
    assert advanced(g, sk) == adv


def test_a_sample_at_max_bw_restarts_the_25_rounds(glue):
    g = glue(V)
    sk = connection(g, V, CRUISE)
    plus(g, sk, probe_wait_rounds=10, rounds_since_advance=20)
    ack(g, sk, bw_pps=BW_PPS)
    assert pget(g, sk, "rounds_since_advance") == 0


def test_filter_not_advanced_at_the_probes_end(glue):
    """BBRv2 advances the filter when the probe's feedback ends; BBRv2+ (delay mode) does not."""
    for variant, adv in (("bbr2", True), (V, False)):
        g = glue(variant)
        sk = connection(g, variant, DOWN, inflight=130, ack_phase=4, **{"bw_hi[0]": OLD, "bw_hi[1]": CUR})
        if variant == V:
            plus(g, sk, min_cur=MIN_RTT, probe_wait_rounds=10, rounds_since_advance=0,
                 **{f"round_min[{i}]": MIN_RTT for i in range(4)})
        ack(g, sk, round_start=True, bw_pps=5_000)
        assert advanced(g, sk) == adv, variant


# --- the cwnd allowance for variable RTTs ---------------------------------------------------------------

def target_cwnd(g, mdev_us, drained=1):
    """cwnd after one ACK from a large cwnd in CRUISE (capped at the cwnd target, inflight_hi unbounded)
    with the stack's RTT variation mdev_us / 4."""
    sk = connection(g, V, CRUISE, cwnd=1000)
    plus(g, sk, probe_wait_rounds=10, drained=drained, rtt_cnt=5)
    g.set(sk, TCP, mdev_us=mdev_us)
    ack(g, sk, bw_pps=5_000)
    return cwnd(g, sk)


@pytest.mark.parametrize("rttvar_us, drained, extra", [
    (5_000, 1, 100),           # 0.01 packets/us x 5 ms x 2
    (5_000, 0, 144),           # x 2.89 before Startup's Drain ended
    (4_000, 1, 0),             # rttvar = 40 % of min_rtt: no allowance
    (4_001, 1, 80),
])
def test_rttvar_allowance(glue, rttvar_us, drained, extra):
    g = glue(V)
    base = target_cwnd(g, 0)
    assert target_cwnd(g, 4 * rttvar_us, drained) - base == pytest.approx(extra, abs=1)


def test_allowance_keeps_the_max_rttvar_of_recent_rounds(glue):
    """A high RTT variation one ACK ago still counts (max over 4 rounds)."""
    g = glue(V)
    sk = connection(g, V, CRUISE, cwnd=1000)
    plus(g, sk, probe_wait_rounds=10, drained=1, rtt_cnt=5)
    g.set(sk, TCP, mdev_us=4 * 5_000)
    ack(g, sk, bw_pps=5_000)
    high = cwnd(g, sk)
    g.set(sk, TCP, mdev_us=0, snd_cwnd=1000)
    ack(g, sk, bw_pps=5_000)
    assert cwnd(g, sk) >= high       # (one more packet of extra_acked may come with the 2nd ACK)


# --- per-round RTTs --------------------------------------------------------------------------------------

def test_round_srtt_is_an_ewma_of_the_rounds_samples_and_shifts_each_round(glue):
    """Within a round: srtt = 7/8 srtt + 1/8 sample, from the round's first sample; at the next round's
    start it becomes the last round's (the authors' code keeps the first RTT ever as the last round's:
    README, not copied)."""
    g = glue(V)
    sk = connection(g, V, CRUISE)
    plus(g, sk, probe_wait_rounds=20, srtt_cur=10_000, srtt_last=10_000, min_cur=10_000, min_last=10_000)
    g.set(sk, BBR, next_rtt_delivered=D + 1)
    ack(g, sk, round_start=True, rtt_us=12_000, bw_pps=5_000)       # round starts: its first sample
    assert pget(g, sk, "srtt_cur") == 12_000 and pget(g, sk, "srtt_last") == 10_000
    ack(g, sk, rtt_us=20_000, bw_pps=5_000)
    assert pget(g, sk, "srtt_cur") == 13_000                          # (7 x 12 + 20) / 8
    assert pget(g, sk, "min_cur") == 12_000
    g.set(sk, BBR, next_rtt_delivered=D + 1)
    ack(g, sk, round_start=True, rtt_us=11_000, bw_pps=5_000)
    assert pget(g, sk, "srtt_last") == 13_000 and pget(g, sk, "min_last") == 12_000
    assert pget(g, sk, "srtt_cur") == 11_000


# --- the switch to plain BBRv2 and back ------------------------------------------------------------------

def to_cruise(g, sk):
    """One ACK in DOWN with inflight below the BDP: the DOWN ends, CRUISE begins (or the switch)."""
    ack(g, sk, bw_pps=5_000)


@pytest.mark.parametrize("count, cruise_min, switched", [
    (1, 11_001, True),     # 2nd CRUISE above min(10 ms, 10 ms) + 10 % of the 10 ms reference
    (1, 11_000, False),
    (0, 12_000, False),    # only the 1st
])
def test_switch_to_bbrv2_after_2_queued_cruises(glue, count, cruise_min, switched):
    g = glue(V)
    sk = connection(g, V, DOWN, inflight=50)
    plus(g, sk, cruise_count=count, cruise_min=cruise_min, prev_cruise_min=10_000, ref_rtt=10_000,
         probe_wait_rounds=10)
    to_cruise(g, sk)
    if switched:
        assert pget(g, sk, "delay_mode") == 0
        assert state(g, sk) == STARTUP and g.get(sk, BBR, "filled_pipe") == 0
        assert gain(g, sk) == int(2.89 * BBR_UNIT)
    else:
        assert pget(g, sk, "delay_mode") == 1 and state(g, sk) == CRUISE
        assert pget(g, sk, "cruise_count") == (count + 1 if cruise_min > 11_000 else 0)


def test_switch_threshold_uses_the_smaller_of_last_cruise_and_min_rtt(glue):
    """Last CRUISE's min RTT 15 ms, min_rtt 10 ms: 11.5 ms is above min(15, 10) + 1 ms."""
    g = glue(V)
    sk = connection(g, V, DOWN, inflight=50)
    plus(g, sk, cruise_count=1, cruise_min=11_500, prev_cruise_min=15_000, ref_rtt=10_000,
         probe_wait_rounds=10)
    to_cruise(g, sk)
    assert pget(g, sk, "delay_mode") == 0


@pytest.mark.parametrize("count, cruise_min, back", [
    (3, 10_500, True),     # 4th clear CRUISE: min RTT <= min_rtt + 5 % of the reference
    (3, 10_501, False),
    (2, 10_000, False),
])
def test_return_to_bbrv2plus_after_4_clear_cruises(glue, count, cruise_min, back):
    g = glue(V)
    sk = connection(g, V, DOWN, inflight=50)
    plus(g, sk, delay_mode=0, cruise_count=count, cruise_min=cruise_min, prev_cruise_min=10_000,
         ref_rtt=10_000)
    to_cruise(g, sk)
    assert state(g, sk) == CRUISE
    assert pget(g, sk, "delay_mode") == int(back)


def test_return_starts_the_per_round_rtts_afresh(glue):
    """Back in BBRv2+, the rounds' RTTs from before the switch (not tracked in BBRv2 mode) are dropped:
    the next RTT sample starts this and the last round and the recent rounds' window."""
    g = glue(V)
    sk = connection(g, V, DOWN, inflight=50)
    plus(g, sk, delay_mode=0, cruise_count=3, cruise_min=10_000, prev_cruise_min=10_000, ref_rtt=10_000,
         min_cur=5_000, min_last=5_000, srtt_cur=5_000, srtt_last=5_000,
         **{f"round_min[{i}]": 5_000 for i in range(4)})
    to_cruise(g, sk)                       # the 4th clear CRUISE: back to BBRv2+; this ACK's RTT 10 ms
    assert pget(g, sk, "delay_mode") == 1
    assert [pget(g, sk, k) for k in ("min_cur", "min_last", "srtt_cur", "srtt_last")] == [MIN_RTT] * 4
    assert sorted(pget(g, sk, f"round_min[{i}]") for i in range(4)) == [MIN_RTT] + [0xFFFFFFFF] * 3


def test_bbrv2_mode_probes_as_bbrv2(glue):
    """In plain-BBRv2 mode REFILL goes straight to UP, and the wall clock times the probe."""
    g = glue(V)
    sk = connection(g, V, REFILL)
    plus(g, sk, delay_mode=0)
    ack(g, sk, round_start=True)
    assert state(g, sk) == UP and pget(g, sk, "phase") == NONE
    sk = connection(g, V, CRUISE, cycle_stamp=NOW - 5_000_000, probe_wait_us=2_500_000)
    plus(g, sk, delay_mode=0, probe_wait_rounds=5)
    ack(g, sk)
    assert state(g, sk) == REFILL


def test_reference_rtt_is_the_min_sample(glue):
    g = glue(V)
    sk = connection(g, V, CRUISE)
    plus(g, sk, probe_wait_rounds=10, ref_rtt=12_000, rtt_cnt=7)
    ack(g, sk, rtt_us=11_000, bw_pps=5_000)
    ack(g, sk, rtt_us=15_000, bw_pps=5_000)
    assert pget(g, sk, "ref_rtt") == 11_000


def test_no_memory_runs_as_plain_bbrv2_and_is_counted(glue):
    g = glue(V)
    before = g.dll.glue_param_get(b"alloc_failures")
    ctypes.c_int.in_dll(g.dll, "glue_alloc_fail").value = 1
    try:
        sk = connection(g, V, REFILL)
    finally:
        ctypes.c_int.in_dll(g.dll, "glue_alloc_fail").value = 0
    assert g.get(sk, BBR, "plus_id") == 0
    assert g.dll.glue_param_get(b"alloc_failures") == before + 1
    ack(g, sk, round_start=True)
    assert state(g, sk) == UP


@pytest.mark.parametrize("mutation", list(vg.BBR2PLUS_MUTATIONS))
def test_each_mutation_of_bbr2plus_names_one_place(tmp_path, mutation):
    """Each wrong implementation of the mutation record changes exactly one place of its header."""
    vg.mutate(vg.variants_dir(), tmp_path / "v", mutation)
