"""`python -m runners.sweep [experiment=NAME] [sweep=NAME] [overrides…]`: the sweep driver (runners/sweep/driver.py)."""

from runners.config.cli import run_cli
from runners.sweep.driver import main

run_cli(main, "runners.sweep")
