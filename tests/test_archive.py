"""The results archive (bbrlab/data/archive.py) on a real captured run
(tests/fixtures/run_fig1short.tar.xz): what is kept, keys, staleness, atomicity, checksums."""
import hashlib
import json

import pytest

from bbrlab.data import archive, columnar




def _meta(run_dir):
    return json.loads((run_dir / "run.json").read_text())


def test_add_then_restore_gives_back_run_json_and_tidy_data(run_dir, tmp_path):
    arch = tmp_path / "data" / "paper"
    counts = archive.add(arch, archive.complete_runs(tmp_path / "runs"), progress=lambda *_: None)
    assert counts == {"added": 1, "replaced": 0, "unchanged": 0}
    meta = _meta(run_dir)
    state, row = archive.lookup(arch, meta["experiment"], meta["point"], meta["repetition"], "k" * 16)
    assert state == "fresh"
    assert row["valid"] == str(meta["fidelity"]["valid"]).lower() and row["seed"] == str(meta["seed"])
    out = archive.restore(arch, row, tmp_path / "restored" / "rep1")
    for name in ("goodput.csv", "tcp.csv", "queue.csv"):             # the policy's columns (test_archive_resolution.py)
        original = (run_dir / "tidy" / name).read_bytes().decode()
        kept = columnar.without_columns(original, [c for c in archive.DROPPED.get(name, ())
                                                   if c in original.splitlines()[0].split(",")])
        assert (out / "tidy" / name).read_bytes().decode() == kept
    assert not (out / "raw").exists()                      # raw/ is not kept
    restored = _meta(out)
    assert restored.pop("restored_from_archive")["sha256"] == row["sha256"]
    assert restored == meta


def test_same_run_same_bytes(run_dir, tmp_path):
    """Reproducible tarballs: archiving the same run twice changes nothing."""
    assert archive.pack(run_dir) == archive.pack(run_dir)
    arch = tmp_path / "a"
    archive.add(arch, [run_dir], progress=lambda *_: None)
    assert archive.add(arch, [run_dir], progress=lambda *_: None) == {"added": 0, "replaced": 0, "unchanged": 1}


def test_a_restored_run_added_again_is_unchanged(run_dir, tmp_path):
    """A batch re-adds every finished run of its experiment, those it restored included: the
    entry a run was restored from stays as it is (no new blob for the same run)."""
    arch = tmp_path / "a"
    archive.add(arch, [run_dir], progress=lambda *_: None)
    meta = _meta(run_dir)
    row = archive.lookup(arch, meta["experiment"], meta["point"], meta["repetition"], "k" * 16)[1]
    blob = archive.entry_path(arch, meta["experiment"], meta["point"], meta["repetition"]).read_bytes()
    out = archive.restore(arch, row, tmp_path / "restored" / meta["experiment"] / meta["point"] / "rep1")
    assert archive.add(arch, [out], progress=lambda *_: None) == {"added": 0, "replaced": 0, "unchanged": 1}
    assert archive.entry_path(arch, meta["experiment"], meta["point"], meta["repetition"]).read_bytes() == blob
    # restored from another entry than the one the archive holds now: a run to archive
    restored = _meta(out)
    restored["restored_from_archive"]["sha256"] = "0" * 64
    (out / "run.json").write_text(json.dumps(restored))
    assert archive.add(arch, [out], progress=lambda *_: None)["replaced"] == 1


def _restored_copy(run_dir, tmp_path, **marker):
    """A run restored from a one-entry archive, its restore marker then set to `marker`."""
    src = tmp_path / "src"
    archive.add(src, [run_dir], progress=lambda *_: None)
    meta = _meta(run_dir)
    row = archive.lookup(src, meta["experiment"], meta["point"], meta["repetition"], "k" * 16)[1]
    out = archive.restore(src, row, tmp_path / "restored" / meta["experiment"] / meta["point"] / "rep1")
    restored = _meta(out)
    assert restored["restored_from_archive"] == {"archive": str(src), "sha256": row["sha256"],
                                                 "resolution": archive.policy(row)}
    restored["restored_from_archive"] = dict(restored["restored_from_archive"], **marker)
    (out / "run.json").write_text(json.dumps(restored))
    return src, out


@pytest.mark.parametrize("marker", [{"resolution": "r1"}, {"resolution": "full"},
                                    {"resolution": None, "sha256": "0" * 64}])
def test_a_copy_restored_from_an_entry_of_another_policy_is_refused(run_dir, tmp_path, marker):
    """A copy of an r1 entry lacks bytes_acked, which the present policy keeps: packed again it would
    be labelled with the present policy. add() refuses it, naming the run and the policy (unknown
    when the entry it came from is no longer held), before it writes anything, even for the runs
    given before it."""
    _, out = _restored_copy(run_dir, tmp_path, **marker)
    other = tmp_path / "other"
    with pytest.raises(archive.ArchiveError, match=r"restored from an entry .*policy (r1|full|unknown)"):
        archive.add(other, [run_dir, out], progress=lambda *_: None)
    assert archive.read_manifest(other) == {} and not (other / "runs").exists()


def test_a_copy_restored_from_a_repackable_entry_is_archived(run_dir, tmp_path):
    """A copy of an r2 entry (the marker names it, or, for a marker from before markers named a
    policy, the source manifest's row with its checksum does) is the present policy's run once packed
    again: archived."""
    src, out = _restored_copy(run_dir, tmp_path, resolution="r2")
    assert archive.add(tmp_path / "a", [out], progress=lambda *_: None)["added"] == 1
    restored = _meta(out)
    del restored["restored_from_archive"]["resolution"]
    (out / "run.json").write_text(json.dumps(restored))
    rows = archive.read_manifest(src)
    for key in rows:
        rows[key]["resolution"] = "r2: an earlier policy"
    archive._write_manifest(src, rows)
    assert archive.add(tmp_path / "b", [out], progress=lambda *_: None)["added"] == 1
    rows = archive.read_manifest(src)
    for key in rows:
        rows[key]["resolution"] = "r1: the first policy"
    archive._write_manifest(src, rows)
    with pytest.raises(archive.ArchiveError, match="policy r1"):
        archive.add(tmp_path / "c", [out], progress=lambda *_: None)


def test_changed_key_is_stale_and_missing_run_is_none(run_dir, tmp_path):
    arch = tmp_path / "a"
    archive.add(arch, [run_dir], progress=lambda *_: None)
    meta = _meta(run_dir)
    assert archive.lookup(arch, meta["experiment"], meta["point"], meta["repetition"], "other")[0] == "stale"
    assert archive.lookup(arch, meta["experiment"], "nopoint", 1, "k" * 16) == (None, None)


def test_corrupt_tarball_is_refused(run_dir, tmp_path):
    arch = tmp_path / "a"
    archive.add(arch, [run_dir], progress=lambda *_: None)
    meta = _meta(run_dir)
    path = archive.entry_path(arch, meta["experiment"], meta["point"], meta["repetition"])
    path.write_bytes(path.read_bytes()[:-10] + b"0123456789")
    _, row = archive.lookup(arch, meta["experiment"], meta["point"], meta["repetition"], "k" * 16)
    with pytest.raises(archive.ArchiveError, match="checksum"):
        archive.restore(arch, row, tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_runs_without_key_or_unfinished_are_refused(run_dir, tmp_path):
    meta = _meta(run_dir)
    del meta["run_key"]
    (run_dir / "run.json").write_text(json.dumps(meta))
    with pytest.raises(archive.ArchiveError, match="run_key"):
        archive.add(tmp_path / "a", [run_dir], progress=lambda *_: None)
    (run_dir / "run.json").unlink()
    with pytest.raises(archive.ArchiveError, match="no run.json"):
        archive.add(tmp_path / "a", [run_dir], progress=lambda *_: None)
    assert archive.complete_runs(tmp_path / "runs") == []


def test_interrupted_add_leaves_no_row_without_its_tarball(run_dir, tmp_path, monkeypatch):
    """The tarball is in place before the manifest names it: a failure while writing the
    tarball leaves the manifest as it was."""
    arch = tmp_path / "a"
    real_replace = archive.os.replace

    def failing_replace(src, dst):
        if str(dst).endswith(".tar.xz"):
            raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(archive.os, "replace", failing_replace)
    with pytest.raises(KeyboardInterrupt):
        archive.add(arch, [run_dir], progress=lambda *_: None)
    assert archive.read_manifest(arch) == {}
    monkeypatch.setattr(archive.os, "replace", real_replace)
    archive.add(arch, [run_dir], progress=lambda *_: None)
    (row,) = archive.read_manifest(arch).values()
    blob = archive.entry_path(arch, row["experiment"], row["point"], row["repetition"]).read_bytes()
    assert hashlib.sha256(blob).hexdigest() == row["sha256"]


def test_move_carries_entries_unchanged_and_refuses_before_moving(run_dir, tmp_path):
    """`archive move` (a shortened spec's control runs to the controls archive): the row and the
    tarball arrive unchanged and the source forgets them; a missing entry, a corrupt tarball or
    another tarball under the same key at the destination stops it before anything moves."""
    src, dst = tmp_path / "paper", tmp_path / "controls"
    archive.add(src, [run_dir], progress=lambda *_: None)
    meta = _meta(run_dir)
    key = (meta["experiment"], meta["point"], int(meta["repetition"]))
    row, blob = archive.read_manifest(src)[key], archive.entry_path(src, *key).read_bytes()
    with pytest.raises(archive.ArchiveError, match="holds no"):
        archive.move(src, dst, [key, (key[0], "nopoint", 1)], progress=lambda *_: None)
    assert key in archive.read_manifest(src) and not dst.exists()
    other = tmp_path / "other"
    archive.add(other, [run_dir], progress=lambda *_: None)
    rows = archive.read_manifest(other)
    rows[key]["sha256"] = "0" * 64
    archive._write_manifest(other, rows)
    with pytest.raises(archive.ArchiveError, match="holds another"):
        archive.move(src, other, [key], progress=lambda *_: None)
    assert archive.move(src, dst, [key], progress=lambda *_: None) == 1
    assert archive.read_manifest(dst)[key] == row
    assert archive.entry_path(dst, *key).read_bytes() == blob
    assert key not in archive.read_manifest(src) and not archive.entry_path(src, *key).exists()
    assert archive.lookup(dst, *key, "k" * 16)[0] == "fresh"
    archive.entry_path(dst, *key).write_bytes(b"x")
    with pytest.raises(archive.ArchiveError, match="checksum"):
        archive.move(dst, src, [key], progress=lambda *_: None)
