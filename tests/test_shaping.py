"""tc command lines for each knob of the spec (run against a real kernel in test_testbed.py)."""
from bbrlab.experiment import spec
from bbrlab.guest import shaping

BASE = {"name": "t", "duration_s": 30, "flows": [{"cc": "bbr", "rtt_ms": 10}]}


def bottleneck_of(**bn):
    (run,) = spec.expand(spec.resolve(dict(BASE, bottleneck=dict({"rate_mbps": 100, "buffer_bytes": 2_000_000}, **bn))))
    return run["bottleneck"]


def test_tbf_droptail_limits_bytes_in_a_bfifo():
    cmds = shaping.bottleneck("sw1-eth1", bottleneck_of())
    assert cmds[0][:9] == ["tc", "qdisc", "replace", "dev", "sw1-eth1", "root", "handle", "1:", "tbf"]
    assert cmds[0][9:] == ["rate", "100000000bit", "burst", "62500", "limit", "2000000"]
    assert cmds[1][-3:] == ["bfifo", "limit", "2000000"] and "1:1" in cmds[1]


def test_htb_shaper_has_one_class_at_the_rate():
    cmds = shaping.bottleneck("x", bottleneck_of(shaper="htb", burst_bytes=3028))
    assert cmds[0][-3:] == ["htb", "default", "1"]
    cls = cmds[1]
    assert cls[cls.index("rate") + 1] == "100000000bit" and cls[cls.index("ceil") + 1] == "100000000bit"
    assert cls[cls.index("burst") + 1] == "3028"


def test_red_parameters_pass_through():
    bn = bottleneck_of(aqm={"kind": "red", "min_bytes": 30000, "max_bytes": 90000, "probability": 0.1, "ecn": True})
    red = shaping.bottleneck("x", bn)[-1]
    assert red[red.index("red") - 1] == "10:"
    values = {red[i]: red[i + 1] for i in range(red.index("red") + 1, len(red) - 1)}
    assert values["min"] == "30000" and values["max"] == "90000" and values["probability"] == "0.1"
    assert values["burst"] == str(-(-(2 * 30000 + 90000) // 3000) + 1)
    assert red[-1] == "ecn"


def test_netem_delay_has_room_for_acks_and_can_change():
    (cmd,) = shaping.netem_delay("sw1-eth2", 50)
    assert cmd[2] == "replace" and cmd[cmd.index("delay") + 1] == "50ms"
    assert int(cmd[cmd.index("limit") + 1]) >= 10000
    (cmd,) = shaping.netem_delay("sw1-eth2", 12.5, change=True)
    assert cmd[2] == "change" and "12.5ms" in cmd


def test_sender_qdisc_and_offloads():
    assert shaping.sender_qdisc("snd1-eth0", "fq") == [["tc", "qdisc", "replace", "dev", "snd1-eth0", "root", "fq"]]
    assert shaping.sender_qdisc("snd1-eth0", "none") == []
    (cmd,) = shaping.offloads_off("snd1-eth0")
    assert cmd[:3] == ["ethtool", "-K", "snd1-eth0"] and cmd[3:] == ["tso", "off", "gso", "off", "gro", "off"]
