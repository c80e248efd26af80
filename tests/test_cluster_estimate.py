"""bench/cluster_estimate.py and bench/host_cost_profile.py's --spec job, on the host: no testbed boot."""
import importlib.util
import json
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_run(root, experiment, point, rep, experiment_s, host_cpu_s, status="ok"):
    d = root / experiment / point / f"rep{rep}"
    d.mkdir(parents=True)
    (d / "run.json").write_text(json.dumps({"status": status, "experiment": experiment, "point": point,
                                            "timings": {"experiment_s": experiment_s, "host_cpu_s": host_cpu_s}}))


def test_a_point_takes_the_rate_of_its_longest_runs(tmp_path):
    """A quick run (20 s) and a long one (600 s) of one point: the long one's rate, whichever
    directory holds it; a point with quick runs only keeps their mean; failed runs never count."""
    est = load("cluster_estimate")
    quick, long = tmp_path / "quick", tmp_path / "long"
    write_run(quick, "e", "deep", 1, 20, 5.0)            # 0.25
    write_run(long, "e", "deep", 1, 600, 600.0)          # 1.0
    write_run(quick, "e", "shallow", 1, 20, 4.0)         # 0.2
    write_run(quick, "e", "shallow", 2, 20, 6.0)         # 0.3
    write_run(long, "e", "shallow", 3, 600, 6000.0, status="failed")
    rates = est.measured_rates([quick, long])
    assert rates == {("e", "deep"): 1.0, ("e", "shallow"): 0.25}
    assert est.measured_rates(quick)[("e", "deep")] == 0.25


def test_host_cost_profile_runs_a_spec_point_with_its_seed_and_a_duration():
    prof = load("host_cost_profile")
    spec = REPO / "mininet" / "specs" / "utsumi2022" / "utsumi2022_fig06_10.yaml"
    point = "f2_cc=bbr_fca__f2_module_params=none__f1_rtt_ms=80__f2_rtt_ms=80__buffer_bdp=128"
    job = prof.spec_job(spec, point, "paper", 200, rep=2)
    assert job["point"] == point and job["duration_s"] == 200 and job["repetition"] == 2
    assert job["seed"] == 2 and job["proc_accounting"] is True
    assert [f["stop_s"] for f in job["flows"]] == [200, 200]
