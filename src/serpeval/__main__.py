"""``python -m serpeval`` runs the command line."""

import sys

from serpeval.cli import main

sys.exit(main())
