"""WorkspaceEnv: bad calls become error results, plugins' tools, observations, appendices and stop hooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import Environment, EnvPlugin, Observation, ToolCall, ToolResult


class Counter:
    """A real (small) plugin: a `count_add` tool, a status line after every observation, one stop message."""

    def __init__(self, name: str = "counter", stop_message: str | None = "check your work first") -> None:
        self.name = name
        self.seen: list[Observation] = []
        self.total = 0
        self.stop_message = stop_message
        self.stops = 0

    def system_prompt(self) -> str:
        return "Use count_add to count things."

    def tools(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": f"{self.name}_add", "description": "add", "parameters": {
            "type": "object", "properties": {"n": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["n"], "additionalProperties": False}}}]

    def call(self, name: str, arguments: dict[str, Any], turn: int) -> ToolResult:
        if arguments["n"] < 0:
            raise RuntimeError("negative counts are a bug in this plugin")
        self.total += arguments["n"]
        return ToolResult(f"total {self.total}")

    def observe(self, obs: Observation) -> str:
        self.seen.append(obs)
        return f"[{self.name}] {len(self.seen)} observations"

    def on_stop(self, turn: int) -> str | None:
        self.stops += 1
        message, self.stop_message = self.stop_message, None  # once only
        return message

    def record(self) -> dict[str, Any] | None:
        return {"total": self.total}

    def evaluator_view(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [m for m in messages if m.get("name") != f"{self.name}_add"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    return root


def execute(env: WorkspaceEnv, name: str, arguments: str, turn: int = 1) -> ToolResult:
    return env.execute(ToolCall(id="x", name=name, arguments=arguments), turn)


def test_satisfies_the_protocols(ws):
    env = WorkspaceEnv(ws, EnvConfig(sandbox="none"), [Counter()])
    assert isinstance(Counter(), EnvPlugin)
    _: Environment = env  # type-checks as the loop's seam
    assert env.root == str(ws.resolve())
    env.close()


@pytest.mark.parametrize("name,arguments,expected", [
    ("nope", "{}", "Unknown tool 'nope'. Available tools: read, bash, counter_add"),
    ("read", '{"path": "a.txt"', "are not valid JSON"),
    ("read", "[1, 2]", "must be a JSON object"),
    ("read", "{}", "missing required argument(s) path"),
    ("read", '{"path": 5}', "read.path must be a string"),
    ("read", '{"path": "a.txt", "offset": "two"}', "read.offset must be an integer"),
    ("bash", '{"command": "ls", "cwd": "/"}', "unknown argument(s) cwd"),
    ("counter_add", '{"n": 1, "tags": [1]}', "counter_add.tags[0] must be a string"),
    ("counter_add", '{"n": -1}', "Tool 'counter_add' failed: RuntimeError: negative counts"),
])
def test_bad_calls_become_error_results(ws, name, arguments, expected):
    plugin = Counter()
    env = WorkspaceEnv(ws, EnvConfig(sandbox="none"), [plugin])
    result = execute(env, name, arguments)
    env.close()
    assert result.is_error
    assert expected in result.content
    assert plugin.seen[-1].arguments == {} or name == "counter_add"  # malformed calls are observed with no arguments


def test_lenient_integers_and_empty_arguments(ws):
    env = WorkspaceEnv(ws, EnvConfig(sandbox="none"), [Counter()])
    assert execute(env, "read", '{"path": "a.txt", "offset": 1.0, "limit": "1"}').content.startswith("hello")
    assert "missing required argument(s) n" in execute(env, "counter_add", "").content
    env.close()


def test_plugin_tools_appendix_and_meta(ws):
    first, second = Counter("counter"), Counter("tally", stop_message=None)
    env = WorkspaceEnv(ws, EnvConfig(sandbox="none"), [first, second])
    assert [t["function"]["name"] for t in env.tools()] == ["read", "bash", "counter_add", "tally_add"]
    r = execute(env, "tally_add", '{"n": 3}', turn=4)
    assert r.content == "total 3\n[counter] 1 observations\n[tally] 1 observations"
    assert r.appendix == "[counter] 1 observations\n[tally] 1 observations"
    assert r.chars == len("total 3")
    assert second.total == 3 and first.total == 0  # dispatched to the plugin that declares it
    r = execute(env, "read", '{"path": "a.txt"}', turn=5)
    assert r.content.startswith("hello\n[counter] 2 observations")
    obs = first.seen[-1]
    assert (obs.tool, obs.arguments, obs.output, obs.is_error, obs.turn) == ("read", {"path": "a.txt"}, "hello", False, 5)
    prompt = env.system_prompt()
    assert str(ws.resolve()) in prompt and prompt.count("Use count_add to count things.") == 2
    env.close()


def test_observe_failure_keeps_the_result(ws):
    class Broken(Counter):
        def observe(self, obs: Observation) -> str:
            raise KeyError("boom")

    env = WorkspaceEnv(ws, EnvConfig(sandbox="none"), [Broken("broken"), Counter()])
    r = execute(env, "read", '{"path": "a.txt"}')
    env.close()
    assert r.content == "hello\n[counter] 1 observations" and not r.is_error


def test_on_stop_first_message_wins_then_the_next(ws):
    a, b = Counter("a", stop_message="from a"), Counter("b", stop_message="from b")
    env = WorkspaceEnv(ws, EnvConfig(sandbox="none"), [a, b])
    assert env.on_stop(3) == "from a"
    assert b.stops == 0  # not asked once a message was found
    assert env.on_stop(4) == "from b"
    assert env.on_stop(5) is None
    env.close()


def test_tool_name_clash_is_refused(ws):
    with pytest.raises(ValueError, match="'counter_add' from counter is already taken"):
        WorkspaceEnv(ws, EnvConfig(sandbox="none"), [Counter(), Counter()])
    with pytest.raises(FileNotFoundError, match="materialize it first"):
        WorkspaceEnv(ws / "missing", EnvConfig())


def test_config_validation():
    with pytest.raises(ValueError, match="env.sandbox='docker'"):
        EnvConfig(sandbox="docker")
    with pytest.raises(ValueError, match="bash_timeout=1000 exceeds"):
        EnvConfig(bash_timeout=1000)
    with pytest.raises(ValueError, match="env.materialize='hardlink': choose one of copy, overlay, auto"):
        EnvConfig(materialize="hardlink")


def test_schemas_are_openai_function_tools(ws):
    env = WorkspaceEnv(ws, EnvConfig(sandbox="none", write_tool=True))
    for tool in env.tools():
        json.dumps(tool)
        assert tool["type"] == "function" and tool["function"]["parameters"]["type"] == "object"
        assert set(tool["function"]["parameters"]["required"]) <= set(tool["function"]["parameters"]["properties"])
    assert [t["function"]["name"] for t in env.tools()] == ["read", "bash", "write", "edit"]
    env.close()


def test_a_read_only_workspace_is_read_only_to_bash_and_needs_bubblewrap(ws):
    from envs.sandbox import SandboxUnavailable

    env = WorkspaceEnv(ws, EnvConfig(sandbox="bwrap"), read_only=True)
    try:
        out = execute(env, "bash", json.dumps({"command": "cat a.txt; echo x >> a.txt; mkdir d; touch /tmp/t && echo tmp-ok"})).content
    finally:
        env.close()
    assert "hello" in out and out.count("Read-only file system") == 2 and "tmp-ok" in out
    assert (ws / "a.txt").read_text() == "hello\n" and not (ws / "d").exists()
    with pytest.raises(SandboxUnavailable, match="read-only workspace needs bubblewrap"):
        WorkspaceEnv(ws, EnvConfig(sandbox="none"), read_only=True)
