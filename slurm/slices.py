"""Job-array slices of a grid (`grid.slice=I/N`): which specs array task I of N runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def slice_specs(specs: Sequence[T], index: int, count: int) -> list[T]:
    """Array task `index` of `count`: every `count`-th spec from `index`. Each spec lands in exactly
    one slice, and every slice mixes all cells, so slices take about equally long."""
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"grid.slice={index}/{count} is not a slice: need 0 <= I < N, e.g. grid.slice=0/4")
    return list(specs[index::count])


def parse_slice(text: str) -> tuple[int, int]:
    """`"I/N"` -> (I, N), with an error that shows the expected form."""
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"grid.slice={text!r} is not of the form I/N (e.g. grid.slice=0/4)") from None
    slice_specs([], index, count)
    return index, count
