"""Check a Ray cluster file offline with Ray's own validation:
`python -m sweeps.cluster ray_cluster.yaml`.

`prepare_config` merges the provider's defaults (as `ray up` does), `validate_config`
checks the result against Ray's JSON schema and its node-type rules. No cloud call is made.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from xlt_core.errors import DataError


def validate_cluster_file(path: str | Path) -> dict:
    """The prepared (defaults merged) configuration of a valid cluster file; DataError naming
    the file and the offending field otherwise."""
    import jsonschema
    from ray.autoscaler._private.util import prepare_config, validate_config

    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such cluster file")
    try:
        config = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise DataError(f"{path}: not valid YAML ({error})") from None
    if not isinstance(config, dict) or not isinstance(config.get("provider"), dict):
        raise DataError(
            f"{path}: a cluster file is a mapping with a 'provider' section (type, region)"
        )
    try:
        prepared = prepare_config(config)
        validate_config(prepared)
    except jsonschema.ValidationError as error:
        field = "/".join(map(str, error.absolute_path)) or "(top level)"
        raise DataError(f"{path}: field {field}: {error.message}") from None
    except (ValueError, KeyError, RuntimeError) as error:
        raise DataError(f"{path}: {error}") from None
    return prepared


def main(argv: list[str] | None = None) -> int:
    paths = argv if argv is not None else sys.argv[1:]
    try:
        for path in paths or ["ray_cluster.yaml"]:
            prepared = validate_cluster_file(path)
            node_types = ", ".join(prepared["available_node_types"])
            print(f"{path}: valid ({prepared['provider']['type']}, node types {node_types})")
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
