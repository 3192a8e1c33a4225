"""Issue 50 item 9: what the sweep prints back to the user is in the form they typed. The Ctrl-C
line's resume command said `python -m runners.sweep` to a user who typed `runningtab sweep`, and
`runningtab sweep --help` listed the typed schemas (`llamacpp_schema`, `builtin_schema`…) and the
pricing files as if they were choices."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runners.cli import typed_command
from runners.config.schema import groups_help
from runners.sweep.driver import resume_command

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("orig_argv", "prefix"),
    [
        (["/home/me/.venv/bin/python", "/home/me/.venv/bin/runningtab", "sweep", "experiment=demo"], "runningtab sweep"),
        ([".venv/bin/python", "-m", "runners.sweep", "experiment=demo"], ".venv/bin/python -m runners.sweep"),
        (["python3", "-m", "runners", "sweep", "experiment=demo"], "python3 -m runners sweep"),
        (["python", "-c", "..."], "python -m runners.sweep"),  # called from code: the module's own form
    ],
)
def test_the_resume_line_repeats_the_form_typed(orig_argv: list[str], prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "orig_argv", orig_argv)
    assert resume_command(["experiment=demo", "grid.seed=[0,1]"]) == f"{prefix} experiment=demo 'grid.seed=[0,1]'"
    assert typed_command("runners.sweep", orig_argv) == prefix.split()


def test_help_lists_the_choices_and_nothing_else(tmp_path: Path) -> None:
    listed = dict(line.split(": ", 1) for line in groups_help().splitlines())
    assert set(listed) == {"agent", "benchmark", "cluster", "env", "experiment", "judge", "method", "model", "storage", "tracker"}
    assert "_schema" not in groups_help() and "vllm_cpu" in listed["model"] and "officeqa_paper" in listed["benchmark"]
    (tmp_path / "mine" / "model").mkdir(parents=True)
    (tmp_path / "mine" / "model" / "qwen_mine.yaml").write_text("defaults: [vllm, _self_]\nid: qwen_mine\n")
    assert "qwen_mine" in groups_help([f"file://{tmp_path / 'mine'}"])


@pytest.mark.slow
def test_runningtab_sweep_help_shows_them(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "runners", "sweep", "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr[-2000:]
    groups = r.stdout[r.stdout.index("== Configuration groups =="):r.stdout.index("== Config ==")]
    assert "model: deepseek_v4_flash, gemini38_flash, gpt54_nano, openai, scripted, smollm2, vllm, vllm_cpu\n" in groups, groups
    assert "_schema" not in groups and "pricing:" not in groups and "tokens:" not in groups, groups
