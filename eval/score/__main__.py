"""`python -m eval.score`: see eval/score/cli.py."""

import sys

from eval.score.cli import main

sys.exit(main())
