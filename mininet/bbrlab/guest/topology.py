r"""The dumbbell, on the Mininet API.

    snd1 --\                                /-- rcv1
    snd2 ---- sw1 ==== bottleneck ==== sw2 ---- rcv2
    sndN --/    (sw1's port toward sw2)     \-- rcvN

Flow i runs from snd<i> to rcv<i>. Switches are Linux bridges by default
(`switch: linuxbridge`) or Open vSwitch bridges in standalone (learning)
mode with no controller (`switch: ovs`). In the UML testbed ovs-vswitchd is
started only once the guest is 10 s old: OVS 3.1.0 counts 0 CPUs before that and
then starts no upcall handler, so nothing is forwarded (driver.wait_for_ovs_cpu_count
explains why). Addresses: snd<i> is
10.0.1.<i>, rcv<i> is 10.0.2.<i> (one /16, so flows are told apart by address).
MAC addresses are the kernel's own (random, from the run's seed in the UML
testbed): Mininet's autoSetMacs would start three `ifconfig` processes per
host interface, and nothing here reads a MAC.
"""
import os
import pathlib
import pty
import select
import shlex
import subprocess
import termios
from dataclasses import dataclass, field

from mininet.link import Link
from mininet.log import warn
from mininet.net import Mininet
from mininet.node import Host as MininetHost
from mininet.node import OVSBridge
from mininet.topo import Topo

from . import ifconfig, netns, veth


@dataclass
class Dumbbell:
    """The started dumbbell: the Mininet network, snd<i> and rcv<i> nodes in flow order (index i for
    flow i + 1), the bottleneck interface, the switch ports facing each sender and receiver in the
    same order, and every node's interface names."""
    net: Mininet
    senders: list
    receivers: list
    bottleneck_intf: str           # sw1's egress toward sw2 (the bottleneck queue)
    sender_side_ports: list        # sw1's port facing snd<i> (ACK path toward the sender)
    receiver_side_ports: list      # sw2's port facing rcv<i> (data path after the bottleneck)
    interfaces: dict = field(default_factory=dict)   # node name -> list of interface names


# Interface parameters: `up: None` skips Mininet's own `ifconfig <intf> up` (one guest process
# per interface; a host's interface comes up with its address, a switch port when the bridge
# enslaves it, see Bridge). Each guest process costs the UML host 50-60 ms of CPU to start.
NO_IFCONFIG = {"up": None}


class DumbbellTopo(Topo):
    """The dumbbell's nodes and links (sw1 - sw2 on port 1 of each, snd<i> on sw1 and rcv<i> on sw2
    at port i + 1), addresses 10.0.1.<i>/16 and 10.0.2.<i>/16."""
    def build(self, n_flows: int, mtu: int = 1500, bridge_ports_up: bool = False):  # pylint: disable=arguments-differ
        """Add two switches and n_flows sender/receiver pairs. Host interfaces skip Mininet's `ifconfig
        up` (they come up with their address); switch ports do too unless bridge_ports_up (Open
        vSwitch, which does not bring its ports up). `mtu` is accepted for Topo's signature only:
        set_mtu applies it once the network is up."""
        port = {} if bridge_ports_up else NO_IFCONFIG
        sw1, sw2 = self.addSwitch("sw1"), self.addSwitch("sw2")
        self.addLink(sw1, sw2, port1=1, port2=1, params1=dict(port), params2=dict(port))
        for i in range(1, n_flows + 1):
            snd = self.addHost(f"snd{i}", ip=f"10.0.1.{i}/16")
            rcv = self.addHost(f"rcv{i}", ip=f"10.0.2.{i}/16")
            self.addLink(snd, sw1, port2=i + 1, params1=dict(NO_IFCONFIG), params2=dict(port))
            self.addLink(rcv, sw2, port2=i + 1, params1=dict(NO_IFCONFIG), params2=dict(port))


def _bridge_class():
    from mininet.nodelib import LinuxBridge

    class Bridge(LinuxBridge):
        """Mininet's LinuxBridge (no STP) without a shell of its own: a bridge lives in the root
        namespace, where the driver itself runs, so its commands (Mininet's `ip link` for its
        links, the MTU) run as the driver's own processes instead of through `mnexec env bash`
        and `stty` (four processes per switch before its first command). Built by one
        `ip -batch`: the bridge, its ports enslaved and up, the bridge up. `brctl` is not used,
        so the class's one-time check does not start `which` and three `sysctl` processes."""

        def startShell(self, mnopts=None):
            self.pid = os.getpid()         # the root namespace, for `ip link ... netns <pid>`

        def cmd(self, *args, **kwargs):
            if len(args) == 1 and isinstance(args[0], list):
                args = args[0]
            line = " ".join(str(a) for a in args)
            argv = shlex.split(line) if not any(c in line for c in "|&;<>()$`*?[]{}~\\'\"") \
                else ["bash", "-c", line]
            try:
                res = subprocess.run(argv, capture_output=True, text=True)
            except OSError as e:              # e.g. Mininet's `brctl delbr` in stop() without bridge-utils
                return f"{argv[0]}: {e}\n"
            return res.stdout + res.stderr

        @classmethod
        def setup(cls):
            """Bridge netfilter would pass bridged packets through iptables: warn as Mininet does,
            reading /proc instead of starting sysctl (absent when br_netfilter is not loaded)."""
            for table in ("arp", "ip", "ip6"):
                knob = pathlib.Path(f"/proc/sys/net/bridge/bridge-nf-call-{table}tables")
                if knob.exists() and knob.read_text().strip() == "1":
                    warn(f"Warning: Linux bridge may not work with {knob.name} = 1\n")

        def start(self, _controllers):
            ports = [i for i in self.intfList() if self.name in i.name]
            lines = [f"link add name {self} type bridge stp_state 0"]
            lines += [f"link set dev {i} master {self} up" for i in ports]
            lines.append(f"link set dev {self} up")
            res = subprocess.run(["ip", "-batch", "-"], input="\n".join(lines) + "\n",
                                 capture_output=True, text=True)
            if res.returncode != 0:
                raise RuntimeError(f"{self.name}: ip -batch: {(res.stdout + res.stderr).strip()}")
    return Bridge


class Host(MininetHost):
    """Mininet's Host with a shell started by one process instead of four: Mininet starts
    `mnexec env PS1=... bash` and then runs `stty -echo` in it; here PS1 comes through the
    environment, the pseudo-terminal's echo is turned off before the shell starts, and the
    driver makes the shell's new network namespace and session itself (what `mnexec -dn` did;
    Mininet's mount namespace with its own /sys is left out: nothing run in a node reads /sys),
    and starts the node's commands from inside that namespace (popen). The
    driver's file descriptors are closed in the child by Python (close_range or the open ones
    listed) instead of by `mnexec -c`, which calls close() on every possible descriptor: 16 384
    system calls under Mininet's raised RLIMIT_NOFILE, each a ptrace stop in User-Mode Linux.
    The shell is dash, not bash: Mininet only writes command
    lines to it and reads up to the prompt, which any POSIX shell serves, and dash starts with
    about a quarter of bash's system calls and half its page faults (each a ptrace stop in the
    guest; see SHELL). Everything else, the prompt sentinel included, is Mininet's."""

    # `-i`: prompts (PS1 from the environment is Mininet's sentinel); `-s`: commands from stdin,
    # the name after it ends up in the command line, where cleanup.py finds the shells. dash has
    # no line editing to turn off, so the terminal's echo stays off as set below.
    SHELL = ("dash", "-is")

    def startShell(self, mnopts=None):
        """Start the node's shell (SHELL, in a session of its own and, when inNamespace, in a new network
        namespace: what `mnexec -dn` did, but one program start instead of two) on a
        pseudo-terminal without echo and wait for its first prompt; RuntimeError if it already runs.
        Sets what Mininet's Node.startShell sets (shell, stdin/stdout, pid, the poll object)."""
        if self.shell:
            raise RuntimeError(f"{self.name}: shell is already running")
        if mnopts not in (None, "-d"):
            raise ValueError(f"{self.name}: mnexec options {mnopts!r} are not supported here")
        self.master, self.slave = pty.openpty()
        attrs = termios.tcgetattr(self.slave)
        attrs[3] &= ~termios.ECHO                      # lflag
        termios.tcsetattr(self.slave, termios.TCSANOW, attrs)

        def spawn():
            return self._popen([*self.SHELL, "mininet:" + self.name], stdin=self.slave, stdout=self.slave,
                               stderr=self.slave, close_fds=True, start_new_session=True,
                               env=dict(os.environ, PS1=chr(127)))
        self.shell = netns.in_new_netns(spawn) if self.inNamespace else spawn()
        self.stdin = os.fdopen(self.master, "r")
        self.stdout = self.stdin
        self.pid = self.shell.pid
        self.pollOut = select.poll()
        self.pollOut.register(self.stdout)
        self.outToNode[self.stdout.fileno()] = self
        self.inToNode[self.stdin.fileno()] = self
        self.execed, self.lastCmd, self.lastPid, self.readbuf = False, None, None, ""
        while True:                                    # the first prompt
            data = self.read(1024)
            if data and data[-1] == chr(127):
                break
            self.pollOut.poll()
        self.waiting = False
        self.cmd("unset HISTFILE; set +m")

    def popen(self, *args, **kwargs):
        """Mininet's popen without `mnexec -da PID`: the child is created from inside the node's
        network namespace (netns.in_netns; a new process inherits its creator's namespaces) in a
        session of its own (what mnexec's -d does), so each command the driver starts in a node
        (ping, the flows' two ends, a node's `tc`) is one program start instead of two. A node has no
        mount namespace of its own (startShell), so no /sys of its own either: none of those
        programs reads /sys."""
        kwargs["mncmd"] = []
        kwargs["start_new_session"] = True
        return netns.in_netns(self.pid, lambda: super(Host, self).popen(*args, **kwargs))

    def config(self, mac=None, ip=None, defaultRoute=None, lo="up", **params):
        """Mininet's Node.config for what the dumbbell asks (an address with its prefix length,
        loopback up) by ifconfig's own ioctls from the driver (ifconfig.py) instead of two
        `ifconfig` processes in the host's shell; anything else goes to Mininet."""
        if mac is not None or defaultRoute is not None or lo != "up" or ip is None or "/" not in ip:
            return super().config(mac=mac, ip=ip, defaultRoute=defaultRoute, lo=lo, **params)
        intf = self.defaultIntf()
        intf.ip, intf.prefixLen = ip.split("/")        # as Mininet's Intf.setIP records them
        netns.in_netns(self.pid, lambda: (ifconfig.address_up(intf.name, intf.ip, int(intf.prefixLen)),
                                          ifconfig.up("lo")))
        return {"ip": ""}


class VethLink(Link):
    """Mininet's Link with its veth pair made by the driver (veth.py: the one rtnetlink request
    `ip link add ... type veth peer ...` sends, from the first node's namespace) instead of an
    `ip` process in that node's shell."""

    @classmethod
    def makeIntfPair(cls, intfname1, intfname2, addr1=None, addr2=None, node1=None, node2=None,
                     deleteIntfs=True):
        """Make the veth pair intfname1 (in node1's namespace) / intfname2 (in node2's, the root's when
        node2 is None) by veth.make_pair; with deleteIntfs or without node1, Mininet's own way.
        Returns what Mininet's makeIntfPair returns."""
        if deleteIntfs or node1 is None:
            return super().makeIntfPair(intfname1, intfname2, addr1, addr2, node1, node2, deleteIntfs)
        here = None if node1.pid == os.getpid() else node1.pid
        peer = os.open(f"/proc/{1 if node2 is None else node2.pid}/ns/net", os.O_RDONLY)  # as util.makeIntfPair
        try:
            return netns.in_netns(here, lambda: veth.make_pair(intfname1, intfname2, addr1, addr2, peer))
        finally:
            os.close(peer)


def _switch_class(kind: str):
    return OVSBridge if kind == "ovs" else _bridge_class()


def build(n_flows: int, switch: str = "ovs", mtu: int = 1500) -> Dumbbell:
    """Create and start the dumbbell; returns handles for shaping and traffic."""
    net = Mininet(topo=DumbbellTopo(n_flows=n_flows, mtu=mtu, bridge_ports_up=switch == "ovs"),
                  switch=_switch_class(switch), host=Host,
                  link=VethLink, controller=None, autoSetMacs=False, waitConnected=False)
    net.start()
    if mtu != DEFAULT_MTU:
        set_mtu(net, mtu)
    senders = [net.get(f"snd{i}") for i in range(1, n_flows + 1)]
    receivers = [net.get(f"rcv{i}") for i in range(1, n_flows + 1)]
    interfaces = {node.name: [i.name for i in node.intfList() if i.name != "lo"]
                  for node in net.hosts + net.switches}
    return Dumbbell(net=net, senders=senders, receivers=receivers,
                    bottleneck_intf="sw1-eth1",
                    sender_side_ports=[f"sw1-eth{i + 1}" for i in range(1, n_flows + 1)],
                    receiver_side_ports=[f"sw2-eth{i + 1}" for i in range(1, n_flows + 1)],
                    interfaces=interfaces)


DEFAULT_MTU = 1500   # every emulated link's MTU unless the spec sets mtu_bytes


def mtu_commands(interfaces: list, mtu: int) -> list:
    """`ip link` command lines setting `mtu` on the given interfaces (all ends of every link, so
    that the senders' MSS follows it: mtu - 40 bytes of IP and TCP headers, less options)."""
    return [f"ip link set dev {name} mtu {int(mtu)}" for name in interfaces]


def set_mtu(net: Mininet, mtu: int) -> None:
    """Set the MTU on every interface of the dumbbell (hosts and switch ports; a Linux bridge
    follows its ports). Mininet's Topo takes no MTU, so it is set once the network is up."""
    for node in net.hosts + net.switches:
        names = [i.name for i in node.intfList() if i.name != "lo"]
        for cmd in mtu_commands(names, mtu):
            out = node.cmd(cmd)
            if out.strip():
                raise RuntimeError(f"{node.name}: {cmd}: {out.strip()}")


def ip_of(node) -> str:
    """The node's IPv4 address as Mininet recorded it (node.IP())."""
    return node.IP()
