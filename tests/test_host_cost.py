"""The host-cost instruments (procacct.py, bench/host_cost_profile.py) and the
opt-in receiver SO_RCVLOWAT (rcvlowat.py), on the host itself: no testbed boot."""
import ctypes
import importlib.util
import os
import pathlib
import socket

import pytest

from bbrlab.guest import procacct, rcvlowat

REPO = pathlib.Path(__file__).resolve().parents[1]


def load_profile():
    spec = importlib.util.spec_from_file_location("host_cost_profile", REPO / "bench" / "host_cost_profile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stat_fields_comm_with_spaces_and_parens():
    comm, fields = procacct._stat_fields("42 (a (b) c) S 1 42 42 0 -1 4194560 77 0 3 0 5 6")
    assert comm == "a (b) c"
    assert fields[0] == "S" and fields[1] == "1" and fields[7] == "77" and fields[11] == "5"


def test_process_counts_track_this_process():
    before = procacct.process(os.getpid())
    buf = bytearray(64 << 20)          # touching 64 MiB of fresh pages must fault
    for i in range(0, len(buf), 4096):
        buf[i] = 1
    after = procacct.process(os.getpid())
    assert after["minflt"] - before["minflt"] >= 8000
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    assert any(lo <= addr < hi for lo, hi in after["maps"])
    assert after["threads"] >= 1 and after["nvcsw"] >= before["nvcsw"]


def test_window_needs_all_flows_running():
    job = {"flows": [{"start_s": 0, "stop_s": 12}, {"start_s": 2, "stop_s": 12}]}
    assert procacct.window(job) == (3.0, 11.5)
    with pytest.raises(ValueError):
        procacct.window({"flows": [{"start_s": 0, "stop_s": 1.2}]})


def test_match_picks_the_guest_process_holding_the_host_mappings():
    profile = load_profile()
    kernel = {(0x60000000, 0x60400000)}
    host_maps = [[0x60000000, 0x60400000, "linux"], [0x5000, 0x6000, ""], [0x7000, 0x9000, ""]]
    guests = [{"pid": 1, "maps": [[0x1000, 0x2000]]}, {"pid": 2, "maps": [[0x4000, 0xa000]]}]
    best, score = profile.match(host_maps, kernel, guests)
    assert best["pid"] == 2 and score == 1.0
    best, score = profile.match([[0x60000000, 0x60400000, "linux"]], kernel, guests)
    assert best is None


def test_lowat_reaches_the_data_socket_of_another_descriptor():
    """The later of two established connections on the port gets SO_RCVLOWAT, set through a
    pidfd_getfd copy, and the original descriptor sees it; the earlier (control) one keeps 1."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(2)
    port = listener.getsockname()[1]
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
    accepted = [listener.accept()[0] for _ in range(2)]
    try:
        held = rcvlowat.established_sockets(os.getpid(), port)
        assert [fd for _inode, fd in held] == [a.fileno() for a in accepted]
        assert rcvlowat.set_lowat(os.getpid(), held[-1][1], 16384) == 16384
        assert accepted[1].getsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT) == 16384
        assert accepted[0].getsockopt(socket.SOL_SOCKET, socket.SO_RCVLOWAT) == 1
    finally:
        for s in clients + accepted + [listener]:
            s.close()


def test_lowat_refuses_a_value_that_would_clamp_the_window():
    with pytest.raises(ValueError, match="receiver_lowat_bytes"):
        rcvlowat.apply_when_connected(os.getpid(), 1, rcvlowat.LOWAT_MAX + 1, print)


def test_phases_split_cpu_at_console_lines_and_skip_missing_ones():
    profile = load_profile()
    tick = profile.TICK
    lines = [line for _name, line in profile.PHASES if line]
    # host time, CPU ticks so far, console lines seen so far; "start flow 2" never appears
    seen = lambda n: [line for line in lines[:n] if line != "start flow 2"]  # noqa: E731
    assert lines == ["bbrlab-guest: booted", "building dumbbell", "measuring base RTT", "starting receivers",
                     "starting sampler", "time zero in", "start flow 1", "start flow 2", "] done"]
    samples = [(0.0, 0, []), (1.0, 1 * tick, seen(1)), (2.0, 3 * tick, seen(2)), (5.0, 4 * tick, seen(3)),
               (6.0, 4 * tick, seen(4)), (6.5, 5 * tick, seen(5)), (7.0, 5 * tick, seen(6)),
               (8.0, 7 * tick, seen(7)), (9.0, 11 * tick, seen(9))]
    out = profile.phases(samples, final_cpu_s=12.0)
    names = [p["phase"] for p in out]
    assert "first flow alone" not in names and names[-1].startswith("teardown")
    assert [p["host_cpu_s"] for p in out] == [1.0, 2.0, 1.0, 0.0, 1.0, 0.0, 2.0, 4.0, 1.0]
    assert sum(p["host_cpu_s"] for p in out) == 12.0


def test_the_profile_follows_the_runners_attempt_directory(tmp_path):
    """The runner makes each attempt in a new directory beside the run's destination, named from
    runner.attempt_prefix (runner._execute); the profile must find that one, and give up once
    told to stop."""
    import tempfile
    import threading
    from bbrlab.host import runner
    hc = load_profile()
    dest = tmp_path / "run"
    stop = threading.Event()
    stop.set()
    assert hc.attempt_dir(dest, stop) is None
    made = pathlib.Path(tempfile.mkdtemp(prefix=runner.attempt_prefix(dest), dir=tmp_path))
    assert hc.attempt_dir(dest, threading.Event()) == made
    assert "tempfile.mkdtemp(prefix=attempt_prefix(dest)" in pathlib.Path(runner.__file__).read_text()
