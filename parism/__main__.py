"""``python -m parism``: the same entry point as the ``parism`` console script."""

import sys

from parism.cli.main import main

sys.exit(main())
