"""`bbrlab clean` (bbrlab/host/cleanup.py): what a killed native run leaves on the host goes.

The native backend cannot run on the development machine (its kernel has no
netem, fq or red and no module loading), so the leftovers of a run are made
by hand here: the dumbbell's switch bridge, veth ports and ifb device in the
root namespace, and a stand-in for a Mininet host shell (its command line
names mininet:snd1, setsid, own network namespace) with a child in that
namespace. Where the host cannot create them (not root, no veth), those
tests skip; the plan (which commands for which state) is tested everywhere.
"""
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from bbrlab.host import backends, cleanup
from bbrlab.host.backends import native
from conftest import REPO, cli

LEFTOVERS = """
set -e
ip link add sw1 type bridge
ip link add sw1-eth1 type veth peer name sw2-eth1
ip link set sw1-eth1 master sw1
ip link add ifbflow1 type ifb
setsid unshare --net bash -c 'sleep {mark} & wait' mininet:snd1 </dev/null >/dev/null 2>&1 &
"""


def test_plan_removes_the_dumbbell_and_nothing_else():
    state = cleanup.HostState(
        processes={10: ("dash -is mininet:snd1", "net:[2]"),
                   11: ("iperf3 -s -p 5201", "net:[2]"),
                   12: ("bash --norc -is mininet:rcv12", "net:[3]"),
                   20: ("bash --norc -is mininet:h1", "net:[4]"),          # someone else's Mininet host
                   21: ("sshd: root", "net:[1]"),
                   22: ("ping 10.0.0.2", "net:[4]")},
        links=["lo", "eth0", "ifb0", "sw1", "sw1-eth1", "sw1-eth2", "sw2", "sw2-eth1", "ifbflow1", "ifbflow12",
               "s1-eth1", "sw3", "snd1-eth0", "docker0"],
        modules=["bbq", "tcp_bbr", "sch_netem", "bbr_e", "veth"],
        ovs_bridges=["sw1", "br-int"], own_netns="net:[1]")
    todo = cleanup.plan(state, variants=["bbq", "bbq_drain", "bbr_e"])
    assert todo.kill == [10, 11, 12]
    assert todo.commands == [
        ["ovs-vsctl", "--timeout=5", "--if-exists", "del-br", "sw1"],
        ["ip", "link", "del", "sw1"], ["ip", "link", "del", "sw2"],
        ["ip", "link", "del", "ifbflow1"], ["ip", "link", "del", "ifbflow12"],
        ["ip", "link", "del", "snd1-eth0"], ["ip", "link", "del", "sw1-eth1"],
        ["ip", "link", "del", "sw1-eth2"], ["ip", "link", "del", "sw2-eth1"],
        ["rmmod", "bbq"], ["rmmod", "bbr_e"]]
    assert not cleanup.plan(cleanup.HostState(links=["lo", "eth0"], own_netns="net:[1]"), ["bbq"])


def test_native_backend_cleans_before_and_after_through_the_tether():
    backend = native.NativeBackend()
    assert backend.cleanup_command() == f"{sys.executable} -m bbrlab clean --quiet"
    assert backend.guest_command("/r") == [sys.executable, "-m", "bbrlab.guest", "/r"]
    # the command the tether runs after a run works in the guest's environment
    env = dict(os.environ, PYTHONPATH=str(REPO / "mininet"))
    res = subprocess.run(backend.cleanup_command().replace("--quiet", "--dry-run"), shell=True, env=env,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def can_make_leftovers() -> str:
    if os.geteuid() != 0:
        return "needs root"
    if not (shutil.which("ip") and shutil.which("unshare") and shutil.which("setsid")):
        return "needs ip, unshare and setsid"
    probe = subprocess.run(["ip", "link", "add", "bbrlabprobe0", "type", "veth", "peer", "name", "bbrlabprobe1"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"this host cannot create veth devices: {probe.stderr.strip()}"
    subprocess.run(["ip", "link", "del", "bbrlabprobe0"], capture_output=True)
    existing = set(cleanup.observe().links) & {"sw1", "sw2", "sw1-eth1", "sw2-eth1", "ifbflow1"}
    if existing:
        return f"this host already has links named like the dumbbell's: {sorted(existing)}"
    return ""


def links():
    return set(cleanup.observe().links)


def sleeping(mark):
    return subprocess.run(["pgrep", "-f", f"sleep {mark}"], capture_output=True, text=True).stdout.split()


def wait_until(cond, timeout_s=10.0):
    end = time.time() + timeout_s
    while time.time() < end and not cond():
        time.sleep(0.1)
    return cond()


@pytest.fixture
def leftovers_possible():
    reason = can_make_leftovers()
    if reason:
        pytest.skip(reason)


def make_leftovers(mark):
    subprocess.run(["sh", "-c", LEFTOVERS.format(mark=mark)], check=True)
    assert wait_until(lambda: sleeping(mark), 5)


def remove_leftovers(mark):
    for pid in sleeping(mark):
        subprocess.run(["kill", "-9", pid])
    for name in ("sw1", "sw1-eth1", "ifbflow1"):
        subprocess.run(["ip", "link", "del", name], capture_output=True)


def test_clean_removes_a_killed_runs_leftovers(leftovers_possible):
    mark = "1234.5671"
    try:
        make_leftovers(mark)
        assert {"sw1", "sw1-eth1", "sw2-eth1", "ifbflow1"} <= links()
        dry = cli("clean", "--dry-run")
        assert dry.returncode == 0 and "ip link del sw1-eth1" in dry.stdout and "kill " in dry.stdout
        assert {"sw1", "ifbflow1"} <= links()                     # a dry run changes nothing
        res = cli("clean")
        assert res.returncode == 0, res.stderr
        assert not links() & {"sw1", "sw1-eth1", "sw2-eth1", "ifbflow1"}
        assert wait_until(lambda: not sleeping(mark), 5), "processes in the host namespace survived"
        again = cli("clean")
        assert again.returncode == 0 and "nothing to clean" in again.stdout
    finally:
        remove_leftovers(mark)


def test_killing_the_runner_of_a_native_guest_runs_the_cleanup(leftovers_possible, tmp_path):
    """The tether's after-command, as the native backend sets it: SIGKILL the launcher of a
    'guest' that built leftovers, and they are gone."""
    mark = "1234.5672"
    script = tmp_path / "guest.sh"
    script.write_text(LEFTOVERS.format(mark=mark) + "sleep 1000\n")
    launcher_code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO / 'mininet')!r})
        from bbrlab.host import backends
        from bbrlab.host.backends import native
        with open({str(tmp_path / 'console.log')!r}, "w") as out:
            backends.tethered(["sh", {str(script)!r}], out, 600, after=native.NativeBackend().cleanup_command())
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO / "mininet"))
    launcher = subprocess.Popen([sys.executable, "-c", launcher_code], env=env)
    try:
        assert wait_until(lambda: sleeping(mark) and {"sw1", "ifbflow1"} <= links(), 10)
        launcher.kill()
        launcher.wait()
        assert wait_until(lambda: not links() & {"sw1", "sw1-eth1", "sw2-eth1", "ifbflow1"}, 15), links()
        assert wait_until(lambda: not sleeping(mark), 5)
    finally:
        launcher.kill()
        remove_leftovers(mark)
        for pid in subprocess.run(["pgrep", "-f", str(script)], capture_output=True, text=True).stdout.split():
            subprocess.run(["kill", "-9", pid])


def test_clean_refuses_without_root_unless_dry_run():
    if os.geteuid() == 0:
        res = cli("clean", "--dry-run", user="nobody")
    else:
        res = cli("clean", "--dry-run")
    assert res.returncode == 0
    res = cli("clean", user="nobody") if os.geteuid() == 0 else cli("clean")
    assert res.returncode == 3 and "run it as root" in res.stderr
