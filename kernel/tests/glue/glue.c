/* Host harness for the BBR variants' kernel glue: the code in a patched
 * net/ipv4/tcp_bbr.c that reads the socket (struct tcp_sock, struct sock) and
 * the ACK's rate sample and feeds the variant's *_math.h. The patched file
 * itself is compiled, unchanged, against kapi.h's stand-ins for the kernel
 * API, into a shared library that tests/kernel/test_variant_glue.py drives
 * through ctypes: it builds a socket state, calls the congestion control's
 * own entry points (tcp_congestion_ops: init, cong_control, set_state,
 * get_info) and reads what the module decided.
 *
 *   gcc -shared -fPIC -DGLUE_VARIANT_<name> -I kernel/tests/glue/include \
 *       -I KINC -I WORK -o libglue.so kernel/tests/glue/glue.c LIB/win_minmax.c
 *
 * WORK holds the patched tcp_bbr.c as glue_variant.c, the variant's headers
 * and its <name>_params.h; KINC a copy of the kernel's include/linux/
 * win_minmax.h (under linux/); LIB the kernel's lib/win_minmax.c.
 *
 * bbr2, bbr3, bbr2_v2alpha and bbr2plus replace tcp_bbr.c altogether (bbr2_main.h): their ops are
 * bbr2_cong_ops, their state struct bbr2 (GLUE_BBR2 below), and they read the
 * rate-sample fields of the testbed's core patch (kapi.h).
 */
#include "kapi.h"
#include "glue_variant.c"

#if defined(GLUE_VARIANT_bbr2) || defined(GLUE_VARIANT_bbr3) || defined(GLUE_VARIANT_bbr2plus) || \
    defined(GLUE_VARIANT_bbr2_v2alpha)
#define GLUE_BBR2 1
#define GLUE_OPS bbr2_cong_ops
#else
#define GLUE_OPS tcp_bbr_cong_ops
#endif

unsigned long jiffies;
u32 glue_random;
int glue_alloc_fail;

/* --- module parameters, registered by module_param_cb (kapi.h) ----------- */

#define GLUE_MAX_PARAMS 16
static struct kernel_param glue_params[GLUE_MAX_PARAMS];
static int glue_nparams;

void glue_param_register(const char *name, const struct kernel_param_ops *ops, void *arg)
{
	if (glue_nparams < GLUE_MAX_PARAMS)
		glue_params[glue_nparams++] = (struct kernel_param){ name, ops, arg };
}

static const struct kernel_param *glue_param(const char *name)
{
	for (int i = 0; i < glue_nparams; i++)
		if (!strcmp(glue_params[i].name, name))
			return &glue_params[i];
	return NULL;
}

/* Set a parameter as a write to /sys/module/<m>/parameters/<name> would:
 * 0, the module's own error (-EINVAL for a value out of range), or -2 if the
 * module has no such parameter. */
int glue_param_set(const char *name, const char *val)
{
	const struct kernel_param *kp = glue_param(name);

	return kp ? kp->ops->set(val, kp) : -2;
}

/* The parameter's value as the module prints it, or -1 if there is none. */
long long glue_param_get(const char *name)
{
	const struct kernel_param *kp = glue_param(name);
	char buf[64];

	if (!kp || kp->ops->get(buf, kp) < 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/* --- sockets and rate samples -------------------------------------------- */

const char *glue_cc_name(void) { return GLUE_OPS.name; }

/* A connected socket with BBR's view of a fresh connection (cwnd 10, no
 * pacing limit), before the congestion control's init. */
struct sock *glue_sock_new(void)
{
	struct tcp_sock *tp = calloc(1, sizeof(*tp));

	tp->mss_cache = 1448;
	tp->snd_cwnd = TCP_INIT_CWND;
	tp->snd_cwnd_clamp = ~0U;
	tp->inet_conn.icsk_inet.sk.sk_max_pacing_rate = ~0UL;
	tp->inet_conn.icsk_inet.sk.sk_pacing_shift = 10;
	minmax_reset(&tp->rtt_min, 0, ~0U);
	return (struct sock *)tp;
}

void glue_sock_free(struct sock *sk)
{
	struct sk_buff *skb = sk->tcp_rtx_queue.newest, *prev;

	if (GLUE_OPS.release)
		GLUE_OPS.release(sk);
	for (; skb; skb = prev) {
		prev = skb->prev;
		free(skb);
	}
	free(sk);
}

struct rate_sample *glue_rs_new(void) { return calloc(1, sizeof(struct rate_sample)); }
void glue_rs_free(struct rate_sample *rs) { free(rs); }

/* Queue a segment of `segs` packets departing at `mstamp_ns` as the newest
 * of the retransmit queue. */
void glue_rtx_push(struct sock *sk, u64 mstamp_ns, u32 segs)
{
	struct sk_buff *skb = calloc(1, sizeof(*skb));

	skb->skb_mstamp_ns = mstamp_ns;
	skb->gso_segs = segs;
	skb->prev = sk->tcp_rtx_queue.newest;
	sk->tcp_rtx_queue.newest = skb;
}

/* --- the congestion control's entry points (tcp_congestion_ops) ---------- */

void glue_init(struct sock *sk) { GLUE_OPS.init(sk); }

void glue_main(struct sock *sk, const struct rate_sample *rs) { GLUE_OPS.cong_control(sk, rs); }

/* tcp_mark_skb_lost() with the testbed kernel's hook
 * (kernel/patches/20-tcp-skb-marked-lost.patch): tp->lost counts a lost skb
 * of `segs` packets sent with the given record, then the module hears of it.
 * Returns 0, or -1 if the module has no such operation. */
int glue_mark_lost(struct sock *sk, u32 segs, u32 tx_in_flight, u32 tx_lost,
		   int app_limited, int has_rate_info)
{
	struct sk_buff skb = { .gso_segs = segs };

	skb.cb.tx.in_flight = tx_in_flight;
	skb.cb.tx.lost = tx_lost;
	skb.cb.tx.is_app_limited = !!app_limited;
	skb.cb.tx.has_rate_info = !!has_rate_info;
	tcp_sk(sk)->lost += segs;
	if (!GLUE_OPS.skb_marked_lost)
		return -1;
	GLUE_OPS.skb_marked_lost(sk, &skb);
	return 0;
}

/* tcp_set_ca_state(): the module hears of the new state, then it is set. */
void glue_set_ca_state(struct sock *sk, u8 state)
{
	if (GLUE_OPS.set_state)
		GLUE_OPS.set_state(sk, state);
	inet_csk(sk)->icsk_ca_state = state;
}

/* ssthresh (as tcp_enter_recovery and tcp_enter_loss call it), cwnd_event
 * (CA_EVENT_TX_START: tcp_event_data_sent with nothing in flight) and
 * undo_cwnd (tcp_undo_cwnd_reduction: the value becomes cwnd). */
u32 glue_ssthresh(struct sock *sk) { return GLUE_OPS.ssthresh(sk); }

void glue_cwnd_event(struct sock *sk, int event)
{
	if (GLUE_OPS.cwnd_event)
		GLUE_OPS.cwnd_event(sk, event);
}

u32 glue_undo_cwnd(struct sock *sk) { return GLUE_OPS.undo_cwnd(sk); }

/* INET_DIAG_BBRINFO as ss sees it: out = bw_lo, bw_hi, min_rtt, pacing
 * gain, cwnd gain. Returns the attribute (INET_DIAG_BBRINFO) or -1. */
int glue_get_info(struct sock *sk, u32 *out)
{
	union tcp_cc_info info;
	int attr = -1;

	if (!GLUE_OPS.get_info(sk, 1 << (INET_DIAG_VEGASINFO - 1), &attr, &info))
		return -1;
	out[0] = info.bbr.bbr_bw_lo;
	out[1] = info.bbr.bbr_bw_hi;
	out[2] = info.bbr.bbr_min_rtt;
	out[3] = info.bbr.bbr_pacing_gain;
	out[4] = info.bbr.bbr_cwnd_gain;
	return attr;
}

/* --- fields by name ------------------------------------------------------ */

enum { GLUE_SOCK, GLUE_TCP, GLUE_RS, GLUE_BBR, GLUE_FCA };

#define FIELD(p, f)						\
	if (!strcmp(name, #f)) {				\
		if (set)					\
			(p)->f = *v;				\
		*v = (p)->f;					\
		return 0;					\
	}

/* Read (set = 0) or write (set = 1) the field `name` of the socket's struct
 * sock, struct tcp_sock, struct bbr (bbr2/bbr3/bbr2plus: struct bbr2) or struct fca (bbr2plus: struct
 * bbr2p) (obj: the socket), or of
 * a struct rate_sample (obj: the sample), through *v. Returns 0, or -1 when
 * there is no such field (or no struct fca). Bit fields included. */
int glue_field(void *obj, int kind, const char *name, int set, s64 *v)
{
	struct sock *sk = obj;
	struct tcp_sock *tp = obj;
	struct rate_sample *rs = obj;
#ifdef GLUE_BBR2
	struct bbr2 *b2 = kind == GLUE_BBR ? inet_csk_ca(sk) : NULL;
#else
	struct bbr *bbr = kind == GLUE_BBR ? inet_csk_ca(sk) : NULL;
#endif

	switch (kind) {
	case GLUE_SOCK:
		FIELD(sk, sk_pacing_rate) FIELD(sk, sk_max_pacing_rate)
		FIELD(sk, sk_pacing_status)
		FIELD(inet_csk(sk), icsk_ca_state)
		break;
	case GLUE_TCP:
		FIELD(tp, srtt_us) FIELD(tp, mdev_us) FIELD(tp, mss_cache) FIELD(tp, snd_cwnd)
		FIELD(tp, snd_ssthresh) FIELD(tp, packets_out) FIELD(tp, retrans_out)
		FIELD(tp, sacked_out) FIELD(tp, lost_out) FIELD(tp, delivered)
		FIELD(tp, lost) FIELD(tp, app_limited) FIELD(tp, tcp_mstamp)
		FIELD(tp, tcp_clock_cache) FIELD(tp, tcp_wstamp_ns)
		FIELD(tp, delivered_mstamp)
		FIELD(tp, is_cwnd_limited) FIELD(tp, max_packets_out)
		break;
	case GLUE_RS:
		FIELD(rs, prior_mstamp) FIELD(rs, prior_delivered) FIELD(rs, delivered)
		FIELD(rs, interval_us) FIELD(rs, rtt_us) FIELD(rs, losses)
		FIELD(rs, acked_sacked) FIELD(rs, prior_in_flight)
		FIELD(rs, is_app_limited) FIELD(rs, is_retrans) FIELD(rs, is_ack_delayed)
		FIELD(rs, prior_lost) FIELD(rs, tx_in_flight) FIELD(rs, lost)
		break;
	case GLUE_BBR:
#ifdef GLUE_BBR2
		FIELD(b2, min_rtt_us) FIELD(b2, min_rtt_stamp) FIELD(b2, probe_rtt_min_us)
		FIELD(b2, probe_rtt_min_stamp) FIELD(b2, probe_rtt_done_stamp)
		FIELD(b2, next_rtt_delivered) FIELD(b2, loss_round_delivered)
		FIELD(b2, cycle_stamp) FIELD(b2, ack_epoch_stamp) FIELD(b2, ack_epoch_acked)
		FIELD(b2, bw_hi[0]) FIELD(b2, bw_hi[1]) FIELD(b2, bw_lo) FIELD(b2, bw_latest)
		FIELD(b2, inflight_hi) FIELD(b2, inflight_lo) FIELD(b2, inflight_latest)
		FIELD(b2, full_bw) FIELD(b2, prior_cwnd) FIELD(b2, probe_up_cnt)
		FIELD(b2, probe_up_acks) FIELD(b2, probe_wait_us)
		FIELD(b2, extra_acked[0]) FIELD(b2, extra_acked[1])
		FIELD(b2, state) FIELD(b2, prev_ca_state) FIELD(b2, round_start)
		FIELD(b2, filled_pipe) FIELD(b2, full_bw_cnt) FIELD(b2, full_bw_now)
		FIELD(b2, idle_restart) FIELD(b2, probe_rtt_round_done)
		FIELD(b2, packet_conservation) FIELD(b2, bw_probe_samples)
		FIELD(b2, loss_round_start) FIELD(b2, loss_in_round)
		FIELD(b2, loss_events_in_round) FIELD(b2, ack_phase) FIELD(b2, probe_up_rounds)
		FIELD(b2, pacing_gain) FIELD(b2, cwnd_gain) FIELD(b2, rounds_since_probe)
		FIELD(b2, drain_rounds) FIELD(b2, prev_probe_too_high)
		FIELD(b2, prev_probe_precautionary) FIELD(b2, extra_acked_win_rtts)
		FIELD(b2, extra_acked_win_idx)
#ifdef GLUE_VARIANT_bbr2plus
		FIELD(b2, plus_id)
#endif
#else
		FIELD(bbr, min_rtt_us) FIELD(bbr, min_rtt_stamp)
		FIELD(bbr, probe_rtt_done_stamp) FIELD(bbr, rtt_cnt)
		FIELD(bbr, next_rtt_delivered) FIELD(bbr, cycle_mstamp)
		FIELD(bbr, mode) FIELD(bbr, prev_ca_state) FIELD(bbr, packet_conservation)
		FIELD(bbr, round_start) FIELD(bbr, idle_restart)
		FIELD(bbr, probe_rtt_round_done) FIELD(bbr, lt_is_sampling)
		FIELD(bbr, lt_rtt_cnt) FIELD(bbr, lt_use_bw) FIELD(bbr, lt_bw)
		FIELD(bbr, pacing_gain) FIELD(bbr, cwnd_gain) FIELD(bbr, full_bw_reached)
		FIELD(bbr, full_bw_cnt) FIELD(bbr, cycle_idx) FIELD(bbr, has_seen_rtt)
		FIELD(bbr, prior_cwnd) FIELD(bbr, full_bw)
		FIELD(bbr, extra_acked[0]) FIELD(bbr, extra_acked[1])
#ifdef GLUE_VARIANT_bbq
		FIELD(bbr, bbq_queue)
#endif
#ifdef GLUE_VARIANT_bbr_e
		FIELD(bbr, e_cwnd_gain)
#endif
#ifdef GLUE_VARIANT_adaptive_bbr
		FIELD(bbr, abbr_gain)
#endif
#ifdef GLUE_VARIANT_bbr_fca
		FIELD(bbr, fca_active) FIELD(bbr, fca_id)
#endif
#endif /* GLUE_BBR2 */
		break;
#ifdef GLUE_VARIANT_bbr_fca
	case GLUE_FCA: {
		struct fca *f = fca_of(sk);

		if (!f)
			return -1;
		FIELD(f, phase_start) FIELD(f, last_loss) FIELD(f, mode_start)
		FIELD(f, b_cubic) FIELD(f, w_target) FIELD(f, bw_max) FIELD(f, p_bw)
		FIELD(f, cwnd_gain) FIELD(f, prev_mode) FIELD(f, in_recovery)
		FIELD(f, ca_started) FIELD(f, measuring_refill)
		FIELD(f, phase.n) FIELD(f, recovery.n) FIELD(f, probe_rtt.n) FIELD(f, refill.n)
		break;
	}
#endif
#ifdef GLUE_VARIANT_bbr2plus
	case GLUE_FCA: {	/* bbr2plus: its struct bbr2p */
		struct bbr2p *f = bbr2p_of(sk);

		if (!f)
			return -1;
		FIELD(f, srtt_cur) FIELD(f, srtt_last) FIELD(f, min_cur) FIELD(f, min_last)
		FIELD(f, round_min[0]) FIELD(f, round_min[1]) FIELD(f, round_min[2])
		FIELD(f, round_min[3]) FIELD(f, round_idx)
		FIELD(f, min_before_probe) FIELD(f, cruise_min) FIELD(f, prev_cruise_min)
		FIELD(f, ref_rtt) FIELD(f, rtt_cnt) FIELD(f, phase) FIELD(f, probe_wait_rounds)
		FIELD(f, rounds_since_advance) FIELD(f, cruise_count) FIELD(f, delay_mode)
		FIELD(f, drained)
		break;
	}
#endif
	}
	return -1;
}

/* The max-bandwidth filter (which = 0, struct bbr's bw, packets/us << 24,
 * time in rounds) or the connection's min-RTT filter (which = 1, tcp_sock's
 * rtt_min, us): reset to one sample (set = 1) or read its current value.
 * bbr2/bbr3 have no such max filter: which = 0 does nothing and returns 0. */
u32 glue_minmax(struct sock *sk, int which, int set, u32 t, u32 v)
{
#ifdef GLUE_BBR2
	/* bbr2's max filter is two cycle maxima (fields bw_hi[0], bw_hi[1]) */
	struct minmax *m = &tcp_sk(sk)->rtt_min;

	if (!which)
		return 0;
#else
	struct minmax *m = which ? &tcp_sk(sk)->rtt_min : &((struct bbr *)inet_csk_ca(sk))->bw;
#endif

	if (set)
		minmax_reset(m, t, v);
	return minmax_get(m);
}

/* Packets/us << BW_SCALE and BBR_UNIT, for the tests. */
const u32 glue_bw_scale = BW_SCALE, glue_bbr_unit = BBR_UNIT;
#ifdef GLUE_BBR2
/* enum bbr2_state; ProbeBW is four phases */
const u32 glue_mode_startup = BBR2_STARTUP, glue_mode_drain = BBR2_DRAIN,
	  glue_mode_probe_bw_down = BBR2_PROBE_BW_DOWN,
	  glue_mode_probe_bw_cruise = BBR2_PROBE_BW_CRUISE,
	  glue_mode_probe_bw_refill = BBR2_PROBE_BW_REFILL,
	  glue_mode_probe_bw_up = BBR2_PROBE_BW_UP, glue_mode_probe_rtt = BBR2_PROBE_RTT;
#else
const u32 glue_mode_startup = BBR_STARTUP, glue_mode_drain = BBR_DRAIN,
	  glue_mode_probe_bw = BBR_PROBE_BW, glue_mode_probe_rtt = BBR_PROBE_RTT;
#endif
