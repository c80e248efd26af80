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

/* Length of a probing period: rho = min(min_rtt, alpha) while capped,
 * BBR's min_rtt otherwise.
 */
static inline u32 bbq_probe_len_us(u32 min_rtt_us, u32 alpha_us, bool capped)
{
	return capped && alpha_us < min_rtt_us ? alpha_us : min_rtt_us;
}

#endif /* BBQ_MATH_H */
