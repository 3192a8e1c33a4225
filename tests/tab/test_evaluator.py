"""The evaluator view of a real episode (the agent loop, a scripted model, the real environment):
tab calls, their results, status lines and the finish check go; everything else stays as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from runners.agent.loop import run_episode
from runners.config.runner import AgentConfig
from runners.models import ScriptedModelConfig
from runners.models.scripted import ScriptedModel
from tab.config import TabConfig
from tab.tab import Tab
from tab.tools import TOOL_NAMES
from tests.tab.test_support import write_files

SCRIPT = [
    {"content": "Planning.", "tool_calls": [
        {"name": "tab_add", "arguments": {"requirements": ["Hotel standards per night"]}},
        {"name": "bash", "arguments": {"command": "ls policies"}}]},
    {"tool_calls": [{"name": "tab_add", "arguments": {"requirements": ["Meal allowance"]}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "cat policies/hotel.md"}}]},
    {"content": "Resolving.", "tool_calls": [
        {"name": "tab_review", "arguments": {}},
        {"name": "tab_resolve", "arguments": {"id": "r1", "status": "done", "entries": ["L1"]}}]},
    {"tool_calls": [{"name": "read", "arguments": {"path": "policies/missing.md"}}]},
    {"content": "Done."},
    {"content": "Finished."},
]


def episode(tmp_path: Path) -> tuple[list[dict[str, Any]], Tab]:
    root = tmp_path / "ws"
    write_files(root, {"policies/hotel.md": "Article 7 Hotel standards\nUp to 500 per night.\n"})
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(t) + "\n" for t in SCRIPT))
    tab = Tab(root, TabConfig())
    env = WorkspaceEnv(root, EnvConfig(sandbox="none"), [tab])
    model = ScriptedModel(ScriptedModelConfig(kind="scripted", name="scripted", script=str(script)))
    result = run_episode(model, env, "Write a hotel guide.", AgentConfig())
    env.close()
    assert result.stop_reason == "finished" and result.final_answer == "Finished."
    return result.messages, tab


def test_evaluator_view_removes_every_tab_trace(tmp_path: Path) -> None:
    messages, tab = episode(tmp_path)
    view = tab.evaluator_view(messages)
    calls = [c["function"]["name"] for m in view for c in m.get("tool_calls", [])]
    assert calls == ["bash", "bash", "read"]
    tools = [m for m in view if m["role"] == "tool"]
    assert [m["name"] for m in tools] == ["bash", "bash", "read"]
    assert all("[tab]" not in m["content"] and m["appendix"] == "" for m in tools)
    assert tools[1]["content"].startswith("Article 7 Hotel standards\nUp to 500 per night.")
    assert "[tab]" in next(m for m in messages if m.get("tool_call_id") == tools[1]["tool_call_id"])["content"]
    assert not any(m.get("stop_hook") for m in view)  # the finish check is gone
    assert [m["content"] for m in view if m["role"] == "assistant"] == ["Planning.", None, "Resolving.", None, "Done.", "Finished."]
    system = view[0]
    assert "## The tab" not in system["content"] and "## The tab" in messages[0]["content"]
    assert [t["function"]["name"] for t in system["tools"]] == ["read", "bash"]


def test_evaluator_view_keeps_everything_else(tmp_path: Path) -> None:
    messages, tab = episode(tmp_path)
    view = tab.evaluator_view(messages)
    originals = iter(messages)
    edited = {"assistant": {"tool_calls"}, "tool": {"content", "appendix"}, "system": {"content", "tools"}}
    for kept in view:
        source = next(m for m in originals if m["time"] == kept["time"] and m["role"] == kept["role"]
                      and m.get("tool_call_id") == kept.get("tool_call_id"))
        same = set(source) - edited.get(source["role"], set())
        assert {k: kept.get(k) for k in same} == {k: source[k] for k in same}
    dropped = [m for m in messages if m not in view]
    assert {m["role"] for m in dropped} <= {"assistant", "tool", "user", "system"}
    # dropped: the tab-only assistant turn, 4 tab results, the finish check, and the edited ones
    assert sum(1 for m in dropped if m["role"] == "tool" and m["name"] in TOOL_NAMES) == 4
    assert sum(1 for m in dropped if m.get("stop_hook")) == 1
    assert the_user_task_is_kept(view)


def the_user_task_is_kept(view: list[dict[str, Any]]) -> bool:
    return [m["content"] for m in view if m["role"] == "user"] == ["Write a hotel guide."]


def test_evaluator_view_without_a_tab_trace_is_unchanged(tmp_path: Path) -> None:
    tab = Tab(tmp_path, TabConfig())
    messages = [
        {"role": "user", "content": "Do it."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "name": "bash", "content": "out\nother plugin line",
         "appendix": "other plugin line", "chars": 3},
    ]
    assert tab.evaluator_view(messages) == messages
