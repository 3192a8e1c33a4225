"""Gemini CLI as a job's agent (issue 52): Google's Gemini API at the job's endpoint (`gemini_wire`),
and the real `gemini` binary in the job's bubblewrap sandbox driving the scripted model through
`runners.job`'s own code path, with the tab on and off, and as a hostile agent would use it.

The binary's tests skip, saying why, without RUNNINGTAB_AGENTS_PREFIX naming a prefix with it
(.ci/agents-up.sh) or without bubblewrap; in CI, which requires them, they fail saying why.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from envs.protocol import ToolCall
from runners.core.messages import AssistantMessage, Usage
from runners.harnesses.bridge import gemini_wire
from runners.harnesses.bridge.server import ModelBridge, plain
from runners.harnesses.bridge.wire_parts import IMAGE_PLACEHOLDER, WireError
from tests.helpers.harness_jobs import (
    WRITE,
    guide_bench,
    host_bait,
    installed,
    missed,
    run_guide,
    status_at_another_job,
)

REPLY = AssistantMessage(content="Reading the notes.",
                         tool_calls=[ToolCall(id="call_1", name="run_shell_command", arguments='{"command": "cat notes.txt"}')],
                         usage=Usage(input_tokens=120, output_tokens=9, cached_tokens=20))


def test_a_gemini_request_becomes_chat_messages_in_order() -> None:
    body = {
        "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "<session_context>…</session_context>"}, {"text": "Put the budget in out.txt"}]},
            {"role": "model", "parts": [{"text": "hm", "thought": True}, {"text": "Reading."},
                                        {"functionCall": {"id": "c1", "name": "run_shell_command", "args": {"command": "cat notes.txt"}},
                                         "thoughtSignature": "x"},
                                        {"functionCall": {"id": "c2", "name": "read_file", "args": {"file_path": "a.md"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "4200"}}},
                                       {"functionResponse": {"id": "c2", "name": "read_file", "response": {"error": "no such file"}}},
                                       {"inlineData": {"mimeType": "image/png", "data": ""}}, {"text": "go on"}]},
        ],
        "tools": [{"functionDeclarations": [
            {"name": "run_shell_command", "description": "run", "parametersJsonSchema": {"type": "object", "properties": {"command": {"type": "string"}}}},
            {"name": "read_file", "parameters": {"type": "OBJECT", "properties": {"file_path": {"type": "STRING"}}}}]},
            {"googleSearch": {}}],
        "generationConfig": {"temperature": 1},
    }
    messages, tools = gemini_wire.chat_request(body)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert messages[1]["content"] == "<session_context>…</session_context>\nPut the budget in out.txt"
    assert messages[2]["content"] == "Reading." and [c["id"] for c in messages[2]["tool_calls"]] == ["c1", "c2"]
    assert json.loads(messages[2]["tool_calls"][0]["function"]["arguments"]) == {"command": "cat notes.txt"}
    assert messages[3] == {"role": "tool", "tool_call_id": "c1", "content": "4200"}
    assert messages[4]["content"] == "[error] no such file"  # read as a failed call, as the Messages wire reads is_error
    assert messages[5]["content"] == f"{IMAGE_PLACEHOLDER}\ngo on"
    assert [t["function"]["name"] for t in tools] == ["run_shell_command", "read_file"]  # Google's search is not offered
    assert tools[1]["function"]["parameters"] == {"type": "object", "properties": {"file_path": {"type": "string"}}}


@pytest.mark.parametrize("body", [
    {"contents": "hi"},
    {"contents": [{"role": "tool", "parts": []}]},
    {"contents": [{"role": "user", "parts": [{"text": 5}]}]},
    {"contents": [{"role": "model", "parts": [{"functionCall": {"name": "x", "args": "not an object"}}]}]},
    {"contents": [{"role": "user", "parts": [{"functionResponse": {"id": 3, "response": {}}}]}]},
    {"contents": [], "tools": [{"functionDeclarations": [{"name": 3}]}]},
])
def test_a_malformed_gemini_request_is_a_wire_error(body: dict[str, Any]) -> None:
    with pytest.raises(WireError):
        gemini_wire.chat_request(body)


def test_the_gemini_stream_is_the_whole_reply() -> None:
    raw = b"".join(gemini_wire.events(REPLY, "m")).decode()
    assert raw.startswith("data: ") and raw.endswith("\r\n\r\n")
    candidate = json.loads(raw[len("data: "):])["candidates"][0]
    assert candidate["finishReason"] == "STOP" and candidate["content"]["parts"] == [
        {"text": "Reading the notes."}, {"functionCall": {"id": "call_1", "name": "run_shell_command", "args": {"command": "cat notes.txt"}}}]
    assert json.loads(raw[len("data: "):])["usageMetadata"]["cachedContentTokenCount"] == 20
    bad = AssistantMessage(content=None, tool_calls=[ToolCall(id="c", name="run_shell_command", arguments='{"command": oops')])
    assert gemini_wire.reply_body(bad, "m")["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == {"_raw": '{"command": oops'}
    assert gemini_wire.error_body("authentication_error", "no")["error"] == {"code": 401, "message": "no", "status": "UNAUTHENTICATED"}


class _Replies:
    name = "replies"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        return REPLY


def test_the_gemini_endpoint_takes_the_token_where_the_api_carries_it_and_streams_on_its_stream_path() -> None:
    async def run() -> None:
        bridge = ModelBridge(plain(_Replies()), wire="gemini_wire")
        url = await bridge.start()
        body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
        try:
            async with aiohttp.ClientSession() as s:
                for headers in ({"x-goog-api-key": "AIza-other"}, {"x-api-key": bridge.token}, {}):
                    async with s.post(f"{url}/v1beta/models/m:generateContent", data=body, headers=headers) as r:
                        assert r.status == 401 and (await r.json())["error"]["status"] == "UNAUTHENTICATED"
                key = {"x-goog-api-key": bridge.token}
                async with s.post(f"{url}/v1beta/models/m:generateContent", data=body, headers=key) as r:
                    assert r.status == 200 and r.content_type == "application/json"
                    assert (await r.json())["candidates"][0]["content"]["parts"][0] == {"text": "Reading the notes."}
                async with s.post(f"{url}/v1beta/models/m:streamGenerateContent?alt=sse", data=body, headers=key) as r:
                    assert r.status == 200 and r.content_type == "text/event-stream"
                    assert (await r.text()).startswith("data: {")
                async with s.post(f"{url}/v1/messages", data=body, headers=key) as r:
                    assert r.status == 404  # not its harness's API
        finally:
            await bridge.close()
        assert len(bridge.exchanges) == 2 and bridge.exchanges[0].wire == "gemini_wire"

    asyncio.run(run())


@pytest.mark.parametrize("depth", [200, 5000])
def test_a_request_nested_past_any_schema_is_a_400_not_a_crash(depth: int) -> None:
    """A command holding the token may post anything: a schema nested deeper than any harness sends
    is refused as a client error (it was a 500 from the parser's or the wire's recursion)."""
    async def run() -> tuple[int, Any]:
        bridge = ModelBridge(plain(_Replies()), wire="gemini_wire")
        url = await bridge.start()
        deep = '{"type": "OBJECT", "items": ' * depth + "{}" + "}" * depth
        body = ('{"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": [{"functionDeclarations": '
                f'[{{"name": "x", "parameters": {deep}}}]}}]}}')
        try:
            async with aiohttp.ClientSession() as s, s.post(f"{url}/v1beta/models/m:generateContent", data=body,
                                                             headers={"x-goog-api-key": bridge.token}) as r:
                return r.status, await r.json()
        finally:
            await bridge.close()

    status, reply = asyncio.run(run())
    assert status == 400 and "nested deeper" in reply["error"]["message"]


# --- the real binary, in the job's sandbox ----------------------------------------------------------

needs_gemini = installed("gemini_cli")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return guide_bench(tmp_path_factory.mktemp("bench"))


def _shell(command: str, **more: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": "run_shell_command", "arguments": {"command": command, **more}}]}


@pytest.mark.slow
@needs_gemini
def test_gemini_cli_with_the_tab_records_a_paper_episode(bench: Path, tmp_path: Path) -> None:
    """The four operations, capture from its own tools' results (read_file, grep_search, a shell
    command), the status line after each, the finish check once at its first stop; the record is ours."""
    record = run_guide(bench, tmp_path, "gemini_cli", "runningtab", [
        {"tool_calls": [{"name": "tab_add", "arguments": {"requirements": ["hotel reimbursement per night"]}}]},
        {"content": "Looking around.", **_shell("ls", dir_path="policies")},
        {"tool_calls": [{"name": "read_file", "arguments": {"file_path": "/workspace/policies/travel.md"}}]},
        {"tool_calls": [{"name": "grep_search", "arguments": {"pattern": "Taxi", "dir_path": "policies"}}]},  # Gemini CLI adds context
        {"tool_calls": [{"name": "tab_review", "arguments": {}}]},
        _shell(WRITE),
        {"tool_calls": [{"name": "tab_resolve", "arguments": {"id": "r1", "status": "done", "entries": ["L1"]}}]},
        {"tool_calls": [{"name": "tab_show", "arguments": {}}]},
        {"content": "Done."},
        {"content": "Final."},
    ])
    result = record.result
    assert result.stop_reason == "finished", result.error
    assert (record.deliverable_dir / "output" / "guide.md").read_text().strip().endswith("450 yuan per night for hotels.")
    messages = list(record.trajectory())
    names = [c["function"]["name"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert names == ["tab_add", "run_shell_command", "read_file", "grep_search", "tab_review", "run_shell_command",
                     "tab_resolve", "tab_show"]
    tab = record.plugin("tab")
    assert [e["path"] for e in tab["read_log"]] == ["policies/travel.md", "policies/travel.md"]  # read_file, then grep_search
    assert "Article 8 Taxi fares need receipts." in tab["read_log"][1]["excerpt"]
    assert sorted(c["path"] for c in tab["candidates"]) == ["policies/other.md"]  # listed by `ls`, never opened
    tools = [m for m in messages if m["role"] == "tool" and not m["name"].startswith("tab_")]
    assert all(m["appendix"].startswith("[tab]") and m["content"].endswith(m["appendix"]) for m in tools)
    assert not any("Process Group PGID" in m["content"] for m in tools)  # what varies from run to run is not sent
    assert [m["content"].split("\n")[0] for m in messages if m.get("stop_hook")] == ["The one requirement on the tab is resolved:"]
    assert result.final_answer == "Final." and result.turns == 10
    harness = record.plugin("harness")
    assert harness["exit_code"] == 0 and harness["refused"] == []  # each request continued the conversation
    assert harness["model_calls"] == 5  # 10 model calls: the four operations' and the finish check's never reached it


@pytest.mark.slow
@needs_gemini
def test_gemini_cli_without_the_tab_gets_no_tab(bench: Path, tmp_path: Path) -> None:
    record = run_guide(bench, tmp_path, "gemini_cli", "dci", [_shell(WRITE), {"content": "Done."}])
    assert record.result.stop_reason == "finished", record.result.error
    assert not (record.dir / "tab.json").exists()
    system = next(m for m in record.trajectory() if m["role"] == "system")
    assert {t["function"]["name"] for t in system["tools"]} == {
        "run_shell_command", "read_file", "list_directory", "glob", "grep_search", "write_file", "replace"}  # its policy's, no tab
    assert (record.deliverable_dir / "output" / "guide.md").exists()


@pytest.mark.slow
@needs_gemini
def test_gemini_cli_reaches_nothing_but_its_endpoint_and_its_token_dies_with_the_job(bench: Path, tmp_path: Path) -> None:
    """As a hostile agent would: another address on the host's loopback, a host file outside the
    workspace, the job's token printed where the model would see it and written to a file, the
    endpoint's socket named, and Gemini CLI's session file read for the call ids of a pending turn."""
    (tmp_path / "out").mkdir()
    ids = "grep -rhoE 'call_[A-Za-z0-9_-]+' \"$HOME/.gemini/tmp\" | sort -u > output/ids.txt"
    with host_bait(tmp_path) as bait:
        probe = bait + "printenv GEMINI_API_KEY > output/token.txt; ls /tmp/runningtab-harness-*/endpoint.sock > output/socket.txt; env | grep -i api_key"
        record = run_guide(bench, tmp_path / "out", "gemini_cli", "dci", [_shell(probe), _shell(ids), {"content": "Done."}])
    assert record.result.stop_reason == "finished", record.result.error
    out = record.deliverable_dir / "output"
    assert missed(out)
    shown = next(m for m in record.trajectory() if m["role"] == "tool")["content"]
    assert "GEMINI_API_KEY=[job token]" in shown and "rt-job-" not in shown
    assert "rt-job-" not in (record.dir / "harness.json").read_text()
    # the session file Gemini CLI keeps under HOME holds a turn's call ids only once all its commands ran
    handed = [json.loads(line)["tool_id"].split("__", 1)[1] for line in record.plugin("harness")["transcript"]
              if '"tool_use"' in line]
    seen = (out / "ids.txt").read_text().split()
    assert handed[0] in seen and handed[1] not in seen
    # after the job: the endpoint's socket is gone, and the token opens no other job's endpoint
    token, socket = (out / "token.txt").read_text().strip(), (out / "socket.txt").read_text().strip()
    assert token.startswith("rt-job-") and socket.endswith("/endpoint.sock") and not Path(socket).exists()

    assert status_at_another_job(token, "gemini_wire", "/v1beta/models/m:generateContent") == 401


@pytest.mark.slow
@needs_gemini
def test_gemini_cli_killed_by_the_agents_command_is_a_result(bench: Path, tmp_path: Path) -> None:
    """A command the model ran kills Gemini CLI (issue 48): the job is scored on what it left, never
    errored and retried as the host's failure."""
    record = run_guide(bench, tmp_path, "gemini_cli", "dci", [_shell(WRITE), _shell("pkill -9 -f 'runningtab-job-mode[l]'"),
                                                              {"content": "Done."}])
    assert record.result.stop_reason == "harness_exit" and not record.result.errored, record.result
    assert "after the agent's first command" in (record.result.error or "") and record.plugin("harness")["exit_code"] != 0
    assert (record.deliverable_dir / "output" / "guide.md").exists()
