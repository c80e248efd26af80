"""Every run is sized before boot (host/sizing.py): memory (testbed, capture parsing, host side)
against MemAvailable, the raw files of all runs against the results tree's free disk; a run that
does not fit is refused with its numbers and nothing boots."""
import json

import pytest

from bbrlab import cli
from bbrlab.experiment import spec
from bbrlab.host import backends, resources, runner, sizing

SMALL = {"name": "s", "duration_s": 30, "bottleneck": {"rate_mbps": 10, "buffer_pkts": 100},
         "flows": [{"cc": "bbr", "rtt_ms": 20}, {"cc": "bbr", "rtt_ms": 40}]}
# An oversized run: 100 000 s with header captures at 10 Gbit/s.
HUGE = dict(SMALL, duration_s=100_000, capture="bottleneck", bottleneck={"rate_mbps": 10_000, "buffer_pkts": 100})


def job_of(raw):
    (job,) = spec.expand(spec.resolve(raw))
    return job


def meminfo(tmp_path, available_mb):
    path = tmp_path / "meminfo"
    path.write_text(f"MemTotal: 99999999 kB\nMemAvailable: {available_mb * 1024} kB\n")
    return path


def test_a_run_is_sized_from_its_spec():
    job = job_of(SMALL)
    size = sizing.size(job, "uml")
    assert size["testbed_mem_mb"] == resources.GUEST_MEM_MB and size["capture_mem_mb"] == 0
    assert size["mem_mb"] == resources.GUEST_MEM_MB + resources.HOST_SIDE_MB
    # 300 samples x 2 flows x 2 socket files x 2 kB + 600 queue samples x 0.5 kB + 1 MB
    assert size["disk_mb"] == pytest.approx(1 + (300 * 4 * 2.0 + 600 * 0.5) / 1024)
    assert size["timeout_s"] == resources.default_timeout(job)
    huge = sizing.size(job_of(HUGE), "uml")
    # 50 MB of pcap per 30 s at 100 Mbit/s (resources.py): 16.7 TB of pcap, ten times that to parse
    assert huge["disk_mb"] > 16e6 and huge["capture_mem_mb"] == pytest.approx(10 * 50 / 3000 * 10_000 * 100_000)


def test_a_run_that_does_not_fit_in_memory_is_refused_with_its_numbers(tmp_path):
    with pytest.raises(sizing.SizeError) as err:
        sizing.check([job_of(HUGE)], tmp_path, "uml", meminfo=meminfo(tmp_path, 8000), free_mb=1e12)
    message = str(err.value)
    assert message.startswith("s/base/rep1: needs 166,668,") and "this host has 8,000 MB available" in message
    assert "parsing its packet captures 166,666,667" in message and "Nothing was booted" in message
    sizing.check([job_of(SMALL)], tmp_path, "uml", meminfo=meminfo(tmp_path, 8000), free_mb=1e12)


def test_the_raw_files_of_all_runs_must_fit_the_free_disk(tmp_path):
    jobs = spec.expand(spec.resolve(dict(SMALL, repetitions=3)))
    one = sizing.size(jobs[0])["disk_mb"]
    sizing.check(jobs, tmp_path, "uml", meminfo=meminfo(tmp_path, 8000), free_mb=3 * one + 1)
    with pytest.raises(sizing.SizeError, match=r"3 run\(s\) write about 11 MB of raw files .* has 10 MB free"):
        sizing.check(jobs, tmp_path, "uml", meminfo=meminfo(tmp_path, 8000), free_mb=3 * one - 1)


def test_run_refuses_before_the_first_boot(tmp_path, monkeypatch, capsys):
    booted = []

    class NoBoot(backends.Backend):
        name = "uml"

        def check(self):
            pass

        def describe(self):
            return {"backend": self.name, "kernel_release": None}

        def execute(self, run_dir, job, timeout_s):
            booted.append(job["point"])
            raise AssertionError("booted")
    monkeypatch.setattr(backends, "get", lambda name, **kw: NoBoot())
    monkeypatch.setattr(sizing, "mem_available_mb", lambda meminfo="": 4000)
    path = tmp_path / "huge.yaml"
    path.write_text(json.dumps(HUGE))
    assert cli.main(["run", str(path), "--out", str(tmp_path / "out")]) == 3
    assert "needs 166,668," in capsys.readouterr().err
    assert booted == [] and not (tmp_path / "out").exists()
