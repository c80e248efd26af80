"""Unpack archived runs for the reference evaluation (rules reference_run, transfer_length_runs).

params.groups: [{"root": dir, "stamp": path, "clear": bool, "entries": [[archive, experiment,
point, repetition, sha256], ...]}, ...]. Each entry is unpacked below root/<experiment>/<point>/
rep<k> (bbrlab/data/archive.py restore(): checksum checked, encoded tables decoded); with clear,
root is emptied first. The stamp (written to a temporary file, then renamed) lists each run and
its checksum; an entry whose checksum is no longer the one the plan was made with stops the job.
The log gets one line per group: how many runs from where.

A `script:` job, not a `run:` block: Snakemake runs a `run:` block in a new Snakemake process
that parses the whole workflow again, which cost more than the unpacking itself.
"""
import pathlib
import shutil
import sys

sys.path.insert(0, "mininet")
from bbrlab.data import archive  # noqa: E402

_manifests = {}


def _row(where, experiment, point, repetition, sha256):
    if where not in _manifests:
        _manifests[where] = archive.read_manifest(where)
    row = _manifests[where].get((experiment, point, int(repetition)))
    if row is None or row["sha256"] != sha256:
        raise SystemExit(f"{where}: the entry of {experiment}/{point}/rep{repetition} is not the one the"
                         " plan was made with (the archive changed meanwhile); run the pipeline again")
    return row


log = []
for group in snakemake.params.groups:  # noqa: F821 (set by Snakemake)
    root = pathlib.Path(group["root"])
    if group.get("clear"):
        shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for where, experiment, point, repetition, sha256 in group["entries"]:
        archive.restore(where, _row(where, experiment, point, repetition, sha256),
                        root / experiment / point / f"rep{repetition}")
        lines.append(f"{experiment}/{point}/rep{repetition} {sha256}\n")
    stamp = pathlib.Path(group["stamp"])
    tmp = stamp.with_suffix(".tmp")
    tmp.write_text("".join(lines))
    tmp.replace(stamp)
    sources = sorted({e[0] for e in group["entries"]})
    log.append(f"restored {len(lines)} runs from {', '.join(sources) or 'no archive'}\n")
pathlib.Path(snakemake.log[0]).write_text("".join(log))  # noqa: F821
