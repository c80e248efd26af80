/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Adaptive-BBR pacing gain (Yang et al., Algorithm 1 with Eq. 5), free of
 * socket state so that the host tests compile exactly this code.
 *
 * Units: rates in packets/us << BW_SCALE and gains in BBR_UNIT, as in
 * tcp_bbr.c; packet counts in 1/256 packet (ABBR_PKT_UNIT), so that Q and
 * BDP keep fractions of a packet.
 * Precision: abbr_pkts() truncates by less than 1/256 packet; the gain is
 * rounded to the nearest 1/256 (BBR's pacing_gain resolution).
 */
#ifndef ADAPTIVE_BBR_MATH_H
#define ADAPTIVE_BBR_MATH_H

#define ABBR_PKT_SHIFT	8
#define ABBR_PKT_UNIT	(1 << ABBR_PKT_SHIFT)

/* Packets (in ABBR_PKT_UNIT) delivered in rtt_us at rate: RTprop * d_i gives
 * D_i, RTprop * S_i gives BDP.
 */
static inline u64 abbr_pkts(u64 rate, u32 rtt_us)
{
	return mul_u64_u32_shr(rate, rtt_us, BW_SCALE - ABBR_PKT_SHIFT);
}

/* Q_i = I_i - D_i: inflight beyond what the path delivers in one RTprop. */
static inline s64 abbr_backlog(u32 inflight, u64 delivered_pkts)
{
	return ((s64)inflight << ABBR_PKT_SHIFT) - (s64)delivered_pkts;
}

/* Pacing gain: 1.25 when Q == 0, else Eq. 5, 1 + (alpha - Q) / (8 * BDP).
 * Q and BDP are measured, so "Q == 0" is taken as Q < 1 packet (including
 * Q < 0, which the paper rules out in theory but noisy samples produce).
 * The result is clamped to [0.75, 1.25] (the clamp is ours, the paper gives
 * none). Eq. 5 is at least 0.75 while Q <= alpha + 2 BDP: at Q = 2 BDP it is
 * 0.75 + alpha/(8 BDP). cwnd_gain 2 alone keeps inflight, and so Q, at most
 * 2 BDP, but Linux 6.1's cwnd adds the ACK-aggregation allowance (up to
 * 100 ms of bandwidth), so Q can pass alpha + 2 BDP, most easily for a flow
 * whose BDP is a few packets (short RTT or small share); the floor then
 * binds. The ceiling binds only for alpha - Q > 2 BDP with Q >= 1: never at
 * alpha = 3 (BDP is taken as at least 1 packet). How often the floor binds
 * in the runs: bench/results/abbr-clamp-2026-11-26.md.
 */
static inline u32 abbr_pacing_gain(s64 q, u32 alpha_pkts, u64 bdp)
{
	const s64 lo = BBR_UNIT * 3 / 4, hi = BBR_UNIT * 5 / 4;
	s64 num, den, gain;

	if (q < ABBR_PKT_UNIT)
		return hi;
	bdp = max_t(u64, bdp, ABBR_PKT_UNIT);	/* BDP of at least 1 packet */
	num = (((s64)alpha_pkts << ABBR_PKT_SHIFT) - q) * BBR_UNIT;
	den = 8 * (s64)bdp;
	num += num < 0 ? -den / 2 : den / 2;	/* round to nearest */
	gain = BBR_UNIT + div64_s64(num, den);
	return clamp(gain, lo, hi);
}

#endif /* ADAPTIVE_BBR_MATH_H */
