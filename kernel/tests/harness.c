/* Host test harness for the BBR variants' decision logic and fixed-point
 * math: compiles the very headers the patched modules include (with the
 * kshim.h stand-ins for kernel types) into a shared library that
 * tests/kernel/test_variant_math.py drives through ctypes.
 *
 *   gcc -O2 -Wall -Wextra -Werror -shared -fPIC -I kernel/variants \
 *       -o libvariantmath.so kernel/tests/harness.c
 */
#include "kshim.h"

#include "bbq_math.h"
#include "bbr_e_math.h"
#include "adaptive_bbr_math.h"
#include "bbr_fca_math.h"

/* Constants the tests need to mirror. */
const u32 h_bw_scale = BW_SCALE, h_bbr_scale = BBR_SCALE;
const u32 h_abbr_pkt_shift = ABBR_PKT_SHIFT, h_fca_pkt_shift = FCA_PKT_SHIFT;
const u64 h_fca_t_max = FCA_T_MAX, h_fca_w0_max = FCA_W0_MAX;

int h_bbq_queue_detected(u32 rtt, u32 min_rtt, u32 beta_ppm)
{
	return bbq_queue_detected(rtt, min_rtt, beta_ppm);
}

u32 h_bbq_probe_len_us(u32 min_rtt, u32 alpha, int queue)
{
	return bbq_probe_len_us(min_rtt, alpha, queue);
}

int h_bbq_probe_ends(u64 elapsed, u32 min_rtt, u32 alpha, int queue,
		     int losses, int inflight_full)
{
	return bbq_probe_ends(elapsed, min_rtt, alpha, queue, losses,
			      inflight_full);
}

u32 h_bbr_e_cwnd_gain(u32 rtt, u32 prop, u32 alpha_pct, u32 algorithm)
{
	return bbr_e_cwnd_gain(rtt, prop, alpha_pct, algorithm);
}

/* Adaptive-BBR's gain from raw measurements, as the module computes it. */
u32 h_abbr_gain(u32 inflight, u32 min_rtt, u64 rate, u64 max_bw, u32 alpha)
{
	s64 q = abbr_backlog(inflight, abbr_pkts(rate, min_rtt));

	return abbr_pacing_gain(q, alpha, abbr_pkts(max_bw, min_rtt));
}

s64 h_abbr_backlog(u32 inflight, u32 min_rtt, u64 rate)
{
	return abbr_backlog(inflight, abbr_pkts(rate, min_rtt));
}

u64 h_fca_w0(u64 t) { return fca_w0(t); }

u64 h_fca_w0_fc(u64 t, u64 rtt) { return fca_w0_fc(t, rtt); }

u32 h_fca_cbrt(u64 x) { return fca_cbrt(x); }

u64 h_fca_k_us(u64 w0, u32 n) { return fca_k_us(w0, n); }

u64 h_fca_t_reno(u64 w0, u64 rtt) { return fca_t_reno(w0, rtt); }

/* Mean window of an FC (fc = 1) or non-FC phase for W0 and R, as Eq. 8 uses it. */
u64 h_fca_mean_window(u64 w0, u64 rtt, int fc)
{
	return fca_mean_window(w0, fca_t_reno(w0, rtt), fca_k_us(w0, fc ? 3 : 6),
			       fc ? 2 : 1);
}

u64 h_fca_bound_rate(u64 b, u32 bw_max) { return fca_bound_rate(b, bw_max); }

u64 h_fca_cubic_rate(u64 t_fc, u64 t_nfc, u64 r, u64 rtt)
{
	return fca_cubic_rate(t_fc, t_nfc, r, rtt);
}

u64 h_fca_w_target(u64 s, u64 rtt, u64 t_rtt, u64 t_bw, u64 w_r, u64 w_rtt,
		   u32 delta)
{
	return fca_w_target(s, rtt, t_rtt, t_bw, w_r, w_rtt, delta);
}

u32 h_fca_pacing_bw(u64 w, u64 rtt) { return fca_pacing_bw(w, rtt); }

u32 h_fca_cwnd_gain(u64 w, u32 p_bw, u32 min_rtt)
{
	return fca_cwnd_gain(w, p_bw, min_rtt);
}

int h_fca_recent_loss(u64 since, u64 t_fc, u32 pct)
{
	return fca_recent_loss(since, t_fc, pct);
}

/* Feeds n durations through a moving window and returns t_fc and t_nfc. */
void h_fca_estimate(const u64 *x, int n, u64 *t_fc, u64 *t_nfc)
{
	struct fca_window w = { .n = 0 };
	u64 avg, var;
	int i;

	for (i = 0; i < n; i++)
		fca_window_add(&w, x[i]);
	avg = fca_window_mean(&w, &var);
	fca_phase_times(avg, var, t_fc, t_nfc);
}

u32 h_fca_window_n(u32 n0, int adds)
{
	struct fca_window w = { .n = n0 };

	while (adds--)
		fca_window_add(&w, 1);
	return w.n;
}

u32 h_int_sqrt64(u64 x) { return int_sqrt64(x); }
