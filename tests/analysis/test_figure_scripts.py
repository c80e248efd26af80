"""Every paper's figure scripts (analysis/figures/<paper>/<experiment>.R) without runs: each must
still write its PDF and PNG, a placeholder that says no valid run exists, so that a report can be
built before (or without) an experiment's runs. With runs, each paper's own test module renders
its scripts on a synthetic run tree built for that paper."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_r_analysis import ANALYSIS, render_figure  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")

SCRIPTS = sorted(p for p in (ANALYSIS / "figures").glob("*/*.R") if p.stem != "common")


def test_every_paper_has_figure_scripts():
    papers = {p.parent.name for p in SCRIPTS}
    assert {"ma2019", "kim2019", "yang2019", "tang", "utsumi2022"} <= papers


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_figure_script_without_runs(tmp_path, script):
    (tmp_path / "empty").mkdir()
    render_figure(script, tmp_path / "empty", tmp_path / f"{script.stem}.pdf")
