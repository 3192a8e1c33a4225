"""`python -m runners.sweep [experiment=NAME] [sweep=NAME] [overrides…]`: the sweep driver (runners/sweep/driver.py)."""

from runners.preflight.command_line import run_cli
from runners.sweep.driver import main
from runners.sweep.grid import check_command_line
from runners.sweep.show import show_if_asked

run_cli(main, "runners.sweep", show=show_if_asked, check=check_command_line)
