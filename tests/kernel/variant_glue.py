"""Build and drive the BBR variants' kernel glue on the host (kernel/tests/glue/).

The glue is the code a variant's patch adds to net/ipv4/tcp_bbr.c around its *_math.h: what it reads
from the socket and the ACK's rate sample and passes to the math. build() applies the patch to the
kernel's own tcp_bbr.c exactly as kernel/build-variants.sh does (patch(1), no fuzz), writes the
variant's <name>_params.h from mininet/bbrlab/experiment/variants.yaml, and compiles the patched
file unchanged with kernel/tests/glue/glue.c against the kernel-API stand-ins of
kernel/tests/glue/kapi.h (and the kernel's own lib/win_minmax.c) into a shared library; Glue drives
it through ctypes.

Sources, in this order: build/kernel/src (the testbed tree the modules are built against), else the
linux-source-6.1 tarball (LINUX_SOURCE_TARBALL, else /usr/src/linux-source-6.1.tar.xz, the path
kernel/build-uml.sh reads; three files are extracted into a temporary directory, never into the
repository). The patches are read from kernel/variants, or from the directory GLUE_VARIANTS_DIR names
(bench/glue_mutations.py points it at mutated copies).
"""
import ctypes
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile

REPO = pathlib.Path(__file__).resolve().parents[2]
GLUE_DIR = REPO / "kernel" / "tests" / "glue"
REGISTRY = REPO / "mininet" / "bbrlab" / "experiment" / "variants.py"
SOURCES = ("net/ipv4/tcp_bbr.c", "include/linux/win_minmax.h", "lib/win_minmax.c")
TARBALL_DEFAULT = pathlib.Path("/usr/src/linux-source-6.1.tar.xz")
TARBALL_PREFIX = "linux-source-6.1/"

SOCK, TCP, RS, BBR, FCA = range(5)        # glue.c's field kinds
BW_UNIT = 1 << 24
BBR_UNIT = 256


class Unavailable(Exception):
    """A tool or the kernel source is missing: the glue tests cannot run here (the message says why)."""


def variants_dir() -> pathlib.Path:
    """Where the patches and headers are read: GLUE_VARIANTS_DIR, else kernel/variants."""
    return pathlib.Path(os.environ.get("GLUE_VARIANTS_DIR", REPO / "kernel" / "variants"))


def kernel_sources(tmp: pathlib.Path) -> pathlib.Path:
    """A directory holding SOURCES (the kernel's tcp_bbr.c, win_minmax.h, win_minmax.c) at their kernel
    paths: build/kernel/src if it has them, else extracted from the linux-source-6.1 tarball into tmp.
    Raises Unavailable naming both places when neither has them."""
    tree = REPO / "build" / "kernel" / "src"
    if all((tree / rel).is_file() for rel in SOURCES):
        return tree
    tarball = pathlib.Path(os.environ.get("LINUX_SOURCE_TARBALL") or TARBALL_DEFAULT)
    if not tarball.is_file():
        raise Unavailable(f"no kernel source: neither {tree} (kernel/build-uml.sh) nor {tarball} "
                          "(apt-get install linux-source-6.1, or ./setup.sh) is present")
    out = tmp / "linux"
    wanted = {TARBALL_PREFIX + rel: rel for rel in SOURCES}
    with tarfile.open(tarball) as tf:
        for member in tf:
            rel = wanted.pop(member.name, None)
            if rel is not None:
                dest = out / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(tf.extractfile(member).read())
                if not wanted:
                    break
    if wanted:
        raise Unavailable(f"{tarball} lacks {sorted(wanted)}")
    return out


def check_tools():
    """Raise Unavailable unless gcc and patch are on PATH."""
    for tool in ("gcc", "patch"):
        if shutil.which(tool) is None:
            raise Unavailable(f"no {tool} on PATH (needed to build the glue harness; ./setup.sh installs it)")


def build(variant: str, src: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """Patch src's tcp_bbr.c with variant's patch ("bbr": unpatched, the control), compile it with
    glue.c into out/<variant>/libglue.so and return that path. A patch that does not apply or a
    compilation error raises RuntimeError with patch's or gcc's output."""
    work = out / variant
    work.mkdir(parents=True)
    kinc = out / "kinc" / "linux"
    if not kinc.exists():
        kinc.mkdir(parents=True)
        shutil.copy(src / "include/linux/win_minmax.h", kinc / "win_minmax.h")
    target = work / "glue_variant.c"
    shutil.copy(src / "net/ipv4/tcp_bbr.c", target)
    if variant != "bbr":
        vdir = variants_dir()
        res = subprocess.run(["patch", "--fuzz=0", "--forward", "--batch", "--no-backup-if-mismatch", "-r", "-",
                              str(target), "-i", str(vdir / f"{variant}.patch")], capture_output=True, text=True)
        if res.returncode != 0 or "with fuzz" in res.stdout:
            raise RuntimeError(f"{variant}.patch does not apply to {src}/net/ipv4/tcp_bbr.c:\n{res.stdout}{res.stderr}")
        for header in vdir.glob("*.h"):
            shutil.copy(header, work / header.name)
        params = subprocess.run([sys.executable, str(REGISTRY), "header", variant], capture_output=True, text=True)
        if params.returncode != 0:
            raise RuntimeError(f"cannot write {variant}_params.h:\n{params.stderr}")
        (work / f"{variant}_params.h").write_text(params.stdout)
    lib = work / "libglue.so"
    res = subprocess.run(["gcc", "-O1", "-g", "-Wall", "-Wno-unused-function", "-Werror", "-shared", "-fPIC",
                          f"-DGLUE_VARIANT_{variant}", "-I", str(GLUE_DIR / "include"), "-I", str(kinc.parent),
                          "-I", str(work), "-o", str(lib), str(GLUE_DIR / "glue.c"), str(src / "lib/win_minmax.c")],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{variant}: the patched tcp_bbr.c does not compile against kapi.h:\n{res.stderr}")
    return lib


class Glue:
    """One patched tcp_bbr.c, loaded: sockets, rate samples, fields by name, the module's entry points.

    Times: tcp_mstamp and delivered_mstamp in us, tcp_clock_cache/tcp_wstamp_ns in ns, jiffies in ms
    (HZ = 1000); set_clock() moves all of them together."""

    def __init__(self, path: pathlib.Path):
        dll = self.dll = ctypes.CDLL(str(path))
        p, u8, u32, u64, s64p = ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint32, ctypes.c_uint64, \
            ctypes.POINTER(ctypes.c_int64)
        for name, res, args in (("glue_sock_new", p, []), ("glue_sock_free", None, [p]), ("glue_rs_new", p, []),
                                ("glue_rs_free", None, [p]), ("glue_rtx_push", None, [p, u64, u32]),
                                ("glue_init", None, [p]), ("glue_main", None, [p, p]),
                                ("glue_set_ca_state", None, [p, u8]), ("glue_ssthresh", u32, [p]),
                                ("glue_cwnd_event", None, [p, ctypes.c_int]), ("glue_undo_cwnd", u32, [p]),
                                ("glue_get_info", ctypes.c_int, [p, ctypes.POINTER(u32)]),
                                ("glue_field", ctypes.c_int, [p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, s64p]),
                                ("glue_minmax", u32, [p, ctypes.c_int, ctypes.c_int, u32, u32]),
                                ("glue_param_set", ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p]),
                                ("glue_param_get", ctypes.c_longlong, [ctypes.c_char_p]),
                                ("glue_cc_name", ctypes.c_char_p, []),
                                ("glue_mark_lost", ctypes.c_int, [p, u32, u32, u32, ctypes.c_int, ctypes.c_int])):
            fn = getattr(dll, name)
            fn.restype, fn.argtypes = res, args
        self.jiffies = ctypes.c_ulong.in_dll(dll, "jiffies")
        self.random = ctypes.c_uint32.in_dll(dll, "glue_random")
        self.mode = {}                  # BBR's modes; bbr2/bbr3: their states (ProbeBW's four phases)
        for m in ("startup", "drain", "probe_bw", "probe_rtt", "probe_bw_down", "probe_bw_cruise",
                  "probe_bw_refill", "probe_bw_up"):
            try:
                self.mode[m] = ctypes.c_uint32.in_dll(dll, f"glue_mode_{m}").value
            except ValueError:
                pass
        self.name = dll.glue_cc_name().decode()

    # fields
    def set(self, obj, kind, **fields):
        """Write each field (by its kernel name) of the object of `kind` (SOCK, TCP, BBR, FCA: a socket;
        RS: a rate sample)."""
        for name, value in fields.items():
            v = ctypes.c_int64(int(value))
            if self.dll.glue_field(obj, kind, name.encode(), 1, ctypes.byref(v)) != 0:
                raise KeyError(f"{self.name}: no field {name} of kind {kind}")

    def get(self, obj, kind, name):
        """The field's value (see set)."""
        v = ctypes.c_int64(0)
        if self.dll.glue_field(obj, kind, name.encode(), 0, ctypes.byref(v)) != 0:
            raise KeyError(f"{self.name}: no field {name} of kind {kind}")
        return v.value

    def set_clock(self, sk, now_us):
        """Time of the ACK being processed: tcp_mstamp, the delivery stamp, the EDT clock, jiffies."""
        self.set(sk, TCP, tcp_mstamp=now_us, delivered_mstamp=now_us, tcp_clock_cache=now_us * 1000,
                 tcp_wstamp_ns=now_us * 1000)
        self.jiffies.value = now_us // 1000

    def bw_filter(self, sk, bw=None, t=0):
        """The max-bandwidth filter (packets/us << 24): reset to one sample bw at round t when given;
        returns its value."""
        return self.dll.glue_minmax(sk, 0, bw is not None, t, bw or 0)

    # objects and entry points
    def socket(self, srtt_us, min_rtt_us, now_us, **tcp):
        """A socket at now_us whose smoothed RTT is srtt_us and whose min-RTT filter holds min_rtt_us,
        with the congestion control initialised (bbr_init, through tcp_congestion_ops.init)."""
        sk = self.dll.glue_sock_new()
        self.set_clock(sk, now_us)
        self.set(sk, TCP, srtt_us=srtt_us << 3, **tcp)
        self.dll.glue_minmax(sk, 1, 1, self.jiffies.value, min_rtt_us)
        self.dll.glue_init(sk)
        return sk

    def rate_sample(self, **fields):
        """A struct rate_sample with the given fields (others 0)."""
        rs = self.dll.glue_rs_new()
        self.set(rs, RS, **fields)
        return rs

    def ack(self, sk, **rs_fields):
        """Process one ACK whose rate sample has rs_fields (tcp_congestion_ops.cong_control)."""
        rs = self.rate_sample(**rs_fields)
        try:
            self.dll.glue_main(sk, rs)
        finally:
            self.dll.glue_rs_free(rs)

    def set_ca_state(self, sk, state):
        """tcp_set_ca_state(): set_state hook, then icsk_ca_state (0 Open, 3 Recovery, 4 Loss)."""
        self.dll.glue_set_ca_state(sk, state)

    def ssthresh(self, sk):
        """tcp_congestion_ops.ssthresh, as the stack calls it on entering fast recovery or an RTO."""
        return self.dll.glue_ssthresh(sk)

    def cwnd_event(self, sk, event):
        """tcp_congestion_ops.cwnd_event (0: CA_EVENT_TX_START, sending with nothing in flight)."""
        self.dll.glue_cwnd_event(sk, event)

    def undo_cwnd(self, sk):
        """tcp_congestion_ops.undo_cwnd (a spurious recovery undone); the stack sets cwnd to the value."""
        return self.dll.glue_undo_cwnd(sk)

    def info(self, sk):
        """INET_DIAG_BBRINFO: {bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain} (ss's fields)."""
        out = (ctypes.c_uint32 * 5)()
        assert self.dll.glue_get_info(sk, out) >= 0
        return dict(zip(("bw_lo", "bw_hi", "min_rtt", "pacing_gain", "cwnd_gain"), out))

    def param(self, name, value):
        """Set a module parameter as a sysfs write would; returns the module's result (0 or -errno)."""
        return self.dll.glue_param_set(name.encode(), str(value).encode())

    def mark_lost(self, sk, tx_in_flight, tx_lost, segs=1, app_limited=False, has_rate_info=True):
        """The stack marks a packet of `segs` packets lost (tcp_mark_skb_lost(): tp->lost counts it, then
        the testbed kernel's skb_marked_lost operation), sent when tx_in_flight packets were in flight (it
        included) and tp->lost was tx_lost. False if the module has no such operation."""
        return self.dll.glue_mark_lost(sk, segs, tx_in_flight, tx_lost, int(app_limited), int(has_rate_info)) == 0

    def rtx_push(self, sk, departure_ns, segs=1):
        """Queue a segment (departure time departure_ns) as the newest of the retransmit queue."""
        self.dll.glue_rtx_push(sk, departure_ns, segs)

    def free(self, sk):
        """Release the socket (tcp_congestion_ops.release, if any)."""
        self.dll.glue_sock_free(sk)


def bw_units(pkts_per_s: float) -> int:
    """BBR's bandwidth unit: packets/us << 24."""
    return round(pkts_per_s / 1e6 * BW_UNIT)


def probe_bw(g: Glue, sk, bw_pps: float, cycle_idx: int, pacing_gain: float, cycle_start_us=None):
    """Put the connection in steady PROBE_BW: pipe full, max filter at bw_pps packets/s, in gain-cycle
    phase cycle_idx (BBR's: 0 probe 1.25, 1 drain 0.75, 2-7 cruise) which started at cycle_start_us
    (default: now), no round pending, min_rtt measured now."""
    now = g.get(sk, TCP, "tcp_mstamp")
    g.set(sk, BBR, mode=g.mode["probe_bw"], full_bw_reached=1, full_bw_cnt=3, cycle_idx=cycle_idx,
          pacing_gain=round(pacing_gain * BBR_UNIT), cwnd_gain=2 * BBR_UNIT, has_seen_rtt=1, rtt_cnt=100,
          cycle_mstamp=now if cycle_start_us is None else cycle_start_us, min_rtt_stamp=g.jiffies.value,
          next_rtt_delivered=g.get(sk, TCP, "delivered") + 1_000_000)
    g.bw_filter(sk, bw_units(bw_pps), t=100)


# Seven wrong glues (found by a re-audit of the patches against the papers): (patch, text of one added line, its wrong version). Each keeps
# the patch's line count, so the mutated patch still applies. bench/glue_mutations.py applies each to a
# copy of kernel/variants and runs tests/kernel/test_variant_glue.py against it; all must fail.
MUTATIONS = {
    "BBQ: queue decided from srtt instead of the RTT sample":
        ("bbq.patch", "bbr->bbq_queue = bbq_queue_detected(rs->rtt_us, bbr->min_rtt_us,",
         "bbr->bbq_queue = bbq_queue_detected(tcp_sk(sk)->srtt_us >> 3, bbr->min_rtt_us,"),
    "BBR-E: gain from srtt instead of the RTT sample":
        ("bbr_e.patch", "bbr->e_cwnd_gain = bbr_e_cwnd_gain(rs->rtt_us, bbr->min_rtt_us,",
         "bbr->e_cwnd_gain = bbr_e_cwnd_gain(tcp_sk(sk)->srtt_us >> 3, bbr->min_rtt_us,"),
    "Adaptive-BBR: BDP from the delivery rate instead of the max filter":
        ("adaptive_bbr.patch", "abbr_pkts(bbr_bw(sk), bbr->min_rtt_us));", "abbr_pkts(rate, bbr->min_rtt_us));"),
    "Adaptive-BBR: held segments not subtracted":
        ("adaptive_bbr.patch", "inflight -= min(inflight, abbr_not_departed(sk));",
         "inflight -= 0 * min(inflight, abbr_not_departed(sk));"),
    "BBR-FCA: R from min_rtt instead of srtt":
        ("bbr_fca.patch", "u64 rtt = tcp_sk(sk)->srtt_us >> 3;", "u64 rtt = bbr->min_rtt_us;"),
    "BBR-FCA: bound at the current rather than the maximum rate":
        ("bbr_fca.patch", "f->bw_max = max(f->bw_max, minmax_get(&bbr->bw));", "f->bw_max = minmax_get(&bbr->bw);"),
    "bbq_drain: keeps the min_rtt time limit":
        ("bbq_drain.patch", "return inflight <= bbr_inflight(sk, bw, BBR_UNIT); /* no time limit */",
         "return is_full_length || inflight <= bbr_inflight(sk, bw, BBR_UNIT);"),
}


# Further wrong glues, for the tests beyond those seven (same form; the bench runs them too).
EXTRA_MUTATIONS = {
    "BBQ: probe capped at alpha with or without a queue":
        ("bbq.patch", "bbr->bbq_queue, rs->losses,", "1, rs->losses,"),
    "Adaptive-BBR: departed segments subtracted too":
        ("adaptive_bbr.patch", "while (skb && skb->skb_mstamp_ns > tp->tcp_clock_cache &&",
         "while (skb && (skb->skb_mstamp_ns > tp->tcp_clock_cache || 1) &&"),
    "BBR-E: extra_acked_cwnd ignored":
        ("bbr_e.patch", "if (bbr_extra_acked_gain && READ_ONCE(extra_acked_cwnd.val) &&",
         "if (bbr_extra_acked_gain && (READ_ONCE(extra_acked_cwnd.val) || 1) &&"),
    "BBR-FCA: paces at BBR's bandwidth estimate instead of p":
        ("bbr_fca.patch", "bw = f->p_bw;", "bw = bbr_bw(sk);"),
    "BBR-FCA: cwnd target with BBR's cwnd gain instead of g_w":
        ("bbr_fca.patch", "f ? f->cwnd_gain : bbr->cwnd_gain);", "bbr->cwnd_gain);"),
    "BBR-FCA: losses recent for twice as long":
        ("bbr_fca.patch", "READ_ONCE(recent_pct.val)));", "2 * READ_ONCE(recent_pct.val)));"),
    "BBR-FCA: an RTO timed at the next ACK":
        ("bbr_fca.patch", "fca_ca_state(sk, TCP_CA_Loss);", "(void)sk;"),
    "BBR-FCA: allocation failures not counted":
        ("bbr_fca.patch", "atomic_inc(&fca_alloc_failures);", "atomic_read(&fca_alloc_failures);"),
}


# Wrong glues of bbr2/bbr3/bbr2_v2alpha (tests/kernel/test_bbr2_glue.py, test_bbr2_v2alpha_glue.py). Their glue is not in the patches but in
# bbr2_main.h, which both include: (header, text of exactly one place in it, possibly several lines, its
# wrong version).
BBR2_MUTATIONS = {
    "bbr2/3: no per-lost-packet handling (skb_marked_lost not registered)":
        ("bbr2_main.h", "\t.skb_marked_lost = bbr2_skb_marked_lost,\n", ""),
    "bbr2/3: a lost packet's loss rate without the packet itself":
        ("bbr2_main.h", "rs.lost = tp->lost - scb->tx.lost;", "rs.lost = tp->lost - scb->tx.lost - 1;"),
    "bbr2/3: inflight_hi from the lost packet's tx_in_flight, not where the loss rate crossed 2 %":
        ("bbr2_main.h", "bbr2_inflight_at_loss(rs.tx_in_flight, rs.lost, tcp_skb_pcount(skb),",
         "0 * bbr2_inflight_at_loss(rs.tx_in_flight, rs.lost, tcp_skb_pcount(skb),"),
    "bbr2/3: a lost packet checked whatever the phase (bw_probe_samples ignored)":
        ("bbr2_main.h", "if (!b->bw_probe_samples || !scb->tx.has_rate_info)", "if (!scb->tx.has_rate_info)"),
    "bbr2/3: a lost packet with a used-up send record checked":
        ("bbr2_main.h", "if (!b->bw_probe_samples || !scb->tx.has_rate_info)", "if (!b->bw_probe_samples)"),
    "bbr2/3: NoteLoss (loss round restarted at the first loss) in v2 too":
        ("bbr2_main.h", "if (P(version) >= 3 || BBR2_V2A) {\t/* v3 draft; v2alpha too */",
         "if (P(version) >= 2 || BBR2_V2A) {\t/* v3 draft; v2alpha too */"),
    "bbr2/3: NoteLoss restarts the loss round at every loss":
        ("bbr2_main.h", "if (!b->loss_in_round)\n\t\t\tb->loss_round_delivered = tp->delivered;",
         "if (1)\n\t\t\tb->loss_round_delivered = tp->delivered;"),
    "bbr2/3: probe's loss rate over the packets delivered instead of tx_in_flight":
        ("bbr2_main.h", "if (bbr2_loss_too_high(rs->lost, rs->tx_in_flight)",
         "if (bbr2_loss_too_high(rs->lost, rs->delivered)"),
    "bbr2/3: probe's losses this ACK's (rs->losses) instead of those since the send (rs->lost)":
        ("bbr2_main.h", "if (bbr2_loss_too_high(rs->lost, rs->tx_in_flight)",
         "if (bbr2_loss_too_high(rs->losses, rs->tx_in_flight)"),
    "bbr2/3: inflight_hi cut to the in-flight now instead of at the send":
        ("bbr2_main.h", "b->inflight_hi = bbr2_inflight_hi_on_loss(rs->tx_in_flight,",
         "b->inflight_hi = bbr2_inflight_hi_on_loss(rs->prior_in_flight,"),
    "bbr2/3: inflight_hi raised to the in-flight now instead of at the send":
        ("bbr2_main.h", "if (rs->tx_in_flight > b->inflight_hi)\n\t\tb->inflight_hi = rs->tx_in_flight;",
         "if (rs->prior_in_flight > b->inflight_hi)\n\t\tb->inflight_hi = rs->prior_in_flight;"),
    "bbr2/3: ProbeRTT cwnd bound at gain 1 instead of probe_rtt_cwnd_gain_pct":
        ("bbr2_main.h", "pct_gain(P(probe_rtt_cwnd_gain_pct))));", "BBR_UNIT));"),
    "bbr2/3: ProbeBW_DOWN paced at 0.75 whatever down_gain_pct says":
        ("bbr2_main.h", "bbr2_set_gains(b, pct_gain(P(down_gain_pct)), bbr2_default_cwnd_gain);",
         "bbr2_set_gains(b, pct_gain(75), bbr2_default_cwnd_gain);"),
    "bbr2/3: ProbeBW_UP with the default cwnd gain instead of up_cwnd_gain_pct":
        ("bbr2_main.h", "bbr2_set_gains(b, bbr2_up_pacing_gain, pct_gain(P(up_cwnd_gain_pct)));",
         "bbr2_set_gains(b, bbr2_up_pacing_gain, bbr2_default_cwnd_gain);"),
    "bbr2/3: cwnd bounded as in ProbeBW_CRUISE in every state":
        ("bbr2_main.h", "cwnd = min(cwnd, bbr2_cwnd_cap(b->state,", "cwnd = min(cwnd, bbr2_cwnd_cap(BBR2_PROBE_BW_CRUISE,"),
    "bbr2/3: ProbeBW_DOWN leaves without inflight_hi's headroom":
        ("bbr2_main.h", "if (bbr2_time_to_cruise(inflight, b->inflight_hi,", "if (bbr2_time_to_cruise(inflight, BBR2_INF,"),
    "bbr2/3: ProbeBW_REFILL goes UP without waiting for the round's end":
        ("bbr2_main.h", "case BBR2_PROBE_BW_REFILL:\n\t\tif (b->round_start) {",
         "case BBR2_PROBE_BW_REFILL:\n\t\tif (1) {"),
    "bbr2/3: v2's ProbeBW_UP exit without the min_rtt in the phase":
        ("bbr2_main.h", "go = bbr2_up_done_v2(bbr2_elapsed_in_phase(sk), b->min_rtt_us,",
         "go = bbr2_up_done_v2(bbr2_elapsed_in_phase(sk), 0,"),
    "bbr2/3: ProbeBW_UP ends in CRUISE instead of DOWN":
        ("bbr2_main.h", "no high loss (yet) */\n\t\t\tbbr2_start_probe_bw_down(sk);",
         "no high loss (yet) */\n\t\t\tbbr2_start_probe_bw_cruise(sk);"),
    "bbr2/3: v3's ProbeBW_UP exit blind to being cwnd-limited":
        ("bbr2_main.h", "go = bbr2_up_done_v3(bbr2_is_cwnd_limited(sk),", "go = bbr2_up_done_v3(0,"),
    "bbr2/3: ProbeRTT ends in ProbeBW_DOWN instead of CRUISE":
        ("bbr2_main.h", "bbr2_start_probe_bw_down(sk);\n\t\tbbr2_start_probe_bw_cruise(sk);",
         "bbr2_start_probe_bw_down(sk);\n\t\t(void)0;"),
    "bbr2/3: Startup's loss exit on this ACK's losses instead of those since the send":
        ("bbr2_main.h", "P(full_loss_cnt), rs->lost,", "P(full_loss_cnt), rs->losses,"),
    "bbr2/3: lower bounds cut while probing too":
        ("bbr2_main.h", "if (!bbr2_is_probing_bw(b->state) && b->loss_in_round) {", "if (b->loss_in_round) {"),
    "bbr2/3: an RTO not counted as the end of a round":
        ("bbr2_main.h", "b->full_bw = 0;\n\t\tb->round_start = 1;",
         "b->full_bw = 0;\n\t\tb->round_start = 0;"),
    "bbr2/3: an RTO keeps the full-bandwidth count":
        ("bbr2_main.h", "b->full_bw = 0;\n\t\tb->round_start = 1;",
         "b->round_start = 1;"),
    "bbr2/3: BBRSaveCwnd keeps an older, larger prior_cwnd outside recovery":
        ("bbr2_main.h", "b->prior_cwnd = tcp_snd_cwnd(tp);\n\telse",
         "b->prior_cwnd = max(b->prior_cwnd, tcp_snd_cwnd(tp));\n\telse"),
    "bbr2/3: BBRSaveCwnd in recovery overwrites prior_cwnd with the cut cwnd":
        ("bbr2_main.h", "else\n\t\tb->prior_cwnd = max(b->prior_cwnd, tcp_snd_cwnd(tp));",
         "else\n\t\tb->prior_cwnd = tcp_snd_cwnd(tp);"),
    "bbr2/3: leaving recovery without restoring the saved cwnd":
        ("bbr2_main.h", "cwnd = max(cwnd, b->prior_cwnd);\t/* v2alpha: only after an RTO */",
         "/* v2alpha: only after an RTO */"),
    "bbr2: entering fast recovery keeps cwnd less the lost instead of in-flight + ACKed":
        ("bbr2_main.h", "cwnd = tcp_packets_in_flight(tp) + acked;",
         "(void)acked;"),
    "bbr2: packet conservation held through all of fast recovery, not its first round":
        ("bbr2_main.h", "b->packet_conservation = 0;\t/* held for one round */", "(void)0;"),
    "bbr2: no packet conservation in fast recovery":
        ("bbr2_main.h", "if (b->packet_conservation) {",
         "if (0) {"),
    "bbr2/3: an undone recovery keeps the lower bounds":
        ("bbr2_main.h", "bbr2_reset_full_bw(b);\n\tbbr2_reset_lower_bounds(b);\n\treturn",
         "bbr2_reset_full_bw(b);\n\treturn"),
    "bbr2/3: restart from idle without the app-limited check":
        ("bbr2_main.h", "if (event == CA_EVENT_TX_START && tp->app_limited) {",
         "if (event == CA_EVENT_TX_START) {"),
    "bbr2/3: restart from idle keeps the phase's pacing gain":
        ("bbr2_main.h", "bbr2_set_pacing_rate(sk, bbr2_bw(b), BBR_UNIT);",
         "bbr2_set_pacing_rate(sk, bbr2_bw(b), b->pacing_gain);"),
    "bbr2/3: ProbeRTT entered on an expired min_rtt despite an idle restart":
        ("bbr2_main.h", "probe_rtt_expired && !b->idle_restart) {",
         "probe_rtt_expired) {"),
    "bbr2/3: idle_restart not cleared by an ACK delivering data":
        ("bbr2_main.h", "if (rs->delivered > 0)\n\t\tb->idle_restart = 0;",
         "if (0)\n\t\tb->idle_restart = 0;"),
    "bbr2/3: restart from idle in ProbeRTT does not check ProbeRTT's end":
        ("bbr2_main.h", "else if (b->state == BBR2_PROBE_RTT)\n\t\t\tbbr2_check_probe_rtt_done(sk);",
         "else if (b->state == BBR2_PROBE_RTT)\n\t\t\t(void)0;"),
    "bbr2/3: probe wait 0.2-0.3 s instead of 2-3 s":
        ("bbr2_main.h", "bbr2_probe_wait_base_us = 2 * USEC_PER_SEC;",
         "bbr2_probe_wait_base_us = USEC_PER_SEC / 5;"),
    "bbr2/3: Reno-coexistence cap 200 rounds instead of 63":
        ("bbr2_main.h", "bbr2_max_probe_rounds = 63;", "bbr2_max_probe_rounds = 200;"),
    "bbr2/3: max-bw filter never advances":
        ("bbr2_main.h", "\t\t\tbbr2_advance_max_bw_filter(b);", "\t\t\t(void)b;"),
    "bbr2/3: inflight_hi's probe slope not raised each round":
        ("bbr2_main.h", "if (b->round_start)\n\t\tbbr2_raise_inflight_hi_slope(sk);",
         "if (0)\n\t\tbbr2_raise_inflight_hi_slope(sk);"),
    "bbr3: Startup plateau measured on max_bw instead of delivery-rate samples":
        ("bbr2_main.h", "u32 bw = v3 ? sample_bw : bbr2_max_bw(b);", "u32 bw = bbr2_max_bw(b);"),
    "bbr2/3: cwnd-limited read with Linux's tcp_is_cwnd_limited() (slow-start clause)":
        ("bbr2_main.h", "return tcp_sk(sk)->is_cwnd_limited;", "return tcp_is_cwnd_limited(sk);"),
    "bbr3: newly lost packets taken off cwnd as in v2":
        ("bbr2_main.h", "if (v2 && rs->losses > 0)", "if (rs->losses > 0)"),
    "bbr3: packet conservation in fast recovery as in v2":
        ("bbr2_main.h", "bool v2 = P(version) < 3 && !BBR2_V2A;", "bool v2 = !BBR2_V2A;"),
    "bbr2/3: no extra_acked in Startup (Linux's BBR v1)":
        ("bbr2_main.h", "u32 cap = (u32)(((u64)bbr2_bw(b) * bbr2_extra_acked_max_us) >> BW_SCALE);\n\n\treturn",
         "u32 cap = (u32)(((u64)bbr2_bw(b) * bbr2_extra_acked_max_us) >> BW_SCALE);\n\n\treturn !b->filled_pipe ? 0 :"),
    "bbr3: extra_acked filter over 10 rounds in Startup too":
        ("bbr2_main.h", "u32 half_win = (P(version) >= 3 || BBR2_V2A) && !b->filled_pipe ? 1 :",
         "u32 half_win = 0 ? 1 :"),
    "bbr3: a lossy probe not remembered (prev_probe_too_high)":
        ("bbr2_main.h", "if (P(version) >= 3 || BBR2_V2A)\t/* v3 draft -06; v2alpha */\n\t\tb->prev_probe_too_high = 1;",
         "if (0)\n\t\tb->prev_probe_too_high = 1;"),
    "bbr3: no precautionary deceleration after a lossy probe":
        ("bbr2_main.h", "if ((P(version) >= 3 || BBR2_V2A) && b->prev_probe_too_high &&\n\t\t    inflight >= b->inflight_hi) {",
         "if (0) {"),
    "bbr3: no precautionary acceleration after a safe precautionary probe":
        ("bbr2_main.h", "if ((P(version) >= 3 || BBR2_V2A) && bbr2_in_probe_bw(b) &&",
         "if (0 && bbr2_in_probe_bw(b) &&"),
    "bbr3: no Drain timeout":
        ("bbr2_main.h", "(P(version) >= 3 && b->drain_rounds > bbr2_drain_max_rounds)",
         "(0 && b->drain_rounds > bbr2_drain_max_rounds)"),
    "bbr2/3: Drain paced at 1/2.885 (Google's) instead of 1 / BBRStartupCwndGain":
        ("bbr2_main.h", "bbr2_set_gains(b, BBR_UNIT * BBR_UNIT / cwnd_gain, cwnd_gain);",
         "bbr2_set_gains(b, BBR_UNIT * 1000 / 2885, cwnd_gain);"),
    "v2alpha: packet conservation and the newly-lost cut in fast recovery (the v2 draft's)":
        ("bbr2_main.h", "bool v2 = P(version) < 3 && !BBR2_V2A;", "bool v2 = P(version) < 3;"),
    "v2alpha: the saved cwnd restored after fast recovery too":
        ("bbr2_main.h", "BBR2_V2A ? prev_state == TCP_CA_Loss && state != TCP_CA_Loss :",
         "0 ? prev_state == TCP_CA_Loss && state != TCP_CA_Loss :"),
    "v2alpha: the saved cwnd never restored":
        ("bbr2_main.h", "BBR2_V2A ? prev_state == TCP_CA_Loss && state != TCP_CA_Loss :",
         "BBR2_V2A ? 0 :"),
    "v2alpha: an RTO leaves inflight_lo unset":
        ("bbr2_main.h", "if (BBR2_V2A && !bbr2_is_probing_bw(b->state) && b->inflight_lo == BBR2_INF)",
         "if (0 && !bbr2_is_probing_bw(b->state) && b->inflight_lo == BBR2_INF)"),
    "v2alpha: a lossy probe not remembered":
        ("bbr2_main.h", "if (P(version) >= 3 || BBR2_V2A)\t/* v3 draft -06; v2alpha */",
         "if (P(version) >= 3)\t/* v3 draft -06; v2alpha */"),
    "v2alpha: no stop at inflight_hi after a lossy probe":
        ("bbr2_main.h", "if ((P(version) >= 3 || BBR2_V2A) && b->prev_probe_too_high &&",
         "if (P(version) >= 3 && b->prev_probe_too_high &&"),
    "v2alpha: no immediate reprobe after a safe risky probe":
        ("bbr2_main.h", "if ((P(version) >= 3 || BBR2_V2A) && bbr2_in_probe_bw(b) &&",
         "if (P(version) >= 3 && bbr2_in_probe_bw(b) &&"),
    "v2alpha: the loss threshold 2 % (the drafts') instead of 5/256":
        ("bbr2_main.h", "return bbr2_v2a_inflight_too_high(lost, tx_in_flight, P(loss_thresh_bp));",
         "return bbr2_inflight_too_high(lost, tx_in_flight, P(loss_thresh_bp));"),
    "v2alpha: a lost packet's bound by the drafts' formula":
        ("bbr2_main.h", "bbr2_v2a_inflight_at_loss(rs.tx_in_flight, rs.lost, tcp_skb_pcount(skb),",
         "bbr2_inflight_at_loss(rs.tx_in_flight, rs.lost, tcp_skb_pcount(skb),"),
    "v2alpha: no loss-round restart at a round's first lost packet":
        ("bbr2_main.h", "if (P(version) >= 3 || BBR2_V2A) {\t/* v3 draft; v2alpha too */",
         "if (P(version) >= 3) {\t/* v3 draft; v2alpha too */"),
    "v2alpha: ProbeBW's in-flight not corrected to the earliest departure time":
        ("bbr2_main.h", "u32 inflight = BBR2_V2A ? bbr2_packets_in_net_at_edt(sk, rs->prior_in_flight) :",
         "u32 inflight = BBR2_V2A ? rs->prior_in_flight :"),
    "v2alpha: ProbeBW's in-flight after the ACK instead of before it":
        ("bbr2_main.h", "u32 inflight = BBR2_V2A ? bbr2_packets_in_net_at_edt(sk, rs->prior_in_flight) :",
         "u32 inflight = BBR2_V2A ? bbr2_packets_in_net_at_edt(sk, tcp_packets_in_flight(tp)) :"),
    "v2alpha: CRUISE does not clamp inflight_lo":
        ("bbr2_main.h", "if (BBR2_V2A && b->inflight_lo != BBR2_INF)", "if (0 && b->inflight_lo != BBR2_INF)"),
    "v2alpha: Startup's loss exit after the bandwidth plateau":
        ("bbr2_main.h", "if (BBR2_V2A)\t\t/* v2alpha checks the loss exit first */", "if (0)"),
    "v2alpha: Startup's loss exit bound max(BDP, inflight_latest) (the v3 draft's)":
        ("bbr2_main.h", "b->inflight_hi = BBR2_V2A ? bbr2_inflight(sk, bbr2_max_bw(b), BBR_UNIT) :",
         "b->inflight_hi = 0 ? 0 :"),
    "v2alpha: Drain entry leaves ssthresh":
        ("bbr2_main.h", "\t\t\ttcp_sk(sk)->snd_ssthresh = bbr2_inflight(sk, bbr2_max_bw(b), BBR_UNIT);\n", ""),
    "v2alpha: Startup cwnd grows past the target only before 10 packets delivered (the drafts')":
        ("bbr2_main.h", "(BBR2_V2A ? cwnd < 2 * TCP_INIT_CWND : tp->delivered < TCP_INIT_CWND)",
         "(tp->delivered < TCP_INIT_CWND)"),
    "v2alpha: an RTT equal to the minimum does not renew it":
        ("bbr2_main.h", "BBR2_V2A ? rs->rtt_us <= b->probe_rtt_min_us ||", "BBR2_V2A ? rs->rtt_us < b->probe_rtt_min_us ||"),
    "v2alpha: a delayed ACK's RTT replaces an expired minimum":
        ("bbr2_main.h", "(probe_rtt_expired && !rs->is_ack_delayed)", "probe_rtt_expired"),
    "v2alpha: no min_rtt bonus in the send quantum":
        ("bbr2_main.h", "if (BBR2_V2A && r < 32)", "if (0 && r < 32)"),
}

# Wrong implementations of bbr2plus (BBRv2+: bbr2_main.h's BBR2_PLUS parts and bbr2_math.h's bbr2p_*;
# tests/kernel/test_bbr2plus_glue.py), same form as BBR2_MUTATIONS.
BBR2PLUS_MUTATIONS = {
    "bbr2plus: PRE_UP paced at UP's 1.25 instead of 1.10":
        ("bbr2_main.h", "bbr2p_pre_up_gain_pct = 110;", "bbr2p_pre_up_gain_pct = 125;"),
    "bbr2plus: REFILL goes straight to UP (no PRE_UP, no GUARD)":
        ("bbr2_main.h", "if (bbr2p_delay(sk)) {\n\t\t\t\tbbr2p_start_pre_up(sk);",
         "if (0) {\n\t\t\t\tbbr2p_start_pre_up(sk);"),
    "bbr2plus: GUARD's RTT test without the 2 ms cap":
        ("bbr2_main.h", "bbr2p_go_up_cap_us = 2000;", "bbr2p_go_up_cap_us = 1000000;"),
    "bbr2plus: GUARD compares min RTTs instead of smoothed RTTs":
        ("bbr2_main.h", "if (bbr2p_rtt_within(p->srtt_cur, p->srtt_last, bbr2p_go_up_pct,",
         "if (bbr2p_rtt_within(p->min_cur, p->min_last, bbr2p_go_up_pct,"),
    "bbr2plus: DOWN_SLIGHTLY paced at DOWN's gain instead of 0.90":
        ("bbr2_main.h", "bbr2_set_gains(b, pct_gain(bbr2p_down_slightly_gain_pct),",
         "bbr2_set_gains(b, pct_gain(P(down_gain_pct)),"),
    "bbr2plus: UP ends in DOWN (no POST_UP)":
        ("bbr2_main.h", "if (go > 0 && !risky && P(version) < 3 && bbr2p_delay(sk)) {", "if (0 && !risky) {"),
    "bbr2plus: POST_UP judges its own round's min RTT instead of the probe's":
        ("bbr2_main.h", "if (bbr2p_rtt_within(p->min_last, p->min_before_probe,",
         "if (bbr2p_rtt_within(p->min_cur, p->min_before_probe,"),
    "bbr2plus: probe every 8 CRUISE rounds without the random 0-3":
        ("bbr2_main.h", "bbr2p_probe_rounds_base +\n\t\t\t\t       get_random_u32_below",
         "bbr2p_probe_rounds_base +\n\t\t\t\t       0 * get_random_u32_below"),
    "bbr2plus: probe wait counted in every round, not CRUISE rounds":
        ("bbr2_main.h", "if (b->state == BBR2_PROBE_BW_CRUISE && p->probe_wait_rounds)",
         "if (p->probe_wait_rounds)"),
    "bbr2plus: probes timed by BBRv2's wall clock":
        ("bbr2_main.h", "if (bbr2p_delay(sk))\t/* BBRv2+: CRUISE rounds, not wall clock */",
         "if (0)\t/* BBRv2+: CRUISE rounds, not wall clock */"),
    "bbr2plus: max-bw filter advanced on an RTT rise of 25 % instead of 10 %":
        ("bbr2_main.h", "bbr2p_advance_rise_pct = 110;", "bbr2p_advance_rise_pct = 125;"),
    "bbr2plus: RTT rise measured against min_rtt instead of the recent rounds":
        ("bbr2_main.h", "bbr2p_advance_bw_filter(p->min_cur, bbr2p_recent_min_rtt(p),",
         "bbr2p_advance_bw_filter(p->min_cur, b->min_rtt_us,"),
    "bbr2plus: max-bw filter forced after 50 rounds instead of 25":
        ("bbr2_main.h", "bbr2p_advance_max_rounds = 25;", "bbr2p_advance_max_rounds = 50;"),
    "bbr2plus: max-bw filter still advanced at the probe's end (BBRv2's point)":
        ("bbr2_main.h", "!rs->is_app_limited && !bbr2p_delay(sk))", "!rs->is_app_limited)"),
    "bbr2plus: a sample at max_bw does not restart the 25 rounds":
        ("bbr2_main.h", "\t\tp->rounds_since_advance = 0;\n\tif (rs->rtt_us <= 0)",
         "\t\t(void)0;\n\tif (rs->rtt_us <= 0)"),
    "bbr2plus: allowance from the current rttvar, not the max of recent rounds":
        ("bbr2_main.h", "return bbr2p_rtt_allowance(bbr2_max_bw(b), minmax_get(&p->jitter),",
         "return bbr2p_rtt_allowance(bbr2_max_bw(b), rttvar,"),
    "bbr2plus: allowance gain 2 before Drain ended too":
        ("bbr2_main.h", "p->drained ? bbr2p_allowance_gain :", "1 ? bbr2p_allowance_gain :"),
    "bbr2plus: allowance without the 40 % rttvar threshold":
        ("bbr2_main.h", "bbr2p_rttvar_pct = 40;", "bbr2p_rttvar_pct = 0;"),
    "bbr2plus: no rttvar allowance":
        ("bbr2_main.h", "max_inflight += bbr2p_rtt_allowance_cwnd(sk);",
         "max_inflight += 0 * bbr2p_rtt_allowance_cwnd(sk);"),
    "bbr2plus: round srtt not shifted at a round's start (the authors' short-circuit)":
        ("bbr2_main.h", "p->srtt_last = p->srtt_cur;\n\t\tp->min_last = p->min_cur;\n\t\tp->srtt_cur = rtt;",
         "(void)0;\n\t\tp->min_last = p->min_cur;\n\t\t(void)rtt;"),
    "bbr2plus: reference RTT the latest sample (the authors' inverted reset)":
        ("bbr2_main.h", "if (p->ref_rtt == BBR2_INF || (b->round_start && !(p->rtt_cnt % bbr2p_ref_rtt_rounds)))",
         "if (1)"),
    "bbr2plus: switch to BBRv2 after 1 queued CRUISE instead of 2":
        ("bbr2_main.h", "bbr2p_to_v2_cruises = 2;", "bbr2p_to_v2_cruises = 1;"),
    "bbr2plus: switch threshold from the last CRUISE's min RTT alone":
        ("bbr2_math.h", "min_t(u64, prev_cruise_min_us, min_rtt_us) + slack;", "(u64)prev_cruise_min_us + slack;"),
    "bbr2plus: after the switch BBRv2 goes on without a new Startup":
        ("bbr2_main.h", "if (startup) {\n\t\tb->filled_pipe = 0;", "if (0) {\n\t\tb->filled_pipe = 0;"),
    "bbr2plus: return to BBRv2+ after 2 clear CRUISEs instead of 4":
        ("bbr2_main.h", "bbr2p_to_plus_cruises = 4;", "bbr2p_to_plus_cruises = 2;"),
    "bbr2plus: back in BBRv2+ with the per-round RTTs from before the switch":
        ("bbr2_main.h", "\t\t\t\tp->min_cur = BBR2_INF;\n\t\t\t\tfor (i = 0; i < BBR2P_RTT_WIN; i++)\n\t\t\t\t\tp->round_min[i] = BBR2_INF;",
         "\t\t\t\t(void)i;"),
    "bbr2plus: return threshold 10 % instead of 5 %":
        ("bbr2_main.h", "bbr2p_to_plus_pct = 5,", "bbr2p_to_plus_pct = 10,"),
}

ALL_MUTATIONS = {**MUTATIONS, **EXTRA_MUTATIONS, **BBR2_MUTATIONS, **BBR2PLUS_MUTATIONS}


def mutate(src_dir: pathlib.Path, dest: pathlib.Path, mutation: str) -> pathlib.Path:
    """Copy the patches and headers of src_dir into dest with ALL_MUTATIONS[mutation] applied: to one added
    line of a patch (MUTATIONS, EXTRA_MUTATIONS), or to one place of a header (BBR2_MUTATIONS, the text
    may span lines); returns dest. Raises ValueError unless the text names exactly one added line (one
    place)."""
    patch, old, new = ALL_MUTATIONS[mutation]
    shutil.copytree(src_dir, dest)
    path = dest / patch
    if not patch.endswith(".patch"):
        text = path.read_text()
        if text.count(old) != 1:
            raise ValueError(f"mutation {mutation!r}: {old!r} is in {text.count(old)} places of {patch}, not one")
        path.write_text(text.replace(old, new))
        return dest
    lines = path.read_text().split("\n")
    hits = [i for i, line in enumerate(lines) if line.startswith("+") and old in line]
    if len(hits) != 1:
        raise ValueError(f"mutation {mutation!r}: {old!r} is on {len(hits)} added lines of {patch}, not one")
    lines[hits[0]] = lines[hits[0]].replace(old, new)
    path.write_text("\n".join(lines))
    return dest
