"""How late the flows' sender (bbrlab/guest/bulk.c) stops when its writes block on a full buffer.

A sender writes until its deadline; a write blocked on a full send buffer carries a send
timeout (SO_SNDTIMEO). That timeout is a timer-wheel timer, rounded up to its level's
granularity (about 1/8 of the timeout), so a sender whose one blocked write carries the whole
time left stops late by up to 1/8 of it. This runs `bulk send` of this checkout and of a
git revision side by side against a peer that accepts and never reads (every write blocks
from the first seconds on), on the host's loopback (no testbed), and reports per binary the
sender's time against the asked one, how late it stopped and its longest single write.

    .venv/bin/python bench/sender_deadline.py --seconds 140 --against 99e2e6e

Writes bench/results/sender-deadline-<date>.md.
"""
import argparse
import datetime
import json
import pathlib
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_io import write_text_atomic  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = "mininet/bbrlab/guest/bulk.c"


def build(source_text: str, out: pathlib.Path) -> pathlib.Path:
    """A static binary of bulk.c's text at `out`."""
    src = out.with_suffix(".c")
    src.write_text(source_text)
    subprocess.run(["gcc", "-O2", "-static", "-o", str(out), str(src)], check=True)
    return out


def blocked_sender(binary: pathlib.Path, seconds: float, result: dict) -> None:
    """Run `binary send` for `seconds` against a peer that never reads; fill `result`."""
    with socket.socket() as lst:
        lst.bind(("127.0.0.1", 0))
        lst.listen(1)
        port = lst.getsockname()[1]
        snd = subprocess.Popen([str(binary), "send", "127.0.0.1", str(port), f"{seconds:g}", "cubic"],
                               stdout=subprocess.PIPE, text=True)
        conn, _ = lst.accept()
        t = time.monotonic()
        out, _ = snd.communicate()
        result["wall_s"] = time.monotonic() - t
        conn.close()
    report = json.loads(out)
    result["sender_s"] = report["end"] - report["start"]
    result["longest_write_s"] = report.get("longest_write_s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=140.0, help="the senders' time (default 140 s)")
    ap.add_argument("--against", required=True, help="the git revision whose bulk.c is compared")
    ap.add_argument("--out", type=pathlib.Path,
                    default=ROOT / "bench" / "results" / f"sender-deadline-{datetime.date.today()}.md")
    args = ap.parse_args()
    old_text = subprocess.run(["git", "-C", str(ROOT), "show", f"{args.against}:{SOURCE}"],
                              check=True, capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        binaries = {f"{args.against} (the revision)": build(old_text, tmp / "bulk_old"),
                    "this checkout": build((ROOT / SOURCE).read_text(), tmp / "bulk_new")}
        results = {name: {} for name in binaries}
        threads = [threading.Thread(target=blocked_sender, args=(b, args.seconds, results[n]))
                   for n, b in binaries.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    hz = subprocess.run(["getconf", "CLK_TCK"], capture_output=True, text=True).stdout.strip()
    lines = [f"# Sender deadline, {datetime.date.today()}", "",
             f"`bench/sender_deadline.py --seconds {args.seconds:g} --against {args.against}`: `bulk send` "
             f"for {args.seconds:g} s against a peer that never reads, on the host's loopback (kernel "
             f"{subprocess.run(['uname', '-r'], capture_output=True, text=True).stdout.strip()}), both "
             f"binaries at once. (CLK_TCK {hz} is the user-space tick, not the kernel's HZ.)", "",
             "| bulk.c of | asked (s) | sender's time (s) | late by (s) | longest single write (s) |",
             "|---|---|---|---|---|"]
    for name, r in results.items():
        longest = "not reported" if r["longest_write_s"] is None else f"{r['longest_write_s']:.3f}"
        lines.append(f"| {name} | {args.seconds:g} | {r['sender_s']:.3f} | {r['sender_s'] - args.seconds:.3f} | {longest} |")
    write_text_atomic(args.out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
