"""`python -m eval.score`: see eval/score/rescore.py."""

import sys

from eval.score.rescore import main

sys.exit(main())
