"""`python -m runners VERB ARGS…` is `runningtab VERB ARGS…` (runners/cli.py), without the installed script."""

from runners.cli import main

main()
