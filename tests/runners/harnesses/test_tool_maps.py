"""Each production harness's tools read as ours (`Harness.as_ours`), with their own argument keys, and
what the tab captures from them: the rows of docs/harnesses.md's fidelity table on capture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import Observation
from runners.agent.harnesses import HARNESSES
from runners.agent.methods import build_plugins
from runners.config.runner import MethodConfig
from tab.config import TabConfig

POLICY = "Article 7 Hotels are reimbursed at 450 yuan per night.\nArticle 8 Taxi fares need receipts.\n"
LINES = POLICY.rstrip("\n").split("\n")


@pytest.fixture
def env(tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    (ws / "policies").mkdir(parents=True)
    (ws / "policies" / "travel.md").write_text(POLICY)
    (ws / "policies" / "other.md").write_text("Article 1 Other things.\n")
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none"), build_plugins(MethodConfig(name="runningtab", tab=TabConfig()), ws, "output/", 3))
    yield e
    e.close()


def _observe(env: WorkspaceEnv, harness: str, tool: str, args: dict[str, Any], shown: str) -> tuple[str, dict[str, Any]]:
    h = HARNESSES.get(harness)
    ours = h.as_ours(tool, args, h.shown(shown))
    assert ours is not None, (harness, tool)
    name, arguments, output = ours
    appendix = env.observe(Observation(name, arguments, output, False, 1))
    return appendix, next(p for p in env.plugins if p.name == "tab").record()


CASES = {
    "claude_code Bash": ("claude_code", "Bash", {"command": "cat policies/travel.md"}, POLICY.rstrip("\n")),
    "claude_code Read": ("claude_code", "Read", {"file_path": "policies/travel.md"},
                         "".join(f"     {i}→{line}\n" for i, line in enumerate(LINES, 1))),
    "claude_code Grep": ("claude_code", "Grep", {"pattern": "Article", "path": "policies/travel.md", "output_mode": "content"},
                         "\n".join(f"{i}:{line}" for i, line in enumerate(LINES, 1))),
    "codex exec_command": ("codex", "exec_command", {"cmd": "cat policies/travel.md"},
                           "Chunk ID: 7f3a\nWall time: 0.0123 seconds\nProcess exited with code 0\nOutput:\n" + POLICY.rstrip("\n")),
    "codex shell": ("codex", "shell", {"command": ["bash", "-lc", "cat policies/travel.md"]}, POLICY.rstrip("\n")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_harness_read_is_captured_as_the_files_own_lines(env: WorkspaceEnv, case: str) -> None:
    harness, tool, args, shown = CASES[case]
    appendix, tab = _observe(env, harness, tool, args, shown)
    assert appendix.startswith("[tab]")  # the status line, as after our own tool
    # Grep is read as `rg -n` of the file: its lines, each behind its number (as our own capture keeps them)
    expected = shown if tool == "Grep" else POLICY.rstrip("\n")
    assert [(e["path"], e["excerpt"]) for e in tab["read_log"]] == [("policies/travel.md", expected)]


def test_claude_code_glob_lists_candidates(env: WorkspaceEnv) -> None:
    _, tab = _observe(env, "claude_code", "Glob", {"pattern": "*.md", "path": "policies"},
                      "policies/other.md\npolicies/travel.md")
    assert sorted(c["path"] for c in tab["candidates"]) == ["policies/other.md", "policies/travel.md"] and tab["read_log"] == []


def test_codex_results_lose_what_varies_from_run_to_run() -> None:
    shown = HARNESSES.get("codex").shown("Chunk ID: 7f3a\nWall time: 0.01 seconds\nOutput:\nx")
    assert shown == "Output:\nx"


@pytest.mark.parametrize("harness, tool, args", [
    ("claude_code", "Bash", {"cmd": "cat x"}),  # another harness's argument key
    ("codex", "exec_command", {"command": "cat x"}),
    ("claude_code", "Write", {"file_path": "x", "content": "y"}),  # writing is not reading
    ("codex", "apply_patch", {"input": "*** Begin Patch"}),
])
def test_what_is_not_a_read_of_a_harness_is_not_captured(harness: str, tool: str, args: dict[str, Any]) -> None:
    assert HARNESSES.get(harness).as_ours(tool, args, "text") is None
