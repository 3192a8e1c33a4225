"""The tab's settings: the four ablation switches of the paper's Table 4, display limits, wording overrides."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from tab.tab_texts import validate_overrides

# The ablation switches, in Table 4's order: every reader of tab settings (the record, Table 4, the
# tracker's config keys) iterates this tuple, so a new switch is added here and in TabConfig only.
SWITCHES = ("capture", "review", "evidence_check", "finish_check")


@dataclass
class TabConfig:
    """One switch per component, so each ablation is configuration rather than a code path.

    `capture=False` also removes what draws on the capture: the read log, the candidates, the review
    and the evidence check. `texts` overrides any wording of `tab/tab_texts.py` by its name.
    """

    capture: bool = True
    review: bool = True
    evidence_check: bool = True
    finish_check: bool = True
    review_lines: int = 3  # read-log entries shown per open requirement (its best line each)
    review_candidates: int = 3  # unopened candidates shown per open requirement
    line_chars: int = 200  # a shown line is cut around its first matching word to this length
    status_paths: int = 3  # new entries named in one status line before "+N more"
    texts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("review_lines", "review_candidates", "line_chars", "status_paths"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"tab.{name} must be a positive integer, got {value!r}")
        validate_overrides(self.texts)

    @property
    def reviews(self) -> bool:
        """The review exists only over a captured read log."""
        return self.capture and self.review

    @property
    def checks_evidence(self) -> bool:
        """The evidence check draws on the read log, so no capture means no check."""
        return self.capture and self.evidence_check

    @classmethod
    def coerce(cls, config: TabConfig | Mapping[str, Any] | None) -> TabConfig:
        """Accept a TabConfig, a mapping (e.g. Hydra's DictConfig) or None (the defaults)."""
        if config is None:
            return cls()
        if isinstance(config, cls):
            return config
        known = {f.name for f in fields(cls)}
        given = dict(config.items())
        unknown = sorted(set(given) - known)
        if unknown:
            raise ValueError(f"unknown tab settings {unknown}; known: {sorted(known)}")
        if "texts" in given:
            given["texts"] = {str(k): str(v) for k, v in dict(given["texts"]).items()}
        return cls(**given)

    def settings(self) -> dict[str, bool]:
        """The switches, as the record stores them."""
        return {name: bool(getattr(self, name)) for name in SWITCHES}
