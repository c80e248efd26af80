"""Native backend: the same guest code on this host's kernel, as root.

For a real Linux host or the Vagrant VM. Before anything runs it checks that
the kernel can do what the experiments need and refuses, naming every
missing piece, when it cannot.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import time

from . import BackendError, GuestResult

PACKAGE_PARENT = pathlib.Path(__file__).resolve().parents[2]
QDISCS = {"netem": ["netem", "delay", "1ms"], "fq": ["fq"], "tbf": ["tbf", "rate", "1mbit", "burst", "3000", "limit", "3000"],
          "htb": ["htb"], "red": ["red", "limit", "400000", "min", "30000", "max", "90000", "avpkt", "1000",
                                  "burst", "55", "probability", "0.02", "bandwidth", "10mbit"]}
TOOLS = ["tc", "ip", "ethtool", "iperf3", "ping", "mnexec", "brctl"]


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


class NativeBackend:
    name = "native"

    def __init__(self, **_ignored):
        pass

    def check(self) -> None:
        missing = missing_prerequisites()
        if missing:
            raise BackendError("the native backend cannot run on this host:\n  - " + "\n  - ".join(missing)
                               + "\nuse the default uml backend, or a host/VM that has these (see Vagrantfile)")

    def describe(self) -> dict:
        return {"backend": self.name, "kernel_release": os.uname().release}

    def execute(self, run_dir: pathlib.Path, job: dict, timeout_s: float) -> GuestResult:
        run_dir = pathlib.Path(run_dir).resolve()
        raw = run_dir / "raw"
        raw.mkdir(exist_ok=True)
        console = raw / "console.log"
        env = dict(os.environ, PYTHONPATH=str(PACKAGE_PARENT))
        start = time.time()
        timed_out = False
        before = os.times()
        with open(console, "wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "bbrlab.guest", str(run_dir)], stdout=out,
                                    stderr=subprocess.STDOUT, env=env, start_new_session=True)
            try:
                status = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(proc.pid, 9)
                status = proc.wait()
                _run(["mn", "-c"])
        after = os.times()
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        return GuestResult(exit_status=-1 if timed_out else status, timed_out=timed_out,
                           wall_s=time.time() - start, cpu_s=cpu, console=str(console))
