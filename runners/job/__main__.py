"""`python -m runners.job task=ID [overrides…]`: one job in-process, without Ray (runners/job/main.py)."""

from runners.config.cli import run_cli
from runners.job.main import main

run_cli(main, "runners.job")
