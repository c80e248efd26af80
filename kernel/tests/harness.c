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
#include "bbr2_math.h"

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

u64 h_fca_estimate_rate(u64 t_fc, u64 t_nfc, u64 r, u64 rtt, u32 bw_max, int cap)
{
	return fca_estimate_rate(t_fc, t_nfc, r, rtt, bw_max, cap);
}

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

/* bbr2/bbr3 (bbr2_math.h) */
u32 h_bbr2_bdp(u32 bw, u32 min_rtt, u32 gain) { return bbr2_bdp(bw, min_rtt, gain); }
int h_bbr2_inflight_too_high(u32 lost, u32 tx_in_flight, u32 thresh_bp)
{
	return bbr2_inflight_too_high(lost, tx_in_flight, thresh_bp);
}
u32 h_bbr2_inflight_hi_on_loss(u32 tx_in_flight, u32 target, u32 beta_pct)
{
	return bbr2_inflight_hi_on_loss(tx_in_flight, target, beta_pct);
}
u32 h_bbr2_inflight_at_loss(u32 tx_in_flight, u32 lost, u32 size, u32 thresh_bp)
{
	return bbr2_inflight_at_loss(tx_in_flight, lost, size, thresh_bp);
}
int h_bbr2_v2a_inflight_too_high(u32 lost, u32 tx_in_flight, u32 thresh_bp)
{
	return bbr2_v2a_inflight_too_high(lost, tx_in_flight, thresh_bp);
}
u32 h_bbr2_v2a_inflight_at_loss(u32 tx_in_flight, u32 lost, u32 size, u32 thresh_bp)
{
	return bbr2_v2a_inflight_at_loss(tx_in_flight, lost, size, thresh_bp);
}
int h_bbr2_v2a_up_done(u64 elapsed, u32 min_rtt, u32 inflight, u32 inflight_up)
{
	return bbr2_v2a_up_done(elapsed, min_rtt, inflight, inflight_up);
}
u32 h_bbr2_lower_bound_on_loss(u32 latest, u32 lo, u32 beta_pct)
{
	return bbr2_lower_bound_on_loss(latest, lo, beta_pct);
}
u32 h_bbr2_inflight_with_headroom(u32 inflight_hi, u32 headroom_pct)
{
	return bbr2_inflight_with_headroom(inflight_hi, headroom_pct);
}
u32 h_bbr2_probe_rtt_cwnd(u32 bw, u32 min_rtt, u32 gain) { return bbr2_probe_rtt_cwnd(bw, min_rtt, gain); }
int h_bbr2_time_to_cruise(u32 inflight, u32 inflight_hi, u32 headroom_pct, u32 bdp)
{
	return bbr2_time_to_cruise(inflight, inflight_hi, headroom_pct, bdp);
}
int h_bbr2_time_to_probe_bw(u64 elapsed, u32 wait, u32 rounds, u32 target, u32 max_rounds)
{
	return bbr2_time_to_probe_bw(elapsed, wait, rounds, target, max_rounds);
}
int h_bbr2_up_done_v2(u64 elapsed, u32 min_rtt, u32 inflight, u32 inflight_up)
{
	return bbr2_up_done_v2(elapsed, min_rtt, inflight, inflight_up);
}
int h_bbr2_up_done_v3(int cwnd_limited, u32 cwnd, u32 inflight_hi, int full_bw_now)
{
	return bbr2_up_done_v3(cwnd_limited, cwnd, inflight_hi, full_bw_now);
}
u32 h_bbr2_probe_up_cnt(u32 cwnd, u32 rounds) { return bbr2_probe_up_cnt(cwnd, rounds); }
int h_bbr2_bw_still_growing(u32 max_bw, u32 full_bw) { return bbr2_bw_still_growing(max_bw, full_bw); }
int h_bbr2_startup_high_loss(u32 events, u32 cnt, u32 lost, u32 tx_in_flight, u32 thresh_bp)
{
	return bbr2_startup_high_loss(events, cnt, lost, tx_in_flight, thresh_bp);
}
u32 h_bbr2_cwnd_cap(int state, u32 inflight_hi, u32 inflight_lo, u32 headroom_pct)
{
	return bbr2_cwnd_cap(state, inflight_hi, inflight_lo, headroom_pct);
}
int h_bbr2_is_probing_bw(int state) { return bbr2_is_probing_bw(state); }
/* bbr2plus (bbr2_math.h's bbr2p_*) */
int h_bbr2p_rtt_within(u32 rtt, u32 ref, u32 pct, u32 cap) { return bbr2p_rtt_within(rtt, ref, pct, cap); }
int h_bbr2p_advance_bw_filter(u32 round_min, u32 recent_min, u32 rise_pct, u32 rounds, u32 max_rounds)
{
	return bbr2p_advance_bw_filter(round_min, recent_min, rise_pct, rounds, max_rounds);
}
u32 h_bbr2p_rtt_allowance(u32 max_bw, u32 rttvar, u32 min_rtt, u32 var_pct, u32 gain)
{
	return bbr2p_rtt_allowance(max_bw, rttvar, min_rtt, var_pct, gain);
}
int h_bbr2p_cruise_queued(u32 cruise_min, u32 prev, u32 min_rtt, u32 ref, u32 pct)
{
	return bbr2p_cruise_queued(cruise_min, prev, min_rtt, ref, pct);
}
int h_bbr2p_cruise_clear(u32 cruise_min, u32 min_rtt, u32 ref, u32 pct)
{
	return bbr2p_cruise_clear(cruise_min, min_rtt, ref, pct);
}
