/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bbr2/bbr3: the decisions of BBR versions 2 and 3 as pure functions.
 *
 * Written from the specifications: draft-cardwell-iccrg-bbr-congestion-control-02
 * ("v2 draft", ICCRG, March 2022) and draft-ietf-ccwg-bbr ("v3 draft", CCWG).
 * Function names follow the drafts' pseudocode (BBRInflightWithHeadroom(),
 * IsInflightTooHigh(), ...). Both drafts use the same structure; where they
 * differ the caller passes the parameter (see bbr2_main.h).
 *
 * Units: bandwidth in packets per us << BW_SCALE (as Linux's tcp_bbr.c),
 * gains in 1/BBR_UNIT, volumes in packets, times in us, fractions in
 * percent or basis points as named. No socket state: compiled unchanged into
 * the kernel module and into the host test harness (kernel/tests/harness.c).
 */
#ifndef BBR2_MATH_H
#define BBR2_MATH_H

#ifndef BW_SCALE
#define BW_SCALE 24
#define BW_UNIT (1 << BW_SCALE)
#define BBR_SCALE 8
#define BBR_UNIT (1 << BBR_SCALE)
#endif

/* "Infinity" of the drafts' upper/lower bounds (inflight_hi, inflight_lo,
 * bw_lo before any loss): all bits set.
 */
#define BBR2_INF 0xFFFFFFFFU

/* BBRMinPipeCwnd: 4 packets (both drafts, "Minimum cwnd"). */
#define BBR2_MIN_PIPE_CWND 4

/* BBR's modes and ProbeBW's phases (both drafts, "State Machine"). */
enum bbr2_state {
	BBR2_STARTUP = 0,
	BBR2_DRAIN = 1,
	BBR2_PROBE_BW_DOWN = 2,
	BBR2_PROBE_BW_CRUISE = 3,
	BBR2_PROBE_BW_REFILL = 4,
	BBR2_PROBE_BW_UP = 5,
	BBR2_PROBE_RTT = 6,
};

/* BBRBDPMultiple(bw, gain) in packets, rounded up: gain * bw * min_rtt (as
 * tcp_bbr.c's bbr_bdp(); no overflow below 2^64 / 2^10 for bw * min_rtt).
 */
static inline u32 bbr2_bdp(u32 bw, u32 min_rtt_us, u32 gain)
{
	u64 w = (u64)bw * min_rtt_us;

	return (u32)min_t(u64, div_u64(((w * gain) >> BBR_SCALE) + BW_UNIT - 1, BW_UNIT),
			  BBR2_INF - 1);
}

/* IsInflightTooHigh() (v2 draft "Probing for Bandwidth in ProbeBW", v3 draft
 * "Updating the Model Upon Packet Loss"): the loss rate of the packets in
 * flight when the sampled packet was sent exceeds BBRLossThresh (2 %):
 * rs.lost > rs.tx_in_flight * BBRLossThresh. Threshold in basis points.
 */
static inline int bbr2_inflight_too_high(u32 lost, u32 tx_in_flight, u32 thresh_bp)
{
	return (u64)lost * 10000 > (u64)tx_in_flight * thresh_bp;
}

/* BBRHandleInflightTooHigh(): inflight_hi = max(rs.tx_in_flight,
 * BBRTargetInflight() * BBRBeta), BBRBeta = 0.7 (both drafts).
 */
static inline u32 bbr2_inflight_hi_on_loss(u32 tx_in_flight, u32 target_inflight,
					   u32 beta_pct)
{
	u32 cut = (u32)div_u64((u64)target_inflight * beta_pct, 100);

	return max_t(u32, tx_in_flight, cut);
}

/* BBRInflightHiFromLostPacket() (v2 draft 4.5.6.2) and BBRInflightAtLoss()
 * (v3 draft -06 5.5.10.2), for a lost packet P of `size` packets whose own
 * numbers (P.tx_in_flight, C.lost - P.lost) showed too much loss: the volume
 * in flight at which the loss rate crossed BBRLossThresh within P,
 *   inflight_prev = tx_in_flight - size,  lost_prev = lost - size,
 *   lost_prefix = (BBRLossThresh * inflight_prev - lost_prev) / (1 - BBRLossThresh),
 *   inflight_prev + lost_prefix.
 * lost_prefix is negative when the losses before P had crossed the threshold
 * already; both drafts keep its sign (Google's code takes 0 then), so the
 * volume may lie below inflight_prev; it is floored at 0 packets. Division
 * truncates toward zero. Threshold in basis points.
 */
static inline u32 bbr2_inflight_at_loss(u32 tx_in_flight, u32 lost, u32 size, u32 thresh_bp)
{
	s64 inflight_prev = (s64)tx_in_flight - size;
	s64 lost_prev = (s64)lost - size;
	s64 v = inflight_prev + div64_s64((s64)thresh_bp * inflight_prev - 10000 * lost_prev,
					  10000 - (s64)thresh_bp);

	return v < 0 ? 0 : (u32)min_t(s64, v, BBR2_INF - 1);
}

/* Google's BBRv2 alpha code (github.com/google/bbr, branch v2alpha,
 * net/ipv4/tcp_bbr2.c; the bbr2_v2alpha module and BBRv2+ built on it) on
 * its 1/256 scale: the loss threshold is "2 %" as 256 * 2 / 100 = 5, so
 * 5/256 = 1.95 %, derived here from the same basis points
 * (thresh_bp * 256 / 10000, truncated).
 */
static inline u32 bbr2_v2a_thresh(u32 thresh_bp)
{
	return thresh_bp * 256 / 10000;
}

/* v2alpha's bbr2_is_inflight_too_high(): losses above tx_in_flight * thresh
 * (the product truncated on the 1/256 scale), none without losses or
 * without packets in flight at the send.
 */
static inline int bbr2_v2a_inflight_too_high(u32 lost, u32 tx_in_flight, u32 thresh_bp)
{
	return lost > 0 && tx_in_flight &&
	       lost > (u32)(((u64)tx_in_flight * bbr2_v2a_thresh(thresh_bp)) >> 8);
}

/* v2alpha's in-flight volume at which a lost packet of `size` packets
 * crossed the threshold: the loss budget of the packets in flight before it,
 * rounded up; if the losses before it had used it up, the volume before it,
 * else that volume plus the budget's remainder / (1 - thresh). BBR2_INF (no
 * bound) when the counts are impossible (fewer in flight or lost than the
 * packet itself), as Google's code returns ~0U there.
 */
static inline u32 bbr2_v2a_inflight_at_loss(u32 tx_in_flight, u32 lost, u32 size, u32 thresh_bp)
{
	u32 thresh = bbr2_v2a_thresh(thresh_bp), inflight_prev, lost_prev;
	u64 budget, prefix = 0;

	if (tx_in_flight < size || lost < size || thresh >= 256)
		return BBR2_INF;
	inflight_prev = tx_in_flight - size;
	lost_prev = lost - size;
	budget = ((u64)inflight_prev * thresh + 255) >> 8;
	if (lost_prev < budget)
		prefix = div64_u64((budget - lost_prev) << 8, 256 - thresh);
	return (u32)min_t(u64, inflight_prev + prefix, BBR2_INF);
}

/* v2alpha's ProbeBW_UP exit (bbr2_update_cycle_phase(), case UP, without
 * the precautionary stop): a min_rtt elapsed in UP and the in-flight volume
 * (at the earliest departure time) at least BBRInflight(max_bw, 1.25).
 */
static inline int bbr2_v2a_up_done(u64 elapsed_us, u32 min_rtt_us, u32 inflight,
				   u32 inflight_at_up_gain)
{
	return elapsed_us > min_rtt_us && inflight >= inflight_at_up_gain;
}

/* BBRLossLowerBounds(): bw_lo = max(bw_latest, BBRBeta * bw_lo) and
 * inflight_lo = max(inflight_latest, BBRBeta * inflight_lo).
 */
static inline u32 bbr2_lower_bound_on_loss(u32 latest, u32 lo, u32 beta_pct)
{
	return max_t(u32, latest, (u32)div_u64((u64)lo * beta_pct, 100));
}

/* BBRInflightWithHeadroom(): inflight_hi less BBRHeadroom (15 %) of it, at
 * least one packet, and not below BBRMinPipeCwnd; infinite while inflight_hi
 * is.
 */
static inline u32 bbr2_inflight_with_headroom(u32 inflight_hi, u32 headroom_pct)
{
	u32 headroom;

	if (inflight_hi == BBR2_INF)
		return BBR2_INF;
	headroom = max_t(u32, 1, (u32)div_u64((u64)inflight_hi * headroom_pct, 100));
	return max_t(u32, inflight_hi > headroom ? inflight_hi - headroom : 0,
		     BBR2_MIN_PIPE_CWND);
}

/* BBRProbeRTTCwnd(): BBRBDPMultiple(bw, BBRProbeRTTCwndGain = 0.5), at least
 * BBRMinPipeCwnd (v2 and v3 drafts, "ProbeRTT"; BBR v1 used 4 packets).
 */
static inline u32 bbr2_probe_rtt_cwnd(u32 bw, u32 min_rtt_us, u32 gain)
{
	return max_t(u32, bbr2_bdp(bw, min_rtt_us, gain), BBR2_MIN_PIPE_CWND);
}

/* BBRCheckTimeToCruise(): leave ProbeBW_DOWN once inflight is within the
 * headroom below inflight_hi and at most one estimated BDP.
 */
static inline int bbr2_time_to_cruise(u32 inflight, u32 inflight_hi, u32 headroom_pct,
				      u32 bdp)
{
	if (inflight > bbr2_inflight_with_headroom(inflight_hi, headroom_pct))
		return 0;	/* not enough headroom */
	return inflight <= bdp;	/* inflight <= estimated BDP */
}

/* BBRIsRenoCoexistenceProbeTime(): probe after min(BBRTargetInflight(), 63)
 * round trips ("reno_rounds"; 63 rounds cap, both drafts).
 */
static inline int bbr2_reno_probe_time(u32 rounds_since_probe, u32 target_inflight,
				       u32 max_rounds)
{
	return rounds_since_probe >= min_t(u32, target_inflight, max_rounds);
}

/* BBRCheckTimeToProbeBW(): the wall-clock wait (BBRPickProbeWait: 2-3 s) has
 * elapsed in this phase, or it is time for the Reno-coexistence probe.
 */
static inline int bbr2_time_to_probe_bw(u64 elapsed_us, u32 probe_wait_us,
					u32 rounds_since_probe, u32 target_inflight,
					u32 max_rounds)
{
	return elapsed_us > probe_wait_us ||
	       bbr2_reno_probe_time(rounds_since_probe, target_inflight, max_rounds);
}

/* v2 draft, BBRUpdateProbeBWCyclePhase(), ProbeBW_UP: go DOWN once a min_rtt
 * has elapsed in UP and inflight exceeds BBRInflight(max_bw, 1.25).
 */
static inline int bbr2_up_done_v2(u64 elapsed_us, u32 min_rtt_us, u32 inflight,
				  u32 inflight_at_up_gain)
{
	return elapsed_us > min_rtt_us && inflight > inflight_at_up_gain;
}

/* v3 draft, BBRCheckTimeToGoDown(): while cwnd-limited at inflight_hi the
 * full-bandwidth estimator is reset (the probe may still find more); else the
 * probe ends once bandwidth stopped growing (BBR.full_bw_now).
 * Returns 1: go DOWN; 0: stay; -1: stay and reset the full-bw estimator.
 */
static inline int bbr2_up_done_v3(int cwnd_limited, u32 cwnd, u32 inflight_hi,
				  int full_bw_now)
{
	if (cwnd_limited && cwnd >= inflight_hi)
		return -1;
	return full_bw_now ? 1 : 0;
}

/* BBRRaiseInflightHiSlope(): in the n-th round of UP inflight_hi grows by
 * 2^n packets per round, i.e. by one packet per max(cwnd / 2^n, 1) packets
 * ACKed (n capped at 30).
 */
static inline u32 bbr2_probe_up_cnt(u32 cwnd, u32 up_rounds)
{
	return max_t(u32, cwnd >> min_t(u32, up_rounds, 30), 1);
}

/* BBRCheckStartupFullBandwidth(): bandwidth "still growing" if max_bw reached
 * 1.25 * full_bw (BBR's full-pipe test, both drafts).
 */
static inline int bbr2_bw_still_growing(u32 max_bw, u32 full_bw)
{
	return (u64)max_bw * BBR_UNIT >= (u64)full_bw * (BBR_UNIT * 5 / 4);
}

/* BBRCheckStartupHighLoss(): Startup ends when a round had at least
 * BBRStartupFullLossCnt loss events (the v2 draft: 3, Google's v2alpha code: 8;
 * v3: 6) and its loss rate was too
 * high (IsInflightTooHigh()).
 */
static inline int bbr2_startup_high_loss(u32 loss_events, u32 full_loss_cnt, u32 lost,
					 u32 tx_in_flight, u32 thresh_bp)
{
	return full_loss_cnt && loss_events >= full_loss_cnt &&
	       bbr2_inflight_too_high(lost, tx_in_flight, thresh_bp);
}

/* BBRBoundCwndForModel(): the cap on cwnd from the model. In ProbeBW's DOWN,
 * REFILL and UP: inflight_hi; in CRUISE and ProbeRTT: inflight_hi less its
 * headroom; then inflight_lo; never below BBRMinPipeCwnd.
 */
static inline u32 bbr2_cwnd_cap(enum bbr2_state state, u32 inflight_hi, u32 inflight_lo,
				u32 headroom_pct)
{
	u32 cap = BBR2_INF;

	if (state == BBR2_PROBE_BW_DOWN || state == BBR2_PROBE_BW_REFILL ||
	    state == BBR2_PROBE_BW_UP)
		cap = inflight_hi;
	else if (state == BBR2_PROBE_RTT || state == BBR2_PROBE_BW_CRUISE)
		cap = bbr2_inflight_with_headroom(inflight_hi, headroom_pct);
	cap = min_t(u32, cap, inflight_lo);
	return max_t(u32, cap, BBR2_MIN_PIPE_CWND);
}

/* The drafts' IsProbingBW(): Startup, ProbeBW_REFILL, ProbeBW_UP; in these
 * the lower bounds are not cut on loss (BBRAdaptLowerBoundsFromCongestion()).
 */
static inline int bbr2_is_probing_bw(enum bbr2_state state)
{
	return state == BBR2_STARTUP || state == BBR2_PROBE_BW_REFILL ||
	       state == BBR2_PROBE_BW_UP;
}

/* BBRv2+ (bbr2plus; Yang et al., the authors' tcp_bbr2plus.c described in
 * kernel/variants/README.md): its delay-guided decisions.
 *
 * An RTT "did not rise": rtt <= ref + min(ref * pct / 100, cap_us). GUARD's
 * test (this round's smoothed RTT against the last round's: 2 %, 2 ms) and
 * POST_UP's (the min RTT of the probe's round against the min RTT before
 * it: 2 %, 2 ms).
 */
static inline int bbr2p_rtt_within(u32 rtt_us, u32 ref_us, u32 pct, u32 cap_us)
{
	u64 slack = div_u64((u64)ref_us * pct, 100);

	return (u64)rtt_us <= (u64)ref_us + min_t(u64, slack, cap_us);
}

/* The max-bw filter is advanced when a round's min RTT rose above
 * rise_pct % of the smallest per-round min RTT of the recent rounds (110 %),
 * or when no bandwidth sample reached max_bw for max_rounds rounds (25).
 */
static inline int bbr2p_advance_bw_filter(u32 round_min_rtt_us, u32 recent_min_rtt_us,
					  u32 rise_pct, u32 rounds_since_advance,
					  u32 max_rounds)
{
	int rose = round_min_rtt_us != BBR2_INF && recent_min_rtt_us != BBR2_INF &&
		   (u64)round_min_rtt_us * 100 > (u64)recent_min_rtt_us * rise_pct;

	return rose || rounds_since_advance >= max_rounds;
}

/* The cwnd allowance for variable RTTs, packets: when the recent maximum
 * RTT variation (rttvar, us) exceeds var_pct % of min_rtt (40 %),
 * max_bw * gain * rttvar (gain 2.89 until Startup's Drain ended, then 2);
 * else 0.
 */
static inline u32 bbr2p_rtt_allowance(u32 max_bw, u32 rttvar_us, u32 min_rtt_us,
				      u32 var_pct, u32 gain)
{
	u64 w;

	if ((u64)rttvar_us * 100 <= (u64)min_rtt_us * var_pct)
		return 0;
	w = ((u64)rttvar_us * gain) >> BBR_SCALE;
	return (u32)min_t(u64, (w * max_bw) >> BW_SCALE, BBR2_INF - 1);
}

/* The switch between BBRv2+ and plain BBRv2, judged at the end of each
 * CRUISE phase from the min RTT measured in it (cruise_min_us) and in the
 * CRUISE before (prev_cruise_min_us): in BBRv2+ a CRUISE "queued" when its
 * min RTT exceeded min(prev CRUISE's min RTT, min_rtt) + high_pct % of the
 * reference RTT (10 %); in BBRv2 a CRUISE was "clear" when its min RTT was
 * at most min_rtt + low_pct % of the reference (5 %).
 */
static inline int bbr2p_cruise_queued(u32 cruise_min_us, u32 prev_cruise_min_us,
				      u32 min_rtt_us, u32 ref_rtt_us, u32 high_pct)
{
	u64 slack = div_u64((u64)ref_rtt_us * high_pct, 100);

	return (u64)cruise_min_us > min_t(u64, prev_cruise_min_us, min_rtt_us) + slack;
}

static inline int bbr2p_cruise_clear(u32 cruise_min_us, u32 min_rtt_us, u32 ref_rtt_us,
				     u32 low_pct)
{
	return (u64)cruise_min_us <= (u64)min_rtt_us + div_u64((u64)ref_rtt_us * low_pct, 100);
}

#endif /* BBR2_MATH_H */
