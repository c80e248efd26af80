/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bbr2/bbr3: the congestion control itself (kernel only). The algorithm is
 * explained at the top of the patched tcp_bbr.c (kernel/variants/bbr2.patch,
 * bbr3.patch), which defines BBR2_NAME and includes its <name>_params.h and
 * this file. Section names below are the drafts' (v2 draft:
 * draft-cardwell-iccrg-bbr-congestion-control-02; v3 draft:
 * draft-ietf-ccwg-bbr); functions carry the name of the drafts' pseudocode
 * routine they implement.
 *
 * Needs the testbed kernel's rate-sample fields rs->tx_in_flight and
 * rs->lost (kernel/patches/10-tcp-rate-tx-in-flight.patch) and its
 * skb_marked_lost operation (kernel/patches/20-tcp-skb-marked-lost.patch).
 */
#include "bbr2_math.h"

/* BBR2_V2A: Google's BBRv2 alpha code (github.com/google/bbr, branch
 * v2alpha, net/ipv4/tcp_bbr2.c: "BBRv2" in the papers of 2019-2022) where its
 * mechanisms differ from the v2 draft's, for the bbr2_v2alpha module and for
 * BBRv2+ (bbr2plus), which its authors wrote on that code. Each place says
 * what v2alpha does; kernel/variants/README.md lists the places and what is
 * not copied.
 */
#if defined(BBR2_V2ALPHA) || defined(BBR2_PLUS)
#define BBR2_V2A 1
#else
#define BBR2_V2A 0
#endif

/* The v3 draft's ACK phases (how the ACK stream relates to bw probing). */
enum bbr2_ack_phase {
	BBR2_ACKS_INIT,
	BBR2_ACKS_REFILLING,
	BBR2_ACKS_PROBE_STARTING,
	BBR2_ACKS_PROBE_FEEDBACK,
	BBR2_ACKS_PROBE_STOPPING,
};

struct bbr2 {
	u32 min_rtt_us;			/* BBR.min_rtt */
	u32 min_rtt_stamp;		/* jiffies */
	u32 probe_rtt_min_us;		/* BBR.probe_rtt_min_delay */
	u32 probe_rtt_min_stamp;	/* jiffies */
	u32 probe_rtt_done_stamp;	/* jiffies, 0: not yet at the ProbeRTT cwnd */
	u32 next_rtt_delivered;		/* BBR.next_round_delivered */
	u32 loss_round_delivered;	/* end of the loss-counting round */
	u32 cycle_stamp;		/* BBR.cycle_stamp, low 32 bits of tcp_mstamp (us) */
	u32 ack_epoch_stamp;		/* start of ACK-aggregation epoch, low 32 bits (us) */
	u32 bw_hi[2];			/* max bw filter: previous and current cycle */
	u32 bw_lo;			/* BBR.bw_lo */
	u32 bw_latest;			/* BBR.bw_latest */
	u32 inflight_hi;		/* BBR.inflight_hi */
	u32 inflight_lo;		/* BBR.inflight_lo */
	u32 inflight_latest;		/* BBR.inflight_latest */
	u32 full_bw;			/* BBR.full_bw */
	u32 prior_cwnd;			/* BBR.prior_cwnd */
	u32 probe_up_cnt;		/* BBR.probe_up_cnt */
	u32 probe_up_acks;		/* BBR.bw_probe_up_acks */
	u32 probe_wait_us;		/* BBR.bw_probe_wait */
	u16 extra_acked[2];		/* BBR.extra_acked filter, packets */
	u32 state:3,			/* enum bbr2_state */
	    prev_ca_state:3,
	    round_start:1,
	    filled_pipe:1,
	    full_bw_cnt:2,
	    full_bw_now:1,
	    idle_restart:1,
	    probe_rtt_round_done:1,
	    packet_conservation:1,
	    bw_probe_samples:1,
	    loss_round_start:1,
	    loss_in_round:1,
	    loss_events_in_round:4,
	    ack_phase:3,
	    probe_up_rounds:5;
	u32 pacing_gain:10,
	    cwnd_gain:10,
	    rounds_since_probe:6,	/* capped at 63 (bbr2_max_probe_rounds) */
	    extra_acked_win_rtts:5,
	    extra_acked_win_idx:1;
	u32 ack_epoch_acked;		/* packets ACKed in the epoch */
	u8 drain_rounds:3,		/* round trips ended in Drain (v3: at most 3) */
	   prev_probe_too_high:1,	/* BBR.prev_probe_too_high (v3 draft -06) */
	   prev_probe_precautionary:1;	/* BBR.prev_probe_precautionary (v3 draft -06) */
#ifdef BBR2_PLUS
	u16 plus_id;			/* bbr2plus: id of its struct bbr2p, 0: none */
#endif
};

/* Constants the drafts fix (both versions). */
static const u32 bbr2_drain_max_rounds = 3;			/* v3 draft -06: Drain timeout */
static const u32 bbr2_default_cwnd_gain = BBR_UNIT * 2;	/* BBRDefaultCwndGain */
static const u32 bbr2_up_pacing_gain = BBR_UNIT * 5 / 4;	/* ProbeBW_UP */
static const u32 bbr2_min_rtt_win_sec = 10;			/* MinRTTFilterLen */
static const u32 bbr2_probe_rtt_win_ms = 5000;			/* ProbeRTTInterval */
static const u32 bbr2_probe_rtt_ms = 200;			/* ProbeRTTDuration */
static const u32 bbr2_max_probe_rounds = 63;			/* Reno coexistence cap */
static const u32 bbr2_probe_wait_base_us = 2 * USEC_PER_SEC;	/* BBRPickProbeWait */
static const u32 bbr2_probe_wait_rand_us = 1 * USEC_PER_SEC;
static const u32 bbr2_extra_acked_win = 10;			/* rounds (two windows of 5) */
static const u32 bbr2_extra_acked_max_us = 100 * 1000;
static const int bbr2_pacing_margin_pct = 1;			/* pace 1 % below bw */
static const u32 bbr2_min_tso_rate = 1200000;

#define P(name) READ_ONCE(name.val)
static u32 pct_gain(u32 pct) { return pct * BBR_UNIT / 100; }

#ifdef BBR2_PLUS
/* BBRv2+ (module bbr2plus): BBRv2 with delay-guided bandwidth probing, a
 * max-bw filter advanced on RTT rises, a cwnd allowance for variable RTTs,
 * and a switch back to plain BBRv2 where delay is no guide (the algorithm
 * comment of bbr2plus.patch and kernel/variants/README.md). Its state does
 * not fit in the congestion control's private area (ICSK_CA_PRIV_SIZE), so
 * it is allocated per connection and found by the u16 id in struct bbr2; a
 * connection whose state cannot be allocated runs as plain BBRv2 and is
 * counted in the read-only parameter alloc_failures.
 *
 * ProbeBW's extra phases are sub-phases of the drafts' states, so samplers
 * (bbr_bw_lo's low 3 bits) see PRE_UP and GUARD as REFILL, POST_UP as UP and
 * DOWN_SLIGHTLY as DOWN; the pacing gain tells PRE_UP (1.10) and
 * DOWN_SLIGHTLY (0.90) apart.
 */
enum bbr2p_phase {
	BBR2P_NONE,		/* the drafts' phase */
	BBR2P_PRE_UP,		/* (REFILL) one round at 1.10 x bw */
	BBR2P_GUARD,		/* (REFILL) one round at 1.0: PRE_UP's RTT feedback */
	BBR2P_POST_UP,		/* (UP) one round at 1.0: UP's RTT feedback */
	BBR2P_DOWN_SLIGHTLY,	/* (DOWN) at 0.90: GUARD saw the RTT rise */
};

#define BBR2P_RTT_WIN 4		/* rounds of the recent min RTT and max rttvar */

struct bbr2p {
	struct rcu_head rcu;
	struct minmax jitter;		/* max rttvar (us) over BBR2P_RTT_WIN rounds */
	u32 round_min[BBR2P_RTT_WIN];	/* min RTT of the last rounds (ring) */
	u32 srtt_cur, srtt_last;	/* smoothed RTT of this / the last round */
	u32 min_cur, min_last;		/* min RTT of this / the last round */
	u32 min_before_probe;		/* min_cur when UP started */
	u32 cruise_min, prev_cruise_min;	/* min RTT in this / the last CRUISE */
	u32 ref_rtt;			/* reference RTT: min over 1500 rounds */
	u32 rtt_cnt;			/* round trips */
	u8 phase;			/* enum bbr2p_phase */
	u8 round_idx;			/* next slot of round_min */
	u8 probe_wait_rounds;		/* CRUISE rounds until the next probe */
	u8 rounds_since_advance;	/* rounds since max_bw was sampled or advanced */
	u8 cruise_count;		/* CRUISE phases counted towards a switch */
	u8 delay_mode:1,		/* 1: BBRv2+, 0: plain BBRv2 */
	   drained:1;			/* Startup's Drain ended: allowance gain 2 */
};

/* The authors' constants (their module's defaults; percentages as their
 * description gives them, where the code has the nearest 1/256).
 */
static const u32 bbr2p_pre_up_gain_pct = 110;
static const u32 bbr2p_down_slightly_gain_pct = 90;
static const u32 bbr2p_probe_rounds_base = 8;		/* CRUISE rounds ... */
static const u32 bbr2p_probe_rounds_rand = 4;		/* ... + U{0..3} */
static const u32 bbr2p_go_up_pct = 2;			/* GUARD: srtt rise allowed */
static const u32 bbr2p_go_up_cap_us = 2000;
static const u32 bbr2p_probe_again_pct = 2;		/* POST_UP: min RTT rise allowed */
static const u32 bbr2p_probe_again_cap_us = 2000;
static const u32 bbr2p_advance_rise_pct = 110;		/* max-bw filter: RTT rise */
static const u32 bbr2p_advance_max_rounds = 25;	/* ... or rounds */
static const u32 bbr2p_rttvar_pct = 40;		/* allowance above this rttvar */
static const u32 bbr2p_allowance_gain_startup = BBR_UNIT * 2885 / 1000 + 1;
static const u32 bbr2p_allowance_gain = BBR_UNIT * 2;
static const u32 bbr2p_to_v2_pct = 10, bbr2p_to_v2_cruises = 2;
static const u32 bbr2p_to_plus_pct = 5, bbr2p_to_plus_cruises = 4;
static const u32 bbr2p_ref_rtt_rounds = 1500;

static DEFINE_XARRAY_FLAGS(bbr2p_states, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
static atomic_t bbr2p_alloc_failures = ATOMIC_INIT(0);

static int bbr2p_alloc_failures_set(const char *s, const struct kernel_param *kp)
{
	pr_err("%s: alloc_failures is a read-only counter\n", KBUILD_MODNAME);
	return -EPERM;
}

static int bbr2p_alloc_failures_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&bbr2p_alloc_failures));
}

static const struct kernel_param_ops bbr2p_alloc_failures_ops = {
	.set = bbr2p_alloc_failures_set,
	.get = bbr2p_alloc_failures_get,
};
module_param_cb(alloc_failures, &bbr2p_alloc_failures_ops, NULL, 0444);

static struct bbr2p *bbr2p_of(const struct sock *sk)
{
	const struct bbr2 *b = inet_csk_ca(sk);

	return b->plus_id ? xa_load(&bbr2p_states, b->plus_id) : NULL;
}

/* The state of BBRv2+ in delay mode, or NULL (plain BBRv2). */
static struct bbr2p *bbr2p_delay(const struct sock *sk)
{
	struct bbr2p *p = bbr2p_of(sk);

	return p && p->delay_mode ? p : NULL;
}

static u32 bbr2p_phase(const struct sock *sk)
{
	struct bbr2p *p = bbr2p_of(sk);

	return p ? p->phase : BBR2P_NONE;
}

static void bbr2p_set_phase(struct sock *sk, u32 phase)
{
	struct bbr2p *p = bbr2p_of(sk);

	if (p)
		p->phase = phase;
}
#else
#define bbr2p_phase(sk) BBR2P_NONE
#define bbr2p_set_phase(sk, phase) do { } while (0)
#define BBR2P_NONE 0
#define BBR2P_POST_UP 3
#endif

/* C.is_cwnd_limited of the v3 draft ("the connection has fully utilized
 * C.cwnd"): the stack's flag, as Google's code reads it. Not Linux's
 * tcp_is_cwnd_limited(), whose slow-start clause (cwnd < 2 * max_packets_out
 * while cwnd < ssthresh) holds almost always here, as ssthresh stays
 * TCP_INFINITE_SSTHRESH.
 */
static bool bbr2_is_cwnd_limited(struct sock *sk)
{
	return tcp_sk(sk)->is_cwnd_limited;
}

static u32 bbr2_max_bw(const struct bbr2 *b) { return max(b->bw_hi[0], b->bw_hi[1]); }

/* BBRBoundBWForModel(): BBR.bw = min(BBR.max_bw, BBR.bw_lo). */
static u32 bbr2_bw(const struct bbr2 *b) { return min(bbr2_max_bw(b), b->bw_lo); }

static bool bbr2_in_probe_bw(const struct bbr2 *b)
{
	return b->state >= BBR2_PROBE_BW_DOWN && b->state <= BBR2_PROBE_BW_UP;
}

static u64 bbr2_rate_bytes_per_sec(struct sock *sk, u64 rate, int gain)
{
	rate *= tcp_sk(sk)->mss_cache;
	rate *= gain;
	rate >>= BBR_SCALE;
	rate *= USEC_PER_SEC / 100 * (100 - bbr2_pacing_margin_pct);
	return rate >> BW_SCALE;
}

static unsigned long bbr2_pacing_rate(struct sock *sk, u32 bw, int gain)
{
	return min_t(u64, bbr2_rate_bytes_per_sec(sk, bw, gain), sk->sk_max_pacing_rate);
}

/* BBRSetPacingRateWithGain(): never lower the rate before the pipe is full. */
static void bbr2_set_pacing_rate(struct sock *sk, u32 bw, int gain)
{
	struct bbr2 *b = inet_csk_ca(sk);
	unsigned long rate = bbr2_pacing_rate(sk, bw, gain);

	if (b->filled_pipe || rate > sk->sk_pacing_rate)
		sk->sk_pacing_rate = rate;
}

/* BBRInitPacingRate(): startup gain times InitialCwnd / SRTT (1 ms if none). */
static void bbr2_init_pacing_rate(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 rtt_us = tp->srtt_us ? max(tp->srtt_us >> 3, 1U) : USEC_PER_MSEC;
	u64 bw = (u64)tcp_snd_cwnd(tp) * BW_UNIT;

	do_div(bw, rtt_us);
	sk->sk_pacing_rate = bbr2_pacing_rate(sk, (u32)bw, pct_gain(P(startup_pacing_gain_pct)));
}

static u32 bbr2_min_tso_segs(struct sock *sk)
{
	return sk->sk_pacing_rate < (bbr2_min_tso_rate >> 3) ? 1 : 2;
}

/* BBRSetSendQuantum(), in TSO segments (as Linux's tcp_bbr.c). v2alpha
 * (bbr_tso_segs_generic(), tso_rtt_shift 9) adds 64 KB >> (min_rtt / 512 us)
 * to the bytes per quantum: at a 1 ms min_rtt 32 KB, nothing from 16 ms on.
 */
static u32 bbr2_tso_segs(struct sock *sk)
{
	unsigned long bytes = sk->sk_pacing_rate >> READ_ONCE(sk->sk_pacing_shift);
	u32 r = ((struct bbr2 *)inet_csk_ca(sk))->min_rtt_us >> 9;

	if (BBR2_V2A && r < 32)
		bytes += GSO_LEGACY_MAX_SIZE >> r;
	bytes = min_t(unsigned long, bytes, GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
	return min(max_t(u32, bytes / tcp_sk(sk)->mss_cache, bbr2_min_tso_segs(sk)), 0x7FU);
}

/* BBRQuantizationBudget(): at least 3 send quanta and BBRMinPipeCwnd; two
 * more packets in ProbeBW_UP.
 */
static u32 bbr2_quantization_budget(struct sock *sk, u32 inflight)
{
	struct bbr2 *b = inet_csk_ca(sk);

	inflight = max(inflight, 3 * bbr2_tso_segs(sk));
	inflight = max_t(u32, inflight, BBR2_MIN_PIPE_CWND);
	if (b->state == BBR2_PROBE_BW_UP && bbr2p_phase(sk) != BBR2P_POST_UP)
		inflight += 2;
	return inflight;
}

/* BBRInflight(bw, gain). */
static u32 bbr2_inflight(struct sock *sk, u32 bw, u32 gain)
{
	struct bbr2 *b = inet_csk_ca(sk);

	if (b->min_rtt_us == ~0U)
		return TCP_INIT_CWND;
	return bbr2_quantization_budget(sk, bbr2_bdp(bw, b->min_rtt_us, gain));
}

/* BBRTargetInflight(): min(BBR.bdp, cwnd); v2alpha: the BDP with the
 * quantization budget (BBRInflight(bw, 1)).
 */
static u32 bbr2_target_inflight(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	u32 bdp = b->min_rtt_us == ~0U ? TCP_INIT_CWND :
		  BBR2_V2A ? bbr2_inflight(sk, bbr2_bw(b), BBR_UNIT) :
		  bbr2_bdp(bbr2_bw(b), b->min_rtt_us, BBR_UNIT);

	return min(bdp, tcp_snd_cwnd(tcp_sk(sk)));
}

/* v2alpha's in-flight volume at the earliest departure time (as Linux's
 * bbr_packets_in_net_at_edt()): what will still be in flight when the next
 * packet leaves, the packets in flight less those the model's bw delivers
 * until then, plus one send quantum while the pacing gain is above 1.
 */
static u32 bbr2_packets_in_net_at_edt(struct sock *sk, u32 inflight_now)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr2 *b = inet_csk_ca(sk);
	u64 now_ns = tp->tcp_clock_cache, edt_ns = max(tp->tcp_wstamp_ns, now_ns);
	u64 delivered = ((u64)bbr2_bw(b) * div_u64(edt_ns - now_ns, NSEC_PER_USEC)) >> BW_SCALE;
	u32 inflight = inflight_now;

	if (b->pacing_gain > BBR_UNIT)
		inflight += bbr2_tso_segs(sk);
	return delivered >= inflight ? 0 : inflight - (u32)delivered;
}

static void bbr2_set_gains(struct bbr2 *b, u32 pacing, u32 cwnd)
{
	b->pacing_gain = min_t(u32, pacing, 1023);
	b->cwnd_gain = min_t(u32, cwnd, 1023);
}

/* BBRStartRound(). */
static void bbr2_start_round(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	b->next_rtt_delivered = tcp_sk(sk)->delivered;
}

/* BBRResetFullBW() (v3 draft). */
static void bbr2_reset_full_bw(struct bbr2 *b)
{
	b->full_bw = 0;
	b->full_bw_cnt = 0;
	b->full_bw_now = 0;
}

/* BBRResetCongestionSignals(). */
static void bbr2_reset_congestion_signals(struct bbr2 *b)
{
	b->loss_in_round = 0;
	b->bw_latest = 0;
	b->inflight_latest = 0;
}

/* BBRResetLowerBounds(). */
static void bbr2_reset_lower_bounds(struct bbr2 *b)
{
	b->bw_lo = BBR2_INF;
	b->inflight_lo = BBR2_INF;
}

/* BBRRaiseInflightHiSlope(). */
static void bbr2_raise_inflight_hi_slope(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	b->probe_up_cnt = bbr2_probe_up_cnt(tcp_snd_cwnd(tcp_sk(sk)), b->probe_up_rounds);
	b->probe_up_rounds = min_t(u32, b->probe_up_rounds + 1, 30);
}

/* BBRPickProbeWait(): 0 or 1 extra rounds; 2 to 3 s of wall clock. */
static void bbr2_pick_probe_wait(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
#ifdef BBR2_PLUS
	struct bbr2p *p = bbr2p_of(sk);

	if (p)		/* BBRv2+: 8 + U{0..3} CRUISE rounds */
		p->probe_wait_rounds = bbr2p_probe_rounds_base +
				       get_random_u32_below(bbr2p_probe_rounds_rand);
#endif
	b->rounds_since_probe = get_random_u32_below(2);
	b->probe_wait_us = bbr2_probe_wait_base_us + get_random_u32_below(bbr2_probe_wait_rand_us);
}

static u64 bbr2_elapsed_in_phase(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	return (u32)((u32)tcp_sk(sk)->tcp_mstamp - b->cycle_stamp);
}

/* ProbeBW's phases: "ProbeBW Algorithm Details" of both drafts. */
static void bbr2_start_probe_bw_down(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	bbr2_reset_congestion_signals(b);
	b->probe_up_cnt = BBR2_INF;
	bbr2_pick_probe_wait(sk);
	b->cycle_stamp = (u32)tcp_sk(sk)->tcp_mstamp;
	b->ack_phase = BBR2_ACKS_PROBE_STOPPING;
	bbr2_start_round(sk);
	b->state = BBR2_PROBE_BW_DOWN;
	bbr2p_set_phase(sk, BBR2P_NONE);
	bbr2_set_gains(b, pct_gain(P(down_gain_pct)), bbr2_default_cwnd_gain);
}

static void bbr2_enter_startup(struct sock *sk);
static bool bbr2p_switch_at_cruise(struct sock *sk);

static void bbr2_start_probe_bw_cruise(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	if (bbr2p_switch_at_cruise(sk))
		return;
	if (BBR2_V2A && b->inflight_lo != BBR2_INF)	/* v2alpha: lo within hi */
		b->inflight_lo = min(b->inflight_lo, b->inflight_hi);
	b->state = BBR2_PROBE_BW_CRUISE;
	bbr2p_set_phase(sk, BBR2P_NONE);
	bbr2_set_gains(b, BBR_UNIT, bbr2_default_cwnd_gain);
}

static void bbr2_start_probe_bw_refill(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	bbr2_reset_lower_bounds(b);
	b->probe_up_rounds = 0;
	b->probe_up_acks = 0;
	b->prev_probe_precautionary = 0;
	b->ack_phase = BBR2_ACKS_REFILLING;
	bbr2_start_round(sk);
	b->state = BBR2_PROBE_BW_REFILL;
	bbr2p_set_phase(sk, BBR2P_NONE);
	bbr2_set_gains(b, BBR_UNIT, bbr2_default_cwnd_gain);
}

static void bbr2_start_probe_bw_up(struct sock *sk, u32 sample_bw)
{
	struct bbr2 *b = inet_csk_ca(sk);

	b->ack_phase = BBR2_ACKS_PROBE_STARTING;
	bbr2_start_round(sk);
	if (P(version) >= 3) {		/* v3 draft: full-bw detection in UP */
		bbr2_reset_full_bw(b);
		b->full_bw = sample_bw;
	}
	b->cycle_stamp = (u32)tcp_sk(sk)->tcp_mstamp;
	b->state = BBR2_PROBE_BW_UP;
	bbr2p_set_phase(sk, BBR2P_NONE);
	bbr2_set_gains(b, bbr2_up_pacing_gain, pct_gain(P(up_cwnd_gain_pct)));
	bbr2_raise_inflight_hi_slope(sk);
#ifdef BBR2_PLUS
	if (bbr2p_of(sk))	/* POST_UP compares the probe's RTT with this */
		bbr2p_of(sk)->min_before_probe = bbr2p_of(sk)->min_cur;
#endif
}

#ifdef BBR2_PLUS
/* BBRv2+'s phases. PRE_UP: a round at 1.10 x bw after REFILL, to see
 * whether a little more data raises the RTT; GUARD: a round at 1.0 for its
 * feedback.
 */
static void bbr2p_start_pre_up(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	bbr2p_set_phase(sk, BBR2P_PRE_UP);
	bbr2_set_gains(b, pct_gain(bbr2p_pre_up_gain_pct), bbr2_default_cwnd_gain);
}

static void bbr2p_start_guard(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	bbr2p_set_phase(sk, BBR2P_GUARD);
	bbr2_set_gains(b, BBR_UNIT, bbr2_default_cwnd_gain);
}

/* POST_UP: UP has run a min_rtt above 1.25 BDP; one more round at 1.0 (a new
 * round starts now) for the RTT feedback of the probe.
 */
static void bbr2p_start_post_up(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	bbr2_start_round(sk);
	bbr2p_set_phase(sk, BBR2P_POST_UP);
	bbr2_set_gains(b, BBR_UNIT, bbr2_default_cwnd_gain);
}

/* DOWN_SLIGHTLY: GUARD saw the RTT rise, so no UP; a DOWN at 0.90. */
static void bbr2p_start_down_slightly(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	bbr2_start_probe_bw_down(sk);
	bbr2p_set_phase(sk, BBR2P_DOWN_SLIGHTLY);
	bbr2_set_gains(b, pct_gain(bbr2p_down_slightly_gain_pct), bbr2_default_cwnd_gain);
}

/* The min RTT of the last BBR2P_RTT_WIN rounds. */
static u32 bbr2p_recent_min_rtt(const struct bbr2p *p)
{
	u32 m = BBR2_INF, i;

	for (i = 0; i < BBR2P_RTT_WIN; i++)
		m = min(m, p->round_min[i]);
	return m;
}
#endif

/* BBREnterProbeBW(). */
static void bbr2_enter_probe_bw(struct sock *sk)
{
#ifdef BBR2_PLUS
	if (bbr2p_of(sk))	/* Startup's Drain is over: allowance gain 2 */
		bbr2p_of(sk)->drained = 1;
#endif
	bbr2_start_probe_bw_down(sk);
}

static void bbr2_enter_startup(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	b->state = BBR2_STARTUP;
	bbr2p_set_phase(sk, BBR2P_NONE);
	bbr2_set_gains(b, pct_gain(P(startup_pacing_gain_pct)),
		       pct_gain(P(startup_cwnd_gain_pct)));
}

#ifdef BBR2_PLUS
/* The switch between BBRv2+ and plain BBRv2, at each entry to CRUISE (the
 * end of the last CRUISE): BBRv2+ whose last two CRUISE phases each had a
 * min RTT above min(the CRUISE before's, min_rtt) + 10 % of the reference
 * RTT runs as plain BBRv2 from a new Startup (to regain the bandwidth it
 * yielded); plain BBRv2 whose last four CRUISE phases each had a min RTT at
 * most min_rtt + 5 % of the reference returns to BBRv2+. Returns true if it
 * entered Startup.
 */
static bool bbr2p_switch_at_cruise(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct bbr2p *p = bbr2p_of(sk);
	bool startup = false;

	if (!p)
		return false;
	if (p->cruise_min != BBR2_INF && p->prev_cruise_min != BBR2_INF) {
		if (p->delay_mode) {
			if (bbr2p_cruise_queued(p->cruise_min, p->prev_cruise_min, b->min_rtt_us,
						p->ref_rtt, bbr2p_to_v2_pct))
				p->cruise_count++;
			else
				p->cruise_count = 0;
			if (p->cruise_count >= bbr2p_to_v2_cruises) {
				p->delay_mode = 0;
				p->cruise_count = 0;
				p->cruise_min = BBR2_INF;
				startup = true;
			}
		} else {
			if (bbr2p_cruise_clear(p->cruise_min, b->min_rtt_us, p->ref_rtt,
					       bbr2p_to_plus_pct))
				p->cruise_count++;
			else
				p->cruise_count = 0;
			if (p->cruise_count >= bbr2p_to_plus_cruises) {
				u32 i;

				p->delay_mode = 1;
				p->cruise_count = 0;
				/* per-round RTTs from before the switch are stale */
				p->min_cur = BBR2_INF;
				for (i = 0; i < BBR2P_RTT_WIN; i++)
					p->round_min[i] = BBR2_INF;
			}
		}
	}
	p->prev_cruise_min = p->cruise_min;
	p->cruise_min = BBR2_INF;
	if (startup) {
		b->filled_pipe = 0;
		bbr2_reset_full_bw(b);
		bbr2_enter_startup(sk);
	}
	return startup;
}
#else
static bool bbr2p_switch_at_cruise(struct sock *sk) { return false; }
#endif

/* BBRSaveCwnd() / BBRRestoreCwnd(). */
static void bbr2_save_cwnd(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (b->prev_ca_state < TCP_CA_Recovery && b->state != BBR2_PROBE_RTT)
		b->prior_cwnd = tcp_snd_cwnd(tp);
	else
		b->prior_cwnd = max(b->prior_cwnd, tcp_snd_cwnd(tp));
}

static void bbr2_restore_cwnd(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	tcp_snd_cwnd_set(tp, max(tcp_snd_cwnd(tp), b->prior_cwnd));
}

/* BBRUpdateRound() and BBRUpdateMaxBw() ("Updating the BBR.max_bw Max
 * Filter"): the filter keeps the max of the current and the previous ProbeBW
 * cycle (BBR.MaxBwFilterLen = 2 cycles).
 */
static void bbr2_update_round_and_max_bw(struct sock *sk, const struct rate_sample *rs,
					 u32 sample_bw)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	b->round_start = 0;
	if (rs->delivered < 0 || rs->interval_us <= 0)
		return;
	if (!before(rs->prior_delivered, b->next_rtt_delivered)) {
		b->next_rtt_delivered = tp->delivered;
		b->round_start = 1;
		b->packet_conservation = 0;	/* held for one round */
		if (b->rounds_since_probe < bbr2_max_probe_rounds)
			b->rounds_since_probe++;
	}
	if (sample_bw >= bbr2_max_bw(b) || !rs->is_app_limited)
		b->bw_hi[1] = max(b->bw_hi[1], sample_bw);
}

/* BBRAdvanceMaxBwFilter(); v2alpha keeps the old window while the current
 * one holds no sample.
 */
static void bbr2_advance_max_bw_filter(struct bbr2 *b)
{
	if (BBR2_V2A && !b->bw_hi[1])
		return;
	b->bw_hi[0] = b->bw_hi[1];
	b->bw_hi[1] = 0;
}

#ifdef BBR2_PLUS
/* BBRv2+, per ACK before the model update: round trips counted (CRUISE
 * rounds until the next probe; rounds since max_bw was last sampled or
 * advanced), the min RTT of the current CRUISE, the reference RTT (the min
 * RTT over 1500 rounds).
 */
static void bbr2p_on_ack(struct sock *sk, const struct rate_sample *rs, u32 sample_bw)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct bbr2p *p = bbr2p_of(sk);

	if (!p)
		return;
	if (b->round_start) {
		p->rtt_cnt++;
		if (b->state == BBR2_PROBE_BW_CRUISE && p->probe_wait_rounds)
			p->probe_wait_rounds--;
		if (p->rounds_since_advance < 0xFF)
			p->rounds_since_advance++;
	}
	if (rs->interval_us > 0 && rs->acked_sacked > 0 && sample_bw >= bbr2_max_bw(b))
		p->rounds_since_advance = 0;
	if (rs->rtt_us <= 0)
		return;
	if (b->state == BBR2_PROBE_BW_CRUISE)
		p->cruise_min = min_t(u32, p->cruise_min, rs->rtt_us);
	if (p->ref_rtt == BBR2_INF || (b->round_start && !(p->rtt_cnt % bbr2p_ref_rtt_rounds)))
		p->ref_rtt = rs->rtt_us;
	else
		p->ref_rtt = min_t(u32, p->ref_rtt, rs->rtt_us);
}

/* BBRv2+, per ACK after the model update (delay mode only): this and the
 * last round's smoothed RTT (an EWMA of the round's RTT samples, weight 1/8,
 * from its first sample) and min RTT; the min RTTs of recent rounds.
 */
static void bbr2p_update_rtt(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct bbr2p *p = bbr2p_delay(sk);
	u32 rtt = rs->rtt_us;

	if (!p || rs->rtt_us <= 0)
		return;
	if (p->min_cur == BBR2_INF) {
		p->srtt_cur = p->srtt_last = rtt;
		p->min_cur = p->min_last = rtt;
		p->round_min[p->round_idx] = rtt;
		p->round_idx = (p->round_idx + 1) % BBR2P_RTT_WIN;
	} else if (b->round_start) {
		p->round_min[p->round_idx] = p->min_cur;
		p->round_idx = (p->round_idx + 1) % BBR2P_RTT_WIN;
		p->srtt_last = p->srtt_cur;
		p->min_last = p->min_cur;
		p->srtt_cur = rtt;
		p->min_cur = rtt;
	} else {
		p->srtt_cur = (u32)(((u64)p->srtt_cur * 7 + rtt) >> 3);
		p->min_cur = min(p->min_cur, rtt);
	}
}

/* At each round start in CRUISE, DOWN and DOWN_SLIGHTLY (delay mode):
 * advance the max-bw filter when the round's min RTT rose 10 % above the
 * recent rounds', or 25 rounds after max_bw was last sampled or advanced.
 */
static void bbr2p_try_advance_bw_filter(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct bbr2p *p = bbr2p_delay(sk);

	if (!p || !b->round_start)
		return;
	if (bbr2p_advance_bw_filter(p->min_cur, bbr2p_recent_min_rtt(p), bbr2p_advance_rise_pct,
				    p->rounds_since_advance, bbr2p_advance_max_rounds)) {
		bbr2_advance_max_bw_filter(b);
		p->rounds_since_advance = 0;
	}
}

/* The cwnd allowance for variable RTTs (packets): the max over 4 rounds of
 * the stack's RTT variation (mdev_us / 4), if above 40 % of min_rtt, times
 * max_bw and 2.89 (until Startup's Drain ended) or 2.
 */
static u32 bbr2p_rtt_allowance_cwnd(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct bbr2p *p = bbr2p_of(sk);
	u32 rttvar = tcp_sk(sk)->mdev_us >> 2;

	if (!p || b->min_rtt_us == ~0U)
		return 0;
	if (p->rtt_cnt > 0)
		minmax_running_max(&p->jitter, BBR2P_RTT_WIN, p->rtt_cnt, rttvar);
	return bbr2p_rtt_allowance(bbr2_max_bw(b), minmax_get(&p->jitter), b->min_rtt_us,
				   bbr2p_rttvar_pct, p->drained ? bbr2p_allowance_gain :
				   bbr2p_allowance_gain_startup);
}
#else
#define bbr2p_on_ack(sk, rs, sample_bw) do { } while (0)
#define bbr2p_update_rtt(sk, rs) do { } while (0)
#define bbr2p_try_advance_bw_filter(sk) do { } while (0)
#define bbr2p_rtt_allowance_cwnd(sk) 0
#define bbr2p_delay(sk) NULL
#define bbr2p_start_pre_up(sk) do { } while (0)
#define bbr2p_start_post_up(sk) do { } while (0)
#endif

/* BBRUpdateLatestDeliverySignals(). */
static void bbr2_update_latest_delivery_signals(struct sock *sk, const struct rate_sample *rs,
						u32 sample_bw)
{
	struct bbr2 *b = inet_csk_ca(sk);

	b->loss_round_start = 0;
	if (rs->interval_us <= 0 || !rs->acked_sacked)
		return;
	b->bw_latest = max(b->bw_latest, sample_bw);
	b->inflight_latest = max_t(u32, b->inflight_latest, rs->delivered);
	if (!before(rs->prior_delivered, b->loss_round_delivered)) {
		b->loss_round_delivered = tcp_sk(sk)->delivered;
		b->loss_round_start = 1;
	}
}

/* BBRAdvanceLatestDeliverySignals(). */
static void bbr2_advance_latest_delivery_signals(struct sock *sk, const struct rate_sample *rs,
						 u32 sample_bw)
{
	struct bbr2 *b = inet_csk_ca(sk);

	if (b->loss_round_start) {
		b->bw_latest = sample_bw;
		b->inflight_latest = max_t(s32, rs->delivered, 0);
	}
}

/* BBRUpdateCongestionSignals() with BBRAdaptLowerBoundsFromCongestion(),
 * BBRInitLowerBounds() and BBRLossLowerBounds(): once per round trip with
 * loss, outside bandwidth probing, bw_lo and inflight_lo are cut to
 * max(latest, beta * bound).
 */
static void bbr2_update_congestion_signals(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr2 *b = inet_csk_ca(sk);
	u32 beta = P(beta_pct);

	if (rs->losses > 0) {
		b->loss_in_round = 1;
		if (b->loss_events_in_round < 15)
			b->loss_events_in_round++;
	}
	if (!b->loss_round_start)
		return;
	if (!bbr2_is_probing_bw(b->state) && b->loss_in_round) {
		if (b->bw_lo == BBR2_INF)
			b->bw_lo = bbr2_max_bw(b);
		if (b->inflight_lo == BBR2_INF)
			b->inflight_lo = tcp_snd_cwnd(tcp_sk(sk));
		b->bw_lo = bbr2_lower_bound_on_loss(b->bw_latest, b->bw_lo, beta);
		b->inflight_lo = bbr2_lower_bound_on_loss(b->inflight_latest, b->inflight_lo, beta);
	}
}

/* BBRUpdateACKAggregation(): data ACKed beyond bw * interval in an epoch,
 * max over the last 5-10 round trips (v3 draft -06: over 1 round in Startup,
 * here 1-2), capped at 100 ms of bw and at cwnd.
 */
static void bbr2_update_ack_aggregation(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 epoch_us, expected, extra;

	if (rs->acked_sacked <= 0 || rs->delivered < 0 || rs->interval_us <= 0)
		return;
	if (b->round_start) {
		u32 half_win = (P(version) >= 3 || BBR2_V2A) && !b->filled_pipe ? 1 :
			       bbr2_extra_acked_win / 2;	/* v2alpha: extra_acked_in_startup */

		b->extra_acked_win_rtts = min(0x1FU, b->extra_acked_win_rtts + 1U);
		if (b->extra_acked_win_rtts >= half_win) {
			b->extra_acked_win_rtts = 0;
			b->extra_acked_win_idx ^= 1;
			b->extra_acked[b->extra_acked_win_idx] = 0;
		}
	}
	epoch_us = (u32)tp->delivered_mstamp - b->ack_epoch_stamp;
	expected = (u32)(((u64)bbr2_bw(b) * epoch_us) >> BW_SCALE);
	if (b->ack_epoch_acked <= expected || b->ack_epoch_acked + rs->acked_sacked >= (1U << 20)) {
		b->ack_epoch_acked = 0;
		b->ack_epoch_stamp = (u32)tp->delivered_mstamp;
		expected = 0;
	}
	b->ack_epoch_acked += rs->acked_sacked;
	extra = b->ack_epoch_acked - expected;
	extra = min(extra, tcp_snd_cwnd(tp));
	if (extra > b->extra_acked[b->extra_acked_win_idx])
		b->extra_acked[b->extra_acked_win_idx] = min_t(u32, extra, 0xFFFF);
}

/* BBR.extra_acked, in every state (both drafts' BBRUpdateMaxInflight();
 * Linux's BBR v1 leaves it out in Startup).
 */
static u32 bbr2_extra_acked(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	u32 cap = (u32)(((u64)bbr2_bw(b) * bbr2_extra_acked_max_us) >> BW_SCALE);

	return min_t(u32, max(b->extra_acked[0], b->extra_acked[1]), cap);
}

/* BBRCheckFullBWReached() / BBRCheckStartupFullBandwidth(). The v2 draft
 * compares BBR.max_bw and runs only until the pipe is filled; the v3 draft
 * compares the delivery rate and keeps BBR.full_bw_now up to date, which
 * ends ProbeBW_UP (BBRCheckTimeToGoDown()).
 */
static void bbr2_check_full_bw(struct sock *sk, const struct rate_sample *rs, u32 sample_bw)
{
	struct bbr2 *b = inet_csk_ca(sk);
	bool v3 = P(version) >= 3;
	u32 bw = v3 ? sample_bw : bbr2_max_bw(b);

	if (v3 ? b->full_bw_now : b->filled_pipe)
		return;
	if (!b->round_start || rs->is_app_limited)
		return;
	if (bbr2_bw_still_growing(bw, b->full_bw)) {
		bbr2_reset_full_bw(b);
		b->full_bw = bw;
		return;
	}
	if (b->full_bw_cnt < 3)
		b->full_bw_cnt++;
	b->full_bw_now = b->full_bw_cnt >= 3;
	if (b->full_bw_now)
		b->filled_pipe = 1;
}

/* BBRCheckStartupHighLoss() (v2 draft 4.3.1.3): at the end of a round trip
 * in fast recovery with at least full_loss_cnt loss events (ACKs that marked
 * packets lost, standing for the draft's discontiguous lost ranges) and a
 * too-high loss rate, the pipe is full; inflight_hi = max(BDP,
 * inflight_latest) (v3 draft).
 */
static void bbr2_check_startup_high_loss(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr2 *b = inet_csk_ca(sk);

	if (b->filled_pipe || b->state != BBR2_STARTUP || !b->loss_round_start ||
	    inet_csk(sk)->icsk_ca_state != TCP_CA_Recovery)
		return;
	if (BBR2_V2A ? P(full_loss_cnt) && b->loss_events_in_round >= P(full_loss_cnt) &&
		       bbr2_v2a_inflight_too_high(rs->lost, rs->tx_in_flight, P(loss_thresh_bp)) :
	    bbr2_startup_high_loss(b->loss_events_in_round, P(full_loss_cnt), rs->lost,
				   rs->tx_in_flight, P(loss_thresh_bp))) {
		b->filled_pipe = 1;
		/* v2alpha (bbr2_handle_queue_too_high_in_startup()): BBRInflight(max_bw, 1) */
		b->inflight_hi = BBR2_V2A ? bbr2_inflight(sk, bbr2_max_bw(b), BBR_UNIT) :
			max(bbr2_bdp(bbr2_max_bw(b), b->min_rtt_us, BBR_UNIT), b->inflight_latest);
	}
}

/* BBRCheckStartupDone() and BBRCheckDrainDone(). BBREnterDrain(): pacing
 * gain 1 / BBRStartupCwndGain (v2 draft 4.3.2: 0.5 with the default cwnd gain
 * 2; v3 draft -06 5.3.2: BBR.DrainPacingGain = 0.5, "any value at or below 1
 * / BBRStartupCwndGain"; Google's code 1 / 2.885, which the v2alpha preset's
 * startup_cwnd_gain_pct 289 gives). Drain ends when inflight is at most the
 * BDP, or (v3 draft -06) after 3 round trips in Drain.
 */
static void bbr2_check_startup_and_drain(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	u32 cwnd_gain = pct_gain(P(startup_cwnd_gain_pct));

	u32 inflight = tcp_packets_in_flight(tcp_sk(sk));

	if (b->state == BBR2_STARTUP && b->filled_pipe) {
		b->state = BBR2_DRAIN;		/* BBREnterDrain() */
		b->drain_rounds = 0;
		bbr2_set_gains(b, BBR_UNIT * BBR_UNIT / cwnd_gain, cwnd_gain);
		if (BBR2_V2A) {	/* v2alpha's bbr_check_drain() */
			tcp_sk(sk)->snd_ssthresh = bbr2_inflight(sk, bbr2_max_bw(b), BBR_UNIT);
			bbr2_reset_congestion_signals(b);
		}
	} else if (b->state == BBR2_DRAIN && b->round_start && b->drain_rounds < 7) {
		b->drain_rounds++;
	}
	if (BBR2_V2A)
		inflight = bbr2_packets_in_net_at_edt(sk, inflight);
	if (b->state == BBR2_DRAIN &&
	    (inflight <= bbr2_inflight(sk, bbr2_max_bw(b), BBR_UNIT) ||
	     (P(version) >= 3 && b->drain_rounds > bbr2_drain_max_rounds)))
		bbr2_enter_probe_bw(sk);
}

/* BBRHandleInflightTooHigh(). */
static void bbr2_handle_inflight_too_high(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr2 *b = inet_csk_ca(sk);

	b->bw_probe_samples = 0;
	if (P(version) >= 3 || BBR2_V2A)	/* v3 draft -06; v2alpha */
		b->prev_probe_too_high = 1;
	if (!rs->is_app_limited)
		b->inflight_hi = bbr2_inflight_hi_on_loss(rs->tx_in_flight,
							  bbr2_target_inflight(sk), P(beta_pct));
	if (b->state == BBR2_PROBE_BW_UP && bbr2p_phase(sk) != BBR2P_POST_UP)
		bbr2_start_probe_bw_down(sk);
}

/* BBRProbeInflightHiUpward() (v2 draft 4.3.3.6): inflight_hi grows only
 * while the flow is cwnd-limited with cwnd at inflight_hi.
 */
static void bbr2_probe_inflight_hi_upward(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 delta;

	if (!bbr2_is_cwnd_limited(sk) || tcp_snd_cwnd(tp) < b->inflight_hi) {
		b->probe_up_acks = 0;
		return;
	}
	b->probe_up_acks += rs->acked_sacked;
	if (b->probe_up_acks >= b->probe_up_cnt) {
		delta = b->probe_up_acks / b->probe_up_cnt;
		b->probe_up_acks -= delta * b->probe_up_cnt;
		b->inflight_hi = min_t(u64, (u64)b->inflight_hi + delta, BBR2_INF - 1);
	}
	if (b->round_start)
		bbr2_raise_inflight_hi_slope(sk);
}

/* IsInflightTooHigh() at BBRLossThresh, loss_thresh_bp; v2alpha on its
 * 1/256 scale (5/256 for 2 %).
 */
static int bbr2_loss_too_high(u32 lost, u32 tx_in_flight)
{
	if (BBR2_V2A)
		return bbr2_v2a_inflight_too_high(lost, tx_in_flight, P(loss_thresh_bp));
	return bbr2_inflight_too_high(lost, tx_in_flight, P(loss_thresh_bp));
}

/* BBRAdaptUpperBounds() with BBRCheckInflightTooHigh() (v3 draft -06:
 * AdaptLongTermModel(), with its precautionary-probing acceleration: once
 * the feedback of a probe stopped early at the risky inflight_hi
 * (prev_probe_precautionary) is in without too much loss, probe again at once
 * from REFILL). Returns true if it started a new phase.
 */
static bool bbr2_adapt_upper_bounds(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr2 *b = inet_csk_ca(sk);

	if (b->ack_phase == BBR2_ACKS_PROBE_STARTING && b->round_start)
		b->ack_phase = BBR2_ACKS_PROBE_FEEDBACK;
	if (b->ack_phase == BBR2_ACKS_PROBE_STOPPING && b->round_start) {
		b->bw_probe_samples = 0;
		b->ack_phase = BBR2_ACKS_INIT;
		if (bbr2_in_probe_bw(b) && !rs->is_app_limited && !bbr2p_delay(sk))
			bbr2_advance_max_bw_filter(b);	/* BBRv2+: on RTT rises instead */
		if ((P(version) >= 3 || BBR2_V2A) && bbr2_in_probe_bw(b) &&
		    b->prev_probe_precautionary && !b->prev_probe_too_high) {
			bbr2_start_probe_bw_refill(sk);
			return true;
		}
	}
	if (bbr2_loss_too_high(rs->lost, rs->tx_in_flight)) {
		if (b->bw_probe_samples)
			bbr2_handle_inflight_too_high(sk, rs);
		return false;
	}
	if (b->inflight_hi == BBR2_INF)
		return false;
	if (rs->tx_in_flight > b->inflight_hi)
		b->inflight_hi = rs->tx_in_flight;
	if (b->state == BBR2_PROBE_BW_UP && bbr2p_phase(sk) != BBR2P_POST_UP)
		bbr2_probe_inflight_hi_upward(sk, rs);
	return false;
}

/* BBRHandleLostPacket() (v2 draft 4.5.6.2) and HandleLostPacket() with
 * NoteLoss() (v3 draft -06 5.5.10.2): run for each packet the stack marks
 * lost (the testbed kernel's skb_marked_lost operation,
 * kernel/patches/20-tcp-skb-marked-lost.patch), with tp->lost already
 * counting it. v3: a round trip's first loss restarts the loss round at
 * C.delivered (the v2 draft has no NoteLoss(); its loss round ends per ACK
 * only). Both: a packet sent while probing for bandwidth whose own loss rate
 * (the packets lost since it was sent, itself included, over the packets in
 * flight when it was sent) exceeds BBRLossThresh sets inflight_hi from the
 * volume in flight at which the threshold was crossed within it. The ACK's
 * own check (bbr2_adapt_upper_bounds) still runs on the sampled packet, as in
 * both drafts. A packet whose send-time record is not its own (has_rate_info
 * 0: used up or merged away) is not checked, as in Google's code.
 */
static void bbr2_skb_marked_lost(struct sock *sk, const struct sk_buff *skb)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	const struct tcp_skb_cb *scb = TCP_SKB_CB(skb);
	struct rate_sample rs = {};

	if (P(version) >= 3 || BBR2_V2A) {	/* v3 draft; v2alpha too */
		if (!b->loss_in_round)
			b->loss_round_delivered = tp->delivered;
		b->loss_in_round = 1;
	}
	if (!b->bw_probe_samples || !scb->tx.has_rate_info)
		return;
	rs.tx_in_flight = scb->tx.in_flight;
	rs.lost = tp->lost - scb->tx.lost;
	rs.is_app_limited = scb->tx.is_app_limited;
	if (bbr2_loss_too_high(rs.lost, rs.tx_in_flight)) {
		rs.tx_in_flight = BBR2_V2A ?
			bbr2_v2a_inflight_at_loss(rs.tx_in_flight, rs.lost, tcp_skb_pcount(skb),
						  P(loss_thresh_bp)) :
			bbr2_inflight_at_loss(rs.tx_in_flight, rs.lost, tcp_skb_pcount(skb),
					      P(loss_thresh_bp));
		bbr2_handle_inflight_too_high(sk, &rs);
	}
}

/* BBRCheckTimeToProbeBW(). */
static bool bbr2_check_time_to_probe_bw(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	bool due;

#ifdef BBR2_PLUS
	if (bbr2p_delay(sk))	/* BBRv2+: CRUISE rounds, not wall clock */
		due = !bbr2p_delay(sk)->probe_wait_rounds ||
		      bbr2_reno_probe_time(b->rounds_since_probe, bbr2_target_inflight(sk),
					   bbr2_max_probe_rounds);
	else
#endif
		due = bbr2_time_to_probe_bw(bbr2_elapsed_in_phase(sk), b->probe_wait_us,
					    b->rounds_since_probe, bbr2_target_inflight(sk),
					    bbr2_max_probe_rounds);
	if (due) {
		bbr2_start_probe_bw_refill(sk);
		return true;
	}
	return false;
}

#ifdef BBR2_PLUS
/* BBRv2+'s sub-phases (delay mode; a switch to plain BBRv2 finishes the
 * current one). PRE_UP -> GUARD after a round; GUARD -> UP if this round's
 * smoothed RTT is at most the last round's + min(2 %, 2 ms), else
 * DOWN_SLIGHTLY; POST_UP -> UP again if the min RTT of the round before
 * POST_UP's (the probe's) is at most the min RTT before the probe +
 * min(2 %, 2 ms), else DOWN. Returns true if a sub-phase was handled.
 */
static bool bbr2p_update_plus_phase(struct sock *sk, u32 inflight)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct bbr2p *p = bbr2p_of(sk);

	if (!p)
		return false;
	switch (p->phase) {
	case BBR2P_PRE_UP:
		if (b->round_start)
			bbr2p_start_guard(sk);
		return true;
	case BBR2P_GUARD:
		if (!b->round_start)
			return true;
		if (bbr2p_rtt_within(p->srtt_cur, p->srtt_last, bbr2p_go_up_pct,
				     bbr2p_go_up_cap_us)) {
			b->bw_probe_samples = 1;
			bbr2_start_probe_bw_up(sk, 0);
		} else {
			bbr2p_start_down_slightly(sk);
		}
		return true;
	case BBR2P_POST_UP:
		if (!b->round_start)
			return true;
		if (bbr2p_rtt_within(p->min_last, p->min_before_probe, bbr2p_probe_again_pct,
				     bbr2p_probe_again_cap_us)) {
			b->bw_probe_samples = 1;
			bbr2_start_probe_bw_up(sk, 0);
		} else {
			bbr2_start_probe_bw_down(sk);
		}
		return true;
	default:	/* DOWN_SLIGHTLY is handled as DOWN */
		return false;
	}
}
#endif

/* BBRUpdateProbeBWCyclePhase(). */
static void bbr2_update_probe_bw_cycle_phase(struct sock *sk, const struct rate_sample *rs,
					     u32 sample_bw)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	/* v2alpha: the packets in flight before this ACK, at the earliest departure time */
	u32 inflight = BBR2_V2A ? bbr2_packets_in_net_at_edt(sk, rs->prior_in_flight) :
			   tcp_packets_in_flight(tp);
	bool risky = false;
	int go;

	if (!b->filled_pipe)
		return;
	if (bbr2_adapt_upper_bounds(sk, rs))
		return;
	if (!bbr2_in_probe_bw(b))
		return;
#ifdef BBR2_PLUS
	if (bbr2p_update_plus_phase(sk, inflight))
		return;
#endif
	switch (b->state) {
	case BBR2_PROBE_BW_DOWN:
		bbr2p_try_advance_bw_filter(sk);
		if (bbr2_check_time_to_probe_bw(sk))
			return;
		if (bbr2_time_to_cruise(inflight, b->inflight_hi, P(headroom_pct),
					bbr2_inflight(sk, bbr2_max_bw(b), BBR_UNIT)))
			bbr2_start_probe_bw_cruise(sk);
		break;
	case BBR2_PROBE_BW_CRUISE:
		bbr2p_try_advance_bw_filter(sk);
		bbr2_check_time_to_probe_bw(sk);
		break;
	case BBR2_PROBE_BW_REFILL:
		if (b->round_start) {
			if (bbr2p_delay(sk)) {
				bbr2p_start_pre_up(sk);		/* BBRv2+ */
				break;
			}
			b->bw_probe_samples = 1;
			bbr2_start_probe_bw_up(sk, sample_bw);
		}
		break;
	case BBR2_PROBE_BW_UP:
		if ((P(version) >= 3 || BBR2_V2A) && b->prev_probe_too_high &&
		    inflight >= b->inflight_hi) {
			/* v3 draft -06 IsTimeToGoDown(), v2alpha's stopped_risky_probe:
			 * precautionary deceleration at the inflight_hi of the
			 * last lossy probe.
			 */
			b->prev_probe_precautionary = 1;
			risky = true;
			go = 1;
		} else if (P(version) >= 3) {
			go = bbr2_up_done_v3(bbr2_is_cwnd_limited(sk), tcp_snd_cwnd(tp),
					     b->inflight_hi, b->full_bw_now);
			if (go < 0) {
				bbr2_reset_full_bw(b);
				b->full_bw = sample_bw;
			}
		} else if (BBR2_V2A) {
			go = bbr2_v2a_up_done(bbr2_elapsed_in_phase(sk), b->min_rtt_us, inflight,
					      bbr2_inflight(sk, bbr2_max_bw(b), bbr2_up_pacing_gain));
		} else {
			go = bbr2_up_done_v2(bbr2_elapsed_in_phase(sk), b->min_rtt_us, inflight,
					     bbr2_inflight(sk, bbr2_max_bw(b), bbr2_up_pacing_gain));
		}
		if (go > 0 && !risky && P(version) < 3 && bbr2p_delay(sk)) {
			bbr2p_start_post_up(sk);	/* BBRv2+: the probe's RTT feedback */
		} else if (go > 0) {
			b->prev_probe_too_high = 0;	/* v3 draft -06: no high loss (yet) */
			bbr2_start_probe_bw_down(sk);
		}
		break;
	default:
		break;
	}
}

/* BBRUpdateMinRTT(): probe_rtt_min_delay over ProbeRTTInterval (5 s);
 * min_rtt over MinRTTFilterLen (10 s).
 */
static bool bbr2_update_min_rtt(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr2 *b = inet_csk_ca(sk);
	bool probe_rtt_expired = after(tcp_jiffies32, b->probe_rtt_min_stamp +
				       msecs_to_jiffies(bbr2_probe_rtt_win_ms));

	/* v2alpha: an RTT equal to the minimum renews it too, and once the
	 * ProbeRTT interval has expired a delayed ACK's RTT does not replace it.
	 */
	if (rs->rtt_us >= 0 &&
	    (BBR2_V2A ? rs->rtt_us <= b->probe_rtt_min_us || (probe_rtt_expired && !rs->is_ack_delayed) :
	     rs->rtt_us < b->probe_rtt_min_us || probe_rtt_expired)) {
		b->probe_rtt_min_us = rs->rtt_us;
		b->probe_rtt_min_stamp = tcp_jiffies32;
	}
	if ((BBR2_V2A ? b->probe_rtt_min_us <= b->min_rtt_us : b->probe_rtt_min_us < b->min_rtt_us) ||
	    after(tcp_jiffies32, b->min_rtt_stamp + bbr2_min_rtt_win_sec * HZ)) {
		b->min_rtt_us = b->probe_rtt_min_us;
		b->min_rtt_stamp = b->probe_rtt_min_stamp;
	}
	return probe_rtt_expired;
}

/* BBRExitProbeRTT(). */
static void bbr2_exit_probe_rtt(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	bbr2_reset_lower_bounds(b);
	if (b->filled_pipe) {
		bbr2_start_probe_bw_down(sk);
		bbr2_start_probe_bw_cruise(sk);
	} else {
		bbr2_enter_startup(sk);
	}
}

/* BBRCheckProbeRTTDone(). */
static void bbr2_check_probe_rtt_done(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	if (!(b->probe_rtt_done_stamp && after(tcp_jiffies32, b->probe_rtt_done_stamp)))
		return;
	b->probe_rtt_min_stamp = tcp_jiffies32;	/* schedule the next ProbeRTT */
	bbr2_restore_cwnd(sk);
	bbr2_exit_probe_rtt(sk);
}

/* BBRCheckProbeRTT() with BBREnterProbeRTT() and BBRHandleProbeRTT(). */
static void bbr2_check_probe_rtt(struct sock *sk, const struct rate_sample *rs,
				 bool probe_rtt_expired)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (b->state != BBR2_PROBE_RTT && probe_rtt_expired && !b->idle_restart) {
		bbr2_save_cwnd(sk);
		b->state = BBR2_PROBE_RTT;
		bbr2_set_gains(b, BBR_UNIT, pct_gain(P(probe_rtt_cwnd_gain_pct)));
		b->probe_rtt_done_stamp = 0;
		b->ack_phase = BBR2_ACKS_PROBE_STOPPING;
		bbr2_start_round(sk);
	}
	if (b->state == BBR2_PROBE_RTT) {
		/* Ignore low rate samples during ProbeRTT: */
		tp->app_limited = (tp->delivered + tcp_packets_in_flight(tp)) ? : 1;
		if (!b->probe_rtt_done_stamp &&
		    tcp_packets_in_flight(tp) <= bbr2_probe_rtt_cwnd(bbr2_bw(b), b->min_rtt_us,
								 b->cwnd_gain)) {
			b->probe_rtt_done_stamp = tcp_jiffies32 +
						  msecs_to_jiffies(bbr2_probe_rtt_ms);
			b->probe_rtt_round_done = 0;
			bbr2_start_round(sk);
		} else if (b->probe_rtt_done_stamp) {
			if (b->round_start)
				b->probe_rtt_round_done = 1;
			if (b->probe_rtt_round_done)
				bbr2_check_probe_rtt_done(sk);
		}
	}
	if (rs->delivered > 0)
		b->idle_restart = 0;
}

/* Loss recovery with Linux's CA states (cwnd was saved by ssthresh(), which
 * Linux calls on entering recovery: BBRSaveCwnd()). On leaving recovery cwnd
 * is restored (BBRRestoreCwnd(), both drafts). v2 draft 4.6.4.4,
 * BBRModulateCwndForRecovery(): cwnd less the packets newly lost, and on
 * entering fast recovery packet conservation for one round. The v3 draft
 * (OnEnterFastRecovery(): SaveCwnd() only) does neither, nor does Google's
 * v2alpha or v3 code (its bbr_set_cwnd() has no recovery step). Returns true
 * if cwnd was set here.
 */
static bool bbr2_cwnd_for_recovery(struct sock *sk, const struct rate_sample *rs,
				   u32 acked, u32 *new_cwnd)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u8 prev_state = b->prev_ca_state, state = inet_csk(sk)->icsk_ca_state;
	bool v2 = P(version) < 3 && !BBR2_V2A;	/* v2alpha: no recovery step */
	u32 cwnd = tcp_snd_cwnd(tp);

	if (v2 && rs->losses > 0)
		cwnd = max_t(s32, cwnd - rs->losses, 1);
	if (v2 && state == TCP_CA_Recovery && prev_state != TCP_CA_Recovery) {
		b->packet_conservation = 1;
		bbr2_start_round(sk);
		cwnd = tcp_packets_in_flight(tp) + acked;
	} else if (BBR2_V2A ? prev_state == TCP_CA_Loss && state != TCP_CA_Loss :
		   prev_state >= TCP_CA_Recovery && state < TCP_CA_Recovery) {
		cwnd = max(cwnd, b->prior_cwnd);	/* v2alpha: only after an RTO */
		b->packet_conservation = 0;
	}
	b->prev_ca_state = state;
	if (b->packet_conservation) {
		*new_cwnd = max(cwnd, tcp_packets_in_flight(tp) + acked);
		return true;
	}
	*new_cwnd = cwnd;
	return false;
}

/* BBRSetCwnd() with BBRUpdateMaxInflight(), BBRBoundCwndForProbeRTT() and
 * BBRBoundCwndForModel().
 */
static void bbr2_set_cwnd(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 acked = max_t(s32, rs->acked_sacked, 0);
	u32 cwnd, max_inflight;

	if (!acked)
		goto bound;
	max_inflight = bbr2_quantization_budget(sk, (b->min_rtt_us == ~0U ? TCP_INIT_CWND :
				bbr2_bdp(bbr2_bw(b), b->min_rtt_us, b->cwnd_gain)) +
				bbr2_extra_acked(sk));
	max_inflight += bbr2p_rtt_allowance_cwnd(sk);	/* BBRv2+ only */
	if (bbr2_cwnd_for_recovery(sk, rs, acked, &cwnd))
		goto set;
	if (b->filled_pipe)
		cwnd = min(cwnd + acked, max_inflight);
	else if (cwnd < max_inflight ||
		 (BBR2_V2A ? cwnd < 2 * TCP_INIT_CWND : tp->delivered < TCP_INIT_CWND))
		cwnd = cwnd + acked;	/* v2alpha: below twice the initial cwnd */
	cwnd = max_t(u32, cwnd, BBR2_MIN_PIPE_CWND);
set:
	tcp_snd_cwnd_set(tp, min(cwnd, tp->snd_cwnd_clamp));
bound:
	cwnd = tcp_snd_cwnd(tp);
	if (b->state == BBR2_PROBE_RTT)
		cwnd = min(cwnd, bbr2_probe_rtt_cwnd(bbr2_bw(b), b->min_rtt_us,
						     pct_gain(P(probe_rtt_cwnd_gain_pct))));
	cwnd = min(cwnd, bbr2_cwnd_cap(b->state, b->inflight_hi, b->inflight_lo,
				       P(headroom_pct)));
	tcp_snd_cwnd_set(tp, cwnd);
}

/* BBRUpdateOnACK(): BBRUpdateModelAndState(), then BBRUpdateControlParameters(). */
static void bbr2_main(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr2 *b = inet_csk_ca(sk);
	u32 sample_bw = 0;
	bool probe_rtt_expired;

	if (rs->delivered > 0 && rs->interval_us > 0)
		sample_bw = (u32)min_t(u64, div_u64((u64)rs->delivered * BW_UNIT, rs->interval_us),
				       BBR2_INF - 1);

	bbr2_update_latest_delivery_signals(sk, rs, sample_bw);
	bbr2_update_round_and_max_bw(sk, rs, sample_bw);
	bbr2p_on_ack(sk, rs, sample_bw);
	bbr2_update_congestion_signals(sk, rs);
	bbr2_update_ack_aggregation(sk, rs);
	if (BBR2_V2A)		/* v2alpha checks the loss exit first */
		bbr2_check_startup_high_loss(sk, rs);
	bbr2_check_full_bw(sk, rs, sample_bw);
	if (!BBR2_V2A)
		bbr2_check_startup_high_loss(sk, rs);
	bbr2_check_startup_and_drain(sk);
	bbr2_update_probe_bw_cycle_phase(sk, rs, sample_bw);
	probe_rtt_expired = bbr2_update_min_rtt(sk, rs);
	bbr2_check_probe_rtt(sk, rs, probe_rtt_expired);
	bbr2p_update_rtt(sk, rs);
	bbr2_advance_latest_delivery_signals(sk, rs, sample_bw);
	if (b->loss_round_start) {
		b->loss_in_round = 0;
		b->loss_events_in_round = 0;
	}

	bbr2_set_pacing_rate(sk, bbr2_bw(b), b->pacing_gain);
	bbr2_set_cwnd(sk, rs);
}

#ifdef BBR2_PLUS
/* BBRv2+'s state: allocated per connection, in delay mode, no RTT yet. */
static void bbr2p_init(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct bbr2p *p = kzalloc(sizeof(*p), GFP_NOWAIT | __GFP_NOWARN);
	u32 id, i;

	b->plus_id = 0;
	if (!p)
		goto failed;	/* no memory: run as plain BBRv2 */
	p->delay_mode = 1;
	p->srtt_cur = p->srtt_last = p->min_cur = p->min_last = BBR2_INF;
	p->min_before_probe = p->cruise_min = p->prev_cruise_min = p->ref_rtt = BBR2_INF;
	for (i = 0; i < BBR2P_RTT_WIN; i++)
		p->round_min[i] = BBR2_INF;
	minmax_reset(&p->jitter, 0, 0);
	if (!xa_alloc_bh(&bbr2p_states, &id, p, XA_LIMIT(1, 0xFFFF),
			 GFP_NOWAIT | __GFP_NOWARN)) {
		b->plus_id = id;
		return;
	}
	kfree(p);
failed:
	atomic_inc(&bbr2p_alloc_failures);
}

static void bbr2_release(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct bbr2p *p;

	if (!b->plus_id)
		return;
	p = xa_erase_bh(&bbr2p_states, b->plus_id);
	b->plus_id = 0;
	if (p)
		kfree_rcu(p, rcu);
}
#endif

/* BBROnInit(). */
static void bbr2_init(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	memset(b, 0, sizeof(*b));
	b->prior_cwnd = tcp_snd_cwnd(tp);
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	b->min_rtt_us = tcp_min_rtt(tp);
	b->min_rtt_stamp = tcp_jiffies32;
	b->probe_rtt_min_us = b->min_rtt_us;
	b->probe_rtt_min_stamp = tcp_jiffies32;
	b->next_rtt_delivered = tp->delivered;
	b->loss_round_delivered = tp->delivered;
	b->prev_ca_state = TCP_CA_Open;
	b->inflight_hi = BBR2_INF;
	bbr2_reset_lower_bounds(b);
	b->probe_up_cnt = BBR2_INF;
	b->ack_epoch_stamp = (u32)tp->tcp_mstamp;
	b->cycle_stamp = (u32)tp->tcp_mstamp;
	bbr2_enter_startup(sk);
	bbr2_init_pacing_rate(sk);
	cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
#ifdef BBR2_PLUS
	bbr2p_init(sk);
#endif
}

/* BBRHandleRestartFromIdle(). */
static void bbr2_cwnd_event(struct sock *sk, enum tcp_ca_event event)
{
	struct bbr2 *b = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (event == CA_EVENT_TX_START && tp->app_limited) {
		b->idle_restart = 1;
		b->ack_epoch_stamp = (u32)tp->tcp_mstamp;
		b->ack_epoch_acked = 0;
		if (bbr2_in_probe_bw(b))
			bbr2_set_pacing_rate(sk, bbr2_bw(b), BBR_UNIT);
		else if (b->state == BBR2_PROBE_RTT)
			bbr2_check_probe_rtt_done(sk);
	}
}

static u32 bbr2_sndbuf_expand(struct sock *sk)
{
	return 3;
}

/* A spurious loss recovery was undone: forget the full-bandwidth count and
 * the lower bounds it may have cut (Google's code restores their previous
 * values; there is no room to keep them here).
 */
static u32 bbr2_undo_cwnd(struct sock *sk)
{
	struct bbr2 *b = inet_csk_ca(sk);

	bbr2_reset_full_bw(b);
	bbr2_reset_lower_bounds(b);
	return tcp_snd_cwnd(tcp_sk(sk));
}

static u32 bbr2_ssthresh(struct sock *sk)
{
	bbr2_save_cwnd(sk);
	return tcp_sk(sk)->snd_ssthresh;
}

/* What samplers see (kernel/variants/README.md): struct tcp_bbr_info with
 * bbr_bw_lo = the model's bandwidth BBR.bw in bytes/s (at most 2^32 - 8)
 * with its low 3 bits replaced by enum bbr2_state, bbr_bw_hi = inflight_hi
 * in packets (0xFFFFFFFF: none yet), bbr_min_rtt, and the gains.
 */
static size_t bbr2_get_info(struct sock *sk, u32 ext, int *attr, union tcp_cc_info *info)
{
	if (ext & (1 << (INET_DIAG_BBRINFO - 1)) || ext & (1 << (INET_DIAG_VEGASINFO - 1))) {
		struct tcp_sock *tp = tcp_sk(sk);
		struct bbr2 *b = inet_csk_ca(sk);
		u64 bw = (u64)bbr2_bw(b) * tp->mss_cache * USEC_PER_SEC >> BW_SCALE;

		bw = min_t(u64, bw, 0xFFFFFFF8ULL);
		memset(&info->bbr, 0, sizeof(info->bbr));
		info->bbr.bbr_bw_lo = ((u32)bw & ~7U) | b->state;
		info->bbr.bbr_bw_hi = b->inflight_hi;
		info->bbr.bbr_min_rtt = b->min_rtt_us;
		info->bbr.bbr_pacing_gain = b->pacing_gain;
		info->bbr.bbr_cwnd_gain = b->cwnd_gain;
		*attr = INET_DIAG_BBRINFO;
		return sizeof(info->bbr);
	}
	return 0;
}

static void bbr2_set_state(struct sock *sk, u8 new_state)
{
	struct bbr2 *b = inet_csk_ca(sk);

	if (new_state == TCP_CA_Loss) {
		/* An RTO: as Linux's BBR, count it as the end of a round and
		 * forget the full-bandwidth count.
		 */
		b->prev_ca_state = TCP_CA_Loss;
		b->full_bw = 0;
		b->round_start = 1;
		/* v2alpha: outside probing, inflight_lo starts from the cwnd
		 * before the RTO (saved by ssthresh()), not the one after it
		 */
		if (BBR2_V2A && !bbr2_is_probing_bw(b->state) && b->inflight_lo == BBR2_INF)
			b->inflight_lo = b->prior_cwnd;
	}
}

static struct tcp_congestion_ops bbr2_cong_ops __read_mostly = {
	.flags		= TCP_CONG_NON_RESTRICTED,
	.name		= BBR2_NAME,
	.owner		= THIS_MODULE,
	.init		= bbr2_init,
	.cong_control	= bbr2_main,
	.skb_marked_lost = bbr2_skb_marked_lost,
	.sndbuf_expand	= bbr2_sndbuf_expand,
	.undo_cwnd	= bbr2_undo_cwnd,
	.cwnd_event	= bbr2_cwnd_event,
	.ssthresh	= bbr2_ssthresh,
	.min_tso_segs	= bbr2_min_tso_segs,
	.get_info	= bbr2_get_info,
	.set_state	= bbr2_set_state,
#ifdef BBR2_PLUS
	.release	= bbr2_release,
#endif
};

static int __init bbr2_register(void)
{
	BUILD_BUG_ON(sizeof(struct bbr2) > ICSK_CA_PRIV_SIZE);
	return tcp_register_congestion_control(&bbr2_cong_ops);
}

static void __exit bbr2_unregister(void)
{
	tcp_unregister_congestion_control(&bbr2_cong_ops);
}

module_init(bbr2_register);
module_exit(bbr2_unregister);

MODULE_LICENSE("Dual BSD/GPL");
