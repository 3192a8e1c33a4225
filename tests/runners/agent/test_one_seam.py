"""One seam: the same scripted conversation (`tab_add`, a file read, `tab_resolve`, a stop) driven through
our own loop and through a production harness's conversation at the endpoint gives the same tool
replies, the same status lines and the same `tab.json` events: both drive one `WorkspaceEnv`."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from runners.agent.harnesses import HARNESSES
from runners.agent.loop import run_episode
from runners.agent.methods import build_plugins
from runners.config.runner import AgentConfig, MethodConfig
from runners.harnesses.conversation import HarnessConversation
from runners.models.scripted import ScriptedModel, ScriptedModelConfig
from tab.config import TabConfig
from tests.conftest import write_script

POLICY = "Article 7 Hotels are reimbursed at 450 yuan per night.\nArticle 8 Taxi fares need receipts.\n"


SHELL = {  # each harness's shell tool, with its own argument key
    "dci": {"name": "bash", "arguments": {"command": "cat policies/travel.md"}},
    "claude_code": {"name": "Bash", "arguments": {"command": "cat policies/travel.md"}},
    "codex": {"name": "exec_command", "arguments": {"cmd": "cat policies/travel.md"}},
    "gemini_cli": {"name": "run_shell_command", "arguments": {"command": "cat policies/travel.md"}},
    "mini_swe_agent": {"name": "bash", "arguments": {"command": "cat policies/travel.md"}},
}
RESULT = {  # each harness's tool result for a command's output, as it sends it back
    "claude_code": lambda out: out, "codex": lambda out: out,
    "gemini_cli": lambda out: f"<untrusted_context>\nOutput: {out}\nProcess Group PGID: 7\n</untrusted_context>",
    "mini_swe_agent": lambda out: json.dumps({"returncode": 0, "output": out}),
}
# how the model stops under each harness: an answer, or mini-swe-agent's submit command
STOP = {"mini_swe_agent": lambda text: {"content": text, "tool_calls": [
    {"name": "bash", "arguments": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}}]}}


def _turns(name: str) -> list[dict[str, Any]]:
    stop = STOP.get(name, lambda text: {"content": text})
    return [
        {"tool_calls": [{"name": "tab_add", "arguments": {"requirements": ["hotel cap per night"]}}]},
        {"tool_calls": [SHELL[name]]},
        {"tool_calls": [{"name": "tab_review", "arguments": {}}]},
        {"tool_calls": [{"name": "tab_resolve", "arguments": {"id": "r1", "status": "done", "entries": "L1"}}]},  # coerced to a list
        {"tool_calls": [{"name": "tab_show", "arguments": {}}]},
        stop("Done."),
        stop("Done, checked."),
    ]


def _env(root: Path) -> WorkspaceEnv:
    ws = root / "ws"
    (ws / "policies").mkdir(parents=True)
    (ws / "policies" / "travel.md").write_text(POLICY)
    cfg = EnvConfig(sandbox="none")
    return WorkspaceEnv(ws, cfg, build_plugins(MethodConfig(name="runningtab", tab=TabConfig()), ws, "output/", 3))


def _model(path: Path, name: str) -> ScriptedModel:
    return ScriptedModel(ScriptedModelConfig(name="s", script=str(write_script(path, _turns(name)))))


def _ours(tmp_path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    env = _env(tmp_path / "ours")
    try:
        res = run_episode(_model(tmp_path / "ours.jsonl", "dci"), env, "Find the hotel cap.", AgentConfig())
        return res.messages, next(p for p in env.plugins if p.name == "tab").record()
    finally:
        env.close()


def _theirs(tmp_path: Path, name: str) -> tuple[list[dict[str, Any]], dict[str, Any], WorkspaceEnv]:
    """The harness's side played by the test: its shell tool runs the command in the workspace, and
    its next request is its history with the result."""
    env = _env(tmp_path / "theirs")
    harness = HARNESSES.get(name)
    talk = HarnessConversation(_model(tmp_path / "theirs.jsonl", name), env, harness, AgentConfig())

    async def drive() -> None:
        history: list[dict[str, Any]] = [{"role": "system", "content": "You are the harness."},
                                         {"role": "user", "content": "Find the hotel cap."}]
        while True:
            reply = await talk.answer(history, [{"type": "function", "function": {"name": SHELL[name]["name"], "parameters": {}}}])
            calls = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in reply.tool_calls]
            history.append({"role": "assistant", "content": reply.content, **({"tool_calls": calls} if calls else {})})
            if harness.finishes(reply.tool_calls):
                return
            for c in reply.tool_calls:
                out = subprocess.run(["bash", "-c", "cat policies/travel.md"], cwd=env.root, capture_output=True, text=True).stdout
                history.append({"role": "tool", "tool_call_id": c.id, "content": RESULT[name](out.rstrip("\n"))})

    try:
        asyncio.run(drive())
        return talk.messages, next(p for p in env.plugins if p.name == "tab").record(), env
    finally:
        env.close()


def _tool_replies(messages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Each tool reply: the tab's own calls whole, a read's status line (what the environment added);
    not the stop hook's answer to a harness's finishing call (compared with our loop's stop hook below)."""
    named = {"Bash": "bash", "exec_command": "bash", "run_shell_command": "bash"}
    return [(named.get(m["name"], m["name"]), m["content"] if m["name"].startswith("tab_") else "", m.get("appendix", ""))
            for m in messages if m["role"] == "tool" and not m.get("stop_hook")]


def _events(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("time", "t")} for e in record["events"]]


@pytest.mark.parametrize("name", ["claude_code", "codex", "gemini_cli", "mini_swe_agent"])
def test_our_loop_and_a_harness_conversation_drive_the_same_environment_alike(tmp_path: Path, name: str) -> None:
    ours, our_tab = _ours(tmp_path)
    theirs, their_tab, env = _theirs(tmp_path, name)
    assert [r[0] for r in _tool_replies(ours)] == ["tab_add", "bash", "tab_review", "tab_resolve", "tab_show"]
    assert _tool_replies(theirs) == _tool_replies(ours)  # the four operations' replies whole, each status line
    assert all(r[2].startswith("[tab]") for r in _tool_replies(ours))  # a status line after each
    assert _events(their_tab) == _events(our_tab)
    assert [e["path"] for e in their_tab["read_log"]] == [e["path"] for e in our_tab["read_log"]] == ["policies/travel.md"]
    stops = [m["content"] for m in theirs if m.get("stop_hook")]
    assert stops == [m["content"] for m in ours if m.get("stop_hook")] and len(stops) == 1  # the finish check, once
    assert theirs[0]["content"].startswith("You are the harness.") and theirs[0]["content"].endswith(env.plugin_prompt())
    assert {t["function"]["name"] for t in theirs[0]["tools"]} >= {"tab_add", "tab_review", "tab_resolve", "tab_show"}
    judged = env.evaluator_view(theirs)  # what judges read: the tab's traces removed, as from our loop's
    assert not any(m.get("name", "").startswith("tab_") for m in judged) and "[tab]" not in str(judged)
    assert not any(stops[0] in str(m.get("content")) for m in judged)  # the finish check too, wherever it answered
    assert theirs[-1]["content"] == "Done, checked." and all(m.get("tool_call_id") != "" for m in theirs if m["role"] == "tool")


@pytest.mark.parametrize("name", ["dci", "claude_code", "codex", "gemini_cli", "mini_swe_agent"])
def test_every_harness_is_registered_by_name(name: str) -> None:
    from runners.agent.harnesses import HARNESSES as DRIVERS

    assert DRIVERS.get(name).name == name


def test_an_unknown_harness_names_those_there_are() -> None:
    from runners.agent.harnesses import HARNESSES as DRIVERS
    from runners.core.registry import UnknownName

    with pytest.raises(UnknownName, match="unknown agent.harness 'claud'; valid agent.harnesses: dci, claude_code, codex, gemini_cli, mini_swe_agent"):
        DRIVERS.get("claud")
