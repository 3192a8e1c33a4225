"""Every refusal of a preflight at once: a user with no key, no price and no data learns all three
from one run, each with the command or override that fixes it, instead of one per run.

A check raises `ConfigError` for what it refuses; `Refusals` runs independent checks one after
another, keeps each message (once, in order) and raises them together as `ConfigErrors`
(runners/config/schema.py, beside `ConfigError`, which it is, so every caller that catches one still does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from eval.benchmarks.base import BenchmarkError
from runners.config.schema import ConfigError, ConfigErrors
from runners.core.registry import DottedPathError, UnknownName

T = TypeVar("T")
__all__ = ["ConfigErrors", "Refusals", "messages_of"]


def messages_of(error: ConfigError) -> list[str]:
    return list(error.messages) if isinstance(error, ConfigErrors) else [str(error)]


class Refusals:
    """Runs checks that do not depend on each other, keeping what each refuses."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def run(self, check: Callable[..., T], *args: object) -> T | None:
        """`check(*args)`'s result, or None when it refused (its message kept)."""
        try:
            return check(*args)
        except ConfigError as e:
            self.messages.extend(messages_of(e))
            return None
        except (UnknownName, DottedPathError, BenchmarkError) as e:  # a name no registry has: a refusal too
            self.messages.append(str(e))
            return None

    def raise_any(self) -> None:
        if self.messages:
            raise ConfigErrors(self.messages)
