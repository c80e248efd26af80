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


# ---- the shipped archive replayed on this machine ----

ARCHIVE = REPO / "data" / "paper"


def test_the_replay_set_takes_the_cheapest_recorded_run_per_paper_and_per_module(monkeypatch):
    def row(exp, point, rep, s, kernel="k" * 64, modules="", stale=False):
        return {"experiment": exp, "point": point, "repetition": str(rep), "valid": "true", "stale": stale,
                "experiment_s": str(s), "wall_s": "1", "kernel_sha256": kernel, "modules_sha256": modules}
    # whether the archive holds a row's run with this checkout's keys: here the row says
    monkeypatch.setattr(archive_replay, "current", lambda rows, r, exps: not r["stale"])
    rows = {(r["experiment"], r["point"], int(r["repetition"])): r for r in [
        row("kim2019_fig02", "a", 1, 60),
        row("kim2019_bbre_alpha", "b", 1, 120, modules="bbr_e=" + "e" * 64),
        row("kim2019_bbre_alpha", "c", 1, 30, kernel=""),                 # no recorded build: never
        row("kim2019_bbre_alpha", "f", 1, 20, stale=True),                # spec or module changed since: never
        row("tang_fig02", "d", 1, 100), row("tang_fig02", "d", 2, 90),
        row("yang2019_fig04b", "e", 1, 60, modules="bbq=" + "b" * 64 + ";adaptive_bbr=" + "a" * 64)]}
    chosen = sorted((r["experiment"], r["point"], r["repetition"]) for r in archive_replay.replay_set(rows))
    assert chosen == [("kim2019_bbre_alpha", "b", "1"), ("kim2019_fig02", "a", "1"), ("tang_fig02", "d", "2"),
                      ("yang2019_fig04b", "e", "1")]
    # on a new build, only the runs rerun on it: tang_fig02's cheaper run stayed on the old one
    rows[("tang_fig02", "d", 1)]["kernel_sha256"] = "n" * 64
    rows[("kim2019_fig02", "a", 1)]["kernel_sha256"] = "n" * 64
    chosen = sorted((r["experiment"], r["point"], r["repetition"]) for r in archive_replay.replay_set(rows, build="n" * 64))
    assert chosen == [("kim2019_fig02", "a", "1"), ("tang_fig02", "d", "1")]


def test_archived_runs_replay_byte_identical(kernel, tmp_path):
    """The promise on the virtual clock: the same spec, seed, kernel build and module builds give
    the same bytes on any machine. This checkout, on this machine, at this path, with the kernel and
    modules it built itself, reruns one archived run per paper and per variant module (the cheapest,
    bench/archive_replay.replay_set) and must give their archived tidy data exactly. The kernel
    it built must be the archive's build (kernel/build-uml.sh builds reproducibly); a testbed
    change that no run key sees (the guest's driver, samplers, socket sizing) fails here.
    About two minutes (two runs at a time)."""
    import concurrent.futures
    from bbrlab.data import archive
    from bbrlab.experiment import experiments
    from bbrlab.host import digests
    rows = archive.read_manifest(ARCHIVE)
    here = digests.sha256_file(kernel)
    chosen = archive_replay.replay_set(rows, build=here)
    exps = experiments.load(REPO)[0]
    papers = {exps[r["experiment"]].paper for r in rows.values() if r["experiment"] in exps}
    assert {exps[r["experiment"]].paper for r in chosen} == papers, (
        f"a paper has no archived run from the kernel built here ({here[:12]}): another linux-source-6.1 or"
        " compiler, a build that is not reproducible (kernel/build-uml.sh), or a testbed change whose rerun"
        " has not reached that paper yet")
    loaded = {item.partition("=")[0] for r in rows.values() if r["valid"] == "true" and r["experiment"] in exps
              and archive_replay.current(rows, r, exps) for item in filter(None, r["modules_sha256"].split(";"))}
    replayed = {item.partition("=")[0] for r in chosen for item in filter(None, r["modules_sha256"].split(";"))}
    assert loaded <= replayed, f"no archived run from this build loads {sorted(loaded - replayed)}"

    def replay(k):
        work = tmp_path / f"run{k}"
        return archive_replay.replay(ARCHIVE, chosen[k], str(kernel), work)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(replay, range(len(chosen))))
    differ = [f"{r['experiment']}/{r['point']}/rep{r['repetition']}: {'; '.join(p)}"
              for r, p in zip(chosen, results) if p]
    assert not differ, "rerun differs from its archived run:\n" + "\n".join(differ)
    from bbrlab.host import builds
    _kernel, modules_here = builds.current_digests(kernel)
    for r in chosen:                    # the modules the reruns built are the archive's builds
        for item in filter(None, r["modules_sha256"].split(";")):
            name, _, digest = item.partition("=")
            assert modules_here.get(name) == digest, f"{name}.ko built here is not the archived runs' build"
