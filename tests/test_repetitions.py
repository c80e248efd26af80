"""Added repetitions (experiment/repetitions.py; the rule in docs/paper-profile.md)."""
import pathlib
import shutil
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "mininet"))
from bbrlab.experiment import repetitions, runkey, spec  # noqa: E402

FIG05 = REPO / "mininet/specs/kim2019/kim2019_fig05.yaml"


@pytest.fixture
def root(tmp_path):
    (tmp_path / "config").mkdir()
    return tmp_path


def table(root, *rows):
    text = "profile,experiment,point,repetitions,round,claims\n" + "".join(r + "\n" for r in rows)
    (root / repetitions.TABLE).write_text(text)


def test_a_marked_point_gains_seeds_and_keeps_its_runs(root):
    before = repetitions.runs(FIG05, "paper", root=root)
    point = before[0]["point"]
    base = sum(1 for j in before if j["point"] == point)
    assert base == 3
    table(root, f"paper,kim2019_fig05,{point},6,1,x")
    after = repetitions.runs(FIG05, "paper", root=root)
    mine = [j for j in after if j["point"] == point]
    assert [j["repetition"] for j in mine] == [1, 2, 3, 4, 5, 6]
    assert len({j["seed"] for j in mine}) == 6                       # every added run its own seed
    old_keys = {(j["point"], j["repetition"]): runkey.run_key(j) for j in before}
    for j in after:     # the runs the point had keep their keys; other points are untouched
        if (j["point"], j["repetition"]) in old_keys:
            assert runkey.run_key(j) == old_keys[(j["point"], j["repetition"])]
    assert len(after) == len(before) + 3
    # another profile is not affected
    assert len(repetitions.runs(FIG05, "quick", root=root)) == len(repetitions.runs(FIG05, "quick"))


def test_an_unknown_point_or_fewer_repetitions_is_refused(root):
    table(root, "paper,kim2019_fig05,no_such_point,6,1,x")
    with pytest.raises(spec.SpecError, match="no_such_point"):
        repetitions.runs(FIG05, "paper", root=root)
    point = repetitions.runs(FIG05, "paper")[0]["point"]
    table(root, f"paper,kim2019_fig05,{point},2,1,x")
    with pytest.raises(spec.SpecError, match="fewer"):
        repetitions.runs(FIG05, "paper", root=root)
    table(root, f"paper,kim2019_fig05,{point},six,1,x")
    with pytest.raises(repetitions.TableError, match="repetitions"):
        repetitions.runs(FIG05, "paper", root=root)


def claim(cid, strength, verdict, read):
    return {"id": cid, "strength": strength, "verdict": verdict, "points_read": read}


def test_a_round_marks_the_points_of_marginal_claims_only(root):
    rows = [claim("a", "marginal", "reproduced", "e1/p1;e2/q1"),
            claim("b", "robust", "not reproduced", "e1/p2"),
            claim("c", "marginal", "not run", "e1/p3"),
            claim("d", "marginal", "not reproduced", "e1/p1")]
    new = repetitions.next_round(rows, "paper", {"e1": 3, "e2": 3}, root=root)
    assert [(r["experiment"], r["point"], r["repetitions"], r["round"], r["claims"]) for r in new] == [
        ("e1", "p1", 6, 1, "a;d"), ("e2", "q1", 6, 1, "a")]
    repetitions.write(new, root=root)
    second = repetitions.next_round([claim("a", "marginal", "reproduced", "e1/p1;e1/p4")], "paper",
                                    {"e1": 3}, root=root)
    assert [(r["point"], r["repetitions"], r["round"]) for r in second] == [("p1", 9, 2), ("p4", 6, 1)]
    repetitions.write(second, root=root)
    assert repetitions.added("paper", root=root) == {"e1": {"p1": 9, "p4": 6}, "e2": {"q1": 6}}
    # p1 has had its two rounds: not marked again; p4 gets its second
    third = repetitions.next_round([claim("a", "marginal", "reproduced", "e1/p1;e1/p4")], "paper",
                                   {"e1": 3}, root=root)
    assert [(r["point"], r["repetitions"], r["round"]) for r in third] == [("p4", 9, 2)]
    assert repetitions.exhausted([claim("a", "marginal", "reproduced", "e1/p1;e1/p4")], "paper",
                                 root=root) == [("e1", "p1")]


def test_the_command_reads_claims_tables_and_names_a_bad_one(tmp_path, capsys):
    from bbrlab import cli
    good = tmp_path / "claims_x.csv"
    good.write_text("id,strength,verdict,points_read\na,robust,reproduced,kim2019_fig05/p\n")
    assert cli.main(["add-repetitions", str(good), "--dry-run"]) == 0
    assert "0 marginal claims mark 0 points" in capsys.readouterr().out
    old = tmp_path / "claims_old.csv"
    old.write_text("id,strength,verdict\na,marginal,reproduced\n")
    assert cli.main(["add-repetitions", str(old), "--dry-run"]) == 2
    assert "no points_read column" in capsys.readouterr().err
