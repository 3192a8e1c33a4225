"""`python -m eval.replay SWEEP …`: today's tab over a finished sweep's trajectories (eval/replay/sweep.py)."""

import sys

from eval.replay.sweep import main

sys.exit(main())
