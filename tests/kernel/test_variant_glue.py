"""The variants' kernel glue on the host: what each patched tcp_bbr.c reads from the socket and the
ACK's rate sample, and what it does with the result of its *_math.h.

tests/kernel/test_variant_math.py tests the math headers; here the whole patched module
(kernel/variants/<name>.patch applied to the kernel's tcp_bbr.c) is compiled against the kernel-API
stand-ins of kernel/tests/glue/ (tests/kernel/variant_glue.py builds and loads it) and driven through
its tcp_congestion_ops: a socket is put into a chosen state, ACKs with constructed rate samples are
processed by cong_control (bbr_main), and the decision is read where samplers read it
(INET_DIAG_BBRINFO, the pacing rate) and in struct bbr. Each expected value comes from the paper (or,
where the module departs from it, from the departure kernel/variants/README.md states), not from the
code. bench/glue_mutations.py applies the seven wrong glues of a re-audit and eight more to the patches, one at
a time, and records that these tests fail for each (bench/results/glue-mutations-*.md).

Skipped, with the reason, when gcc or patch is missing or no kernel source is at hand
(build/kernel/src, or the linux-source-6.1 tarball).
"""
import ctypes

import pytest

import variant_glue as vg
from test_variant_math import cubic_rate_eq8
from variant_glue import BBR, BBR_UNIT, FCA, SOCK, TCP

NOW = 100_000_000                      # us: the connection's clock at the first ACK (100 s)
MIN_RTT = 10_000                       # us
BW_PPS = 10_000                        # packets/s: BDP = 100 packets at 10 ms


@pytest.fixture(scope="module")
def glue(tmp_path_factory):
    """glue(variant) -> Glue of the variant's patched tcp_bbr.c ("bbr": the unpatched one), built once."""
    tmp = tmp_path_factory.mktemp("glue")
    try:
        vg.check_tools()
        src = vg.kernel_sources(tmp)
    except vg.Unavailable as e:
        pytest.skip(str(e))
    built = {}

    def get(variant):
        if variant not in built:
            built[variant] = vg.Glue(vg.build(variant, src, tmp))
        return built[variant]
    return get


def steady(g, srtt_us, cycle_idx=2, pacing_gain=1.0, min_rtt_us=MIN_RTT, bw_pps=BW_PPS, **tcp):
    """A connection in PROBE_BW (a cruise phase by default) at NOW."""
    sk = g.socket(srtt_us, min_rtt_us, NOW, delivered=1_000_000, **tcp)
    vg.probe_bw(g, sk, bw_pps, cycle_idx, pacing_gain)
    return sk


def sample(rtt_us, prior_in_flight=100, delivered=100, interval_us=MIN_RTT, **more):
    """An ACK's rate sample: `delivered` packets over interval_us (BW_PPS by default), no round end."""
    return dict(rtt_us=rtt_us, prior_in_flight=prior_in_flight, delivered=delivered, interval_us=interval_us,
                prior_delivered=1_000_000 - delivered, acked_sacked=1, **more)


# --- BBQ (Ma et al., Sec. V-B): the queue is decided from each RTT sample ----------------------

@pytest.mark.parametrize("rtt_sample, srtt, queue", [
    (10_100, 10_000, 1),   # sample >= (1 + 0.8 %) min_rtt = 10.08 ms: a persistent queue, whatever srtt says
    (10_000, 15_000, 0),   # sample at min_rtt: the pipe is under-utilised, though srtt is 1.5 min_rtt
    (10_079, 12_000, 0),   # just below the threshold
    (10_080, 10_000, 1),   # at it
])
def test_bbq_queue_from_the_rtt_sample(glue, rtt_sample, srtt, queue):
    """"Every RTT sample decides": RTT >= (1 + beta) MinRTT with beta = 0.8 % (Sec. V-B); exposed as
    bit 0 of bbr_bw_lo (kernel/variants/README.md)."""
    g = glue("bbq")
    sk = steady(g, srtt)
    g.ack(sk, **sample(rtt_sample))
    assert g.get(sk, BBR, "bbq_queue") == queue
    assert g.info(sk)["bw_lo"] & 1 == queue
    g.free(sk)


def test_bbq_ack_without_rtt_sample_keeps_the_decision(glue):
    g = glue("bbq")
    sk = steady(g, 10_000)
    g.ack(sk, **sample(10_500))
    g.ack(sk, **sample(-1))                       # no RTT sample on this ACK
    assert g.get(sk, BBR, "bbq_queue") == 1
    g.free(sk)


@pytest.mark.parametrize("rtt_sample, advances", [(10_500, True), (10_000, False)])
def test_bbq_probe_capped_at_alpha_only_with_a_queue(glue, rtt_sample, advances):
    """Sec. V-C: with a queue the probe (gain 1.25) lasts rho = min(min_rtt, alpha) = alpha = 3 ms; without
    one it is BBR's (one min_rtt, 10 ms). 3.5 ms into the probe: over with a queue, still on without."""
    g = glue("bbq")
    sk = steady(g, 10_000, cycle_idx=0, pacing_gain=1.25)
    g.set(sk, BBR, cycle_mstamp=NOW - 3_500)
    g.ack(sk, **sample(rtt_sample))
    assert (g.get(sk, BBR, "cycle_idx") == 1) == advances
    assert g.info(sk)["pacing_gain"] == (192 if advances else 320)
    g.free(sk)


# --- BBR-E (Kim et al., Algorithm 2): cwnd gain from the last RTT sample -------------------------

@pytest.mark.parametrize("rtt_sample, srtt, gain", [
    (10_000, 20_000, 2.0),   # RTT <= RTprop
    (14_000, 10_000, 1.5),   # RTprop < RTT < alpha RTprop (alpha = 1.5)
    (16_000, 10_000, 1.0),   # RTT >= alpha RTprop
])
def test_bbr_e_gain_from_the_rtt_sample(glue, rtt_sample, srtt, gain):
    """Alg. 2 compares the RTT of the ACK just received with RTprop; the smoothed RTT plays no part."""
    g = glue("bbr_e")
    sk = steady(g, srtt)
    g.ack(sk, **sample(rtt_sample))
    assert g.info(sk)["cwnd_gain"] == gain * BBR_UNIT
    g.free(sk)


def test_bbr_e_extra_acked_cwnd_0_drops_the_aggregation_allowance(glue):
    """extra_acked_cwnd=0: the cwnd target is cwnd_gain x BDP (+ BBR's quantization budget) as in the
    paper's Linux 4.14; =1 adds 6.1's allowance, here the 50 packets of extra_acked
    (kernel/variants/README.md, "BBR-E and ACK aggregation")."""
    g = glue("bbr_e")
    cwnd = {}
    try:
        for on in (1, 0):
            assert g.param("extra_acked_cwnd", on) == 0
            sk = steady(g, 10_000, snd_cwnd=1000)
            g.set(sk, BBR, **{"extra_acked[0]": 50, "extra_acked[1]": 50})
            g.ack(sk, **sample(10_000))                           # RTT <= RTprop: gain 2
            cwnd[on] = g.get(sk, TCP, "snd_cwnd")
            g.free(sk)
    finally:
        g.param("extra_acked_cwnd", 1)
    bdp = BW_PPS * MIN_RTT / 1e6
    assert 2 * bdp <= cwnd[0] <= 2 * bdp + 3 * 127 + 2, cwnd     # budget: 3 TSO bursts of <= 127
    assert cwnd[1] - cwnd[0] == 50, cwnd


# --- Adaptive-BBR (Yang et al., Alg. 1, Eqs. 5-6) ---------------------------------------------------

def eq5(q_pkts, bdp_pkts, alpha=3):
    """Algorithm 1 / Eq. 5: 1.25 if Q == 0 (Q < 1 packet, the module's reading), else
    1 + (alpha - Q) / (8 BDP), within [0.75, 1.25]."""
    if q_pkts < 1:
        return 1.25
    return min(max(1 + (alpha - q_pkts) / (8 * bdp_pkts), 0.75), 1.25)


def test_abbr_bdp_from_the_max_filter(glue):
    """Eq. 6: BDP = S_hat * RTprop, S_hat the maximum delivery rate of the last 10 RTTs (100 packets
    here), not this ACK's delivery rate (50 packets per RTprop). Q = inflight - RTprop * d = 150 - 50."""
    g = glue("adaptive_bbr")
    sk = steady(g, 12_000)
    g.ack(sk, **sample(12_000, prior_in_flight=150, delivered=50))
    want = eq5(150 - 50, BW_PPS * MIN_RTT / 1e6)
    assert abs(g.info(sk)["pacing_gain"] / BBR_UNIT - want) <= 0.5 / BBR_UNIT, (g.info(sk), want)
    g.free(sk)


def held_socket(g):
    """The retransmit queue, oldest first: 5 segments of 10 packets that have departed, then the 10
    newest packets still held in the sender's fq (departure time after now); 50 packets delivered per
    RTprop."""
    sk = steady(g, 12_000)
    for i in range(5):
        g.rtx_push(sk, (NOW - 5_000 + i * 1_000) * 1000, segs=10)     # departed
    for i in range(10):
        g.rtx_push(sk, (NOW + 100 + i * 100) * 1000)                  # not yet departed
    return sk


@pytest.mark.parametrize("prior_in_flight", [60, 80])
def test_abbr_inflight_leaves_out_held_segments(glue, prior_in_flight):
    """inflight is the data on the path (the paper's ns-3 sender paces inside TCP;
    kernel/variants/README.md, "Adaptive-BBR and fq"): prior_in_flight less the 10 held packets, and
    only those. 60: Q = 60 - 10 - 50 = 0, gain 1.25; 80: Q = 20."""
    g = glue("adaptive_bbr")
    sk = held_socket(g)
    g.ack(sk, **sample(12_000, prior_in_flight=prior_in_flight, delivered=50))
    want = eq5(prior_in_flight - 10 - 50, BW_PPS * MIN_RTT / 1e6)
    assert abs(g.info(sk)["pacing_gain"] / BBR_UNIT - want) <= 0.5 / BBR_UNIT, (g.info(sk), want)
    g.free(sk)


def test_abbr_inflight_departed_0_counts_them(glue):
    """inflight_departed=0 (the module's first version): Q = 60 - 50 = 10 packets."""
    g = glue("adaptive_bbr")
    assert g.param("inflight_departed", 0) == 0
    try:
        sk = held_socket(g)
        g.ack(sk, **sample(12_000, prior_in_flight=60, delivered=50))
        want = eq5(10, BW_PPS * MIN_RTT / 1e6)
        assert abs(g.info(sk)["pacing_gain"] / BBR_UNIT - want) <= 0.5 / BBR_UNIT
        g.free(sk)
    finally:
        assert g.param("inflight_departed", 1) == 0


# --- bbq_drain (Ma et al., Sec. V-A): drain to one BDP, no time limit ----------------------------

@pytest.mark.parametrize("variant, inflight, leaves", [
    ("bbq_drain", 300, False),   # 3 BDP in flight two min_rtt into the drain: keep draining
    ("bbq_drain", 100, True),    # one BDP: drained
    ("bbr", 300, True),          # control: BBR ends the drain after one min_rtt
])
def test_bbq_drain_has_no_time_limit(glue, variant, inflight, leaves):
    """"forces each flow to drain inflight to exactly one up-to-date BDP estimate" (Sec. V-A), where BBR
    stops after one MinRTT "whichever comes first"."""
    g = glue(variant)
    sk = steady(g, 10_000, cycle_idx=1, pacing_gain=0.75)
    g.set(sk, BBR, cycle_mstamp=NOW - 2 * MIN_RTT)
    g.ack(sk, **sample(10_000, prior_in_flight=inflight))
    assert (g.get(sk, BBR, "cycle_idx") != 1) == leaves
    assert g.info(sk)["pacing_gain"] == (BBR_UNIT if leaves else 0.75 * BBR_UNIT)
    g.free(sk)


# --- BBR-FCA (Utsumi & Hasegawa, Sec. IV-V) ------------------------------------------------------

FCA_MIN_RTT = 20_000                   # us
FCA_SRTT = 40_000                      # us: the smoothed RTT, twice min_rtt (a standing queue)
T_FC, T_NFC, RECOVERY = 2.0, 1.2, 0.04  # s: alternating CA phases (mean 1.6, sd 0.4), recovery


class FcaRun:
    """A bbr_fca connection in PROBE_BW that lives through loss events: every ACK a round, each a rate
    sample of `rate` packets/s; losses enter Recovery (set_state, then an ACK) and leave it after
    RECOVERY. The module times the phases itself (fca_ca_state)."""

    def __init__(self, g, bw_pps, srtt_us=FCA_SRTT):
        self.g, self.now, self.srtt = g, NOW, srtt_us
        self.sk = g.socket(srtt_us, FCA_MIN_RTT, NOW, delivered=1_000_000)
        vg.probe_bw(g, self.sk, bw_pps, cycle_idx=2, pacing_gain=1.0)
        g.set(self.sk, BBR, next_rtt_delivered=0)
        self.ack(bw_pps)

    def ack(self, rate_pps, at_us=None):
        """One ACK at at_us (default: now) ending a round, delivering at rate_pps."""
        g, sk = self.g, self.sk
        self.now = at_us if at_us is not None else self.now
        g.set_clock(sk, self.now)
        g.set(sk, BBR, min_rtt_stamp=g.jiffies.value)     # RTprop confirmed: no PROBE_RTT in the run
        delivered = g.get(sk, TCP, "delivered")
        g.set(sk, TCP, delivered=delivered + 100)
        g.ack(sk, rtt_us=self.srtt, delivered=100, interval_us=round(100 / rate_pps * 1e6),
              prior_delivered=delivered, prior_in_flight=50, acked_sacked=1)

    def losses(self, rate_pps, phases=10):
        """A first loss (it ends nothing timed), then `phases` CA phases alternating T_FC and T_NFC, each
        ended by a loss and followed by a recovery of RECOVERY; returns in Open just after the last."""
        for k in range(phases + 1):
            self.g.set_ca_state(self.sk, 3)                # TCP_CA_Recovery
            self.ack(rate_pps)
            self.ack(rate_pps, self.now + round(RECOVERY * 1e6))
            self.g.set_ca_state(self.sk, 0)
            self.ack(rate_pps)
            if k < phases:
                self.ack(rate_pps, self.now + round((T_FC if k % 2 == 0 else T_NFC) * 1e6))

    def b_cubic(self):
        """The module's estimate B, packets/s (struct fca's b_cubic)."""
        return self.g.get(self.sk, FCA, "b_cubic") / 1024


def eq8():
    """Eqs. 4-8 with R the flow's smoothed RTT (Sec. V-A: "we use the smoothed RTT maintained by the
    BBR-FCA flow"), floating point (test_variant_math's reference), packets/s."""
    return cubic_rate_eq8(T_FC, T_NFC, RECOVERY, FCA_SRTT / 1e6)


def test_fca_rate_model_uses_the_smoothed_rtt(glue):
    """B from the loss phases the module timed itself, with R = srtt (40 ms), within the fixed-point
    precision (2e-4, kernel/variants/README.md) plus 1e-3; with R = min_rtt it would be far off. The
    highest rate measured (4 B) does not bind. While in force: bit 0 of bbr_bw_lo set, bbr_bw = B."""
    g = glue("bbr_fca")
    want = eq8()
    run = FcaRun(g, 4 * want)
    run.losses(4 * want)
    assert g.get(run.sk, BBR, "fca_active") == 1
    assert abs(run.b_cubic() - want) / want < 1.2e-3, (run.b_cubic(), want)
    info = g.info(run.sk)
    assert info["bw_lo"] & 1 == 1
    mss = g.get(run.sk, TCP, "mss_cache")
    assert abs(((info["bw_hi"] << 32 | info["bw_lo"]) - want * mss) / (want * mss)) < 1.2e-3
    g.free(run.sk)


def test_fca_bound_uses_the_maximum_measured_rate(glue):
    """With the optional cap (bw_cap=1, kernel/variants/README.md) the estimate is capped at the
    highest delivery rate the connection has measured: 2 B measured early, then only B/2 for
    longer than the max filter's 10 rounds; the cap is 2 B, so B stands."""
    g = glue("bbr_fca")
    want = eq8()
    try:
        assert g.param("bw_cap", 1) == 0
        run = FcaRun(g, 2 * want)
        run.losses(0.5 * want)
        for _ in range(12):                                   # > bbr_bw_rtts rounds at B/2
            run.ack(0.5 * want, run.now + 1_000)
        assert g.bw_filter(run.sk) < vg.bw_units(0.6 * want)  # the filter forgot 2 B
        assert abs(run.b_cubic() - want) / want < 1.2e-3, (run.b_cubic(), want)
        g.free(run.sk)
    finally:
        g.param("bw_cap", 0)


@pytest.mark.parametrize("cap", [0, 1])
def test_fca_bound_binds_only_when_asked(glue, cap):
    """Never measured more than B/2: the paper's estimate (Eq. 8) stands by default (bw_cap=0:
    the highest rate a flow measured bounds the link's rate from below, not a competitor's);
    with bw_cap=1 B is capped there."""
    g = glue("bbr_fca")
    want = eq8()
    try:
        assert g.param("bw_cap", cap) == 0
        run = FcaRun(g, 0.5 * want)
        run.losses(0.5 * want)
        expect = 0.5 * want if cap else want
        assert abs(run.b_cubic() - expect) / want < 1.2e-3, (run.b_cubic(), expect)
        g.free(run.sk)
    finally:
        g.param("bw_cap", 0)


def test_fca_paces_at_p_with_cwnd_gain_g_w(glue):
    """Eq. 12: p = w_target / R (R = srtt), paced less BBR's 1 % margin (kernel/variants/README.md);
    Eq. 13: g_w = w_target / (p RTprop) = srtt / min_rtt = 2; pacing gain 1."""
    g = glue("bbr_fca")
    run = FcaRun(g, 4 * eq8())
    run.losses(4 * eq8())
    mss = g.get(run.sk, TCP, "mss_cache")
    p = g.get(run.sk, FCA, "w_target") / 1024 / (FCA_SRTT / 1e6)
    rate = g.get(run.sk, SOCK, "sk_pacing_rate")
    assert abs(rate - p * mss * 0.99) / (p * mss) < 1e-3, (rate, p * mss * 0.99)
    info = g.info(run.sk)
    assert abs(info["cwnd_gain"] / BBR_UNIT - FCA_SRTT / FCA_MIN_RTT) <= 2 / BBR_UNIT, info
    assert info["pacing_gain"] == BBR_UNIT
    g.free(run.sk)


def test_fca_cwnd_target_is_w_target(glue):
    """Eqs. 11-13: the cwnd gain g_w makes BBR's target g_w x p x RTprop = w_target (plus BBR's
    quantization budget, 3 TSO bursts, and its ACK-aggregation allowance). srtt = 1.5 min_rtt here, so
    g_w = 1.5 and BBR's own gain 2 would give 4/3 w_target."""
    g = glue("bbr_fca")
    run = FcaRun(g, 4 * eq8(), srtt_us=30_000)
    run.losses(4 * eq8())
    g.set(run.sk, TCP, snd_cwnd=100_000)              # far above: the next ACK sets cwnd to the target
    run.ack(4 * eq8(), run.now + 1_000)
    assert g.get(run.sk, BBR, "fca_active") == 1
    w_target = g.get(run.sk, FCA, "w_target") / 1024
    extra = max(g.get(run.sk, BBR, "extra_acked[0]"), g.get(run.sk, BBR, "extra_acked[1]"))
    tso = max(2, g.get(run.sk, SOCK, "sk_pacing_rate") >> 10) // g.get(run.sk, TCP, "mss_cache") + 2
    over = g.get(run.sk, TCP, "snd_cwnd") - extra - w_target
    assert -1 <= over <= 3 * tso + 3, (g.get(run.sk, TCP, "snd_cwnd"), w_target, extra, tso)
    g.free(run.sk)


def test_fca_off_once_losses_are_no_longer_recent(glue):
    """Losses are recent for 2 t_fc (recent_pct = 200); after that the flow is BBR again: bit 0 clear,
    BBR's bandwidth estimate and cwnd gain in bbr_info, BBR's pacing rate."""
    g = glue("bbr_fca")
    run = FcaRun(g, 4 * eq8())
    run.losses(4 * eq8())
    run.ack(4 * eq8(), run.now + round(1.9 * T_FC * 1e6))
    assert g.get(run.sk, BBR, "fca_active") == 1
    run.ack(4 * eq8(), run.now + round(0.2 * T_FC * 1e6))
    assert g.get(run.sk, BBR, "fca_active") == 0
    info = g.info(run.sk)
    mss = g.get(run.sk, TCP, "mss_cache")
    assert info["bw_lo"] & 1 == 0 and info["cwnd_gain"] == 2 * BBR_UNIT
    assert abs(info["bw_lo"] - 4 * eq8() * mss) / (4 * eq8() * mss) < 1e-3
    g.free(run.sk)


def test_fca_rto_is_a_loss_event_when_it_fires(glue):
    """A retransmission timeout (set_state TCP_CA_Loss) ends the CA phase when it fires, not at the next
    ACK (which may come much later)."""
    g = glue("bbr_fca")
    run = FcaRun(g, 4 * eq8())
    run.losses(4 * eq8())
    phases = g.get(run.sk, FCA, "phase.n")
    rto = run.now + 1_500_000
    g.set_clock(run.sk, rto)
    g.set_ca_state(run.sk, 4)                                       # TCP_CA_Loss
    run.ack(4 * eq8(), rto + 300_000)
    assert g.get(run.sk, FCA, "phase.n") == phases + 1
    assert g.get(run.sk, FCA, "last_loss") == rto and g.get(run.sk, FCA, "phase_start") == rto
    g.free(run.sk)


def test_fca_without_memory_runs_as_bbr_and_counts(glue):
    """No memory for the per-connection state: plain BBR, counted in the read-only alloc_failures."""
    g = glue("bbr_fca")
    before = g.dll.glue_param_get(b"alloc_failures")
    ctypes.c_int.in_dll(g.dll, "glue_alloc_fail").value = 1
    try:
        run = FcaRun(g, 4 * eq8())
    finally:
        ctypes.c_int.in_dll(g.dll, "glue_alloc_fail").value = 0
    run.losses(4 * eq8())
    assert g.get(run.sk, BBR, "fca_id") == 0 and g.get(run.sk, BBR, "fca_active") == 0
    assert g.dll.glue_param_get(b"alloc_failures") == before + 1
    assert g.param("alloc_failures", 0) == -1                     # -EPERM
    g.free(run.sk)


@pytest.mark.parametrize("mutation", [*vg.MUTATIONS, *vg.EXTRA_MUTATIONS])
def test_each_mutation_names_one_line_of_its_patch(mutation, tmp_path):
    """bench/glue_mutations.py's wrong glues still apply to the patches as they are."""
    variants = vg.REPO / "kernel" / "variants"
    out = vg.mutate(variants, tmp_path / "v", mutation)
    patch = {**vg.MUTATIONS, **vg.EXTRA_MUTATIONS}[mutation][0]
    assert (out / patch).read_text() != (variants / patch).read_text()
