#!/usr/bin/env bash
# Write kernel/variants/bbr2.patch, bbr3.patch, bbr2_v2alpha.patch and bbr2plus.patch: each replaces Linux 6.1's
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
for name in bbr2 bbr3 bbr2_v2alpha bbr2plus; do
  {
    if [ "$name" = bbr2plus ]; then
      sed -n '/^@@COMMENT_PLUS@@$/,/^@@END@@$/p' "$0" | sed '1d;$d'
    fi
    if [ "$name" = bbr2plus ] || [ "$name" = bbr2_v2alpha ]; then
      sed -n '/^@@COMMENT_V2ALPHA@@$/,/^@@END@@$/p' "$0" | sed '1d;$d'
    fi
    sed -n '/^@@COMMENT@@$/,/^@@END@@$/p' "$0" | sed '1d;$d'
    printf '#include <linux/module.h>\n#include <linux/random.h>\n#include <linux/inet_diag.h>\n#include <net/tcp.h>\n'
    if [ "$name" = bbr2plus ]; then
      printf '#include <linux/xarray.h>\n\n#define BBR2_PLUS 1\n'
    fi
    if [ "$name" = bbr2_v2alpha ]; then
      printf '\n#define BBR2_V2ALPHA 1\n'
    fi
    printf '\n#define BBR2_NAME "%s"\n\n#include "variant_param.h"\n#include "%s_params.h"\n#include "bbr2_main.h"\n\n' "$name" "$name"
    case $name in
      bbr2plus) desc='TCP BBRv2+ (delay-guided probing on BBR version 2), from its authors'"'"' description (testbed module bbr2plus)' ;;
      bbr2_v2alpha) desc="TCP BBR version 2 as Google's v2alpha code runs it (testbed module bbr2_v2alpha)" ;;
      *) desc="TCP BBR version ${name#bbr}, from the IETF drafts (testbed module $name)" ;;
    esac
    printf 'MODULE_DESCRIPTION("%s");\n' "$desc"
  } > "$tmp/new.c"
  {
    if [ "$name" = bbr2plus ]; then
      echo "bbr2plus: BBRv2+ (Yang et al.) on the bbr2_v2alpha machinery; replaces tcp_bbr.c."
      echo "The algorithm comment is the file's first hunk; the code is in bbr2_main.h"
      echo "(its BBR2_PLUS and BBR2_V2A parts) and bbr2_math.h, shared with bbr2 and bbr3; parameter"
      echo "defaults in mininet/bbrlab/variants.yaml. Written by kernel/variants/bbr2-mkpatch.sh."
    elif [ "$name" = bbr2_v2alpha ]; then
      echo "bbr2_v2alpha: BBR version 2 with the mechanisms of Google's v2alpha code; replaces"
      echo "tcp_bbr.c. The algorithm comment is the file's first hunk; the code is in bbr2_main.h"
      echo "(its BBR2_V2A parts) and bbr2_math.h, shared with bbr2 and bbr3; parameter"
      echo "defaults in mininet/bbrlab/variants.yaml. Written by kernel/variants/bbr2-mkpatch.sh."
    else
      echo "$name: BBR version ${name#bbr}, written from the IETF drafts; replaces tcp_bbr.c."
      echo "The algorithm comment is the file's first hunk; the code is in bbr2_main.h"
      echo "and bbr2_math.h (shared by bbr2 and bbr3, which differ by the parameter"
      echo "defaults in mininet/bbrlab/variants.yaml). Written by kernel/variants/bbr2-mkpatch.sh."
    fi
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
 *     flight when it was sent; checked on each ACK for the sampled packet,
 *     and for each packet as the stack marks it lost), inflight_hi becomes
 *     max(in-flight when sent, 0.7 * target in-flight) (BBRBeta = 0.7; for a
 *     lost packet, the in-flight volume at which the loss rate crossed 2 %
 *     within it) and the probe ends. Without such loss, probing raises
 *     inflight_hi (1, 2, 4, ... packets per round).
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
 * (v2 only), and v3's precautionary probing, 3-round Drain timeout,
 * 1-round extra_acked window in Startup and loss round restarted at a
 * round's first lost packet (NoteLoss). Both drafts pace DOWN at 0.9 and
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
 * rate sample (kernel/patches/10-tcp-rate-tx-in-flight.patch) and its
 * per-lost-packet operation skb_marked_lost
 * (kernel/patches/20-tcp-skb-marked-lost.patch).
 *
 * What samplers see (INET_DIAG_BBRINFO, struct tcp_bbr_info): bbr_bw_lo is
 * the model's bw in bytes/s with its 3 low bits replaced by the state
 * (0 STARTUP, 1 DRAIN, 2 DOWN, 3 CRUISE, 4 REFILL, 5 UP, 6 PROBE_RTT);
 * bbr_bw_hi is inflight_hi in packets (0xFFFFFFFF: no bound yet);
 * bbr_min_rtt, bbr_pacing_gain and bbr_cwnd_gain are the model's.
 *
 * Known differences from the drafts and Google's code (kernel/variants/
 * README.md lists them with reasons): no ECN
 * response (the testbed marks no CE); an undone recovery resets
 * bw_lo/inflight_lo to "no bound" instead of restoring their old values;
 * in-flight counts include packets still held in fq (the drafts' C.inflight;
 * Google's code corrects to the earliest departure time); the max-bw filter
 * advances at the end of each probe's feedback round (the drafts), not at
 * Google's points.
 */
@@END@@

@@COMMENT_V2ALPHA@@
/* Google's BBRv2 alpha (module bbr2_v2alpha; BBRv2+ is built on it) for
 * the testbed: BBR version 2 as Google's code of July 2019 runs it
 * (github.com/google/bbr, branch v2alpha, net/ipv4/tcp_bbr2.c, the "BBRv2"
 * of the papers of 2019-2022; read to learn, not copied), written here on
 * the bbr2 module below (bbr2_main.h's BBR2_V2A parts) with v2alpha's
 * constants as defaults (ProbeBW_DOWN at 0.75, Startup at 2.885, Drain at
 * 1/2.885, 8 loss events end Startup). Where v2alpha's mechanisms differ
 * from the v2 draft's, it follows v2alpha:
 *   - no recovery step: neither packet conservation nor the newly lost
 *     packets taken off cwnd in fast recovery; cwnd is restored to its
 *     saved value only after an RTO (leaving Loss), not after fast recovery;
 *   - precautionary probing: after a probe ended in too much loss, the next
 *     one stops at inflight_hi, and if its feedback brings no excess loss,
 *     probes again at once from REFILL;
 *   - a round trip's first lost packet restarts the loss round (as v3);
 *   - the loss threshold on its 1/256 scale, 5/256 = 1.95 %, and a lost
 *     packet's bound from its loss budget rounded up, never below the
 *     volume before it;
 *   - in-flight volumes at the earliest departure time, before the ACK, in
 *     ProbeBW's exits (UP: at least 1.25 BDP, or inflight_hi after a lossy
 *     probe; DOWN: within the headroom and the BDP) and at the earliest
 *     departure time in Drain's exit;
 *   - Startup's loss exit checked before the bandwidth plateau, with
 *     inflight_hi = BBRInflight(max_bw, 1); entering Drain resets the
 *     round's congestion signals and sets ssthresh to that volume;
 *   - extra_acked over 1-2 rounds in Startup; Startup's cwnd grows while
 *     below the target or twice the initial cwnd;
 *   - the send quantum's 64 KB >> (min_rtt / 512 us) bonus in the
 *     quantization budget, and the budget in the target in-flight;
 *   - an RTT equal to the minimum renews the ProbeRTT timer, and once it
 *     has expired a delayed ACK's RTT does not replace the minimum;
 *   - an RTO outside probing starts inflight_lo from the saved cwnd; CRUISE
 *     clamps inflight_lo to inflight_hi; the max-bw filter keeps its old
 *     window while the current one has no sample.
 * Not copied (kernel/variants/README.md): BBRBeta 180/256 and the headroom
 * 38/256 (0.70 and 15 % here), undo's restored bounds, the app-limited
 * fast path, the receiver's fast_ack_mode, ECN.
 */
@@END@@

@@COMMENT_PLUS@@
/* BBRv2+ (module bbr2plus) for the testbed: BBR version 2 with the
 * delay-aware changes of Yang et al. ("BBRv2+: Towards balancing
 * throughput and latency", and their Linux module tcp_bbr2plus.c, github
 * yangfurong/BBRv2plus, on Google's v2alpha code; read to learn, not
 * copied). Written here on the bbr2 module below (bbr2_main.h's BBR2_PLUS
 * parts) with Google's v2alpha constants as defaults (mininet/bbrlab/
 * experiment/variants.yaml); kernel/variants/README.md lists every
 * reconstruction choice and the quirks of the authors' code not copied.
 *
 * What BBRv2+ changes, in "delay mode":
 *   - Probing guided by delay. REFILL (one round at 1.0) is followed by
 *     PRE_UP, one round at pacing gain 1.10, and GUARD, one round at 1.0
 *     for PRE_UP's feedback. UP (1.25) follows only if GUARD's smoothed RTT
 *     (an EWMA, weight 1/8, of the round's RTT samples) is at most the
 *     round before's + min(2 %, 2 ms); else DOWN_SLIGHTLY, a DOWN at 0.90.
 *     UP ends as in BBRv2 (a min_rtt above 1.25 BDP) in POST_UP, one round
 *     at 1.0: if the min RTT of the probe's round rose at most min(2 %,
 *     2 ms) above the min RTT before the probe, UP again, else DOWN. Loss
 *     above 2 % ends UP in DOWN as in BBRv2.
 *   - Probing every 8 + U{0..3} CRUISE rounds (not every 2-3 s; the Reno
 *     coexistence bound of min(BDP, 63) rounds stays).
 *   - The max-bw filter advances in CRUISE and DOWN at a round's end when
 *     the round's min RTT is above 1.10 x the smallest min RTT of the last
 *     4 rounds (competing traffic took bandwidth), or 25 rounds after a
 *     sample last reached max_bw (or the filter last advanced), not at the
 *     end of each probe.
 * In both modes: a cwnd allowance for variable RTTs, max_bw x 2 (2.89
 * until Startup's Drain ended) x the max of the stack's RTT variation
 * (mdev / 4) over 4 rounds, when that exceeds 40 % of min_rtt.
 * The switch: at each CRUISE's end, a CRUISE whose min RTT exceeded min(the
 * last CRUISE's, min_rtt) + 10 % of the reference RTT (the min RTT over
 * 1500 rounds) counts; after 2 in a row BBRv2+ runs as plain BBRv2 from a
 * new Startup (delay is then no guide: a queue it cannot drain). In plain
 * BBRv2, a CRUISE with min RTT <= min_rtt + 5 % of the reference counts;
 * after 4 in a row delay mode returns.
 *
 * Samplers see PRE_UP and GUARD as REFILL (4), POST_UP as UP (5) and
 * DOWN_SLIGHTLY as DOWN (2) in bbr_bw_lo's low 3 bits; the pacing gain
 * tells PRE_UP (1.10) and DOWN_SLIGHTLY (0.90) apart.
 *
 * The shared comment of bbr2 and bbr3 follows; what it says of version 2
 * holds for bbr2plus outside the above.
 */
@@END@@
