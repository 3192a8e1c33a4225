"""How a sweep ends (runners/sweep/ending.py): the last line and which exit code, read from what its
jobs became. Issue 48 (5): a sweep the budget alone held exits 3; any other not-result (an outage's
errored jobs among them) exits 4 with a line that says how many, why and how to run them again."""

from __future__ import annotations

from collections import Counter

from runners.sweep.ending import Ending


def test_the_budget_alone_holds_a_sweep_and_anything_else_is_not_results() -> None:
    held = Ending(6, Counter(result=3, errored=1, not_started=2), Counter(budget=1))
    assert held.not_results == 3 and held.budget_only(2)
    outage = Ending(6, Counter(result=3, errored=2, not_started=1), Counter(budget=1, model_error=1))
    assert not outage.budget_only(1)  # a provider's error beside the budget's: exit 4, not 3
    unscored = Ending(4, Counter(result=2, unscored=1, not_started=1))
    assert not unscored.budget_only(1)
    line = outage.line("p", "python -m runners.sweep sweep=p")
    assert line.startswith("sweep p: 3 of 6 planned job(s) are not results: 2 errored (budget ×1, model_error ×1); 1 not started"), line
    assert line.endswith("run them again with: python -m runners.sweep sweep=p"), line
