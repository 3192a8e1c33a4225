"""TheAgentCompany's `scoring` module: checkpoints and the strategies that combine them.

Same names and semantics as `workspaces/base_image/scoring.py` of TheAgentCompany, so that the
benchmark's evaluators run unchanged: `Checkpoint(total, result)`, `Result(checkpoints,
scoring_strategy)` with `final_score` ({"total", "result"}) and `to_dict()`, and the strategies
`bonus_for_completing_final`, `bonus_for_completing_any`,
`bonus_for_completing_any_of_given_checkpoints`. Pure Python: no imports from RunningTab.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Strategy = Callable[[list["Checkpoint"]], dict[str, int]]


@dataclass
class Checkpoint:
    total: int
    result: int

    def __post_init__(self) -> None:
        if not isinstance(self.total, int) or isinstance(self.total, bool):
            raise TypeError(f"total must be an integer, got {type(self.total)}")
        if not isinstance(self.result, int):
            raise TypeError(f"result must be an integer, got {type(self.result)}")
        self.result = int(self.result)  # a bool result (True/False) counts as 1/0
        if self.total < 0:
            raise ValueError(f"total cannot be negative, got {self.total}")
        if self.result < 0:
            raise ValueError(f"result cannot be negative, got {self.result}")
        if self.result > self.total:
            raise ValueError(f"result ({self.result}) cannot be greater than total ({self.total})")


def sum_strategy(checkpoints: list[Checkpoint]) -> dict[str, int]:
    """The default: the sum of results over the sum of totals."""
    return {"total": sum(c.total for c in checkpoints), "result": sum(c.result for c in checkpoints)}


@dataclass
class Result:
    checkpoints: list[Checkpoint]
    scoring_strategy: Strategy | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.checkpoints, list):
            raise TypeError(f"checkpoints must be a list, got {type(self.checkpoints)}")
        if self.scoring_strategy is None:
            self.scoring_strategy = sum_strategy

    @property
    def final_score(self) -> dict[str, int]:
        assert self.scoring_strategy is not None
        return self.scoring_strategy(self.checkpoints)

    @classmethod
    def from_dict(cls, data: dict[str, Any], scoring_strategy: Strategy | None = None) -> Result:
        return cls([Checkpoint(**c) for c in data["checkpoints"]], scoring_strategy)

    def to_dict(self) -> dict[str, Any]:
        return {
            "checkpoints": [{"total": c.total, "result": c.result} for c in self.checkpoints],
            "final_score": self.final_score,
        }


def bonus_for_completing_final(checkpoints: list[Checkpoint]) -> dict[str, int]:
    """Full points for every checkpoint when the final one has its full score."""
    if not checkpoints:
        return {"total": 0, "result": 0}
    total = sum(c.total for c in checkpoints)
    last = checkpoints[-1]
    result = total if last.result == last.total else sum(c.result for c in checkpoints)
    return {"total": total, "result": result}


def bonus_for_completing_any(checkpoints: list[Checkpoint]) -> dict[str, int]:
    """Full points for the first checkpoint when any checkpoint has its full score.

    (Many first checkpoints look for evidence in the trajectory that later ones imply.)
    """
    if not checkpoints:
        return {"total": 0, "result": 0}
    total = sum(c.total for c in checkpoints)
    if any(c.result == c.total for c in checkpoints):
        result = checkpoints[0].total + sum(c.result for c in checkpoints[1:])
    else:
        result = sum(c.result for c in checkpoints)
    return {"total": total, "result": result}


def bonus_for_completing_any_of_given_checkpoints(given_checkpoints: list[int]) -> Strategy:
    """Like `bonus_for_completing_any`, but only the given (1-based) checkpoints count as 'any'."""

    def strategy(checkpoints: list[Checkpoint]) -> dict[str, int]:
        if not checkpoints:
            return {"total": 0, "result": 0}
        total = sum(c.total for c in checkpoints)
        chosen = [checkpoints[i - 1] for i in given_checkpoints if 0 < i <= len(checkpoints)]
        if any(c.result == c.total for c in chosen):
            result = checkpoints[0].total + sum(c.result for c in checkpoints[1:])
        else:
            result = sum(c.result for c in checkpoints)
        return {"total": total, "result": result}

    return strategy


STRATEGIES: dict[str, Strategy] = {
    "sum": sum_strategy,
    "bonus_for_completing_final": bonus_for_completing_final,
    "bonus_for_completing_any": bonus_for_completing_any,
}
