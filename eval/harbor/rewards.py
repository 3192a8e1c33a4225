"""`reward.json` from our scores: Harbor reads a flat map of numbers.

`reward` is the task's headline metric (rubric pass rate; TheAgentCompany's Score for checkpoints;
Acc@0% for answers); every metric of scores.json follows under its own name, then one key per item:
`rubric_<i>` (1 passed, 0 not), `checkpoint_<i>` (points earned). The full verdicts, with their
reasons, are in scores.json beside it.
"""

from __future__ import annotations

from typing import Any

HEADLINE = {"rubrics": "rubric_pass_rate", "checkpoints": "score", "answer": "acc0"}


def rewards(scores: dict[str, Any]) -> dict[str, float]:
    metrics = {k: float(v) for k, v in scores["metrics"].items()}
    out = {"reward": metrics.get(HEADLINE.get(scores.get("kind", ""), ""), 0.0), **metrics}
    for item in scores.get("items", []):
        kind, index = item.get("kind"), item.get("index")
        if kind == "rubric":
            out[f"rubric_{index}"] = 1.0 if item.get("passed") is True else 0.0
        elif kind == "checkpoint":
            out[f"checkpoint_{index}"] = float(item.get("earned", 0))
    return out
