"""The sampler: one process that samples every flow's sockets, the
bottleneck queue and the guest CPU on a fixed time grid.

    python3 -m bbrlab.guest.samplers CONFIG.json
    samplers.Forked(CONFIG)    (the experiment driver: the same, forked from it)

CONFIG:
    {"until": <epoch s>, "start": <epoch s: the grid's origin; default: now>, "tick_s": 0.05,
     "sockets": [{"netns_pid": 123, "ports": [5201], "out": "raw/sockets_snd1.jsonl",
                  "every": 2}, ...],
     "qdisc": {"dev": "sw1-eth1", "out": "raw/qdisc.jsonl", "every": 1},
     "cpu": {"out": "raw/cpu.jsonl", "every": 10}}

One process, not one per host: a netlink socket stays bound to the network
namespace it was created in, so the sampler enters each Mininet host's
namespace once (setns) to open its sock_diag socket and then reads them all
from one loop. That keeps the testbed's own CPU cost low, which matters
because a busy guest delays the timers that pace and shape the traffic.

Each target writes JSON lines `{"t": <epoch s>, "late_ms": ..., ...}`; sample
times follow the grid start + k * tick (slept to as absolute times, vclock.py) so
lateness does not accumulate, and
each wake-up's lateness is recorded (fidelity.py reads it). A line "ready"
is printed once all readers are open, so the caller can wait for it.
"""
import ctypes
import json
import os
import signal
import socket
import sys
import time

from . import netlink, vclock
from .netns import in_netns

TCP_FIELDS = ("state", "ca_state", "snd_mss", "unacked", "sacked", "lost", "retrans", "rtt", "rttvar",
              "snd_cwnd", "total_retrans", "pacing_rate", "bytes_acked", "bytes_received",
              "min_rtt", "delivery_rate", "delivered", "bytes_sent", "bytes_retrans",
              "delivery_rate_app_limited", "notsent_bytes", "busy_time", "rwnd_limited",
              "sndbuf_limited", "snd_wnd", "rcv_space", "segs_out", "segs_in", "data_segs_in", "data_segs_out")


class _Stop(Exception):
    pass


def _on_signal(_sig, _frame):
    raise _Stop()


def socket_record(reader, ports) -> dict:
    """{"socks": [...]}: every socket the reader sees whose own or peer port is in `ports` (all of
    them when ports is empty), each with its addresses, ports, state, congestion control, the
    TCP_FIELDS of its tcp_info and its BBR info when it has one."""
    socks = []
    for s in reader.read():
        if ports and s["sport"] not in ports and s["dport"] not in ports:
            continue
        info = s.get("tcp_info", {})
        entry = {k: s[k] for k in ("src", "sport", "dst", "dport", "state")}
        entry["cc"] = s.get("cc")
        entry["info"] = {k: info[k] for k in TCP_FIELDS if k in info}
        if "bbr" in s:
            entry["bbr"] = s["bbr"]
        socks.append(entry)
    return {"socks": socks}


class CpuReader:
    """The guest's CPU busy fraction between successive calls of record(), from /proc/stat."""
    def __init__(self):
        self.prev = self._read()

    @staticmethod
    def _read():
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return sum(fields), fields[3] + (fields[4] if len(fields) > 4 else 0)

    def record(self) -> dict:
        """{"busy": 1 - idle share (idle and iowait) of the jiffies since the previous call (or since
        construction)}; busy is None when no jiffy has passed."""
        total, idle = self._read()
        ptotal, pidle = self.prev
        self.prev = (total, idle)
        busy = 1.0 - (idle - pidle) / (total - ptotal) if total > ptotal else None
        return {"busy": busy}


def build_targets(config: dict) -> list:
    """[(every, out_file, sample_fn)] for every configured target."""
    targets = []
    for entry in config.get("sockets", []):
        reader = in_netns(entry.get("netns_pid"), netlink.TcpSockets)
        ports = set(entry.get("ports", []))
        targets.append((entry.get("every", 2), entry["out"], lambda r=reader, p=ports: socket_record(r, p)))
    if "qdisc" in config:
        q = config["qdisc"]
        reader = in_netns(q.get("netns_pid"), lambda: netlink.Qdiscs(socket.if_nametoindex(q["dev"])))
        targets.append((q.get("every", 1), q["out"], lambda r=reader: {"qdiscs": r.read()}))
    if "cpu" in config:
        cpu = CpuReader()
        targets.append((config["cpu"].get("every", 10), config["cpu"]["out"], cpu.record))
    return targets


def run(config: dict) -> None:
    """Sample every configured target (build_targets) on the grid start + k * tick_s until the
    config's `until` (epoch s; forever without it) or a SIGTERM/SIGINT, appending one JSON line
    per sample to each target's `out`. Prints "ready" once every reader is open; skips grid points
    already missed rather than catching up; closes the files however it ends."""
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    targets = build_targets(config)
    files = [open(out, "a", buffering=1 << 16) for _every, out, _fn in targets]
    tick, until = config.get("tick_s", 0.05), config.get("until")
    try:                             # a SIGTERM from the moment "ready" is said ends the loop cleanly
        print("ready", flush=True)
        start, k = config.get("start") or time.time(), 0
        while until is None or time.time() < until:
            due = start + k * tick
            now = time.time()
            if now < due:
                vclock.sleep_until(due)
                now = time.time()
            late = round((now - due) * 1e3, 3)
            for (every, _out, sample), f in zip(targets, files):
                if k % every == 0:
                    record = {"t": round(time.time(), 6), "late_ms": late}
                    record.update(sample())
                    f.write(json.dumps(record, separators=(",", ":")) + "\n")
            # Skip grid points already missed instead of bursting to catch up.
            k = max(k + 1, int((time.time() - start) / tick) + 1)
    except _Stop:
        pass
    finally:
        for f in files:
            f.close()


COMM = b"bbrlab-sampler"     # the forked sampler's process name (/proc/<pid>/comm)
PR_SET_NAME = 15


class Forked:
    """The sampler as a child of the calling process (fork, no exec), with the part of
    subprocess.Popen's interface the driver uses. Starting a Python interpreter in the
    User-Mode Linux guest costs most of a host CPU-second (page faults and system calls
    are ptrace stops; bench/results/revision-ab-2026-11-24-sampler-*.md); the driver has
    this module loaded already, so its child only runs it. The child's garbage collector
    leaves the inherited objects alone (gc.freeze), so it does not write to (and copy)
    the driver's pages; its name is COMM, so that accounting tells it from the driver."""

    def __init__(self, config: dict):
        import gc
        read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:                            # the child: never returns
            status = 1
            try:
                os.close(read)
                gc.freeze()
                ctypes.CDLL(None).prctl(PR_SET_NAME, ctypes.c_char_p(COMM), 0, 0, 0)
                os.dup2(write, 1)
                os.closerange(3, os.sysconf("SC_OPEN_MAX"))   # the driver's files, shells' ptys, pipes
                sys.stdout = os.fdopen(1, "w")
                run(config)
                sys.stdout.flush()
                status = 0
            except BaseException:                    # noqa: B036 - report anything, then leave
                import traceback
                os.write(2, traceback.format_exc().encode())   # fd 2 itself: sys.stderr may be a wrapper
            finally:
                os._exit(status)
        os.close(write)
        self.stdout = os.fdopen(read, "r")
        self.returncode = None

    def poll(self):
        """The child's exit code once it has ended (reaped without blocking), else None."""
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def send_signal(self, sig) -> None:
        """Send `sig` to the child unless it has already ended."""
        if self.poll() is None:
            os.kill(self.pid, sig)

    def wait(self, timeout=None) -> int:
        """Wait for the child to end (polling every 50 ms) and return its exit code; TimeoutError after
        `timeout` seconds when it still runs."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"sampler (pid {self.pid}) still running after {timeout} s")
            time.sleep(0.05)
        return self.returncode


def main(argv=None) -> None:
    """`python3 -m bbrlab.guest.samplers CONFIG.json`: run(the config read from that file); exits
    with the usage for any other argument count."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.exit("usage: python3 -m bbrlab.guest.samplers CONFIG.json")
    with open(argv[0]) as f:
        run(json.load(f))


if __name__ == "__main__":
    main()
