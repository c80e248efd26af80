/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* BBR-FCA arithmetic (Utsumi & Hasegawa, Sec. IV-V), free of socket state so
 * that the host tests compile exactly this code. No floating point.
 *
 * Units: times in microseconds (u64); windows and packet counts in 1/1024
 * packet (FCA_PKT_UNIT); the CUBIC rate in packets/s * FCA_PKT_UNIT; the
 * pacing rate in tcp_bbr.c's bw unit (packets/us << BW_SCALE); gains in
 * BBR_UNIT. CUBIC's constants are the paper's: C = 0.4, beta = 0.3, and
 * gamma = 0.5 (FC and non-FC phases alternate).
 *
 * Precision (measured by tests/kernel/test_variant_math.py against a
 * floating-point evaluation of the same equations): every value below is
 * exact up to integer truncation of about one unit of its fixed-point
 * representation per step: windows to 1/1024 packet (Eq. 8 within 2e-4
 * relative for W0 >= 10 packets), the pacing rate to one bw unit (2^-24
 * packet/us), durations to 1 us. Durations are clamped to FCA_T_MAX so that
 * the cube t^3 (in us^3 / 1e6) fits in 64 bits.
 */
#ifndef BBR_FCA_MATH_H
#define BBR_FCA_MATH_H

#define FCA_PKT_SHIFT	10
#define FCA_PKT_UNIT	(1ULL << FCA_PKT_SHIFT)
#define FCA_T_MAX	(250ULL * USEC_PER_SEC)	/* longest phase modelled */
#define FCA_WINDOW	8			/* moving averages: last 8 samples */
#define FCA_GAIN_MAX	(1024 * BBR_UNIT)	/* cap on the Eq. 13 cwnd gain */

/* W0 = C / (4 beta) * T^3 = T^3 / 3 packets (Eq. 6 solved for W0), T in us. */
static inline u64 fca_w0(u64 t_us)
{
	u32 t = min_t(u64, t_us, FCA_T_MAX);
	u64 t3 = mul_u64_u32_div((u64)t * t, t, USEC_PER_SEC);	/* us^3 / 1e6 */

	/* t3 / 1e6 is in s^3 * 1e6; W0 = that / (3 * 1e6) packets. */
	return div_u64(div_u64(t3, USEC_PER_SEC) << FCA_PKT_SHIFT,
		       3 * USEC_PER_SEC);
}

/* Average sending rate of the competing CUBIC flow, Eq. 8, from the mean
 * durations of its FC and non-FC congestion-avoidance phases (t_fc, t_nfc),
 * of its fast recovery (r) and its RTT (R). Returns packets/s * FCA_PKT_UNIT,
 * or 0 when the phases are not longer than one RTT (no model).
 *
 *   W0    = C/(4 beta) (t_fc - R)^3                     (Eq. 6)
 *   w_fc  = (2 - beta)/2 W0,  w_nfc = (4 - beta)/4 W0     (means of Eqs. 4, 5)
 *   t     = gamma t_fc + (1 - gamma) t_nfc
 *   t w   = gamma (t_fc - R) w_fc + (1 - gamma)(t_nfc - R) w_nfc + R W0  (Eq. 7)
 *   B     = (t w / R + (1 - beta) W0) / (t + r)          (Eq. 8)
 */
static inline u64 fca_cubic_rate(u64 t_fc, u64 t_nfc, u64 r, u64 rtt)
{
	u64 t1, t2, w0, tw, t;

	if (!rtt || t_fc <= rtt)
		return 0;
	t1 = min_t(u64, t_fc - rtt, FCA_T_MAX);
	t2 = t_nfc > rtt ? min_t(u64, t_nfc - rtt, FCA_T_MAX) : 0;
	w0 = fca_w0(t1);
	tw = (t1 * div_u64(w0 * 17, 20) + t2 * div_u64(w0 * 37, 40)) / 2 +
	     rtt * w0;
	t = (t1 + t2) / 2 + rtt + min_t(u64, r, FCA_T_MAX);
	return mul_u64_u32_div(div64_u64(tw, rtt) + div_u64(w0 * 7, 10),
			       USEC_PER_SEC, t);
}

/* Target window so that BBR's average rate equals s (Eq. 11), in FCA_PKT_UNIT:
 *
 *   w = (s R (W_R + t_rtt) - delta (W_rtt + t_bw/2)) / (W_R - t_bw/2)
 *
 * s in packets/s * FCA_PKT_UNIT, R the smoothed RTT, W_R the min_rtt window,
 * t_rtt the mean ProbeRTT duration, W_rtt ProbeRTT's minimum duration, t_bw
 * the mean time to reach w after ProbeRTT, delta ProbeRTT's cwnd (packets).
 * t_bw is capped at W_R; w is at least delta.
 */
static inline u64 fca_w_target(u64 s, u64 rtt, u64 t_rtt, u64 t_bw,
			       u64 w_r, u64 w_rtt, u32 delta)
{
	u64 sr = mul_u64_u32_div(s, min_t(u64, rtt, U32_MAX), USEC_PER_SEC);
	u64 plus, minus, w = 0;

	t_bw = min(t_bw, w_r);
	plus = sr * (w_r + t_rtt);
	minus = ((u64)delta << FCA_PKT_SHIFT) * (w_rtt + t_bw / 2);
	if (plus > minus)
		w = div64_u64(plus - minus, w_r - t_bw / 2);
	return max_t(u64, w, (u64)delta << FCA_PKT_SHIFT);
}

/* Pacing rate p = w / R (Eq. 12), in packets/us << BW_SCALE. */
static inline u32 fca_pacing_bw(u64 w, u64 rtt)
{
	return min_t(u64, div64_u64(w << (BW_SCALE - FCA_PKT_SHIFT),
				    max_t(u64, rtt, 1)), U32_MAX);
}

/* cwnd gain g = w / (p * RTprop) (Eq. 13), in BBR_UNIT, rounded, capped. */
static inline u32 fca_cwnd_gain(u64 w, u32 p_bw, u32 min_rtt_us)
{
	u64 bdp = mul_u64_u32_shr(p_bw, min_rtt_us, BW_SCALE - FCA_PKT_SHIFT);

	if (!bdp)
		return BBR_UNIT;
	return min_t(u64, div64_u64(w * BBR_UNIT + bdp / 2, bdp), FCA_GAIN_MAX);
}

/* Moving average and variance (Sec. V-A) of the last FCA_WINDOW durations,
 * in us and us^2 (var may be NULL). n counts the samples; the window holds
 * the last min(n, FCA_WINDOW). An even window makes t_fc and t_nfc below exact when
 * FC and non-FC phases alternate, as the paper assumes.
 */
struct fca_window {
	u64 x[FCA_WINDOW];
	u32 n;
};

static inline void fca_window_add(struct fca_window *w, u64 x)
{
	w->x[w->n % FCA_WINDOW] = min_t(u64, x, FCA_T_MAX);
	w->n = w->n + 1 ?: FCA_WINDOW;	/* on wrap-around, stay full */
}

static inline u64 fca_window_mean(const struct fca_window *w, u64 *var)
{
	u32 i, k = min_t(u32, w->n, FCA_WINDOW);
	u64 sum = 0, sq = 0, avg, d;

	for (i = 0; i < k; i++)
		sum += w->x[i];
	avg = k ? div_u64(sum, k) : 0;
	if (var) {
		for (i = 0; i < k; i++) {
			d = w->x[i] > avg ? w->x[i] - avg : avg - w->x[i];
			sq += d * d;
		}
		*var = k ? div_u64(sq, k) : 0;
	}
	return avg;
}

/* Losses are "in the recent past" (Sec. V-C) while the last one was detected
 * at most pct percent of the longest expected CA phase (t_fc) ago.
 */
static inline bool fca_recent_loss(u64 since_us, u64 t_fc, u32 pct)
{
	return since_us * 100 <= t_fc * pct;
}

/* t_fc = t_avg + sqrt(t_var), t_nfc = t_avg - sqrt(t_var) (Sec. V-A). */
static inline void fca_phase_times(u64 avg, u64 var, u64 *t_fc, u64 *t_nfc)
{
	u64 sd = int_sqrt64(var);

	*t_fc = avg + sd;
	*t_nfc = avg > sd ? avg - sd : 0;
}

#endif /* BBR_FCA_MATH_H */
