"""The results archive: finished runs kept in the repository.

A profile's archive (`data/<profile>/`) lets a fresh clone rebuild that profile's
figures, claims tables and report without booting a testbed, and lets long
profiles be run in batches across machines and sessions.

Layout::

    data/<profile>/manifest.csv                          one row per archived run
    data/<profile>/runs/<experiment>/<point>/rep<k>.tar.xz  run.json + tidy/*.csv

Contract:

- An entry is keyed by (experiment, point, repetition) and carries the run's keys
  (bbrlab/experiment/runkey.py, recorded in run.json): `run_key`, the hash of its resolved
  run spec, and `modules_key`, the hash of the sources of the variant modules it
  loads. A lookup with the current keys finds the entry only when both are
  equal; an entry whose keys differ is *stale* (its spec or a module it loads
  changed since it was archived): it is reported as such and rerun, never
  reused. The testbed kernel is not keyed: run.json records its release and
  the kernel's inputs, and a kernel change that alters what existing congestion
  controls see must say so and rerun the archive (kernel/patches/ are meant to
  add hooks, not to change behaviour).
- Only complete runs are archived (a run directory with run.json; failed runs,
  which have no tidy data, are not). Runs the fidelity checks judged invalid are
  archived with `valid` false: the report lists them and never averages them in.
- Writes are atomic: a run's tarball is written under a temporary name and
  renamed, then the manifest is rewritten to a temporary file and renamed. An
  interrupted `add` leaves at most an orphan temporary file, never a manifest row
  without its tarball, so a run cut off by the end of a session is lost, not
  half-archived.
- Tarballs are reproducible (sorted members, zeroed owners and times): the same
  run gives the same bytes and checksum.
- `restore` checks the checksum and that the tarball's run.json is the run its
  manifest row names (IDENTITY: experiment, point, repetition, seed, run key,
  modules key), then unpacks into a hidden directory beside the destination,
  renamed into place when complete. `add` refuses a run whose run.json does not
  name the directory it is in or whose run key is not its spec's. `verify`
  (`bbrlab archive verify`) opens every tarball and reports every entry whose
  size, checksum, members or identity differ from its row, rows without their
  tarball and files under runs/ without a row.

What is kept of a run (resolution policy RESOLUTION, named in the manifest's
`resolution` column so that a later policy can be told apart; compact()):

- run.json as it is; raw/ is dropped (the tidy data and run.json are all the
  analysis reads).
- Every tidy/<name>.csv stored as tidy/<name>.col, its column-major encoding
  (bbrlab/data/columnar.py; goodput_mbps coded against bytes / interval_s, RATES):
  every kept value exactly, no rounding, no thinning of rows; restore() writes the
  CSV back, byte for byte the original without the dropped columns.
- Dropped: the columns of DROPPED, which no analysis code reads (analysis/, claims/,
  paper/: grep), e.g. tcp.csv's pacing_rate_mbps and bbr_bw_mbps; an archived run
  restores without them (the R readers take the columns they name, so they read
  it unchanged). Adding a column to an analysis means removing it from DROPPED
  and a new policy version (the archived runs then lack it: rerun them).
- Dropped for one paper's experiments only (EXPERIMENT_DROPPED): columns other
  papers read but no analysis of that paper's runs does (its figure scripts, the
  metrics its claims and figures call, the transfer-length evidence). An analysis
  of that paper that starts reading one means the same as above.
- repack() brings entries of an earlier policy that kept everything the present
  one keeps to the present one, checking that each file is the old one without the
  newly dropped columns (`bbrlab archive repack`).
- A file the codec cannot keep exactly (quoted cells, ragged rows: not the tidy
  writers' output) is stored as it is, with all its columns.

Evidence that this policy changes no claim or figure, and its size per
experiment-second: bench/results/archive-resolution-2026-11-26.md (r2), and
bench/results/long-run-resolution-2026-11-26.md (the columns r3 drops of Utsumi
& Hasegawa's runs: every claim and transfer-length value identical; their 32 entries
repacked from r2, claims, figures and transfer-length tables byte-identical:
bench/results/repack-identity-2026-11-26.md). Tarballs
written before it (resolution "full": tidy/*.csv members) still restore.
"""
import csv
import hashlib
import io
import json
import os
import pathlib
import shutil
import lzma
import tarfile
import time

from . import columnar

MANIFEST = "manifest.csv"
MANIFEST_COLUMNS = ["experiment", "point", "repetition", "seed", "run_key", "modules_key", "profile", "status", "valid",
                    "failed_checks", "git_revision", "host", "wall_s", "host_cpu_s", "experiment_s",
                    "resolution", "archived_at", "bytes", "sha256", "kernel_sha256", "modules_sha256"]
# Columns added after archives were written: a manifest without them reads them as "" (not recorded).
LATER_COLUMNS = ("kernel_sha256", "modules_sha256")
RESOLUTION = ("r3: tidy CSVs column-major, delta- and rate-coded, every kept value exact, no rows thinned; "
              "dropped tcp.csv rttvar_ms min_rtt_ms pacing_rate_mbps bbr_bw_mbps bbr_cwnd_gain "
              "variant_flag bbr_inflight_hi_pkts, queue.csv backlog_bytes sent_pkts drops; "
              "of utsumi2022_* also tcp.csv inflight_pkts delivery_rate_mbps bytes_acked bbr_min_rtt_ms "
              "bbr_pacing_gain, queue.csv backlog_pkts qdelay_ms")
# The policies before it, as the manifest's resolution column names them: r2 (2026-11-26) kept
# tcp.csv's bbr_inflight_hi_pkts and every column of Utsumi & Hasegawa's runs that r3 drops for
# them; r1 (the first paper-profile batches) dropped tcp.csv's bytes_acked as well, which the
# successors part's shallow-buffer figure reads since, and r1 entries are of experiments that do
# not (tests/test_archive_resolution.py checks both). repack() brings r2 entries to r3.
R1_ALSO_DROPPED = {"tcp.csv": ("bytes_acked",)}
REPACKABLE = ("r2", "r3")
# Columns of the tidy files that no analysis code reads, left out of the archive (see the
# module doc; RESOLUTION names them, and must change with them).
DROPPED = {
    "tcp.csv": ("rttvar_ms", "min_rtt_ms", "pacing_rate_mbps", "bbr_bw_mbps", "bbr_cwnd_gain", "variant_flag",
                "bbr_inflight_hi_pkts"),
    "queue.csv": ("backlog_bytes", "sent_pkts", "drops"),
}
# Columns that other papers' analyses read but no analysis of one paper's experiments does (its
# figure scripts, the metrics its claims and figures call, the transfer-length evidence), left
# out of that paper's runs only; keyed by the experiments' name prefix. Utsumi & Hasegawa's 6000-s
# transfers are the archive's longest runs: dropping these halves them (bench/results/
# long-run-resolution-2026-11-26.md, candidate L: every claim and transfer-length value identical).
EXPERIMENT_DROPPED = {
    "utsumi2022_": {
        "tcp.csv": ("inflight_pkts", "delivery_rate_mbps", "bytes_acked", "bbr_min_rtt_ms", "bbr_pacing_gain"),
        "queue.csv": ("backlog_pkts", "qdelay_ms"),
    },
}
# Rate columns coded against the byte and seconds columns they are computed from (exact).
RATES = {"goodput.csv": {"goodput_mbps": ("bytes", "interval_s")}}
ENCODED = ".col"


class ArchiveError(RuntimeError):
    """The archive or a run handed to it is unusable; the message names the file."""


# What names an archived run, in its run.json and its manifest row alike: restore() and verify()
# check that the tarball at an entry's path holds the run its row names.
IDENTITY = ("experiment", "point", "repetition", "seed", "run_key", "modules_key")


def _cell(value) -> str:
    """A run.json or manifest value as the manifest writes it (None as "")."""
    return "" if value is None else str(value)


def identity_problems(meta: dict, row: dict) -> list:
    """["field: run.json has A, the row B", ...] for each IDENTITY field in which a run.json
    (`meta`) and a manifest row differ; [] when the run is the row's."""
    return [f"{k}: run.json has {_cell(meta.get(k))!r}, the row {_cell(row.get(k))!r}"
            for k in IDENTITY if _cell(meta.get(k)) != _cell(row.get(k))]


def _run_json(blob: bytes, src) -> dict:
    """The run.json of an entry's tarball; ArchiveError naming `src` when it has none or it is
    not JSON."""
    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:xz") as tar:
            member = tar.extractfile("run.json")
            return json.loads(member.read())
    except (KeyError, AttributeError, tarfile.TarError, lzma.LZMAError, EOFError, ValueError) as err:
        raise ArchiveError(f"{src}: no readable run.json ({err})") from None


def check_identity(blob: bytes, row: dict, src) -> dict:
    """The run.json of an entry's tarball when it is the run its manifest row names (IDENTITY);
    ArchiveError naming the entry and each field that differs otherwise (a tarball put at another
    entry's path, or rows swapped)."""
    meta = _run_json(blob, src)
    problems = identity_problems(meta, row)
    if problems:
        raise ArchiveError(f"{src}: holds another run than its manifest row names ({'; '.join(problems)})")
    return meta


def entry_path(archive, experiment, point, repetition) -> pathlib.Path:
    """Where an archived run's tarball lives."""
    return pathlib.Path(archive) / "runs" / experiment / point / f"rep{int(repetition)}.tar.xz"


def read_manifest(archive) -> dict:
    """{(experiment, point, repetition): row} of an archive; empty when it has none yet."""
    path = pathlib.Path(archive) / MANIFEST
    if not path.is_file():
        return {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    missing = set(MANIFEST_COLUMNS) - set(LATER_COLUMNS) - set(rows[0]) if rows else set()
    if missing:
        raise ArchiveError(f"{path}: missing columns {sorted(missing)}")
    for r in rows:
        for column in LATER_COLUMNS:
            r.setdefault(column, "")
    return {(r["experiment"], r["point"], int(r["repetition"])): r for r in rows}


def _write_manifest(archive, rows: dict) -> None:
    path = pathlib.Path(archive) / MANIFEST
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=MANIFEST_COLUMNS, lineterminator="\n")
    w.writeheader()
    for key in sorted(rows):
        w.writerow(rows[key])
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(buf.getvalue())
    os.replace(tmp, path)


def _members(run_dir: pathlib.Path) -> list:
    """(archive name, path) of what is kept of a run, sorted."""
    out = [("run.json", run_dir / "run.json")]
    tidy = run_dir / "tidy"
    if tidy.is_dir():
        out += [(f"tidy/{p.name}", p) for p in sorted(tidy.iterdir()) if p.is_file() and p.suffix == ".csv"]
    return out


def dropped_columns(experiment: str) -> dict:
    """{tidy file name: columns} that RESOLUTION leaves out of a run of this experiment:
    DROPPED, and EXPERIMENT_DROPPED for the experiment's paper."""
    out = {name: list(cols) for name, cols in DROPPED.items()}
    for prefix, extra in EXPERIMENT_DROPPED.items():
        if experiment.startswith(prefix):
            for name, cols in extra.items():
                out.setdefault(name, []).extend(c for c in cols if c not in out.get(name, []))
    return {name: tuple(cols) for name, cols in out.items()}


def kept(text: str, file_name: str, experiment: str) -> str:
    """A tidy CSV's text as the present policy keeps it for a run of `experiment`: without the
    columns dropped_columns() names (those it has), every other byte as it is."""
    header = text.splitlines()[0].split(",") if text else []
    return columnar.without_columns(text, [c for c in dropped_columns(experiment).get(file_name, ()) if c in header])


def compact(run_dir) -> dict:
    """{archive member name: bytes} of what RESOLUTION keeps of a run (module doc):
    run.json as it is, each tidy/<name>.csv as tidy/<name>.col (columnar encoding
    without the columns dropped_columns() names for the run's experiment), or as
    tidy/<name>.csv when the codec cannot keep it."""
    out = {}
    run_dir = pathlib.Path(run_dir)
    dropped = dropped_columns(json.loads((run_dir / "run.json").read_text()).get("experiment") or "")
    for name, path in _members(run_dir):
        data = path.read_bytes()
        if name.startswith("tidy/"):
            base = name[len("tidy/"):]
            text = data.decode()
            try:
                present = set(text.splitlines()[0].split(",")) if text else set()
                drop = [c for c in dropped.get(base, ()) if c in present]
                out[f"tidy/{base[:-len('.csv')]}{ENCODED}"] = columnar.encode(text, drop, RATES.get(base)).encode()
                continue
            except columnar.ColumnarError:
                pass                                            # kept as it is
        out[name] = data
    return out


def pack(run_dir) -> bytes:
    """A run's compact() members as a reproducible xz tarball."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz", preset=9 | lzma.PRESET_EXTREME, format=tarfile.PAX_FORMAT) as tar:
        for name, data in sorted(compact(run_dir).items()):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _row(meta: dict, blob: bytes) -> dict:
    fid = meta.get("fidelity") or {}
    timings = meta.get("timings") or {}
    return {
        "experiment": meta["experiment"], "point": meta["point"], "repetition": int(meta["repetition"]),
        "seed": meta.get("seed"), "run_key": meta.get("run_key") or "",
        "modules_key": meta.get("modules_key") or "", "profile": meta.get("profile") or "",
        "status": meta.get("status"), "valid": str(bool(fid.get("valid"))).lower(),
        "failed_checks": "; ".join(f"{c['name']} {c['subject']}" for c in fid.get("checks", []) if not c.get("ok")),
        "git_revision": meta.get("git_revision") or "", "host": (meta.get("testbed") or {}).get("host") or "",
        "wall_s": timings.get("wall_s", ""), "host_cpu_s": timings.get("host_cpu_s", ""),
        "experiment_s": timings.get("experiment_s", ""), "resolution": RESOLUTION,
        "archived_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest(),
        **build_digests(meta),
    }


def build_digests(meta: dict) -> dict:
    """The kernel and module builds a run came from, as its run.json records them: the kernel's
    sha256 and "name=sha256" of each module it loaded, joined by ";" ("" where not recorded)."""
    testbed = meta.get("testbed") or {}
    return {"kernel_sha256": testbed.get("kernel_sha256") or "",
            "modules_sha256": ";".join(f"{m['name']}={m.get('sha256', '')}" for m in testbed.get("modules") or [])}


def complete_runs(runs_root) -> list:
    """Run directories under a results tree that hold a finished run (run.json, status ok)."""
    out = []
    for meta_path in sorted(pathlib.Path(runs_root).glob("*/*/rep*/run.json")):
        run_dir = meta_path.parent
        if run_dir.name.endswith(".failed") or run_dir.name.startswith("."):
            continue
        meta = json.loads(meta_path.read_text())
        if meta.get("status") == "ok":
            out.append(run_dir)
    return out


def _write_entry(archive, key, blob: bytes) -> None:
    """An entry's tarball, written under a temporary name and renamed into place."""
    dest = entry_path(archive, *key)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    tmp.write_bytes(blob)
    os.replace(tmp, dest)


def _source_policy(source: dict):
    """The policy of the entry a run was restored from (its run.json's restored_from_archive):
    recorded there by restore(), else (runs restored before it recorded one) the policy of the row
    with that checksum in the source archive's manifest; None when neither says."""
    if source.get("resolution"):
        return source["resolution"]
    if not source.get("archive"):
        return None
    try:
        rows = read_manifest(source["archive"])
    except (OSError, ArchiveError, KeyError, ValueError):
        return None
    for row in rows.values():
        if row["sha256"] == source.get("sha256"):
            return policy(row)
    return None


def run_mismatch(run_dir: pathlib.Path, meta: dict) -> str:
    """"" when a run's run.json (`meta`) names the run directory it is in
    (<experiment>/<point>/rep<k>) and its resolved spec (name, point, repetition, seed, those it
    records) names the same run; else what differs."""
    where = (run_dir.parents[1].name, run_dir.parent.name, run_dir.name)
    named = (_cell(meta.get("experiment")), _cell(meta.get("point")), f"rep{_cell(meta.get('repetition'))}")
    if where != named:
        return f"it names {'/'.join(named)}, the directory is {'/'.join(where)}"
    job = meta.get("spec") if isinstance(meta.get("spec"), dict) else {}
    for field, in_spec in (("experiment", "name"), ("point", "point"), ("repetition", "repetition"), ("seed", "seed")):
        if in_spec in job and _cell(job[in_spec]) != _cell(meta.get(field)):
            return f"its {field} is {_cell(meta.get(field))!r}, its spec's {in_spec} {_cell(job[in_spec])!r}"
    return ""


def _to_archive(run_dir: pathlib.Path, rows: dict):
    """(key, meta, held) of a run add() is given, held True when it was restored from the entry
    `rows` holds for it; ArchiveError naming the run when it cannot be archived: not finished, no
    run key, or a copy restored from another entry packed under a policy the present one cannot
    re-pack (r1, "full", or unknown: its tidy files may lack columns RESOLUTION keeps, and packing
    it again would label it with RESOLUTION all the same)."""
    meta_path = run_dir / "run.json"
    if not meta_path.is_file():
        raise ArchiveError(f"{run_dir}: not a finished run (no run.json)")
    meta = json.loads(meta_path.read_text())
    if meta.get("status") != "ok":
        raise ArchiveError(f"{run_dir}: status {meta.get('status')!r}: only finished runs are archived")
    if not meta.get("run_key"):
        raise ArchiveError(f"{run_dir}: run.json has no run_key (a run from before run keys): rerun it")
    mismatch = run_mismatch(run_dir, meta)
    if mismatch:
        raise ArchiveError(f"{run_dir}: run.json is not this run ({mismatch}): not archived")
    key = (meta["experiment"], meta["point"], int(meta["repetition"]))
    old = rows.get(key)
    source = meta.get("restored_from_archive")
    if old and source and old["run_key"] == meta["run_key"] and old["sha256"] == source.get("sha256"):
        return key, meta, True
    if source:
        was = _source_policy(source)
        if was not in REPACKABLE:
            raise ArchiveError(
                f"{run_dir}: restored from an entry of {source.get('archive')} packed under policy "
                f"{was or 'unknown (that entry is no longer held)'}, which lacks columns the present one "
                f"keeps; packing it again would label it {policy({'resolution': RESOLUTION})}: move the "
                "entry itself (bbrlab archive move) or rerun the run")
    return key, meta, False


def add(archive, run_dirs, progress=print) -> dict:
    """Archive finished runs (replacing an entry of the same run); returns counts added/unchanged/replaced.
    A run restored from the entry the archive still holds for it is that entry: unchanged, not
    packed again (its run.json says where it was restored from, which would make another blob).
    A copy restored from another entry is packed again only when that entry's policy is one the
    present one re-packs without loss (REPACKABLE). Every run is checked before any is written
    (ArchiveError naming the first that cannot be archived)."""
    archive = pathlib.Path(archive)
    archive.mkdir(parents=True, exist_ok=True)
    rows = read_manifest(archive)
    counts = {"added": 0, "replaced": 0, "unchanged": 0}
    checked = [(pathlib.Path(d), *_to_archive(pathlib.Path(d), rows)) for d in run_dirs]
    for run_dir, key, meta, held in checked:
        old = rows.get(key)
        if held:
            counts["unchanged"] += 1        # restored from the entry held: not packed (xz) again
            continue
        blob = pack(run_dir)
        row = _row(meta, blob)
        if old and old["run_key"] == row["run_key"] and old["sha256"] == row["sha256"]:
            counts["unchanged"] += 1
            continue
        _write_entry(archive, key, blob)
        rows[key] = row
        _write_manifest(archive, rows)      # after each run: an interruption loses at most the run in hand
        counts["replaced" if old else "added"] += 1
        progress(f"archive: {'replaced' if old else 'added'} {key[0]}/{key[1]}/rep{key[2]} ({len(blob) / 1024:.0f} KiB)")
    return counts


def move(src, dst, keys, progress=print) -> int:
    """Move entries ((experiment, point, repetition) keys) from archive `src` to archive `dst`,
    rows and tarballs unchanged (checksums checked first): e.g. a shortened spec's full-length
    control runs to the controls archive (bbrlab/experiment/controls.py). ArchiveError, before
    anything moves, when `src` lacks a key or `dst` holds it with another tarball. The
    destination is written before the source forgets the entry, so an interruption leaves an
    entry in both archives, never in neither. Returns how many moved."""
    src, dst = pathlib.Path(src), pathlib.Path(dst)
    if src.resolve() == dst.resolve():
        raise ArchiveError(f"{src}: moving entries to the same archive")
    rows, out = read_manifest(src), read_manifest(dst)
    blobs = {}
    for key in keys:
        key = (key[0], key[1], int(key[2]))
        name = f"{key[0]}/{key[1]}/rep{key[2]}"
        if key not in rows:
            raise ArchiveError(f"{src}: holds no {name}")
        blob = entry_path(src, *key).read_bytes()
        if hashlib.sha256(blob).hexdigest() != rows[key]["sha256"]:
            raise ArchiveError(f"{entry_path(src, *key)}: checksum differs from the manifest's")
        if key in out and out[key]["sha256"] != rows[key]["sha256"]:
            raise ArchiveError(f"{dst}: holds another {name} already")
        blobs[key] = blob
    dst.mkdir(parents=True, exist_ok=True)
    for key, blob in blobs.items():
        _write_entry(dst, key, blob)
        out[key] = rows[key]
    _write_manifest(dst, out)
    for key in blobs:
        del rows[key]
    _write_manifest(src, rows)
    for key in blobs:
        entry_path(src, *key).unlink()
        progress(f"archive: moved {key[0]}/{key[1]}/rep{key[2]} from {src} to {dst}")
    return len(blobs)


def lookup(archive, experiment, point, repetition, run_key, modules_key=""):
    """("fresh", row) when the archive holds this run with these keys, ("stale", row) when it
    holds it with other keys, (None, None) when it does not hold it."""
    row = read_manifest(archive).get((experiment, point, int(repetition)))
    if row is None:
        return None, None
    return ("fresh" if current(row, run_key, modules_key) else "stale"), row


def current(row: dict, run_key: str, modules_key: str = "") -> bool:
    """Whether a manifest row holds the run with these keys (else it is stale)."""
    return row["run_key"] == run_key and row["modules_key"] == (modules_key or "")


def held_row(rows: dict, job: dict, module_keys: dict):
    """The row of manifest `rows` holding a resolved run with this checkout's keys, else None (not
    held, or stale). `module_keys` caches modules_key per set of variant modules the run loads
    (hashing their sources is the costly part of a lookup); pass the same dict for many runs."""
    from ..experiment import runkey, variants
    row = rows.get((job["name"], job["point"], int(job["repetition"])))
    if row is None:
        return None
    names = tuple(variants.used_by([job]))
    if names not in module_keys:
        module_keys[names] = runkey.modules_key(job)
    return row if current(row, runkey.run_key(job), module_keys[names]) else None


def other_build(row: dict, kernel_sha256, module_sha256: dict) -> str:
    """Why an archived run came from another testbed build than the given one ("" when it came
    from the same): its kernel's digest differs or was not recorded, or one of its modules' does
    (module_sha256: {name: digest of this checkout's build}; a module not built here is not judged).
    kernel_sha256 None: no kernel built here, nothing judged."""
    reasons = []
    if kernel_sha256 is not None:
        if not row.get("kernel_sha256"):
            reasons.append("kernel build not recorded")
        elif row["kernel_sha256"] != kernel_sha256:
            reasons.append(f"kernel {row['kernel_sha256'][:12]} (here {kernel_sha256[:12]})")
    for item in filter(None, (row.get("modules_sha256") or "").split(";")):
        name, _, digest = item.partition("=")
        if name in module_sha256 and digest != module_sha256[name]:
            reasons.append(f"{name}.ko {digest[:12]} (here {module_sha256[name][:12]})")
    return "; ".join(reasons)


def lookup_job(archive, job: dict):
    """lookup() for a resolved run spec, with its keys computed from this checkout."""
    from ..experiment import runkey
    return lookup(archive, job["name"], job["point"], job["repetition"], runkey.run_key(job), runkey.modules_key(job))


def _unpack(archive, row: dict, dest: pathlib.Path) -> None:
    """An entry's members into the new directory `dest` as archived (run.json unchanged), after
    checking the tarball's checksum; encoded tidy members decoded to their CSVs."""
    src = entry_path(archive, row["experiment"], row["point"], row["repetition"])
    if not src.is_file():
        raise ArchiveError(f"{src}: listed in {pathlib.Path(archive) / MANIFEST} but missing")
    blob = src.read_bytes()
    if hashlib.sha256(blob).hexdigest() != row["sha256"]:
        raise ArchiveError(f"{src}: checksum differs from the manifest's (corrupt or replaced by hand)")
    check_identity(blob, row, src)
    _extract(blob, dest, src)


def _member_name(member, src) -> pathlib.PurePosixPath:
    """A tarball member's name, when it is one an entry may hold (run.json, tidy/*, plain files);
    ArchiveError naming `src` otherwise."""
    name = pathlib.PurePosixPath(member.name)
    if not member.isfile() or name.is_absolute() or ".." in name.parts or \
            not (member.name == "run.json" or member.name.startswith("tidy/")):
        raise ArchiveError(f"{src}: unexpected member {member.name!r}")
    return name


def _extract(blob: bytes, dest: pathlib.Path, src) -> None:
    """A tarball's members (run.json, tidy/*) into the new directory `dest`, encoded tidy members
    decoded to their CSVs; ArchiveError (naming `src`) for any other member."""
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:xz") as tar:
        for member in tar.getmembers():
            name = _member_name(member, src)
            data = tar.extractfile(member).read()
            if name.suffix == ENCODED and name.parent.name == "tidy":
                name, data = name.with_suffix(".csv"), columnar.decode(data.decode()).encode()
            out = dest / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)


def restore(archive, row: dict, dest) -> pathlib.Path:
    """Unpack an archived run into directory `dest` (replacing it), after checking its checksum:
    run.json and plain tidy/*.csv (encoded members decoded, so R reads them unchanged)."""
    dest = pathlib.Path(dest)
    tmp = dest.with_name(f".{dest.name}.restore")
    if tmp.exists():
        shutil.rmtree(tmp)
    _unpack(archive, row, tmp)
    meta = json.loads((tmp / "run.json").read_text())
    meta["restored_from_archive"] = {"archive": str(archive), "sha256": row["sha256"], "resolution": policy(row)}
    (tmp / "run.json").write_text(json.dumps(meta, indent=1, default=str))
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return dest


def policy(row: dict) -> str:
    """The resolution policy an entry was packed under ("r1", "r2", "r3", "full")."""
    return row["resolution"].split(":")[0] or "full"


def repack(archive, experiments=None, progress=print) -> dict:
    """Bring the entries of an archive (those of `experiments` only, when given) to the present
    RESOLUTION: each entry packed under an earlier policy that kept every column the present one
    keeps (REPACKABLE) is unpacked and packed again; its row keeps its keys, timings, fidelity and
    date, with the new resolution, size and checksum. Checked before it replaces anything: every
    tidy file of the new tarball is the old one without the columns the present policy drops
    (ArchiveError otherwise). Entries of other policies (r1, "full": they lack columns the present
    one keeps) are left as they are. Atomic per entry, as add(). Returns counts
    repacked/unchanged/kept."""
    import tempfile
    archive = pathlib.Path(archive)
    rows = read_manifest(archive)
    tag = policy({"resolution": RESOLUTION})
    counts = {"repacked": 0, "unchanged": 0, "kept": 0}
    for key in sorted(rows):
        row = rows[key]
        if experiments and key[0] not in experiments:
            continue
        if policy(row) == tag:
            counts["unchanged"] += 1
            continue
        if policy(row) not in REPACKABLE:
            counts["kept"] += 1
            continue
        with tempfile.TemporaryDirectory(prefix=".repack-", dir=archive) as tmp:
            old, new = pathlib.Path(tmp) / "old", pathlib.Path(tmp) / "new"
            _unpack(archive, row, old)
            blob = pack(old)
            _extract(blob, new, entry_path(archive, *key))
            for csv_path in sorted((old / "tidy").glob("*.csv")):
                want = kept(csv_path.read_bytes().decode(), csv_path.name, key[0])
                if (new / "tidy" / csv_path.name).read_bytes().decode() != want:
                    raise ArchiveError(f"{entry_path(archive, *key)}: repacked {csv_path.name} is not the "
                                       "archived one without the dropped columns")
            if (new / "run.json").read_bytes() != (old / "run.json").read_bytes():
                raise ArchiveError(f"{entry_path(archive, *key)}: repacked run.json differs")
        _write_entry(archive, key, blob)
        rows[key] = dict(row, resolution=RESOLUTION, bytes=len(blob), sha256=hashlib.sha256(blob).hexdigest())
        _write_manifest(archive, rows)
        counts["repacked"] += 1
        progress(f"archive: repacked {key[0]}/{key[1]}/rep{key[2]} ({int(row['bytes']) / 1024:.0f} -> "
                 f"{len(blob) / 1024:.0f} KiB)")
    return counts


def _entry_problems(archive: pathlib.Path, row: dict) -> list:
    """What is wrong with one manifest row's entry ([] when nothing): its tarball missing, of
    another size or checksum, not a readable xz tarball of run.json and tidy members that decode,
    its run.json not the run the row names (IDENTITY) or its run key not its spec's, or its status
    and validity not the row's."""
    from ..experiment import runkey
    src = entry_path(archive, row["experiment"], row["point"], row["repetition"])
    if not src.is_file():
        return [f"{src}: listed in the manifest but missing (an orphan row)"]
    blob = src.read_bytes()
    if str(len(blob)) != str(row["bytes"]):
        return [f"{src}: {len(blob)} bytes, the manifest says {row['bytes']}"]
    if hashlib.sha256(blob).hexdigest() != row["sha256"]:
        return [f"{src}: checksum differs from the manifest's (corrupt or replaced by hand)"]
    try:
        meta = None
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:xz") as tar:
            for member in tar.getmembers():
                name = _member_name(member, src)
                data = tar.extractfile(member).read()
                if member.name == "run.json":
                    meta = json.loads(data)
                elif name.suffix == ENCODED:
                    columnar.decode(data.decode())
    except ArchiveError as err:
        return [str(err)]
    except (tarfile.TarError, lzma.LZMAError, EOFError, ValueError, columnar.ColumnarError) as err:
        return [f"{src}: unreadable ({type(err).__name__}: {err})"]
    if meta is None:
        return [f"{src}: has no run.json"]
    problems = identity_problems(meta, row)
    if problems:
        return [f"{src}: holds another run than its manifest row names ({'; '.join(problems)})"]
    out = []
    if not isinstance(meta.get("spec"), dict) or runkey.run_key(meta["spec"]) != meta.get("run_key"):
        out.append(f"{src}: its run.json's run_key is not the key of the spec it records")
    fid = meta.get("fidelity") or {}
    if _cell(meta.get("status")) != row["status"] or str(bool(fid.get("valid"))).lower() != row["valid"]:
        out.append(f"{src}: status {meta.get('status')!r} valid {bool(fid.get('valid'))} in run.json, "
                   f"{row['status']!r} {row['valid']} in the manifest")
    return out


def verify(archive, progress=None) -> dict:
    """Check a whole archive: every manifest row's entry (_entry_problems: size, checksum, every
    member read and decoded, identity, run key), rows given twice, and every file under runs/
    that no row names (an orphan file: a tarball without its row, a leftover temporary file).
    Returns {"entries": rows checked, "problems": [message naming the file, ...]}; nothing is
    written. `progress(k, n)`, when given, is called after each entry."""
    archive = pathlib.Path(archive)
    path = archive / MANIFEST
    if not path.is_file():
        raise ArchiveError(f"{path}: no manifest (not an archive)")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    missing = set(MANIFEST_COLUMNS) - set(LATER_COLUMNS) - set(rows[0]) if rows else set()
    if missing:
        raise ArchiveError(f"{path}: missing columns {sorted(missing)}")
    problems, seen = [], set()
    for k, row in enumerate(rows, 1):
        key = (row["experiment"], row["point"], row["repetition"])
        if key in seen:
            problems.append(f"{path}: row {k + 1} gives {'/'.join(key)} again")
        seen.add(key)
        if not row["repetition"].isdigit():
            problems.append(f"{path}: row {k + 1}: repetition {row['repetition']!r} is not a number")
            continue
        problems += _entry_problems(archive, row)
        if progress:
            progress(k, len(rows))
    expected = {entry_path(archive, r["experiment"], r["point"], r["repetition"])
                for r in rows if r["repetition"].isdigit()}
    runs = archive / "runs"
    if runs.is_dir():
        for found in sorted(p for p in runs.rglob("*") if p.is_file() or p.is_symlink()):
            if found not in expected:
                problems.append(f"{found}: a file under runs/ that no manifest row names (an orphan file)")
    return {"entries": len(rows), "problems": problems}
