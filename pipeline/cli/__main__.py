"""`python -m pipeline.cli`: the diprank command."""
import sys

from pipeline.cli.main import main

sys.exit(main())
