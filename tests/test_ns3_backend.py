"""The ns-3 backend (bbrlab/host/backends/ns3_backend.py): the same run spec simulated in ns-3.

Needs Debian's libns3-dev and a C++ compiler (skipped otherwise; the refusal
tests need neither); the program is compiled once, into build/ns3/ (about 6 s;
not at all when up to date). Four short simulations, about 6 s of host CPU
together."""
import csv
import json
import shutil

import pytest
import yaml

from bbrlab.experiment import spec
from bbrlab.data import tidy
from bbrlab.host.backends import BackendError, ns3_backend
from conftest import cli, goodput_by_flow, write_spec
from test_tidy_fidelity import final_bytes_received, rows

NS3_MISSING = (None if ns3_backend.HEADER.is_file() and shutil.which(ns3_backend.CXX)
               else "needs libns3-dev and a C++ compiler (apt-get install libns3-dev g++)")
needs_ns3 = pytest.mark.skipif(NS3_MISSING is not None, reason=NS3_MISSING or "")

TWO_BBR = """
name: ns3two
duration_s: 10
bottleneck: {rate_mbps: 100, buffer_bytes: 2000000}
flows:
  - {cc: bbr, rtt_ms: 10}
  - {cc: bbr, rtt_ms: 50}
"""

LOSSY = """
name: ns3lossy
duration_s: 5
sender_qdisc: none
delayed_ack: false
bottleneck: {rate_mbps: 20, buffer_pkts: 50, loss_rate: 0.01}
flows:
  - {cc: cubic, rtt_ms: 20}
  - {cc: reno, rtt_ms: 300, start_s: 1, stop_s: 4}
"""

RTT_CHANGE = """
name: ns3change
duration_s: 4
bottleneck: {rate_mbps: 20, buffer_bdp: 1}
flows:
  - {cc: bbr, rtt_ms: 10}
changes:
  - {at_s: 2, flow: 1, rtt_ms: 40}
"""

RED = """
name: ns3red
duration_s: 8
bottleneck:
  rate_mbps: 20
  buffer_bytes: 300000
  aqm: {kind: red, min_bytes: 30000, max_bytes: 90000, probability: 0.1}
flows:
  - {cc: cubic, rtt_ms: 20}
  - {cc: cubic, rtt_ms: 40}
"""


@pytest.fixture(scope="module")
def program():
    if NS3_MISSING:
        pytest.skip(NS3_MISSING)
    backend = ns3_backend.Ns3Backend()
    backend.check()                    # compiles build/ns3/dumbbell unless up to date
    return backend.program


def run_cli(tmp_path_factory, text, name):
    base = tmp_path_factory.mktemp(name)
    spec_file = write_spec(base / f"{name}.yaml", text)
    res = cli("run", spec_file, "--out", base / "out", "--backend", "ns3")
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = base / "out" / name / "base" / "rep1"
    return run_dir, json.loads((run_dir / "run.json").read_text())


@pytest.fixture(scope="module")
def two_bbr(program, tmp_path_factory):
    return run_cli(tmp_path_factory, TWO_BBR, "ns3two")


@pytest.fixture(scope="module")
def lossy(program, tmp_path_factory):
    return run_cli(tmp_path_factory, LOSSY, "ns3lossy")


@needs_ns3
def test_program_is_built_once(program):
    before = program.stat().st_mtime_ns
    assert ns3_backend.Ns3Backend().build() == program
    assert program.stat().st_mtime_ns == before


@needs_ns3
def test_two_bbr_flows_fill_the_bottleneck(two_bbr):
    run_dir, summary = two_bbr
    assert summary["status"] == "ok"
    testbed = summary["testbed"]
    assert testbed["backend"] == "ns3" and testbed["substrate"] == "ns3"
    assert testbed["ns3_version"].startswith("3.")
    rates = goodput_by_flow(run_dir, 2, 10)
    assert set(rates) == {"1", "2"}
    aggregate = sum(rates.values())
    # at most what the link carries of TCP payload (1460 of every 1502 bytes on the wire)
    assert aggregate <= 100 * 1460 / 1502 * 1.01
    assert aggregate >= 0.94 * 100, rates
    checks = {(c["name"], c["subject"]): c for c in summary["fidelity"]["checks"]}
    assert checks[("bottleneck_rate", "bottleneck")]["ok"]
    # a simulation is judged on what it has: no guest CPU, timers or TCP Small Queues
    assert summary["fidelity"]["valid"], [c for c in checks.values() if not c["ok"]]
    assert not {"guest_cpu", "timer_lateness", "sender_decoupled"} & {name for name, _ in checks}
    # the program's peak resident memory (ns-3's libraries alone are over 10 MB; a 2-MB buffer
    # holds little: bench/results/ns3-memory-2026-11-26.md measured 28.8 MB at 1 MB)
    assert 10 < summary["timings"]["simulation_peak_rss_mb"] < 100, summary["timings"]


@needs_ns3
def test_base_rtt_as_configured(two_bbr):
    """The smallest RTT a sender saw is its path's RTT, plus at most a packet's time on the bottleneck."""
    run_dir, summary = two_bbr
    serialisation_ms = 1502 * 8 / 100e6 * 1e3
    tcp = rows(run_dir / "tidy" / "tcp.csv")
    for flow, rtt in (("1", 10), ("2", 50)):
        min_rtt = min(float(r["min_rtt_ms"]) for r in tcp if r["flow"] == flow and r["min_rtt_ms"])
        assert rtt <= min_rtt <= rtt + serialisation_ms + 0.01, (flow, min_rtt)
    checks = {(c["name"], c["subject"]): c for c in summary["fidelity"]["checks"]}
    for flow, rtt in ((1, 10), (2, 50)):         # the pings before time zero
        check = checks[("base_rtt", f"flow {flow}")]
        assert check["ok"] and abs(check["measured"] - rtt) < 0.1


@needs_ns3
def test_tidy_data_has_the_kernel_runs_schema(two_bbr):
    """The tidy contract (docs/tidy-data.md) with the checks tests/test_tidy_fidelity.py
    applies to the kernel testbed's tidy data."""
    run_dir, summary = two_bbr
    for name, columns in (("goodput", tidy.GOODPUT_COLUMNS), ("tcp", tidy.TCP_COLUMNS),
                          ("queue", tidy.QUEUE_COLUMNS)):
        with open(run_dir / "tidy" / f"{name}.csv") as f:
            assert next(csv.reader(f)) == columns
    goodput = rows(run_dir / "tidy" / "goodput.csv")
    for flow in (1, 2):
        total = sum(int(r["bytes"]) for r in goodput if r["flow"] == str(flow))
        assert total == final_bytes_received(run_dir / "raw", flow) > 10_000_000
    intervals = sorted(float(r["interval_s"]) for r in goodput)
    assert intervals[len(intervals) // 2] == pytest.approx(0.1, abs=0.005)
    for r in goodput:
        assert float(r["goodput_mbps"]) == pytest.approx(int(r["bytes"]) * 8 / float(r["interval_s"]) / 1e6, rel=1e-3)
    tcp = rows(run_dir / "tidy" / "tcp.csv")
    for flow in ("1", "2"):
        series = [r for r in tcp if r["flow"] == flow]
        states = [r["state"] for r in series if r["state"]]
        assert states[0] == "startup" and {r["cc"] for r in series} == {"bbr"}
        assert {"probe_bw", "probe_rtt"} <= set(states)
        for r in series:
            assert int(r["inflight_pkts"]) >= 0 and int(r["cwnd_pkts"]) >= 4 and int(r["mss_bytes"]) == 1460
            assert float(r["pacing_rate_mbps"]) > 0 and float(r["rtt_ms"]) > 0
    queue = rows(run_dir / "tidy" / "queue.csv")
    assert len(queue) >= 10 / 0.05
    sent = [int(r["sent_bytes"]) for r in queue]
    assert sent == sorted(sent)
    for r in queue:
        assert 0 <= int(r["backlog_bytes"]) <= 2_000_000 + 1500     # the buffer and the device's one packet
        assert float(r["qdelay_ms"]) == pytest.approx(int(r["backlog_bytes"]) * 8 / 1e8 * 1e3, abs=1e-3)
    # received payload against the bytes the bottleneck sent (IP packets of 1500 bytes, 1460 of payload)
    window = [r for r in goodput if 2 < float(r["t_s"]) <= 9]
    q = [r for r in queue if 2 <= float(r["t_s"]) <= 9]
    assert sum(int(r["bytes"]) for r in window) == pytest.approx(
        (int(q[-1]["sent_bytes"]) - int(q[0]["sent_bytes"])) * 1460 / 1500, rel=0.02)


@needs_ns3
@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")
def test_r_reads_the_run_like_a_kernel_run(two_bbr):
    import subprocess
    from conftest import REPO
    run_dir, _ = two_bbr
    code = (f'source("{REPO / "analysis" / "lib" / "load.R"}", chdir = TRUE)\n'
            f'r <- read_run("{run_dir}")\n'
            'p <- sum(sapply(c("goodput", "tcp", "queue"), function(n) nrow(readr::problems(r[[n]]))))\n'
            'cat(jsonlite::toJSON(list(problems = p, goodput = nrow(r$goodput), tcp = nrow(r$tcp), '
            'queue = nrow(r$queue)), auto_unbox = TRUE))')
    res = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["problems"] == 0 and min(out["goodput"], out["tcp"], out["queue"]) > 100, out


@needs_ns3
def test_loss_pacing_and_other_congestion_controls(lossy):
    run_dir, summary = lossy
    checks = {(c["name"], c["subject"]): c for c in summary["fidelity"]["checks"]}
    assert checks[("base_rtt", "flow 2")]["ok"]        # a 300-ms path's pings are in before time zero
    for flow in (1, 2):                                 # delayed_ack: false, one ACK per data segment
        assert checks[("delayed_ack", f"flow {flow}")]["ok"], checks[("delayed_ack", f"flow {flow}")]
    loss = checks[("random_loss", "bottleneck")]
    assert loss["ok"] and loss["measured"] == pytest.approx(0.01, abs=loss["tolerance"]), loss
    tcp = rows(run_dir / "tidy" / "tcp.csv")
    assert {r["cc"] for r in tcp if r["flow"] == "1"} == {"cubic"}
    assert {r["cc"] for r in tcp if r["flow"] == "2"} == {"reno"}
    assert max(int(r["retrans_total"]) for r in tcp) > 0
    goodput = rows(run_dir / "tidy" / "goodput.csv")
    first2 = min(float(r["t_s"]) for r in goodput if r["flow"] == "2")
    assert 1.0 < first2 <= 1.0 + 1.5 * 0.3 + 0.1          # starts at 1 s; the receiver accepts 1.5 RTTs later
    conf = (run_dir / "raw" / "ns3.conf").read_text().splitlines()
    assert "pace_all=0" in conf and "delack_count=1" in conf and "buffer=50p" in conf


@needs_ns3
def test_rtt_change(program, tmp_path_factory):
    run_dir, summary = run_cli(tmp_path_factory, RTT_CHANGE, "ns3change")
    assert [e["kind"] for e in json.loads((run_dir / "raw" / "timeline.json").read_text())["events"]] == ["start", "rtt"]
    tcp = rows(run_dir / "tidy" / "tcp.csv")
    before = [float(r["rtt_ms"]) for r in tcp if 1 < float(r["t_s"]) <= 2]
    after = [float(r["rtt_ms"]) for r in tcp if 2.5 < float(r["t_s"]) <= 4]
    assert 10 <= min(before) and max(before) < 40 <= min(after), (before, after)


@needs_ns3
def test_red_drops_early(program, tmp_path_factory):
    """RED keeps the backlog near its thresholds, far below the 300-kB limit, by dropping early."""
    run_dir, summary = run_cli(tmp_path_factory, RED, "ns3red")
    queue = [r for r in rows(run_dir / "tidy" / "queue.csv") if float(r["t_s"]) > 2]
    assert int(queue[-1]["drops"]) >= 5
    assert max(int(r["backlog_bytes"]) for r in queue) < 90000
    assert sum(goodput_by_flow(run_dir, 2, 8).values()) >= 0.9 * 20
    conf = (run_dir / "raw" / "ns3.conf").read_text().splitlines()
    assert "aqm=red" in conf and "red_max_p=0.10000000000000001" in conf


def test_red_averaging_weight_as_tc_computes_it():
    # Ma et al. Fig. 4's RED (min 170 kB, max 500 kB): tc's burst 281 of avpkt 1000 gives Wlog 7
    params = ns3_backend.red_parameters({"aqm": {"kind": "red", "min_bytes": 170000, "max_bytes": 500000,
                                                 "probability": 0.02}, "buffer_bytes_resolved": 2000000})
    assert params["red_qw"] == 2.0 ** -7 and params["buffer"] == "2000000B"
    assert ns3_backend.red_parameters({"aqm": {"kind": "red", "min_bytes": 30000, "max_bytes": 90000,
                                               "probability": 0.1}, "buffer_bytes_resolved": 100000})["buffer"] \
        == "180000B"                       # at least twice the maximum, as shaping.py sets tc's limit


def test_sockets_cover_the_span_of_loss_recovery():
    """A deep buffer (Utsumi & Hasegawa's 128 BDP at 80 ms: W = 128 MB of buffer + 1 MB of BDP):
    in loss recovery the receive window must cover snd_una..snd_nxt, up to four windows (the
    testbed's sizing, units.SPAN_WINDOWS; 2.0 W measured there after 12 s of recovery), and ns-3's
    buffers count payload bytes, so every socket gets 4 W = 516 MB; shallow runs keep 4 MiB."""
    deep = spec.expand(spec.resolve({"name": "x", "duration_s": 10,
                                     "bottleneck": {"rate_mbps": 100, "buffer_bdp": 128},
                                     "flows": [{"cc": "cubic", "rtt_ms": 80}, {"cc": "bbr", "rtt_ms": 80}]}))[0]
    assert ns3_backend.socket_buffer_bytes(deep) == 4 * (128 + 1) * 1_000_000
    shallow = spec.expand(spec.resolve({"name": "x", "duration_s": 10,
                                        "bottleneck": {"rate_mbps": 10, "buffer_bdp": 1},
                                        "flows": [{"cc": "bbr", "rtt_ms": 20}]}))[0]
    assert ns3_backend.socket_buffer_bytes(shallow) == 4 * 2**20


# ------------------------------------------------------------------ refusals (no ns-3 needed)

def job_of(text, **changes):
    raw = yaml.safe_load(text)
    raw = spec.deep_merge(raw, changes)
    return spec.expand(spec.resolve(raw))[0]


@pytest.mark.parametrize("changes,field", [
    ({"flows": [{"cc": "bbr_fca", "rtt_ms": 10, "module_params": {"recent_pct": 200}}]}, "flows.1.cc"),
    ({"flows": [{"cc": "bbr", "rtt_ms": 10}, {"cc": "bbr_fca", "rtt_ms": 20}]}, "flows.2.cc"),
    ({"bottleneck": {"aqm": {"kind": "red", "min_bytes": 30000, "max_bytes": 90000, "probability": 0.02,
                             "ecn": True}}}, "bottleneck.aqm.ecn"),
    ({"capture": "bottleneck"}, "capture"),
    ({"snapshot_at_s": 3}, "snapshot_at_s"),
    ({"offloads": "on"}, "offloads"),
    ({"rtt_on": "data"}, "rtt_on"),
    ({"bottleneck": {"burst_bytes": 100000}}, "bottleneck.burst_bytes"),
])
def test_what_ns3_cannot_do_is_refused_naming_the_field(changes, field):
    job = job_of(TWO_BBR, **changes)
    with pytest.raises(BackendError, match=rf"(?m)^  - {field.replace('.', '[.]')}:"):
        ns3_backend.Ns3Backend().check_job(job)


def test_what_ns3_can_do_is_accepted():
    for changes in ({}, {"clock": "virtual", "switch": "ovs", "sender_qdisc": "none", "rtt_on": "sender"},
                    {"bottleneck": {"shaper": "htb", "buffer_bytes": None}}, {"access_rate_mbps": 50}):
        raw = spec.deep_merge(yaml.safe_load(TWO_BBR), changes)
        if raw["bottleneck"].get("buffer_bytes", 0) is None:
            del raw["bottleneck"]["buffer_bytes"]
            raw["bottleneck"]["buffer_bdp"] = 1.5
        job = spec.expand(spec.resolve(raw))[0]
        ns3_backend.Ns3Backend().check_job(job)
        lines = ns3_backend.config_lines(job, "/tmp/x")
        assert "flow.2.rtt_ms=50" in lines and "bottleneck_rate_bps=100000000" in lines


@needs_ns3
def test_variant_is_refused_before_anything_runs(program, tmp_path):
    bad = write_spec(tmp_path / "bad.yaml", TWO_BBR.replace("{cc: bbr, rtt_ms: 50}",
                                                            "{cc: bbr_fca, rtt_ms: 50, module_params: {recent_pct: 300}}"))
    res = cli("run", bad, "--out", tmp_path / "out", "--backend", "ns3")
    assert res.returncode == 3, res.stdout + res.stderr
    assert "flows.2.cc: 'bbr_fca'" in res.stderr and "nothing was run" in res.stderr
    assert not (tmp_path / "out").exists()


def test_missing_ns3_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr(ns3_backend, "HEADER", tmp_path / "no-such-header.h")
    with pytest.raises(BackendError, match="apt-get install libns3-dev"):
        ns3_backend.Ns3Backend(build_dir=tmp_path / "build").check()
    assert not (tmp_path / "build").exists()


def test_program_is_rebuilt_when_its_source_changes(monkeypatch, tmp_path):
    source = tmp_path / "dumbbell.cc"
    source.write_text(ns3_backend.SOURCE.read_text())
    monkeypatch.setattr(ns3_backend, "SOURCE", source)
    before = ns3_backend.Ns3Backend().build_key()
    source.write_text(source.read_text() + "\n// changed\n")
    assert ns3_backend.Ns3Backend().build_key() != before
