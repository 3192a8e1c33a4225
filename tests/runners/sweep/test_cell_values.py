"""Per-cell values on an axis: an override that interpolates a grid axis (`model.script_dir=DIR/${agent.harness}`)
is filled by each cell, before its paths are made absolute, whatever the sweep's root chose."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig

from runners.config.schema import CONF_DIR, register, to_root
from runners.preflight.command_line import root_choices
from runners.sweep.driver import command_overrides
from runners.sweep.grid import cells, compose_sweep


def test_the_driver_hands_the_grid_each_override_as_typed_not_as_the_root_resolved_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hydra's record of the command line is a config node: read resolved, `${agent.harness}` became
    the root's harness (dci), and every cell was fed dci's scripts."""
    typed = ["model=scripted", f"model.script_dir={tmp_path}/${{agent.harness}}", "grid.agent=[dci,codex]"]
    argv = [*root_choices(typed), *typed]
    monkeypatch.setattr("sys.argv", ["runners.sweep", *argv])  # Hydra's config of the run reads it
    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        HydraConfig.instance().set_config(compose("config", overrides=argv, return_hydra_config=True))
        try:
            overrides = command_overrides()
            assert overrides == argv
            root = to_root(compose("config", overrides=argv))
            got = [(c.agent.harness, c.model.script_dir) for c in cells(root, overrides, None)]
        finally:
            HydraConfig.instance().cfg = None  # type: ignore[assignment]
    assert got == [("dci", f"{tmp_path}/dci"), ("codex", f"{tmp_path}/codex")]


@pytest.mark.parametrize("axis", ["method", "agent"])
def test_a_relative_interpolated_path_is_made_absolute_per_cell(axis: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    values = {"method": ["dci", "runningtab"], "agent": ["dci", "codex"]}[axis]
    key = {"method": "method.name", "agent": "agent.harness"}[axis]
    typed = ["model=scripted", f"model.script_dir=scripts/${{{key}}}", f"grid.{axis}=[{','.join(values)}]"]
    _, _, configs = compose_sweep(typed, root_choices(typed))
    assert [c.model.script_dir for c in configs] == [str(tmp_path / "scripts" / v) for v in values]


def test_cfg_job_shows_each_cells_own_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from runners.sweep.show import show_grid

    typed = ["model=scripted", f"model.script_dir={tmp_path}/${{agent.harness}}", "grid.agent=[dci,codex]", "--cfg", "job"]
    assert show_grid(typed, root_choices(typed)) == 0
    shown = capsys.readouterr().out
    assert "scripted (agent=dci):" in shown and f"script_dir: {tmp_path}/dci\n" in shown
    assert "scripted (agent=codex):" in shown and f"script_dir: {tmp_path}/codex\n" in shown
