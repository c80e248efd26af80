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
    assert row["resolution"] == archive.RESOLUTION and row["resolution"].startswith("r2: ")
    return archive.restore(arch, row, tmp_path / "restored" / "rep1")


def test_restored_files_are_the_originals_without_the_dropped_columns(run_dir, tmp_path):
    out = archived_and_restored(run_dir, tmp_path)
    names = sorted(p.name for p in (run_dir / "tidy").glob("*.csv"))
    assert names == sorted(p.name for p in (out / "tidy").glob("*.csv")) and "tcp.csv" in names
    for name in names:
        original = (run_dir / "tidy" / name).read_bytes().decode()
        header = original.splitlines()[0].split(",")
        dropped = [c for c in archive.DROPPED.get(name, ()) if c in header]
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
