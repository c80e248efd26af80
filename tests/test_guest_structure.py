"""guest.py as named phases: what the guest does per backend comes from the job, the
bench's measurements are hooks an ordinary run does not execute."""
import ast
import inspect
import pathlib
import subprocess
import sys

from bbrlab.experiment import spec
from bbrlab.guest import bench_hooks, driver as guest

GUEST = pathlib.Path(guest.__file__)
PHASES = ("start_services", "build_network", "shape_network", "measure_paths", "start_receivers_and_samplers",
          "run_flows", "collect", "finish_network")
MINIMAL = {"name": "g", "duration_s": 2, "bottleneck": {"rate_mbps": 10, "buffer_bytes": 100_000},
           "flows": [{"cc": "bbr", "rtt_ms": 20}]}


def test_main_runs_the_named_phases_in_order():
    source = inspect.getsource(guest.main)
    called = [node.func.id for node in ast.walk(ast.parse(source))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in PHASES]
    assert sorted(called, key=source.index) == list(PHASES)
    assert len(source.splitlines()) <= 40
    for name in PHASES + ("main",):
        assert inspect.getdoc(getattr(guest, name)), f"guest.{name} has no docstring"


def test_the_guest_never_asks_for_the_backends_name():
    text = GUEST.read_text()
    assert '"backend"' not in text and "'uml'" not in text and '"uml"' not in text


def test_an_ordinary_run_gets_no_hooks_and_a_bench_run_its_own(tmp_path):
    (job,) = spec.expand(spec.resolve(MINIMAL))
    assert bench_hooks.for_job(job, tmp_path, print) is bench_hooks.NO_HOOKS
    hooks = bench_hooks.for_job(dict(job, receiver_lowat_bytes=4096), tmp_path, print)
    assert isinstance(hooks, bench_hooks.BenchHooks)
    assert not set(bench_hooks.HOOK_KEYS) & set(spec.SCHEMA["properties"])   # never a spec's field


def test_importing_the_guest_loads_no_bench_module():
    code = "import sys, bbrlab.guest.driver; print(sorted(m for m in sys.modules if m in ('bbrlab.guest.procacct', 'bbrlab.guest.rcvlowat')))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": str(GUEST.parents[2])})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_a_sender_that_does_not_end_is_described_where_it_sleeps():
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        import time
        time.sleep(0.5)
        text = guest.sender_state(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert text.startswith("status: State:\tS (sleeping); wchan: ")
    assert "wchan: 0" not in text and "stack: " in text
    assert "unreadable" in guest.sender_state(2 ** 22 + 1)    # no such process: said, not raised
