"""Sweep-level results kept across builds of a report, by a digest of everything they are computed from.

An analysis asks `KeptResults.get(inputs, compute, decode)`: a result the last build kept under the same
inputs is taken as it is, else `compute()` runs. At 20,000 jobs most of a re-build's analysis time
is Table 1's paired statistics (a bootstrap and a permutation test per comparison), and a resumed
sweep's new jobs touch only a few comparisons. The manifest stores the results this build used
(`used`), so what a build keeps never outgrows the sweep. Results are JSON values.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Untrusted(Exception):
    """The manifest's kept data cannot be used (the message says why): rebuild everything."""


def inputs_digest(*parts: Any) -> str:
    """A digest of `parts`: bytes (numpy arrays' `tobytes()`) as they are, anything else by `repr`."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        data = part if isinstance(part, bytes) else repr(part).encode()
        h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


class KeptResults:
    """The last build's results (`old`, from the manifest) and those this build used."""

    def __init__(self, old: dict[str, Any] | None = None) -> None:
        self._old = old or {}
        self.used: dict[str, Any] = {}

    def get(self, inputs: tuple[Any, ...], compute: Callable[[], Any], decode: Callable[[Any], T]) -> T:
        """The result for `inputs`: the kept one when a build computed it before, else `compute()`'s
        (its JSON form). `decode` turns that into the result and raises `Untrusted` when it cannot
        (a damaged manifest)."""
        key = inputs_digest(*inputs)
        if key not in self.used:
            self.used[key] = self._old[key] if key in self._old else compute()
        return decode(self.used[key])
