"""Same spec, same seed, virtual clock: the same numbers.

The run's seed reaches the testbed kernel's command line (bbrlab.seed=, which
kernel/patches/uml-seeded-random.patch turns into the guest's only source of
randomness), the guest's Python hash seed and, on the virtual clock, a pinned
guest wall clock (time-travel-start=). The command-line tests run without a
testbed; one test boots it three times (in parallel: two short runs with one
seed, one with another; about a minute) and compares the per-flow series;
another runs one spec from the checkout and from a relocated copy of the
package and wants the same tidy data (the driver's fixed start on the virtual
clock, guest.wait_for_virtual_start). bench/determinism_bench.py measures the
same on longer runs."""
import concurrent.futures
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys

import pytest

from bbrlab.experiment import spec
from bbrlab.host import runner
from bbrlab.guest import driver as guest
from bbrlab.guest import vclock
from bbrlab.host.backends import BackendError, uml
from conftest import REPO


def boot_line(seed=7, clock="virtual", **backend):
    return uml.UmlBackend(kernel="/bin/true", **backend).command("/tmp/run", clock, "/tmp/u", 1024, seed)


def test_the_runs_seed_goes_on_the_kernel_command_line():
    cmd = boot_line(7)
    assert "bbrlab.seed=7" in cmd
    assert "BBRLAB_PYTHONHASHSEED=7" in cmd
    # the host's address-space randomisation would change the guest's memory size from boot to boot
    assert cmd[:3] == ["setarch", platform.machine(), "--addr-no-randomize"] and cmd[3] == "/bin/true"
    assert f"time-travel-start={uml.GUEST_EPOCH_NS}" in cmd and "time-travel=inf-cpu" in cmd
    # PYTHONHASHSEED takes 0..2**32-1; the kernel takes any 64-bit seed
    assert "BBRLAB_PYTHONHASHSEED=1" in boot_line(2**32 + 1) and f"bbrlab.seed={2**32 + 1}" in boot_line(2**32 + 1)


def test_the_real_clock_keeps_the_hosts_wall_clock():
    cmd = boot_line(7, clock="real")
    assert "bbrlab.seed=7" in cmd
    assert not any(a.startswith("time-travel") for a in cmd)


def test_unseeded_boot_is_the_old_command_line():
    cmd = boot_line(7, seed_guest=False)
    assert cmd[0] == "/bin/true"
    assert not any(a.startswith(("bbrlab.seed", "BBRLAB_PYTHONHASHSEED", "time-travel-start")) for a in cmd)
    assert not any(a.startswith("bbrlab.seed") for a in boot_line(None))


@pytest.mark.parametrize("bad", [-1, 1.5, "3"])
def test_a_seed_that_is_not_a_non_negative_integer_is_refused(bad):
    with pytest.raises(BackendError, match="seed must be a non-negative integer"):
        boot_line(bad)


def test_the_guest_reads_the_seed_from_the_kernel_log(monkeypatch):
    monkeypatch.setenv("PYTHONHASHSEED", "5")
    log = "[    0.000000] Linux version 6.1.192\n[    0.000000] random: seeded from bbrlab.seed=5, not from the host\n"
    assert guest.randomness(log) == {"kernel_seed": 5, "python_hash_seed": "5"}
    monkeypatch.delenv("PYTHONHASHSEED")
    assert guest.randomness("[    0.000000] Linux version 6.1.192\n") == {"kernel_seed": None, "python_hash_seed": None}


# Random loss after the bottleneck: netem draws each drop from the kernel's generator, so
# with a fixed seed the drop pattern, and everything downstream of it, repeats.
SHORT = {"name": "det", "duration_s": 3, "clock": "virtual",
         "bottleneck": {"rate_mbps": 20, "buffer_bdp": 1.0, "loss_rate": 0.01},
         "flows": [{"cc": "bbr", "rtt_ms": 10}, {"cc": "cubic", "rtt_ms": 20, "start_s": 1}]}


def test_same_seed_same_series_other_seed_other_series(tmp_path, kernel):
    jobs = [spec.expand(spec.resolve(dict(SHORT, seed=seed)))[0] for seed in (11, 11, 12)]
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        summaries = list(pool.map(lambda k: runner.execute(jobs[k], tmp_path / "abc"[k], "uml", kernel=str(kernel),
                                                           progress=lambda m: None), range(3)))
    files = {name: [(tmp_path / run / "tidy" / name).read_text() for run in "abc"]
             for name in ("goodput.csv", "tcp.csv", "queue.csv")}
    assert len(files["goodput.csv"][0].splitlines()) > 40          # both flows, 0.1-s samples
    for name, (a, b, _c) in files.items():
        assert a == b, f"{name} differs between two runs with the same seed"
    assert files["goodput.csv"][0] != files["goodput.csv"][2], "another seed gave the same goodput series"
    drops = [json.loads((tmp_path / run / "raw" / "loss.json").read_text()) for run in "abc"]
    assert drops[0] == drops[1] and drops[0] != drops[2]
    for summary, seed in zip(summaries, (11, 11, 12)):       # run.json says where the randomness came from
        assert summary["testbed"]["randomness"] == {"kernel_seed": seed, "python_hash_seed": str(seed),
                                                    "restarted": True}


@pytest.mark.xfail(strict=True, reason=(
    "extra set-up work still moves the flows by a few hundred nanoseconds: the first SYN leaves "
    "256 ns earlier or later (one clock read in a user process's system call), so the receiver's "
    "initial sequence number and from there the trajectory differ (docs/clocks-and-fidelity.md, "
    "'What is not'); the restart, the absolute sleeps, the driver's priority and the timer slack "
    "did not remove it"))
def test_set_up_work_does_not_change_the_flows(tmp_path, kernel):
    """The same spec and seed, once with extra guest work at the end of set-up (bench_hooks
    setup_noise: processes started, random bytes drawn, files written, clock reads; what other
    versions of the host's binaries that the guest runs would do): byte-identical tidy data
    wanted. Recorded as a strict expected failure: it shows the limit of the guarantee (same
    host packages), and turns into a failure the day it passes. About 30 s."""
    job = spec.expand(spec.resolve(dict(SHORT, seed=5)))[0]
    noisy = dict(job, setup_noise=20)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda a: runner.execute(a[0], tmp_path / a[1], "uml", kernel=str(kernel),
                                               progress=lambda m: None), [(job, "quiet"), (noisy, "noisy")]))
    assert "set-up noise: 20 processes" in (tmp_path / "noisy" / "raw" / "console.log").read_text()
    for name in ("goodput.csv", "tcp.csv", "queue.csv"):
        assert (tmp_path / "quiet" / "tidy" / name).read_bytes() == (tmp_path / "noisy" / "tidy" / name).read_bytes(), \
            f"tidy/{name} differs after extra set-up work"


def test_the_flows_phase_starts_on_a_whole_second_after_a_margin():
    assert vclock.flows_phase_start(12.3) == 13.0
    assert vclock.flows_phase_start(12.6) == 14.0          # at least MARGIN_S (0.5 s) after the set-up
    assert vclock.flows_phase_start(12.3 + 2e-6) == 13.0   # microseconds more set-up: the same second


def test_the_generator_restarts_only_in_a_seeded_guest_on_the_virtual_clock(tmp_path):
    knob = tmp_path / "restart"
    knob.write_text("")
    assert guest.restart_randomness({"clock": "virtual"}, {"kernel_seed": 9}, knob) is True
    assert knob.read_text() == "9"
    knob.write_text("")
    assert guest.restart_randomness({"clock": "real"}, {"kernel_seed": 9}, knob) is False
    assert guest.restart_randomness({"clock": "virtual"}, {"kernel_seed": None}, knob) is False
    assert knob.read_text() == ""
    with pytest.raises(RuntimeError, match="rebuild it"):       # a seeded guest on an older kernel
        guest.restart_randomness({"clock": "virtual"}, {"kernel_seed": 9}, tmp_path / "missing")


def test_on_the_virtual_clock_the_driver_starts_at_a_fixed_uptime():
    slept = []
    ready = guest.wait_for_virtual_start({"clock": "virtual"}, 0.1, clock=lambda: 0.0006, sleep=slept.append)
    assert ready == 0.0006 and slept == [pytest.approx(0.0994)]
    slept.clear()         # the real clock keeps the host's timing: no wait
    guest.wait_for_virtual_start({"clock": "real"}, 0.1, clock=lambda: 0.0006, sleep=slept.append)
    assert slept == []


def test_a_start_later_than_the_fixed_uptime_is_logged(capsys):
    slept = []
    assert guest.wait_for_virtual_start({"clock": "virtual"}, 0.1, clock=lambda: 0.25, sleep=slept.append) == 0.25
    assert slept == [] and "timeline depends on how long the start took" in capsys.readouterr().out


TWO_FLOWS = """
name: where
duration_s: 6
clock: virtual
bottleneck: {rate_mbps: 100, buffer_bdp: 1.0}
flows:
  - {cc: bbr, rtt_ms: 10}
  - {cc: cubic, rtt_ms: 30}
"""


def relocated_copy(root: pathlib.Path) -> pathlib.Path:
    """A copy of the checkout's mininet/ at a longer path, with one module the guest's driver
    imports moved to another file of the package and a stub importing it left in its place (as
    a re-layout leaves them). Returns the copy's mininet/ (its PYTHONPATH); its build/bin gets
    its own programs on first use."""
    mininet = root / "a-second-and-much-longer-checkout-path" / "mininet"
    shutil.copytree(REPO / "mininet", mininet, ignore=shutil.ignore_patterns("__pycache__"))
    package = mininet / "bbrlab" / "guest"
    (package / "rcvlowat.py").rename(package / "lowat_moved.py")
    (package / "rcvlowat.py").write_text("from .lowat_moved import *  # noqa: F401,F403\n"
                                         "from .lowat_moved import apply_when_connected  # noqa: F401\n")
    return mininet


def test_where_the_code_lies_does_not_change_the_data(tmp_path, kernel):
    """The same spec and seed from the checkout and from a relocated copy of the package (other
    paths on the kernel's command line and in the guest, a guest module in another file, another
    output path): byte-identical tidy data. Before the driver waited for a fixed uptime
    (guest.wait_for_virtual_start) the copy's interpreter start read the clock more often, which
    on the virtual clock shifted the guest's timeline, and with it the flows' ports and the tidy
    data. About 30 s (two 6-s runs side by side)."""
    spec_file = tmp_path / "where.yaml"
    spec_file.write_text(TWO_FLOWS)
    copy = relocated_copy(tmp_path)
    runs = {"here": (REPO / "mininet", tmp_path / "out"), "copy": (copy, tmp_path / "output-of-the-relocated-copy")}

    def run(name):
        pythonpath, out = runs[name]
        res = subprocess.run([sys.executable, "-m", "bbrlab", "run", str(spec_file), "--out", str(out),
                              "--kernel", str(kernel)], capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=str(pythonpath)))
        assert res.returncode == 0, res.stdout + res.stderr
        return out / "where" / "base" / "rep1"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        here, there = pool.map(run, runs)
    assert "/a-second-and-much-longer-checkout-path/mininet" in (there / "raw" / "console.log").read_text()
    for name in ("goodput.csv", "tcp.csv", "queue.csv"):
        assert (here / "tidy" / name).read_bytes() == (there / "tidy" / name).read_bytes(), \
            f"tidy/{name} differs between two checkouts of the same code"
    assert len((here / "tidy" / "goodput.csv").read_text().splitlines()) > 100
