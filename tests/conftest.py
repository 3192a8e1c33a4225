"""Shared fixtures: composing the real Hydra config, and writing small native-format benchmarks."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from runners.config.schema import CONF_DIR, RootConfig, register, to_root
from runners.models.call_cache import ROOT_VARIABLE as CALL_CACHE
from tests.helpers import shared_ray
from tests.helpers.file_order import longest_first


def compose_root(overrides: list[str]) -> RootConfig:
    """The config the entry points would build for these overrides."""
    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        return to_root(compose("config", overrides=overrides))


def write_native(root: Path, tasks: list[dict[str, Any]], files: dict[str, str]) -> Path:
    """A native benchmark: `tasks.jsonl` plus `workspaces/<name>/...` from {relpath: text}."""
    for rel, text in files.items():
        p = root / "workspaces" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return root


def write_script(path: Path, turns: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return path


@pytest.fixture(scope="module")
def own_ray() -> Iterator[None]:
    """For a module that starts a Ray of its own shape, or whose sweeps' actors must see the
    environment their driver was given (a shim on PATH, a key, a server owner) or whose checks
    are about the local Ray's own processes: the session's shared one is hidden from it."""
    with shared_ray.apart():
        yield


@pytest.fixture
def compose_cfg():
    return compose_root


def pytest_configure(config: pytest.Config) -> None:
    """The model-call cache of this session's sweeps is its own, never the checkout's `.cache/calls`
    (a call cached by an earlier run would answer where a test needs a real call). Under xdist's
    loadfile the files go out in the order `longest_first` gives them: xdist would otherwise sort
    them by their number of tests, which sent the long files of few tests (vLLM's, Slurm's) last."""
    os.environ.setdefault(CALL_CACHE, tempfile.mkdtemp(prefix="rt-calls-"))
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # what --no-loadscope-reorder sets


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest files first, so that xdist's workers finish together (tests/helpers/file_order.py)."""
    longest_first(items)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `absent` (a program it needs is not here where it is required: CI's production
    harnesses, tests/helpers/harness_jobs.installed) fails saying what is missing, before it starts
    anything. A `slow` test may start sweeps: they join the session's one local Ray (tests/helpers/shared_ray.py)."""
    absent = item.get_closest_marker("absent")
    if absent is not None:
        pytest.fail(f"required but absent: {absent.args[0]}", pytrace=False)
    if item.get_closest_marker("slow") is not None and "own_ray" not in getattr(item, "fixturenames", ()):
        shared_ray.ensure()


def pytest_sessionfinish(session: pytest.Session) -> None:
    shared_ray.stop()


@pytest.fixture(autouse=True)
def _own_call_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's sweeps and jobs cache model calls in a folder of their own (tests that share a
    cache name it: `model.cache_dir=`)."""
    monkeypatch.setenv(CALL_CACHE, str(tmp_path / "call-cache"))
