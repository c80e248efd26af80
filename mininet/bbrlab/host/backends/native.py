"""Native backend: the same guest code on this host's kernel, as root.

For a real Linux host or the Vagrant VM. Before anything runs it checks that
the kernel can do what the experiments need and refuses, naming every
missing piece, when it cannot. The guest runs under the tether (tether.py) like the
UML kernel does; `bbrlab clean` (cleanup.py) runs before each run and after it,
however it ended.
"""
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import time

from .. import cleanup, modules
from . import phases
from .base import Backend, GuestResult, build_guest_programs, tethered
from .errors import BackendError

PACKAGE_PARENT = pathlib.Path(__file__).resolve().parents[3]
QDISCS = {"netem": ["netem", "delay", "1ms"], "fq": ["fq"], "tbf": ["tbf", "rate", "1mbit", "burst", "3000", "limit", "3000"],
          "htb": ["htb"], "red": ["red", "limit", "400000", "min", "30000", "max", "90000", "avpkt", "1000",
                                  "burst", "55", "probability", "0.02", "bandwidth", "10mbit"]}
TOOLS = ["tc", "ip", "ethtool", "ping", "mnexec", "brctl"]   # the flows run bulk.c (built here); iperf3 only with traffic_tool: iperf3


def _run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def missing_prerequisites() -> list:
    """Everything this host lacks for the native backend, as readable reasons."""
    missing = []
    if os.geteuid() != 0:
        missing.append("must run as root (network namespaces, tc)")
    missing += [f"tool '{t}' not found (install it, see envs/debian-packages.txt)" for t in TOOLS if not shutil.which(t)]
    modules_disabled = pathlib.Path("/proc/sys/kernel/modules_disabled")
    if not pathlib.Path("/proc/modules").exists():
        missing.append("kernel has no loadable-module support (/proc/modules absent): the BBR variants cannot be loaded")
    elif modules_disabled.exists() and modules_disabled.read_text().strip() == "1":
        missing.append("module loading is disabled (kernel.modules_disabled=1)")
    if missing and os.geteuid() != 0:
        return missing
    if shutil.which("ip") and shutil.which("tc"):
        ns = f"bbrlab-probe-{os.getpid()}"
        if _run(["ip", "netns", "add", ns]).returncode != 0:
            missing.append("cannot create network namespaces")
        else:
            try:
                _run(["ip", "-n", ns, "link", "set", "lo", "up"])
                for name, args in QDISCS.items():
                    res = _run(["tc", "-n", ns, "qdisc", "replace", "dev", "lo", "root"] + args)
                    if res.returncode != 0:
                        missing.append(f"queueing discipline sch_{name} unavailable: {res.stderr.strip()}")
            finally:
                _run(["ip", "netns", "del", ns])
    available = pathlib.Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    if available.exists() and "bbr" not in available.read_text().split():
        if _run(["modprobe", "tcp_bbr"]).returncode != 0:
            missing.append("congestion control bbr not available and tcp_bbr cannot be loaded")
    return missing


class NativeBackend(Backend):
    """The guest side run as root directly on this host's kernel (or a VM's), in network
    namespaces: the host's congestion controls and qdiscs, its Open vSwitch, the variant modules
    built for its kernel; leftovers of a killed run are removed before and after each run
    (cleanup.py). Takes no constructor options (others are ignored)."""
    name = "native"

    def __init__(self, **_ignored):
        pass

    def check(self) -> None:
        """missing_prerequisites() is empty; the flows' bulk program built."""
        missing = missing_prerequisites()
        if missing:
            raise BackendError("the native backend cannot run on this host:\n  - " + "\n  - ".join(missing)
                               + "\nuse the default uml backend, or a host/VM that has these (see Vagrantfile)")
        build_guest_programs("bulk")

    def modules(self, job: dict) -> list:
        """The run's variant modules as built for this host's kernel (refused when missing)."""
        return modules.for_job(job, "native")

    def describe(self) -> dict:
        """{"backend": "native", "kernel_release": this host's uname release}."""
        return {"backend": self.name, "kernel_release": os.uname().release}

    def cleanup_command(self) -> str:
        """What the tether runs after the guest, however the run ended (cleanup.py)."""
        return f"{shlex.quote(sys.executable)} -m bbrlab clean --quiet"

    def guest_command(self, run_dir: pathlib.Path) -> list:
        """The argv that starts the guest side on this host: `python3 -m bbrlab.guest RUN_DIR` with
        the runner's own interpreter."""
        return [sys.executable, "-m", "bbrlab.guest", str(run_dir)]

    def execute(self, run_dir: pathlib.Path, job: dict, timeout_s: float) -> GuestResult:
        """Backend.execute on this host: cleans leftovers, then runs guest_command under the tether with
        raw/console.log as its output and the package on PYTHONPATH, and the clean-up afterwards
        however it ends. Writes run_dir/raw/ (created if missing); the exit status is the guest's
        (-1 on the timeout)."""
        run_dir = pathlib.Path(run_dir).resolve()
        raw = run_dir / "raw"
        raw.mkdir(exist_ok=True)
        console = raw / "console.log"
        env = dict(os.environ, PYTHONPATH=str(PACKAGE_PARENT))
        console_times = phases.ConsoleTimes(console)
        start = time.time()
        with open(console, "w") as out:
            # leftovers of an earlier run that was killed would collide with this one's names
            cleanup.clean(progress=lambda m: out.write(f"host: {m}\n"))
            out.flush()
            # The tether kills the guest's process group and then runs the cleanup: after the
            # run, on the timeout, and when the runner is killed (SIGKILL included).
            status, usage, timed_out = tethered(self.guest_command(run_dir), out, timeout_s, env=env,
                                                on_poll=console_times.poll,
                                                after=self.cleanup_command())
        end = time.time()
        return GuestResult(exit_status=-1 if timed_out else status, timed_out=timed_out,
                           wall_s=end - start, cpu_s=usage.ru_utime + usage.ru_stime, console=str(console),
                           timings=console_times.timings(start))
