"""``python -m shardplan check|plan [OPTIONS] DOC...``: the shardplan command
line over the binding, with its output and exit status (see ``_cli.py``)."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
