// SPDX-License-Identifier: GPL-2.0
/*
 * lostprobe: a test-only congestion control that checks the testbed kernel's
 * skb_marked_lost operation (kernel/patches/20-tcp-skb-marked-lost.patch)
 * from inside the kernel. Built and loaded only by
 * tests/kernel/test_skb_marked_lost_uml.py; not a variant, not in the registry.
 *
 * The patch's contract: the operation is called once for each packet the
 * transport marks lost, right after tp->lost has counted it. So at every call
 * the growth of tp->lost since the socket's init equals the sum of the pcounts
 * of the skbs of its calls since then, this call's included: a call before
 * the count leaves it one skb short at every call, a second call for one
 * marking or a marking that calls nothing makes them differ from then on.
 * Each call compares the two and counts a mismatch when they differ.
 *
 * Read-only module parameters (the guest records them in raw/modules.json):
 * calls, lost_packets (sum of the skbs' pcounts), mismatches.
 * Reno does the congestion control itself.
 */
#include <linux/module.h>
#include <net/tcp.h>

struct lostprobe {
	u32 base;	/* tp->lost at init */
	u32 pcounts;	/* the pcounts of the calls since init */
};

static unsigned int calls, lost_packets, mismatches;
module_param(calls, uint, 0444);
MODULE_PARM_DESC(calls, "skb_marked_lost calls");
module_param(lost_packets, uint, 0444);
MODULE_PARM_DESC(lost_packets, "sum of tcp_skb_pcount() over the calls");
module_param(mismatches, uint, 0444);
MODULE_PARM_DESC(mismatches, "calls at which tp->lost had not grown by the calls' pcounts");

static void lostprobe_init(struct sock *sk)
{
	struct lostprobe *ca = inet_csk_ca(sk);

	ca->base = tcp_sk(sk)->lost;
	ca->pcounts = 0;
}

static void lostprobe_skb_marked_lost(struct sock *sk, const struct sk_buff *skb)
{
	struct lostprobe *ca = inet_csk_ca(sk);

	calls++;
	lost_packets += tcp_skb_pcount(skb);
	ca->pcounts += tcp_skb_pcount(skb);
	/* Before init (a SYN marked lost) the private area is zero, as tp->lost was. */
	if (tcp_sk(sk)->lost - ca->base != ca->pcounts)
		mismatches++;
}

static struct tcp_congestion_ops lostprobe __read_mostly = {
	.init		= lostprobe_init,
	.ssthresh	= tcp_reno_ssthresh,
	.cong_avoid	= tcp_reno_cong_avoid,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.skb_marked_lost = lostprobe_skb_marked_lost,
	.owner		= THIS_MODULE,
	.name		= "lostprobe",
};

static int __init lostprobe_register(void)
{
	return tcp_register_congestion_control(&lostprobe);
}

static void __exit lostprobe_unregister(void)
{
	tcp_unregister_congestion_control(&lostprobe);
}

module_init(lostprobe_register);
module_exit(lostprobe_unregister);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("test of the skb_marked_lost operation (test-only)");
