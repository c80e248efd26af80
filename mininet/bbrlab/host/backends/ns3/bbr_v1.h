// BBR v1 as Linux 6.1 runs it, as an ns-3 congestion control, so that the
// project's BBR variants can run in ns-3 as small overrides of it.
//
// Why the project's own BBR and not a subclass of ns-3's TcpBbr: ns-3 3.37's
// TcpBbr keeps its state private (pacing gain, cycle index and stamp, the
// bandwidth filter) and its methods non-virtual, so a subclass can neither
// change when a probing phase ends (BBQ) nor which pacing gain PROBE_BW uses
// (Adaptive-BBR). The variants' kernel modules are patches of Linux's
// net/ipv4/tcp_bbr.c, and their decision functions (kernel/variants/*_math.h)
// take Linux's units: bandwidth in packets per microsecond << BW_SCALE, gains
// in BBR_UNIT, times in microseconds. So this is BBR v1 written after the
// algorithm of Linux 6.1's tcp_bbr.c, in those units, with virtual hooks at
// the places the variant patches change; each variant includes and calls the
// same *_math.h functions as its kernel module (bbr_variants.h).
//
// The algorithm (Cardwell et al., "BBR: Congestion-Based Congestion
// Control", ACM Queue 2016; Linux's tcp_bbr.c explains it at length):
// on every ACK the model is updated from the ACK's delivery-rate sample
// (BtlBw: a windowed max over 10 packet-timed round trips; RTprop: a windowed
// min over 10 s), then the pacing rate is pacing_gain * BtlBw (less a 1 %
// margin) and the cwnd target cwnd_gain * BDP plus an allowance for ACK
// aggregation and segment quantisation. The gains follow the mode: STARTUP
// (2.885 both) until the bandwidth stops growing by 25 % in three rounds,
// DRAIN (1/2.885) until inflight is at most one BDP, PROBE_BW (a cycle of
// eight phases of one min_rtt each, 1.25, 0.75, then six at 1.0, starting at
// a random phase other than 0.75), PROBE_RTT (cwnd 4 packets for 200 ms and a
// round trip) when min_rtt was not refreshed for 10 s. A long-term ("lt")
// bandwidth estimate replaces BtlBw when losses show a token-bucket policer.
// In loss recovery the cwnd follows packet conservation for one round.
//
// Where ns-3 differs from Linux, and what this does about it:
// - ns-3 counts bytes; the model counts packets of the segment size (MSS),
//   as Linux does. Delivery rates are computed from bytes divided by the MSS,
//   so they keep fractions of a packet.
// - Linux's rs->rtt_us is the RTT of this ACK's newest (s)acked segment, -1
//   when the ACK gives none; ns-3 exposes the socket's last RTT sample
//   (TcpSocketState::m_lastRtt), which an ACK without a sample leaves as it
//   was, so such an ACK repeats the previous sample (a min filter and a
//   threshold test give the same answer twice). No ACK is marked delayed.
// - ns-3 paces inside TCP: a segment counts in flight once it has left, so
//   Linux's correction for segments handed to fq before their departure time
//   (bbr_packets_in_net_at_edt's interval) is zero here; the segment of the
//   next departure is still added while probing, as Linux adds it.
// - During PROBE_RTT Linux marks the connection application-limited so that
//   its low rate samples do not enter the bandwidth filter unmarked; ns-3's
//   rate estimator (TcpRateLinux) keeps that flag private, so they enter
//   unmarked here (the max filter over 10 rounds keeps BtlBw; the same holds
//   for ns-3's TcpBbr).
// - Linux's TSO budget (bbr_tso_segs_goal) is kept as Linux computes it from
//   the pacing rate, because it sizes the cwnd's quantisation allowance;
//   ns-3 sends one segment at a time anyway.
// - undo_cwnd (spurious-retransmission undo) has no ns-3 hook.
// - The rate sample's interval: ns-3 3.37's TcpRateLinux measures the ACK phase
//   of a sample (Linux's ack_us = now - prior_mstamp) from the previous sample's
//   prior time, not from the delivered-time stamp of the packet this ACK
//   delivers (ns-3 fixed it in 3.41, issue #1026). When a flow has several
//   packets in flight the two stamps are one ACK apart and the error is one
//   inter-ACK gap per interval; when it sends isolated packets (one in flight,
//   a pacing gap longer than the RTT) the error is the whole gap between two
//   sends, and each sample reads 1 / (RTT + gap) instead of Linux's 1 / RTT.
//   The model uses ns-3's sample as it is. `linuxRateInterval` (off unless the
//   run's configuration asks for it: Ns3Backend(linux_rate_interval=True))
//   recomputes the interval as Linux's tcp_rate_gen does, from the sample's own
//   prior time, and invalidates it below min_rtt as Linux does: an experiment
//   that isolates this one difference, not a model of ns-3.
// - The rate sample's losses: Linux's rs->losses is the number of packets this
//   ACK newly marked lost (tcp_ack: tp->lost - lost; tp->lost only grows). ns-3
//   3.37 (TcpSocketBase::ReceivedAck, still so in 3.48) passes the absolute change
//   of the scoreboard's lost count over the ACK, so an ACK that SACKs or
//   cumulatively acknowledges a segment marked lost reports it as a new loss.
//   After a retransmission timeout, which marks every unsacked segment lost, every
//   ACK then reports as many losses as it delivers: bbr_set_cwnd_to_recover_or_
//   restore's "cwnd -= losses" and bbr_set_cwnd's "+ acked" cancel, and the cwnd
//   stays at its floor (4) on those ACKs; Linux's grows by each ACK's delivered
//   packets. In Tang's setting that keeps a flow in CA_LOSS for 19 s
//   (bench/results/ns3-bbr-2026-11-23.md). The model uses ns-3's
//   count as it is; `linuxLosses` (Ns3Backend(linux_losses=True), off unless asked
//   for) counts only the increase of the lost count over the ACK, as Linux does
//   (an ACK that both marks and clears counts the net increase): an experiment.
#ifndef BBRLAB_BBR_V1_H
#define BBRLAB_BBR_V1_H

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "kernel_math.h"

namespace bbrlab
{

using namespace ns3;

// The rate sample of one ACK in Linux's terms (struct rate_sample).
struct BbrSample
{
    int64_t delivered = -1;      // packets delivered in the interval (-1: invalid)
    double deliveredPkts = -1;   // the same with the fraction of a packet ns-3's bytes give
    int64_t intervalUs = -1;     // the interval (-1 or 0: invalid)
    uint32_t priorDeliveredBytes = 0;  // ns-3 counts delivered bytes (32-bit)
    uint32_t priorInFlight = 0;  // packets
    int32_t losses = 0;          // packets newly marked lost
    uint32_t ackedSacked = 0;    // packets newly (s)acked
    bool isAppLimited = false;
    int64_t rttUs = -1;
};

class BbrV1 : public TcpCongestionOps
{
  public:
    enum Mode
    {
        STARTUP,
        DRAIN,
        PROBE_BW,
        PROBE_RTT
    };

    static const int CYCLE_LEN = 8;
    static const int HIGH_GAIN = BBR_UNIT * 2885 / 1000 + 1;
    static const int DRAIN_GAIN = BBR_UNIT * 1000 / 2885;
    static const int CWND_GAIN = BBR_UNIT * 2;
    static const uint32_t CWND_MIN_TARGET = 4;
    static const uint32_t PROBE_RTT_MODE_US = 200000;
    static const uint32_t INIT_CWND = 10;

    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("bbrlab::BbrV1").SetParent<TcpCongestionOps>().SetGroupName("Internet");
        return tid;
    }

    std::string GetName() const override
    {
        return "bbrlab-bbr";
    }

    FILE* trace = nullptr;  // per-ACK records (dumbbell's cc_trace), or none

    // The sending socket: its scoreboard for linuxLosses, and for the trace its
    // retransmission timer and scoreboard (segments marked lost, sacked, retransmitted),
    // written beside each ACK.
    void Socket(Ptr<TcpSocketBase> socket)
    {
        m_socket = socket;
        socket->TraceConnectWithoutContext("RTO", MakeCallback(&BbrV1::OnRto, this));
        socket->TraceConnectWithoutContext("Tx", MakeCallback(&BbrV1::OnTx, this));
    }
    // Rate-sample interval as Linux computes it instead of ns-3 3.37's (see the header
    // comment); an experiment switch, off by default.
    bool linuxRateInterval = false;
    // The sample's losses as Linux counts them (packets newly marked lost by this ACK)
    // instead of ns-3 3.37's change of the scoreboard's lost count, which an ACK of a
    // segment marked lost also makes (see the header comment); an experiment switch, off
    // by default; it reads the socket's scoreboard (Socket()).
    bool linuxLosses = false;

    // ------------------------------------------------------------ what samplers read
    uint32_t PacingGain() const
    {
        return m_pacingGain;
    }

    uint32_t CwndGain() const
    {
        return m_cwndGain;
    }

    uint32_t MinRttUs() const
    {
        return m_minRttUs;
    }

    Mode GetMode() const
    {
        return m_mode;
    }

    // BBR info's bandwidth in bytes/s; a variant may keep a flag in bit 0 (as its module does).
    uint64_t BwBytesPerSec() const
    {
        uint64_t bw = (uint64_t)Bw() * m_mss * 1000000ULL >> BW_SCALE;
        return VariantFlagInBw() ? ((bw & ~1ULL) | VariantFlag()) : bw;
    }

    // ------------------------------------------------------------ ns-3 hooks
    void Init(Ptr<TcpSocketState> tcb) override
    {
        m_mss = tcb->m_segmentSize;
        m_uv = CreateObject<UniformRandomVariable>();
        m_priorCwnd = 0;
        tcb->m_ssThresh = UINT32_MAX;  // TCP_INFINITE_SSTHRESH
        m_rttCnt = 0;
        m_nextRttDelivered = (uint32_t)Delivered(tcb);
        m_prevCaState = TcpSocketState::CA_OPEN;
        m_packetConservation = false;
        m_probeRttDoneStampUs = 0;
        m_probeRttRoundDone = false;
        m_minRttUs = tcb->m_minRtt == Time::Max() ? ~0U : (uint32_t)tcb->m_minRtt.GetMicroSeconds();
        m_minRttStampUs = NowUs();
        m_bwFilter[0] = m_bwFilter[1] = m_bwFilter[2] = {0, 0};
        m_hasSeenRtt = false;
        InitPacingRateFromRtt(tcb);
        m_roundStart = false;
        m_idleRestart = false;
        m_fullBwReached = false;
        m_fullBw = 0;
        m_fullBwCnt = 0;
        m_cycleStampUs = 0;
        m_cycleIdx = 0;
        ResetLtBwSampling();
        m_mode = STARTUP;
        m_ackEpochStampUs = NowUs();
        m_ackEpochAcked = 0;
        m_extraAckedWinRtts = 0;
        m_extraAckedWinIdx = 0;
        m_extraAcked[0] = m_extraAcked[1] = 0;
        m_pacingGain = HIGH_GAIN;
        m_cwndGain = HIGH_GAIN;
        VariantInit();
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t) override
    {
        SaveCwnd(tcb->GetCwndInSegments());
        return tcb->m_ssThresh;
    }

    bool HasCongControl() const override
    {
        return true;
    }

    void CongestionStateSet(Ptr<TcpSocketState>, const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_LOSS)
        {
            BbrSample rs;
            rs.losses = 1;
            m_rtos++;  // ns-3 calls this on every timeout, also one in CA_LOSS
            if (m_socket)  // the timeout has marked the segments lost (not a loss of an ACK)
                m_lostOut = m_socket->GetTxBuffer()->GetLost();
            m_prevCaState = TcpSocketState::CA_LOSS;
            m_fullBw = 0;
            m_roundStart = true;  // treat an RTO like the end of a round
            LtBwSampling(rs);
        }
    }

    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override
    {
        if (event == TcpSocketState::CA_EVENT_TX_START && m_appLimited)
        {
            m_idleRestart = true;
            m_ackEpochStampUs = NowUs();
            m_ackEpochAcked = 0;
            if (m_mode == PROBE_BW)
                SetPacingRate(tcb, Bw(), BBR_UNIT);
            else if (m_mode == PROBE_RTT)
                CheckProbeRttDone(tcb);
        }
    }

    void CongControl(Ptr<TcpSocketState> tcb,
                     const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& r) override
    {
        m_mss = tcb->m_segmentSize;
        m_deliveredBytes = rc.m_delivered;
        m_deliveredStampUs = rc.m_deliveredTime.GetMicroSeconds();
        m_appLimited = rc.m_appLimited != 0;
        BbrSample rs;
        m_ns3IntervalUs = -1;
        m_linuxIntervalUs = -1;
        if (r.IsValid() && r.m_delivered >= 0 && r.m_interval.GetMicroSeconds() > 0)
        {
            rs.delivered = (r.m_delivered + m_mss / 2) / m_mss;
            rs.deliveredPkts = (double)r.m_delivered / m_mss;
            rs.intervalUs = r.m_interval.GetMicroSeconds();
            m_ns3IntervalUs = rs.intervalUs;
            // Linux's interval: max(send phase, now - the delivered packet's own prior time)
            m_linuxIntervalUs = std::max(r.m_sendElapsed, Simulator::Now() - r.m_priorTime).GetMicroSeconds();
            if (linuxRateInterval)
            {
                rs.intervalUs = m_linuxIntervalUs;
                if (r.m_ackedSacked == 0 || Time(MicroSeconds(rs.intervalUs)) < tcb->m_minRtt)
                {
                    // Linux: no packet delivered on this ACK, or an interval below min_rtt
                    rs.delivered = -1;
                    rs.deliveredPkts = -1;
                    rs.intervalUs = -1;
                }
            }
        }
        rs.priorDeliveredBytes = r.m_priorDelivered;
        rs.priorInFlight = Pkts(r.m_priorInFlight);
        rs.losses = (int32_t)Pkts(r.m_bytesLoss);
        if (m_socket)
        {
            // ns-3 3.37's m_bytesLoss is |lost now - lost before the ACK| (TcpSocketBase::
            // ReceivedAck); Linux's rs->losses counts only what the ACK newly marked lost
            uint32_t lostOut = m_socket->GetTxBuffer()->GetLost();
            if (linuxLosses)
                rs.losses = lostOut > m_lostOut ? (int32_t)Pkts(lostOut - m_lostOut) : 0;
            m_lostOut = lostOut;
        }
        rs.ackedSacked = Pkts(r.m_ackedSacked);
        rs.isAppLimited = r.m_isAppLimited;
        if (tcb->m_lastRtt.Get() > Time(0))
            rs.rttUs = tcb->m_lastRtt.Get().GetMicroSeconds();
        m_lostPkts += rs.losses;
        m_lastRttUs = rs.rttUs;

        UpdateModel(tcb, rs);
        uint32_t bw = Bw();
        SetPacingRate(tcb, bw, m_pacingGain);
        SetCwnd(tcb, rs, rs.ackedSacked, bw, m_cwndGain);
        if (trace)
        {
            m_tcb = tcb;
            Trace(rs);
        }
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<BbrV1>(this);
    }

  protected:
    // ------------------------------------------------------------ variant hooks
    virtual void VariantInit()
    {
    }

    // After the bandwidth and ACK-aggregation updates, before the gain cycle (BBQ's place).
    virtual void VariantAfterBw(const BbrSample&)
    {
    }

    // Does a probing phase (pacing_gain > 1) end on this ACK?
    virtual bool ProbeEnds(uint64_t elapsedUs, bool losses, bool inflightFull)
    {
        return elapsedUs > m_minRttUs && (losses || inflightFull);
    }

    // Does a draining phase (pacing_gain < 1) end on this ACK? (bbq_drain's place)
    virtual bool DrainEnds(bool isFullLength, bool inflightAtBdp)
    {
        return isFullLength || inflightAtBdp;
    }

    // After the min_rtt update, before the gains are set (Adaptive-BBR's place).
    virtual void VariantAfterMinRtt(const BbrSample&)
    {
    }

    // PROBE_BW's pacing gain unless the long-term bandwidth is in use.
    virtual uint32_t ProbeBwPacingGain() const
    {
        static const int gains[CYCLE_LEN] = {BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT,
                                             BBR_UNIT,         BBR_UNIT,         BBR_UNIT, BBR_UNIT};
        return gains[m_cycleIdx];
    }

    // PROBE_BW's cwnd gain.
    virtual uint32_t ProbeBwCwndGain() const
    {
        return CWND_GAIN;
    }

    // Is the ACK-aggregation allowance added to the cwnd target?
    virtual bool AckAggregationInCwnd() const
    {
        return true;
    }

    virtual uint32_t MinRttWinSec() const
    {
        return 10;
    }

    virtual bool VariantFlagInBw() const
    {
        return false;
    }

    virtual uint32_t VariantFlag() const
    {
        return 0;
    }

    // Extra per-ACK trace columns (flag, q_256, bdp_256).
    virtual void TraceVariant(FILE* f) const
    {
        std::fprintf(f, ",,,");
    }

    // ------------------------------------------------------------ helpers in Linux's units
    static uint64_t NowUs()
    {
        return (uint64_t)Simulator::Now().GetMicroSeconds();
    }

    uint32_t Pkts(uint64_t bytes) const
    {
        return (uint32_t)((bytes + m_mss - 1) / m_mss);
    }

    uint64_t Delivered(Ptr<const TcpSocketState>) const
    {
        return m_deliveredBytes / m_mss;
    }

    static uint32_t InFlight(Ptr<const TcpSocketState> tcb)
    {
        return (tcb->m_bytesInFlight.Get() + tcb->m_segmentSize - 1) / tcb->m_segmentSize;
    }

    uint32_t MaxBw() const
    {
        return m_bwFilter[0].v;
    }

    uint32_t Bw() const
    {
        return m_ltUseBw ? m_ltBw : MaxBw();
    }

    uint32_t ExtraAcked() const
    {
        return std::max(m_extraAcked[0], m_extraAcked[1]);
    }

    uint64_t RateBytesPerSec(uint64_t rate, int gain) const
    {
        rate *= m_mss;
        rate *= gain;
        rate >>= BBR_SCALE;
        rate *= 1000000 / 100 * (100 - 1);  // 1 % pacing margin
        return rate >> BW_SCALE;
    }

    uint64_t BwToPacingRate(Ptr<TcpSocketState> tcb, uint32_t bw, int gain) const
    {
        uint64_t rate = RateBytesPerSec(bw, gain);
        uint64_t maxRate = tcb->m_maxPacingRate.GetBitRate() / 8;
        return maxRate ? std::min(rate, maxRate) : rate;
    }

    void InitPacingRateFromRtt(Ptr<TcpSocketState> tcb)
    {
        uint64_t rttUs = 1000;  // nominal default RTT
        if (tcb->m_lastRtt.Get() > Time(0))
        {
            rttUs = std::max<int64_t>(tcb->m_lastRtt.Get().GetMicroSeconds(), 1);
            m_hasSeenRtt = true;
        }
        // ns-3 initialises the congestion control when the socket gets it, before the
        // connection has its initial window
        uint32_t cwnd = tcb->m_cWnd.Get() ? tcb->GetCwndInSegments() : tcb->m_initialCWnd;
        uint64_t bw = (uint64_t)std::max<uint32_t>(cwnd, 1) * BW_UNIT / rttUs;
        tcb->m_pacingRate = DataRate(BwToPacingRate(tcb, (uint32_t)bw, HIGH_GAIN) * 8);
    }

    void SetPacingRate(Ptr<TcpSocketState> tcb, uint32_t bw, int gain)
    {
        uint64_t rate = BwToPacingRate(tcb, bw, gain);
        if (!m_hasSeenRtt && tcb->m_lastRtt.Get() > Time(0))
            InitPacingRateFromRtt(tcb);
        if (m_fullBwReached || rate * 8 > tcb->m_pacingRate.Get().GetBitRate())
            tcb->m_pacingRate = DataRate(rate * 8);
    }

    uint32_t TsoSegsGoal(Ptr<const TcpSocketState> tcb) const
    {
        uint64_t pacing = tcb->m_pacingRate.Get().GetBitRate() / 8;
        uint32_t minSegs = pacing < (1200000 >> 3) ? 1 : 2;
        uint64_t bytes = std::min<uint64_t>(pacing >> 10, 65536 - 1 - 320);  // sk_pacing_shift, GSO max
        uint32_t segs = std::max<uint32_t>(bytes / m_mss, minSegs);
        return std::min<uint32_t>(segs, 0x7F);
    }

    void SaveCwnd(uint32_t cwnd)
    {
        if (m_prevCaState < TcpSocketState::CA_RECOVERY && m_mode != PROBE_RTT)
            m_priorCwnd = cwnd;
        else
            m_priorCwnd = std::max(m_priorCwnd, cwnd);
    }

    uint32_t Bdp(uint32_t bw, int gain) const
    {
        if (m_minRttUs == ~0U)
            return INIT_CWND;
        uint64_t w = (uint64_t)bw * m_minRttUs;
        return (uint32_t)((((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT);
    }

    uint32_t QuantizationBudget(Ptr<const TcpSocketState> tcb, uint32_t cwnd) const
    {
        cwnd += 3 * TsoSegsGoal(tcb);
        cwnd = (cwnd + 1) & ~1U;
        if (m_mode == PROBE_BW && m_cycleIdx == 0)
            cwnd += 2;
        return cwnd;
    }

    uint32_t Inflight(Ptr<const TcpSocketState> tcb, uint32_t bw, int gain) const
    {
        return QuantizationBudget(tcb, Bdp(bw, gain));
    }

    uint32_t PacketsInNetAtEdt(Ptr<const TcpSocketState> tcb, uint32_t inflightNow) const
    {
        // ns-3 paces inside TCP: nothing counted in flight is waiting for its departure time.
        return inflightNow + (m_pacingGain > BBR_UNIT ? TsoSegsGoal(tcb) : 0);
    }

    uint32_t AckAggregationCwnd() const
    {
        if (!m_fullBwReached || !AckAggregationInCwnd())
            return 0;
        uint32_t maxAggr = (uint32_t)((uint64_t)Bw() * 100000 / BW_UNIT);  // 100 ms of bw
        return std::min<uint32_t>(ExtraAcked(), maxAggr);
    }

    bool SetCwndToRecoverOrRestore(Ptr<TcpSocketState> tcb, const BbrSample& rs, uint32_t acked, uint32_t* newCwnd)
    {
        auto prevState = m_prevCaState;
        auto state = tcb->m_congState.Get();
        uint32_t cwnd = tcb->GetCwndInSegments();
        if (rs.losses > 0)
            cwnd = (uint32_t)std::max<int64_t>((int64_t)cwnd - rs.losses, 1);
        if (state == TcpSocketState::CA_RECOVERY && prevState != TcpSocketState::CA_RECOVERY)
        {
            m_packetConservation = true;
            m_nextRttDelivered = (uint32_t)m_deliveredBytes;  // start a round now
            cwnd = InFlight(tcb) + acked;
        }
        else if (prevState >= TcpSocketState::CA_RECOVERY && state < TcpSocketState::CA_RECOVERY)
        {
            cwnd = std::max(cwnd, m_priorCwnd);
            m_packetConservation = false;
        }
        m_prevCaState = state;
        if (m_packetConservation)
        {
            *newCwnd = std::max(cwnd, InFlight(tcb) + acked);
            return true;
        }
        *newCwnd = cwnd;
        return false;
    }

    void SetCwnd(Ptr<TcpSocketState> tcb, const BbrSample& rs, uint32_t acked, uint32_t bw, int gain)
    {
        uint32_t cwnd = tcb->GetCwndInSegments();
        if (acked)
        {
            if (!SetCwndToRecoverOrRestore(tcb, rs, acked, &cwnd))
            {
                uint32_t target = Bdp(bw, gain);
                target += AckAggregationCwnd();
                target = QuantizationBudget(tcb, target);
                if (m_fullBwReached)
                    cwnd = std::min(cwnd + acked, target);
                else if (cwnd < target || m_deliveredBytes / m_mss < INIT_CWND)
                    cwnd = cwnd + acked;
                cwnd = std::max(cwnd, CWND_MIN_TARGET);
            }
        }
        if (m_mode == PROBE_RTT)
            cwnd = std::min(cwnd, CWND_MIN_TARGET);
        tcb->m_cWnd = cwnd * m_mss;
    }

    bool IsNextCyclePhase(Ptr<const TcpSocketState> tcb, const BbrSample& rs)
    {
        uint64_t elapsed = m_deliveredStampUs > m_cycleStampUs ? m_deliveredStampUs - m_cycleStampUs : 0;
        bool isFullLength = elapsed > m_minRttUs;
        if (m_pacingGain == BBR_UNIT)
            return isFullLength;
        uint32_t inflight = PacketsInNetAtEdt(tcb, rs.priorInFlight);
        uint32_t bw = MaxBw();
        if (m_pacingGain > BBR_UNIT)
            return ProbeEnds(elapsed, rs.losses > 0, inflight >= Inflight(tcb, bw, m_pacingGain));
        return DrainEnds(isFullLength, inflight <= Inflight(tcb, bw, BBR_UNIT));
    }

    void AdvanceCyclePhase()
    {
        m_cycleIdx = (m_cycleIdx + 1) & (CYCLE_LEN - 1);
        m_cycleStampUs = m_deliveredStampUs;
    }

    void ResetProbeBwMode()
    {
        m_mode = PROBE_BW;
        m_cycleIdx = CYCLE_LEN - 1 - m_uv->GetInteger(0, 6);  // prandom_u32_max(7)
        AdvanceCyclePhase();
    }

    void ResetMode()
    {
        if (!m_fullBwReached)
            m_mode = STARTUP;
        else
            ResetProbeBwMode();
    }

    void ResetLtBwSamplingInterval()
    {
        m_ltLastStampMs = m_deliveredStampUs / 1000;
        m_ltLastDelivered = m_deliveredBytes / m_mss;
        m_ltLastLost = m_lostPkts;
        m_ltRttCnt = 0;
    }

    void ResetLtBwSampling()
    {
        m_ltBw = 0;
        m_ltUseBw = false;
        m_ltIsSampling = false;
        ResetLtBwSamplingInterval();
    }

    void LtBwIntervalDone(uint32_t bw)
    {
        if (m_ltBw)
        {
            uint32_t diff = bw > m_ltBw ? bw - m_ltBw : m_ltBw - bw;
            if ((uint64_t)diff * BBR_UNIT <= (uint64_t)(BBR_UNIT / 8) * m_ltBw ||
                RateBytesPerSec(diff, BBR_UNIT) <= 4000 / 8)
            {
                m_ltBw = (bw + m_ltBw) >> 1;
                m_ltUseBw = true;
                m_pacingGain = BBR_UNIT;
                m_ltRttCnt = 0;
                return;
            }
        }
        m_ltBw = bw;
        ResetLtBwSamplingInterval();
    }

    void LtBwSampling(const BbrSample& rs)
    {
        if (m_ltUseBw)
        {
            if (m_mode == PROBE_BW && m_roundStart && ++m_ltRttCnt >= 48)
            {
                ResetLtBwSampling();
                ResetProbeBwMode();
            }
            return;
        }
        if (!m_ltIsSampling)
        {
            if (!rs.losses)
                return;
            ResetLtBwSamplingInterval();
            m_ltIsSampling = true;
        }
        if (rs.isAppLimited)
        {
            ResetLtBwSampling();
            return;
        }
        if (m_roundStart)
            m_ltRttCnt++;
        if (m_ltRttCnt < 4)
            return;
        if (m_ltRttCnt > 4 * 4)
        {
            ResetLtBwSampling();
            return;
        }
        if (!rs.losses)
            return;
        uint64_t lost = m_lostPkts - m_ltLastLost;
        uint64_t delivered = m_deliveredBytes / m_mss - m_ltLastDelivered;
        if (!delivered || (lost << BBR_SCALE) < 50 * delivered)
            return;
        int64_t t = (int64_t)(m_deliveredStampUs / 1000) - (int64_t)m_ltLastStampMs;
        if (t < 1)
            return;
        if (t >= (int64_t)(~0U / 1000))
        {
            ResetLtBwSampling();
            return;
        }
        uint64_t bw = delivered * BW_UNIT / (uint64_t)(t * 1000);
        LtBwIntervalDone((uint32_t)bw);
    }

    // Kathleen Nichols' windowed max (Linux lib/win_minmax.c), over round trips.
    struct MinmaxSample
    {
        uint32_t t, v;
    };

    void RunningMax(uint32_t win, uint32_t t, uint32_t meas)
    {
        MinmaxSample val = {t, meas};
        MinmaxSample* s = m_bwFilter;
        if (val.v >= s[0].v || val.t - s[2].t > win)
        {
            s[0] = s[1] = s[2] = val;
            return;
        }
        if (val.v >= s[1].v)
            s[2] = s[1] = val;
        else if (val.v >= s[2].v)
            s[2] = val;
        uint32_t dt = val.t - s[0].t;
        if (dt > win)
        {
            s[0] = s[1];
            s[1] = s[2];
            s[2] = val;
            if (val.t - s[0].t > win)
            {
                s[0] = s[1];
                s[1] = s[2];
                s[2] = val;
            }
        }
        else if (s[1].t == s[0].t && dt > win / 4)
        {
            s[2] = s[1] = val;
        }
        else if (s[2].t == s[1].t && dt > win / 2)
        {
            s[2] = val;
        }
    }

    void UpdateBw(const BbrSample& rs)
    {
        m_roundStart = false;
        if (rs.delivered < 0 || rs.intervalUs <= 0)
            return;
        if ((int32_t)(rs.priorDeliveredBytes - m_nextRttDelivered) >= 0)
        {
            m_nextRttDelivered = (uint32_t)m_deliveredBytes;
            m_rttCnt++;
            m_roundStart = true;
            m_packetConservation = false;
        }
        LtBwSampling(rs);
        uint64_t bw = (uint64_t)(rs.deliveredPkts * BW_UNIT / rs.intervalUs);
        if (!rs.isAppLimited || bw >= MaxBw())
            RunningMax(CYCLE_LEN + 2, m_rttCnt, (uint32_t)std::min<uint64_t>(bw, UINT32_MAX));
    }

    void UpdateAckAggregation(Ptr<const TcpSocketState> tcb, const BbrSample& rs)
    {
        if (rs.ackedSacked == 0 || rs.delivered < 0 || rs.intervalUs <= 0)
            return;
        if (m_roundStart)
        {
            m_extraAckedWinRtts = std::min<uint32_t>(0x1F, m_extraAckedWinRtts + 1);
            if (m_extraAckedWinRtts >= 5)
            {
                m_extraAckedWinRtts = 0;
                m_extraAckedWinIdx = m_extraAckedWinIdx ? 0 : 1;
                m_extraAcked[m_extraAckedWinIdx] = 0;
            }
        }
        uint64_t epochUs = m_deliveredStampUs > m_ackEpochStampUs ? m_deliveredStampUs - m_ackEpochStampUs : 0;
        uint32_t expected = (uint32_t)((uint64_t)Bw() * epochUs / BW_UNIT);
        if (m_ackEpochAcked <= expected || m_ackEpochAcked + rs.ackedSacked >= (1U << 20))
        {
            m_ackEpochAcked = 0;
            m_ackEpochStampUs = m_deliveredStampUs;
            expected = 0;
        }
        m_ackEpochAcked = std::min<uint32_t>(0xFFFFF, m_ackEpochAcked + rs.ackedSacked);
        uint32_t extra = m_ackEpochAcked - expected;
        extra = std::min(extra, tcb->GetCwndInSegments());
        if (extra > m_extraAcked[m_extraAckedWinIdx])
            m_extraAcked[m_extraAckedWinIdx] = extra;
    }

    void CheckFullBwReached(const BbrSample& rs)
    {
        if (m_fullBwReached || !m_roundStart || rs.isAppLimited)
            return;
        uint32_t thresh = (uint32_t)((uint64_t)m_fullBw * (BBR_UNIT * 5 / 4) >> BBR_SCALE);
        if (MaxBw() >= thresh)
        {
            m_fullBw = MaxBw();
            m_fullBwCnt = 0;
            return;
        }
        ++m_fullBwCnt;
        m_fullBwReached = m_fullBwCnt >= 3;
    }

    void CheckDrain(Ptr<TcpSocketState> tcb)
    {
        if (m_mode == STARTUP && m_fullBwReached)
        {
            m_mode = DRAIN;
            tcb->m_ssThresh = Inflight(tcb, MaxBw(), BBR_UNIT) * m_mss;
        }
        if (m_mode == DRAIN && PacketsInNetAtEdt(tcb, InFlight(tcb)) <= Inflight(tcb, MaxBw(), BBR_UNIT))
            ResetProbeBwMode();
    }

    void CheckProbeRttDone(Ptr<TcpSocketState> tcb)
    {
        if (!(m_probeRttDoneStampUs && NowUs() > m_probeRttDoneStampUs))
            return;
        m_minRttStampUs = NowUs();
        tcb->m_cWnd = std::max(tcb->GetCwndInSegments(), m_priorCwnd) * m_mss;
        ResetMode();
    }

    void UpdateMinRtt(Ptr<TcpSocketState> tcb, const BbrSample& rs)
    {
        bool expired = NowUs() > m_minRttStampUs + (uint64_t)MinRttWinSec() * 1000000;
        if (rs.rttUs >= 0 && ((uint64_t)rs.rttUs < m_minRttUs || expired))
        {
            m_minRttUs = (uint32_t)rs.rttUs;
            m_minRttStampUs = NowUs();
        }
        if (expired && !m_idleRestart && m_mode != PROBE_RTT)
        {
            m_mode = PROBE_RTT;
            SaveCwnd(tcb->GetCwndInSegments());
            m_probeRttDoneStampUs = 0;
        }
        if (m_mode == PROBE_RTT)
        {
            if (!m_probeRttDoneStampUs && InFlight(tcb) <= CWND_MIN_TARGET)
            {
                m_probeRttDoneStampUs = NowUs() + PROBE_RTT_MODE_US;
                m_probeRttRoundDone = false;
                m_nextRttDelivered = (uint32_t)m_deliveredBytes;
            }
            else if (m_probeRttDoneStampUs)
            {
                if (m_roundStart)
                    m_probeRttRoundDone = true;
                if (m_probeRttRoundDone)
                    CheckProbeRttDone(tcb);
            }
        }
        if (rs.delivered > 0)
            m_idleRestart = false;
    }

    void UpdateGains()
    {
        switch (m_mode)
        {
        case STARTUP:
            m_pacingGain = HIGH_GAIN;
            m_cwndGain = HIGH_GAIN;
            break;
        case DRAIN:
            m_pacingGain = DRAIN_GAIN;
            m_cwndGain = HIGH_GAIN;
            break;
        case PROBE_BW:
            m_pacingGain = m_ltUseBw ? BBR_UNIT : ProbeBwPacingGain();
            m_cwndGain = ProbeBwCwndGain();
            break;
        case PROBE_RTT:
            m_pacingGain = BBR_UNIT;
            m_cwndGain = BBR_UNIT;
            break;
        }
    }

    void UpdateModel(Ptr<TcpSocketState> tcb, const BbrSample& rs)
    {
        UpdateBw(rs);
        UpdateAckAggregation(tcb, rs);
        VariantAfterBw(rs);
        if (m_mode == PROBE_BW && IsNextCyclePhase(tcb, rs))
            AdvanceCyclePhase();
        CheckFullBwReached(rs);
        CheckDrain(tcb);
        UpdateMinRtt(tcb, rs);
        VariantAfterMinRtt(rs);
        UpdateGains();
    }

    void Trace(const BbrSample& rs) const
    {
        // t_s,mode,pacing_gain,cwnd_gain,cycle_idx,min_rtt_us,rtt_us,prior_inflight,bw,delivery_rate,
        // flag,q_256,bdp_256 (rates in packets/us << BW_SCALE; delivery_rate empty when invalid)
        std::fprintf(trace, "%.6f,%d,%u,%u,%u,%u,%lld,%u,%u,", Simulator::Now().GetSeconds(), (int)m_mode,
                     m_pacingGain, m_cwndGain, m_cycleIdx, m_minRttUs, (long long)rs.rttUs, rs.priorInFlight,
                     Bw());
        if (rs.delivered >= 0 && rs.intervalUs > 0)
            std::fprintf(trace, "%llu", (unsigned long long)(rs.deliveredPkts * BW_UNIT / rs.intervalUs));
        TraceVariant(trace);
        // the sample's parts: ns-3's interval and Linux's for the same ACK (us, -1: invalid),
        // delivered packets, then the pacing rate (bit/s), packets in flight, cwnd (packets)
        // and ns-3's congestion state after this ACK
        std::fprintf(trace, ",%lld,%lld,%.3f,%llu,%u,%u,%d", (long long)m_ns3IntervalUs,
                     (long long)m_linuxIntervalUs, rs.deliveredPkts,
                     (unsigned long long)m_tcb->m_pacingRate.Get().GetBitRate(), InFlight(m_tcb),
                     m_tcb->GetCwndInSegments(), (int)m_tcb->m_congState.Get());
        // loss recovery: the sample's losses and (s)acked packets as this model took them,
        // the cumulative ACK and the highest sequence sent (bytes, data from 1), the
        // timeouts so far and the timer (ms), segments (re)transmitted so far, and the
        // scoreboard after this ACK (packets marked lost, sacked, retransmitted)
        std::fprintf(trace, ",%d,%u,%u,%u,%u,%lld,%llu,%llu", rs.losses, rs.ackedSacked,
                     m_tcb->m_lastAckedSeq.GetValue(), m_tcb->m_highTxMark.Get().GetValue(), m_rtos,
                     (long long)m_rtoMs, (unsigned long long)m_txSegs, (unsigned long long)m_retxSegs);
        if (m_socket)
        {
            Ptr<TcpTxBuffer> txb = m_socket->GetTxBuffer();
            std::fprintf(trace, ",%u,%u,%u", Pkts(txb->GetLost()), Pkts(txb->GetSacked()),
                         Pkts(txb->GetRetransmitsCount()));
        }
        else
            std::fprintf(trace, ",,,");
        std::fputc('\n', trace);
    }

    void OnRto(Time, Time now)
    {
        m_rtoMs = now.GetMilliSeconds();
    }

    void OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        uint32_t len = p->GetSize();
        if (len == 0)
            return;
        uint32_t seq = h.GetSequenceNumber().GetValue();
        m_txSegs++;
        if (m_highestSent && (int32_t)(seq - m_highestSent) < 0)
            m_retxSegs++;
        if (!m_highestSent || (int32_t)(seq + len - m_highestSent) > 0)
            m_highestSent = seq + len;
    }

    // ------------------------------------------------------------ state (struct bbr)
    Ptr<UniformRandomVariable> m_uv;
    Ptr<TcpSocketState> m_tcb;         // for the trace only
    Ptr<TcpSocketBase> m_socket;       // the sending socket (Socket), or none
    uint32_t m_lostOut = 0;            // its bytes marked lost after the last ACK or timeout
    uint32_t m_rtos = 0;               // timeouts (trace)
    int64_t m_rtoMs = 0;               // the retransmission timer (trace)
    uint64_t m_txSegs = 0, m_retxSegs = 0;  // data segments sent, of which retransmissions (trace)
    uint32_t m_highestSent = 0;        // sequence after the highest byte sent (trace)
    int64_t m_ns3IntervalUs = -1;      // this ACK's sample interval as ns-3 gave it
    int64_t m_linuxIntervalUs = -1;    // ... and as Linux's tcp_rate_gen computes it
    uint32_t m_mss = 1448;
    uint64_t m_deliveredBytes = 0;     // tp->delivered, in bytes (ns-3 counts bytes)
    uint64_t m_deliveredStampUs = 0;   // tp->delivered_mstamp
    uint64_t m_lostPkts = 0;           // tp->lost
    bool m_appLimited = false;         // tp->app_limited
    int64_t m_lastRttUs = -1;
    uint32_t m_minRttUs = ~0U;
    uint64_t m_minRttStampUs = 0;
    uint64_t m_probeRttDoneStampUs = 0;
    MinmaxSample m_bwFilter[3] = {};
    uint32_t m_rttCnt = 0;
    uint32_t m_nextRttDelivered = 0;   // bytes, as ns-3's prior_delivered
    uint64_t m_cycleStampUs = 0;
    Mode m_mode = STARTUP;
    TcpSocketState::TcpCongState_t m_prevCaState = TcpSocketState::CA_OPEN;
    bool m_packetConservation = false;
    bool m_roundStart = false;
    bool m_idleRestart = false;
    bool m_probeRttRoundDone = false;
    bool m_ltIsSampling = false;
    uint32_t m_ltRttCnt = 0;
    bool m_ltUseBw = false;
    uint32_t m_pacingGain = HIGH_GAIN;
    uint32_t m_cwndGain = HIGH_GAIN;
    bool m_fullBwReached = false;
    uint32_t m_fullBwCnt = 0;
    uint32_t m_cycleIdx = 0;
    bool m_hasSeenRtt = false;
    uint32_t m_priorCwnd = 0;
    uint32_t m_fullBw = 0;
    uint64_t m_ackEpochStampUs = 0;
    uint32_t m_extraAcked[2] = {0, 0};
    uint32_t m_ackEpochAcked = 0;
    uint32_t m_extraAckedWinRtts = 0;
    uint32_t m_extraAckedWinIdx = 0;
    uint32_t m_ltBw = 0;
    uint64_t m_ltLastDelivered = 0;
    uint64_t m_ltLastStampMs = 0;
    uint64_t m_ltLastLost = 0;
};

} // namespace bbrlab

#endif // BBRLAB_BBR_V1_H
