"""Do the glue tests catch a wrong glue? Mutations of the variants' kernel glue, one at a time.

Usage: .venv/bin/python bench/glue_mutations.py [--out FILE] [--only TEXT ...]

For each mutation of tests/kernel/variant_glue.py's MUTATIONS (a re-audit's list: one added line of a
variant's patch changed), then of its EXTRA_MUTATIONS (wrong glues for the further tests), then of its
BBR2_MUTATIONS (one place of bbr2_main.h, the glue of bbr2 and bbr3, changed), then of its
BBR2PLUS_MUTATIONS (one place of bbr2_main.h's or bbr2_math.h's BBRv2+ parts), copies kernel/variants to a
temporary directory with that change and runs the glue tests (TESTS: tests/kernel/test_variant_glue.py,
tests/kernel/test_bbr2_glue.py and tests/kernel/test_bbr2plus_glue.py) against it (GLUE_VARIANTS_DIR), then records which tests failed;
first the same run on the unchanged patches, which must pass. Writes a Markdown table to FILE (default
bench/results/glue-mutations-<today>.md). --only runs the baseline and just the mutations whose label
contains one of the TEXTs (the record then says so). Host only (gcc, patch, the kernel source as the tests
find it); about 15 s per run, 87 runs. Exit status 1 if the baseline fails, a run is skipped, or a mutation
passes every test.
"""
import argparse
import datetime
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "kernel"))
sys.path.insert(0, str(ROOT / "bench"))
import variant_glue as vg  # noqa: E402
from bench_io import pytest_outcomes, write_text_atomic  # noqa: E402

TESTS = ["tests/kernel/test_variant_glue.py", "tests/kernel/test_bbr2_glue.py",
         "tests/kernel/test_bbr2_v2alpha_glue.py", "tests/kernel/test_bbr2plus_glue.py"]


def run_tests(variants: pathlib.Path, junit: pathlib.Path) -> dict:
    """Run the glue tests against the patches in `variants`; {"passed": n, "failed": [test ids],
    "skipped": [reasons]} from pytest's JUnit report (a strict expected failure that fails as expected, a
    documented finding, counts as passed)."""
    env = dict(os.environ, GLUE_VARIANTS_DIR=str(variants))
    subprocess.run([sys.executable, "-m", "pytest", *TESTS, "-q", "-p", "no:cacheprovider",
                    "-k", "not each_mutation", f"--junitxml={junit}"], cwd=ROOT, env=env,
                   capture_output=True, text=True)
    if not junit.exists():
        raise RuntimeError(f"pytest wrote no report for {variants}")
    return pytest_outcomes(junit)


def report(results: dict, only=None) -> str:
    """The Markdown record: one row per run (baseline first); `only`: the --only texts, if the run was
    restricted to the mutations they name."""
    lines = [f"# Glue mutations ({datetime.date.today().isoformat()})", "",
             "`bench/glue_mutations.py`: each mutation changes one added line of a variant's patch "
             "(tests/kernel/variant_glue.py MUTATIONS), or one place of bbr2_main.h, the glue bbr2.patch and "
             "bbr3.patch include (BBR2_MUTATIONS), or one place of the BBRv2+ parts of bbr2_main.h/bbr2_math.h "
             "(BBR2PLUS_MUTATIONS); `tests/kernel/test_variant_glue.py`, `tests/kernel/test_bbr2_glue.py` and "
             "`tests/kernel/test_bbr2plus_glue.py` then run against the mutated patches (the patched tcp_bbr.c "
             "compiled on the host against kernel/tests/glue/kapi.h). "
             "A mutation is caught when at least one test fails.", "",
             *([f"Only the mutations whose label contains {' or '.join(repr(o) for o in only)} were run "
                f"(--only), {len(results) - 1} of {len(vg.ALL_MUTATIONS)}.", ""] if only else []),
             "| run | changed line (patch: old -> new) | tests passed | tests failed | caught |", "|---|---|---|---|---|"]
    titles = {"Further wrong glues, for the tests beyond the re-audit's seven:": vg.EXTRA_MUTATIONS,
              "Wrong glues of bbr2/bbr3 (bbr2_main.h; tests/kernel/test_bbr2_glue.py):": vg.BBR2_MUTATIONS,
              "Wrong implementations of bbr2plus (BBRv2+; tests/kernel/test_bbr2plus_glue.py):":
                  vg.BBR2PLUS_MUTATIONS}
    firsts = {next((m for m in group if m in results), None): t for t, group in titles.items()}
    for label, res in results.items():
        if label in firsts:
            title = firsts[label]
            lines += ["", title, "",
                      "| run | changed line (patch: old -> new) | tests passed | tests failed | caught |",
                      "|---|---|---|---|---|"]
        if label == "baseline (unchanged patches)":
            change, caught = "none", "(must pass: " + ("yes" if not res["failed"] and not res["skipped"] else "NO") + ")"
        else:
            patch, old, new = vg.ALL_MUTATIONS[label]
            old, new = (" ".join(t.split()) for t in (old, new))   # a text over several lines on one
            change = f"{patch}: `{old}` -> `{new}`".replace("|", "\\|")    # a pipe would split the cell
            caught = "yes" if res["failed"] else "**NO**"
        failed = "<br>".join(res["failed"]) or "–"
        if res["skipped"]:
            failed += f" (skipped: {res['skipped'][0]})"
        lines.append(f"| {label} | {change} | {res['passed']} | {failed} | {caught} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=pathlib.Path,
                    default=ROOT / "bench" / "results" / f"glue-mutations-{datetime.date.today().isoformat()}.md")
    ap.add_argument("--only", nargs="+", metavar="TEXT",
                    help="run only the mutations whose label contains one of these texts")
    args = ap.parse_args()
    if not args.out.parent.is_dir():
        sys.exit(f"glue_mutations: no directory {args.out.parent} for --out")
    vg.check_tools()
    source = ROOT / "kernel" / "variants"
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        chosen = [m for m in vg.ALL_MUTATIONS if not args.only or any(o in m for o in args.only)]
        if args.only and not chosen:
            sys.exit(f"glue_mutations: no mutation's label contains {args.only}")
        for i, label in enumerate(["baseline (unchanged patches)", *chosen]):
            variants = source if i == 0 else vg.mutate(source, tmp / f"variants{i}", label)
            results[label] = res = run_tests(variants, tmp / f"junit{i}.xml")
            print(f"{label}: {res['passed']} passed, {len(res['failed'])} failed {res['failed']}"
                  + (f", skipped: {res['skipped'][0]}" if res["skipped"] else ""), flush=True)
    write_text_atomic(args.out, report(results, args.only))
    print(f"glue_mutations: wrote {args.out}")
    base = results["baseline (unchanged patches)"]
    bad = base["failed"] or any(r["skipped"] for r in results.values()) or \
        any(not r["failed"] for k, r in results.items() if k != "baseline (unchanged patches)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
