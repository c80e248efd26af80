"""bench/archive_replay.py's comparison: the tidy data of a rerun against its archived run."""
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import archive_replay  # noqa: E402


def run_dir(root, name, rows):
    tidy = root / name / "tidy"
    tidy.mkdir(parents=True)
    (tidy / "goodput.csv").write_text("t_s,flow,goodput_mbps\n" + "".join(f"{t},1,{g}\n" for t, g in rows))
    return root / name


def test_identical_runs_give_no_difference_and_one_value_is_named(tmp_path):
    archived = run_dir(tmp_path, "a", [(0.1, 10.0), (0.2, 11.0)])
    assert archive_replay.compare(archived, run_dir(tmp_path, "b", [(0.1, 10.0), (0.2, 11.0)])) == []
    assert archive_replay.compare(archived, run_dir(tmp_path, "c", [(0.1, 10.0), (0.2, 11.5)])) == [
        "goodput.csv: differs in goodput_mbps"]
    assert archive_replay.compare(archived, run_dir(tmp_path, "d", [(0.1, 10.0)])) == [
        "goodput.csv: 2 rows archived, 1 rerun"]
    (tmp_path / "e" / "tidy").mkdir(parents=True)
    assert archive_replay.compare(archived, tmp_path / "e") == ["goodput.csv: missing in the rerun"]


def test_a_column_the_rerun_has_beyond_the_archived_ones_is_not_a_difference(tmp_path):
    archived = run_dir(tmp_path, "a", [(0.1, 10.0)])
    rerun = tmp_path / "b" / "tidy"
    rerun.mkdir(parents=True)
    (rerun / "goodput.csv").write_text("t_s,flow,goodput_mbps,bytes\n0.1,1,10.0,1250\n")
    assert archive_replay.compare(archived, tmp_path / "b") == []
