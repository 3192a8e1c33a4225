"""One registry convention for every pluggable kind (benchmarks, judges, model kinds, method plugins,
storage backends): a name → implementation table that also accepts a full dotted path.

    BENCHMARKS = Registry("benchmark", error=BenchmarkError)
    BENCHMARKS.add("native", "eval.benchmarks.native")      # a dotted path: imported on first lookup
    @KINDS.register("echo")                                  # or the object itself
    class EchoModel: ...
    BENCHMARKS.get("native")                  # a registered name
    BENCHMARKS.get("myplug.bench:MyBench")    # or `package.module:attr` / `package.module.Attr`

A dotted path lets a user plug in their own implementation from a module on `PYTHONPATH` without
editing the project: the config names it (`benchmark.name=myplug.bench:MyBench`). Built-ins are
registered as dotted paths so that importing a registry imports nothing heavy.

Dependency-free on purpose (standard library only), so that both `eval/` and `runners/` import it
without an import cycle.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class UnknownName(ValueError):
    """A name that is neither registered nor an importable dotted path; the message lists the names."""


class DottedPathError(LookupError):
    """A dotted path whose module is not found, or whose module lacks the attribute."""


def is_dotted(name: str) -> bool:
    """Whether `name` is a dotted path (`pkg.mod:attr` or `pkg.mod.Attr`) rather than a registered name."""
    return ":" in name or "." in name


class Registry(Generic[T]):
    """Names of one kind of implementation (`kind` says which, for messages).

    `error` is the exception class lookups raise (it must accept one message argument; default
    `UnknownName`); `reserved` are names the caller handles before a lookup (e.g. judge `auto`),
    listed first in the error so that it shows every valid choice.
    """

    def __init__(self, kind: str, *, error: type[Exception] = UnknownName, reserved: tuple[str, ...] = ()) -> None:
        self.kind, self.error, self.reserved = kind, error, reserved
        self._targets: dict[str, T | str] = {}
        self._resolved: dict[str, T] = {}

    def add(self, name: str, target: T | str) -> None:
        """Register `target` (the implementation, or a dotted path to it, imported on first lookup)."""
        if is_dotted(name) or not name:
            raise ValueError(f"{self.kind} name {name!r}: a registered name has no '.' or ':' (those mean a dotted path)")
        if name in self._targets or name in self.reserved:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._targets[name] = target

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of `add`: `@REGISTRY.register("name")` above a class or function."""

        def decorate(obj: T) -> T:
            self.add(name, obj)
            return obj

        return decorate

    def names(self) -> list[str]:
        """The registered names, in registration order (without the reserved ones)."""
        return list(self._targets)

    def __contains__(self, name: object) -> bool:
        return name in self._targets

    def __iter__(self) -> Iterator[str]:
        return iter(self._targets)

    def __len__(self) -> int:
        return len(self._targets)

    def get(self, name: str) -> T:
        """The implementation for a registered name or a dotted path; raises `self.error` listing the
        valid names when it is neither, or when the dotted path does not import."""
        if name in self._resolved:
            return self._resolved[name]
        if name in self._targets:
            target = self._targets[name]
            obj: Any = self._import(target, name) if isinstance(target, str) else target
        elif is_dotted(name):
            obj = self._import(name, name)
        else:
            raise self.error(f"unknown {self.kind} {name!r}; {self._choices()}")
        self._resolved[name] = obj
        return obj  # type: ignore[no-any-return]

    def check(self, name: str) -> None:
        """Fail now (as `get` would) for a name that cannot be looked up; a registered name is not imported."""
        if name not in self._targets:
            self.get(name)

    def _choices(self) -> str:
        valid = ", ".join([*self.reserved, *self._targets])
        plural = f"{self.kind}es" if self.kind.endswith("s") else f"{self.kind}s"
        return f"valid {plural}: {valid}; or the dotted path of your own implementation (package.module:Name)"

    def _import(self, path: str, name: str) -> Any:
        try:
            return import_dotted(path)
        except DottedPathError as e:
            raise self.error(f"{self.kind} {name!r}: {e}; {self._choices()}") from e


def import_dotted(path: str) -> Any:
    """The object at `package.module:attr` (attr may be dotted) or `package.module.Attr` (or a module).

    Raises DottedPathError when the module is not found or lacks the attribute; an error raised while
    importing the user's module itself (a bug in it, a missing dependency) propagates unchanged."""
    if ":" in path:
        module, _, attr = path.partition(":")
        return _getattr_path(_import_module(module, path), attr, module)
    try:
        return _import_module(path, path)  # a module (`eval.benchmarks.native`)
    except DottedPathError:
        if "." not in path:
            raise
    module, _, attr = path.rpartition(".")
    return _getattr_path(_import_module(module, path), attr, module)


def _import_module(module: str, path: str) -> Any:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and (module == e.name or module.startswith(e.name + ".")):  # the module itself is missing
            raise DottedPathError(f"cannot import {module!r} for {path!r} (is its folder on PYTHONPATH?)") from None
        raise


def _getattr_path(obj: Any, attr: str, module: str) -> Any:
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise DottedPathError(f"module {module!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj
