"""The set-up's root-namespace ip/tc commands run as one batch per tool (guest.run_batched), on
the host in a fresh network namespace: no testbed boot. (The bridges' own `ip -batch`, in
topology.py, is exercised by every booted test: nothing is forwarded without it.)"""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from bbrlab import guest

# the child Python imports the package the way the guest does
ENV = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[1] / "mininet"))

needs_netns = pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare (root)")

SCRIPT = """
import json, subprocess
from bbrlab import guest
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
    script = ("from bbrlab import guest\n"
              "guest.run_batched([['tc', 'qdisc', 'add', 'dev', 'nosuchdev0', 'root', 'pfifo']])")
    res = subprocess.run(["unshare", "-n", sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=ENV)
    assert res.returncode != 0
    assert "tc qdisc add dev nosuchdev0 root pfifo" in res.stderr


def test_arguments_the_batch_syntax_cannot_carry_are_refused():
    with pytest.raises(ValueError, match="cannot carry"):
        guest.run_batched([["tc", "qdisc", "add", "dev", "a b", "root", "pfifo"]])
