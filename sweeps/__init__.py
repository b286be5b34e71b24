"""The sweep scripts and what they share. A sweep script run as a command (`python
sweeps/ear_xnli.py`) imports this package first: a plugin module named in XLT_PLUGINS that is
missing or raises ends it here, in one line naming the module and exit 2 (bad input), not in
a traceback from whichever import first reads the registry."""

import sys

from xlt_core.errors import ConfigError
from xlt_core.registry import check_plugins

try:
    check_plugins()
except ConfigError as error:
    print(f"error: {error}", file=sys.stderr)
    raise SystemExit(2) from None  # sweeps.cli.EXIT_BAD_INPUT (cli imports this package)
