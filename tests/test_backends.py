"""The backend interface (backends/base.py): every registered backend is a Backend and keeps
its contract; the runner asks nothing else of it and checks it once per run."""
import inspect
import json
import pathlib

import pytest

from bbrlab.experiment import spec
from bbrlab.host import backends, runner
from bbrlab.data import fidelity
from bbrlab.experiment import testbed
from bbrlab.host.backends import phases

INTERFACE = ("check", "check_job", "describe", "execute", "modules", "guest_options", "guest_mem_mb")
MINIMAL = {"name": "b", "duration_s": 2, "bottleneck": {"rate_mbps": 10, "buffer_bytes": 100_000},
           "flows": [{"cc": "bbr", "rtt_ms": 20}]}


@pytest.mark.parametrize("name", backends.NAMES)
def test_every_registered_backend_is_a_backend_with_the_whole_interface(name):
    cls = backends.backend_class(name)
    assert issubclass(cls, backends.Backend) and cls.name == name
    assert not inspect.isabstract(cls), f"{name} leaves abstract: {sorted(cls.__abstractmethods__)}"
    for method in INTERFACE:
        assert callable(getattr(cls, method)), method
    assert isinstance(cls.simulated, bool)
    for method in ("check", "describe", "execute"):        # the abstract ones: each backend's own
        assert getattr(cls, method) is not getattr(backends.Backend, method), f"{name}.{method}"
    assert set(backends.get(name).guest_options()) == {"offloads_by_ioctl", "start_ovs", "teardown"}


def test_only_ns3_is_simulated():
    assert [n for n in backends.NAMES if backends.backend_class(n).simulated] == ["ns3"]
    assert backends.is_simulated("ns3") and not backends.is_simulated("uml")
    assert not backends.is_simulated(None)          # a run recorded before backends were


@pytest.mark.parametrize("name", backends.NAMES)
def test_the_testbed_facts_know_which_backends_are_simulated(name):
    """data/ asks experiment/testbed.py, which knows no backend class: it must agree with them."""
    assert testbed.is_simulated(name) == backends.backend_class(name).simulated == backends.is_simulated(name)
    assert not testbed.is_simulated(None) and not testbed.is_simulated("no-such-backend")


@pytest.mark.parametrize("missing", ["check", "describe", "execute"])
def test_a_backend_missing_a_method_cannot_be_made(missing):
    methods = {m: (lambda self, *a: None) for m in ("check", "describe", "execute") if m != missing}
    incomplete = type("Incomplete", (backends.Backend,), dict(methods, name="incomplete"))
    with pytest.raises(TypeError, match=missing):
        incomplete()


def test_an_unknown_backend_is_named():
    with pytest.raises(backends.BackendError, match="unknown backend 'kvm'.*uml, native, ns3"):
        backends.get("kvm")


class Recording(backends.Backend):
    """A backend that records the runner's calls and writes a run a failed guest would."""
    name = "recording"

    def __init__(self):
        self.calls = []

    def check(self):
        self.calls.append("check")

    def check_job(self, job):
        self.calls.append(("check_job", job["point"]))

    def describe(self):
        return {"backend": self.name, "kernel_release": None}

    def execute(self, run_dir, job, timeout_s):
        self.calls.append(("execute", job["point"]))
        (run_dir / "raw").mkdir()
        (run_dir / "raw" / "console.log").write_text("guest: nothing\n")
        return backends.GuestResult(exit_status=3, timed_out=False, wall_s=0.1, cpu_s=0.1,
                                    console=str(run_dir / "raw" / "console.log"))


def test_the_runner_checks_once_and_writes_what_the_backend_says(tmp_path):
    backend = Recording()
    (job,) = spec.expand(spec.resolve(MINIMAL))
    backend.check()
    backend.check_job(job)
    with pytest.raises(runner.RunFailed):
        runner.execute(job, tmp_path / "run", backend=backend, progress=lambda _m: None)
    assert backend.calls == ["check", ("check_job", "base"), ("execute", "base")]
    written = json.loads((tmp_path / "run.failed" / "job.json").read_text())
    assert written["backend"] == "recording" and written["modules"] == []
    assert written["guest"] == {"offloads_by_ioctl": False, "start_ovs": False, "teardown": True}
    summary = json.loads((tmp_path / "run.failed" / "run.json").read_text())
    assert "guest_mem_mb" not in summary["testbed"]      # Backend.guest_mem_mb: None, not recorded
    from bbrlab.experiment import runkey
    assert summary["run_key"] == runkey.run_key(job)       # the pipeline's key: the runner's keys left out


def test_run_spec_file_checks_the_backend_once_for_all_runs(tmp_path, monkeypatch):
    made = []

    def get(name, **_kw):
        made.append(Recording())
        return made[-1]
    monkeypatch.setattr(backends, "get", get)
    path = tmp_path / "b.yaml"
    path.write_text(json.dumps(dict(MINIMAL, sweep={"bottleneck.rate_mbps": [10, 20]})))
    with pytest.raises(runner.RunFailed):
        runner.run_spec_file(path, tmp_path / "out", backend="recording", progress=lambda _m: None)
    assert len(made) == 1
    assert made[0].calls == ["check", ("check_job", "rate_mbps=10"), ("check_job", "rate_mbps=20"),
                             ("execute", "rate_mbps=10")]


def test_fidelity_skips_the_guest_checks_of_a_simulated_backend(monkeypatch):
    assert not hasattr(fidelity, "SIMULATED_BACKENDS")
    seen = []
    monkeypatch.setattr(testbed, "is_simulated", lambda name: seen.append(name) or True)
    monkeypatch.setattr(fidelity, "base_rtt_checks", lambda raw, job: [])
    monkeypatch.setattr(fidelity, "rate_check", lambda queue, job: fidelity.check("rate", "q", 1, 1, 0, "", True))
    monkeypatch.setattr(fidelity, "variant_state_checks", lambda raw, job: [])
    (job,) = spec.expand(spec.resolve(MINIMAL))
    out = fidelity.evaluate(pathlib.Path("/nonexistent"), dict(job, backend="x"), {"queue": [], "timeline": {"t0": 0}})
    assert seen == ["x"] and [c["name"] for c in out["checks"]] == ["rate"]


def test_console_times_are_the_hosts_clock_when_the_guests_lines_appear(tmp_path):
    console = tmp_path / "console.log"
    now = [100.0]
    times = phases.ConsoleTimes(console, clock=lambda: now[0])
    times.poll()                                   # no log yet
    console.write_bytes(b"host: linux mem=1024M\nbbrlab-guest: boo")
    now[0] = 101.0
    times.poll()
    assert times.seen == {}
    with open(console, "ab") as f:                 # the line completes in the next read
        f.write(b"ted, kernel 6.1\nbbrlab-guest [00:00:00] building dumbbell\n")
    now[0] = 102.5
    times.poll()
    with open(console, "ab") as f:
        f.write(("bbrlab-guest [00:00:01] " + phases.SET_UP + "\n").encode())
    now[0] = 106.0
    times.poll()
    now[0] = 200.0
    times.poll()                                   # a marker counts where it first appeared
    assert times.timings(start=100.0) == {"boot_s": 2.5, "setup_s": 3.5}


def test_without_a_boot_the_set_up_counts_from_the_start(tmp_path):
    console = tmp_path / "console.log"
    console.write_text("host: clean: nothing\nbbrlab-guest [00:00:01] " + phases.SET_UP + "\n")
    times = phases.ConsoleTimes(console, clock=lambda: 7.0)
    times.poll()
    assert times.timings(start=5.0) == {"setup_s": 2.0}
    assert phases.ConsoleTimes(tmp_path / "none").timings(start=5.0) == {}


def test_the_guest_prints_the_lines_the_host_times():
    from bbrlab.guest import driver as guest
    init = (pathlib.Path(guest.__file__).with_name("guest_init.c")).read_text()
    assert 'printf("' + phases.BOOTED in init
    assert "log(testbed.SET_UP)" in pathlib.Path(guest.__file__).read_text()


def test_ns3_loads_no_modules_and_uml_asks_modules_py(monkeypatch):
    raw = dict(MINIMAL, flows=[{"cc": "bbq", "rtt_ms": 20}])
    (job,) = spec.expand(spec.resolve(raw))
    assert backends.get("ns3").modules(job) == []
    from bbrlab.host import modules
    asked = []
    monkeypatch.setattr(modules, "for_job", lambda j, b, *kernel: asked.append(b) or ["m"])
    assert backends.get("uml").modules(job) == ["m"] and backends.get("native").modules(job) == ["m"]
    assert asked == ["uml", "native"]
