"""`python -m runners.plan [experiment=NAME] [OVERRIDES…]` (`runningtab plan`): the plan of the sweep
these overrides would run (the same command line as `runningtab sweep`), its records folder and the
preflight's verdict; nothing runs. `runningtab sweep … --cfg job` prints the same with the config."""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = """usage: runningtab plan [experiment=NAME] [OVERRIDES…]   (python -m runners.plan)

The plan of the sweep `runningtab sweep` would run with the same overrides: its jobs per benchmark
and in all, their expected cost (a range: stated token figures × conf/pricing/, or a pilot sweep's
records with plan.pilot=DIR) and wall time (cluster.max_in_flight, plan.latency_s), where its records
would go and the preflight's verdict. Runs nothing. Settings: plan.latency_s, plan.pilot, plan.tokens,
plan.tasks (docs/sweeps.md#the-plan)."""


def main(argv: Sequence[str] | None = None) -> int:
    from runners.preflight.command_line import (
        multirun_refusal,
        null_group_refusal,
        root_choices,
        sweep_value_refusal,
    )
    from runners.sweep.show import show_grid

    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        print(USAGE)
        return 0
    message = multirun_refusal(args, "runners.sweep") or null_group_refusal(args) or sweep_value_refusal(args, "runners.sweep")
    if message:
        print(message, file=sys.stderr)
        return 1
    return show_grid(args, root_choices(args), full=False)


if __name__ == "__main__":
    sys.exit(main())
