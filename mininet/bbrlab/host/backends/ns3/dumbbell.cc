// The bbrlab dumbbell in ns-3: one run of an experiment spec, on simulated time.
//
//   dumbbell CONFIG
//
// CONFIG is a key=value file written by bbrlab/host/backends/ns3_backend.py from a
// validated run spec (one key a line; `flow.<i>.<key>` for flow i, numbered
// from 1). The program builds
//
//   snd<i> --(access link, rtt_ms/2 each way)-- sw1 ==(bottleneck)== sw2 -- rcv<i>
//
// sends one bulk TCP flow per sender from start_s to stop_s (time zero is
// `lead_s` of simulated time after the simulation starts: before it, each
// sender pings its receiver to measure the path's base RTT), and writes into
// the run's raw/ directory, in the formats the kernel testbed's sampler and
// guest write there, so bbrlab/data/tidy.py and bbrlab/data/fidelity.py read them
// unchanged:
//
//   sockets_snd<i>.jsonl  sender socket state every sample_s (tcp_info-like)
//   sockets_rcv<i>.jsonl  bytes the receiver got, every sample_s
//   qdisc.jsonl           bottleneck queue every queue_sample_s
//   ping_<i>.txt          ICMP echo RTTs before traffic ("time=<ms> ms")
//   loss.json             (loss_rate > 0) packets the loss model saw and dropped
//   ns3.json              what the simulation did (version, counters, events)
//
// Sample times "t" are simulated seconds since the simulation started.
#include <cstring>  // ns-3 3.37's mac64-address.h uses memcpy without including it

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-apps-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/version.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdio>
#include <fstream>
#include <list>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

// after every system and ns-3 header (kernel_math.h defines, then drops, min/max macros)
#include "bbr_variants.h"

using namespace ns3;

namespace
{

const uint16_t BASE_PORT = 5200;  // flow i's receiver listens on BASE_PORT + i (bbrlab/guest/traffic.py)

// ---------------------------------------------------------------- configuration

struct RunConfig
{
    std::map<std::string, std::string> kv;

    std::string Str(const std::string& key) const
    {
        auto it = kv.find(key);
        if (it == kv.end())
        {
            std::fprintf(stderr, "dumbbell: config lacks %s\n", key.c_str());
            std::exit(2);
        }
        return it->second;
    }

    double Num(const std::string& key) const
    {
        return std::stod(Str(key));
    }

    double Num(const std::string& key, double fallback) const
    {
        return kv.count(key) ? std::stod(kv.at(key)) : fallback;
    }
};

RunConfig
ReadConfig(const std::string& path)
{
    RunConfig c;
    std::ifstream in(path);
    if (!in)
    {
        std::fprintf(stderr, "dumbbell: cannot read %s\n", path.c_str());
        std::exit(2);
    }
    std::string line;
    while (std::getline(in, line))
    {
        if (line.empty() || line[0] == '#')
            continue;
        auto eq = line.find('=');
        if (eq == std::string::npos)
        {
            std::fprintf(stderr, "dumbbell: bad config line: %s\n", line.c_str());
            std::exit(2);
        }
        c.kv[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return c;
}

// ---------------------------------------------------------------- observation of a sender

// What a sampler reads of one sender socket. The congestion control is wrapped
// (Observed<>) so its socket state (TcpSocketState) and, for BBR, its gains are
// readable; the socket's trace sources give the rest.
struct SenderState
{
    Ptr<TcpSocketState> tcb;
    std::function<double()> pacingGain;  // empty unless BBR
    std::function<double()> cwndGain;
    std::function<uint64_t()> bw;        // empty unless the project's BBR (variants): bytes/s
    std::function<uint32_t()> minRttUs;
    bool haveRtt = false;
    double srttUs = 0;    // RFC 6298 smoothing of ns-3's per-ACK RTT samples
    double rttvarUs = 0;
    uint64_t highestSent = 1;  // first sequence number after the highest data byte sent
    uint64_t retransSegs = 0;
    uint64_t ackedTo = 1;      // highest cumulative ACK received (data starts at sequence 1)
    std::string state = "closed";
};

template <class Base>
class Observed : public Base
{
  public:
    SenderState* obs = nullptr;

    void Init(Ptr<TcpSocketState> tcb) override
    {
        if (obs)
            obs->tcb = tcb;
        Base::Init(tcb);
    }
};

// TcpBbr keeps its gains behind protected getters.
class ObservedBbr : public Observed<TcpBbr>
{
  public:
    FILE* trace = nullptr;  // per-ACK records (cc_trace), or none

    // TcpBbr's per-ACK state after it has taken this ACK's rate sample (3.37's TcpBbr
    // takes rs.m_deliveryRate, which TcpRateLinux leaves at its last valid value when
    // a sample is invalid). The interval Linux's tcp_rate_gen would compute for the
    // same ACK is written beside ns-3's (bbr_v1.h explains the difference).
    void CongControl(Ptr<TcpSocketState> tcb,
                     const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& rs) override
    {
        TcpBbr::CongControl(tcb, rc, rs);
        if (!trace)
            return;
        uint32_t mss = tcb->m_segmentSize;
        bool valid = rs.IsValid() && rs.m_delivered >= 0 && rs.m_interval.GetMicroSeconds() > 0;
        long long linuxUs = valid ? std::max(rs.m_sendElapsed, Simulator::Now() - rs.m_priorTime).GetMicroSeconds() : -1;
        // t_s,state,pacing_gain,cwnd_gain,delivery_rate_bps,valid,ns3_interval_us,
        // linux_interval_us,delivered_pkts,pacing_bps,inflight,cwnd,ca_state,rtt_us
        std::fprintf(trace, "%.6f,%u,%.4f,%.4f,%llu,%d,%lld,%lld,%.3f,%llu,%u,%u,%d,%lld\n",
                     Simulator::Now().GetSeconds(), GetBbrState(), GetPacingGain(), GetCwndGain(),
                     (unsigned long long)rs.m_deliveryRate.GetBitRate(), valid ? 1 : 0,
                     valid ? (long long)rs.m_interval.GetMicroSeconds() : -1LL, linuxUs,
                     valid ? (double)rs.m_delivered / mss : -1.0,
                     (unsigned long long)tcb->m_pacingRate.Get().GetBitRate(),
                     (tcb->m_bytesInFlight.Get() + mss - 1) / mss, tcb->GetCwndInSegments(),
                     (int)tcb->m_congState.Get(), (long long)tcb->m_lastRtt.Get().GetMicroSeconds());
    }

    double PacingGainNow()
    {
        return GetPacingGain();
    }

    double CwndGainNow()
    {
        return GetCwndGain();
    }
};

const char*
StateName(TcpSocket::TcpStates_t s)
{
    switch (s)
    {
    case TcpSocket::SYN_SENT:
        return "syn_sent";
    case TcpSocket::SYN_RCVD:
        return "syn_recv";
    case TcpSocket::ESTABLISHED:
        return "established";
    case TcpSocket::CLOSE_WAIT:
        return "close_wait";
    case TcpSocket::LAST_ACK:
        return "last_ack";
    case TcpSocket::FIN_WAIT_1:
        return "fin_wait1";
    case TcpSocket::FIN_WAIT_2:
        return "fin_wait2";
    case TcpSocket::CLOSING:
        return "closing";
    case TcpSocket::TIME_WAIT:
        return "time_wait";
    default:
        return "closed";
    }
}

void
OnState(SenderState* s, TcpSocket::TcpStates_t, TcpSocket::TcpStates_t now)
{
    s->state = StateName(now);
}

// The socket's "RTT" trace is a traced value: it fires when a new sample differs
// from the last one, so runs of equal samples count once in the smoothing.
void
OnRtt(SenderState* s, Time, Time now)
{
    double r = now.GetMicroSeconds();
    if (r <= 0)
        return;
    if (!s->haveRtt)
    {
        s->srttUs = r;
        s->rttvarUs = r / 2;
        s->haveRtt = true;
        return;
    }
    s->rttvarUs = 0.75 * s->rttvarUs + 0.25 * std::fabs(s->srttUs - r);
    s->srttUs = 0.875 * s->srttUs + 0.125 * r;
}

void
OnTx(SenderState* s, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    uint32_t len = p->GetSize();
    if (len == 0)
        return;
    uint64_t seq = h.GetSequenceNumber().GetValue();
    if (seq < s->highestSent)
        s->retransSegs++;
    if (seq + len > s->highestSent)
        s->highestSent = seq + len;
}

void
OnHighestRxAck(SenderState* s, SequenceNumber32, SequenceNumber32 now)
{
    if (now.GetValue() > s->ackedTo)
        s->ackedTo = now.GetValue();
}

// The receiver's segments, for the delayed-ACK check (fidelity.py): all it sent
// (ACKs), and those it received that carried data.
struct ReceiverCounts
{
    bool traced = false;
    uint64_t segsOut = 0;
    uint64_t dataSegsIn = 0;
};

void
OnRcvTx(ReceiverCounts* r, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    r->segsOut++;
}

void
OnRcvRx(ReceiverCounts* r, Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0)
        r->dataSegsIn++;
}

// The sink's first read: the receiving socket exists; count its segments from here
// (the first data segment is counted here, the segments before it were the handshake's).
void
OnFirstRead(ReceiverCounts* r, PacketSink* sink, Ptr<const Packet>, const Address&)
{
    if (r->traced || sink->GetAcceptedSockets().empty())
        return;
    r->traced = true;
    r->dataSegsIn = 1;
    Ptr<Socket> socket = sink->GetAcceptedSockets().front();
    socket->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnRcvTx, r));
    socket->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRcvRx, r));
}

// ---------------------------------------------------------------- bulk sender

// Writes from the flow's start to its stop (like iperf3 -t), then closes: what
// is still buffered is sent, as in the kernel. It keeps at most twice the
// congestion window in the socket (in flight and unsent), about what Linux's
// send-buffer autotuning (tcp_sndbuf_expand) lets an application queue, so
// a flow does not go on long after its stop time on a large buffer.
class BulkSender : public Application
{
  public:
    void Setup(Ptr<Socket> socket, Address peer, const SenderState* obs, uint32_t sndBuf)
    {
        m_socket = socket;
        m_peer = peer;
        m_obs = obs;
        m_sndBuf = sndBuf;
    }

  private:
    void StartApplication() override
    {
        m_sending = true;
        m_socket->Bind();
        m_socket->Connect(m_peer);
        m_socket->SetConnectCallback(MakeCallback(&BulkSender::Connected, this),
                                     MakeNullCallback<void, Ptr<Socket>>());
        m_socket->SetSendCallback(MakeCallback(&BulkSender::Space, this));
    }

    void StopApplication() override
    {
        m_sending = false;
        if (m_socket)
            m_socket->Close();
    }

    void Connected(Ptr<Socket>)
    {
        Fill();
    }

    void Space(Ptr<Socket>, uint32_t)
    {
        Fill();
    }

    void Fill()
    {
        while (m_sending)
        {
            uint32_t room = m_socket->GetTxAvailable();
            uint32_t queued = m_sndBuf - room;
            uint32_t limit = m_sndBuf;
            if (m_obs->tcb)
                limit = std::min(limit, 2 * std::max(m_obs->tcb->m_cWnd.Get(), 10 * m_obs->tcb->m_segmentSize));
            if (room == 0 || queued >= limit)
                return;
            uint32_t chunk = std::min<uint32_t>({room, limit - queued, 65536});
            if (m_socket->Send(Create<Packet>(chunk)) < 0)
                return;
        }
    }

    Ptr<Socket> m_socket;
    Address m_peer;
    const SenderState* m_obs = nullptr;
    uint32_t m_sndBuf = 0;
    bool m_sending = false;
};

// ---------------------------------------------------------------- the run

struct Flow
{
    int n;
    std::string cc;
    double rttMs, startS, stopS, accessBps;
    Ptr<Node> snd, rcv;
    Ipv4Address sndAddr, rcvAddr;
    Ptr<TcpSocketBase> socket;
    Ptr<PacketSink> sink;
    Ptr<Channel> access;  // carries the path's RTT
    SenderState obs;
    ReceiverCounts rcvCounts;
    std::string sndName, rcvName;  // addresses, as text
    uint64_t lastAcked = 0, lastReceived = 0;
    FILE* sndOut = nullptr;
    FILE* rcvOut = nullptr;
    FILE* ccTrace = nullptr;
    std::vector<double> pings;
};

struct Run
{
    double leadS, endS, sampleS, queueSampleS;
    uint32_t mss;
    std::vector<std::unique_ptr<Flow>> flows;
    Ptr<QueueDisc> qdisc;
    Ptr<Queue<Packet>> devQueue;
    FILE* qOut = nullptr;
    uint64_t lossSeen = 0, lossDropped = 0, lossSeenBytes = 0;
    uint64_t events = 0;
};

Run g;

double
Now()
{
    return Simulator::Now().GetSeconds();
}

void
SampleQueue()
{
    QueueDisc::Stats st = g.qdisc->GetStats();
    uint32_t backlog = g.qdisc->GetNBytes() + g.devQueue->GetNBytes();
    uint32_t qlen = g.qdisc->GetNPackets() + g.devQueue->GetNPackets();
    uint64_t drops = st.nTotalDroppedPackets + g.devQueue->GetTotalDroppedPackets();
    std::fprintf(g.qOut,
                 "{\"t\":%.6f,\"late_ms\":0,\"qdiscs\":[{\"kind\":\"fifo\",\"parent\":\"root\","
                 "\"backlog\":%u,\"qlen\":%u,\"bytes\":%llu,\"packets\":%u,\"drops\":%llu}]}\n",
                 Now(), backlog, qlen, (unsigned long long)st.nTotalDequeuedBytes,
                 st.nTotalDequeuedPackets, (unsigned long long)drops);
    if (Now() + g.queueSampleS <= g.endS + 1e-9)
        Simulator::Schedule(Seconds(g.queueSampleS), &SampleQueue);
}

// Every sample writes one record per flow and side, as the kernel's sampler does: the
// flow's socket while it is open (from its start until it went quiet after its stop),
// an empty list otherwise, so tidy.py counts a connection's first bytes from the
// sample before it appeared.
void
SampleSockets()
{
    double t = Now();
    for (auto& fp : g.flows)
    {
        Flow& f = *fp;
        SenderState& s = f.obs;
        bool running = t >= g.leadS + f.startS && t <= g.leadS + f.stopS + 2 * g.sampleS;
        // sender
        uint64_t acked = s.ackedTo > 1 ? s.ackedTo - 1 : 0;
        bool sndOpen = s.tcb && s.state != "closed" && (running || (t >= g.leadS + f.startS && acked > f.lastAcked));
        f.lastAcked = acked;
        std::fprintf(f.sndOut, "{\"t\":%.6f,\"late_ms\":0,\"socks\":[", t);
        if (sndOpen)
        {
            const TcpSocketState& tcb = *s.tcb;
            uint32_t mss = tcb.m_segmentSize;
            std::ostringstream info;
            info << "\"snd_mss\":" << mss << ",\"snd_cwnd\":" << tcb.m_cWnd.Get() / mss
                 // ns-3's bytes in flight is RFC 6675's pipe, which is what Linux's
                 // tcp_packets_in_flight() computes from unacked, sacked, lost and retrans:
                 // it is written as unacked with those left out (tidy.py's formula keeps it).
                 << ",\"unacked\":" << (tcb.m_bytesInFlight.Get() + mss - 1) / mss
                 << ",\"total_retrans\":" << s.retransSegs << ",\"bytes_acked\":" << acked
                 << ",\"pacing_rate\":" << tcb.m_pacingRate.Get().GetBitRate() / 8;
            if (s.haveRtt)
                info << ",\"rtt\":" << (uint64_t)std::llround(s.srttUs)
                     << ",\"rttvar\":" << (uint64_t)std::llround(s.rttvarUs);
            if (tcb.m_minRtt != Time::Max())
                info << ",\"min_rtt\":" << tcb.m_minRtt.GetMicroSeconds();
            std::ostringstream bbr;
            if (s.pacingGain)
            {
                bbr << ",\"bbr\":{\"pacing_gain\":" << s.pacingGain() << ",\"cwnd_gain\":" << s.cwndGain();
                // the project's BBR gives what the kernel's bbr_info gives (bit 0 of the
                // bandwidth is bbq's flag, as in its module)
                if (s.bw)
                    bbr << ",\"bw_bytes_per_s\":" << s.bw() << ",\"min_rtt_us\":" << s.minRttUs();
                bbr << "}";
            }
            std::fprintf(f.sndOut,
                         "{\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\",\"dport\":%u,\"state\":\"%s\","
                         "\"cc\":\"%s\",\"info\":{%s}%s}",
                         f.sndName.c_str(), 49152 + f.n, f.rcvName.c_str(), BASE_PORT + f.n, s.state.c_str(),
                         f.cc.c_str(), info.str().c_str(), bbr.str().c_str());
        }
        std::fprintf(f.sndOut, "]}\n");
        // receiver: once it has accepted the connection
        std::list<Ptr<Socket>> accepted = f.sink->GetAcceptedSockets();
        uint64_t received = f.sink->GetTotalRx();
        bool rcvOpen = !accepted.empty() && (running || received > f.lastReceived);
        f.lastReceived = received;
        std::fprintf(f.rcvOut, "{\"t\":%.6f,\"late_ms\":0,\"socks\":[", t);
        if (rcvOpen)
            std::fprintf(f.rcvOut,
                         "{\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\",\"dport\":%u,"
                         "\"state\":\"established\",\"cc\":\"%s\",\"info\":{\"bytes_received\":%llu,"
                         "\"segs_out\":%llu,\"data_segs_in\":%llu}}",
                         f.rcvName.c_str(), BASE_PORT + f.n, f.sndName.c_str(), 49152 + f.n, f.cc.c_str(),
                         (unsigned long long)received, (unsigned long long)f.rcvCounts.segsOut,
                         (unsigned long long)f.rcvCounts.dataSegsIn);
        std::fprintf(f.rcvOut, "]}\n");
    }
    if (t + g.sampleS <= g.endS + 1e-9)
        Simulator::Schedule(Seconds(g.sampleS), &SampleSockets);
}

// A scheduled path change (spec `changes`): the path's new RTT, half each way, for
// packets that enter the access link from now on.
void
SetRtt(Flow* f, double rttMs)
{
    f->access->SetAttribute("Delay", TimeValue(MicroSeconds(std::llround(rttMs * 500.0))));
    f->rttMs = rttMs;
}

void
OnPing(Flow* f, Time rtt)
{
    f->pings.push_back(rtt.GetSeconds() * 1e3);
}

void
OnLossPass(Ptr<const Packet> p)
{
    g.lossSeen++;
    g.lossSeenBytes += p->GetSize();
}

void
OnLossDrop(Ptr<const Packet>)
{
    g.lossSeen++;
    g.lossDropped++;
}

template <class CC>
Ptr<TcpCongestionOps>
MakeObserved(SenderState* s)
{
    Ptr<Observed<CC>> cc = CreateObject<Observed<CC>>();
    cc->obs = s;
    return cc;
}

// A variant of the project's BBR, observed: its gains and bbr_info's bandwidth and
// min_rtt for the sampler, its per-ACK records into `trace` (or none).
template <class V>
Ptr<TcpCongestionOps>
MakeVariant(const std::string& name, SenderState* s, const bbrlab::VariantParams& params, FILE* trace,
            bool linuxRateInterval)
{
    Ptr<Observed<V>> cc = CreateObject<Observed<V>>();
    cc->obs = s;
    std::string problems = cc->Configure(params);
    if (!problems.empty())
    {
        std::fprintf(stderr, "dumbbell: %s's parameters:%s\n", name.c_str(), problems.c_str());
        std::exit(2);
    }
    cc->trace = trace;
    cc->linuxRateInterval = linuxRateInterval;
    V* raw = PeekPointer(cc);
    s->pacingGain = [raw]() { return raw->PacingGain() / 256.0; };
    s->cwndGain = [raw]() { return raw->CwndGain() / 256.0; };
    s->bw = [raw]() { return raw->BwBytesPerSec(); };
    s->minRttUs = [raw]() { return raw->MinRttUs(); };
    return cc;
}

// The congestion controls that pace themselves, as BBR does in Linux without fq.
bool
PacesItself(const std::string& name)
{
    return name == "bbr" || name == "bbq" || name == "bbq_drain" || name == "adaptive_bbr" || name == "bbr_e";
}

Ptr<TcpCongestionOps>
MakeCongestionControl(const std::string& name, SenderState* s, const bbrlab::VariantParams& params,
                      FILE* trace, bool linuxRateInterval, bool projectBbr)
{
    if (name == "bbr" && projectBbr)  // the Linux rules: the project's BBR v1, not TcpBbr
        return MakeVariant<bbrlab::Bbr>(name, s, params, trace, linuxRateInterval);
    if (name == "bbq")
        return MakeVariant<bbrlab::Bbq>(name, s, params, trace, linuxRateInterval);
    if (name == "bbq_drain")
        return MakeVariant<bbrlab::BbqDrain>(name, s, params, trace, linuxRateInterval);
    if (name == "adaptive_bbr")
        return MakeVariant<bbrlab::AdaptiveBbr>(name, s, params, trace, linuxRateInterval);
    if (name == "bbr_e")
        return MakeVariant<bbrlab::BbrE>(name, s, params, trace, linuxRateInterval);
    if (name == "bbr")
    {
        Ptr<ObservedBbr> cc = CreateObject<ObservedBbr>();
        cc->obs = s;
        cc->trace = trace;
        ObservedBbr* raw = PeekPointer(cc);
        s->pacingGain = [raw]() { return raw->PacingGainNow(); };
        s->cwndGain = [raw]() { return raw->CwndGainNow(); };
        return cc;
    }
    if (name == "cubic")
        return MakeObserved<TcpCubic>(s);
    if (name == "reno")
        return MakeObserved<TcpLinuxReno>(s);
    std::fprintf(stderr, "dumbbell: congestion control %s is not available in ns-3\n", name.c_str());
    std::exit(2);
}

FILE*
OpenOut(const std::string& dir, const std::string& name)
{
    std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f)
    {
        std::fprintf(stderr, "dumbbell: cannot write %s\n", path.c_str());
        std::exit(2);
    }
    return f;
}

std::string
Rate(double bps)
{
    std::ostringstream o;
    o << (uint64_t)std::llround(bps) << "bps";
    return o.str();
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 2)
    {
        std::fprintf(stderr, "usage: dumbbell CONFIG\n");
        return 2;
    }
    RunConfig c = ReadConfig(argv[1]);
    std::string out = c.Str("out_dir");
    int nFlows = (int)c.Num("flows");
    uint32_t mtu = (uint32_t)c.Num("mtu_bytes");
    g.mss = (uint32_t)c.Num("mss_bytes");
    g.leadS = c.Num("lead_s");
    g.endS = g.leadS + c.Num("duration_s") + c.Num("tail_s");
    g.sampleS = c.Num("sample_interval_s");
    g.queueSampleS = c.Num("queue_sample_interval_s");
    double rateBps = c.Num("bottleneck_rate_bps");
    double lossRate = c.Num("loss_rate", 0);
    bool paceAll = c.Num("pace_all") != 0;
    // the Linux rules (Ns3Backend(rules="linux")): `cc: bbr` is the project's BBR v1
    bool projectBbr = c.Num("project_bbr", 0) != 0;

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun((uint64_t)c.Num("seed"));

    // TCP as the kernel testbed's Linux 6.1 has it where ns-3 has a switch for it.
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(g.mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue((uint32_t)c.Num("socket_buffer_bytes")));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue((uint32_t)c.Num("socket_buffer_bytes")));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue((uint32_t)c.Num("delack_count")));
    // Linux's delayed-ACK timer starts at TCP_DELACK_MIN (40 ms); ns-3's default is 200 ms.
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(c.Num("delack_timeout_ms"))));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    // Without the timestamp option: with it, ns-3 3.37 takes its RTT samples from the
    // option's millisecond clock (a 10.12-ms path measures 10 or 11 ms); without it,
    // from its own send times at full resolution, as Linux does (microseconds).
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpPrrRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocketState::PacingSsRatio", UintegerValue(200));
    Config::SetDefault("ns3::TcpSocketState::PacingCaRatio", UintegerValue(120));

    // nodes
    Ptr<Node> sw1 = CreateObject<Node>(), sw2 = CreateObject<Node>();
    NodeContainer all(sw1, sw2);
    for (int i = 1; i <= nFlows; i++)
    {
        auto f = std::make_unique<Flow>();
        std::string k = "flow." + std::to_string(i) + ".";
        f->n = i;
        f->cc = c.Str(k + "cc");
        f->rttMs = c.Num(k + "rtt_ms");
        f->startS = c.Num(k + "start_s");
        f->stopS = c.Num(k + "stop_s");
        f->accessBps = c.Num(k + "access_rate_bps");
        f->snd = CreateObject<Node>();
        f->rcv = CreateObject<Node>();
        all.Add(f->snd);
        all.Add(f->rcv);
        g.flows.push_back(std::move(f));
    }
    InternetStackHelper stack;
    stack.Install(all);

    // bottleneck sw1 -> sw2: the queue disc holds the backlog, the device one packet
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(Rate(rateBps)));
    bottleneck.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    bottleneck.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer bnDevs = bottleneck.Install(sw1, sw2);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    addr.Assign(bnDevs);
    TrafficControlHelper tch;
    tch.Uninstall(bnDevs.Get(0));
    if (c.Str("aqm") == "red")
    {
        // RED as Linux's sch_red runs it (parameters computed by ns3_backend.py as tc
        // computes them): averaging over the byte backlog on every arrival, marks spaced
        // uniformly (no "wait"), no gentle region, a hard drop above the maximum, the
        // average decaying over idle time at the link's rate in packets of avpkt bytes.
        tch.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", StringValue(c.Str("buffer")),
                             "MinTh", DoubleValue(c.Num("red_min_bytes")),
                             "MaxTh", DoubleValue(c.Num("red_max_bytes")),
                             "QW", DoubleValue(c.Num("red_qw")),
                             "LInterm", DoubleValue(1.0 / c.Num("red_max_p")),
                             "MeanPktSize", UintegerValue(mtu),
                             "IdlePktSize", UintegerValue((uint32_t)c.Num("red_avpkt")),
                             "LinkBandwidth", DataRateValue(DataRate(Rate(rateBps))),
                             "Wait", BooleanValue(false), "Gentle", BooleanValue(false),
                             "UseHardDrop", BooleanValue(true), "UseEcn", BooleanValue(false));
    }
    else
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(c.Str("buffer")));
    }
    g.qdisc = tch.Install(bnDevs.Get(0)).Get(0);
    g.devQueue = DynamicCast<PointToPointNetDevice>(bnDevs.Get(0))->GetQueue();
    if (lossRate > 0)
    {
        // random loss on the data direction after the queue: what sw2 receives from the bottleneck
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
        em->SetRate(lossRate);
        em->AssignStreams(1000);
        bnDevs.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));
        bnDevs.Get(1)->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnLossDrop));
        bnDevs.Get(1)->TraceConnectWithoutContext("MacRx", MakeCallback(&OnLossPass));
    }

    // access links: the path's RTT, half each way, on the sender's link
    for (auto& fp : g.flows)
    {
        Flow& f = *fp;
        PointToPointHelper access;
        access.SetDeviceAttribute("DataRate",
                                  StringValue(Rate(f.accessBps > 0 ? f.accessBps : c.Num("fast_link_bps"))));
        access.SetDeviceAttribute("Mtu", UintegerValue(mtu));
        access.SetChannelAttribute("Delay", TimeValue(MicroSeconds(std::llround(f.rttMs * 500.0))));
        // the address helper below gives the device ns-3's default queue disc (pfifo_fast,
        // 1000 packets), which holds the queue when the link is slower than the sender
        access.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
        NetDeviceContainer a = access.Install(f.snd, sw1);
        f.access = a.Get(0)->GetChannel();
        std::ostringstream net;
        net << "10.1." << f.n << ".0";
        addr.SetBase(net.str().c_str(), "255.255.255.0");
        f.sndAddr = addr.Assign(a).GetAddress(0);

        PointToPointHelper egress;
        egress.SetDeviceAttribute("DataRate", StringValue(Rate(c.Num("fast_link_bps"))));
        egress.SetDeviceAttribute("Mtu", UintegerValue(mtu));
        egress.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
        NetDeviceContainer e = egress.Install(sw2, f.rcv);
        std::ostringstream net2;
        net2 << "10.2." << f.n << ".0";
        addr.SetBase(net2.str().c_str(), "255.255.255.0");
        f.rcvAddr = addr.Assign(e).GetAddress(1);
        std::ostringstream sndName, rcvName;
        sndName << f.sndAddr;
        rcvName << f.rcvAddr;
        f.sndName = sndName.str();
        f.rcvName = rcvName.str();
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // pings before time zero, then the flows
    for (auto& fp : g.flows)
    {
        Flow& f = *fp;
        Ptr<V4Ping> ping = CreateObject<V4Ping>();
        ping->SetAttribute("Remote", Ipv4AddressValue(f.rcvAddr));
        ping->SetAttribute("Interval", TimeValue(Seconds(c.Num("ping_interval_s"))));
        f.snd->AddApplication(ping);
        ping->TraceConnectWithoutContext("Rtt", MakeBoundCallback(&OnPing, &f));
        ping->SetStartTime(Seconds(0.0));
        ping->SetStopTime(Seconds(c.Num("ping_stop_s")));

        uint16_t port = BASE_PORT + f.n;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(f.rcv);
        sinkApp.Start(Seconds(0.0));
        f.sink = DynamicCast<PacketSink>(sinkApp.Get(0));
        f.sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnFirstRead, &f.rcvCounts, PeekPointer(f.sink)));

        f.socket = DynamicCast<TcpSocketBase>(Socket::CreateSocket(f.snd, TcpSocketFactory::GetTypeId()));
        bbrlab::VariantParams params;
        std::string pk = "flow." + std::to_string(f.n) + ".param.";
        for (const auto& kv : c.kv)
            if (kv.first.compare(0, pk.size(), pk) == 0)
                params[kv.first.substr(pk.size())] = kv.second;
        if (c.Num("cc_trace", 0) != 0)
        {
            // per-ACK records of the project's BBR (tests read them; not part of tidy data)
            f.ccTrace = OpenOut(out, "cc_trace_" + std::to_string(f.n) + ".csv");
            if (f.cc == "bbr" && !projectBbr)
                std::fprintf(f.ccTrace, "t_s,state,pacing_gain,cwnd_gain,delivery_rate_bps,valid,"
                                        "ns3_interval_us,linux_interval_us,delivered_pkts,pacing_bps,"
                                        "inflight,cwnd,ca_state,rtt_us\n");
            else
                std::fprintf(f.ccTrace, "t_s,mode,pacing_gain,cwnd_gain,cycle_idx,min_rtt_us,rtt_us,"
                                        "prior_inflight,bw,delivery_rate,flag,q_256,bdp_256,"
                                        "ns3_interval_us,linux_interval_us,delivered_pkts,pacing_bps,"
                                        "inflight,cwnd,ca_state,losses,acked,ack_seq,high_seq,rtos,rto_ms,"
                                        "tx_segs,retx_segs,lost_out,sacked_out,retrans_out\n");
        }
        Ptr<TcpCongestionOps> cc = MakeCongestionControl(f.cc, &f.obs, params, f.ccTrace,
                                                         c.Num("linux_rate_interval", 0) != 0, projectBbr);
        if (Ptr<bbrlab::BbrV1> bbr = DynamicCast<bbrlab::BbrV1>(cc))
        {
            // the project's BBR reads the socket's scoreboard: Linux's loss count (an
            // experiment) and the trace's columns
            bbr->linuxLosses = c.Num("linux_losses", 0) != 0;
            if (f.ccTrace || bbr->linuxLosses)
                bbr->Socket(f.socket);
        }
        f.socket->SetCongestionControlAlgorithm(cc);
        // Pacing: with the fq qdisc (sender_qdisc: fq) Linux paces every flow at its
        // socket's pacing rate; without it only BBR (and its variants) paces itself.
        f.socket->SetPacingStatus(paceAll || PacesItself(f.cc));
        f.socket->TraceConnectWithoutContext("State", MakeBoundCallback(&OnState, &f.obs));
        f.socket->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnRtt, &f.obs));
        f.socket->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, &f.obs));
        f.socket->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&OnHighestRxAck, &f.obs));
        Ptr<BulkSender> app = CreateObject<BulkSender>();
        app->Setup(f.socket, InetSocketAddress(f.rcvAddr, port), &f.obs,
                   (uint32_t)c.Num("socket_buffer_bytes"));
        f.snd->AddApplication(app);
        app->SetStartTime(Seconds(g.leadS + f.startS));
        app->SetStopTime(Seconds(g.leadS + f.stopS));

        f.sndOut = OpenOut(out, "sockets_snd" + std::to_string(f.n) + ".jsonl");
        f.rcvOut = OpenOut(out, "sockets_rcv" + std::to_string(f.n) + ".jsonl");
    }
    for (int k = 1; k <= (int)c.Num("changes", 0); k++)
    {
        std::string key = "change." + std::to_string(k) + ".";
        int n = (int)c.Num(key + "flow");
        if (n < 1 || n > nFlows)
        {
            std::fprintf(stderr, "dumbbell: change %d names flow %d of %d\n", k, n, nFlows);
            return 2;
        }
        Simulator::Schedule(Seconds(g.leadS + c.Num(key + "at_s")), &SetRtt, g.flows[n - 1].get(),
                            c.Num(key + "rtt_ms"));
    }
    g.qOut = OpenOut(out, "qdisc.jsonl");
    Simulator::Schedule(Seconds(g.leadS), &SampleQueue);
    Simulator::Schedule(Seconds(g.leadS), &SampleSockets);
    Simulator::Stop(Seconds(g.endS + 1e-6));
    Simulator::Run();
    g.events = Simulator::GetEventCount();
    Simulator::Destroy();

    for (auto& fp : g.flows)
    {
        Flow& f = *fp;
        std::fclose(f.sndOut);
        std::fclose(f.rcvOut);
        if (f.ccTrace)
            std::fclose(f.ccTrace);
        FILE* p = OpenOut(out, "ping_" + std::to_string(f.n) + ".txt");
        std::ostringstream from, to;
        from << f.sndAddr;
        to << f.rcvAddr;
        std::fprintf(p, "ns-3 V4Ping %s -> %s (simulated)\n", from.str().c_str(), to.str().c_str());
        for (size_t k = 0; k < f.pings.size(); k++)
            std::fprintf(p, "reply from %s: icmp_seq=%zu time=%.3f ms\n", to.str().c_str(), k, f.pings[k]);
        std::fclose(p);
    }
    std::fclose(g.qOut);
    if (lossRate > 0)
    {
        // One entry in the shape of the kernel testbed's loss.json (tc's statistics line),
        // from the loss model's own counts: packets passed and packets dropped.
        FILE* l = OpenOut(out, "loss.json");
        std::fprintf(l,
                     "[{\"dev\":\"sw2 bottleneck receive\",\"model\":\"ns3::RateErrorModel\","
                     "\"tc\":\"Sent %llu bytes %llu pkt (dropped %llu, overlimits 0 requeues 0)\"}]\n",
                     (unsigned long long)g.lossSeenBytes, (unsigned long long)(g.lossSeen - g.lossDropped),
                     (unsigned long long)g.lossDropped);
        std::fclose(l);
    }
    FILE* s = OpenOut(out, "ns3.json");
    std::fprintf(s,
                 "{\"ns3_version\":\"%u.%u.%u\",\"simulated_s\":%.6f,\"events\":%llu,\"mss_bytes\":%u}\n",
                 Version::Major(), Version::Minor(), Version::Patch(), g.endS,
                 (unsigned long long)g.events, g.mss);
    std::fclose(s);
    return 0;
}
