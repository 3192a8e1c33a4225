"""Looking up the tab's wording (defaults of `tab/prompts.py` plus a config's overrides)."""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter

from tab.prompts import TEXTS


def _fields(template: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in Formatter().parse(template) if name}


def validate_overrides(overrides: Mapping[str, str]) -> None:
    """Raise ValueError when an override names no wording or uses fields its default does not have."""
    for name, text in overrides.items():
        if name not in TEXTS:
            raise ValueError(f"tab.texts.{name}: no such wording; the names are: {', '.join(sorted(TEXTS))}")
        if not isinstance(text, str):
            raise ValueError(f"tab.texts.{name} must be a string, got {type(text).__name__}")
        try:
            extra = _fields(text) - _fields(TEXTS[name])
        except ValueError as e:
            raise ValueError(f"tab.texts.{name} is not a valid format string ({e}); write braces as {{{{ }}}}") from e
        if extra:
            raise ValueError(
                f"tab.texts.{name} uses {sorted(extra)}, which this wording does not provide; "
                f"it may use {sorted(_fields(TEXTS[name])) or 'no fields'}"
            )
        if name.startswith("noun_") and text.count("|") != 1:
            raise ValueError(f"tab.texts.{name} must be 'singular|plural', got {text!r}")


class Texts:
    """The wording in force: `texts.get("add_header", requirements=...)`."""

    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        overrides = dict(overrides or {})
        validate_overrides(overrides)
        self._texts = {**TEXTS, **overrides}

    def get(self, key: str, /, **fields: object) -> str:
        template = self._texts[key]
        return template.format(**fields) if fields or "{" in template else template

    def count(self, n: int, noun: str) -> str:
        """'1 requirement', '6 requirements' (the noun's forms come from the wording)."""
        singular, plural = self._texts[f"noun_{noun}"].split("|")
        return f"{n} {singular if n == 1 else plural}"
