"""What the benchmarks share for their output."""
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
