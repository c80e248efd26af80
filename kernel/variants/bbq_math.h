/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* BBQ decision logic (Ma et al., Sec. V-B), free of socket state so that the
 * host tests (kernel/tests/) compile exactly this code. Integer only, exact.
 */
#ifndef BBQ_MATH_H
#define BBQ_MATH_H

/* A persistent queue exists unless the pipe looks under-utilised, i.e. unless
 * rtt < (1 + beta) * min_rtt, with beta in parts per million.
 */
static inline bool bbq_queue_detected(u32 rtt_us, u32 min_rtt_us, u32 beta_ppm)
{
	return (u64)rtt_us * 1000000 >= (u64)min_rtt_us * (1000000 + beta_ppm);
}

/* Does the cap shorten the probing period? rho = min(min_rtt, alpha) applies
 * while a queue persists; it differs from BBR's min_rtt only if alpha < min_rtt.
 */
static inline bool bbq_probe_capped(bool queue, u32 min_rtt_us, u32 alpha_us)
{
	return queue && alpha_us < min_rtt_us;
}

/* Length of a probing period: rho = min(min_rtt, alpha) while a queue
 * persists, BBR's min_rtt otherwise.
 */
static inline u32 bbq_probe_len_us(u32 min_rtt_us, u32 alpha_us, bool queue)
{
	return bbq_probe_capped(queue, min_rtt_us, alpha_us) ? alpha_us : min_rtt_us;
}

/* Does a probing period (pacing_gain > 1) end on this ACK, elapsed_us after
 * it began? A shortened probe ends once rho = alpha has elapsed, whatever the
 * inflight; otherwise (no queue, or min_rtt <= alpha: rho = min_rtt) it is
 * BBR's: after one min_rtt, once there were losses or inflight reached
 * pacing_gain * BDP (inflight_full).
 */
static inline bool bbq_probe_ends(u64 elapsed_us, u32 min_rtt_us, u32 alpha_us,
				  bool queue, bool losses, bool inflight_full)
{
	if (bbq_probe_capped(queue, min_rtt_us, alpha_us))
		return elapsed_us > alpha_us;
	return elapsed_us > min_rtt_us && (losses || inflight_full);
}

#endif /* BBQ_MATH_H */
