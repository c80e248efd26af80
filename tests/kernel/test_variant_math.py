"""Decision logic and fixed-point math of the BBR variant modules, on the host.

kernel/tests/harness.c compiles the very headers the patched modules include
(kernel/variants/*_math.h) with small stand-ins for kernel types; these tests
drive it through ctypes and compare it with straightforward floating-point (or
exact rational) evaluations of the papers' equations. Error bounds asserted
here are the ones kernel/variants/README.md states.
"""
import ctypes
import math
import pathlib
import random
import subprocess
import tarfile
from fractions import Fraction

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
VARIANTS = REPO / "kernel" / "variants"
HARNESS = REPO / "kernel" / "tests" / "harness.c"

u32, u64, s64, c_int = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int64, ctypes.c_int
SIGNATURES = {
    "h_bbq_queue_detected": (c_int, [u32, u32, u32]),
    "h_bbq_probe_len_us": (u32, [u32, u32, c_int]),
    "h_bbq_probe_ends": (c_int, [u64, u32, u32, c_int, c_int, c_int]),
    "h_bbr_e_cwnd_gain": (u32, [u32, u32, u32, u32]),
    "h_abbr_gain": (u32, [u32, u32, u64, u64, u32]),
    "h_abbr_backlog": (s64, [u32, u32, u64]),
    "h_fca_w0": (u64, [u64]),
    "h_fca_cubic_rate": (u64, [u64, u64, u64, u64]),
    "h_fca_w_target": (u64, [u64, u64, u64, u64, u64, u64, u32]),
    "h_fca_pacing_bw": (u32, [u64, u64]),
    "h_fca_cwnd_gain": (u32, [u64, u32, u32]),
    "h_fca_recent_loss": (c_int, [u64, u64, u32]),
    "h_fca_estimate": (None, [ctypes.POINTER(u64), c_int, ctypes.POINTER(u64), ctypes.POINTER(u64)]),
    "h_fca_window_n": (u32, [u32, c_int]),
    "h_int_sqrt64": (u32, [u64]),
}

BW_UNIT = 1 << 24
BBR_UNIT = 256
FCA_UNIT = 1024          # FCA_PKT_UNIT
ABBR_UNIT = 256          # ABBR_PKT_UNIT
C, BETA = 0.4, 0.3       # CUBIC, as in the paper


def build_harness(out_dir: pathlib.Path, mutation=None):
    """Compile the harness into out_dir; mutation = (header, old, new) compiles it against a copy of
    kernel/variants with one text replacement in one header (a deliberately wrong module)."""
    include = VARIANTS
    if mutation:
        header, old, new = mutation
        include = out_dir / "variants"
        include.mkdir()
        for h in VARIANTS.glob("*.h"):
            (include / h.name).write_text(h.read_text())
        text = (include / header).read_text()
        assert text.count(old) == 1, f"mutation {old!r} does not name one place in {header}"
        (include / header).write_text(text.replace(old, new))
    so = out_dir / "libvariantmath.so"
    res = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-shared",
                          "-fPIC", "-I", str(include), "-o", str(so), str(HARNESS)],
                         capture_output=True, text=True)
    assert res.returncode == 0, f"harness does not compile:\n{res.stderr}"
    dll = ctypes.CDLL(str(so))
    for name, (res_t, args) in SIGNATURES.items():
        fn = getattr(dll, name)
        fn.restype, fn.argtypes = res_t, args
    return dll


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return build_harness(tmp_path_factory.mktemp("harness"))


def test_shim_constants_match_kernel(lib):
    """kshim.h's BW_SCALE/BBR_SCALE must be tcp_bbr.c's (checked when a source is at hand)."""
    src = REPO / "build" / "kernel" / "src" / "net" / "ipv4" / "tcp_bbr.c"
    tarball = pathlib.Path("/usr/src/linux-source-6.1.tar.xz")
    if src.exists():
        text = src.read_text()
    elif tarball.exists():
        with tarfile.open(tarball) as tf:
            text = tf.extractfile("linux-source-6.1/net/ipv4/tcp_bbr.c").read().decode()
    else:
        pytest.skip("no tcp_bbr.c: neither build/kernel/src nor linux-source-6.1 is present")
    assert "#define BW_SCALE 24" in text and "#define BBR_SCALE 8" in text
    assert u32.in_dll(lib, "h_bw_scale").value == 24 and u32.in_dll(lib, "h_bbr_scale").value == 8


# --- BBQ (Ma et al., Sec. V-B) -------------------------------------------------------------

def bbq_queue_reference(rtt, min_rtt, beta_ppm):
    """Sec. V-B: the pipe is under-utilised iff RTT < (1 + beta) MinRTT; a queue persists otherwise."""
    return not Fraction(rtt) < (1 + Fraction(beta_ppm, 1_000_000)) * min_rtt


def bbq_probe_ends_reference(elapsed, min_rtt, alpha, queue, losses, inflight_full):
    """When a ProbeBW probing period (pacing gain 1.25) ends, from the paper (Sec. V-B/C):

    - with a persistent queue the probing period lasts rho = min(MinRTT, alpha); "instead of probing
      for MinRTT time" it lasts rho, whatever the inflight;
    - without one, "BBQ simply reduces to BBR". So does a queue with MinRTT <= alpha: then
      rho = MinRTT, BBR's own probing period, and BBR ends a probe only after one MinRTT and once
      inflight reached 1.25 BDP or packets were lost (tcp_bbr.c, bbr_is_next_cycle_phase).
    Time is compared as BBR does (strictly longer than the period)."""
    rho = min(min_rtt, alpha) if queue else min_rtt
    if rho == min_rtt:                         # BBR's probe
        return elapsed > min_rtt and (losses or inflight_full)
    return elapsed > rho


def bbq_cases(seed, n):
    rng = random.Random(seed)
    cases = []
    for m in (1, 999, 2999, 3000, 3001, 10_000, 50_000, 4_000_000_000 // 2):
        for a in (1, 3000, 15_000, 10_000_000):
            for e in {0, a - 1, a, a + 1, m - 1, m, m + 1, 2 * m, 2 * a}:
                cases += [(max(e, 0), m, a, q, l, f) for q in (0, 1) for l in (0, 1) for f in (0, 1)]
    for _ in range(20_000):
        m, a = rng.randrange(1, 200_000), rng.choice([3000, rng.randrange(1, 200_000)])
        cases.append((rng.randrange(0, 3 * max(m, a)), m, a, rng.randrange(2), rng.randrange(2), rng.randrange(2)))
    return cases


def bbq_mismatches(lib, limit=5) -> list:
    """Cases where the compiled BBQ logic disagrees with the paper's reference (queue detection,
    probe end, probe length); [] for a correct module."""
    bad = []
    rng = random.Random(1)
    queue_cases = [(rtt, m, b) for m in (1, 999, 10_000, 50_000, 4_000_000_000 // 2)
                   for b in (0, 5000, 8000, 10_000, 1_000_000)
                   for rtt in {m, m + 1, m * (1_000_000 + b) // 1_000_000, m * (1_000_000 + b) // 1_000_000 + 1,
                               max(m - 1, 0), 2 * m}]
    queue_cases += [(rng.randrange(1, 1 << 32), rng.randrange(1, 1 << 32), rng.randrange(0, 1_000_001))
                    for _ in range(20_000)]
    for rtt, m, b in queue_cases:
        rtt = min(rtt, 2**32 - 1)
        if bool(lib.h_bbq_queue_detected(rtt, m, b)) != bbq_queue_reference(rtt, m, b):
            bad.append(("queue", rtt, m, b))
    for case in bbq_cases(2, 20_000):
        if bool(lib.h_bbq_probe_ends(*case)) != bbq_probe_ends_reference(*case):
            bad.append(("probe_ends",) + case)
        elapsed, m, a, q, _, _ = case
        if elapsed == 0 and lib.h_bbq_probe_len_us(m, a, q) != (min(m, a) if q else m):
            bad.append(("probe_len", m, a, q))
        if len(bad) >= limit:
            break
    return bad[:limit]


def test_bbq_matches_the_paper(lib):
    """Queue detection (exact, rationals), probe length rho and the probe's end, against the reference."""
    assert bbq_mismatches(lib) == []


def test_bbq_capped_probe_keeps_bbrs_exit_when_min_rtt_is_below_alpha(lib):
    """min_rtt <= alpha: rho = min_rtt, so the probe is BBR's; it does not end after min_rtt while
    inflight is short of 1.25 BDP and nothing was lost, even with a queue."""
    assert not lib.h_bbq_probe_ends(2500, 2000, 3000, 1, 0, 0)
    assert lib.h_bbq_probe_ends(2500, 2000, 3000, 1, 0, 1) and lib.h_bbq_probe_ends(2500, 2000, 3000, 1, 1, 0)
    assert not lib.h_bbq_probe_ends(3000, 3000, 3000, 1, 0, 0)       # min_rtt == alpha: still BBR
    # alpha < min_rtt with a queue: ends once alpha has elapsed, whatever the inflight
    assert lib.h_bbq_probe_ends(3001, 50_000, 3000, 1, 0, 0) and not lib.h_bbq_probe_ends(3000, 50_000, 3000, 1, 0, 0)
    # no queue: BBR
    assert not lib.h_bbq_probe_ends(3001, 50_000, 3000, 0, 0, 1) and lib.h_bbq_probe_ends(50_001, 50_000, 3000, 0, 0, 1)


BBQ_MUTATIONS = {
    # the edge this reference was written for: the cap (and its exit) applied even when min_rtt <= alpha
    "cap without alpha < min_rtt": ("bbq_math.h", "return queue && alpha_us < min_rtt_us;", "return queue;"),
    "cap without a queue": ("bbq_math.h", "return queue && alpha_us < min_rtt_us;", "return alpha_us < min_rtt_us;"),
    "capped probe waits for inflight": ("bbq_math.h", "return elapsed_us > alpha_us;",
                                        "return elapsed_us > alpha_us && (losses || inflight_full);"),
    "capped probe lasts min_rtt": ("bbq_math.h", "return elapsed_us > alpha_us;", "return elapsed_us > min_rtt_us;"),
    "BBR exit ignores losses": ("bbq_math.h", "(losses || inflight_full)", "(inflight_full)"),
    "queue on RTT > threshold": ("bbq_math.h", "return (u64)rtt_us * 1000000 >=", "return (u64)rtt_us * 1000000 >"),
    "queue without the slack": ("bbq_math.h", "(1000000 + beta_ppm)", "1000000"),
}


@pytest.mark.parametrize("mutation", sorted(BBQ_MUTATIONS))
def test_bbq_reference_catches_a_wrong_module(mutation, tmp_path):
    assert bbq_mismatches(build_harness(tmp_path, BBQ_MUTATIONS[mutation]), limit=1), mutation


# --- BBR-E (Kim et al., Algorithms 1 and 2) ------------------------------------------------

def bbr_e_reference(rtt, prop, alpha_pct, algorithm):
    """Kim et al., Algorithm 1 (queue buildup suppression) and Algorithm 2 (BBR-E), as printed;
    algorithm 0 is BBR's constant cwnd gain of 2 (the module's plain-BBR baseline)."""
    alpha = Fraction(alpha_pct, 100)
    if algorithm == 0:
        return 2.0
    if algorithm == 1:
        return 2.0 if rtt < alpha * prop else 1.0
    if rtt <= prop:
        return 2.0
    if prop < rtt < alpha * prop:
        return 1.5
    return 1.0


def bbr_e_mismatches(lib, limit=5) -> list:
    rng = random.Random(2)
    cases = []
    for prop in (1, 100, 10_000, 100_000):
        for alpha in (101, 125, 150, 200, 400):
            edge = prop * alpha // 100
            cases += [(r, prop, alpha) for r in (0, prop - 1, prop, prop + 1, edge - 1, edge, edge + 1, 3 * prop)]
    cases += [(rng.randrange(0, 1 << 32), rng.randrange(1, 1 << 30), rng.randrange(101, 401)) for _ in range(20_000)]
    bad = []
    for rtt, prop, alpha in cases:
        rtt = max(rtt, 0)
        for algorithm in (0, 1, 2):
            got = lib.h_bbr_e_cwnd_gain(rtt, prop, alpha, algorithm) / BBR_UNIT
            if got != bbr_e_reference(rtt, prop, alpha, algorithm):
                bad.append((rtt, prop, alpha, algorithm, got))
                if len(bad) >= limit:
                    return bad
    return bad


def test_bbr_e_cwnd_gain_is_exact(lib):
    assert bbr_e_mismatches(lib) == []


BBR_E_MUTATIONS = {
    "alpha threshold inclusive": ("bbr_e_math.h", "(u64)rtt_us * 100 < (u64)prop_rtt_us", "(u64)rtt_us * 100 <= (u64)prop_rtt_us"),
    "middle gain 1.25": ("bbr_e_math.h", "BBR_UNIT * 3 / 2", "BBR_UNIT * 5 / 4"),
    "gain 2 only below propRTT": ("bbr_e_math.h", "if (rtt_us <= prop_rtt_us)", "if (rtt_us < prop_rtt_us)"),
    "RTT in ms, not us": ("bbr_e_math.h", "(u64)rtt_us * 100 <", "(u64)(rtt_us / 1000) * 100000 <"),
    "algorithm 1 keeps 1.5": ("bbr_e_math.h", "return below_alpha ? 2 * BBR_UNIT : BBR_UNIT;",
                              "return below_alpha ? 2 * BBR_UNIT : BBR_UNIT * 3 / 2;"),
}


@pytest.mark.parametrize("mutation", sorted(BBR_E_MUTATIONS))
def test_bbr_e_reference_catches_a_wrong_module(mutation, tmp_path):
    assert bbr_e_mismatches(build_harness(tmp_path, BBR_E_MUTATIONS[mutation]), limit=1), mutation


# --- Adaptive-BBR (Yang et al., Algorithm 1, Eq. 5) ----------------------------------------

def abbr_reference(inflight, min_rtt, rate, max_bw, alpha):
    """Eq. 5 in floating point, with the module's reading of "Q == 0" (Q < 1 packet) and clamp."""
    q = inflight - min_rtt * rate / BW_UNIT
    if q < 1:
        return 1.25, q
    bdp = max(min_rtt * max_bw / BW_UNIT, 1.0)
    return min(max(1 + (alpha - q) / (8 * bdp), 0.75), 1.25), q


def abbr_grid(n, seed):
    rng = random.Random(seed)
    for _ in range(n):
        min_rtt = rng.choice([1000, 5000, 20_000, 100_000, rng.randrange(100, 1_000_000)])
        max_bw = rng.randrange(1, 2**31)                # pkts/us << 24, up to 128 pkts/us
        bdp = min_rtt * max_bw / BW_UNIT
        rate = int(max_bw * rng.uniform(0.3, 1.0))
        inflight = max(0, int(min_rtt * rate / BW_UNIT + rng.uniform(-3, 3 * bdp / 8 + 10)))
        yield inflight, min_rtt, rate, max_bw, rng.choice([0, 3, 3, 10])


def test_abbr_backlog_precision(lib):
    """Q = inflight - RTprop * delivery rate: fixed point is at most 1/256 packet above the exact value."""
    for inflight, min_rtt, rate, _, _ in abbr_grid(20_000, 3):
        q = lib.h_abbr_backlog(inflight, min_rtt, rate) / ABBR_UNIT
        exact = inflight - Fraction(min_rtt * rate, BW_UNIT)
        assert 0 <= q - exact < Fraction(1, ABBR_UNIT), (inflight, min_rtt, rate)


def test_abbr_gain_matches_eq5(lib):
    """Gain within half a 1/256 step of Eq. 5 (BBR's pacing_gain resolution), except where Q is within
    1/256 packet of the 1-packet "Q == 0" threshold, which the truncation of D may move."""
    worst, near = 0.0, 0
    for args in abbr_grid(50_000, 4):
        want, q = abbr_reference(*args)
        got = lib.h_abbr_gain(*args) / BBR_UNIT
        if abs(q - 1) <= 1 / ABBR_UNIT:
            near += 1
            continue
        err = abs(got - want)
        worst = max(worst, err)
        assert err <= 0.5 / BBR_UNIT + 1e-9, (args, got, want)
    assert near < 100
    print(f"adaptive_bbr gain: max |fixed - Eq.5| = {worst * BBR_UNIT:.3f}/256")


def test_abbr_follows_eq5_not_the_listing(lib):
    """For 0 < Q < alpha the gain is above 1 (Eq. 5), not below (Algorithm 1's last branch)."""
    min_rtt, max_bw = 10_000, 1 << 20                  # BDP = 625 packets
    rate = max_bw
    d = min_rtt * rate // BW_UNIT
    assert lib.h_abbr_gain(d, min_rtt, rate, max_bw, 3) == BBR_UNIT * 5 // 4          # Q == 0
    assert lib.h_abbr_gain(d + 2, min_rtt, rate, max_bw, 300) > BBR_UNIT              # 0 < Q < alpha
    assert lib.h_abbr_gain(d + 600, min_rtt, rate, max_bw, 3) < BBR_UNIT              # Q > alpha
    assert lib.h_abbr_gain(d + 100_000, min_rtt, rate, max_bw, 3) == BBR_UNIT * 3 // 4  # floor


# --- BBR-FCA (Utsumi & Hasegawa, Sec. IV-V) ------------------------------------------------

def cubic_phase_times(w0, rtt):
    """Forward model: durations of FC and non-FC phases ending at window W0 (Eqs. 6, 7), seconds."""
    return (4 * BETA * w0 / C) ** (1 / 3) + rtt, (BETA * w0 / C) ** (1 / 3) + rtt


def cubic_rate_eq8(t_fc, t_nfc, r, rtt, gamma=0.5):
    """Eqs. 6-8 as printed, floating point; packets/s."""
    w0 = C / (4 * BETA) * (t_fc - rtt) ** 3
    w_fc = (2 - BETA) / (8 * BETA) * C * (t_fc - rtt) ** 3
    w_nfc = (4 - BETA) / (16 * BETA) * C * (t_fc - rtt) ** 3
    t = gamma * t_fc + (1 - gamma) * t_nfc
    w = (gamma * (t_fc - rtt) * w_fc + (1 - gamma) * max(t_nfc - rtt, 0) * w_nfc + rtt * w0) / t
    return (t * w / rtt + (1 - BETA) * w0) / (t + r)


def simpson(f, a, b, n=2000):
    h = (b - a) / n
    return h / 3 * (f(a) + f(b) + sum((4 if i % 2 else 2) * f(a + i * h) for i in range(1, n)))


def cubic_rate_integrated(w0, rtt, r):
    """Average sending rate of the window curve of Fig. 2, one FC and one non-FC phase, by numeric
    integration: packets sent (window / RTT over each CA phase, W0 for the RTT until the loss is
    detected, (1 - beta) W0 packets in each recovery) over the elapsed time."""
    k_fc = (BETA * w0 / (2 * C)) ** (1 / 3)           # Eq. 4
    k_nfc = (BETA * w0 / C) ** (1 / 3)                # Eq. 5
    t1, t2 = 2 * k_fc, k_nfc                          # both phases end when the window is back at W0
    sent = simpson(lambda t: C * (t - k_fc) ** 3 + (2 - BETA) / 2 * w0, 0, t1) / rtt
    sent += simpson(lambda t: C * (t - k_nfc) ** 3 + w0, 0, t2) / rtt
    sent += 2 * (w0 + (1 - BETA) * w0)                # the RTT at W0, the recovery
    return sent / (t1 + t2 + 2 * rtt + 2 * r)


MODEL_GRID = [(w0, rtt, r_rtts) for w0 in (2, 10, 100, 1000, 10_000, 100_000)
              for rtt in (0.005, 0.02, 0.04, 0.2, 1.0) for r_rtts in (1, 2)]


def fixed_cubic_rate(lib, t_fc, t_nfc, r, rtt):
    us = lambda s: round(s * 1e6)
    return lib.h_fca_cubic_rate(us(t_fc), us(t_nfc), us(r), us(rtt)) / FCA_UNIT


def test_fca_w0_precision(lib):
    """W0 = C/(4 beta) T^3 = T^3/3: below one unit (1/1024 packet) plus 1e-6 relative."""
    rng = random.Random(5)
    for t in [0, 1, 999, 10**6, 249 * 10**6, 250 * 10**6] + [rng.randrange(0, 250 * 10**6) for _ in range(5000)]:
        exact = Fraction(t, 10**6) ** 3 / 3
        got = Fraction(lib.h_fca_w0(t), FCA_UNIT)
        assert 0 <= exact - got <= Fraction(1, FCA_UNIT) + exact * Fraction(1, 10**6), t
    assert lib.h_fca_w0(10**9) == lib.h_fca_w0(250 * 10**6)   # clamped to FCA_T_MAX


def test_fca_closed_form_matches_window_integration():
    """Sanity check of the reference itself: the paper's closed forms (Eqs. 6-8) equal the numerically
    integrated window curve when FC and non-FC phases alternate (gamma = 0.5)."""
    for w0, rtt, r_rtts in MODEL_GRID:
        t_fc, t_nfc = cubic_phase_times(w0, rtt)
        closed = cubic_rate_eq8(t_fc, t_nfc, r_rtts * rtt, rtt)
        numeric = cubic_rate_integrated(w0, rtt, r_rtts * rtt)
        assert abs(closed - numeric) / numeric < 1e-6, (w0, rtt, r_rtts)


def test_fca_cubic_rate_precision(lib):
    """Fixed-point Eq. 8 against the numerically integrated window curve: relative error < 2e-4 for
    W0 >= 10 packets (measured 9.5e-5), < 1e-3 for W0 >= 2 (the 1/1024-packet unit dominates)."""
    worst = {}
    for w0, rtt, r_rtts in MODEL_GRID:
        t_fc, t_nfc = cubic_phase_times(w0, rtt)
        want = cubic_rate_integrated(w0, rtt, r_rtts * rtt)
        got = fixed_cubic_rate(lib, t_fc, t_nfc, r_rtts * rtt, rtt)
        rel = abs(got - want) / want
        bound = 2e-4 if w0 >= 10 else 1e-3
        assert rel < bound, (w0, rtt, r_rtts, got, want)
        worst[w0 >= 10] = max(worst.get(w0 >= 10, 0), rel)
    print(f"fca Eq. 8: max rel. error {worst[True]:.2e} (W0 >= 10), {worst[False]:.2e} (W0 < 10)")


def test_fca_cubic_rate_no_model(lib):
    """Phases no longer than one RTT give no model (rate 0), as does R = 0."""
    assert lib.h_fca_cubic_rate(20_000, 10_000, 20_000, 20_000) == 0
    assert lib.h_fca_cubic_rate(10_000, 10_000, 20_000, 0) == 0


def window_reference(xs, window=8):
    """Moving average and (population) variance of the last 8 durations; t_fc, t_nfc (Sec. V-A)."""
    last = xs[-window:]
    avg = sum(last) / len(last)
    sd = math.sqrt(sum((x - avg) ** 2 for x in last) / len(last))
    return avg + sd, max(avg - sd, 0.0)


def fixed_estimate(lib, xs):
    arr = (u64 * len(xs))(*xs)
    t_fc, t_nfc = u64(), u64()
    lib.h_fca_estimate(arr, len(xs), ctypes.byref(t_fc), ctypes.byref(t_nfc))
    return t_fc.value, t_nfc.value


def test_fca_phase_estimate_precision(lib):
    """t_fc, t_nfc from the moving average and variance: within 2 us of floating point (truncation of
    the mean, of the variance and of its square root)."""
    rng = random.Random(6)
    for _ in range(2000):
        xs = [rng.randrange(1, 250_000_000) for _ in range(rng.randrange(1, 40))]
        want = window_reference(xs)
        got = fixed_estimate(lib, xs)
        for g, w in zip(got, want):
            assert abs(g - w) <= 2, (xs, got, want)


def test_fca_phase_estimate_exact_on_alternating_phases(lib):
    """The model's assumption (FC and non-FC phases alternate): once the window holds 8 phases, t_fc and
    t_nfc are the true durations (to 2 us), whatever the phase parity."""
    for w0, rtt in ((10, 0.2), (100, 0.02), (1000, 0.04), (30_000, 0.04)):
        t_fc, t_nfc = cubic_phase_times(w0, rtt)
        for n in (8, 9, 20, 21):
            xs = [round((t_fc if i % 2 == 0 else t_nfc) * 1e6) for i in range(n)]
            est_fc, est_nfc = fixed_estimate(lib, xs)
            assert abs(est_fc - t_fc * 1e6) <= 2 and abs(est_nfc - t_nfc * 1e6) <= 2, (w0, rtt, n)
            # and the whole chain, phases -> Eq. 8, against the integrated window curve
            rate = lib.h_fca_cubic_rate(est_fc, est_nfc, round(rtt * 1e6), round(rtt * 1e6)) / FCA_UNIT
            want = cubic_rate_integrated(w0, rtt, rtt)
            assert abs(rate - want) / want < (2e-4 if w0 >= 10 else 1e-3), (w0, rtt, n, rate, want)


def test_fca_window_count_wraps_full(lib):
    """The sample counter never returns to 0 (an empty window) and keeps the ring order."""
    assert lib.h_fca_window_n(2**32 - 2, 1) == 2**32 - 1
    assert lib.h_fca_window_n(2**32 - 1, 1) == 8


def w_target_reference(s, rtt, t_rtt, t_bw, w_r=10.0, w_rtt=0.2, delta=4):
    t_bw = min(t_bw, w_r)
    return max((s * rtt * (w_r + t_rtt) - delta * (w_rtt + t_bw / 2)) / (w_r - t_bw / 2), delta)


def test_fca_eqs_11_to_13_precision(lib):
    """w_target (Eq. 11), p (Eq. 12), g_w (Eq. 13) against floating point: w within 1e-4 relative
    (w >= 10 packets); p below by less than one BBR bw unit (2^-24 packet/us, truncation); g_w, to
    which Eq. 13 reduces R / RTprop, within half a 1/256 step plus the truncation errors of p and of
    p * RTprop (relative 1/p and 1/(p * RTprop), negligible above a few Mbit/s)."""
    rng = random.Random(7)
    for _ in range(5000):
        s = rng.uniform(10, 200_000)                  # packets/s
        rtt = rng.uniform(0.002, 2.0)
        min_rtt = rtt * rng.uniform(0.1, 1.0)
        t_rtt, t_bw = rng.uniform(0.2, 1.5), rng.choice([0.0, rng.uniform(0, 2), 30.0])
        s_fx = round(s * FCA_UNIT)
        w = lib.h_fca_w_target(s_fx, round(rtt * 1e6), round(t_rtt * 1e6), round(t_bw * 1e6),
                               10_000_000, 200_000, 4)
        want_w = w_target_reference(s_fx / FCA_UNIT, round(rtt * 1e6) / 1e6, round(t_rtt * 1e6) / 1e6,
                                    round(t_bw * 1e6) / 1e6)
        if want_w >= 10:
            assert abs(w / FCA_UNIT - want_w) / want_w < 1e-4, (s, rtt, t_rtt, t_bw)
        p = lib.h_fca_pacing_bw(w, round(rtt * 1e6))
        want_p = w / FCA_UNIT / round(rtt * 1e6) * BW_UNIT     # packets/us << 24
        assert 0 <= want_p - p < 1                             # truncated to BBR's bw unit
        g = lib.h_fca_cwnd_gain(w, p, round(min_rtt * 1e6)) / BBR_UNIT
        if want_w >= 10:
            ratio = round(rtt * 1e6) / round(min_rtt * 1e6)
            bdp_units = p * round(min_rtt * 1e6) / 2**14      # p * RTprop in 1/1024 packet
            assert abs(g - ratio) <= 0.5 / BBR_UNIT + 1.01 * ratio * (1 / p + 1 / bdp_units), (rtt, min_rtt, g)


def test_fca_w_target_floor(lib):
    """A vanishing CUBIC rate still leaves BBR's minimum of delta = 4 packets."""
    assert lib.h_fca_w_target(0, 20_000, 200_000, 0, 10_000_000, 200_000, 4) == 4 * FCA_UNIT


def test_fca_recent_loss(lib):
    assert lib.h_fca_recent_loss(20_000_000, 10_000_000, 200)
    assert not lib.h_fca_recent_loss(20_000_001, 10_000_000, 200)
    assert lib.h_fca_recent_loss(0, 0, 100)


def test_int_sqrt64_is_exact(lib):
    rng = random.Random(8)
    for x in [0, 1, 2, 3, 4, 2**32 - 1, 2**32, 2**64 - 1] + [rng.randrange(0, 2**64) for _ in range(20_000)]:
        assert lib.h_int_sqrt64(x) == math.isqrt(x), x
