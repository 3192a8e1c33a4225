"""What a setting changes, declared once on its config field.

Every field of the configs a job id, a judge key, a call-cache key or a sweep's folder name reads
is made with `setting(Enters.…)`; each of those derives what it hashes (or leaves out) from the
declarations, so that they cannot disagree and a new field must say what it changes:

    JOB_ID      what the agent does (runners/job/identity.py); else a change resumes the same job
    JUDGE_KEY   a verdict (eval/score/records.py): a change re-scores finished records
    CACHE_KEY   which reply a model call gets (runners/models/call_cache.py)
    SWEEP_NAME  the folder of a sweep named by its overrides (runners/sweep/driver.py)

A section whose fields all change the same things (the environment, the method, where records go)
is declared on its field of the root config with `whole=True`; its own fields are not walked.
`runners/core/frozen_fields.py` is separate, on purpose: it freezes which fields old ids hashed.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import typing
from collections.abc import Iterable, Iterator
from typing import Any

from runners.core.paths import KEY as PATH_KEY

_ENTERS = "enters"
_WHOLE = "whole"


class Enters(enum.Flag):
    NOTHING = 0
    JOB_ID = enum.auto()
    JUDGE_KEY = enum.auto()
    CACHE_KEY = enum.auto()
    SWEEP_NAME = enum.auto()


ALL = Enters.JOB_ID | Enters.JUDGE_KEY | Enters.CACHE_KEY | Enters.SWEEP_NAME


def setting(enters: Enters, *, default: Any = dataclasses.MISSING, default_factory: Any = dataclasses.MISSING,
            whole: bool = False, path: str | None = None) -> Any:
    """A config field that declares what it changes; `whole`: a config whose fields all change the same;
    `path`: it holds a path the user gives, of that kind (`runners/core/paths.py`: made absolute at the entry point)."""
    metadata: dict[str, Any] = {_ENTERS: enters, _WHOLE: whole}
    if path is not None:
        metadata[PATH_KEY] = path
    return dataclasses.field(default=default, default_factory=default_factory, metadata=metadata)


class Undeclared(TypeError):
    """A config field made without `setting(...)`."""


def _declaration(f: dataclasses.Field[Any], owner: type) -> Enters | None:
    """What `f` declares, else what the nearest base class declares for the field it overrides (a
    subclass that only changes a default, as each benchmark's `name`); None when none does."""
    for field in (f, *(_field(base, f.name) for base in owner.__mro__[1:])):
        value = field.metadata.get(_ENTERS) if field is not None else None
        if isinstance(value, Enters):
            return value
    return None


def _field(cls: type, name: str) -> dataclasses.Field[Any] | None:
    if not dataclasses.is_dataclass(cls):
        return None
    return next((g for g in dataclasses.fields(cls) if g.name == name), None)


def enters(f: dataclasses.Field[Any], owner: type) -> Enters:
    """What field `f` of config class `owner` changes; `Undeclared` when it does not say."""
    value = _declaration(f, owner)
    if value is None:
        raise Undeclared(f"config field {owner.__name__}.{f.name} does not declare what it changes: make it with "
                         "setting(Enters.JOB_ID | JUDGE_KEY | CACHE_KEY | SWEEP_NAME, or Enters.NOTHING) "
                         "(runners/core/config_fields.py)")
    return value


def declared(cls: type) -> dict[str, Enters]:
    """Every field of the config class `cls` with what it changes (`Undeclared` for one that does not say)."""
    return {f.name: enters(f, cls) for f in dataclasses.fields(cls)}


def names(classes: Iterable[type], flag: Enters, *, present: bool = True) -> tuple[str, ...]:
    """The fields of `classes` (in order, each once) that change `flag` (`present=False`: that do not).
    A plugin's field that declares nothing counts as changing everything, as every field did before
    fields declared it (at its default it still moves no id: runners/core/frozen_fields.py); the
    built-in configs declare every field (tests/runners/core/test_config_fields.py). Kept per
    (classes, flag, present): a class's fields do not change, and a judge's key asks on every score."""
    return _names(tuple(classes), flag, present)


@functools.cache
def _names(classes: tuple[type, ...], flag: Enters, present: bool) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for cls in classes:
        for f in dataclasses.fields(cls):
            e = _declaration(f, cls)
            if bool((ALL if e is None else e) & flag) == present:
                out[f.name] = None
    return tuple(out)


def nested_class(f: dataclasses.Field[Any], owner: type) -> type | None:
    """The config class field `f` holds (its type, or the class in `X | None`), None for a value."""
    hint = typing.get_type_hints(owner)[f.name]
    for t in (hint, *typing.get_args(hint)):
        if isinstance(t, type) and dataclasses.is_dataclass(t):
            return t
    return None


def is_whole(f: dataclasses.Field[Any]) -> bool:
    return bool(f.metadata.get(_WHOLE))


def walk(cls: type, path: str = "", extra_classes: dict[str, list[type]] | None = None) -> Iterator[tuple[str, Enters, bool]]:
    """(dotted path, what it changes, whether its subtree is cut off) for every field below `cls`;
    a field holding a config is walked unless it is declared `whole`. `extra_classes` names, by
    dotted path, more classes a field may hold (every model kind's config under `model`)."""
    for f in dataclasses.fields(cls):
        e = enters(f, cls)
        here = f"{path}{f.name}"
        inner = nested_class(f, cls)
        yield here, e, inner is None or is_whole(f)
        if inner is not None and not is_whole(f):
            seen: set[type] = set()
            for sub in [inner, *(extra_classes or {}).get(here, [])]:
                if sub not in seen:
                    seen.add(sub)
                    yield from walk(sub, f"{here}.", extra_classes)


def values(obj: Any, flag: Enters) -> dict[str, Any]:
    """The fields of config `obj` declared to change `flag`, with their values (a plugin's config
    whose fields declare nothing: none of them)."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)
            if (e := _declaration(f, type(obj))) is not None and e & flag}


def changed(obj: Any, flag: Enters) -> dict[str, Any]:
    """`values` without those at their declared default (a setting left alone changes no key)."""
    out = {}
    for f in dataclasses.fields(obj):
        e = _declaration(f, type(obj))
        if e is not None and e & flag:
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
            if getattr(obj, f.name) != default:
                out[f.name] = getattr(obj, f.name)
    return out


def undeclared(cls: type, extra_classes: dict[str, list[type]] | None = None) -> list[str]:
    """The dotted paths of the fields below `cls` (walked as `walk` does) that declare nothing."""
    out, todo = [], [(cls, "")]
    while todo:
        owner, path = todo.pop()
        for f in dataclasses.fields(owner):
            here = f"{path}{f.name}"
            if _declaration(f, owner) is None:
                out.append(f"{here} ({owner.__name__}.{f.name})")
            inner = nested_class(f, owner)
            if inner is not None and not is_whole(f):
                todo.extend((sub, f"{here}.") for sub in dict.fromkeys([inner, *(extra_classes or {}).get(here, [])]))
    return sorted(out)
