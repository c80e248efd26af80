"""A results archive holds what its manifest says (bbrlab/data/archive.py): restore refuses a
tarball that is not the run its row names, `archive verify` finds every tampering of an archive
(an entry forged at another path with its checksum updated, two tarballs swapped with their rows'
checksums, a flipped byte, a truncated tarball, a run key edited in run.json, rows without their
tarball, files without their row, a row given twice), and `archive add` refuses a run.json that
is not its run."""
import csv
import hashlib
import io
import json
import shutil
import tarfile

import pytest

from bbrlab import cli
from bbrlab.data import archive
from bbrlab.experiment import runkey

RUNS = [("kim2019_fig02", "base", 1), ("kim2019_fig02", "base", 2), ("tang_fig02", "rtt=10", 1)]


def as_run(run_dir, root, experiment, point, repetition):
    """The captured run as run `experiment/point/rep<repetition>` (run.json and its spec alike, the
    run key its spec's), under root."""
    dest = root / experiment / point / f"rep{repetition}"
    shutil.copytree(run_dir, dest)
    meta = json.loads((dest / "run.json").read_text())
    meta.update(experiment=experiment, point=point, repetition=repetition, seed=repetition)
    meta["spec"].update(name=experiment, point=point, repetition=repetition, seed=repetition)
    meta["run_key"] = runkey.run_key(meta["spec"])
    (dest / "run.json").write_text(json.dumps(meta, indent=1))
    return dest


@pytest.fixture
def arch(run_dir, tmp_path):
    """An archive of the three RUNS (the captured run under three names)."""
    runs = [as_run(run_dir, tmp_path / "staged", *key) for key in RUNS]
    out = tmp_path / "archive"
    assert archive.add(out, runs, progress=lambda *_: None)["added"] == 3
    return out


def rewrite_rows(arch, change):
    """The manifest with change(rows) applied to its list of row dicts (order kept)."""
    path = arch / archive.MANIFEST
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    change(rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=archive.MANIFEST_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue())


def row_of(rows, experiment, point, repetition):
    (row,) = [r for r in rows if (r["experiment"], r["point"], r["repetition"]) == (experiment, point, str(repetition))]
    return row


def set_blob(rows, key, blob):
    row_of(rows, *key).update(bytes=str(len(blob)), sha256=hashlib.sha256(blob).hexdigest())


def problems(arch):
    return archive.verify(arch)["problems"]


def test_an_untouched_archive_verifies_and_restores(arch, tmp_path, capsys):
    assert archive.verify(arch) == {"entries": 3, "problems": []}
    assert cli.main(["archive", "verify", str(arch)]) == 0
    assert "3 entries verified" in capsys.readouterr().out
    for key, row in archive.read_manifest(arch).items():
        out = archive.restore(arch, row, tmp_path / "restored" / key[0] / key[1] / f"rep{key[2]}")
        assert json.loads((out / "run.json").read_text())["point"] == key[1]


def test_a_manifest_from_before_the_build_columns_verifies(arch):
    """An archive written before the build digests were recorded (no kernel_sha256 and
    modules_sha256 columns, as data/paper-controls) verifies as read_manifest reads it; a manifest
    without a column verify needs is still refused."""
    path = arch / archive.MANIFEST
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    older = [c for c in archive.MANIFEST_COLUMNS if c not in archive.LATER_COLUMNS]

    def write(columns):
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        path.write_text(buf.getvalue())

    write(older)
    assert archive.verify(arch) == {"entries": 3, "problems": []}
    write([c for c in older if c != "sha256"])
    with pytest.raises(archive.ArchiveError, match="missing columns"):
        archive.verify(arch)


def test_an_entry_forged_at_another_path_with_its_checksum_updated_is_refused(arch, tmp_path, capsys):
    """A Tang run's tarball put at a Kim et al. entry's path, the row's size and checksum updated:
    the checksum holds, the identity does not."""
    forged = archive.entry_path(arch, *RUNS[1])
    blob = archive.entry_path(arch, *RUNS[2]).read_bytes()
    forged.write_bytes(blob)
    rewrite_rows(arch, lambda rows: set_blob(rows, RUNS[1], blob))
    found = problems(arch)
    assert len(found) == 1 and found[0].startswith(f"{forged}: holds another run than its manifest row names")
    assert "experiment: run.json has 'tang_fig02', the row 'kim2019_fig02'" in found[0]
    row = archive.read_manifest(arch)[RUNS[1]]
    dest = tmp_path / "restored" / "kim2019_fig02" / "base" / "rep2"
    with pytest.raises(archive.ArchiveError, match="holds another run than its manifest row names"):
        archive.restore(arch, row, dest)
    assert not dest.exists()
    assert cli.main(["archive", "verify", str(arch)]) == 5
    assert "1 problem(s) in 3 entries" in capsys.readouterr().err


def test_two_tarballs_swapped_with_their_rows_checksums_are_both_refused(arch):
    a, b = (archive.entry_path(arch, *k) for k in RUNS[:2])
    blob_a, blob_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(blob_b)
    b.write_bytes(blob_a)

    def swap(rows):
        set_blob(rows, RUNS[0], blob_b)
        set_blob(rows, RUNS[1], blob_a)
    rewrite_rows(arch, swap)
    found = problems(arch)
    assert [p.split(":")[0] for p in found] == [str(a), str(b)]
    assert all("repetition: run.json has" in p and "seed: run.json has" in p for p in found)


def test_a_flipped_byte_and_a_truncated_tarball_are_refused(arch):
    a, b = (archive.entry_path(arch, *k) for k in RUNS[:2])
    data = bytearray(a.read_bytes())
    data[len(data) // 2] ^= 1
    a.write_bytes(bytes(data))
    b.write_bytes(b.read_bytes()[:-100])
    found = problems(arch)
    assert found[0] == f"{a}: checksum differs from the manifest's (corrupt or replaced by hand)"
    assert found[1].startswith(f"{b}: ") and "bytes, the manifest says" in found[1]


def test_an_edited_run_key_with_checksum_and_row_updated_is_refused(arch):
    """run.json's run key edited (as if its spec had been another), the tarball re-packed and its
    row's key, size and checksum updated: the key is not the spec's."""
    path = archive.entry_path(arch, *RUNS[0])
    with tarfile.open(path, mode="r:xz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    meta = json.loads(members["run.json"])
    meta["run_key"] = "f" * 64
    members["run.json"] = json.dumps(meta).encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buf.getvalue())

    def edit(rows):
        set_blob(rows, RUNS[0], buf.getvalue())
        row_of(rows, *RUNS[0])["run_key"] = "f" * 64
    rewrite_rows(arch, edit)
    assert problems(arch) == [f"{path}: its run.json's run_key is not the key of the spec it records"]


def test_orphan_rows_orphan_files_and_repeated_rows_are_reported(arch):
    def add_rows(rows):
        rows.append(dict(rows[0], point="no_such_point"))          # a row without its tarball
        rows.append(dict(rows[1]))                                 # a row given twice
    rewrite_rows(arch, add_rows)
    stray = archive.entry_path(arch, "kim2019_fig02", "base", 9)    # a tarball without its row
    shutil.copy(archive.entry_path(arch, *RUNS[0]), stray)
    leftover = stray.with_name(".rep9.tar.xz.tmp")                # an interrupted write's temporary file
    leftover.write_bytes(b"x")
    found = problems(arch)
    missing = archive.entry_path(arch, "kim2019_fig02", "no_such_point", 1)
    assert f"{missing}: listed in the manifest but missing (an orphan row)" in found
    assert any("gives kim2019_fig02/base/2 again" in p for p in found)
    assert f"{stray}: a file under runs/ that no manifest row names (an orphan file)" in found
    assert f"{leftover}: a file under runs/ that no manifest row names (an orphan file)" in found
    assert len(found) == 4


def test_add_refuses_a_run_json_that_is_not_its_run(run_dir, tmp_path):
    misplaced = as_run(run_dir, tmp_path / "a", "kim2019_fig02", "base", 1)
    moved = tmp_path / "b" / "tang_fig02" / "base" / "rep1"
    moved.parent.mkdir(parents=True)
    misplaced.rename(moved)
    with pytest.raises(archive.ArchiveError, match="it names kim2019_fig02/base/rep1, the directory is tang_fig02/base/rep1"):
        archive.add(tmp_path / "archive", [moved], progress=lambda *_: None)
    edited = as_run(run_dir, tmp_path / "c", "kim2019_fig02", "base", 2)
    meta = json.loads((edited / "run.json").read_text())
    meta["spec"]["seed"] = 7
    (edited / "run.json").write_text(json.dumps(meta))
    with pytest.raises(archive.ArchiveError, match="its seed is '2', its spec's seed '7'"):
        archive.add(tmp_path / "archive", [edited], progress=lambda *_: None)
    assert not (tmp_path / "archive" / archive.MANIFEST).exists()


def test_an_edited_checksum_and_tarballs_swapped_without_their_rows_are_refused(arch):
    rewrite_rows(arch, lambda rows: row_of(rows, *RUNS[2]).update(sha256="0" * 64))
    a, b = (archive.entry_path(arch, *k) for k in RUNS[:2])
    blob_a, blob_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(blob_b)
    b.write_bytes(blob_a)
    found = problems(arch)
    assert len(found) == 3 and all("differs from the manifest's" in p or "bytes, the manifest says" in p for p in found)
