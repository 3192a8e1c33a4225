"""Every path a config holds is absolute once the entry point has converted it (issue 35.1).

The fields are found by walking the config classes, not listed here: a field declared with
`path_field` is set to a relative path, and the converted config must hold it absolute against the
folder the command was started in. A new field whose name says it holds a path but that is not
declared fails `test_every_field_named_like_a_path_is_declared_one`.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

import pytest

from runners.config.schema import RootConfig, group_options
from runners.core.paths import (
    PATH_OR_NAME,
    absolute,
    absolute_overrides,
    path_fields,
    path_kind,
)
from tests.conftest import compose_root

# Fields whose names look like paths but hold something else.
NOT_PATHS = {
    "agentcompany.Config.file_server": "mounted | served",
    "ServerConfig.executable": "a command's words, run as given (docs/models.md)",
    "ServerConfig.tool_call_parser": "a vLLM parser name",
}
LOOKS_LIKE_A_PATH = re.compile(r"path|dir|file|script|^out$|corpus|questions|binds|python|workspaces|dataset|pricing|executable|selection")


def _config_classes() -> set[type]:
    from eval.benchmarks import BENCHMARKS, config_class
    from runners.core.storage import STORAGES, storage_config_class
    from runners.models.registry import KINDS
    from runners.models.registry import config_class as model_class

    todo = [RootConfig, *(config_class(n) for n in BENCHMARKS.names()), *(model_class(n) for n in KINDS.names()),
            *(c for c in (storage_config_class(n) for n in STORAGES.names()) if c is not None)]
    seen: set[type] = set()
    while todo:
        cls = todo.pop()
        if cls in seen or not dataclasses.is_dataclass(cls):
            continue
        seen.add(cls)
        for hint in typing.get_type_hints(cls).values():
            todo.extend(_dataclasses_in(hint))
    return seen


def _dataclasses_in(hint: object) -> list[type]:
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return [hint]
    return [c for arg in typing.get_args(hint) for c in _dataclasses_in(arg)]


def _label(cls: type, name: str) -> str:
    module = cls.__module__.rsplit(".", 1)[-1]
    return f"{module}.{cls.__name__}.{name}" if cls.__name__ == "Config" else f"{cls.__name__}.{name}"


def test_every_field_named_like_a_path_is_declared_one() -> None:
    undeclared = []
    for cls in _config_classes():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            holds_text = str in (hints[f.name], *typing.get_args(hints[f.name]), *[a for t in typing.get_args(hints[f.name]) for a in typing.get_args(t)])
            if holds_text and LOOKS_LIKE_A_PATH.search(f.name) and path_kind(f) is None and _label(cls, f.name) not in NOT_PATHS:
                undeclared.append(_label(cls, f.name))
    assert undeclared == [], "declare each with path_field(…) (runners/core/paths.py), or list it in NOT_PATHS saying what it holds"


def _every_group() -> list[list[str]]:
    """A config per benchmark, per model and per judge: between them, every config class."""
    return ([[f"benchmark={b}"] for b in group_options("benchmark")] + [[f"model={m}", "model.name=m"] for m in group_options("model")]
            + [[f"judge={j}"] for j in group_options("judge")])


@pytest.mark.parametrize("choice", _every_group(), ids=lambda c: c[0])
def test_no_relative_path_survives_the_conversion(choice: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    declared = path_fields(compose_root(choice))
    benchmark_paths = any(k.startswith("benchmark.") and k != "benchmark.path" for k in declared)
    keys = [k for k in declared if not (k.startswith("data.") and benchmark_paths)]  # one place says where data is
    for key in keys:
        (tmp_path / "rel" / key).mkdir(parents=True)  # a path-or-name is a path when it names something there
    single = [k for k in keys if not isinstance(declared[k][1], list)]
    lists = [k for k in keys if isinstance(declared[k][1], list)]
    cfg = compose_root([*choice, *(f"{k}=rel/{k}" for k in single), *(f"{k}=[rel/{k}]" for k in lists)])
    got = path_fields(cfg)
    assert set(got) == set(declared)
    for key in keys:
        values = got[key][1] if key in lists else [got[key][1]]
        assert values == [str(tmp_path / "rel" / key)], key
    assert all(v in (None, "") or Path(v).is_absolute() for _, (_, value) in got.items() for v in (value if isinstance(value, list) else [value]))


def test_a_path_or_name_stays_a_name_unless_it_names_something(tmp_path: Path) -> None:
    assert absolute("Qwen/Qwen3-0.6B", tmp_path, PATH_OR_NAME) == "Qwen/Qwen3-0.6B"
    (tmp_path / "Qwen" / "Qwen3-0.6B").mkdir(parents=True)
    assert absolute("Qwen/Qwen3-0.6B", tmp_path, PATH_OR_NAME) == str(tmp_path / "Qwen" / "Qwen3-0.6B")
    assert absolute("/data/x/", tmp_path) == "/data/x/"  # an absolute path is kept as given (ids hash some as text)
    assert absolute("~/x", tmp_path) == str(Path.home() / "x")


def test_overrides_for_another_folder_name_absolute_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    over = ["model=scripted", "model.script=s.jsonl", "out=o", "benchmark.path=b", "method=dci", "data.officeqa=D", "+x=y"]
    cfg = compose_root(over[:5])
    assert absolute_overrides(over, [cfg], Path("/launch")) == [
        "model=scripted", "model.script=/launch/s.jsonl", "out=/launch/o", "benchmark.path=/launch/b", "method=dci",
        "data.officeqa=/launch/D", "+x=y"]
