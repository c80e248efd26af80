"""Do the testbed tests hold on other trajectories than seed 1's? The same tests, other seeds.

Usage: .venv/bin/python bench/testbed_seeds.py [--seeds 2-6] [--out FILE] [TEST_FILE ...]

A testbed test runs its flows once, from a spec that names no seed, so on seed 1's trajectory: its
ephemeral ports, BBR's random PROBE_BW phase, which flow a drop hits. An assertion that holds only on
that trajectory passes here and fails when a change to the set-up moves it (another checkout path,
one more file written in the guest); a CI run once failed that way. This runs the test files (default:
tests/kernel/*_uml.py, the variant modules in the testbed) once per seed with BBRLAB_TEST_SEED set,
which tests/conftest.py's write_spec() adds to every spec that names no seed, and records the tests
that failed. Writes a Markdown table to FILE (default bench/results/testbed-seeds-<today>.md). The
virtual clock keeps the host's load out of these runs: a failure is the trajectory, not the machine.
About 2 minutes per seed for the default files. Exit status 1 if a test failed at some seed.
"""
import argparse
import datetime
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from bench_io import pytest_outcomes, write_text_atomic  # noqa: E402

DEFAULT_TESTS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "kernel").glob("test_*_uml.py"))


def seeds(text: str) -> list:
    """"2-6" or "2,4,9" -> the seeds; each must be a positive integer."""
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) or int(lo) < 1:
            raise argparse.ArgumentTypeError(f"seeds: {text!r} is not like 2-6 or 2,4,9 (positive integers)")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def run_seed(seed: int, tests: list, junit: pathlib.Path) -> dict:
    env = dict(os.environ, BBRLAB_TEST_SEED=str(seed))
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "pytest", *tests, "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"],
                   cwd=ROOT, env=env, capture_output=True, text=True)
    if not junit.exists():
        raise RuntimeError(f"pytest wrote no report at seed {seed}")
    return dict(pytest_outcomes(junit), wall_s=time.monotonic() - start)


def report(results: dict, tests: list) -> str:
    lines = [f"# Testbed tests on other trajectories ({datetime.date.today().isoformat()})", "",
             "`bench/testbed_seeds.py`: " + ", ".join(f"`{t}`" for t in tests) + " run once per seed, every "
             "spec they write given that seed (BBRLAB_TEST_SEED, tests/conftest.py write_spec()); the "
             "suite itself runs them at seed 1.", "",
             "| seed | passed | failed | skipped | wall (s) |", "|---|---|---|---|---|"]
    for seed, res in results.items():
        failed = "<br>".join(res["failed"]) or "none"
        lines.append(f"| {seed} | {res['passed']} | {failed} | {len(res['skipped'])} | {res['wall_s']:.0f} |")
    bad = sorted({t for res in results.values() for t in res["failed"]})
    lines += ["", f"Tests that failed at some seed: {', '.join(bad) if bad else 'none'}."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=seeds, default=seeds("2-6"))
    ap.add_argument("--out", type=pathlib.Path,
                    default=ROOT / "bench" / "results" / f"testbed-seeds-{datetime.date.today().isoformat()}.md")
    ap.add_argument("tests", nargs="*", default=DEFAULT_TESTS)
    args = ap.parse_args()
    for t in args.tests:
        if not (ROOT / t).is_file():
            ap.error(f"no such test file: {t}")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            results[seed] = res = run_seed(seed, args.tests, pathlib.Path(tmp) / f"seed{seed}.xml")
            print(f"seed {seed}: {res['passed']} passed, failed: {res['failed'] or 'none'} ({res['wall_s']:.0f} s)",
                  flush=True)
    write_text_atomic(args.out, report(results, args.tests))
    print(f"testbed_seeds: wrote {args.out}")
    return 1 if any(res["failed"] for res in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
