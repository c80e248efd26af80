"""BBR-FCA's CUBIC-rate model on the loss phases of real CUBIC flows (bench/probes/cubic_phases*.yaml).

Usage: .venv/bin/python bench/cubic_phase_estimate.py

Reads the traces of tests/fixtures/cubic_traces/ (written from the probes' runs by
bench/cubic_trace_fixture.py) the way tests/kernel/test_fca_real_cubic.py does: loss episodes
timed by the connection's Recovery state, the module's fixed-point estimate (the harness compiled
from kernel/variants/bbr_fca_math.h) from every 8 consecutive CA phases, over the flow's
measured sending rate. Prints, per trace and flow, the phases and the median, smallest and largest
ratio, for the module and for each of the code review's mutations (test_variant_math.FCA_MUTATIONS).
"""
import pathlib
import statistics
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "kernel"))
import test_fca_real_cubic as real  # noqa: E402
import test_variant_math as tv  # noqa: E402


def summary(lib):
    return {key: (statistics.median(rs), min(rs), max(rs), len(rs)) for key, rs in real.all_ratios(lib).items()}


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for name in real.TRACES:
            for flow, rows in real.load_trace(name).items():
                eps = real.loss_episodes(rows)
                print(name, "flow", flow, "phases (s):", [round(b[0] - a[1], 2) for a, b in zip(eps, eps[1:])])
        builds = {"module": None, **{f"mutation: {m}": v for m, v in tv.FCA_MUTATIONS.items()}}
        print("| harness | trace | flow | windows | median | min | max |\n|---|---|---|---|---|---|---|")
        for i, (label, mutation) in enumerate(builds.items()):
            out = pathlib.Path(tmp) / str(i)
            out.mkdir()
            for (name, flow), (med, lo, hi, n) in summary(tv.build_harness(out, mutation)).items():
                print(f"| {label} | {name} | {flow} | {n} | {med:.3f} | {lo:.3f} | {hi:.3f} |")


if __name__ == "__main__":
    main()
