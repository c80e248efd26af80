"""Command line: `python3 -m bbrlab <command>` (PYTHONPATH=mininet).

    validate SPEC...                  check specs, print their runs
    runs SPEC [--profile P]           list run directories (for the pipeline)
    labels SPEC... [--profile P] [--out FILE]
                                      CSV experiment,point,label of the specs' sweep points
    run SPEC --out ROOT [--profile P] [--backend uml|native|ns3] [--clock real|virtual]
        [--point NAME] [--rep K] [--kernel PATH] [--ns3-rules ns3|linux] [--archive DIR]...
        [--full-length]
    archive add RUNS_ROOT --to DIR    put a results tree's finished runs into a results archive
    archive move DIR ENTRY... --to DIR2
                                      move entries (EXPERIMENT/POINT/repK) to another archive, unchanged
    archive status DIR SPEC... [--profile P] [--full-length]
                                      per run of the specs: fresh, stale or missing in the archive
    archive verify [DIR]              open every entry of an archive (default data/paper): sizes,
                                      checksums, members, identities; orphan rows and files (exit 5)
    add-repetitions CLAIMS_CSV... [--profile paper] [--dry-run]
                                      one round of the added-repetitions rule (docs/paper-profile.md):
                                      the points of the marginal claims get 3 more seeds
    archive repack DIR [--experiment E]...
                                      bring entries of an earlier resolution policy to the present one
    tidy RUN_DIR...                   recompute finished runs' tidy data from their raw/ files
    check-native                      say whether this host can run the native backend
    clean [--dry-run]                 remove a killed native run's leftovers (like mn -c)
    vagrant-run SPEC --out ROOT --point NAME --rep K [--profile P]
                                      one run on the native backend in the Vagrant VM

Exit status: 0 done, 2 invalid input, 3 the backend cannot run here, 4 a run failed, 5 an archive
problem, 6 the same run is being made elsewhere (main() says which error gives which).
"""
import argparse
import csv
import io
import json
import os
import pathlib
import signal
import sys

from .experiment import controls, repetitions, spec
from .host import backends, runner
from .data.archive import ArchiveError


def write_labels(paths, profile, out=None) -> None:
    """experiment,point,label of every sweep point of the specs (spec.labels_of), one row per point."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["experiment", "point", "label"])
    for path in paths:
        s = spec.load(path, profile=profile)
        for point, label in spec.labels_of(s).items():
            w.writerow([s["name"], point, label])
    if out is None:
        sys.stdout.write(buf.getvalue())
    else:
        out = pathlib.Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(buf.getvalue())
        tmp.rename(out)


def add_limit_flags(parser) -> None:
    """--max-runs and --max-flows: raise the caps on runs per spec and flows per run (spec.LIMITS)."""
    parser.add_argument("--max-runs", type=int, metavar="N",
                        help=f"allow up to N runs per spec (default {spec.LIMITS['runs']}); each run boots one "
                             "testbed for its duration, about 1 to 6 host CPU-s per experiment second")
    parser.add_argument("--max-flows", type=int, metavar="N",
                        help=f"allow up to N flows per run (default {spec.LIMITS['flows']}); each flow is a "
                             "sender and a receiver in the one testbed guest, which then may not keep up "
                             "(the fidelity checks judge it)")


def name_clash(path):
    """A warning when the spec file at `path` has the name of an experiment of the experiments
    table (config/experiments.csv) but is not that experiment's spec: its runs would share that
    experiment's results directories (ROOT/<name>/...) and archive entries; else None."""
    from .experiment import experiments
    try:
        name = spec.parse(pathlib.Path(path).read_bytes(), str(path)).get("name")
        known = experiments.load(repetitions.REPO)[0].get(name)
    except (OSError, AttributeError, TypeError, spec.SpecError, experiments.TableError):
        return None
    if known is None or (repetitions.REPO / known.spec).resolve() == pathlib.Path(path).resolve():
        return None
    return (f"bbrlab: warning: {path} is named {name!r}, like the experiment of {known.spec}: its runs go to "
            f"the same results directories (<out>/{name}/...) and archive entries as that experiment's")


def limits_of(args) -> dict:
    """The spec.LIMITS a command's --max-runs/--max-flows give."""
    return {k: v for k, v in (("runs", args.max_runs), ("flows", args.max_flows)) if v is not None}


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: one subcommand per command of the module docstring."""
    parser = argparse.ArgumentParser(prog="bbrlab", description="BBR fairness experiments on an emulated testbed")
    sub = parser.add_subparsers(dest="command", required=True)
    p_val = sub.add_parser("validate", help="validate specs")
    p_val.add_argument("specs", nargs="+")
    p_val.add_argument("--profile")
    add_limit_flags(p_val)
    p_runs = sub.add_parser("runs", help="list the runs of a spec as JSON")
    p_runs.add_argument("spec")
    p_runs.add_argument("--profile")
    add_limit_flags(p_runs)
    p_lab = sub.add_parser("labels", help="CSV of the sweep points' human labels (experiment,point,label)")
    p_lab.add_argument("specs", nargs="+")
    p_lab.add_argument("--profile")
    p_lab.add_argument("--out", help="write the CSV to this file (atomically) instead of stdout")
    p_run = sub.add_parser("run", help="run a spec's experiments")
    p_run.add_argument("spec")
    p_run.add_argument("--out", required=True, help="results root; runs go to ROOT/<name>/<point>/rep<k>")
    p_run.add_argument("--profile")
    p_run.add_argument("--backend", default="uml", choices=list(backends.NAMES))
    p_run.add_argument("--clock", choices=["real", "virtual"])
    p_run.add_argument("--point")
    p_run.add_argument("--rep", type=int)
    p_run.add_argument("--kernel", help="UML kernel (default build/kernel/linux)")
    p_run.add_argument("--ns3-rules", choices=["ns3", "linux"],
                       help="backend ns3: BBR as ns-3 runs it (ns3, default) or the project's port of "
                            "Linux's BBR with Linux's rate-sample rules (linux)")
    p_run.add_argument("--archive", action="append", help="results archive (e.g. data/paper): a run it holds "
                       "with this checkout's keys is restored from it instead of booted (repeat it: looked up in order)")
    p_run.add_argument("--full-length", action="store_true",
                       help="the spec's own duration_s (the paper's transfer) whatever the profile runs: "
                            "a control run of the transfer-length rule (bbrlab/experiment/controls.py)")
    add_limit_flags(p_run)
    p_arc = sub.add_parser("archive", help="the results archive (bbrlab/data/archive.py)")
    arc = p_arc.add_subparsers(dest="archive_command", required=True)
    p_arc_add = arc.add_parser("add", help="archive a results tree's finished runs")
    p_arc_add.add_argument("runs_root", help="a results tree's runs/ (ROOT/<experiment>/<point>/rep<k>)")
    p_arc_add.add_argument("--to", required=True, help="the archive directory, e.g. data/paper")
    p_arc_add.add_argument("--experiment", action="append", default=[],
                           help="only this experiment's runs (repeatable; default: every run below RUNS_ROOT)")
    p_arc_mv = arc.add_parser("move", help="move entries to another archive, unchanged")
    p_arc_mv.add_argument("archive_dir", help="the archive holding them, e.g. data/paper")
    p_arc_mv.add_argument("entries", nargs="+", help="EXPERIMENT/POINT/repK")
    p_arc_mv.add_argument("--to", required=True, help="the archive directory, e.g. data/paper-controls")
    p_arc_rp = arc.add_parser("repack", help="bring entries of an earlier resolution policy to the present one")
    p_arc_rp.add_argument("archive_dir", help="e.g. data/paper")
    p_arc_rp.add_argument("--experiment", action="append", default=[],
                          help="only this experiment's entries (repeatable; default: every entry)")
    p_arc_st = arc.add_parser("status", help="per run of the specs: fresh, stale or missing in the archive")
    p_arc_st.add_argument("archive_dir")
    p_arc_st.add_argument("specs", nargs="+")
    p_arc_st.add_argument("--profile")
    p_arc_st.add_argument("--full-length", action="store_true",
                          help="the specs' runs at their own duration_s (the transfer-length rule's control runs)")
    p_arc_vf = arc.add_parser("verify", help="open every entry: checksums, members, identities, orphan rows "
                                             "and files; exit 5 on any problem")
    p_arc_vf.add_argument("archive_dir", nargs="?", default=str(runner.REPO / "data" / "paper"),
                          help="the archive (default: data/paper)")
    sub.add_parser("check-native", help="check this host's prerequisites for the native backend")
    p_vag = sub.add_parser("vagrant-run", help="one run on the native backend in the Vagrant VM (vagrant.py)")
    p_vag.add_argument("spec")
    p_vag.add_argument("--out", required=True, help="results root, relative to the repository")
    p_vag.add_argument("--profile")
    p_vag.add_argument("--point", required=True)
    p_vag.add_argument("--rep", type=int, required=True)
    p_tidy = sub.add_parser("tidy", help="recompute finished runs' tidy data from their raw/ files "
                                         "(after a parser change; run.json records it)")
    p_tidy.add_argument("runs", nargs="+", help="run directories (with run.json and raw/)")
    p_add = sub.add_parser("add-repetitions", help="one round of the added-repetitions rule "
                                                   "(docs/paper-profile.md)")
    p_add.add_argument("claims", nargs="+", help="claims tables (results/<profile>/report/generated/claims_*.csv)")
    p_add.add_argument("--profile", default="paper")
    p_add.add_argument("--dry-run", action="store_true", help="only print the rows the round adds")
    p_clean = sub.add_parser("clean", help="remove a killed native run's leftovers from this host (like mn -c)")
    p_clean.add_argument("--dry-run", action="store_true", help="only say what would be removed")
    p_clean.add_argument("--quiet", action="store_true")
    return parser


# ---- one handler per command: each takes the parsed arguments and returns an exit status
# (None: 0); an error it raises is turned into its status by main() (ERRORS).

def cmd_validate(args):
    """Check specs and print how many runs each expands to."""
    for path in args.specs:
        if name_clash(path):
            print(name_clash(path), file=sys.stderr)
        jobs = repetitions.runs(path, profile=args.profile, limits=limits_of(args))
        print(f"{path}: ok, {len(jobs)} run(s)")


def cmd_runs(args):
    """The runs of a spec as JSON (point, repetition, run directory), for the pipeline."""
    jobs = repetitions.runs(args.spec, profile=args.profile, limits=limits_of(args))
    print(json.dumps([{"point": j["point"], "repetition": j["repetition"],
                       "dir": str(runner.run_dir_name("", j))} for j in jobs]))


def cmd_labels(args):
    """CSV experiment,point,label of the specs' sweep points."""
    write_labels(args.specs, args.profile, args.out)


def cmd_run(args):
    """Run a spec's experiments (or one point and repetition of it) on a backend."""
    # SIGTERM (a job kill) unwinds like Ctrl-C, so the testbed is killed and the
    # unfinished run removed; SIGKILL is covered by the backends' tether.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    if name_clash(args.spec):
        print(name_clash(args.spec), file=sys.stderr)
    extra = {"kernel": args.kernel} if args.kernel and args.backend == "uml" else {}
    if args.ns3_rules:
        if args.backend != "ns3":
            raise backends.BackendError(f"--ns3-rules is for --backend ns3, not {args.backend}")
        extra["rules"] = args.ns3_rules
    runner.run_spec_file(args.spec, args.out, profile=args.profile, backend=args.backend,
                         clock=args.clock, only_point=args.point, only_rep=args.rep,
                         archive=args.archive, full_length=args.full_length,
                         limits=limits_of(args), **extra)


def cmd_archive(args):
    """`archive add|move|verify|repack|status`: ARCHIVE_COMMANDS[args.archive_command]."""
    return ARCHIVE_COMMANDS[args.archive_command](args)


def archive_add(args):
    """Put a results tree's finished runs (optionally of some experiments only) into an archive."""
    from .data import archive
    runs = archive.complete_runs(args.runs_root)
    if args.experiment:
        runs = [r for r in runs if r.parents[1].name in args.experiment]
    if not runs:
        raise archive.ArchiveError(f"{args.runs_root}: no finished run (<experiment>/<point>/rep<k>/run.json)")
    counts = archive.add(args.to, runs)
    print(f"archive {args.to}: {counts['added']} added, {counts['replaced']} replaced, "
          f"{counts['unchanged']} unchanged")


def archive_move(args):
    """Move entries EXPERIMENT/POINT/repK to another archive, unchanged."""
    from .data import archive
    keys = []
    for entry in args.entries:
        parts = entry.strip("/").split("/")
        if len(parts) != 3 or not parts[2].startswith("rep") or not parts[2][3:].isdigit():
            raise archive.ArchiveError(f"{entry}: an entry is EXPERIMENT/POINT/repK")
        keys.append((parts[0], parts[1], int(parts[2][3:])))
    print(f"archive: {archive.move(args.archive_dir, args.to, keys)} moved to {args.to}")


def archive_verify(args):
    """Open every entry of an archive; print each problem (ArchiveError, exit 5, if any)."""
    import time
    from .data import archive
    started = time.monotonic()
    found = archive.verify(args.archive_dir)
    for problem in found["problems"]:
        print(problem)
    if found["problems"]:
        raise archive.ArchiveError(f"{args.archive_dir}: {len(found['problems'])} problem(s) in "
                                   f"{found['entries']} entries")
    print(f"archive {args.archive_dir}: {found['entries']} entries verified (checksums, members, "
          f"identities; no orphan rows or files) in {time.monotonic() - started:.0f} s")


def archive_repack(args):
    """Bring entries of an earlier resolution policy to the present one."""
    from .data import archive
    counts = archive.repack(args.archive_dir, experiments=set(args.experiment))
    print(f"archive {args.archive_dir}: {counts['repacked']} repacked, {counts['unchanged']} at the "
          f"present policy, {counts['kept']} of a policy that lacks kept columns (left as they are)")


def archive_status(args):
    """Per run of the specs: fresh, stale or missing in the archive, and whether another build made it."""
    from .data import archive
    from .host import builds
    kernel_sha, module_sha = builds.current_digests()
    counts = {"fresh": 0, "stale": 0, "missing": 0}
    other = 0
    for path in args.specs:
        jobs = (controls.full_length_runs(path, profile=args.profile) if args.full_length
                else repetitions.runs(path, profile=args.profile))
        for job in jobs:
            state, row = archive.lookup_job(args.archive_dir, job)
            state = state or "missing"
            counts[state] += 1
            why = archive.other_build(row, kernel_sha, module_sha) if row else ""
            other += bool(why)
            print(f"{state:8} {job['name']}/{job['point']}/rep{job['repetition']}"
                  + (f"   other build: {why}" if why else ""))
    print(f"{counts['fresh']} fresh, {counts['stale']} stale, {counts['missing']} missing")
    if kernel_sha is None:
        print("no testbed kernel built here (build/kernel/linux): builds not compared")
    elif other:
        print(f"{other} archived run(s) came from another kernel or module build than this checkout's:"
              " a rerun may give other bytes (docs/clocks-and-fidelity.md)")


def cmd_add_repetitions(args):
    """One round of the added-repetitions rule (add_repetitions)."""
    add_repetitions(args.claims, args.profile, args.dry_run)


def cmd_tidy(args):
    """Recompute finished runs' tidy data from their raw/ files."""
    for path in args.runs:
        print(f"{path}: {runner.retidy(pathlib.Path(path))}")


def cmd_vagrant_run(args):
    """One run on the native backend inside the Vagrant VM; 4 when it fails there."""
    from .host import vagrant
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    status = vagrant.run(args.spec, args.profile, args.out, args.point, args.rep)
    if status != 0:
        print(f"bbrlab: the run in the Vagrant VM failed with status {status}", file=sys.stderr)
        return 4
    return 0


def cmd_clean(args):
    """Remove a killed native run's leftovers; 3 when not root (and not --dry-run)."""
    from .host import cleanup
    if not args.dry_run and os.geteuid() != 0:
        print("bbrlab: clean removes network devices and modules: run it as root "
              "(or with --dry-run)", file=sys.stderr)
        return 3
    done = cleanup.clean(dry_run=args.dry_run, progress=(lambda _m: None) if args.quiet else print)
    if args.dry_run:
        print("\n".join(done.describe()) or "nothing to clean")
    elif not done and not args.quiet:
        print("nothing to clean")
    return 0


def cmd_check_native(_args):
    """Say whether this host can run the native backend (BackendError, exit 3, if not)."""
    backends.get("native").check()
    print("native backend: all prerequisites present")


COMMANDS = {"validate": cmd_validate, "runs": cmd_runs, "labels": cmd_labels, "run": cmd_run,
            "archive": cmd_archive, "add-repetitions": cmd_add_repetitions, "tidy": cmd_tidy,
            "vagrant-run": cmd_vagrant_run, "clean": cmd_clean, "check-native": cmd_check_native}
ARCHIVE_COMMANDS = {"add": archive_add, "move": archive_move, "verify": archive_verify,
                    "repack": archive_repack, "status": archive_status}

# The errors a command may raise, in the order they are tried: (class, exit status, message prefix).
ERRORS = ((spec.SpecError, 2, "invalid spec: "),
          (backends.BackendError, 3, ""),
          (ArchiveError, 5, "archive: "),
          (runner.RunFailed, 4, "run failed: "),
          (runner.RunBusy, 6, "run in progress elsewhere: "),
          (controls.ControlsError, 2, "transfer-length controls: "),
          (repetitions.TableError, 2, "added repetitions: "))


def main(argv=None) -> int:
    """`bbrlab <command>` (module docstring): parse, run the command's handler (COMMANDS), and return
    the exit status:

        0  done
        2  an invalid spec, transfer-length controls or added-repetitions table (argparse, too,
           exits 2 on bad arguments)
        3  a backend cannot run here, bad arguments for it, or a run does not fit this machine;
           `clean` without root
        4  a run failed (also in the Vagrant VM)
        5  an archive problem (`archive verify` found one, or an archive cannot be read or written)
        6  another process is making the same run into the same directory (nothing started)
    """
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args) or 0
    except tuple(cls for cls, _, _ in ERRORS) as err:
        status, prefix = next((code, prefix) for cls, code, prefix in ERRORS if isinstance(err, cls))
        print(f"bbrlab: {prefix}{err}", file=sys.stderr)
        return status


def add_repetitions(claims_paths, profile, dry_run=False) -> None:
    """One round of the rule: read the claims tables, add the marked points' rows to
    config/added_repetitions.csv (unless dry_run) and print them."""
    from .experiment import experiments
    rows = []
    for path in claims_paths:
        with open(path, newline="") as f:
            table = list(csv.DictReader(f))
        if table and "points_read" not in table[0]:
            raise repetitions.TableError(f"{path}: no points_read column (a claims table of an earlier revision)")
        rows += table
    exps = experiments.load(repetitions.REPO)[0]
    base = {name: spec.load(repetitions.REPO / e.spec, profile=profile).get("repetitions", 1)
            for name, e in exps.items() if profile in e.profiles}
    new = repetitions.next_round(rows, profile, base)
    for e, p in repetitions.exhausted(rows, profile):
        print(f"{e}/{p}: had its {repetitions.LAST_ROUND} rounds; not marked again")
    for row in new:
        print(f"round {row['round']}: {row['experiment']}/{row['point']} -> {row['repetitions']} repetitions"
              f" ({row['claims']})")
    marginal = sum(1 for r in rows if r["strength"] == "marginal" and r["verdict"] != "not run")
    print(f"{marginal} marginal claims mark {len(new)} points" + (" (dry run: nothing written)" if dry_run else ""))
    if new and not dry_run:
        repetitions.write(new)
