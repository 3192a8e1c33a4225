"""A loaded benchmark: its tasks, and the judge that scores them by its own protocol."""

from __future__ import annotations

from dataclasses import dataclass, field

from runners.core.task import Task


class BenchmarkError(ValueError):
    """A benchmark's data is missing or malformed; the message says which path or field."""


@dataclass
class Benchmark:
    name: str
    default_judge: str
    task_list: list[Task] = field(default_factory=list)
    _by_id: dict[str, Task] | None = field(default=None, init=False, repr=False, compare=False)

    def tasks(self) -> list[Task]:
        return list(self.task_list)

    def task(self, task_id: str) -> Task:
        """By id, from an index made at the first lookup (an actor looks up each of its jobs' tasks)."""
        if self._by_id is None:
            self._by_id = {}
            for t in self.task_list:
                self._by_id.setdefault(t.id, t)
        found = self._by_id.get(task_id) or next((t for t in self.task_list if t.id == task_id), None)
        if found is not None:
            return found
        raise KeyError(f"benchmark {self.name!r} has no task {task_id!r}; tasks: {_id_list(self.task_list)}")


def _id_list(tasks: list[Task], n: int = 20) -> str:
    ids = [t.id for t in tasks]
    return ", ".join(ids[:n]) + (f", … ({len(ids)} in all)" if len(ids) > n else "")


def select(tasks: list[Task], ids: list[str], limit: int | None, name: str) -> list[Task]:
    """Keep `ids` (in that order; unknown ids are an error), then the first `limit`."""
    if ids:
        by_id = {t.id: t for t in tasks}
        unknown = [i for i in ids if str(i) not in by_id]
        if unknown:
            raise BenchmarkError(f"benchmark {name!r} has no task(s) {unknown}; tasks: {_id_list(tasks)}")
        tasks = [by_id[str(i)] for i in ids]
    if limit is not None:
        tasks = tasks[: max(limit, 0)]
    return tasks
