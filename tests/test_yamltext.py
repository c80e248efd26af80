"""The YAML loader every reader uses (bbrlab/experiment/yamltext.py): libyaml's C parser where
PyYAML has it, giving the same documents as PyYAML's pure-Python safe loader."""
import pathlib

import pytest
import yaml

from bbrlab.experiment import spec, yamltext

REPO = pathlib.Path(__file__).resolve().parents[1]
# Every YAML file the runner and the pipeline read: specs, the registry, schemas, profiles.
FILES = sorted(
    p for pattern in ("mininet/specs/**/*.yaml", "mininet/bbrlab/**/*.yaml", "config/*.yaml",
                      "workflow/schemas/*.yaml", "profiles/**/*.yaml")
    for p in REPO.glob(pattern))


def test_the_files_are_found():
    assert len([p for p in FILES if "/specs/" in str(p)]) >= 40
    assert any(p.name == "variants.yaml" for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_each_file_reads_as_the_pure_python_loader_reads_it(path):
    text = path.read_text()
    assert yamltext.safe_load(text) == yaml.load(text, Loader=yaml.SafeLoader)


def test_the_c_parser_is_used_where_pyyaml_has_it():
    if not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("PyYAML without libyaml here")
    assert yamltext.SafeLoader is yaml.CSafeLoader


def test_types_and_duplicate_keys_as_before():
    text = "a: 1\nb: 1.5e3\nc: [yes, null, '0x10']\nd: 2024-01-01\n"
    assert yamltext.safe_load(text) == yaml.safe_load(text)
    with pytest.raises(spec.SpecError, match=r"key 'a' given twice \(lines 1 and 3\)"):
        spec.parse("a: 1\nb: 2\na: 3\n")
    with pytest.raises(spec.SpecError, match="not valid YAML"):
        spec.parse("a: [1, 2\n")
