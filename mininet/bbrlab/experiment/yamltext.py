"""YAML as the project reads it: PyYAML's safe loading, through libyaml's C parser when PyYAML
was built with it (Debian's python3-yaml is).

The C parser feeds the same SafeConstructor and resolver as the pure-Python one, so a document
gives the same Python values either way (tests/test_yamltext.py compares both over
every spec and registry); it parses about ten times faster, which every `bbrlab run` and the
pipeline's planning pay for each spec they read."""
import yaml

#: The loader class every reader of a YAML file here uses (spec.py extends it).
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text):
    """The document of `text` (str or bytes), like yaml.safe_load."""
    return yaml.load(text, Loader=SafeLoader)
