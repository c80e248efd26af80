// The project's BBR variants in ns-3: each is BBR v1 (bbr_v1.h) with the change
// its kernel patch (kernel/variants/<name>.patch) makes, at the same place in
// the per-ACK update, deciding with the same function of
// kernel/variants/<name>_math.h. What each changes, and why, is in the
// patch's header comment and kernel/variants/README.md; here only the
// mapping is noted. Parameters are the module's (mininet/bbrlab/experiment/variants.yaml,
// range-checked by the spec check before a run); the program gets every one,
// defaults filled in, as `flow.<i>.param.<name>` (ns3_backend.py).
#ifndef BBRLAB_BBR_VARIANTS_H
#define BBRLAB_BBR_VARIANTS_H

#include "bbr_v1.h"

#include <map>
#include <string>
#include <vector>

namespace bbrlab
{

// A variant's parameters by name; Configure() returns what is missing or malformed.
typedef std::map<std::string, std::string> VariantParams;

inline std::string
TakeParams(const VariantParams& given, const std::vector<std::pair<std::string, uint32_t*>>& wanted)
{
    std::string problems;
    for (const auto& w : wanted)
    {
        auto it = given.find(w.first);
        if (it == given.end())
        {
            problems += " " + w.first + " (missing)";
            continue;
        }
        char* end = nullptr;
        unsigned long long v = std::strtoull(it->second.c_str(), &end, 10);
        if (it->second.empty() || *end != '\0' || v > UINT32_MAX)
        {
            problems += " " + w.first + "=" + it->second + " (not an unsigned 32-bit integer)";
            continue;
        }
        *w.second = (uint32_t)v;
    }
    return problems;
}

// BBQ (Ma et al., Sec. V-B/C; kernel/variants/bbq.patch): every RTT sample decides
// whether a persistent queue exists (bbq_queue_detected, right after the bandwidth
// update as in the module), and a probing phase ends by bbq_probe_ends: after
// alpha while a queue persists and alpha < min_rtt, otherwise as BBR's. The
// flag is bit 0 of the bandwidth samplers read, as in the module's bbr_info.
class Bbq : public BbrV1
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("bbrlab::Bbq").SetParent<BbrV1>().SetGroupName("Internet");
        return tid;
    }

    std::string GetName() const override
    {
        return "bbq";
    }

    std::string Configure(const VariantParams& p)
    {
        return TakeParams(p, {{"alpha_us", &m_alphaUs}, {"beta_ppm", &m_betaPpm}});
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<Bbq>(this);
    }

  protected:
    void VariantInit() override
    {
        m_queue = false;
    }

    void VariantAfterBw(const BbrSample& rs) override
    {
        if (rs.rttUs >= 0 && m_minRttUs != ~0U)
            m_queue = bbq_queue_detected((u32)rs.rttUs, m_minRttUs, m_betaPpm);
    }

    bool ProbeEnds(uint64_t elapsedUs, bool losses, bool inflightFull) override
    {
        return bbq_probe_ends(elapsedUs, m_minRttUs, m_alphaUs, m_queue, losses, inflightFull);
    }

    bool VariantFlagInBw() const override
    {
        return true;
    }

    uint32_t VariantFlag() const override
    {
        return m_queue ? 1 : 0;
    }

    void TraceVariant(FILE* f) const override
    {
        std::fprintf(f, ",%d,,", m_queue ? 1 : 0);
    }

    uint32_t m_alphaUs = 0, m_betaPpm = 0;
    bool m_queue = false;
};

// BBR v1 itself: the project's port of Linux's tcp_bbr.c (bbr_v1.h) with no change.
// `cc: bbr` runs it in place of ns-3's TcpBbr under the backend's Linux rules
// (Ns3Backend(rules="linux"), `--config ns3_rules=linux`), which also turn on the two
// Linux switches of bbr_v1.h; the stock rules keep TcpBbr, the model ns-3 papers used.
// No parameters.
class Bbr : public BbrV1
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("bbrlab::Bbr").SetParent<BbrV1>().SetGroupName("Internet");
        return tid;
    }

    std::string GetName() const override
    {
        return "bbr";
    }

    std::string Configure(const VariantParams& p)
    {
        return TakeParams(p, {});
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<Bbr>(this);
    }
};

// bbq_drain (Ma et al., Sec. V-A, Fig. 12; kernel/variants/bbq_drain.patch): BBQ's first
// cut. A draining phase (pacing_gain 0.75) of PROBE_BW ends only when inflight has
// fallen to one BDP (BBR's own bbr_inflight(bw, 1.0)), with no min_rtt time limit.
// No parameters, no flag: everything else is BBR.
class BbqDrain : public BbrV1
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("bbrlab::BbqDrain").SetParent<BbrV1>().SetGroupName("Internet");
        return tid;
    }

    std::string GetName() const override
    {
        return "bbq_drain";
    }

    std::string Configure(const VariantParams& p)
    {
        return TakeParams(p, {});
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<BbqDrain>(this);
    }

  protected:
    bool DrainEnds(bool, bool inflightAtBdp) override
    {
        return inflightAtBdp;  // no time limit
    }
};

// Adaptive-BBR (Yang et al., Algorithm 1 and Eq. 5; kernel/variants/adaptive_bbr.patch):
// on every ACK with a valid, not application-limited rate sample, after the min_rtt
// update, Q = inflight - min_rtt * delivery rate (abbr_backlog, abbr_pkts) and the
// PROBE_BW pacing gain is abbr_pacing_gain(Q, alpha, BDP); min_rtt expires after
// min_rtt_win_sec. Inflight is the ACK's prior_in_flight: ns-3 paces inside TCP, so
// every segment counted in flight has left the sender, which is what
// inflight_departed=1 makes the module count; with no sender queue to leave out,
// inflight_departed=0 counts the same segments here.
class AdaptiveBbr : public BbrV1
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("bbrlab::AdaptiveBbr").SetParent<BbrV1>().SetGroupName("Internet");
        return tid;
    }

    std::string GetName() const override
    {
        return "adaptive_bbr";
    }

    std::string Configure(const VariantParams& p)
    {
        return TakeParams(p, {{"alpha_pkts", &m_alphaPkts},
                              {"min_rtt_win_sec", &m_minRttWinSec},
                              {"inflight_departed", &m_inflightDeparted}});
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<AdaptiveBbr>(this);
    }

  protected:
    void VariantInit() override
    {
        m_gain = BBR_UNIT;
        m_haveQ = false;
    }

    void VariantAfterMinRtt(const BbrSample& rs) override
    {
        m_haveQ = false;
        if (rs.delivered < 0 || rs.intervalUs <= 0 || rs.isAppLimited || m_minRttUs == ~0U)
            return;  // the gain stays
        u64 rate = (u64)(rs.deliveredPkts * BW_UNIT / rs.intervalUs);
        m_q = abbr_backlog(rs.priorInFlight, abbr_pkts(rate, m_minRttUs));
        m_bdp = abbr_pkts(Bw(), m_minRttUs);
        m_haveQ = true;
        m_gain = abbr_pacing_gain(m_q, m_alphaPkts, m_bdp);
    }

    uint32_t ProbeBwPacingGain() const override
    {
        return m_gain;
    }

    uint32_t MinRttWinSec() const override
    {
        return m_minRttWinSec;
    }

    // Q and BDP of this ACK (empty when it kept the last gain)
    void TraceVariant(FILE* f) const override
    {
        if (m_haveQ)
            std::fprintf(f, ",,%lld,%llu", (long long)m_q, (unsigned long long)m_bdp);
        else
            std::fprintf(f, ",,,");
    }

    uint32_t m_alphaPkts = 0, m_minRttWinSec = 0, m_inflightDeparted = 0;
    uint32_t m_gain = BBR_UNIT;
    bool m_haveQ = false;
    s64 m_q = 0;
    u64 m_bdp = 0;
};

// BBR-E (Kim et al., Algorithms 1 and 2; kernel/variants/bbr_e.patch): after the
// min_rtt update, every RTT sample chooses the PROBE_BW cwnd gain
// (bbr_e_cwnd_gain); extra_acked_cwnd=0 leaves the ACK-aggregation allowance out
// of the cwnd target.
class BbrE : public BbrV1
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("bbrlab::BbrE").SetParent<BbrV1>().SetGroupName("Internet");
        return tid;
    }

    std::string GetName() const override
    {
        return "bbr_e";
    }

    std::string Configure(const VariantParams& p)
    {
        return TakeParams(p, {{"alpha_pct", &m_alphaPct},
                              {"algorithm", &m_algorithm},
                              {"extra_acked_cwnd", &m_extraAckedCwnd}});
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<BbrE>(this);
    }

  protected:
    void VariantInit() override
    {
        m_eGain = CWND_GAIN;
    }

    void VariantAfterMinRtt(const BbrSample& rs) override
    {
        if (rs.rttUs >= 0)
            m_eGain = bbr_e_cwnd_gain((u32)rs.rttUs, m_minRttUs, m_alphaPct, m_algorithm);
    }

    uint32_t ProbeBwCwndGain() const override
    {
        return m_eGain;
    }

    bool AckAggregationInCwnd() const override
    {
        return m_extraAckedCwnd != 0;
    }

    uint32_t m_alphaPct = 0, m_algorithm = 0, m_extraAckedCwnd = 0;
    uint32_t m_eGain = CWND_GAIN;
};

} // namespace bbrlab

#endif // BBRLAB_BBR_VARIANTS_H
