"""Offloads off through ioctls (bbrlab/guest/offloads.py), checked against ethtool's own reading, on
the host's loopback device in a fresh network namespace: no testbed boot."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from bbrlab.guest import shaping

# the child Python imports the package the way the guest does
ENV = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[1] / "mininet"))

pytestmark = pytest.mark.skipif(not shutil.which("unshare") or not shutil.which("ethtool"),
                                reason="needs unshare and ethtool (root)")

SCRIPT = """
import json, subprocess
from bbrlab.guest import offloads
before = offloads.read("lo")
after = offloads.turn_off("lo")
shown = subprocess.run(["ethtool", "-k", "lo"], capture_output=True, text=True, check=True).stdout
print(json.dumps({"before": before, "after": after, "ethtool": shown}))
"""


def test_turn_off_is_what_ethtool_reports():
    res = subprocess.run(["unshare", "-n", sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         timeout=60, env=ENV)
    if res.returncode != 0 and "Operation not permitted" in res.stderr:
        pytest.skip("no permission to create a network namespace")
    assert res.returncode == 0, res.stderr
    import json
    out = json.loads(res.stdout)
    assert out["before"] == {"tso": True, "gso": True, "gro": True}      # loopback's defaults
    assert out["after"] == {"tso": False, "gso": False, "gro": False}
    lines = dict(line.split(":", 1) for line in out["ethtool"].splitlines()[1:] if ":" in line)
    # what `ethtool -K lo tso off gso off gro off` (the command the run records) leaves on the
    # testbed's 6.1 kernel: its four TSO features (a later host kernel may add more, which the
    # legacy ioctl leaves alone: the reason the native backend runs ethtool itself)
    for name in ("tx-tcp-segmentation", "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation",
                 "tx-tcp6-segmentation"):
        assert lines["\t" + name].split()[0] == "off", name
    assert lines["generic-segmentation-offload"].split()[0] == "off"
    assert lines["generic-receive-offload"].split()[0] == "off"
    (cmd,) = shaping.offloads_off("lo")
    assert cmd[3:] == ["tso", "off", "gso", "off", "gro", "off"]


def test_unknown_device_names_it():
    res = subprocess.run(["unshare", "-n", sys.executable, "-c",
                          "from bbrlab.guest import offloads; offloads.turn_off('nosuchdev0')"],
                         capture_output=True, text=True, timeout=60, env=ENV)
    assert res.returncode != 0 and "nosuchdev0" in res.stderr
