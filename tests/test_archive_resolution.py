"""The results archive's resolution policy (bbrlab/data/archive.py RESOLUTION, compact(); the codec
bbrlab/data/columnar.py): lossless for every kept value, and on a real captured run
(tests/fixtures/run_fig1short.tar.xz) every R metric the claims use is the same on the run
restored from the archive as on the original; a coarser column makes that check fail."""
import json
import pathlib
import shutil
import subprocess
import tarfile

import pytest

from bbrlab.data import archive, columnar

REPO = pathlib.Path(__file__).resolve().parents[1]

needs_r = pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R (Rscript)")


@pytest.mark.parametrize("eol", ["\r\n", "\n"])
def test_codec_gives_back_every_byte(eol):
    rows = ["flow,t_s,cc,state,rtt_ms,gain,counter,odd,empty",
            "1,-1.0,bbr,startup,10.04,2.88671875,0,1e-05,",
            "1,0.1001,bbr,,10.0,0.75,123456789012345,nan,",
            "2,0.2,cubic,,9.999,1.0,-3,-0.0,",
            "2,10.25,cubic,probe_bw,1234.5,1.25,007,x,"]
    text = eol.join(rows) + eol
    blob = columnar.encode(text)
    assert columnar.decode(blob) == text
    dropped = columnar.encode(text, drop=("gain", "odd"))
    assert columnar.decode(dropped) == eol.join(
        ",".join(c for i, c in enumerate(r.split(",")) if i not in (5, 7)) for r in rows) + eol
    assert columnar.decode(columnar.encode("a,b" + eol)) == "a,b" + eol          # header only


@pytest.mark.parametrize("rows, coded", [
    (["1,0.1001,0.099999,182000,14.560118", "1,0.2001,0.1,234000,18.720018", "2,0.3,0.100001,0,0.0",
      "2,0.4,0.1,1,8.0e-05"], False),                   # 8.0e-05: not repr(round(x, 6)), kept verbatim
    (["1,0.1001,0.099999,182000,14.560118", "1,0.2001,0.1,234000,18.720018", "2,0.3,0.100001,0,0.0",
      "2,0.4,0.1,,"], True),
    (["1,0.1,0.0,5,1.5", "1,0.2,0.1,5,0.0004"], False),  # a zero-length bin: no rate to code against
])
def test_rate_column_coded_against_bytes_and_seconds(rows, coded):
    text = "\r\n".join(["flow,t_s,interval_s,bytes,goodput_mbps"] + rows) + "\r\n"
    blob = columnar.encode(text, rates={"goodput_mbps": ("bytes", "interval_s")})
    assert columnar.decode(blob) == text
    assert ("\nR6 bytes interval_s\n" in blob) == coded


@pytest.mark.parametrize("text, why", [('a,b\r\n"1,2",3\r\n', "quoted"), ("a,b\n1\n", "ragged"),
                                       ("a,b\r\n1,2\n", "line end"), ("a,b\n1,2", "line end")])
def test_codec_refuses_what_it_cannot_keep(text, why):
    with pytest.raises(columnar.ColumnarError, match=why):
        columnar.encode(text)
    with pytest.raises(columnar.ColumnarError, match="no column"):
        columnar.encode("a,b\n1,2\n", drop=("c",))



def archived_and_restored(run_dir, tmp_path) -> pathlib.Path:
    arch = tmp_path / "archive"
    archive.add(arch, [run_dir], progress=lambda *_: None)
    (row,) = archive.read_manifest(arch).values()
    assert row["resolution"] == archive.RESOLUTION and row["resolution"].startswith("r3: ")
    return archive.restore(arch, row, tmp_path / "restored" / "rep1")


def test_restored_files_are_the_originals_without_the_dropped_columns(run_dir, tmp_path):
    out = archived_and_restored(run_dir, tmp_path)
    names = sorted(p.name for p in (run_dir / "tidy").glob("*.csv"))
    assert names == sorted(p.name for p in (out / "tidy").glob("*.csv")) and "tcp.csv" in names
    for name in names:
        original = (run_dir / "tidy" / name).read_bytes().decode()
        header = original.splitlines()[0].split(",")
        dropped = [c for c in archive.dropped_columns(run_dir.parts[-3]).get(name, ()) if c in header]
        assert (out / "tidy" / name).read_bytes().decode() == columnar.without_columns(original, dropped)
    goodput = archive.compact(run_dir)["tidy/goodput.col"].decode()
    assert "\nR6 bytes interval_s\n" in goodput                 # goodput_mbps rate-coded
    assert "bbr_bw_mbps" not in (out / "tidy" / "tcp.csv").read_text().splitlines()[0]
    with tarfile.open(archive.entry_path(tmp_path / "archive", *(run_dir.parts[-3:-1]), 1)) as tar:
        assert sorted(tar.getnames()) == ["run.json", "tidy/goodput.col", "tidy/queue.col", "tidy/tcp.col"]


# Every metric of analysis/lib that a claim can name and this two-BBR-flow run can give a
# number for, over the steady state and over the whole run; the columns they read together
# cover every column the analysis reads of goodput.csv, tcp.csv and queue.csv.
R_METRICS = r"""
source("analysis/lib/load.R", chdir = TRUE)
run <- read_run(commandArgs(TRUE)[1])
w_all <- c(start = 0, end = 30)
calls <- list(
  goodput = quote(ss_goodput_mbps(run, 1)), share = quote(ss_share_pct(run, 2)),
  cap_share = quote(ss_capacity_share_pct(run, 1)), total = quote(ss_total_mbps(run)),
  jain = quote(ss_jain(run)), cv = quote(ss_goodput_cv_pct(run, 1)),
  slope = quote(goodput_slope_mbps_s(run, 2)), startup = quote(startup_s(run, 2)),
  win_goodput = quote(win_goodput_mbps(run, 2, 6, 12)),
  link_util = quote(ss_link_util_pct(run)), qdelay = quote(ss_qdelay_ms(run)),
  retrans = quote(retrans_pkts(run, 1)), retrans_win = quote(retrans_pkts(run, 2, window = w_all)),
  gain_time = quote(gain_time_pct(run, 1, 1.25)), gain_rise = quote(gain_qdelay_rise_pct(run, 1, 1.25)),
  cwnd_bound = quote(cwnd_bound_pct(run, 2)), rtt = quote(ss_rtt_ms(run, 2)),
  rtt_q = quote(ss_rtt_queueing_ms(run, 1)), probe_rtt = quote(probe_rtt_period_s(run, 1)),
  probe_rtt_cwnd = quote(probe_rtt_min_cwnd_pkts(run, 2)), total_cwnd = quote(ss_total_cwnd_pkts(run)),
  total_inflight = quote(ss_total_inflight_pkts(run)), cwnd_cv = quote(ss_cwnd_cv_pct(run, 1)),
  sync = quote(probe_rtt_sync_pct(run, window = w_all)),
  model = quote(cubic_model_mbps(run, 1, window = w_all)),
  backlog = quote(unlist(backlog_estimate_summary(backlog_estimate_table(run, 2)))))
vals <- lapply(calls, function(cl) tryCatch(eval(cl), error = function(e) paste("error:", conditionMessage(e))))
cat(jsonlite::toJSON(vals, digits = NA, auto_unbox = TRUE, na = "string"))
"""


def r_metrics(run_dir) -> dict:
    res = subprocess.run(["Rscript", "-e", R_METRICS, str(run_dir)], cwd=REPO, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


@needs_r
def test_every_metric_is_the_same_on_the_restored_run_and_a_coarser_column_changes_them(run_dir, tmp_path):
    original = r_metrics(run_dir)
    numbers = {k: v for k, v in original.items() if not (isinstance(v, str) and v.startswith("error"))}
    assert len(numbers) >= 20, original              # the check measures something
    restored = archived_and_restored(run_dir, tmp_path)
    assert r_metrics(restored) == original           # exactly: the kept values are the same bytes
    # the check can fail: rtt_ms at 1 ms instead of 1 us, as a coarser policy might keep it
    tcp = restored / "tidy" / "tcp.csv"
    lines = tcp.read_bytes().decode().split("\r\n")
    col = lines[0].split(",").index("rtt_ms")
    rows = [r.split(",") for r in lines[1:-1]]
    for r in rows:
        r[col] = repr(round(float(r[col]))) if r[col] else ""
    tcp.write_bytes("\r\n".join([lines[0]] + [",".join(r) for r in rows] + [""]).encode())
    coarser = r_metrics(restored)
    assert {k for k in original if coarser[k] != original[k]} >= {"rtt", "rtt_q"}


def test_no_analysis_reads_a_dropped_column():
    """The policy leaves out only columns that no R code (analysis/) and no claim (claims/*.csv,
    whose args may name columns) names: an analysis that starts reading one must take it out of
    archive.DROPPED (and rename the policy, whose archived runs lack it)."""
    import re
    named = {}
    for path in [*(REPO / "analysis").rglob("*.R"), *(REPO / "claims").glob("*.csv")]:
        text = path.read_text(errors="replace")
        for columns in archive.DROPPED.values():
            for col in columns:
                if re.search(rf"\b{col}\b", text):
                    named.setdefault(col, []).append(str(path.relative_to(REPO)))
    assert not named, f"dropped by the archive but read: {named}"
    assert all(col in archive.RESOLUTION for columns in archive.DROPPED.values() for col in columns)


def test_entries_of_the_earlier_policy_are_of_experiments_that_do_not_read_what_it_dropped():
    """r1 dropped tcp.csv's bytes_acked too (archive.R1_ALSO_DROPPED): no analysis of an experiment
    the shipped archive holds at r1 may read it (the figure scripts and claims of those experiments)."""
    import re
    from bbrlab.experiment import experiments
    exps, papers = experiments.load(REPO)
    r1 = {row["experiment"] for row in archive.read_manifest(REPO / "data" / "paper").values()
          if row["resolution"].startswith("r1:")} if (REPO / "data/paper/manifest.csv").is_file() else set()
    shared = [p.read_text() for p in (REPO / "analysis" / "lib").glob("*.R")]      # every experiment's
    for name in r1:
        e = exps[name]
        texts = shared + [(REPO / e.figure).read_text()] + ([(REPO / papers[e.paper].claims).read_text()] if e.paper else [])
        for columns in archive.R1_ALSO_DROPPED.values():
            for col in columns:
                assert not any(re.search(rf"\b{col}\b", t) for t in texts), (name, col)


# The values every claim of Utsumi & Hasegawa's names (its metric call, window and args, as
# claims.R evaluates it on one run) and the metrics their figure scripts call besides, on one
# run, with the columns named on the command line poisoned (each replaced by other values).
UTSUMI_VALUES = r"""
source("analysis/lib/load.R", chdir = TRUE)
args <- commandArgs(TRUE)
run <- read_run(args[1])
for (col in args[-1]) for (tab in c("tcp", "queue")) if (col %in% names(run[[tab]]))
  run[[tab]][[col]] <- rev(run[[tab]][[col]]) * 1.5 + 1
claims <- read_claims("claims/utsumi2022.csv")
vals <- list()
for (i in seq_len(nrow(claims))) {
  cl <- claims[i, ]
  vals[[cl$id]] <- tryCatch(run_value(claim_call(cl), run, cl$window, 10),
                            error = function(e) paste("error:", conditionMessage(e)))
}
figs <- list(sending_1 = quote(cubic_sending_mbps(run, 1)), sending_2 = quote(cubic_sending_mbps(run, 2)),
             model_1 = quote(cubic_model_mbps(run, 1)), model_2 = quote(cubic_model_mbps(run, 2)),
             fca_1 = quote(fca_estimate_mbps(run, 1)), share = quote(ss_share_pct(run, 1)),
             jain = quote(ss_jain(run)), total = quote(ss_total_mbps(run)), rtt = quote(ss_rtt_ms(run, 1)))
for (n in names(figs)) vals[[n]] <- tryCatch(as.numeric(eval(figs[[n]])),
                                             error = function(e) paste("error:", conditionMessage(e)))
cat(jsonlite::toJSON(vals, digits = NA, auto_unbox = TRUE, na = "string"))
"""


def utsumi_values(run_dir, poisoned=()) -> dict:
    res = subprocess.run(["Rscript", "-e", UTSUMI_VALUES, str(run_dir), *poisoned], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def test_the_columns_dropped_of_utsumi_runs_are_named_by_no_analysis_of_theirs():
    """r3 leaves out of Utsumi & Hasegawa's runs (archive.EXPERIMENT_DROPPED) columns that other
    papers read: none of their figure scripts, their metrics, the transfer-length evidence or their
    claims (metric args) names one, and the resolution names them."""
    import re
    extra = archive.EXPERIMENT_DROPPED["utsumi2022_"]
    paths = [*(REPO / "analysis" / "figures" / "utsumi2022").glob("*.R"),
             REPO / "analysis" / "lib" / "metrics_utsumi2022.R", REPO / "analysis" / "lib" / "transfer_length.R",
             *(REPO / "analysis").glob("transfer_length*.R"), REPO / "claims" / "utsumi2022.csv"]
    named = {(col, str(p.relative_to(REPO))) for p in paths for cols in extra.values() for col in cols
             if re.search(rf"\b{col}\b", p.read_text())}
    assert not named
    assert all(col in archive.RESOLUTION.split("of utsumi2022_* also")[1] for cols in extra.values() for col in cols)
    assert archive.dropped_columns("utsumi2022_fig04")["tcp.csv"] == archive.DROPPED["tcp.csv"] + extra["tcp.csv"]
    assert archive.dropped_columns("ma2019_fig01") == archive.DROPPED


def bbr_cubic_run(tmp_path) -> pathlib.Path:
    """A real BBR-against-CUBIC run with loss episodes (Tang et al.'s Fig. 5, 10 Mbit/s, 100 ms,
    187.5-kB buffer, 100 s), restored from a one-entry archive of the r2 policy, which kept every
    column that r3 drops of Utsumi & Hasegawa's runs (tests/fixtures/archive_bbr_cubic)."""
    arch = REPO / "tests" / "fixtures" / "archive_bbr_cubic"
    (row,) = archive.read_manifest(arch).values()
    assert archive.policy(row) == "r2"
    return archive.restore(arch, row, tmp_path / "bbr_cubic" / "rep1")


@needs_r
def test_no_value_of_utsumis_claims_or_figures_reads_the_columns_dropped_of_their_runs(tmp_path):
    """Poisoning the columns r3 drops of Utsumi & Hasegawa's runs changes no value that their claims
    and figures compute on a real BBR-against-CUBIC run (the CUBIC model's inputs included);
    poisoning columns they read (rtt_ms, retrans_total) does."""
    run = bbr_cubic_run(tmp_path)
    extra = [c for cols in archive.EXPERIMENT_DROPPED["utsumi2022_"].values() for c in cols]
    header = (run / "tidy" / "tcp.csv").read_text().splitlines()[0].split(",") + \
        (run / "tidy" / "queue.csv").read_text().splitlines()[0].split(",")
    assert len(set(extra) & set(header)) >= 6               # the run has the columns poisoned (not bytes_acked)
    clean = utsumi_values(run)
    numbers = {k for k, v in clean.items() if isinstance(v, (int, float))}
    assert len(numbers) >= 40 and {"utsumi2022-fig04-accurate", "utsumi2022-sec5-gamma-cubic",
                                   "model_1", "sending_2"} <= numbers, clean   # it measures something
    assert utsumi_values(run, extra) == clean
    changed = {k for k, v in utsumi_values(run, extra + ["rtt_ms"]).items() if v != clean[k]}
    assert {"rtt", "utsumi2022-fig14-fca-rtt"} <= changed
    changed = {k for k, v in utsumi_values(run, extra + ["retrans_total"]).items() if v != clean[k]}
    assert {"utsumi2022-fig04-accurate", "sending_1", "model_1"} <= changed


def _as_r2(monkeypatch):
    """The archive module set to the r2 policy (what r2 dropped), to write an r2 entry."""
    monkeypatch.setattr(archive, "RESOLUTION", "r2: as before")
    monkeypatch.setattr(archive, "DROPPED", {"tcp.csv": archive.DROPPED["tcp.csv"][:-1],
                                             "queue.csv": archive.DROPPED["queue.csv"]})
    monkeypatch.setattr(archive, "EXPERIMENT_DROPPED", {})


def utsumi_run(run_dir, tmp_path) -> pathlib.Path:
    """The captured run as a run of Utsumi & Hasegawa's Fig. 4 (experiment renamed, in run.json
    and its spec alike)."""
    dest = tmp_path / "uruns" / "utsumi2022_fig04" / "buffer_bdp=128" / "rep1"
    shutil.copytree(run_dir, dest)
    meta = json.loads((dest / "run.json").read_text())
    meta.update(experiment="utsumi2022_fig04", point="buffer_bdp=128", repetition=1)
    meta["spec"].update(name="utsumi2022_fig04", point="buffer_bdp=128", repetition=1)
    (dest / "run.json").write_text(json.dumps(meta, indent=1))
    return dest


def test_repack_brings_an_r2_entry_to_r3_with_the_same_values_and_keys(run_dir, tmp_path, monkeypatch):
    src = utsumi_run(run_dir, tmp_path)
    arch = tmp_path / "archive"
    with monkeypatch.context() as m:
        _as_r2(m)
        archive.add(arch, [src, run_dir], progress=lambda *_: None)
        before = archive.read_manifest(arch)
        old = {k: archive.restore(arch, row, tmp_path / "old" / k[0]) for k, row in before.items()}
    assert {archive.policy(r) for r in before.values()} == {"r2"}
    assert "inflight_pkts" in (old[("utsumi2022_fig04", "buffer_bdp=128", 1)] / "tidy" / "tcp.csv").read_text()
    counts = archive.repack(arch, progress=lambda *_: None)
    assert counts == {"repacked": 2, "unchanged": 0, "kept": 0}
    after = archive.read_manifest(arch)
    for key, row in after.items():
        assert archive.policy(row) == "r3" and row["resolution"] == archive.RESOLUTION
        same = {c: v for c, v in row.items() if c not in ("resolution", "bytes", "sha256")}
        assert same == {c: v for c, v in before[key].items() if c not in ("resolution", "bytes", "sha256")}
        new = archive.restore(arch, row, tmp_path / "new" / key[0])
        for csv_path in sorted((old[key] / "tidy").glob("*.csv")):
            text = csv_path.read_text()
            drop = [c for c in archive.dropped_columns(key[0]).get(csv_path.name, ())
                    if c in text.splitlines()[0].split(",")]
            assert (new / "tidy" / csv_path.name).read_text() == columnar.without_columns(text, drop)
    utsumi = ("utsumi2022_fig04", "buffer_bdp=128", 1)
    assert int(after[utsumi]["bytes"]) < int(before[utsumi]["bytes"])
    assert "inflight_pkts" not in (tmp_path / "new" / utsumi[0] / "tidy" / "tcp.csv").read_text()
    assert archive.repack(arch, progress=lambda *_: None) == {"repacked": 0, "unchanged": 2, "kept": 0}


def test_repack_leaves_entries_of_a_policy_that_lacks_kept_columns_and_refuses_a_lossy_pack(
        run_dir, tmp_path, monkeypatch):
    arch = tmp_path / "archive"
    with monkeypatch.context() as m:
        _as_r2(m)
        m.setattr(archive, "RESOLUTION", "r1: as before")
        archive.add(arch, [run_dir], progress=lambda *_: None)
    assert archive.repack(arch, progress=lambda *_: None) == {"repacked": 0, "unchanged": 0, "kept": 1}
    arch2 = tmp_path / "archive2"
    with monkeypatch.context() as m:
        _as_r2(m)
        archive.add(arch2, [run_dir], progress=lambda *_: None)
    before = (arch2 / archive.MANIFEST).read_bytes()
    real = archive.dropped_columns
    monkeypatch.setattr(archive, "compact", lambda d, _c=archive.compact: _lossy(_c(d)))
    with pytest.raises(archive.ArchiveError, match="not the archived one"):
        archive.repack(arch2, progress=lambda *_: None)
    assert (arch2 / archive.MANIFEST).read_bytes() == before            # nothing replaced
    assert real is archive.dropped_columns


def _lossy(members: dict) -> dict:
    """compact()'s members with tcp.csv's rtt_ms rounded to 1 ms (a coarser pack than the policy)."""
    name = "tidy/tcp.col"
    text = columnar.decode(members[name].decode())
    lines = text.split("\r\n") if "\r\n" in text else text.split("\n")
    eol = "\r\n" if "\r\n" in text else "\n"
    col = lines[0].split(",").index("rtt_ms")
    rows = [r.split(",") for r in lines[1:-1]]
    for r in rows:
        r[col] = repr(round(float(r[col]))) if r[col] else ""
    return dict(members, **{name: columnar.encode(eol.join([lines[0]] + [",".join(r) for r in rows] + [""])).encode()})
