"""The testbed booted for real: User-Mode Linux kernel, Mininet dumbbell, flows.

These tests build the testbed kernel on first use (kernel/build-uml.sh) and
take about a minute each."""
import csv
import json
import os
import pathlib
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from bbrlab.experiment import spec, units
from bbrlab.host import backends, runner
from conftest import REPO, cli, goodput_by_flow, write_spec

TWO_FLOWS = """
name: e2e
duration_s: 20
bottleneck: {rate_mbps: 100, buffer_bdp: 1.0}
flows:
  - {cc: bbr, rtt_ms: 10}
  - {cc: cubic, rtt_ms: 30}
"""


def test_two_flow_run_end_to_end(tmp_path, kernel):
    """On the virtual clock, so a busy CI host cannot distort the numbers asserted here
    (the unprivileged test below runs on the real clock)."""
    spec_file = write_spec(tmp_path / "e2e.yaml", TWO_FLOWS)
    res = cli("run", spec_file, "--out", tmp_path / "out", "--kernel", kernel, "--clock", "virtual")
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = tmp_path / "out" / "e2e" / "base" / "rep1"
    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["status"] == "ok"
    assert summary["testbed"]["backend"] == "uml" and summary["testbed"]["clock"] == "virtual"
    assert summary["testbed"]["host"] == os.uname().nodename
    assert summary["fidelity"]["valid"], summary["fidelity"]
    assert summary["testbed"]["kernel_release"].startswith("6.1")
    checks = {(c["name"], c["subject"]): c for c in summary["fidelity"]["checks"]}
    # each path's base RTT, measured by ping before traffic, within 1 ms of its configuration
    assert abs(checks[("base_rtt", "flow 1")]["measured"] - 10) <= 1.0
    assert abs(checks[("base_rtt", "flow 2")]["measured"] - 30) <= 1.0
    # the two flows together fill the bottleneck: aggregate goodput within 6 % of its rate
    rates = goodput_by_flow(run_dir, 5, 19)
    assert set(rates) == {"1", "2"}
    aggregate = sum(rates.values())
    assert aggregate <= units.goodput_ceiling_mbps(100) * 1.01
    assert aggregate >= 0.94 * 100, rates
    # per-flow socket state was sampled with the flow's own congestion control
    tcp = (run_dir / "tidy" / "tcp.csv").read_text().splitlines()
    assert any(",bbr,probe_bw," in line for line in tcp) and any(",cubic,," in line for line in tcp)
    for name in ("goodput.csv", "tcp.csv", "queue.csv"):
        assert (run_dir / "tidy" / name).stat().st_size > 1000
    assert not list((tmp_path / "out" / "e2e" / "base").glob(".*tmp*"))
    # each sender's fq was set by the request tc sends (guest/fq.py), which the kernel acknowledged
    timeline = json.loads((run_dir / "raw" / "timeline.json").read_text())
    fq = [c for c in timeline["commands"] if c["cmd"][:3] == ["tc", "qdisc", "replace"] and c["cmd"][-1] == "fq"]
    assert [(c["node"], c.get("via")) for c in fq] == [("snd1", "RTM_NEWQDISC"), ("snd2", "RTM_NEWQDISC")]
    # the guest's TCP hash tables have the buckets the command line asks for (uml.TCP_HASH_ENTRIES),
    # as the kernel reports them at boot, not the 8192 it would size from the guest's memory
    console = (run_dir / "raw" / "console.log").read_text()
    assert "TCP established hash table entries: 256 " in console, console[:3000]


def test_header_captures_give_each_flows_backlog_and_drops(tmp_path, kernel):
    """capture: bottleneck on a shallow buffer (drops): the per-flow backlogs rebuilt from
    the captures add up to the qdisc's own backlog, and the per-flow drops to its drop counter."""
    spec_file = write_spec(tmp_path / "cap.yaml", """
name: cap
duration_s: 10
clock: virtual
capture: bottleneck
bottleneck: {rate_mbps: 50, buffer_pkts: 60}
flows:
  - {cc: cubic, rtt_ms: 10}
  - {cc: bbr, rtt_ms: 40, start_s: 2}
""")
    res = cli("run", spec_file, "--out", tmp_path / "out", "--kernel", kernel)
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = tmp_path / "out" / "cap" / "base" / "rep1"
    summary = json.loads((run_dir / "run.json").read_text())
    checks = {c["name"]: c for c in summary["fidelity"]["checks"]}
    assert checks["capture"]["ok"], checks["capture"]
    assert summary["fidelity"]["valid"], summary["fidelity"]
    rows = list(csv.DictReader(open(run_dir / "tidy" / "flow_queue.csv")))
    queue = list(csv.DictReader(open(run_dir / "tidy" / "queue.csv")))
    assert {r["flow"] for r in rows} == {"1", "2"}
    backlog = {}
    for r in rows:
        backlog.setdefault(r["t_s"], {})[r["flow"]] = int(r["backlog_pkts"])
    both = [b for b in backlog.values() if b["1"] > 0 and b["2"] > 0]
    assert len(both) > 20                      # both flows hold packets in the queue at times
    end = [r for r in rows if r["t_s"] == queue[-1]["t_s"]]
    flow_drops = sum(int(r["drops"]) for r in end)
    qdisc_drops = int(queue[-1]["drops"]) - int(queue[0]["drops"])
    assert qdisc_drops > 10                    # a 60-packet buffer drops
    assert abs(flow_drops - qdisc_drops) <= 2, (flow_drops, qdisc_drops)


@pytest.fixture
def unprivileged_user():
    name = "bbrlab-test"
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid()).pw_name
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    return name


def test_runs_as_an_unprivileged_user(kernel, unprivileged_user):
    """No root on the host: the testbed is an ordinary process of the user."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="bbrlab-unpriv-"))   # pytest's tmp dirs are root-only
    os.chmod(base, 0o755)
    work = base / "unpriv"
    shutil.copytree(REPO / "mininet", work / "mininet", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(kernel, work / "linux")
    write_spec(work / "u.yaml", TWO_FLOWS.replace("name: e2e", "name: unpriv").replace("duration_s: 20", "duration_s: 8")
               + "clock: real\n")
    subprocess.run(["chown", "-R", unprivileged_user, str(work)], check=True)
    env = dict(os.environ, PYTHONPATH=str(work / "mininet"))
    res = subprocess.run(["runuser", "-u", unprivileged_user, "--", "env", f"PYTHONPATH={work / 'mininet'}",
                          "HOME=/tmp", "TMPDIR=/tmp", "/usr/bin/python3", "-m", "bbrlab", "run", str(work / "u.yaml"),
                          "--out", str(work / "out"), "--kernel", str(work / "linux")],
                         capture_output=True, text=True, env=env, cwd=work)
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = work / "out" / "unpriv" / "base" / "rep1"
    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["status"] == "ok" and summary["testbed"]["clock"] == "real"
    assert pwd.getpwuid((run_dir / "run.json").stat().st_uid).pw_name == unprivileged_user
    assert (run_dir / "tidy" / "goodput.csv").stat().st_size > 100
    shutil.rmtree(base)


def test_invalid_spec_fails_before_boot(tmp_path):
    bad = write_spec(tmp_path / "bad.yaml", TWO_FLOWS.replace("rate_mbps: 100", "rate_mbps: -3"))
    res = cli("run", bad, "--out", tmp_path / "out", "--kernel", tmp_path / "no-kernel")
    assert res.returncode == 2
    assert "bottleneck.rate_mbps" in res.stderr and "minimum" in res.stderr
    assert not (tmp_path / "out").exists()


def test_missing_kernel_says_how_to_build_it(tmp_path):
    good = write_spec(tmp_path / "good.yaml", TWO_FLOWS)
    res = cli("run", good, "--out", tmp_path / "out", "--kernel", tmp_path / "no-kernel")
    assert res.returncode == 3
    assert "testbed kernel not found" in res.stderr and "kernel/build-uml.sh" in res.stderr
    assert not (tmp_path / "out").exists()


def one_job(text, **overrides):
    raw = spec.deep_merge(__import__("yaml").safe_load(text), overrides)
    return spec.expand(spec.resolve(raw))[0]


def test_guest_failure_is_a_failed_run_with_console_log(tmp_path, kernel):
    """A module parameter out of its range: the module refuses to load in the guest, and its own
    kernel message reaches the error. (The spec check rejects such a value first, so the job is
    altered after validation: the module's own check is the second line of defence.)"""
    job = one_job(TWO_FLOWS, duration_s=5, flows=[{"cc": "bbq", "rtt_ms": 10, "module_params": {"alpha_us": 1}}])
    job["flows"][0]["module_params"] = {"alpha_us": 0}
    dest = tmp_path / "runs" / "e2e" / "base" / "rep1"
    with pytest.raises(runner.RunFailed, match="failed in the testbed") as err:
        runner.execute(job, dest, "uml", kernel=kernel, progress=lambda _m: None)
    assert "cannot load module bbq alpha_us=0" in str(err.value)
    assert "bbq: invalid alpha_us=0: must be an integer in [1, 10000000]" in str(err.value)
    assert not dest.exists()
    failed = dest.with_name("rep1.failed")
    summary = json.loads((failed / "run.json").read_text())
    assert summary["status"] == "failed" and "console log" in summary["error"]
    assert summary["testbed"]["modules"][0]["params"] == {"alpha_us": 0}
    assert "bbq: invalid alpha_us=0" in (failed / "raw" / "console.log").read_text()
    assert not (failed / "tidy").exists()


def test_timeout_kills_the_testbed_and_fails_the_run(tmp_path, kernel):
    """On the real clock: a 60-s run cannot end inside an 8-s timeout on any host (on the virtual
    clock a fast, idle host can finish two flows' 60 s in less)."""
    job = one_job(TWO_FLOWS, duration_s=60, clock="real")
    dest = tmp_path / "runs" / "e2e" / "base" / "rep1"
    with pytest.raises(runner.RunFailed, match="timed out after 8 s"):
        runner.execute(job, dest, "uml", timeout_s=8, kernel=kernel, progress=lambda _m: None)
    assert not dest.exists()
    assert "killed after the 8-s timeout" in (dest.with_name("rep1.failed") / "raw" / "console.log").read_text()
    leftovers = subprocess.run(["pgrep", "-f", str(dest.parent / ".rep1.tmp")], capture_output=True, text=True)
    assert leftovers.stdout.strip() == ""


def test_native_backend_refuses_clearly_where_the_host_lacks_netem():
    from bbrlab.host.backends import native
    missing = native.missing_prerequisites()
    res = cli("check-native")
    if not missing:
        assert res.returncode == 0 and "all prerequisites present" in res.stdout
        pytest.skip("this host can run the native backend")
    assert res.returncode == 3
    for reason in missing:
        assert reason in res.stderr
    assert "use the default uml backend" in res.stderr


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_the_runner_kills_its_testbed(tmp_path, kernel, sig):
    """`kill -9` (or a job kill's SIGTERM) of `bbrlab run` once the guest is up: no process of
    the run stays behind, no result looks complete, and the run directory is free for a rerun."""
    spec_file = write_spec(tmp_path / "k.yaml", TWO_FLOWS.replace("name: e2e", "name: killed")
                           .replace("duration_s: 20", "duration_s: 30") + "clock: virtual\n")
    env = dict(os.environ, PYTHONPATH=str(REPO / "mininet"))
    runner_proc = subprocess.Popen([sys.executable, "-m", "bbrlab", "run", str(spec_file), "--out",
                                    str(tmp_path / "out"), "--kernel", str(kernel)],
                                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = tmp_path / "out" / "killed" / "base"
    tmp = base / ".rep1.tmp"              # the attempt's own directory is .rep1.tmp-<random>: found below

    def booted():
        return [c for c in base.glob(".rep1.tmp*/raw/console.log")
                if "bbrlab-guest: booted" in c.read_text(errors="replace")]
    try:
        deadline = time.time() + 120
        while not booted():
            assert time.time() < deadline and runner_proc.poll() is None, "the guest never came up"
            time.sleep(0.2)
        console = booted()[0]
        tmp = console.parents[1]
        uml_dir = re.search(r"uml_dir=(\S+)", console.read_text()).group(1)
        assert pathlib.Path(uml_dir).is_dir()

        def leftovers():
            return subprocess.run(["pgrep", "-f", str(tmp)], capture_output=True, text=True).stdout.split()
        assert len(leftovers()) >= 3          # the tether, the kernel and its guest processes
        runner_proc.send_signal(sig)
        runner_proc.wait(timeout=30)
        deadline = time.time() + 15
        while leftovers() and time.time() < deadline:
            time.sleep(0.2)
        assert leftovers() == [], "processes of the killed run are still there"
        assert not pathlib.Path(uml_dir).exists()
        assert not (base / "rep1").exists() and not (base / "rep1.failed").exists()
        assert not (tmp / "run.json").exists()
        if sig == signal.SIGTERM:
            assert not tmp.exists()        # an orderly kill also removes the unfinished run
    finally:
        runner_proc.kill()
        for pid in subprocess.run(["pgrep", "-f", str(tmp)], capture_output=True, text=True).stdout.split():
            os.kill(int(pid), signal.SIGKILL)
