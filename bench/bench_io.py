"""What the benchmarks share: writing their reports, and reading a run's tidy goodput."""
import collections
import csv
import pathlib
import xml.etree.ElementTree as ET


def write_text_atomic(path: pathlib.Path, text: str) -> None:
    """Write a report whole or not at all: to a temporary name beside it, then renamed."""
    path = pathlib.Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.rename(path)


def pytest_outcomes(junit: pathlib.Path) -> dict:
    """{"passed": n, "failed": [test ids], "skipped": [reasons]} from a pytest JUnit report; a strict
    expected failure that fails as expected counts as passed."""
    out = {"passed": 0, "failed": [], "skipped": []}
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            out["failed"].append(case.get("name"))
        elif (skip := case.find("skipped")) is not None and skip.get("type") != "pytest.xfail":
            out["skipped"].append(skip.get("message", ""))
        else:
            out["passed"] += 1
    return out


def goodput_by_flow(run_dir: pathlib.Path, t_from: float, t_to: float) -> dict:
    """Mbit/s per flow ("1", "2", ...) over the tidy/goodput.csv bins ending in (t_from, t_to] (the
    tests' conftest.goodput_by_flow)."""
    sums, secs = collections.Counter(), collections.Counter()
    with open(pathlib.Path(run_dir) / "tidy" / "goodput.csv") as f:
        for r in csv.DictReader(f):
            if t_from < float(r["t_s"]) <= t_to:
                sums[r["flow"]] += int(r["bytes"])
                secs[r["flow"]] += float(r["interval_s"])
    return {k: sums[k] * 8 / secs[k] / 1e6 for k in sums}
