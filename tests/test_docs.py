"""The documentation's contracts: the README is a user's guide of bounded length whose two
commands are what CI runs, bench/README.md names every benchmark script and result file, and
the relative links of the Markdown documentation lead to files that exist."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
BENCH = REPO / "bench"

MAIN_COMMAND = "./setup.sh && .venv/bin/snakemake --cores all"
TEST_COMMAND = "./setup.sh && .venv/bin/python -m pytest tests"
MAX_README_LINES = 400


def test_readme_is_a_guide_of_bounded_length():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines (at most {MAX_README_LINES})"


def test_readme_opens_with_the_two_commands_and_ci_runs_the_second():
    text = README.read_text()
    block = text.split("## Two commands", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert commands[:2] == [MAIN_COMMAND, TEST_COMMAND]
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert ci[-1] == TEST_COMMAND, ".ci/run must end by running the README's test command"


def named_files(markdown: str) -> set[str]:
    """File names a Markdown text names in code spans, `name.{md,csv}` expanded."""
    names = set()
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.M | re.S)
    for span in re.findall(r"`([^`]+)`", prose):
        m = re.fullmatch(r"(.*)\.\{([a-z,]+)\}", span)
        if m:
            names |= {f"{m.group(1)}.{ext}" for ext in m.group(2).split(",")}
        else:
            names.add(span)
    return {Path(n).name for n in names}


def test_bench_readme_names_every_script_and_result_file():
    named = named_files((BENCH / "README.md").read_text())
    missing = [p.name for p in sorted(BENCH.glob("*.py")) if p.name not in named]
    assert not missing, f"bench/README.md does not describe {missing}"
    missing = [p.name for p in sorted((BENCH / "results").iterdir()) if p.name not in named]
    assert not missing, f"bench/README.md's table of result files lacks {missing}"
    missing = [p.name for p in sorted((BENCH / "probes").glob("*.yaml")) if p.name not in named]
    assert not missing, f"bench/README.md does not mention the probes {missing}"


def markdown_files() -> list[Path]:
    return [README, BENCH / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_relative_links_lead_to_existing_files():
    broken = []
    for md in markdown_files():
        for target in re.findall(r"\]\(([^)\s]+)\)", md.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if not (md.parent / path).exists():
                broken.append(f"{md.relative_to(REPO)}: {target}")
    assert not broken, "broken links: " + "; ".join(broken)
