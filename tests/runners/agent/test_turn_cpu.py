"""Issue 15 (2): the cheaper per-call pieces of a turn keep their guarantees.

The reaper (bash without bubblewrap) now finds descendants by walking /proc/<pid>/task/*/children
and sets the subreaper flag without importing ctypes; whatever a call leaves behind, at any depth
and on a timeout too, still dies with the call. The loop's incremental context view equals the
pure recomputation (`manage_context`) at every model call of a scripted episode.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envs import reaper
from envs.config import EnvConfig
from envs.context import ContextView, manage_context
from envs.environment import WorkspaceEnv
from envs.harness_texts import CONTEXT_PLACEHOLDER
from envs.protocol import ToolCall
from envs.sandbox import bwrap_problem
from runners.models.config import ApiModelConfig
from runners.models.openai_compat import OpenAICompatModel
from runners.models.wire import request_body
from tests.envs.test_attacks import alive

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unusable: {bwrap_problem()}")
MODES = ["none", pytest.param("bwrap", marks=needs_bwrap)]
REAPER = str(Path(reaper.__file__))


def call(env: WorkspaceEnv, time_left: float | None = None, **args):
    extra = {} if time_left is None else {"time_left": time_left}
    return env.execute(ToolCall(id="c", name="bash", arguments=json.dumps(args)), 1, **extra)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.mark.parametrize("mode", MODES)
def test_a_leftover_tree_dies_at_every_depth(ws, mode):
    """A setsid'd shell that lives on keeps its own children: they are grandchildren of the reaper,
    found only by walking down from it."""
    marks = [f"8{i}{os.getpid()}{len(mode)}" for i in range(3)]
    e = WorkspaceEnv(ws, EnvConfig(sandbox=mode))
    try:
        r = call(e, command=f"setsid bash -c 'sleep {marks[0]} & (sleep {marks[1]} &); sleep {marks[2]}; wait' "
                            ">/dev/null 2>&1 </dev/null & echo started")
        assert r.content == "started", r.content
        time.sleep(0.3)
        assert [m for m in marks if alive(m)] == []
    finally:
        e.close()


def test_a_timed_out_call_kills_what_escaped_its_group(ws):
    mark = f"91{os.getpid()}"
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none"))
    try:
        r = call(e, timeout=1, command=f"setsid sleep {mark} >/dev/null 2>&1 </dev/null & sleep 30")
        assert r.meta["timed_out"] and r.is_error
        time.sleep(0.3)
        assert alive(mark) == []
    finally:
        e.close()


def test_the_reaper_walk_finds_what_the_full_scan_finds():
    """Both ways of listing descendants agree on a live tree (the scan is the fallback)."""
    mark = f"93{os.getpid()}"
    tree = subprocess.Popen(["bash", "-c", f"sleep {mark} & (sleep {mark} & wait) & wait"])
    try:
        deadline = time.monotonic() + 10  # the inner sleep starts after the subshell: wait for the whole tree
        while len(walked := sorted(reaper.descendants_walk(tree.pid))) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(walked) >= 3  # two sleeps and the subshell
        assert walked == sorted(reaper.descendants_scan(tree.pid))
    finally:
        tree.kill()
        tree.wait()
        for pid in alive(mark):
            os.kill(pid, 9)


def test_the_reaper_keeps_the_exit_status_and_imports_no_ctypes():
    code = "import runpy, sys; sys.argv = [sys.argv[1], '/bin/bash', '-c', 'exit 7']\n" \
           "try:\n    runpy.run_path(sys.argv[0], run_name='__main__')\nexcept SystemExit as e:\n" \
           "    print(e.code, 'ctypes' in sys.modules, 'signal' in sys.modules)"
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, REAPER], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["7", "False", "False"]


# --- the incremental context view ------------------------------------------------------------


def scripted_episode(turns: int = 60) -> list[dict]:
    """A loop-shaped message list: big and small results, two calls in some turns, stop-hook nudges,
    a plugin appendix, an uncapped tab_show reply, a non-text tool content."""
    msgs: list[dict] = [{"role": "system", "content": "sys", "turn": 0}, {"role": "user", "content": "task", "turn": 0}]
    for t in range(1, turns + 1):
        calls = 2 if t % 5 == 0 else 1
        msgs.append({"role": "assistant", "content": None if t % 2 else "thinking", "turn": t, "extra": {"k": t},
                     "tool_calls": [{"id": f"c{t}{j}", "type": "function",
                                     "function": {"name": "bash", "arguments": "{}"}} for j in range(calls)]})
        for j in range(calls):
            size = (t * 7919 + j * 104729) % 40_000
            name = "tab_show" if t % 11 == 0 else "bash"
            body = f"<{t}.{j}>" + "x" * size
            appendix = "[tab: 3 files]" if t % 3 == 0 else ""
            content = body + ("\n" + appendix if appendix else "")
            if t % 13 == 0 and j == 1:
                content = None
            msgs.append({"role": "tool", "tool_call_id": f"c{t}{j}", "name": name, "turn": t, "content": content,
                         "appendix": appendix, "chars": size})
        if t % 9 == 0:
            msgs.append({"role": "user", "content": "nudge", "turn": t, "stop_hook": True})
    return msgs


def project(m: dict) -> dict:
    return {k: m[k] for k in ("role", "content", "tool_calls", "tool_call_id", "extra") if k in m}


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_the_incremental_view_equals_the_full_recomputation_at_every_model_call(level):
    msgs = scripted_episode()
    view = ContextView(level, project)
    before_model = [i for i in range(2, len(msgs) + 1) if i == len(msgs) or msgs[i]["role"] == "assistant"]
    compactions = 0
    for n in before_model:
        got = view(msgs[:n])
        assert got == [project(m) for m in manage_context(msgs[:n], level)]
        compactions += sum(1 for m in got if m["content"] == CONTEXT_PLACEHOLDER)
    if level == 3:
        assert compactions > 0  # the episode is long enough to clear old results


def test_the_incremental_view_equals_the_full_recomputation_at_any_prefix():
    msgs = scripted_episode(40)
    view = ContextView(3, project)
    for n in range(1, len(msgs) + 1):
        assert view(msgs[:n]) == [project(m) for m in manage_context(msgs[:n], 3)], n
    shorter = msgs[:30]  # not an extension: recomputed from scratch
    assert view(shorter) == [project(m) for m in manage_context(shorter, 3)]


def test_a_list_with_a_message_replaced_is_recomputed():
    msgs = scripted_episode(40)
    view = ContextView(3, project)
    view(msgs[:30])
    i = next(i for i in range(20, 30) if msgs[i]["role"] == "tool")
    changed = [*msgs[:i], {**msgs[i], "content": "other"}, *msgs[i + 1:34]]  # longer, but not an extension
    assert view(changed) == [project(m) for m in manage_context(changed, 3)]


def test_unchanged_messages_keep_their_view_object():
    msgs = scripted_episode(30)
    view = ContextView(3, project)
    first = view(msgs[:20])
    again = view(msgs[:24])
    assert all(a is b for a, b in zip(first, again[:20], strict=False) if a["content"] == b["content"])


# --- the model client's request body -------------------------------------------------------


def test_the_body_is_byte_for_byte_json_dumps_of_the_whole_request():
    cfg = ApiModelConfig(kind="openai", name="m", base_url="http://127.0.0.1:9/v1", temperature=0.5, seed=3,
                      extra_body={"reasoning_effort": "low", "nested": {"é": [1.5, None]}}, echo_extra=["k"])
    model = OpenAICompatModel(cfg)
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    msgs = scripted_episode(30)
    view = ContextView(3, project)
    for n in range(2, len(msgs) + 1, 3):
        sent = view(msgs[:n])
        whole = json.dumps(request_body(cfg, sent, tools), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        assert model._encode(sent, tools) == whole.encode()
    assert len(model._sent) == len(sent)  # only the messages of the last call are kept
