/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* BBR-E cwnd gain (Kim et al., Algorithms 1 and 2), free of socket state so
 * that the host tests compile exactly this code. Integer only, exact.
 * Gains are in BBR_UNIT (1 << BBR_SCALE) as in tcp_bbr.c.
 */
#ifndef BBR_E_MATH_H
#define BBR_E_MATH_H

/* cwnd_gain from the last RTT sample and the propagation RTT (min_rtt);
 * alpha is in percent (150 means 1.5 * propRTT).
 *
 * Algorithm 2 (BBR-E):              Algorithm 1 (queue-buildup suppression):
 *   lastRTT <= propRTT          2.0   lastRTT < alpha * propRTT    2.0
 *   lastRTT < alpha * propRTT   1.5   otherwise                    1.0
 *   otherwise                   1.0
 *
 * algorithm 0: BBR's constant 2.0 (the module as plain BBR, a baseline).
 */
static inline u32 bbr_e_cwnd_gain(u32 rtt_us, u32 prop_rtt_us, u32 alpha_pct,
				  u32 algorithm)
{
	bool below_alpha = (u64)rtt_us * 100 < (u64)prop_rtt_us * alpha_pct;

	if (algorithm == 0)
		return 2 * BBR_UNIT;
	if (algorithm == 1)
		return below_alpha ? 2 * BBR_UNIT : BBR_UNIT;
	if (rtt_us <= prop_rtt_us)
		return 2 * BBR_UNIT;
	return below_alpha ? BBR_UNIT * 3 / 2 : BBR_UNIT;
}

#endif /* BBR_E_MATH_H */
