"""A harness test never passes CI by skipping: where RUNNINGTAB_AGENTS_REQUIRED is set (.ci/run), a
program it needs that is absent fails it, naming what is missing; elsewhere it skips, saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import conftest
from tests.helpers import harness_jobs


class _Item:
    def __init__(self, mark: pytest.MarkDecorator) -> None:
        self.mark = mark.mark

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self.mark if self.mark.name == name else None


def test_an_absent_harness_skips_here_and_fails_where_it_is_required(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness_jobs, "PREFIX", str(tmp_path))
    monkeypatch.delenv(harness_jobs.REQUIRED, raising=False)
    skip = harness_jobs.installed("gemini_cli", "mini_swe_agent", sandbox=False)
    assert skip.mark.name == "skipif" and skip.mark.args == (True,)
    assert "gemini_cli, mini_swe_agent" in skip.mark.kwargs["reason"] and str(tmp_path) in skip.mark.kwargs["reason"]
    conftest.pytest_runtest_setup(_Item(skip))  # a skip mark is pytest's to apply: the hook lets it through

    monkeypatch.setenv(harness_jobs.REQUIRED, "1")
    absent = harness_jobs.installed("gemini_cli", sandbox=False)
    assert absent.mark.name == "absent"
    with pytest.raises(pytest.fail.Exception, match=r"required but absent: .*does not hold gemini_cli \(\.ci/agents-up\.sh\)"):
        conftest.pytest_runtest_setup(_Item(absent))


def test_an_installed_harness_runs_whether_required_or_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "mini-swe-agent" / "bin" / "mini"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    monkeypatch.setattr(harness_jobs, "PREFIX", str(tmp_path))
    for required in ("", "1"):
        monkeypatch.setenv(harness_jobs.REQUIRED, required)
        mark = harness_jobs.installed("mini_swe_agent", sandbox=False)
        assert mark.mark.name == "skipif" and mark.mark.args == (False,)
