"""The OfficeQA Pro reward rule, as named versions pinned to commits of databricks/officeqa `reward.py`.

    309dc01  newest (default): last FINAL_ANSWER tag, the direct-answer guard, unit agreement,
             bracketed lists regrouped at commas (eval/judges/officeqa_reward/guarded.py)
    6158125  the guard rejecting prose around a numeric answer, lists in any order, accounting
             parentheses and currency symbols normalised
    6da3ee1  as 6158125 without the accounting and currency normalisation
    23c8760  the first guard (prose rejected), then the earlier lenient matching
    460ad51  the rule published with the Pro CSV: first tag, untagged and multi-line answers
             accepted, any matching number counts (so "A or B" passes); commas removed only
             inside thousands groups (eval/judges/officeqa_reward/legacy.py)
    0da20e9  the first release: as 460ad51 but every comma removed before numbers are read

Upstream commits that need no name of their own: 5f40742 differs from 0da20e9 in one docstring line;
243a7e9 scores as 460ad51 (it changes a default tolerance no caller relies on, and lets an empty
prediction score 0 where 460ad51 raised); 2a2c3b0 and 7b72ae5 hold 460ad51's file.

Selected with `benchmark.reward=<version>`; the version is written into each scores.json.
The rule is re-implemented here from the benchmark's description and behaviour, not copied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from eval.judges.officeqa_reward import guarded, legacy

REPO = "databricks/officeqa"
TOLERANCES = {"acc0": 0.0, "acc1": 0.01}


@dataclass(frozen=True)
class RewardVersion:
    name: str
    commit: str
    summary: str
    extract: Callable[[str], str | None]
    match: Callable[[str, str | None, float], tuple[bool, str]]

    @property
    def label(self) -> str:
        """How records name the rule: `databricks/officeqa reward.py@<commit>`."""
        return f"{REPO} reward.py@{self.commit}"


VERSIONS: dict[str, RewardVersion] = {
    v.name: v
    for v in (
        RewardVersion("309dc01", "309dc01", "direct-answer guard, last tag, ordered lists", guarded.extract, guarded.match),
        RewardVersion("6158125", "6158125", "guard rejecting prose, lists in any order, accounting parentheses",
                      guarded.extract, partial(guarded.match, rules=guarded.R6158125)),
        RewardVersion("6da3ee1", "6da3ee1", "guard rejecting prose, units must agree, no accounting parentheses",
                      guarded.extract, partial(guarded.match, rules=guarded.R6DA3EE1)),
        RewardVersion("23c8760", "23c8760", "first guard (prose rejected), then lenient matching",
                      guarded.extract, partial(guarded.match, rules=guarded.R23C8760)),
        RewardVersion("460ad51", "460ad51", "published with officeqa_pro.csv: first tag, lenient matching",
                      legacy.extract, partial(legacy.match, prepare=legacy.drop_thousands_commas)),
        RewardVersion("0da20e9", "0da20e9", "first release: first tag, lenient matching, all commas dropped",
                      legacy.extract, partial(legacy.match, prepare=legacy.drop_all_commas)),
    )
}
DEFAULT = "309dc01"


def version(name: str) -> RewardVersion:
    """The named version; a clear error listing the valid ones otherwise."""
    if name not in VERSIONS:
        raise ValueError(f"unknown OfficeQA reward version {name!r}; valid: {', '.join(VERSIONS)} (default {DEFAULT})")
    return VERSIONS[name]


def extract_final_answer(message: str | None, reward: str = DEFAULT) -> str | None:
    """The answer the version reads from the agent's final message (None: nothing to score)."""
    return version(reward).extract(message or "")


def score_answer(ground_truth: str, predicted: str | None, tolerance: float = 0.0, reward: str = DEFAULT) -> tuple[bool, str]:
    """Whether `predicted` (already extracted) answers `ground_truth` within `tolerance`, and why."""
    if predicted is None:
        return False, "no answer in the final message"
    return version(reward).match(ground_truth.strip(), predicted, tolerance)


__all__ = ["DEFAULT", "TOLERANCES", "VERSIONS", "RewardVersion", "extract_final_answer", "score_answer", "version"]
