"""The sampler forked from the experiment driver (samplers.Forked), on the host: it starts,
says "ready", samples on its grid until its end time or SIGTERM, is named as the sampler, and
keeps none of the driver's files open (a driver's pipe it held would never see its EOF)."""
import json
import os
import signal
import time

from bbrlab.guest import samplers


def config(tmp_path, until_s):
    return {"until": time.time() + until_s, "tick_s": 0.01, "cpu": {"out": str(tmp_path / "cpu.jsonl"), "every": 1}}


def test_forked_sampler_samples_until_its_end_and_exits(tmp_path):
    proc = samplers.Forked(config(tmp_path, 0.5))
    assert proc.stdout.readline().strip() == "ready"
    with open(f"/proc/{proc.pid}/comm") as f:
        assert f.read().strip() == samplers.COMM.decode()
    assert proc.wait(timeout=10) == 0
    lines = [json.loads(line) for line in (tmp_path / "cpu.jsonl").read_text().splitlines()]
    assert 20 <= len(lines) <= 55                     # 0.5 s on a 10-ms grid, less its start
    assert all("busy" in r and "late_ms" in r for r in lines)
    times = [r["t"] for r in lines]
    assert times == sorted(times)


def test_forked_sampler_stops_on_sigterm_and_holds_no_driver_file(tmp_path):
    read, write = os.pipe()                           # a driver's pipe: the child must not keep it
    try:
        proc = samplers.Forked(config(tmp_path, 60))
        assert proc.stdout.readline().strip() == "ready"
        held = set()
        for fd in os.listdir(f"/proc/{proc.pid}/fd"):
            try:
                held.add(os.readlink(f"/proc/{proc.pid}/fd/{fd}"))
            except FileNotFoundError:             # a file it reads per sample (/proc/stat), closed again
                pass
        ours = os.readlink(f"/proc/self/fd/{write}")
        assert ours not in held, held
        time.sleep(0.2)
        assert proc.poll() is None
        t = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0 and time.monotonic() - t < 5
        assert (tmp_path / "cpu.jsonl").read_text().count("\n") >= 5    # what it sampled is written out
    finally:
        os.close(read)
        os.close(write)
