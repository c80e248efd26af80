"""Open vSwitch in the UML testbed (`switch: ovs`).

ovs-vswitchd 3.1.0 counts the guest's CPUs as 0 during the guest's first 10 s of
CLOCK_MONOTONIC and then reads no upcalls (guest.wait_for_ovs_cpu_count explains
it); on the virtual clock it always started that early and forwarded nothing."""
import json
import re

from bbrlab.guest import driver as guest
from conftest import cli, goodput_by_flow, write_spec

OVS_ONE_FLOW = """
name: ovs
duration_s: 5
clock: virtual
switch: ovs
bottleneck: {rate_mbps: 100, buffer_bdp: 1.0}
flows:
  - {cc: bbr, rtt_ms: 20}
"""


def test_ovs_start_waits_until_the_guest_clock_passes_ten_seconds():
    slept = []
    assert guest.wait_for_ovs_cpu_count(clock=lambda: 2.5, sleep=slept.append) == guest.OVS_CPU_COUNT_READY_S - 2.5
    assert slept == [guest.OVS_CPU_COUNT_READY_S - 2.5]
    assert guest.OVS_CPU_COUNT_READY_S > 10.0      # OVS 3.1.0's COUNT_CPU_UPDATE_TIME_MS, 10000 ms
    slept.clear()
    assert guest.wait_for_ovs_cpu_count(clock=lambda: 30.0, sleep=slept.append) == 0 and slept == []


def test_open_vswitch_forwards_a_bbr_flow_on_the_virtual_clock(tmp_path, kernel):
    """Mininet's OVSBridge (standalone, no controller) carries one BBR flow at >= 90 % of a
    100 Mbit/s bottleneck on the virtual clock, and the datapath lost no upcall."""
    spec_file = write_spec(tmp_path / "ovs.yaml", OVS_ONE_FLOW)
    res = cli("run", spec_file, "--out", tmp_path / "out", "--kernel", kernel)
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = tmp_path / "out" / "ovs" / "base" / "rep1"
    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["status"] == "ok", summary["error"]
    assert summary["spec"]["switch"] == "ovs" and summary["testbed"]["clock"] == "virtual"
    ovs = (run_dir / "raw" / "ovs.txt").read_text()
    missed, lost = map(int, re.search(r"missed:(\d+) lost:(\d+)", ovs).groups())
    # flow-table misses went up to ovs-vswitchd, none was dropped for want of a handler
    assert missed > 0 and lost == 0, ovs[:600]
    assert "Overriding n-handler-threads to 0" not in ovs
    assert summary["fidelity"]["valid"], [c for c in summary["fidelity"]["checks"] if not c["ok"]]
    rates = goodput_by_flow(run_dir, 1, 5)
    assert rates["1"] >= 0.9 * 100, rates
