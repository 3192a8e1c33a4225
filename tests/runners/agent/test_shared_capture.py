"""The tab method's two capturing plugins (the tab's read log and the shown log every job keeps)
capture each observation once between them, and both record what it showed."""

from __future__ import annotations

from pathlib import Path

import pytest

from envs.environment import appendix_of
from envs.protocol import Observation
from runners.agent.methods import build_plugins
from runners.config.runner import MethodConfig
from tab.capture.observe import Capture
from tab.config import TabConfig

TEXT = "Hotel limit 500 per night\nMeal allowance 100 per day\n"


@pytest.mark.parametrize("method", [MethodConfig(name="tab", tab=TabConfig()), MethodConfig(name="dci")])
def test_an_observation_is_captured_once_for_the_tab_and_the_shown_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: MethodConfig
) -> None:
    (tmp_path / "policy.md").write_text(TEXT)
    captures: list[str] = []
    real = Capture.__call__
    monkeypatch.setattr(Capture, "__call__", lambda self, obs: captures.append(obs.tool) or real(self, obs))
    plugins = build_plugins(method, tmp_path, "output", 0)
    for turn in (1, 2):
        appendix_of(plugins, Observation("bash", {"command": "cat policy.md"}, TEXT.rstrip("\n"), False, turn))
    assert captures == ["bash", "bash"]  # one capture an observation, not one per plugin
    shown = plugins[-1].record()["excerpts"]
    assert shown == [{"turn": 1, "path": "policy.md", "excerpt": TEXT.rstrip("\n")}]  # the re-read shows nothing new
    if method.tab is not None:
        log = plugins[0].record()["read_log"]
        assert log and {(e["path"], e["excerpt"]) for e in log} == {("policy.md", TEXT.rstrip("\n"))}
