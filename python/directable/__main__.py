"""``python -m directable ...``: the command line of :mod:`directable.cli`."""
import sys

from .cli import main

sys.exit(main())
