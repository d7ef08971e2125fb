"""`python -m textrl.cli <command> ...`."""

import sys

from . import main

sys.exit(main())
