#!/usr/bin/env bash
# Write kernel/variants/bbr2.patch and bbr3.patch: each replaces Linux 6.1's
# tcp_bbr.c by the algorithm comment below and the shared implementation
# (bbr2_main.h, bbr2_math.h), registered under its own name with its own
# parameter defaults (<name>_params.h from mininet/bbrlab/variants.yaml).
#   kernel/variants/bbr2-mkpatch.sh [/path/to/pristine/tcp_bbr.c]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
orig=${1:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -z "$orig" ]; then
  tar -xf /usr/src/linux-source-6.1.tar.xz -C "$tmp" linux-source-6.1/net/ipv4/tcp_bbr.c
  orig=$tmp/linux-source-6.1/net/ipv4/tcp_bbr.c
fi
for v in 2 3; do
  name=bbr$v
  {
    sed -n '/^@@COMMENT@@$/,/^@@END@@$/p' "$0" | sed '1d;$d'
    printf '#include <linux/module.h>\n#include <linux/random.h>\n#include <linux/inet_diag.h>\n#include <net/tcp.h>\n\n'
    printf '#define BBR2_NAME "%s"\n\n#include "variant_param.h"\n#include "%s_params.h"\n#include "bbr2_main.h"\n\n' "$name" "$name"
    printf 'MODULE_DESCRIPTION("TCP BBR version %s, from the IETF drafts (testbed module %s)");\n' "$v" "$name"
  } > "$tmp/new.c"
  {
    echo "bbr$v: BBR version $v, written from the IETF drafts; replaces tcp_bbr.c."
    echo "The algorithm comment is the file's first hunk; the code is in bbr2_main.h"
    echo "and bbr2_math.h (shared by bbr2 and bbr3, which differ by the parameter"
    echo "defaults in mininet/bbrlab/variants.yaml). Written by kernel/variants/bbr2-mkpatch.sh."
    echo
    diff -up --label a/net/ipv4/tcp_bbr.c --label b/net/ipv4/tcp_bbr.c "$orig" "$tmp/new.c" || true
  } > "$here/$name.patch.tmp"
  mv "$here/$name.patch.tmp" "$here/$name.patch"
done
exit 0

@@COMMENT@@
/* BBR versions 2 and 3 (modules bbr2 and bbr3) for the testbed.
 *
 * Sources: BBRv2 from draft-cardwell-iccrg-bbr-congestion-control-02 (IETF
 * ICCRG, March 2022, "version 2 of the BBR algorithm"); BBRv3 from
 * draft-ietf-ccwg-bbr-06 (IETF CCWG, July 2026). Written here from the drafts' text and
 * pseudocode; Google's Linux code (github.com/google/bbr, v2alpha and v3) was
 * read to learn, not copied. Function comments name the drafts' routines.
 *
 * The algorithm. Like BBR v1, BBR builds a model of the path from each ACK's
 * delivery-rate sample and RTT: max_bw, the maximum delivery rate over the
 * last two bandwidth-probing cycles, and min_rtt, the minimum RTT over 10 s.
 * Their product is the BDP. It paces at pacing_gain * bw (1 % below) and
 * caps cwnd at cwnd_gain * BDP plus an allowance for ACK aggregation. What
 * versions 2 and 3 add is a model of the volume and rate the path tolerates,
 * learned from loss:
 *   - inflight_hi: the long-term upper bound on in-flight data. When the loss
 *     rate of a bandwidth probe exceeds BBRLossThresh = 2 % (IsInflightTooHigh:
 *     packets lost since the sampled packet was sent > 2 % of the packets in
 *     flight when it was sent), inflight_hi becomes max(in-flight when sent,
 *     0.7 * target in-flight) (BBRBeta = 0.7) and the probe ends. Without
 *     such loss, probing raises inflight_hi (1, 2, 4, ... packets per round).
 *   - bw_lo and inflight_lo: short-term lower bounds; in each round trip with
 *     loss outside probing they fall to max(latest measured, 0.7 * bound),
 *     and they are forgotten when the next probe starts.
 *   The model's bw is min(max_bw, bw_lo); cwnd is also capped by the bounds.
 *
 * States: STARTUP (pacing gain 2.77, cwnd gain 2) until bandwidth grew less
 * than 25 % in three rounds (v2: of max_bw; v3: of the delivery-rate
 * samples), or a round in recovery had a loss rate above 2 % with enough
 * loss events (v2 draft: 3 lost ranges; v3: 6); DRAIN (pacing 1 / Startup's
 * cwnd gain = 0.5) until inflight is at most one BDP (v3: or after 3 round
 * trips); PROBE_BW, a cycle of four phases:
 *   DOWN   pacing 0.9: drain the queue the last probe made, until
 *          inflight <= BDP and below inflight_hi's 15 % headroom;
 *   CRUISE pacing 1.0, cwnd capped at inflight_hi less 15 % headroom, until
 *          it is time to probe: 2-3 s of wall clock after DOWN started, or
 *          min(BDP in packets, 63) round trips (Reno coexistence), whichever
 *          comes first;
 *   REFILL pacing 1.0 for one round, lower bounds reset, to refill the pipe;
 *   UP     pacing 1.25, cwnd gain 2 (v2) / 2.25 (v3), raising inflight_hi
 *          while cwnd-limited at it, until loss above 2 % (then inflight_hi
 *          is cut), or (v2) a min_rtt has passed and inflight > 1.25 BDP, or
 *          (v3) bandwidth stopped growing while the flow was not held back
 *          by inflight_hi, or (v3, precautionary probing) inflight reached
 *          the inflight_hi of a previous probe that ended in loss; if such
 *          a cautious probe brings no excess loss, v3 probes again at once
 *          (REFILL) without cruising;
 * and PROBE_RTT, entered when min_rtt was not renewed for 5 s: cwnd is cut
 * to half the estimated BDP (BBRProbeRTTCwndGain = 0.5; BBR v1: 4 packets)
 * for 200 ms and one round trip, then PROBE_BW resumes in CRUISE.
 *
 * v2 against v3 (parameters; defaults per module in variants.yaml):
 * up_cwnd_gain_pct 200/225 (v2 draft 4.6.1 table; v3 draft and Google's
 * BBRv3 release), full_loss_cnt 3/6 (v2 draft 4.3.1.3; Google's v3 code),
 * and `version`, which selects the draft's rules: the ProbeBW_UP exit (v2
 * draft 4.3.3.6: a min_rtt elapsed and inflight > BBRInflight(max_bw, 1.25);
 * v3 draft IsTimeToGoDown(): the full-bandwidth estimator on delivery-rate
 * samples, reset while cwnd-limited at inflight_hi), Startup's plateau (v2:
 * max_bw; v3: delivery-rate samples), packet conservation in fast recovery
 * (v2 only), and v3's precautionary probing, 3-round Drain timeout and
 * 1-round extra_acked window in Startup. Both drafts pace DOWN at 0.9 and
 * Startup at 2.77 with cwnd gain 2 (Drain at its inverse, 0.5); Google's
 * v2alpha code used 0.75, 2.885 and 1 / 2.885 (down_gain_pct=75,
 * startup_pacing_gain_pct=289, startup_cwnd_gain_pct=289 reproduce them).
 *
 * Loss recovery: cwnd is saved on entering recovery and restored on leaving
 * it; v2 (draft 4.6.4.4) also takes the newly lost packets off cwnd and
 * holds packet conservation for the first round of fast recovery, v3 (every
 * v3 draft revision, and Google's v2alpha and v3 code) does neither. "Cwnd-limited" is the
 * stack's tp->is_cwnd_limited, as in Google's code.
 *
 * Needs the testbed kernel's per-packet in-flight and loss counts in the
 * rate sample (kernel/patches/10-tcp-rate-tx-in-flight.patch).
 *
 * What samplers see (INET_DIAG_BBRINFO, struct tcp_bbr_info): bbr_bw_lo is
 * the model's bw in bytes/s with its 3 low bits replaced by the state
 * (0 STARTUP, 1 DRAIN, 2 DOWN, 3 CRUISE, 4 REFILL, 5 UP, 6 PROBE_RTT);
 * bbr_bw_hi is inflight_hi in packets (0xFFFFFFFF: no bound yet);
 * bbr_min_rtt, bbr_pacing_gain and bbr_cwnd_gain are the model's.
 *
 * Known differences from the drafts and Google's code (kernel/variants/
 * README.md lists them with reasons): no per-lost-packet handling (the
 * loss-rate check runs on each ACK's rate sample; the drafts' and Google's
 * per-loss hook needs a kernel hook the testbed kernel lacks); no ECN
 * response (the testbed marks no CE); an undone recovery resets
 * bw_lo/inflight_lo to "no bound" instead of restoring their old values;
 * in-flight counts include packets still held in fq (the drafts' C.inflight;
 * Google's code corrects to the earliest departure time); the max-bw filter
 * advances at the end of each probe's feedback round (the drafts), not at
 * Google's points.
 */
@@END@@
