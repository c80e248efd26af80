"""The tether (bbrlab/host/backends/tether.py): a testbed dies with the process that launched it.

Plain processes stand in for the testbed here (a shell with a background child in
its group, as User-Mode Linux has its helpers); test_testbed.py kills a real run."""
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from bbrlab.host import backends
from conftest import REPO


def marker() -> str:
    """A sleep duration nobody else uses, so pgrep finds only this test's processes."""
    return f"{1000 + uuid.uuid4().int % 10**6 / 1e3:.3f}"


def alive(mark: str) -> list:
    res = subprocess.run(["pgrep", "-x", "-f", f"sleep {mark}"], capture_output=True, text=True)
    return res.stdout.split()


def wait_until(cond, timeout_s=10.0) -> bool:
    end = time.time() + timeout_s
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def group_of(mark):
    """A shell with two sleeps in its group."""
    return f"sleep {mark} & sleep {mark}; exit 3"


def test_exit_status_and_leftovers_of_a_finished_command(tmp_path):
    mark = marker()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with open(tmp_path / "out.log", "wb") as out:
        code, usage, timed_out = backends.tethered(["sh", "-c", f"sleep {mark} & exit 3"], out, 30, rmtree=scratch)
    assert code == 3 and not timed_out
    assert usage.ru_utime >= 0
    assert wait_until(lambda: not alive(mark), 5), "the command's background child survived it"
    assert not scratch.exists()


def test_timeout_kills_the_whole_group(tmp_path):
    mark = marker()
    started = time.time()
    with open(tmp_path / "out.log", "wb") as out:
        code, _usage, timed_out = backends.tethered(["sh", "-c", group_of(mark)], out, 1.0)
    assert timed_out and code == 137
    assert time.time() - started < 10
    assert wait_until(lambda: not alive(mark), 5)
    assert "testbed killed (kill requested)" in (tmp_path / "out.log").read_text()


LAUNCHER = textwrap.dedent("""
    import signal, sys
    sys.path.insert(0, {mininet!r})
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # Ctrl-C as in a terminal: a suite started in the background (`cmd &` in a script) inherits
    # SIGINT ignored, and Python then installs no KeyboardInterrupt handler
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from bbrlab.host import backends
    with open({log!r}, "wb") as out:
        backends.tethered(["sh", "-c", {command!r}], out, 600, rmtree={scratch!r}, after="touch " + {after!r})
""")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_killing_the_launcher_kills_the_command_and_its_children(tmp_path, sig):
    mark = marker()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    after = tmp_path / "after-ran"
    code = LAUNCHER.format(mininet=str(REPO / "mininet"), log=str(tmp_path / "out.log"), command=group_of(mark),
                           scratch=str(scratch), after=str(after))
    launcher = subprocess.Popen([sys.executable, "-c", code])
    try:
        assert wait_until(lambda: len(alive(mark)) == 2, 10), "the command never started"
        os.kill(launcher.pid, sig)
        launcher.wait(timeout=60)      # beyond tethered()'s own 30-s wait for the tether
        assert wait_until(lambda: not alive(mark), 10), f"left running after {sig.name}: {alive(mark)}"
        assert wait_until(after.exists, 5), "the after-command did not run"
        assert not scratch.exists()
        # the tether writes its last line after the after-command (after a SIGKILL nobody waits for it)
        assert wait_until(lambda: "testbed killed" in (tmp_path / "out.log").read_text(), 5)
    finally:
        launcher.kill()
        for pid in alive(mark):
            os.kill(int(pid), signal.SIGKILL)


def test_a_signal_to_the_tether_kills_the_group(tmp_path):
    """A scheduler's job kill signals every process of the job, the tether included."""
    mark = marker()
    with open(tmp_path / "out.log", "wb") as out:
        proc = subprocess.Popen([sys.executable, "-S", str(backends.TETHER), "0", "--", "sh", "-c", group_of(mark)],
                                stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT)
    try:
        assert wait_until(lambda: len(alive(mark)) == 2, 10)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 137
        assert wait_until(lambda: not alive(mark), 5)
        assert "testbed killed (signalled)" in (tmp_path / "out.log").read_text()
    finally:
        proc.kill()
        for pid in alive(mark):
            os.kill(int(pid), signal.SIGKILL)


def test_the_wait_between_polls_ends_when_the_tether_exits():
    """tethered() sleeps up to POLL_S between polls but wakes at the tether's exit (a pidfd):
    a waiter given a minute returns once the process it watches is killed, long before."""
    proc = subprocess.Popen(["sleep", "300"])
    waiter = backends.base._ExitWaiter(proc.pid)
    try:
        assert waiter.fd is not None, "no pidfd on this host: tethered() falls back to sleeping"
        killer = subprocess.Popen(["sh", "-c", f"sleep 0.5; kill {proc.pid}"])
        start = time.monotonic()
        waiter(60.0)
        assert time.monotonic() - start < 30.0
        killer.wait(timeout=10)
    finally:
        proc.kill()
        proc.wait()
        waiter.close()
    assert waiter.fd is None
