"""The set-up's root-namespace ip/tc commands run as one batch per tool (guest.run_batched), and the
requests the driver sends itself instead of an `ip` or `tc` process (veth.py, fq.py), on
the host in a fresh network namespace: no testbed boot. (The bridges' own `ip -batch`, in
topology.py, is exercised by every booted test: nothing is forwarded without it; the dumbbell
itself is built here too, by Mininet in a fresh namespace.)"""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from bbrlab.guest import driver as guest

# the child Python imports the package the way the guest does
ENV = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[1] / "mininet"))

needs_netns = pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare (root)")

SCRIPT = """
import json, subprocess
from bbrlab.guest import driver as guest
guest.run_batched([["tc", "qdisc", "replace", "dev", "lo", "root", "handle", "1:", "tbf", "rate", "8mbit",
                    "burst", "5000", "limit", "30000"],
                   ["ip", "link", "set", "dev", "lo", "up"],
                   ["tc", "qdisc", "add", "dev", "lo", "parent", "1:1", "handle", "10:", "bfifo", "limit", "30000"]])
print(subprocess.run(["tc", "qdisc", "show", "dev", "lo"], capture_output=True, text=True).stdout)
print(subprocess.run(["ip", "link", "show", "lo"], capture_output=True, text=True).stdout)
"""


@needs_netns
def test_batches_run_in_order_within_each_tool():
    res = subprocess.run(["unshare", "-n", sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, env=ENV)
    assert res.returncode == 0, res.stderr
    assert "qdisc tbf 1: root" in res.stdout and "qdisc bfifo 10: parent 1:1" in res.stdout
    assert "state UNKNOWN" in res.stdout          # lo starts DOWN in a new namespace; up, it reads UNKNOWN


@needs_netns
def test_a_failing_line_names_its_command():
    script = ("from bbrlab.guest import driver as guest\n"
              "guest.run_batched([['tc', 'qdisc', 'add', 'dev', 'nosuchdev0', 'root', 'pfifo']])")
    res = subprocess.run(["unshare", "-n", sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=ENV)
    assert res.returncode != 0
    assert "tc qdisc add dev nosuchdev0 root pfifo" in res.stderr


def test_arguments_the_batch_syntax_cannot_carry_are_refused():
    with pytest.raises(ValueError, match="cannot carry"):
        guest.run_batched([["tc", "qdisc", "add", "dev", "a b", "root", "pfifo"]])


DUMBBELL = """
import json, os, subprocess
from bbrlab.guest import topology
leak_r, leak_w = os.pipe()
os.set_inheritable(leak_w, True)          # a descriptor of the driver that a shell must not keep
db = topology.build(2, "linuxbridge", 1500)
pipe = os.readlink(f"/proc/self/fd/{leak_w}")
held = {h.name: sorted(os.readlink(f"/proc/{h.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{h.pid}/fd"))
        for h in db.senders + db.receivers}
ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
out = {"shells": [line for line in ps.splitlines() if line.startswith(topology.Host.SHELL[0] + " ") and "mininet:" in line],
       "ports": {sw: subprocess.run(["ip", "-o", "link", "show", "master", sw], capture_output=True,
                                    text=True).stdout.count("master " + sw) for sw in ("sw1", "sw2")},
       "ping": db.senders[1].cmd("ping -c 1 -W 2 10.0.2.2"), "echo": db.receivers[0].cmd("echo hello"),
       "leaked": {name: pipe in fds for name, fds in held.items()}}
hosts = db.senders + db.receivers
ns = lambda pid: os.readlink(f"/proc/{pid}/ns/net")
out["namespaces"] = len({ns(h.pid) for h in hosts} | {ns("self")})
out["shell_sessions"] = [os.getsid(h.pid) == h.pid for h in hosts]
sleeper = db.senders[1].popen(["sleep", "5"])
out["popen"] = {"in_node": ns(sleeper.pid) == ns(db.senders[1].pid), "own_session": os.getsid(sleeper.pid) == sleeper.pid}
sleeper.kill()
db.net.stop()
out["links_after_stop"] = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout.count("\\n")
print(json.dumps(out))
"""


@needs_netns
def test_dumbbell_bridges_have_no_shells_and_forward():
    """topology.Bridge: the Linux bridges of the dumbbell live in the root namespace with no
    Mininet shell of their own (only the four hosts have one); each bridge has its three ports
    (the bottleneck link and two hosts), a sender reaches its receiver through both, and
    Mininet's stop() removes every link. topology.Host: a host's shell, started without `env`
    and `stty`, prompts and does not echo (a command's output is its output alone), and keeps
    none of the driver's inheritable descriptors (what `mnexec -c` was for). Mininet in a fresh
    network namespace on the host."""
    res = subprocess.run(["unshare", "-n", sys.executable, "-c", DUMBBELL], capture_output=True, text=True,
                         timeout=120, env=ENV)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert sorted(s.split("mininet:")[1] for s in out["shells"]) == ["rcv1", "rcv2", "snd1", "snd2"], out["shells"]
    assert out["ports"] == {"sw1": 3, "sw2": 3}
    assert "1 received" in out["ping"], out["ping"]
    assert out["echo"] == "hello\r\n"
    assert out["leaked"] == {"snd1": False, "snd2": False, "rcv1": False, "rcv2": False}
    assert out["links_after_stop"] == 1      # lo only
    # each host in a network namespace and a session of its own (what `mnexec -dn` made), the
    # driver back in its own; a command started in a host runs in the host's namespace, in its own session
    assert out["namespaces"] == 5 and out["shell_sessions"] == [True] * 4
    assert out["popen"]["in_node"] and out["popen"]["own_session"]


STATE = """
import re, subprocess, sys
subprocess.run(["ip", "link", "add", "h1-eth0", "type", "veth", "peer", "name", "sw-eth1"], check=True)
if sys.argv[1] == "ifconfig":
    for cmd in (["ifconfig", "h1-eth0", "10.0.2.1/16", "up"], ["ifconfig", "lo", "up"]):
        subprocess.run(cmd, check=True)
else:
    from bbrlab.guest import ifconfig
    ifconfig.address_up("h1-eth0", "10.0.2.1", 16)
    ifconfig.up("lo")
show = lambda *a: subprocess.run(["ip", *a], capture_output=True, text=True, check=True).stdout
text = show("-d", "addr") + show("route", "show", "table", "all")
print(re.sub(r"([0-9a-f]{2}:){5}[0-9a-f]{2}", "MAC", text))
"""


@needs_netns
def test_the_ioctls_leave_an_interface_as_ifconfig_does():
    """topology.Host configures a host's address and loopback by ifconfig's own ioctls
    (bbrlab.guest.ifconfig) instead of running ifconfig: addresses, prefix, broadcast, flags and the
    routes the kernel derives must come out the same, each in a fresh network namespace."""
    if not shutil.which("ifconfig"):
        pytest.skip("needs net-tools' ifconfig as the reference")
    got = {how: subprocess.run(["unshare", "-n", sys.executable, "-c", STATE, how], capture_output=True,
                               text=True, timeout=60, env=ENV) for how in ("ifconfig", "ioctls")}
    for how, res in got.items():
        assert res.returncode == 0, (how, res.stderr)
    assert "inet 10.0.2.1/16 brd 10.0.255.255" in got["ifconfig"].stdout
    assert "10.0.0.0/16 dev h1-eth0" in got["ifconfig"].stdout
    assert got["ioctls"].stdout == got["ifconfig"].stdout


def test_a_prefix_length_out_of_range_is_refused():
    from bbrlab.guest import ifconfig
    assert ifconfig.netmask(16) == "255.255.0.0" and ifconfig.netmask(0) == "0.0.0.0"
    with pytest.raises(ValueError, match="prefix length"):
        ifconfig.netmask(33)


PAIR = """
import os, re, subprocess, sys, time
from bbrlab.guest import netns, veth
child = subprocess.Popen(["unshare", "-n", "sleep", "60"])   # a Mininet host's namespace
time.sleep(0.2)
here = os.open("/proc/self/ns/net", os.O_RDONLY)
args = ("h1-eth0", "sw1-eth2", "02:00:00:00:01:01", "02:00:00:00:02:02")
if sys.argv[1] == "ip":
    subprocess.run(["nsenter", "-t", str(child.pid), "-n", "ip", "link", "add", "name", args[0], "address", args[2],
                    "type", "veth", "peer", "name", args[1], "address", args[3], "netns", str(os.getpid())], check=True)
else:
    netns.in_netns(child.pid, lambda: veth.make_pair(*args, here))
show = lambda *pre: subprocess.run([*pre, "ip", "-d", "link", "show"], capture_output=True, text=True).stdout
text = show() + "--" + show("nsenter", "-t", str(child.pid), "-n")
if sys.argv[1] == "again":
    try:
        netns.in_netns(child.pid, lambda: veth.make_pair(*args, here))
    except OSError as err:
        text = str(err)
child.kill()
print(re.sub(r"@if\\d+", "@ifN", re.sub(r"(?m)^\\d+:", "N:", text)))   # interface indices
"""


@needs_netns
def test_the_veth_request_makes_the_pair_ip_makes():
    """topology.VethLink makes each link's veth pair by the rtnetlink request `ip link add ...
    type veth peer ... netns` sends (bbrlab.guest.veth), from the first node's namespace: both ends, their
    names, addresses, flags and namespaces must come out as `ip` makes them; a second request for
    the same names fails naming the pair."""
    got = {how: subprocess.run(["unshare", "-n", sys.executable, "-c", PAIR, how], capture_output=True,
                               text=True, timeout=60, env=ENV) for how in ("ip", "request", "again")}
    for how, res in got.items():
        assert res.returncode == 0, (how, res.stderr)
    root, host = got["ip"].stdout.split("--")
    assert "sw1-eth2@" in root and "h1-eth0@" in host and "02:00:00:00:02:02" in root
    assert got["request"].stdout == got["ip"].stdout
    assert "veth pair h1-eth0/sw1-eth2" in got["again"].stdout and "exists" in got["again"].stdout


# The request `tc qdisc replace dev lo root fq` sends (iproute2 6.1 of Debian 12, dumped by
# `strace -e trace=sendmsg -e write=3`), its sequence number (bytes 8-11) zeroed: the reference
# for fq.request is tc's own message, not the module's reading of it.
TC_REPLACE_ROOT_FQ_LO = bytes.fromhex("30000000 24000505 00000000 00000000"
                                      "00000000 01000000 00000000 ffffffff"
                                      "00000000 07000100 66710000 04000200")


def test_the_fq_request_is_the_one_tc_sends():
    from bbrlab.guest import fq, rtnl
    msg = rtnl.message(fq.RTM_NEWQDISC, rtnl.NLM_F_REQUEST | rtnl.NLM_F_ACK | fq.NLM_F_REPLACE | fq.NLM_F_CREATE,
                       fq.request(1), seq=0)
    assert msg == TC_REPLACE_ROOT_FQ_LO


FQ = """
import re, subprocess, sys
from bbrlab.guest import fq
if sys.argv[1] == "tc":
    res = subprocess.run(["tc", "qdisc", "replace", "dev", sys.argv[2], "root", "fq"], capture_output=True, text=True)
    outcome = "ok" if res.returncode == 0 else "refused"
else:
    try:
        fq.replace_root(sys.argv[2])
        outcome = "ok"
    except OSError as err:
        outcome = "refused"
        print(err, file=sys.stderr)
shown = subprocess.run(["tc", "qdisc", "show", "dev", "lo"], capture_output=True, text=True).stdout
print(outcome, re.sub(r"qdisc fq [0-9a-f]+:", "qdisc fq N:", shown))   # the kernel numbers each new qdisc
"""


@needs_netns
def test_the_fq_request_does_what_tc_does():
    """fq.replace_root leaves the device as `tc qdisc replace dev D root fq` does, in a fresh namespace:
    fq at its defaults where the kernel has fq, refused by both where it has not (this host's
    kernel has no fq); a device that does not exist is named."""
    got = {how: subprocess.run(["unshare", "-n", sys.executable, "-c", FQ, how, dev], capture_output=True,
                               text=True, timeout=60, env=ENV)
           for how, dev in (("tc", "lo"), ("request", "lo"), ("request-missing", "nosuchdev0"))}
    for how, res in got.items():
        assert res.returncode == 0, (how, res.stderr)
    assert got["request"].stdout == got["tc"].stdout
    if got["tc"].stdout.startswith("ok"):
        assert "qdisc fq N: root" in got["tc"].stdout
    else:
        assert "fq on lo" in got["request"].stderr
    assert got["request-missing"].stdout.startswith("refused")
    assert "fq on nosuchdev0: no such device" in got["request-missing"].stderr


# The request `ip route add 10.0.1.1/32 dev lo quickack 1` sends (iproute2 6.1 of Debian 12, dumped by
# strace as above), its sequence number zeroed: the reference for quickack.request.
IP_QUICKACK_ROUTE_LO = bytes.fromhex("38000000 18000506 00000000 00000000"
                                     "02200000 fe03fd01 00000000 08000100"
                                     "0a000101 08000400 01000000 0c000800"
                                     "08000f00 01000000")


def test_the_quickack_route_request_is_the_one_ip_sends():
    from bbrlab.guest import quickack, rtnl
    msg = rtnl.message(quickack.RTM_NEWROUTE, rtnl.NLM_F_REQUEST | rtnl.NLM_F_ACK | quickack.NLM_F_EXCL
                       | quickack.NLM_F_CREATE, quickack.request("10.0.1.1", 1), seq=0)
    assert msg == IP_QUICKACK_ROUTE_LO


ROUTE = """
import subprocess, sys
from bbrlab.guest import quickack
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
for _ in range(2 if sys.argv[1] == "again" else 1):
    if sys.argv[1] == "ip":
        subprocess.run(["ip", "route", "add", "10.0.1.1/32", "dev", "lo", "quickack", "1"], check=True)
    else:
        try:
            quickack.add_route("10.0.1.1", sys.argv[2])
        except OSError as err:
            print(err)
print(subprocess.run(["ip", "-d", "route", "show", "table", "all"], capture_output=True, text=True).stdout)
"""


@needs_netns
def test_the_quickack_route_request_adds_the_route_ip_adds():
    """quickack.add_route leaves the routing tables as `ip route add A/32 dev D quickack 1` does (the
    route, its table, protocol, scope and metric); the same route again, or a device that does not
    exist, is refused naming the route."""
    got = {how: subprocess.run(["unshare", "-n", sys.executable, "-c", ROUTE, how, dev], capture_output=True,
                               text=True, timeout=60, env=ENV)
           for how, dev in (("ip", "lo"), ("request", "lo"), ("again", "lo"), ("missing", "nosuchdev0"))}
    for how, res in got.items():
        assert res.returncode == 0, (how, res.stderr)
    assert "unicast 10.0.1.1 dev lo table main proto boot scope link quickack 1" in got["ip"].stdout
    assert got["request"].stdout == got["ip"].stdout
    assert "quickack route to 10.0.1.1 via lo: File exists" in got["again"].stdout
    assert "quickack route to 10.0.1.1 via nosuchdev0: no such device" in got["missing"].stdout
