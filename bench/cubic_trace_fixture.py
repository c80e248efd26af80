"""Write a CUBIC trace fixture for tests/kernel/test_fca_real_cubic.py from a probe's run.

Usage: .venv/bin/python bench/cubic_trace_fixture.py <run dir> <fixture name>

Keeps, per flow, the columns the test reads from tidy/tcp.csv (time, smoothed RTT, bytes
acknowledged, retransmissions, MSS) and writes tests/fixtures/cubic_traces/<name>.csv.xz
(written to a temporary name, then renamed).
"""
import csv
import io
import lzma
import os
import pathlib
import sys

COLUMNS = ("flow", "t_s", "rtt_ms", "bytes_acked", "retrans_total", "mss_bytes")


def main(run_dir, name):
    rows = list(csv.DictReader(open(pathlib.Path(run_dir) / "tidy" / "tcp.csv")))
    if not rows:
        sys.exit(f"{run_dir}: tidy/tcp.csv has no samples")
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        if r["bytes_acked"] and r["rtt_ms"]:
            w.writerow([r[c] for c in COLUMNS])
    dest = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "cubic_traces" / f"{name}.csv.xz"
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".tmp")
    tmp.write_bytes(lzma.compress(out.getvalue().encode(), preset=9))
    os.replace(tmp, dest)
    print(dest, dest.stat().st_size, "bytes")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
