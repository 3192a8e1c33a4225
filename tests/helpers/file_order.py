"""The order the suite's files run in: the longest first.

Under pytest-xdist's `--dist loadfile` a worker takes the next whole file of the queue each time it
runs out of work. xdist queued the files by their number of tests (`tests/conftest.py` turns that
off), and the longest files have few tests (vLLM's, the Slurm node's, the signal tests): they came
last, so a slow start of theirs became the run's tail. Longest first, the last files are seconds
long (docs/measurements.md, "The suite's time, third pass"). A file missing from the list runs
after the listed ones: a `slow` one first, then the rest, each group in collection order.
"""

from __future__ import annotations

import pytest

# The files of more than ~20 s in a full run, longest first (`pytest --durations`, summed by file);
# tests/test_file_order.py checks that each exists.
LONGEST: tuple[str, ...] = (
    "tests/runners/models/test_vllm.py",
    "tests/slurm/test_e2e.py",
    "tests/runners/sweep/test_signals.py",
    "tests/runners/models/test_call_cache.py",
    "tests/eval/prepare/test_prepare.py",
    "tests/runners/models/test_lifeline.py",
    "tests/runners/sweep/test_sweep.py",
    "tests/eval/benchmarks/test_builtin.py",
    "tests/runners/sweep/test_ray_start.py",
    "tests/eval/harbor/test_export.py",
    "tests/runners/harnesses/test_job.py",
    "tests/runners/sweep/test_budget.py",
    "tests/runners/models/test_rate_limit.py",
    "tests/runners/tracking/test_wandb_cells.py",
    "tests/eval/tac/test_solvable.py",
    "tests/runners/sweep/test_resume_s3_kill.py",
    "tests/runners/sweep/test_closing_lines.py",
    "tests/runners/sweep/test_kill_resume_wandb.py",
    "tests/runners/core/test_record_attacks.py",
    "tests/runners/sweep/test_ray_multinode.py",
)


def file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def longest_first(items: list[pytest.Item]) -> None:
    """Sort `items` in place: the listed files by rank, then other files with a `slow` test, then the
    rest; a file's tests stay together and in their order."""
    rank = {path: i for i, path in enumerate(LONGEST)}
    slow_files = {file_of(i) for i in items if i.get_closest_marker("slow") is not None}

    def key(item: pytest.Item) -> int:
        path = file_of(item)
        return rank.get(path, len(rank) + (0 if path in slow_files else 1))

    items.sort(key=key)  # stable: collection order within a rank
