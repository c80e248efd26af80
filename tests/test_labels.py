"""Human labels of sweep points (bbrlab/experiment/labels.py), on the shipped specs' real points."""
import csv
import io
import pathlib

import pytest

from bbrlab import cli
from bbrlab.experiment import experiments, labels, spec
from bbrlab.host import runner

REPO = pathlib.Path(__file__).resolve().parents[1]
SPECS = REPO / "mininet" / "specs"
BASE = {"name": "t", "duration_s": 30, "bottleneck": {"rate_mbps": 100, "buffer_bytes": 2_000_000},
        "flows": [{"cc": "bbr", "rtt_ms": 10}, {"cc": "bbr", "rtt_ms": 50}]}


def labels_of(experiment, profile="paper"):
    return spec.labels_of(spec.load(REPO / experiments.load(REPO)[0][experiment].spec, profile=profile))


def test_ma2019_rate_red_rtt_and_count_sweeps():
    assert labels_of("ma2019_fig03")["rate_mbps=10"] == "10 Mbit/s"
    assert labels_of("ma2019_fig03")["rate_mbps=1000"] == "1 Gbit/s"
    assert list(labels_of("ma2019_fig04").values()) == [
        "RED max 0.5 MB, p 2 %", "RED max 0.5 MB, p 10 %", "RED max 0.33 MB, p 2 %"]
    assert labels_of("ma2019_fig05")["f2_rtt_ms=15"] == "10 vs 15 ms"   # flow 1 is 10 ms
    fig06 = labels_of("ma2019_fig06")
    assert fig06["f2_count=1"] == "1 flow of 10 ms" and fig06["f2_count=20"] == "20 flows of 10 ms"


def test_ma2019_bbq_against_bbr_points():
    assert labels_of("ma2019_fig13") == {"f1_cc=bbr__f2_cc=bbr": "BBR", "f1_cc=bbq__f2_cc=bbq": "BBQ"}
    assert labels_of("ma2019_fig14")["f1_cc=bbq__f2_cc=bbq__rate_mbps=10"] == "BBQ, 10 Mbit/s"
    assert labels_of("ma2019_fig15")["f1_cc=bbr__f2_cc=bbr__f2_rtt_ms=100"] == "BBR, 10 vs 100 ms"
    assert labels_of("ma2019_fig16")["f1_cc=bbq__f2_cc=bbq__f2_count=5"] == "BBQ, 5 flows of 10 ms"
    assert labels_of("ma2019_fig17", "quick") == {
        "f1_cc=bbr__f2_cc=bbr__f1_rtt_ms=20__f2_rtt_ms=50": "BBR, 20 vs 50 ms",
        "f1_cc=bbr__f2_cc=bbr__f1_rtt_ms=200__f2_rtt_ms=300": "BBR, 200 vs 300 ms",
        "f1_cc=bbq__f2_cc=bbq__f1_rtt_ms=20__f2_rtt_ms=50": "BBQ, 20 vs 50 ms",
        "f1_cc=bbq__f2_cc=bbq__f1_rtt_ms=200__f2_rtt_ms=300": "BBQ, 200 vs 300 ms"}


def test_unswept_spec_and_module_parameters():
    assert labels_of("ma2019_fig01") == {"base": "base"}
    assert list(labels_of("kim2019_bbre_alpha").values()) == [
        "BBR", "BBR-E, alpha 1.25", "BBR-E, alpha 1.5", "BBR-E, alpha 2", "BBR-E, alpha 3",
        "Algorithm 1, alpha 1.5"]       # the spec's point_labels


@pytest.mark.parametrize("path", sorted(SPECS.glob("*/*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_point_has_a_distinct_short_label(path):
    for profile in ("quick", "paper"):
        got = spec.labels_of(spec.load(path, profile=profile))
        assert len(set(got.values())) == len(got)
        assert all(0 < len(label) <= 40 and "=" not in label for label in got.values())


def test_other_fields_get_readable_labels():
    assert labels.point_label({"bottleneck.buffer_bdp": 1.5}) == "buffer 1.5 BDP"
    assert labels.point_label({"bottleneck.aqm.probability": 0.1}) == "RED p 10 %"
    assert labels.point_label({"flows.1.cc": "bbr", "flows.2.cc": "cubic"}) == "BBR vs CUBIC"
    assert labels.point_label({"flows.1.module_params": {"alpha_us": 3000, "beta_ppm": 8000}}) \
        == "alpha 3 ms, beta 0.8 %"
    assert labels.point_label({"flows.2.start_s": 5}) == "f2 start 5 s"


def test_label_reaches_the_run_spec_and_run_json_but_not_the_run_key():
    raw = dict(BASE, sweep={"bottleneck.rate_mbps": [10, 100]})
    runs = spec.expand(spec.resolve(raw))
    assert [r["point_label"] for r in runs] == ["10 Mbit/s", "100 Mbit/s"]
    relabelled = spec.expand(spec.resolve(dict(raw, point_labels={"rate_mbps=10": "slow link"})))
    assert relabelled[0]["point_label"] == "slow link" and relabelled[1]["point_label"] == "100 Mbit/s"
    assert [r["run_key"] for r in relabelled] == [r["run_key"] for r in runs]
    summary = runner.run_summary(relabelled[0], {}, "ok")
    assert summary["point"] == "rate_mbps=10" and summary["point_label"] == "slow link"


def test_point_labels_override_is_validated():
    raw = dict(BASE, sweep={"bottleneck.rate_mbps": [10, 100]},
               profiles={"paper": {"sweep": {"bottleneck.rate_mbps": [10, 100, 400]}}})
    # a point of another profile's sweep may be named
    assert spec.resolve(dict(raw, point_labels={"rate_mbps=400": "fast"}), profile="quick")
    with pytest.raises(spec.SpecError, match=r"point_labels\.rate_mbps=5: is not a sweep point"):
        spec.resolve(dict(raw, point_labels={"rate_mbps=5": "x"}), source="t.yaml")
    with pytest.raises(spec.SpecError, match="point_labels"):
        spec.resolve(dict(raw, point_labels={"rate_mbps=10": ""}), source="t.yaml")
    with pytest.raises(spec.SpecError, match="same label"):
        spec.expand(spec.resolve(dict(raw, point_labels={"rate_mbps=10": "100 Mbit/s"})))


def test_labels_command_writes_csv(tmp_path, capsys):
    fig04 = SPECS / "ma2019" / "ma2019_fig04.yaml"
    out = tmp_path / "labels.csv"
    assert cli.main(["labels", str(fig04), str(SPECS / "ma2019" / "ma2019_fig01.yaml"),
                     "--profile", "quick", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert rows[0] == {"experiment": "ma2019_fig04", "point": "aqm_max_bytes=500000__aqm_probability=0_02",
                       "label": "RED max 0.5 MB, p 2 %"}
    assert rows[-1] == {"experiment": "ma2019_fig01", "point": "base", "label": "base"}
    assert cli.main(["labels", str(fig04)]) == 0
    assert len(list(csv.DictReader(io.StringIO(capsys.readouterr().out)))) == 3
