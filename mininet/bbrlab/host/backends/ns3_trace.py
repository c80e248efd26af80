"""Reading the ns-3 backend's per-ACK records of a run made with `Ns3Backend(cc_trace=True)`:
raw/cc_trace_<flow>.csv, one row per ACK of the project's BBR and its variants (mode, gains in
BBR_UNIT, min_rtt, the variant's decision and queue flag; docs/ns3-backend.md). They are for tests
and benchmarks, not tidy data."""
import csv
import pathlib

PROBE_BW = "2"   # the project's BBR v1 mode numbers (backends/ns3/bbr_v1.h's Mode)
UNIT = 256       # BBR_UNIT: gains are in 1/256


def rows(run_dir, flow: int = 1) -> list:
    """A flow's per-ACK records as dicts of strings, in time order."""
    with open(pathlib.Path(run_dir) / "raw" / f"cc_trace_{flow}.csv", newline="") as f:
        return list(csv.DictReader(f))


def probes(records: list) -> list:
    """Probing periods (PROBE_BW at a pacing gain above 1) as (start_s, length_s, queue flag at the
    record that ends them); a period still open at the end is left out."""
    out, start = [], None
    for r in records:
        probing = r["mode"] == PROBE_BW and int(r["pacing_gain"]) > UNIT
        if probing and start is None:
            start = r
        elif not probing and start is not None:
            out.append((float(start["t_s"]), float(r["t_s"]) - float(start["t_s"]), r["flag"] == "1"))
            start = None
    return out
