# What another profile's report derives from the paper-profile archive, kept beside the archive.
#
# The quick report shows the paper profile's verdicts (rule reference_claims, per paper), what
# each round of added repetitions settled (repetition_rounds) and the shortened-transfer rule's
# evidence (transfer_length, transfer_length_prefix), all computed from archived runs that every
# fresh clone would otherwise unpack and evaluate again: about 480 job-seconds of the first
# command (bench/results/main-job-2026-11-28.md). Their outputs are stored in DERIVED under a
# key of everything they are computed from:
#
#   - the rule and its wildcards;
#   - each input file's content (scripts, every file they source, claims tables, config tables),
#     or, for a stamp the pipeline names by a digest of what it stands for (the registry labels'
#     stamp), that name;
#   - the checksums of the archive entries whose runs the rule reads (the restored tree);
#   - its parameters (warm-up, seeds, candidate lengths);
#   - the R installation (the versions of the R packages envs/debian-packages.txt declares, else
#     `Rscript --version`).
#
# The key changes exactly when Snakemake would redo the rule, so a stored result is used only
# where computing it would read the same inputs. A rule whose key is not stored is computed
# from the runs, as before (the `<rule>_derived` twin below wants the stored files; without them
# Snakemake falls back to the rule itself). The store is written by
#
#     snakemake --cores all derived_store          (after archiving runs or changing the analysis)
#
# which computes what is not stored and keeps each rule's current key only (a plan narrowed by
# config experiments= or claims= adds its own keys and drops none);
# tests/test_workflow.py checks that the shipped store is current. The paper profile and
# config derived=false never read the store: they compute everything from the runs
# (`derived_store --config derived=false` recomputes every stored result and stores it again).
import os
import shutil as _shutil
import subprocess as _subprocess

DERIVED = f"data/{REFERENCE}-derived"
STORE_DERIVED = PROFILE != REFERENCE and REF_ARCHIVE == f"data/{REFERENCE}"
USE_DERIVED = STORE_DERIVED and config.get("derived", True)
_DIGESTS = {}


def _r_installation():
    """The R the analysis runs on: the installed versions of the R packages the project declares
    (envs/debian-packages.txt: r-base-core and the r-cran-* it names; packages installed beside
    them do not count), else what `Rscript --version` says."""
    fields = [line.split("#")[0].split() for line in pathlib.Path("envs/debian-packages.txt").read_text().splitlines()]
    declared = [f[0] for f in fields if f and f[0].startswith("r-")]      # as setup.sh reads it: first field
    try:
        out = _subprocess.run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev} ${Package} ${Version}\n", *declared],
                              capture_output=True, text=True).stdout
        rows = sorted(line[3:].strip() for line in out.splitlines() if line.startswith("ii"))
    except FileNotFoundError:
        rows = []
    if not rows:
        try:
            rows = [_subprocess.run(["Rscript", "--version"], capture_output=True, text=True).stderr.strip()]
        except FileNotFoundError:
            rows = ["no R"]
    return "\n".join(rows)


def _input_digest(path):
    """A generated stamp (below results/) is named by what it stands for: its name. Any other input
    file: its content."""
    path = str(path)
    if path.startswith("results/"):
        return "stamp " + pathlib.PurePath(path).name
    if path not in _DIGESTS:
        _DIGESTS[path] = hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()
    return f"{path} {_DIGESTS[path]}"


def derived_key(instance, files, entries, params):
    """The first 16 hex digits of the key (header comment) of one rule instance."""
    h = hashlib.sha256()
    for part in ([instance, _R_INSTALLATION] + sorted(_input_digest(f) for f in files)
                 + sorted(entries) + [repr(p) for p in params]):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:16]


def _ref_entries(experiments=None):
    """The checksums of the reference archive's entries of the unpacked runs (of `experiments`)."""
    return [_REF_ROWS[(j["name"], j["point"], int(j["repetition"]))]["sha256"] for j in REF_JOBS
            if experiments is None or j["name"] in experiments]


def _files(inputs):
    """The file names of a rule's input dictionary (a value is a name or a list of names)."""
    return [f for v in inputs.values() for f in ([v] if isinstance(v, str) else v)]


# Each stored rule's files are the ones its compute rule reads (the same functions give both).
def _claims_instance(k):
    return (f"reference_claims-{k}", _files(reference_claims_files(k)),
            _ref_entries(bbrexperiments.claims_experiments(PAPERS[k].claims)),    # claims.R reads only these
            [REF_WARMUP_S])


def _rounds_instance():
    return ("repetition_rounds", _files(repetition_rounds_files()), _ref_entries(), [_ROUNDS_WARMUP, _ROUNDS_PAPERS])


def _transfer_instance():
    return ("transfer_length", _files(transfer_length_files("analysis/transfer_length.R")),
            held_entries(_CONTROL_HELD), [bbrcontrols.SEEDS, TRANSFER_CANDIDATES_S])


def _prefix_instance():
    return ("transfer_length_prefix", _files(transfer_length_files("analysis/transfer_length_prefix.R")),
            held_entries(_CONTROL_HELD + _SHORT_HELD), [])


def derived_dir(instance):
    """DERIVED/<rule instance>/<key>: where that instance's outputs are stored."""
    name, files, entries, params = instance
    return f"{DERIVED}/{name}/{derived_key(name, files, entries, params)}"


def derived_files(instance, outputs):
    """The stored twins of a rule's outputs (by file name)."""
    return [f"{derived_dir(instance)}/{pathlib.PurePath(o).name}" for o in outputs]


def _copy_pairs(sources, targets):
    for src, dst in zip(sources, targets):
        tmp = f"{dst}.tmp"
        _shutil.copyfile(src, tmp)
        os.replace(tmp, dst)


_CLAIMS_OUT = ["claims_{claims}.tex", "claims_{claims}.csv", "claims_{claims}_counts.tex"]
_ROUNDS_OUT = [f"{GEN}/repetition_rounds.tex", f"{GEN}/repetition_rounds.csv"]
_TRANSFER_OUT = [f"{GEN}/transfer_length_utsumi2022.tex", f"{GEN}/transfer_length_utsumi2022.csv",
                 f"{GEN}/transfer_length_utsumi2022_summary.csv"]
_PREFIX_OUT = [f"{GEN}/transfer_length_prefix_utsumi2022.tex", f"{GEN}/transfer_length_prefix_utsumi2022.csv"]


def _derived_instances():
    """(instance, its outputs) of every stored rule instance of this plan."""
    pairs = [(_claims_instance(k), [f"{REF_GEN}/{o.format(claims=k)}" for o in _CLAIMS_OUT]) for k in REF_PAPERS]
    if _ROUNDS_PAPERS:
        pairs.append((_rounds_instance(), _ROUNDS_OUT))
    return pairs + [(_transfer_instance(), _TRANSFER_OUT), (_prefix_instance(), _PREFIX_OUT)]


if STORE_DERIVED:
    _R_INSTALLATION = _r_installation()

if USE_DERIVED:

    rule reference_claims_derived:
        """reference_claims's outputs from the store (its key's files)."""
        input:
            lambda wildcards: derived_files(_claims_instance(wildcards.claims),
                                            [o.format(claims=wildcards.claims) for o in _CLAIMS_OUT]),
        output:
            tex=f"{REF_GEN}/claims_{{claims}}.tex",
            csv=f"{REF_GEN}/claims_{{claims}}.csv",
            counts=f"{REF_GEN}/claims_{{claims}}_counts.tex",
        localrule: True
        run:
            _copy_pairs(input, output)

    rule repetition_rounds_derived:
        """repetition_rounds's outputs from the store."""
        input:
            derived_files(_rounds_instance(), _ROUNDS_OUT) if _ROUNDS_PAPERS else [],
        output:
            tex=_ROUNDS_OUT[0],
            csv=_ROUNDS_OUT[1],
        localrule: True
        run:
            _copy_pairs(input, output)

    rule transfer_length_derived:
        """transfer_length's outputs from the store."""
        input:
            derived_files(_transfer_instance(), _TRANSFER_OUT),
        output:
            tex=_TRANSFER_OUT[0],
            csv=_TRANSFER_OUT[1],
            summary=_TRANSFER_OUT[2],
        localrule: True
        run:
            _copy_pairs(input, output)

    rule transfer_length_prefix_derived:
        """transfer_length_prefix's outputs from the store."""
        input:
            derived_files(_prefix_instance(), _PREFIX_OUT),
        output:
            tex=_PREFIX_OUT[0],
            csv=_PREFIX_OUT[1],
        localrule: True
        run:
            _copy_pairs(input, output)

    ruleorder: reference_claims_derived > reference_claims
    ruleorder: repetition_rounds_derived > repetition_rounds
    ruleorder: transfer_length_derived > transfer_length
    ruleorder: transfer_length_prefix_derived > transfer_length_prefix

if STORE_DERIVED:

    rule derived_store:
        """Store every derived output of this plan under its current key (computing what is not
        stored) and, in a plan of the whole profile, drop the other keys of each rule instance."""
        input:
            [o for _instance, outputs in _derived_instances() for o in outputs],
        params:
            instances=[(derived_dir(instance), outputs) for instance, outputs in _derived_instances()],
        localrule: True
        run:
            whole = not (config.get("experiments") or config.get("claims"))   # a narrowed plan keeps the rest
            for directory, outputs in params.instances:
                keep = pathlib.Path(directory)
                tmp = keep.with_name(keep.name + ".tmp")     # written whole, then put in place
                _shutil.rmtree(tmp, ignore_errors=True)
                tmp.mkdir(parents=True)
                _copy_pairs(outputs, [str(tmp / pathlib.PurePath(o).name) for o in outputs])
                _shutil.rmtree(keep, ignore_errors=True)
                os.replace(tmp, keep)
                for other in keep.parent.iterdir() if whole else []:
                    if other not in (keep, tmp):
                        _shutil.rmtree(other)
                print(f"derived_store: {keep}")
