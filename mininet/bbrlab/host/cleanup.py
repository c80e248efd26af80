"""Remove what a native run leaves on the host (`bbrlab clean`, like Mininet's `mn -c`).

A native run (backends/native.py) builds its dumbbell on the host's own
kernel. When it ends normally Mininet tears it down, but a run that is killed
(SIGKILL of the runner, a scheduler's job kill, a crash) leaves:

- the Mininet host shells (`dash -is mininet:snd1`, started with setsid, so
  they survive a kill of the run's process group) and every process in their
  network namespaces (the flows' bulk or iperf3, ping, tcpdump);
- the links of the root namespace: the switches sw1/sw2 (Linux bridges or
  Open vSwitch bridges), their veth ports sw<k>-eth<i> (deleting one end of a
  veth pair deletes the other), the ifb devices ifbflow<i> of the ingress
  delay, and the qdiscs on them, which go with their devices;
- the BBR variant modules the run loaded.

`clean()` looks at the host and removes exactly those: it matches the
dumbbell's own names (topology.py, shaping.ifb_name) and the variant names
(variants.yaml, variants.names()), nothing else of the host. The native backend runs it
before every run and, through the tether, after every run however it ends.
`plan()` is a pure function of the observed state, so what it would do can be
tested anywhere; `clean()` acts, as root.
"""
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass, field

from ..experiment import variants as registry

HOST_SHELL = re.compile(r"\bmininet:(snd|rcv)\d+\b")                # topology.py host names
LINK = re.compile(r"^(sw[12](-eth\d+)?|ifbflow\d+|(snd|rcv)\d+-eth\d+)$")
SWITCHES = ("sw1", "sw2")


@dataclass
class HostState:
    """What observe() saw on this host: processes (pid -> (command line, network namespace)), link
    names of the root namespace, loaded kernel modules, Open vSwitch bridges, and this process's
    own network namespace."""
    processes: dict = field(default_factory=dict)   # pid -> (command line, network namespace id)
    links: list = field(default_factory=list)       # link names of the root network namespace
    modules: list = field(default_factory=list)     # loaded kernel modules
    ovs_bridges: list = field(default_factory=list)
    own_netns: str = ""                             # this process's network namespace


@dataclass
class Plan:
    """What clean() removes: the pids to kill, then the commands to run, in order. False when empty."""
    kill: list = field(default_factory=list)        # pids
    commands: list = field(default_factory=list)    # argv lists

    def __bool__(self):
        return bool(self.kill or self.commands)

    def describe(self) -> list:
        """One line per action, kills first ("kill 123"), then each command's argv joined by spaces."""
        return ([f"kill {pid}" for pid in self.kill] + [" ".join(cmd) for cmd in self.commands])


def plan(state: HostState, variants) -> Plan:
    """What to remove, from what was observed: pure, no side effects."""
    shells = {pid for pid, (cmdline, _ns) in state.processes.items() if HOST_SHELL.search(cmdline)}
    namespaces = {state.processes[pid][1] for pid in shells} - {state.own_netns, ""}
    kill = sorted(shells | {pid for pid, (_cmd, ns) in state.processes.items() if ns in namespaces})
    commands = [["ovs-vsctl", "--timeout=5", "--if-exists", "del-br", br] for br in SWITCHES
                if br in state.ovs_bridges]
    # switches first (a bridge's ports stay; each veth goes with either of its ends)
    links = sorted((name for name in state.links if LINK.match(name)),
                   key=lambda name: (name not in SWITCHES, name))
    commands += [["ip", "link", "del", name] for name in links]
    commands += [["rmmod", name] for name in sorted(set(state.modules) & set(variants))]
    return Plan(kill=kill, commands=commands)


def _netns(pid) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return ""


def observe() -> HostState:
    """A HostState of this host now, this process excluded: every process's command line and
    network namespace from /proc, the root namespace's links (`ip -o link`, when ip exists),
    /proc/modules, and `ovs-vsctl list-br` (when it exists and answers). Changes nothing."""
    state = HostState(own_netns=_netns("self"))
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        state.processes[int(entry)] = (cmdline, _netns(entry))
    if shutil.which("ip"):
        res = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True)
        # "7: sw1-eth1@sw2-eth1: <...": the name is the second field, up to an "@peer"
        state.links = [line.split(":")[1].strip().split("@")[0] for line in res.stdout.splitlines() if ":" in line]
    if os.path.exists("/proc/modules"):
        with open("/proc/modules") as f:
            state.modules = [line.split()[0] for line in f if line.strip()]
    if shutil.which("ovs-vsctl"):
        res = subprocess.run(["ovs-vsctl", "--timeout=5", "list-br"], capture_output=True, text=True)
        if res.returncode == 0:
            state.ovs_bridges = res.stdout.split()
    return state


def clean(dry_run: bool = False, progress=print) -> Plan:
    """Remove a native run's leftovers from this host; returns what was (or would be) done."""
    todo = plan(observe(), registry.names())
    if dry_run:
        return todo
    for pid in todo.kill:
        try:
            os.kill(pid, signal.SIGKILL)
            progress(f"clean: killed {pid}")
        except ProcessLookupError:
            pass
    for cmd in todo.commands:
        res = subprocess.run(cmd, capture_output=True, text=True)
        # a veth's peer is gone with its other end; an OVS bridge's ports with the bridge
        gone = res.returncode != 0 and "Cannot find device" in res.stderr
        progress(f"clean: {' '.join(cmd)}" + ("" if res.returncode == 0 or gone else f" failed: {res.stderr.strip()}"))
    return todo
