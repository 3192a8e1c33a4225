"""The model bridge: the APIs production harnesses speak, answered by the job's own model.

The translation is checked both ways (a request becomes the chat messages our models take; a reply
becomes the events the harness reads, and those events parse back to the same reply), the endpoint
refuses what is not its job's, and the real `claude` and `codex` binaries drive a scripted model
through it (skipped, saying why, where RUNNINGTAB_AGENTS_PREFIX does not name their npm prefix; failed
instead in CI, which requires them: tests/helpers/harness_jobs.installed).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from envs.protocol import ToolCall
from runners.core.messages import AssistantMessage, BudgetExceeded, Usage
from runners.harnesses.bridge import messages_wire, responses_wire
from runners.harnesses.bridge.server import ModelBridge, plain
from runners.harnesses.bridge.wire_parts import WireError
from runners.models.scripted import ScriptedModel, ScriptedModelConfig
from tests.helpers.harness_jobs import PREFIX, installed

REPLY = AssistantMessage(
    content="Reading the notes.",
    tool_calls=[ToolCall(id="call_1", name="Bash", arguments='{"command": "cat notes.txt"}')],
    usage=Usage(input_tokens=120, output_tokens=9, cached_tokens=20),
)


def _sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for chunk in raw.decode().strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_a_messages_request_becomes_chat_messages_in_order() -> None:
    body = {
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Put the budget in out.txt"}]},
            {"role": "system", "content": "reminder"},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "Reading."},
                                              {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cat notes.txt"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "4200"}]},
                                         {"type": "image", "source": {}}, {"type": "text", "text": "go on"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "false"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "exit 1", "is_error": True}]},
        ],
        "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}},
                  {"type": "web_search_20250305", "name": "web_search"}],
    }
    messages, tools = messages_wire.chat_request(body)
    assert [m["role"] for m in messages] == ["system", "user", "system", "assistant", "tool", "user", "assistant", "tool"]
    assert messages[3]["content"] == "Reading."
    assert json.loads(messages[3]["tool_calls"][0]["function"]["arguments"]) == {"command": "cat notes.txt"}
    assert messages[4] == {"role": "tool", "tool_call_id": "toolu_1", "content": "4200"}
    assert messages[5]["content"] == f"{messages_wire.IMAGE_PLACEHOLDER}\ngo on"
    assert messages[7]["content"] == "[error] exit 1"
    assert [t["function"]["name"] for t in tools] == ["Bash"]  # the server tool is not offered


@pytest.mark.parametrize("body", [
    {"messages": "hi"},
    {"messages": [{"role": "tool", "content": "x"}]},
    {"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
    {"messages": [], "tools": [{"name": 3, "input_schema": {}}]},
])
def test_a_malformed_messages_request_is_a_wire_error(body: dict[str, Any]) -> None:
    with pytest.raises(WireError):
        messages_wire.chat_request(body)


def test_the_messages_event_stream_rebuilds_the_reply() -> None:
    events = _sse(b"".join(messages_wire.events(REPLY, "m")))
    names = [e for e, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    blocks: dict[int, dict[str, Any]] = {}
    for name, data in events:
        if name == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"], partial="")
        elif name == "content_block_delta":
            delta = data["delta"]
            blocks[data["index"]]["partial"] += delta.get("text") or delta.get("partial_json") or ""
    assert blocks[0]["partial"] == "Reading the notes."
    assert blocks[1]["name"] == "Bash" and json.loads(blocks[1]["partial"]) == {"command": "cat notes.txt"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert events[0][1]["message"]["usage"]["input_tokens"] == 120


def test_arguments_that_are_not_an_object_reach_the_harness_whole() -> None:
    bad = AssistantMessage(content=None, tool_calls=[ToolCall(id="c", name="Bash", arguments='{"command": oops')])
    assert messages_wire.reply_body(bad, "m")["content"][0]["input"] == {"_raw": '{"command": oops'}


def test_a_responses_request_becomes_chat_messages_in_order() -> None:
    body = {
        "instructions": "You are Codex.",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sandbox: none"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Put the budget in out.txt"}]},
            {"type": "reasoning", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading."}]},
            {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": '{"cmd": "cat notes.txt"}'},
            {"type": "function_call", "call_id": "c2", "name": "exec_command", "arguments": '{"cmd": "ls"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "4200"},
            {"type": "function_call_output", "call_id": "c2", "output": "notes.txt"},
        ],
        "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}, {"type": "web_search"},
                  {"type": "namespace", "name": "multi_agent_v1"}],
    }
    messages, tools = responses_wire.chat_request(body)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert messages[0]["content"] == "You are Codex.\n\nsandbox: none"
    assert messages[2]["content"] == "Reading." and [c["id"] for c in messages[2]["tool_calls"]] == ["c1", "c2"]
    assert [t["function"]["name"] for t in tools] == ["exec_command"]


def test_the_responses_event_stream_ends_with_the_whole_reply() -> None:
    events = _sse(b"".join(responses_wire.events(REPLY, "m")))
    assert events[0][0] == "response.created" and events[-1][0] == "response.completed"
    output = events[-1][1]["response"]["output"]
    assert output[0]["content"][0]["text"] == "Reading the notes."
    assert output[1]["type"] == "function_call" and output[1]["call_id"] == "call_1"
    assert events[-1][1]["response"]["usage"]["input_tokens_details"]["cached_tokens"] == 20
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))


class _Budgeted:
    """A model whose second call finds the job's budget spent."""

    name = "budgeted"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        self.calls += 1
        if self.calls > 1:
            raise BudgetExceeded("the job's budget of $0.01 is spent")
        return AssistantMessage(content="ok")


async def _post(url: str, path: str, token: str, body: Any) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as s:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        async with s.post(url + path, data=data, headers={"x-api-key": token}) as r:
            return r.status, (await r.json() if r.content_type == "application/json" else await r.text())


def test_the_endpoint_answers_only_its_job_and_keeps_the_models_stop() -> None:
    async def run() -> None:
        model = _Budgeted()
        bridge = ModelBridge(plain(model))
        url = await bridge.start()
        try:
            body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 10}
            assert (await _post(url, "/v1/messages", "sk-other", body))[0] == 401
            assert (await _post(url, "/v1/messages", bridge.token, b"{not json"))[0] == 400
            status, reply = await _post(url, "/v1/messages", bridge.token, body)
            assert status == 200 and reply["content"] == [{"type": "text", "text": "ok"}]
            status, reply = await _post(url, "/v1/messages", bridge.token, body)
            assert status == 400 and "budget" in reply["error"]["message"]
            assert isinstance(bridge.stop, BudgetExceeded)
            assert (await _post(url, "/v1/messages", bridge.token, body))[0] == 400  # the job has ended
            assert (await _post(url, "/v1/responses", bridge.token, {"input": "hi"}))[0] == 404  # not its harness's API
            assert model.calls == 2 and len(bridge.exchanges) == 1 and bridge.exchanges[0].wire == "messages_wire"
        finally:
            await bridge.close()

    asyncio.run(run())


# --- the real binaries ------------------------------------------------------------------------------

needs_agents = installed("claude_code", "codex", sandbox=False)


def _script(tmp_path: Path, turns: list[dict[str, Any]]) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return str(path)


async def _drive(bridge: ModelBridge, argv: list[str], env: dict[str, str], cwd: Path) -> str:
    proc = await asyncio.create_subprocess_exec(*argv, env=env, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 180)
    assert proc.returncode == 0, err.decode()[-2000:]
    return out.decode()


@needs_agents
def test_claude_code_drives_the_scripted_model_through_the_bridge(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("The budget is 4200 USD.\n")
    script = _script(tmp_path, [
        {"content": "Reading.", "tool_calls": [{"name": "Bash", "arguments": {"command": "cat notes.txt"}}]},
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "grep -o '[0-9]*' notes.txt > out.txt"}}]},
        {"content": "Done."},
    ])

    async def run() -> str:
        bridge = ModelBridge(plain(ScriptedModel(ScriptedModelConfig(name="s", script=script))))
        url = await bridge.start()
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": url,
               "ANTHROPIC_API_KEY": bridge.token, "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        try:
            out = await _drive(bridge, [str(Path(PREFIX, "node_modules/.bin/claude")), "-p", "Put the budget in out.txt",
                                        "--output-format", "json", "--allowedTools", "Bash"], env, ws)
        finally:
            await bridge.close()
        assert len(bridge.exchanges) == 3  # one call a turn: no side call reached the job's model
        tool_results = [m["content"] for m in bridge.exchanges[-1].messages if m["role"] == "tool"]
        assert "The budget is 4200 USD." in tool_results[0]
        return out

    out = asyncio.run(run())
    assert json.loads(out)["result"] == "Done."
    assert (ws / "out.txt").read_text().strip() == "4200"


@needs_agents
def test_codex_drives_the_scripted_model_through_the_bridge(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("The budget is 4200 USD.\n")
    script = _script(tmp_path, [
        {"content": "Reading.", "tool_calls": [{"name": "exec_command", "arguments": {"cmd": "cat notes.txt"}}]},
        {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "grep -o '[0-9]*' notes.txt > out.txt"}}]},
        {"content": "Done."},
    ])
    home = tmp_path / "codex-home"
    home.mkdir()

    async def run() -> str:
        bridge = ModelBridge(plain(ScriptedModel(ScriptedModelConfig(name="s", script=script))), wire="responses_wire")
        url = await bridge.start()
        (home / "config.toml").write_text(
            f'model = "job"\nmodel_provider = "runningtab"\n[model_providers.runningtab]\nname = "runningtab"\n'
            f'base_url = "{url}/v1"\nwire_api = "responses"\nenv_key = "RUNNINGTAB_JOB_TOKEN"\n')
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "CODEX_HOME": str(home),
               "RUNNINGTAB_JOB_TOKEN": bridge.token}
        try:
            out = await _drive(bridge, [str(Path(PREFIX, "node_modules/.bin/codex")), "exec", "--json", "--skip-git-repo-check",
                                        "-s", "danger-full-access", "Put the budget in out.txt"], env, ws)
        finally:
            await bridge.close()
        assert len(bridge.exchanges) == 3
        return out

    out = asyncio.run(run())
    messages = [json.loads(line)["item"]["text"] for line in out.splitlines()
                if '"agent_message"' in line]
    assert messages[-1] == "Done."
    assert (ws / "out.txt").read_text().strip() == "4200"


# --- the preflight ----------------------------------------------------------------------------------


def test_the_preflight_names_what_a_harness_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runners.preflight.config_checks import ConfigError, check_config
    from tests.conftest import compose_root

    with pytest.raises(ConfigError, match=r"claude_code.*codex|codex.*claude_code"):
        check_config(compose_root(["agent.harness=claud"]), here=False)
    monkeypatch.delenv("RUNNINGTAB_AGENTS_PREFIX", raising=False)
    with pytest.raises(ConfigError, match=r"RUNNINGTAB_AGENTS_PREFIX.*agents-up\.sh"):
        check_config(compose_root(["agent.harness=codex"]))
    monkeypatch.setenv("RUNNINGTAB_AGENTS_PREFIX", str(tmp_path))
    with pytest.raises(ConfigError, match=r"holds no node_modules/\.bin/codex"):
        check_config(compose_root(["agent.harness=codex"]))
    check_config(compose_root(["agent.harness=codex"]), here=False)  # a Slurm submission: checked on the node


# --- the Chat Completions wire (a harness that speaks our models' own API) ---------------------------


def test_a_chat_completions_request_passes_through_checked() -> None:
    from runners.harnesses.bridge import chat_wire

    body = {"messages": [{"role": "developer", "content": "Be brief."},
                         {"role": "user", "content": [{"type": "text", "text": "Budget?"}, {"type": "image_url", "image_url": {}}]},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "cat notes.txt"}'}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "4200"}],
            "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]}
    messages, tools = chat_wire.chat_request(body)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[1]["content"] == f"Budget?\n{messages_wire.IMAGE_PLACEHOLDER}" and messages[3]["tool_call_id"] == "c1"
    assert messages[2]["tool_calls"][0]["function"]["arguments"] == '{"command": "cat notes.txt"}'
    assert [t["function"]["name"] for t in tools] == ["bash"]
    for bad in ({"messages": [{"role": "robot", "content": "x"}]}, {"messages": [{"role": "tool", "content": "x"}]},
                {"messages": [], "tools": [{"type": "web_search"}]}):
        with pytest.raises(WireError):
            chat_wire.chat_request(bad)


def test_our_own_openai_compatible_client_talks_to_the_chat_completions_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """The endpoint of a harness that speaks Chat Completions answers our own client of that API,
    tool calls and usage included, streamed or not."""
    import threading

    from runners.harnesses.bridge import chat_wire
    from runners.models import build_model
    from runners.models.config import ApiModelConfig

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    bridge = ModelBridge(plain(_Replies([REPLY, AssistantMessage(content="Done.", usage=Usage(input_tokens=7, output_tokens=2))])),
                         wire="chat_wire")
    url = asyncio.run_coroutine_threadsafe(bridge.start(), loop).result(10)
    monkeypatch.setenv("RT_TEST_JOB_TOKEN", bridge.token)
    try:
        client = build_model(ApiModelConfig(kind="openai", name="job", base_url=f"{url}/v1", api_key_env="RT_TEST_JOB_TOKEN",
                                            max_retries=0))
        first = client.complete([{"role": "user", "content": "Budget?"}], [])
        assert first.content == "Reading the notes." and [(c.id, c.name) for c in first.tool_calls] == [("call_1", "Bash")]
        assert json.loads(first.tool_calls[0].arguments) == {"command": "cat notes.txt"} and first.usage.input_tokens == 120
        second = client.complete([{"role": "user", "content": "Budget?"}], [])
        assert second.content == "Done." and not second.tool_calls
        chunks = b"".join(chat_wire.events(REPLY, "m")).decode().strip().split("\n\n")
        assert chunks[-1] == "data: [DONE]" and json.loads(chunks[-2][6:])["choices"][0]["finish_reason"] == "tool_calls"
    finally:
        asyncio.run_coroutine_threadsafe(bridge.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)


class _Replies:
    name = "replies"

    def __init__(self, replies: list[AssistantMessage]) -> None:
        self.replies = list(replies)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        return self.replies.pop(0)
