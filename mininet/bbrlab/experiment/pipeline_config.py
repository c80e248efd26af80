"""The pipeline's configuration (config/<profile>.yaml plus --config) checked against its schema.

    validate(config, schema_path)   fills the schema's defaults into `config` (in place), reads
                                    "true"/"false" of a boolean key as the boolean, and raises ConfigError naming the key and the reason at the
                                    first value the schema refuses

The schema is workflow/schemas/config.schema.yaml (JSON Schema, top-level properties with
defaults). This does what snakemake.utils.validate does, with the jsonschema of Debian 12
(4.10, which snakemake.utils.validate cannot use: it needs the `referencing` registry of 4.18).
"""
from __future__ import annotations

import pathlib

import jsonschema

from . import yamltext


class ConfigError(ValueError):
    """A configuration value the schema refuses; the message names the key."""


def validate(config: dict, schema_path) -> dict:
    """Check `config` against the schema at schema_path (YAML) and return it, changed in place: each
    top-level default the schema has fills a missing key, and a boolean key's "true"/"false"
    string becomes the boolean. Raises ConfigError naming the key (the first refused one in key
    order), the schema's reason and the schema file."""
    schema = yamltext.safe_load(pathlib.Path(schema_path).read_text())
    for key, prop in (schema.get("properties") or {}).items():
        if "default" in prop and key not in config:
            config[key] = prop["default"]
        # --config key=true arrives as the string "true"
        if prop.get("type") == "boolean" and str(config.get(key)).lower() in ("true", "false"):
            config[key] = str(config[key]).lower() == "true"
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(config), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = ".".join(str(p) for p in e.path) or "(top level)"
        raise ConfigError(f"config {where}: {e.message} ({schema_path})")
    return config


def interpreter(executable, workdir) -> str:
    """The Python the pipeline's rules start the testbed's command line with, as their commands
    name it. Snakemake reruns a job whose rule's code changed, and the interpreter's path is in
    that code: named as Snakemake's own `sys.executable`, every run would rerun when Snakemake is
    started by another name of the same interpreter (`.venv/bin/python -m snakemake` against the
    script's `.venv/bin/python3`) or the checkout moves. So: the interpreter's directory's
    `python3` where there is one (in a virtual environment every name is the same interpreter),
    relative to `workdir` (the rules' working directory, the repository) when it lies inside
    it, else absolute."""
    executable = pathlib.Path(executable).absolute()
    canonical = executable.with_name("python3")
    if canonical.exists() and canonical.resolve() == executable.resolve():
        executable = canonical
    try:
        return str(executable.relative_to(pathlib.Path(workdir).absolute()))
    except ValueError:
        return str(executable)
