"""Each production harness's tools read as ours (`Harness.as_ours`), with their own argument keys, and
what the tab captures from them: the rows of docs/harnesses.md's fidelity table on capture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import Observation, ToolCall
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
    "gemini_cli run_shell_command": ("gemini_cli", "run_shell_command", {"command": "cat policies/travel.md"},
                                     f"<untrusted_context>\nOutput: {POLICY.rstrip()}\nExit Code: 1\nProcess Group PGID: 7\n</untrusted_context>"),
    "gemini_cli run_shell_command in a folder": ("gemini_cli", "run_shell_command", {"command": "cat travel.md", "dir_path": "policies"},
                                                 f"<untrusted_context>\nOutput: {POLICY.rstrip()}\nProcess Group PGID: 7\n</untrusted_context>"),
    "gemini_cli read_file": ("gemini_cli", "read_file", {"file_path": "policies/travel.md"}, POLICY),
    "gemini_cli read_file of lines": ("gemini_cli", "read_file", {"file_path": "policies/travel.md", "start_line": 1, "end_line": 2},
                                      "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 1-2 of 3 total lines.\n"
                                      "Action: To read more of the file, use 'start_line'.\n\n--- FILE CONTENT (truncated) ---\n" + POLICY.rstrip()),
    "gemini_cli grep_search": ("gemini_cli", "grep_search", {"pattern": "Article", "dir_path": "policies", "context": 15},
                               'Found 2 matches for pattern "Article" in path "policies":\n---\nFile: travel.md\n'
                               + "".join(f"L{i}: {line}\n" for i, line in enumerate(LINES, 1)) + "---"),
    "mini_swe_agent bash": ("mini_swe_agent", "bash", {"command": "cat policies/travel.md"},
                            '{\n  "returncode": 0,\n  "output": ' + json.dumps(POLICY) + "\n}"),
    "mini_swe_agent bash, a long output": ("mini_swe_agent", "bash", {"command": "cat policies/travel.md"},
                                           json.dumps({"returncode": 0, "output_head": LINES[0] + "\n", "output_tail": LINES[1] + "\n",
                                                       "elided_chars": 0, "warning": "Output too long."})),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_harness_read_is_captured_as_the_files_own_lines(env: WorkspaceEnv, case: str) -> None:
    harness, tool, args, shown = CASES[case]
    appendix, tab = _observe(env, harness, tool, args, shown)
    assert appendix.startswith("[tab]")  # the status line, as after our own tool
    # Grep and grep_search are read as `rg -n`: the file's lines, each behind its number (as our own capture keeps them)
    expected = "\n".join(f"{i}:{line}" for i, line in enumerate(LINES, 1)) if tool in ("Grep", "grep_search") else POLICY.rstrip("\n")
    assert [(e["path"], e["excerpt"]) for e in tab["read_log"]] == [("policies/travel.md", expected)]


def test_claude_code_glob_lists_candidates(env: WorkspaceEnv) -> None:
    _, tab = _observe(env, "claude_code", "Glob", {"pattern": "*.md", "path": "policies"},
                      "policies/other.md\npolicies/travel.md")
    assert sorted(c["path"] for c in tab["candidates"]) == ["policies/other.md", "policies/travel.md"] and tab["read_log"] == []


def test_codex_results_lose_what_varies_from_run_to_run() -> None:
    shown = HARNESSES.get("codex").shown("Chunk ID: 7f3a\nWall time: 0.01 seconds\nOutput:\nx")
    assert shown == "Output:\nx"


def test_gemini_cli_shell_results_lose_their_process_ids_but_not_the_commands_output() -> None:
    shown = HARNESSES.get("gemini_cli").shown
    result = "<untrusted_context>\nOutput: Process Group PGID: 3\nx\nExit Code: 2\nBackground PIDs: 41, 42\nProcess Group PGID: 40\n</untrusted_context>"
    assert shown(result) == "<untrusted_context>\nOutput: Process Group PGID: 3\nx\nExit Code: 2\n</untrusted_context>"
    assert shown("Process Group PGID: 40") == "Process Group PGID: 40"  # not a shell result: as it is


def test_gemini_cli_listings_are_candidates(env: WorkspaceEnv) -> None:
    root = env.agent_root  # where the agent sees the workspace (/workspace in the sandbox); Gemini CLI lists absolute paths
    _, tab = _observe(env, "gemini_cli", "glob", {"pattern": "**/*.md"},
                      f'Found 2 file(s) matching "**/*.md" within {root}, sorted by modification time (newest first):\n'
                      f"{root}/policies/travel.md\n{root}/policies/other.md")
    assert sorted(c["path"] for c in tab["candidates"]) == ["policies/other.md", "policies/travel.md"] and tab["read_log"] == []


def test_gemini_cli_directory_listing_is_candidates(env: WorkspaceEnv) -> None:
    _, tab = _observe(env, "gemini_cli", "list_directory", {"dir_path": "policies"},
                      "Directory listing for /workspace/policies:\nother.md (24 bytes)\ntravel.md (91 bytes)")
    assert sorted(c["path"] for c in tab["candidates"]) == ["policies/other.md", "policies/travel.md"] and tab["read_log"] == []


def test_mini_swe_agent_stops_by_its_submit_command_alone() -> None:
    finishes = HARNESSES.get("mini_swe_agent").finishes

    def calls(*commands: str) -> list[ToolCall]:
        return [ToolCall(f"c{i}", "bash", json.dumps({"command": c})) for i, c in enumerate(commands)]

    assert finishes(calls("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"))
    assert finishes(calls("echo 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT' && cat answer.txt"))
    assert not finishes([])  # an answer without a command: mini-swe-agent asks the model again
    assert not finishes(calls("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT now"))  # its first line is not the marker
    assert not finishes(calls("ls", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"))
    assert not finishes([ToolCall("c", "bash", "{not json")])
    assert HARNESSES.get("gemini_cli").finishes([]) and not HARNESSES.get("gemini_cli").finishes(calls("ls"))


@pytest.mark.parametrize("harness, tool, args", [
    ("claude_code", "Bash", {"cmd": "cat x"}),  # another harness's argument key
    ("codex", "exec_command", {"command": "cat x"}),
    ("claude_code", "Write", {"file_path": "x", "content": "y"}),  # writing is not reading
    ("codex", "apply_patch", {"input": "*** Begin Patch"}),
    ("gemini_cli", "run_shell_command", {"cmd": "cat x"}),
    ("gemini_cli", "write_file", {"file_path": "x", "content": "y"}),
    ("gemini_cli", "replace", {"file_path": "x", "old_string": "a", "new_string": "b", "instruction": "i"}),
    ("mini_swe_agent", "bash", {"cmd": "cat x"}),
])
def test_what_is_not_a_read_of_a_harness_is_not_captured(harness: str, tool: str, args: dict[str, Any]) -> None:
    assert HARNESSES.get(harness).as_ours(tool, args, "text") is None
