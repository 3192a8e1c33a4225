"""The model-call cache's mode and folder are decided once, when the config is made typed
(runners/config/schema.py `to_root`): the preflight checks the folder the jobs will use, and nothing
changes it after the checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from runners.config.schema import ConfigError
from runners.models.call_cache import ROOT_VARIABLE
from runners.preflight.command_line import root_choices
from runners.preflight.config_checks import check_configs
from runners.sweep.grid import compose_sweep


def _cells(out: Path, *overrides: str) -> list:
    script = out.parent / "script.jsonl"
    script.write_text('{"content": "done"}\n')
    argv = ["grid.benchmark=[builtin]", "grid.method=[dci]", "grid.model=[scripted]", "grid.seed=[0,1]", f"out={out}",
            f"model.script={script}", "sweep=c", "judge=none", *overrides]
    return compose_sweep(argv, root_choices(argv))[2]


def test_a_sweeps_preflight_sees_the_cache_folder_its_jobs_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ROOT_VARIABLE)
    out = tmp_path / "out"
    assert {(c.model.cache, c.model.cache_dir) for c in _cells(out)} == {("read_write", str(out / ".cache" / "calls"))}
    monkeypatch.setenv(ROOT_VARIABLE, str(tmp_path / "shared"))
    assert {(c.model.cache, c.model.cache_dir) for c in _cells(out)} == {("read_write", str(tmp_path / "shared"))}
    assert {(c.model.cache, c.model.cache_dir) for c in _cells(out, "model.cache=off")} == {("off", None)}


def test_a_cache_folder_that_cannot_be_written_is_refused_by_the_preflight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ROOT_VARIABLE)
    out = tmp_path / "out"
    out.mkdir()
    (out / ".cache").write_text("a file where the cache's folder goes")
    with pytest.raises(ConfigError, match=r"model.cache_dir=.*/out/\.cache/calls"):
        check_configs(_cells(out))
    check_configs(_cells(out, "model.cache=off"))  # no cache: no folder to write


def test_a_relative_cache_variable_is_one_error_before_any_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ROOT_VARIABLE, "relative/calls")
    with pytest.raises(ConfigError, match=f"{ROOT_VARIABLE}='relative/calls' is relative"):
        _cells(tmp_path / "out")


def test_a_single_job_keeps_the_cache_off_unless_asked(compose_cfg, tmp_path: Path) -> None:
    cfg = compose_cfg([f"out={tmp_path}"])
    assert (cfg.model.cache, cfg.model.cache_dir) == ("off", None)
    cfg = compose_cfg([f"out={tmp_path}", "model.cache=read"])
    assert cfg.model.cache_dir == str(tmp_path / "call-cache")  # the test session's $RUNNINGTAB_CALL_CACHE (conftest)
