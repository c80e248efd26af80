"""The files an R script sources (bbrlab/experiment/rsources.py), on small constructed trees: each
way the analysis writes a source() call, relative paths after chdir = TRUE, and the calls it must
refuse rather than miss."""
import pytest

from bbrlab.experiment import rsources


def write(root, files: dict):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_each_form_of_source_call_is_followed(tmp_path):
    write(tmp_path, {
        "analysis/fig.R": 'script_dir <- "x"\n# source("commented.R")\n'
                          'source(file.path(script_dir, "lib", "load.R"), chdir = TRUE)\n'
                          'source(file.path(script_dir, "common.R"))\nstop("no source(\'here\') is a call")\n',
        "analysis/common.R": "A <- 1\n",
        "analysis/lib/load.R": 'for (f in c("a.R", "b.R")) source(f)\nsource("c.R")\n',
        "analysis/lib/a.R": "", "analysis/lib/b.R": "", "analysis/lib/c.R": 'sys.source("a.R", envir = e)\n',
    })
    assert rsources.sources("analysis/fig.R", tmp_path) == [
        "analysis/common.R", "analysis/lib/a.R", "analysis/lib/b.R", "analysis/lib/c.R", "analysis/lib/load.R"]


def test_without_chdir_a_relative_path_is_the_callers_working_directory(tmp_path):
    write(tmp_path, {"analysis/s.R": 'source("analysis/lib/x.R")\n', "analysis/lib/x.R": 'source("analysis/lib/y.R")\n',
                     "analysis/lib/y.R": ""})
    assert rsources.sources("analysis/s.R", tmp_path) == ["analysis/lib/x.R", "analysis/lib/y.R"]


@pytest.mark.parametrize("call, says", [
    ('source(paste0(script_dir, "/x.R"))', "cannot tell which file"),
    ('for (f in files) source(f)', "cannot tell which file"),
    ('source("missing.R")', "which is not there"),
])
def test_a_call_it_cannot_follow_is_an_error_naming_file_and_line(tmp_path, call, says):
    write(tmp_path, {"s.R": f"x <- 1\n{call}\n"})
    with pytest.raises(ValueError, match=says) as err:
        rsources.sources("s.R", tmp_path)
    assert "s.R:2" in str(err.value)
