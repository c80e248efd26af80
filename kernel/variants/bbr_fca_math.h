/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* BBR-FCA arithmetic (Utsumi & Hasegawa, Sec. IV-V), free of socket state so
 * that the host tests compile exactly this code. No floating point.
 *
 * Units: times in microseconds (u64); windows and packet counts in 1/1024
 * packet (FCA_PKT_UNIT); the CUBIC rate in packets/s * FCA_PKT_UNIT; the
 * pacing rate in tcp_bbr.c's bw unit (packets/us << BW_SCALE); gains in
 * BBR_UNIT; phase time and window normalised to K and W0 in 1/2^20
 * (FCA_Q). CUBIC's constants are the paper's: C = 0.4, beta = 0.3, and
 * gamma = 0.5 (FC and non-FC phases alternate); its Reno-friendly slope is
 * a = 3 beta / (2 - beta) = 9/17 packet per RTT (RFC 8312; Linux's integer
 * beta_scale makes it 8/15).
 *
 * Precision (measured by tests/kernel/test_variant_math.py against a
 * floating-point evaluation of the window curve max(W_cubic, W_est)): every
 * value below is exact up to integer truncation of about one unit of its
 * fixed-point representation per step: windows to 1/1024 packet, the
 * normalised phase curve to 2^-20, the pacing rate to one bw unit (2^-24
 * packet/us), durations to 1 us. Durations (and R) are clamped to FCA_T_MAX
 * and W0 to FCA_W0_MAX; the static assertions below show that no
 * intermediate product then overflows 64 bits.
 */
#ifndef BBR_FCA_MATH_H
#define BBR_FCA_MATH_H

#define FCA_PKT_SHIFT	10
#define FCA_PKT_UNIT	(1ULL << FCA_PKT_SHIFT)
#define FCA_T_MAX	(250ULL * USEC_PER_SEC)	/* longest phase modelled */
#define FCA_WINDOW	8			/* moving averages: last 8 samples */
#define FCA_GAIN_MAX	(1024 * BBR_UNIT)	/* cap on the Eq. 13 cwnd gain */
#define FCA_W0_MAX	(1ULL << 33)		/* cap on W0: 8M packets */
#define FCA_Q		20			/* normalised curve: 1/2^20 */

/* No 64-bit overflow below (U64_MAX written out for the host harness):
 * fca_w0:         T^3 / 1e6 must fit (a divq trap on x86-64 otherwise)
 * fca_cubic_rate: t1 w_fc + t2 w_nfc and R W0 in 64 bits, mean phase
 *                 duration plus recovery in the u32 divisor
 */
_Static_assert(FCA_T_MAX <= 0xffffffffULL &&
	       (FCA_T_MAX * FCA_T_MAX + USEC_PER_SEC - 1) / USEC_PER_SEC <=
	       ~0ULL / FCA_T_MAX, "fca_w0: T^3 / 1e6 overflows 64 bits");
_Static_assert(FCA_T_MAX <= ~0ULL / 4 / FCA_W0_MAX,
	       "fca_cubic_rate: T * W0 overflows 64 bits");
_Static_assert(2 * FCA_T_MAX <= 0xffffffffULL,
	       "fca_cubic_rate: phase + recovery overflows the u32 divisor");

/* W0 = C / (4 beta) * T^3 = T^3 / 3 packets (Eq. 6 solved for W0), T in us. */
static inline u64 fca_w0(u64 t_us)
{
	u32 t = min_t(u64, t_us, FCA_T_MAX);
	u64 t3 = mul_u64_u32_div((u64)t * t, t, USEC_PER_SEC);	/* us^3 / 1e6 */

	/* t3 / 1e6 is in s^3 * 1e6; W0 = that / (3 * 1e6) packets. */
	return div_u64(div_u64(t3, USEC_PER_SEC) << FCA_PKT_SHIFT,
		       3 * USEC_PER_SEC);
}

/* The same for a phase that ends in CUBIC's Reno-friendly region, where the
 * window grows by a packets per RTT from (1 - beta) W0 to W0:
 * W0 = a T / (beta R) = 30/17 T / R packets.
 */
static inline u64 fca_w0_reno(u64 t_us, u64 rtt)
{
	t_us = min_t(u64, t_us, FCA_T_MAX);
	return div64_u64((30 * t_us) << FCA_PKT_SHIFT, 17 * max_t(u64, rtt, 1));
}

/* W0 from the duration T (loss detection less R) of an FC phase. The phase
 * ends when max(W_cubic, W_est) first reaches W0, i.e. after the shorter of
 * the two growth times, both increasing in W0; so W0 is the larger of the
 * two inversions. Capped at FCA_W0_MAX.
 */
static inline u64 fca_w0_fc(u64 t_us, u64 rtt)
{
	return min_t(u64, max(fca_w0(t_us), fca_w0_reno(t_us, rtt)),
		     FCA_W0_MAX);
}

/* floor(cbrt(x)) */
static inline u32 fca_cbrt(u64 x)
{
	u32 y = 0, c;
	int b;

	for (b = 21; b >= 0; b--) {
		c = y | (1U << b);
		if (c <= 2642245 && (u64)c * c * c <= x)	/* 2642245^3 < 2^64 */
			y = c;
	}
	return y;
}

/* CUBIC's K in us: K^3 = (W_max - (1 - beta) W0) / C = n/8 W0 s^3, n = 3 in
 * an FC phase (W_max = (2 - beta)/2 W0), 6 in a non-FC one (W_max = W0), so
 * K = cbrt(n W0) / 2 s; W0 in FCA_PKT_UNIT, cube root to 2^-20 relative.
 */
static inline u64 fca_k_us(u64 w0, u32 n)
{
	u64 v = min_t(u64, w0, FCA_W0_MAX) * n;
	int shift = 50, k = 0;		/* cbrt(v 2^50) = cbrt(n W0) 2^20 */

	while (v >> (64 - shift)) {
		shift -= 3;
		k++;
	}
	return ((u64)fca_cbrt(v << shift) << k) * (USEC_PER_SEC / 2) >> 20;
}

/* Time for W_est to grow from (1 - beta) W0 to W0: beta W0 R / a =
 * 17/30 W0 R, in us (W0 in FCA_PKT_UNIT).
 */
static inline u64 fca_t_reno(u64 w0, u64 rtt)
{
	return mul_u64_u32_div(min_t(u64, w0, FCA_W0_MAX) * 17,
			       min_t(u64, rtt, FCA_T_MAX), 30 << FCA_PKT_SHIFT);
}

/* x^4/4 - x^3 + 3x^2/2, the integral of p(x) = x^3 - 3x^2 + 3x, in FCA_Q */
static inline s64 fca_p_integral(s64 x)
{
	s64 x2 = x * x >> FCA_Q, x3 = x2 * x >> FCA_Q, x4 = x2 * x2 >> FCA_Q;

	return x4 / 4 - x3 + 3 * x2 / 2;
}

/* Mean window of a CA phase, W0 in FCA_PKT_UNIT, with the Reno-friendly
 * region: m = 2 for an FC phase, 1 for a non-FC one, k its K and t_reno the
 * Reno growth time (us). In x = t / K and u = t_reno / K,
 *
 *   W(x) / W0 = (1 - beta) + beta/m max(p(x), m x / u),  p = x^3 - 3x^2 + 3x
 *
 * (p(x) = m at x = m, where W_cubic reaches W0), over 0 <= x <= x_e = min(m, u).
 * W_est is above W_cubic between the roots (3 -+ sqrt(4m/u - 3)) / 2 of
 * x^2 - 3x + 3 = m/u, if any. Without that region (u >= 4m/3) the mean is
 * the paper's (2 - beta)/2 W0 (FC) or (4 - beta)/4 W0 (non-FC); with W_est
 * above throughout (u <= m/3) it is (2 - beta)/2 W0 in both, the Reno line's.
 */
static inline u64 fca_mean_window(u64 w0, u64 t_reno, u64 k, u32 m)
{
	s64 u, xe, lo = 0, hi, d, sd, area;

	if (3 * t_reno >= 4ULL * m * k)		/* no Reno region */
		return m == 2 ? div_u64(w0 * 17, 20) : div_u64(w0 * 37, 40);
	if (3 * t_reno <= (u64)m * k)		/* Reno line throughout */
		return div_u64(w0 * 17, 20);
	u = div64_u64(t_reno << FCA_Q, k);	/* m/3 < u < 4m/3 */
	xe = min_t(s64, u, (s64)m << FCA_Q);
	d = div64_s64((s64)(4 * m) << (2 * FCA_Q), u) - (3LL << FCA_Q);
	sd = int_sqrt64((u64)d << FCA_Q);	/* 0 < d < 9 */
	lo = ((3LL << FCA_Q) - sd) / 2;
	hi = min_t(s64, ((3LL << FCA_Q) + sd) / 2, xe);
	area = fca_p_integral(xe);
	if (hi > lo)	/* + integral of (m x / u - p(x)) from lo to hi */
		area += div64_s64((s64)m * (hi * hi - lo * lo), 2 * u) -
			fca_p_integral(hi) + fca_p_integral(lo);
	/* W0 ((1 - beta) + beta/m area / x_e), beta = 3/10 */
	return (w0 * 7 + div64_u64(w0 * 3 * area, (u64)m * xe)) / 10;
}

/* Average sending rate of the competing CUBIC flow, Eq. 8, from the mean
 * durations of its FC and non-FC congestion-avoidance phases (t_fc, t_nfc),
 * of its fast recovery (r) and its RTT (R). Returns packets/s * FCA_PKT_UNIT,
 * or 0 when the FC phase is not longer than one RTT (no model).
 *
 *   W0    = C/(4 beta) (t_fc - R)^3, or with the Reno-friendly region
 *           max(that, a (t_fc - R) / (beta R))        (Eq. 6; fca_w0_fc)
 *   w_fc, w_nfc  mean windows of an FC and a non-FC phase: (2 - beta)/2 W0
 *           and (4 - beta)/4 W0 (Eqs. 4, 5), or with the Reno-friendly
 *           region the mean of max(W_cubic, W_est) (fca_mean_window)
 *   t     = gamma t_fc + (1 - gamma) t_nfc
 *   t w   = gamma (t_fc - R) w_fc + (1 - gamma)(t_nfc - R) w_nfc + R W0  (Eq. 7)
 *   B     = (t w / R + (1 - beta) W0) / (t + r)          (Eq. 8)
 *
 * A non-FC phase shorter than R (possible for t_nfc = t_avg - sqrt(t_var))
 * adds no CA-phase packets ((t_nfc - R) is taken as 0) but its duration
 * still counts in t.
 */
static inline u64 fca_cubic_rate(u64 t_fc, u64 t_nfc, u64 r, u64 rtt)
{
	u64 t1, t2, w0, t_reno, w_fc, w_nfc, tw, t;

	t_fc = min_t(u64, t_fc, FCA_T_MAX);
	t_nfc = min_t(u64, t_nfc, FCA_T_MAX);
	r = min_t(u64, r, FCA_T_MAX);
	rtt = min_t(u64, rtt, FCA_T_MAX);
	if (!rtt || t_fc <= rtt)
		return 0;
	t1 = t_fc - rtt;
	t2 = t_nfc > rtt ? t_nfc - rtt : 0;
	w0 = fca_w0_fc(t1, rtt);
	t_reno = fca_t_reno(w0, rtt);
	w_fc = fca_mean_window(w0, t_reno, fca_k_us(w0, 3), 2);
	w_nfc = fca_mean_window(w0, t_reno, fca_k_us(w0, 6), 1);
	tw = (t1 * w_fc + t2 * w_nfc) / 2 + rtt * w0;
	t = (t_fc + t_nfc) / 2 + r;
	return mul_u64_u32_div(div64_u64(tw, rtt) + div_u64(w0 * 7, 10),
			       USEC_PER_SEC, t);
}

/* The optional cap (module parameter bw_cap, off by default): b at most the
 * highest delivery rate the connection has measured (bw_max, tcp_bbr.c's bw
 * unit; 0 while nothing is measured). Not a bound on the CUBIC flow's rate:
 * a measured delivery rate is a LOWER bound on the bottleneck's rate, and a
 * competing flow may send at anything up to the bottleneck's rate, so the cap
 * also cuts correct estimates whenever this flow has not measured as much as
 * the CUBIC flow sends (e.g. it started into CUBIC's queue); see the top of
 * tcp_bbr.c and bench/results/fca-bound-2026-11-26.md.
 */
static inline u64 fca_bound_rate(u64 b, u32 bw_max)
{
	return min_t(u64, b, (u64)bw_max * USEC_PER_SEC >>
			     (BW_SCALE - FCA_PKT_SHIFT));
}

/* The CUBIC rate BBR-FCA acts on (Eq. 8, fca_cubic_rate), capped at bw_max
 * by fca_bound_rate only when cap is set (bw_cap=1).
 */
static inline u64 fca_estimate_rate(u64 t_fc, u64 t_nfc, u64 r, u64 rtt,
				    u32 bw_max, bool cap)
{
	u64 b = fca_cubic_rate(t_fc, t_nfc, r, rtt);

	return cap ? fca_bound_rate(b, bw_max) : b;
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
