"""The dumbbell's MTU (spec field mtu_bytes): topology.set_mtu() sets it on every interface
of every host and switch (Mininet's Topo takes none), and build() calls it only for a
non-default MTU. The booted effect (the senders' MSS = mtu_bytes - 52 with timestamps) was
checked on testbed runs of mininet/specs/yang2019 (tcp.csv mss_bytes 1000 at mtu_bytes 1052)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mininet"))
topology = pytest.importorskip("bbrlab.guest.topology")


class FakeIntf:
    def __init__(self, name):
        self.name = name


class FakeNode:
    def __init__(self, name, intfs, reply=""):
        self.name, self._intfs, self.reply, self.cmds = name, [FakeIntf(i) for i in intfs], reply, []

    def intfList(self):  # noqa: N802 (Mininet's name)
        return self._intfs

    def cmd(self, line):
        self.cmds.append(line)
        return self.reply


class FakeNet:
    def __init__(self, hosts, switches):
        self.hosts, self.switches = hosts, switches


def test_mtu_commands():
    assert topology.mtu_commands(["snd1-eth0", "sw1-eth2"], 1052) == [
        "ip link set dev snd1-eth0 mtu 1052", "ip link set dev sw1-eth2 mtu 1052"]


def test_set_mtu_covers_every_interface_but_lo():
    snd = FakeNode("snd1", ["lo", "snd1-eth0"])
    rcv = FakeNode("rcv1", ["lo", "rcv1-eth0"])
    sw1 = FakeNode("sw1", ["sw1-eth1", "sw1-eth2"])
    sw2 = FakeNode("sw2", ["sw2-eth1", "sw2-eth2"])
    topology.set_mtu(FakeNet([snd, rcv], [sw1, sw2]), 1052)
    sent = [c for n in (snd, rcv, sw1, sw2) for c in n.cmds]
    assert sent == [f"ip link set dev {i} mtu 1052" for i in
                    ("snd1-eth0", "rcv1-eth0", "sw1-eth1", "sw1-eth2", "sw2-eth1", "sw2-eth2")]


def test_set_mtu_fails_loudly():
    bad = FakeNode("snd1", ["snd1-eth0"], reply="Error: mtu less than device minimum.")
    with pytest.raises(RuntimeError, match="snd1: ip link set dev snd1-eth0 mtu 100"):
        topology.set_mtu(FakeNet([bad], []), 100)


def test_default_mtu_is_left_alone():
    assert topology.DEFAULT_MTU == 1500
