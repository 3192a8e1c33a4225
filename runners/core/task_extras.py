"""A benchmark's task extras: a typed dataclass whose every field says how it enters a job's id.

`Task.extra` holds what the judge needs beyond the task's record (a TheAgentCompany task's folder,
an OfficeQA question's source files, the reward version). A benchmark declares them as a subclass
of `TaskExtras`, each field made with `extra_field(how)`:

    VALUE    the value enters the id as it is
    NAME     a location, by its last part (a folder's name): the same data elsewhere is the same job
    CONTENT  a location, by the digest of what it holds (runners/job/identity.py)
    JUDGING  a judging choice or the judge's own data (a reward version): never in the job id; a
             change re-scores the records (the benchmark config's field enters the judge key)

Readers take them through one typed accessor, `Task.extra_as(cls)` (as Inspect AI's
`Sample.metadata_as`): the task's own extras when they are that class, else that class built from
the fields it declares. A `TaskExtras` is also a read-only mapping of its fields, so code that read
the plain dict keeps working; a benchmark that gives a plain dict (native's free-form `extra`, a
plugin's) has it hashed whole, as before.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

_KEY = "job_id"
_OMIT_DEFAULT = "omit_default"


class IdPart(enum.Enum):
    """How one extras field enters a job's id."""

    VALUE = "value"
    NAME = "name"
    CONTENT = "content"
    JUDGING = "judging"


def extra_field(how: IdPart, *, default: Any = dataclasses.MISSING, default_factory: Any = dataclasses.MISSING,
                omit_default: bool = False) -> Any:
    """A field of a `TaskExtras`; `omit_default`: at its default it is left out of the id, as tasks
    that never had the field were hashed without it."""
    return dataclasses.field(default=default, default_factory=default_factory, metadata={_KEY: how, _OMIT_DEFAULT: omit_default})


def id_part(f: dataclasses.Field[Any], owner: type) -> IdPart:
    """How field `f` of `owner` enters the id; a field made without `extra_field` is an error."""
    how = f.metadata.get(_KEY)
    if not isinstance(how, IdPart):
        raise TypeError(f"{owner.__name__}.{f.name} does not say how it enters a job id: declare it with "
                        "extra_field(IdPart.VALUE | NAME | CONTENT | JUDGING) (runners/core/task_extras.py)")
    return how


class TaskExtras(Mapping[str, Any]):
    """Base of a benchmark's extras dataclass (`@dataclass(frozen=True)` subclasses)."""

    def __getitem__(self, key: str) -> Any:
        if key not in self._names():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def _names(self) -> tuple[str, ...]:
        """The fields the task has: those left out at their default (`omit_default`) it has not."""
        return tuple(f.name for f in dataclasses.fields(self)  # type: ignore[arg-type]
                     if not (f.metadata.get(_OMIT_DEFAULT) and getattr(self, f.name) == _default(f)))

    def identity_fields(self) -> Iterator[tuple[str, IdPart, Any]]:
        """(name, how, value) of each field that enters the job id, in declaration order."""
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            how = id_part(f, type(self))
            value = getattr(self, f.name)
            if how is IdPart.JUDGING or (f.metadata.get(_OMIT_DEFAULT) and value == _default(f)):
                continue
            yield f.name, how, value


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


E = TypeVar("E", bound=TaskExtras)


def extras_as(extra: Mapping[str, Any], cls: type[E]) -> E:
    """`extra` as `cls`: itself when it is one, else `cls` from the keys it declares (others ignored)."""
    if isinstance(extra, cls):
        return extra
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    try:
        return cls(**{k: v for k, v in extra.items() if k in names})
    except TypeError as e:
        raise ValueError(f"task extras {sorted(extra)} cannot be read as {cls.__name__}: {e}") from None
