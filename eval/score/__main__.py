"""`python -m eval.score RECORDS… [--judge NAME] …`: score job records now or again later (eval/judges/scoring.py)."""

import sys

from eval.judges.scoring import main

sys.exit(main())
