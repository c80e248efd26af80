"""ns-3 backend: the same run spec on a second substrate, the ns-3 network simulator.

The run's dumbbell (snd<i> -- sw1 == bottleneck == sw2 -- rcv<i>) is simulated
by one C++ program, backends/ns3/dumbbell.cc, against Debian's libns3-dev
(3.37). C++ rather than ns-3's Python bindings: Debian ships no bindings for
3.37, and the program needs a congestion-control subclass (BBR's gains are
protected members of TcpBbr) and per-ACK trace callbacks, which a compiled
program does at full speed; it is compiled once into build/ns3/ (git-ignored
with build/) and rebuilt only when its source, the compile command or the
installed ns-3 change (a stamp file records their hash).

The Python side writes the run's configuration (raw/ns3.conf, key=value
lines), runs the program under the tether like the other backends' testbeds,
and writes raw/timeline.json. The program writes raw/ in the formats the
kernel testbed's sampler and guest write (see dumbbell.cc), so runner.py,
tidy.py and fidelity.py handle an ns-3 run unchanged and its tidy data is
the kernel's by construction. Sample times are simulated seconds; time zero
is `lead_s` into the simulation, after each path's base RTT was measured by
ICMP echo (raw/ping_<i>.txt).

How each spec field maps to ns-3, and TCP's settings otherwise: docs/ns3-backend.md,
"What the spec's fields become in ns-3". Why the variants run on the project's own BBR
(ns3/bbr_v1.h) and `cc: bbr` on ns-3's TcpBbr: docs/ns3-backend.md, "BBR variants in ns-3".
check_job refuses, naming the field, what ns-3 cannot do (the list is in the same docs section).

Constructor switches (each recorded in raw/ns3.conf):
cc_trace=True: per-ACK records raw/cc_trace_<i>.csv (not tidy data).
linux_rate_interval=True / linux_losses=True: the project's BBR takes its rate samples'
interval / its losses as Linux does (off by default; ns3/bbr_v1.h).

Two sets of rules (Ns3Backend(rules=...); the pipeline's `--config ns3_rules=`,
`bbrlab run --ns3-rules`; run.json's testbed.ns3_rules). "ns3", the default: ns-3
as ns-3 papers ran it, `cc: bbr` being ns-3's TcpBbr. "linux": `cc: bbr` is the
project's BBR v1 (bbrlab::Bbr, Linux's tcp_bbr.c with no change) and both
switches above are on for it and the variants, so a claim whose verdict moves
between the two rules moves with ns-3's BBR model and rate sampling, and one
that still differs from the kernel differs through ns-3's TCP or network.

The compile flags are spelled out (CXXFLAGS, LIBS): Debian's ns3-*.pc files
give a broken include flag (`-I/usr` followed by a backslash and a semicolon).
"""
import hashlib
import json
import math
import os
import pathlib
import shutil
import subprocess
import time

from ...experiment import testbed, units, variants
from .. import stamped_build
from .base import Backend, GuestResult, tethered
from .errors import BackendError

REPO = pathlib.Path(__file__).resolve().parents[4]
SOURCE = pathlib.Path(__file__).resolve().with_name("ns3") / "dumbbell.cc"
# The headers the program includes from the project: the project's BBR and its variants
# (backends/ns3/) and the variants' decision functions the kernel modules include
# (kernel/variants/*_math.h, with the host tests' kernel shim kernel/tests/kshim.h).
KERNEL_DIR = REPO / "kernel"
INCLUDE_DIRS = [SOURCE.parent, KERNEL_DIR / "variants", KERNEL_DIR / "tests"]
HEADERS = [SOURCE.parent / "bbr_v1.h", SOURCE.parent / "bbr_variants.h", SOURCE.parent / "kernel_math.h",
           KERNEL_DIR / "tests" / "kshim.h", KERNEL_DIR / "variants" / "bbq_math.h",
           KERNEL_DIR / "variants" / "adaptive_bbr_math.h", KERNEL_DIR / "variants" / "bbr_e_math.h"]
BUILD_DIR = REPO / "build" / "ns3"
HEADER = pathlib.Path("/usr/include/ns3/tcp-bbr.h")
CXX = os.environ.get("CXX", "g++")
CXXFLAGS = ["-std=c++17", "-O2", "-I/usr/include"]
LIBS = ["-lns3-internet-apps", "-lns3-applications", "-lns3-traffic-control", "-lns3-point-to-point",
        "-lns3-internet", "-lns3-network", "-lns3-core"]
# How ns-3 runs BBR (Ns3Backend(rules=...)): as ns-3 papers ran it, or with Linux's BBR and rate rules.
RULES = ("ns3", "linux")
RTT_PLACEMENTS = ("ingress", "sender")
FAST_LINK_BPS = 10e9          # links other than the bottleneck and a shaped access link
PINGS, PING_INTERVAL_S = 7, 0.1  # at least: they go on until the slowest path's replies are in
DELACK_TIMEOUT_MS = 40        # Linux's TCP_DELACK_MIN (ns-3's default is 200 ms)
TAIL_S = 1.0                  # simulated after the run, as the kernel guest samples after it
MAX_SOCKET_BUFFER = 2**30     # ns-3's window scaling reaches 1 GB
RED_AVPKT = 1000              # as the kernel testbed's tc red (shaping.py)


def ns3_version() -> str:
    """The installed libns3-dev's Debian version (e.g. 3.37-2), None when not installed."""
    try:
        res = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libns3-dev"], capture_output=True, text=True)
    except OSError:
        return None
    if res.returncode != 0:
        return None
    return res.stdout.strip() or None


def congestion_controls() -> list:
    """The congestion controls this backend runs (variants.yaml ns3: true; dumbbell.cc's
    MakeCongestionControl builds each): ns-3's own for the built-ins, the project's BBR v1
    with the kernel patch's change (ns3/bbr_variants.h) for a variant."""
    return variants.ns3()


def ns3_variants() -> list:
    """The variants among congestion_controls(): the ones with module parameters."""
    return [cc for cc in congestion_controls() if cc in variants.names()]


def refusals(job: dict) -> list:
    """What the run asks that this backend cannot do, one message naming the field each
    (flows numbered as in the run, after `count` is expanded)."""
    out = []
    for flow in job["flows"]:
        where = f"flows.{flow['flow']}"
        if flow["cc"] not in congestion_controls():
            out.append(f"{where}.cc: {flow['cc']!r} is not available in ns-3 (it has "
                       f"{', '.join(congestion_controls())}; the other variants exist only as Linux kernel modules)")
        elif flow["module_params"] and flow["cc"] not in ns3_variants():
            out.append(f"{where}.module_params: {flow['module_params']} ({flow['cc']} has no parameters)")
        elif flow["module_params"]:
            for param, reason in variants.param_problems(flow["cc"], flow["module_params"]):
                out.append(f"{where}.module_params{'.' + param if param else ''}: {reason}")
    bn = job["bottleneck"]
    if bn["aqm"]["kind"] not in ("droptail", "red"):
        out.append(f"bottleneck.aqm.kind: {bn['aqm']['kind']!r} (this backend has droptail and red)")
    if bn["aqm"]["kind"] == "red" and bn["aqm"]["ecn"]:
        out.append("bottleneck.aqm.ecn: true (ECN is not set up on this backend's senders yet)")
    if bn["burst_bytes"] != units.burst_bytes(bn["rate_mbps"], job["mtu_bytes"]):
        out.append(f"bottleneck.burst_bytes: {bn['burst_bytes']} (ns-3's link serialises each packet at the rate;"
                   " it has no token bucket to size)")
    if job["capture"] != "none":
        out.append(f"capture: {job['capture']!r} (header captures are a kernel-testbed tool)")
    if job["snapshot_at_s"] is not None:
        out.append("snapshot_at_s: netlink snapshots exist only on the kernel testbed")
    if job["offloads"] != "off":
        out.append(f"offloads: {job['offloads']!r} (ns-3 has no segmentation offloads)")
    if job["rtt_on"] not in RTT_PLACEMENTS:
        out.append(f"rtt_on: {job['rtt_on']!r} (ns-3 has no TCP Small Queues to couple; accepted: "
                   f"{', '.join(RTT_PLACEMENTS)})")
    return out


def red_ewma_log(min_bytes: int, burst: int, avpkt: int) -> int:
    """RED's averaging weight as tc computes it (iproute2 tc_red_eval_ewma): the smallest
    W = 2**-Wlog with which a burst of `burst` packets of avpkt bytes arriving at an empty
    queue keeps the average below the minimum threshold; returns Wlog."""
    a = burst + 1 - min_bytes / avpkt
    if a < 1.0:
        raise BackendError(f"RED burst {burst} is too small for min {min_bytes} bytes")
    w = 0.5
    for wlog in range(1, 32):
        if a <= (1 - (1 - w) ** burst) / w:
            return wlog
        w /= 2
    raise BackendError(f"no RED averaging weight for burst {burst}, min {min_bytes} bytes")


def red_parameters(bottleneck: dict) -> dict:
    """The kernel testbed's RED (shaping.py: avpkt 1000, its burst, a limit of at least twice
    the maximum threshold) in the terms dumbbell.cc takes."""
    aqm = bottleneck["aqm"]
    avpkt = RED_AVPKT
    burst = math.ceil((2 * aqm["min_bytes"] + aqm["max_bytes"]) / (3 * avpkt)) + 1
    return {"red_min_bytes": aqm["min_bytes"], "red_max_bytes": aqm["max_bytes"],
            "red_max_p": aqm["probability"], "red_avpkt": avpkt,
            "red_qw": 2.0 ** -red_ewma_log(aqm["min_bytes"], burst, avpkt),
            "buffer": f"{max(bottleneck['buffer_bytes_resolved'], 2 * aqm['max_bytes'])}B"}


def socket_buffer_bytes(job: dict) -> int:
    """Send and receive buffer of every socket: the sequence span a flow's receive window must
    cover in loss recovery (units.span_bytes, SPAN_WINDOWS x the run's window), at least 4 MiB.
    ns-3 counts payload bytes, so no allowance for skb overhead (the testbed's sockets get twice
    the span for it)."""
    return min(MAX_SOCKET_BUFFER, max(4 * 2**20, units.span_bytes(job)))


def ping_stop_s(job: dict) -> float:
    """The pings stop (their socket closes) after PINGS of them and the slowest path's reply."""
    return round(PINGS * PING_INTERVAL_S + max(f["rtt_ms"] for f in job["flows"]) / 1e3 + 0.05, 3)


def lead_s(job: dict) -> float:
    """Simulated time before time zero: the pings."""
    return round(ping_stop_s(job) + 0.1, 3)


def variant_params(flow: dict) -> dict:
    """A variant flow's module parameters with the defaults of variants.yaml filled in
    (every one, so the program needs no defaults of its own); {} for the others."""
    if flow["cc"] not in ns3_variants():
        return {}
    params = {name: p["default"] for name, p in variants.parameters(flow["cc"]).items()}
    params.update(flow["module_params"])
    return {name: int(value) for name, value in params.items()}


def config_lines(job: dict, out_dir: pathlib.Path) -> list:
    """raw/ns3.conf: what dumbbell.cc reads (key=value)."""
    bn = job["bottleneck"]
    mtu = job["mtu_bytes"]
    buffer = f"{bn['buffer_pkts']}p" if "buffer_pkts" in bn else f"{bn['buffer_bytes_resolved']}B"
    conf = {
        "out_dir": out_dir, "flows": len(job["flows"]), "mtu_bytes": mtu, "mss_bytes": mtu - 40,
        "lead_s": lead_s(job), "duration_s": job["duration_s"], "tail_s": TAIL_S,
        "sample_interval_s": job["sample_interval_s"], "queue_sample_interval_s": job["queue_sample_interval_s"],
        "bottleneck_rate_bps": bn["rate_mbps"] * 1e6, "buffer": buffer, "loss_rate": bn["loss_rate"],
        "pace_all": int(job["sender_qdisc"] == "fq"), "delack_count": 2 if job["delayed_ack"] else 1,
        "delack_timeout_ms": DELACK_TIMEOUT_MS,
        "seed": job["seed"], "socket_buffer_bytes": socket_buffer_bytes(job), "fast_link_bps": FAST_LINK_BPS,
        "ping_interval_s": PING_INTERVAL_S, "ping_stop_s": ping_stop_s(job),
    }
    conf["aqm"] = bn["aqm"]["kind"]
    if bn["aqm"]["kind"] == "red":
        conf.update(red_parameters(bn))
    for f in job["flows"]:
        k = f"flow.{f['flow']}."
        conf.update({k + "cc": f["cc"], k + "rtt_ms": f["rtt_ms"], k + "start_s": f["start_s"],
                     k + "stop_s": f["stop_s"], k + "access_rate_bps": (f["access_rate_mbps"] or 0) * 1e6})
        conf.update({f"{k}param.{name}": value for name, value in variant_params(f).items()})
    conf["changes"] = len(job["changes"])
    for k, change in enumerate(job["changes"], 1):
        conf.update({f"change.{k}.at_s": change["at_s"], f"change.{k}.flow": change["flow"],
                     f"change.{k}.rtt_ms": change["rtt_ms"]})
    return [f"{key}={value:.17g}" if isinstance(value, float) else f"{key}={value}" for key, value in conf.items()]


class Ns3Backend(Backend):
    """The run simulated by the ns-3 program (module docstring). build_dir: where the program is
    compiled (default build/ns3/); cc_trace, linux_rate_interval, linux_losses, rules: the
    switches of the module docstring; BackendError for rules not in RULES. Other options are
    ignored."""
    name = "ns3"
    simulated = True

    def __init__(self, build_dir=None, cc_trace=False, linux_rate_interval=False, linux_losses=False,
                 rules="ns3", **_ignored):
        if rules not in RULES:
            raise BackendError(f"ns3 backend: rules {rules!r} unknown (choose {' or '.join(RULES)})")
        self.build_dir = pathlib.Path(build_dir or BUILD_DIR)
        self.program = self.build_dir / "dumbbell"
        # per-ACK records of the project's BBR and its variants (raw/cc_trace_<i>.csv: mode,
        # gains, min_rtt, the variant's decision); for ns-3's TcpBbr its state and rate
        # samples; for tests, not part of the tidy data
        self.cc_trace = cc_trace
        # An experiment, off by default: the project's BBR computes its rate samples'
        # interval as Linux's tcp_rate_gen does instead of taking ns-3 3.37's (whose ACK
        # phase starts at the previous sample's prior time; ns3/bbr_v1.h). ns-3's TcpBbr
        # is never changed. Recorded in raw/ns3.conf.
        self.linux_rate_interval = linux_rate_interval
        # An experiment, off by default: the project's BBR counts a sample's losses as
        # Linux does (packets the ACK newly marked lost) instead of taking ns-3 3.37's
        # change of the lost count, which also counts lost-marked segments an ACK
        # delivers (ns3/bbr_v1.h). Recorded in raw/ns3.conf.
        self.linux_losses = linux_losses
        # The pipeline's switch (`--config ns3_rules=linux`, `bbrlab run --ns3-rules linux`):
        # "ns3" runs ns-3 as ns-3 papers ran it; "linux" runs `cc: bbr` as the project's BBR v1
        # (a port of Linux's tcp_bbr.c, ns3/bbr_v1.h) instead of ns-3's TcpBbr and turns both
        # switches above on for it and every variant. What is left between that and the kernel
        # is ns-3's TCP and network, not its BBR model. CUBIC and Reno stay ns-3's.
        self.rules = rules
        if rules == "linux":
            self.linux_rate_interval = self.linux_losses = True

    # ------------------------------------------------------------------ the program
    def _compile_command(self, output) -> list:
        return [CXX, *CXXFLAGS, *(f"-I{d}" for d in INCLUDE_DIRS), "-o", str(output), str(SOURCE), *LIBS]

    def build_key(self) -> str:
        """Hash of what the program is built from: source, the project's headers, compile
        command, installed ns-3."""
        h = hashlib.sha256(SOURCE.read_bytes())
        for header in HEADERS:
            h.update(header.read_bytes())
        h.update(" ".join(self._compile_command("OUT")).encode())
        h.update(str(ns3_version()).encode())
        return h.hexdigest()

    def build(self) -> pathlib.Path:
        """Compile the program unless the stamp says it is up to date; returns its path."""
        try:
            return stamped_build.build(self.program, self.build_key(), self._compile_command,
                                       f"the ns-3 program {SOURCE}")
        except stamped_build.BuildError as err:
            raise BackendError(str(err)) from None

    # ------------------------------------------------------------------ backend interface
    def check(self) -> None:
        """ns-3's headers and a C++ compiler are installed; the program compiled."""
        missing = []
        if not HEADER.is_file():
            missing.append(f"ns-3 headers not found ({HEADER}): apt-get install libns3-dev")
        if not shutil.which(CXX):
            missing.append(f"C++ compiler {CXX!r} not found: apt-get install g++ (build-essential)")
        if missing:
            raise BackendError("the ns3 backend cannot run on this host:\n  - " + "\n  - ".join(missing))
        self.build()

    def check_job(self, job: dict) -> None:
        """refusals(job), all of them in one message."""
        problems = refusals(job)
        if problems:
            raise BackendError(f"{job.get('name', 'run')}/{job.get('point', 'base')}: the ns3 backend cannot run"
                               " what the spec asks (nothing was run):\n  - " + "\n  - ".join(problems))

    def describe(self) -> dict:
        """run.json's testbed for an ns-3 run: backend, substrate "ns3", time "simulated", the installed
        ns-3 version, the rules, no kernel release, and the program's path and SHA-256 (None both
        when it is not built)."""
        program = self.program if self.program.is_file() else None
        return {"backend": self.name, "substrate": "ns3", "time": "simulated",
                "ns3_version": ns3_version(), "ns3_rules": self.rules, "kernel_release": None,
                "program": str(program) if program else None,
                "program_sha256": hashlib.sha256(program.read_bytes()).hexdigest() if program else None}

    def execute(self, run_dir: pathlib.Path, job: dict, timeout_s: float) -> GuestResult:
        """Backend.execute in ns-3: builds the program if needed, writes raw/ns3.conf (the run and the
        switches), runs the program under the tether and, when it exits 0, writes raw/timeline.json
        on simulated time; the result's timings hold the program's peak resident memory
        (simulation_peak_rss_mb, run.json's timings). timeout_s is raised to at least 300 s + 10 s per simulated second per
        100 Mbit/s of bottleneck (a guard against a hang, not a budget). The exit status is the
        program's (-1 on the timeout)."""
        program = self.build()
        run_dir = pathlib.Path(run_dir).resolve()
        raw = run_dir / "raw"
        raw.mkdir(exist_ok=True)
        conf = raw / "ns3.conf"
        conf.write_text("\n".join(config_lines(job, raw) + (["cc_trace=1"] if self.cc_trace else [])
                                  + (["linux_rate_interval=1"] if self.linux_rate_interval else [])
                                  + (["linux_losses=1"] if self.linux_losses else [])
                                  + (["project_bbr=1"] if self.rules == "linux" else [])) + "\n")
        console = raw / "console.log"
        # The simulation's cost grows with the packets it moves, and faster than they do
        # (measured, 10 s of two flows: 0.23 host CPU-s per simulated s at 100 Mbit/s,
        # 1.4 at 400, 5.9 at 1000): a generous bound against a hang, not a budget.
        timeout_s = max(timeout_s, 300 + 10 * job["duration_s"] * max(1.0, job["bottleneck"]["rate_mbps"] / 100))
        start = time.time()
        with open(console, "wb") as out:
            out.write(f"host: {program} {conf}\n".encode())
            out.flush()
            code, usage, timed_out = tethered([program, conf], out, timeout_s, cwd=run_dir)
        wall = time.time() - start
        if timed_out:
            with open(console, "a") as out:
                out.write(f"\nhost: simulation killed after the {timeout_s:.0f}-s timeout\n")
        elif code == 0:
            self._write_timeline(raw, job, wall)
        # The wait's ru_maxrss (KiB) is the largest resident set of the tether and the program it
        # reaped: the simulator's peak (the tether's own is about 10 MB); resources.py sizes from it.
        return GuestResult(exit_status=-1 if timed_out else code, timed_out=timed_out, wall_s=wall,
                           cpu_s=usage.ru_utime + usage.ru_stime, console=str(console),
                           timings={"simulation_peak_rss_mb": round(usage.ru_maxrss / 1024, 1)})

    def _write_timeline(self, raw: pathlib.Path, job: dict, wall_s: float) -> None:
        """raw/timeline.json as the kernel guest writes it, on simulated time."""
        sim = json.loads((raw / "ns3.json").read_text())
        t0 = lead_s(job)
        timeline = {"t0": t0, "lead_s": t0, "substrate": "ns3", "ns3_version": sim["ns3_version"],
                    "events": [dict(e, t_s=e["at_s"]) for e in testbed.schedule(job)],
                    "commands": [], "congestion_controls": sorted(congestion_controls()), "ns3_rules": self.rules,
                    "kernel_release": None, "loss_seeded": True,
                    "timings": {"simulated_s": sim["simulated_s"], "simulation_wall_s": round(wall_s, 3),
                                "simulator_events": sim["events"]}}
        tmp = raw / "timeline.json.tmp"
        tmp.write_text(json.dumps(timeline, indent=1))
        tmp.rename(raw / "timeline.json")
