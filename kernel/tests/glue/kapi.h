/* Just enough of the Linux 6.1 kernel API to compile a patched
 * net/ipv4/tcp_bbr.c on the host (see glue.c). The socket structures keep
 * the kernel's field names and types for every field tcp_bbr.c and the
 * variant patches read or write, and nothing else; the helpers behave as the
 * kernel's do for the values the glue tests use (wrapping sequence
 * comparisons, do_div, tcp_packets_in_flight, the retransmit queue walked
 * from its newest segment). The math helpers come from kshim.h, shared with
 * the math harness. struct rate_sample ends with the fields the testbed's core
 * patch appends (bbr2/bbr3 read them; the other variants see them as 0).
 * Every kernel header tcp_bbr.c and the patches include is
 * a one-line file under include/ that includes this one; the kernel's own
 * include/linux/win_minmax.h and lib/win_minmax.c are compiled unchanged.
 */
#ifndef GLUE_KAPI_H
#define GLUE_KAPI_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kshim.h"

/* tcp_bbr.c defines these itself, with the same values (the math harness
 * test checks kshim.h's against the kernel source). */
#undef BW_SCALE
#undef BW_UNIT
#undef BBR_SCALE
#undef BBR_UNIT
#undef min
#undef max
#undef min_t
#undef max_t
#undef clamp

typedef uint8_t u8;
typedef uint16_t u16;
typedef int8_t s8;
typedef int16_t s16;
typedef u32 __u32;
typedef u64 __u64;
typedef u8 __u8;

/* include/linux/minmax.h: each argument evaluated once. */
#define min(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b)	({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a > _b ? _a : _b; })
#define min_t(t, a, b)	({ t _a = (a); t _b = (b); _a < _b ? _a : _b; })
#define max_t(t, a, b)	({ t _a = (a); t _b = (b); _a > _b ? _a : _b; })
#define clamp(v, lo, hi)	min(max(v, lo), hi)

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define READ_ONCE(x)	(*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
/* include/linux/math.h: the argument converted to its signed type */
#define abs(x)	__builtin_choose_expr(sizeof(x) == sizeof(long long),	\
		({ long long _x = (x); _x < 0 ? -_x : _x; }),		\
		({ int _x = (x); _x < 0 ? -_x : _x; }))
#define BUILD_BUG_ON(c)	_Static_assert(!(c), #c)
#ifndef static_assert
#define static_assert(c, msg)	_Static_assert(c, msg)
#endif
static inline int glue_warn(int c) { return c; }
#define WARN_ONCE(c, ...)	glue_warn(!!(c))
#define __init
#define __exit
#define __read_mostly
#define KBUILD_MODNAME	"glue"
#define pr_err(...)	fprintf(stderr, __VA_ARGS__)
#define sizeof_field(t, m)	sizeof(((t *)0)->m)

#define USEC_PER_MSEC	1000L
#define NSEC_PER_USEC	1000L
#define MSEC_PER_SEC	1000L
#define HZ		1000
#define EINVAL		22
#define EPERM		1

/* include/asm-generic/div64.h: divides n in place, returns the remainder. */
#define do_div(n, base) ({ u32 _b = (base); u32 _r = (u32)((n) % _b); (n) /= _b; _r; })
static inline s64 div64_long(s64 a, long b) { return a / b; }

static inline unsigned long cmpxchg_ul(unsigned long *p, unsigned long old, unsigned long new)
{
	unsigned long cur = *p;

	if (cur == old)
		*p = new;
	return cur;
}
#define cmpxchg(p, o, n)	cmpxchg_ul((unsigned long *)(p), (o), (n))

/* time: the tests set jiffies (HZ = 1000, so one jiffy is 1 ms) */
extern unsigned long jiffies;
#define tcp_jiffies32	((u32)jiffies)
static inline unsigned long msecs_to_jiffies(unsigned int m) { return m * HZ / 1000; }
/* include/net/tcp.h: sequence-space (wrapping) comparisons */
static inline bool before(u32 seq1, u32 seq2) { return (s32)(seq1 - seq2) < 0; }
#define after(seq2, seq1)	before(seq1, seq2)

/* randomness: the tests pick the value (glue.c) */
extern u32 glue_random;
static inline u32 prandom_u32_max(u32 ceil) { return glue_random % ceil; }
static inline u32 get_random_u32_below(u32 ceil) { return glue_random % ceil; }

/* module and parameter plumbing */
struct module;
#define THIS_MODULE	((struct module *)0)
#define MODULE_AUTHOR(s)
#define MODULE_LICENSE(s)
#define MODULE_DESCRIPTION(s)
#define MODULE_PARM_DESC(n, d)
#define EXPORT_SYMBOL(s)
#define module_init(f)	int (*glue_module_init)(void) = f;
#define module_exit(f)	void (*glue_module_exit)(void) = f;

struct kernel_param;
struct kernel_param_ops {
	int (*set)(const char *val, const struct kernel_param *kp);
	int (*get)(char *buffer, const struct kernel_param *kp);
};
struct kernel_param {
	const char *name;
	const struct kernel_param_ops *ops;
	void *arg;
};
void glue_param_register(const char *name, const struct kernel_param_ops *ops, void *arg);
/* Each parameter registers itself (name, ops, value) for glue_param_set(). */
#define module_param_cb(name, ops, arg, perm)					\
	static void __attribute__((constructor)) glue_register_##name(void)	\
	{ glue_param_register(#name, ops, arg); }
static inline int kstrtouint(const char *s, unsigned int base, unsigned int *res)
{
	char *end;
	unsigned long v = strtoul(s, &end, base);

	if (end == s || (*end && *end != '\n') || v > 0xFFFFFFFFUL)
		return -EINVAL;
	*res = v;
	return 0;
}
#define sysfs_emit(buf, ...)	sprintf(buf, __VA_ARGS__)

typedef struct { int counter; } atomic_t;
#define ATOMIC_INIT(i)	{ (i) }
static inline int atomic_read(const atomic_t *a) { return a->counter; }
static inline void atomic_inc(atomic_t *a) { a->counter++; }

/* BTF: nothing to register on the host */
#define BTF_SET8_START(name)	static const int name##_start = 0;
#define BTF_SET8_END(name)	static const int name = 0;
#define BTF_ID_FLAGS(...)
#define BPF_PROG_TYPE_STRUCT_OPS	0
struct btf_kfunc_id_set {
	struct module *owner;
	const int *set;
};
static inline int register_btf_kfunc_id_set(int t, const struct btf_kfunc_id_set *s) { return 0; }

/* memory: kzalloc may be made to fail (glue_alloc_fail) */
#define GFP_NOWAIT	0
#define __GFP_NOWARN	0
extern int glue_alloc_fail;
static inline void *kzalloc(size_t n, int gfp) { return glue_alloc_fail ? NULL : calloc(1, n); }
static inline void kfree(void *p) { free(p); }
struct rcu_head { void *next; };
#define kfree_rcu(p, field)	kfree(p)

/* include/linux/xarray.h: ids 1..GLUE_XA_SIZE-1 (XA_FLAGS_ALLOC1) */
#define GLUE_XA_SIZE	64
struct xarray { void *slot[GLUE_XA_SIZE]; };
#define XA_FLAGS_ALLOC1	0
#define XA_FLAGS_LOCK_BH	0
#define DEFINE_XARRAY_FLAGS(name, flags)	struct xarray name
struct xa_limit { u32 max, min; };
#define xa_limit_32b	((struct xa_limit){ .max = U32_MAX, .min = 0 })
#define XA_LIMIT(lo, hi)	((struct xa_limit){ .max = (hi), .min = (lo) })
static inline int xa_alloc_bh(struct xarray *xa, u32 *id, void *entry, struct xa_limit l, int gfp)
{
	for (u32 i = 1; i < GLUE_XA_SIZE; i++)
		if (!xa->slot[i]) {
			xa->slot[i] = entry;
			*id = i;
			return 0;
		}
	return -1;
}
static inline void *xa_load(struct xarray *xa, u32 id) { return id < GLUE_XA_SIZE ? xa->slot[id] : NULL; }
static inline void *xa_erase_bh(struct xarray *xa, u32 id)
{
	void *p = xa_load(xa, id);

	if (p)
		xa->slot[id] = NULL;
	return p;
}

/* include/linux/win_minmax.h is the kernel's own (included by tcp_bbr.c) */
#include <linux/win_minmax.h>

/* the retransmit queue: a list from the newest segment back (rbtree order) */
/* what the testbed kernel's tcp_rate_skb_sent() records in each skb
 * (kernel/patches/10-tcp-rate-tx-in-flight.patch; only the fields read here) */
struct tcp_skb_cb {
	struct {
		u8 is_app_limited:1, has_rate_info:1;
		u32 in_flight;		/* packets in flight upon tx, the skb included */
		u32 lost;		/* tp->lost upon tx */
	} tx;
};
struct sk_buff {
	u64 skb_mstamp_ns;	/* departure time (EDT) */
	u32 gso_segs;		/* tcp_skb_pcount() */
	struct sk_buff *prev;	/* next older segment */
	struct tcp_skb_cb cb;
};
#define TCP_SKB_CB(skb) (&(skb)->cb)
struct rb_root { struct sk_buff *newest; };
static inline struct sk_buff *skb_rb_last(struct rb_root *q) { return q->newest; }
static inline struct sk_buff *skb_rb_prev(struct sk_buff *skb) { return skb->prev; }
static inline int tcp_skb_pcount(const struct sk_buff *skb) { return skb->gso_segs; }

/* sockets */
enum { SK_PACING_NONE, SK_PACING_NEEDED, SK_PACING_FQ };
struct sock {
	unsigned long sk_pacing_rate;	/* bytes per second */
	unsigned long sk_max_pacing_rate;
	u8 sk_pacing_shift;
	u32 sk_pacing_status;		/* enum sk_pacing */
	struct rb_root tcp_rtx_queue;
};
struct inet_sock { struct sock sk; };
#define ICSK_CA_PRIV_SIZE	sizeof_field(struct inet_connection_sock, icsk_ca_priv)
struct inet_connection_sock {
	struct inet_sock icsk_inet;
	u8 icsk_ca_state:5, icsk_ca_initialized:1, icsk_ca_setsockopt:1, icsk_ca_dst_locked:1;
	u64 icsk_ca_priv[104 / sizeof(u64)];
};
struct tcp_sock {
	struct inet_connection_sock inet_conn;
	u32 srtt_us;		/* smoothed RTT << 3, us */
	u32 mdev_us;		/* RTT mean deviation << 2, us */
	u32 mss_cache;
	u32 snd_cwnd;
	u32 snd_cwnd_clamp;
	u32 snd_ssthresh;
	u32 packets_out, retrans_out, sacked_out, lost_out;
	u8 is_cwnd_limited:1;	/* forward progress limited by snd_cwnd? */
	u32 max_packets_out;	/* max packets_out in last window */
	u32 delivered;
	u32 lost;
	u32 app_limited;
	u64 tcp_mstamp;		/* us */
	u64 tcp_clock_cache;	/* ns */
	u64 tcp_wstamp_ns;
	u64 delivered_mstamp;	/* us */
	struct minmax rtt_min;
};
static inline struct tcp_sock *tcp_sk(const struct sock *sk) { return (struct tcp_sock *)sk; }
static inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}
static inline void *inet_csk_ca(const struct sock *sk) { return (void *)inet_csk(sk)->icsk_ca_priv; }

/* include/net/tcp.h */
#define TCP_INIT_CWND		10
#define TCP_INFINITE_SSTHRESH	0x7fffffff
#define MAX_TCP_HEADER		320
#define GSO_LEGACY_MAX_SIZE	65536u
#define TCP_CONG_NON_RESTRICTED	0x1
enum tcp_ca_state { TCP_CA_Open, TCP_CA_Disorder, TCP_CA_CWR, TCP_CA_Recovery, TCP_CA_Loss };
enum tcp_ca_event { CA_EVENT_TX_START, CA_EVENT_CWND_RESTART, CA_EVENT_COMPLETE_CWR,
		    CA_EVENT_LOSS, CA_EVENT_ECN_NO_CE, CA_EVENT_ECN_IS_CE };
struct rate_sample {
	u64 prior_mstamp;
	u32 prior_delivered;
	u32 prior_delivered_ce;
	s32 delivered;
	s32 delivered_ce;
	long interval_us;
	u32 snd_interval_us;
	u32 rcv_interval_us;
	long rtt_us;
	int losses;
	u32 acked_sacked;
	u32 prior_in_flight;
	u32 last_end_seq;
	bool is_app_limited;
	bool is_retrans;
	bool is_ack_delayed;
	/* appended by the testbed's core patch
	 * kernel/patches/10-tcp-rate-tx-in-flight.patch (read by bbr2/bbr3) */
	u32 prior_lost;		/* tp->lost upon tx of the sampled skb */
	u32 tx_in_flight;	/* packets in flight upon tx of that skb */
	u32 lost;		/* packets lost since tx of that skb */
};
static inline u32 tcp_snd_cwnd(const struct tcp_sock *tp) { return tp->snd_cwnd; }
static inline void tcp_snd_cwnd_set(struct tcp_sock *tp, u32 val) { tp->snd_cwnd = val; }
static inline u32 tcp_min_rtt(const struct tcp_sock *tp) { return minmax_get(&tp->rtt_min); }
static inline u32 tcp_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}
static inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tcp_snd_cwnd(tp) < tp->snd_ssthresh;
}
/* as 6.1's: cwnd-limited, or in slow start with cwnd < 2 max_packets_out */
static inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tp->is_cwnd_limited)
		return true;
	if (tcp_in_slow_start(tp))
		return tcp_snd_cwnd(tp) < 2 * tp->max_packets_out;
	return false;
}
static inline u32 tcp_stamp_us_delta(u64 t1, u64 t0) { return max_t(s64, t1 - t0, 0); }

/* include/uapi/linux/inet_diag.h */
enum { INET_DIAG_NONE, INET_DIAG_MEMINFO, INET_DIAG_INFO, INET_DIAG_VEGASINFO,
       INET_DIAG_CONG, INET_DIAG_TOS, INET_DIAG_TCLASS, INET_DIAG_SKMEMINFO,
       INET_DIAG_SHUTDOWN, INET_DIAG_DCTCPINFO, INET_DIAG_PROTOCOL,
       INET_DIAG_SKV6ONLY, INET_DIAG_LOCALS, INET_DIAG_PEERS, INET_DIAG_PAD,
       INET_DIAG_MARK, INET_DIAG_BBRINFO };
struct tcp_bbr_info {
	__u32 bbr_bw_lo;
	__u32 bbr_bw_hi;
	__u32 bbr_min_rtt;
	__u32 bbr_pacing_gain;
	__u32 bbr_cwnd_gain;
};
union tcp_cc_info { struct tcp_bbr_info bbr; };

struct tcp_congestion_ops {
	u32 flags;
	const char *name;
	struct module *owner;
	void (*init)(struct sock *sk);
	void (*release)(struct sock *sk);
	void (*cong_control)(struct sock *sk, const struct rate_sample *rs);
	void (*skb_marked_lost)(struct sock *sk, const struct sk_buff *skb);
	u32 (*sndbuf_expand)(struct sock *sk);
	u32 (*undo_cwnd)(struct sock *sk);
	void (*cwnd_event)(struct sock *sk, enum tcp_ca_event ev);
	u32 (*ssthresh)(struct sock *sk);
	u32 (*min_tso_segs)(struct sock *sk);
	size_t (*get_info)(struct sock *sk, u32 ext, int *attr, union tcp_cc_info *info);
	void (*set_state)(struct sock *sk, u8 new_state);
};
static inline int tcp_register_congestion_control(struct tcp_congestion_ops *ops) { return 0; }
static inline void tcp_unregister_congestion_control(struct tcp_congestion_ops *ops) {}

#endif /* GLUE_KAPI_H */
