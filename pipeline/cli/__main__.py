"""`python -m pipeline.cli`: the diprank command."""

import sys

from pipeline.cli.main import command_line

sys.exit(command_line())
