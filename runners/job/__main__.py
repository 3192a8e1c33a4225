"""`python -m runners.job task=ID [overrides…]`: one job in-process, without Ray (runners/job/main.py)."""

from runners.job.main import check_command_line, main
from runners.preflight.command_line import run_cli

run_cli(main, "runners.job", check=check_command_line)
