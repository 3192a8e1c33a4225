"""mini-swe-agent as a job's agent (issue 52): the real `mini` command, from its own venv, in the job's
bubblewrap sandbox, driving the scripted model through the Chat Completions endpoint (`chat_wire`)
by `runners.job`'s own code path, with the tab on and off, and as a hostile agent would use it.

It stops by a command of its own (`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`), where the tab's
finish check answers first; an answer without a command is not a stop for it.

The binary's tests skip, saying why, without RUNNINGTAB_AGENTS_PREFIX naming a prefix with its venv
(.ci/agents-up.sh) or without bubblewrap; in CI, which requires them, they fail saying why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.harness_jobs import (
    WRITE,
    guide_bench,
    host_bait,
    installed,
    missed,
    run_guide,
    status_at_another_job,
)

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
needs_mini = installed("mini_swe_agent")


def _bash(command: str, content: str | None = None) -> dict[str, Any]:
    return {"content": content, "tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def test_the_preflight_refuses_it_in_one_line_where_it_is_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runners.preflight.config_checks import ConfigError, check_config
    from tests.conftest import compose_root

    monkeypatch.setenv("RUNNINGTAB_AGENTS_PREFIX", str(tmp_path))
    for harness, binary in (("mini_swe_agent", "mini-swe-agent/bin/mini"), ("gemini_cli", "node_modules/.bin/gemini")):
        with pytest.raises(ConfigError) as refused:
            check_config(compose_root([f"agent={harness}"]))
        line = next(w for w in str(refused.value).splitlines() if binary in w)
        assert f"holds no {binary}" in line and "agents-up.sh" in line


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return guide_bench(tmp_path_factory.mktemp("bench"))


@pytest.mark.slow
@needs_mini
def test_mini_swe_agent_with_the_tab_records_a_paper_episode(bench: Path, tmp_path: Path) -> None:
    """The four operations, capture from its `bash` results, the status line after each; an answer
    without a command is its own format error, not a stop; the finish check answers its first submit."""
    record = run_guide(bench, tmp_path, "mini_swe_agent", "runningtab", [
        {"tool_calls": [{"name": "tab_add", "arguments": {"requirements": ["hotel reimbursement per night"]}}]},
        _bash("ls policies", "Looking around."),
        _bash("cat policies/travel.md"),
        {"tool_calls": [{"name": "tab_review", "arguments": {}}]},
        {"content": "I will write the guide now."},  # no command: mini-swe-agent asks again, the tab does not check
        _bash(WRITE),
        _bash(SUBMIT, "Done."),
        {"tool_calls": [{"name": "tab_resolve", "arguments": {"id": "r1", "status": "done", "entries": ["L1"]}}]},
        {"tool_calls": [{"name": "tab_show", "arguments": {}}]},
        _bash(SUBMIT, "Final."),
    ])
    result = record.result
    assert result.stop_reason == "finished", result.error
    assert (record.deliverable_dir / "output" / "guide.md").read_text().strip().endswith("450 yuan per night for hotels.")
    messages = list(record.trajectory())
    tab = record.plugin("tab")
    assert [e["path"] for e in tab["read_log"]] == ["policies/travel.md"]
    assert sorted(c["path"] for c in tab["candidates"]) == ["policies/other.md"]  # listed by `ls`, never opened
    results = [m for m in messages if m["role"] == "tool" and m["name"] == "bash" and not m.get("stop_hook")]
    assert len(results) == 3 and all(m["appendix"].startswith("[tab]") for m in results)
    assert json.loads(results[1]["content"][: -len(results[1]["appendix"]) - 1])["returncode"] == 0  # its own observation, whole
    assert "No tool calls found" in next(m["content"] for m in messages if m["role"] == "user" and "Tool call error" in m["content"])
    checks = [m for m in messages if m.get("stop_hook")]
    assert len(checks) == 1 and checks[0]["role"] == "tool" and "hotel reimbursement per night" in checks[0]["content"]
    assert [e["case"] for e in tab["events"] if e.get("kind") == "finish_check"] == ["open"]
    assert result.final_answer == "Final." and result.turns == 10
    harness = record.plugin("harness")
    assert harness["exit_code"] == 0 and harness["refused"] == []
    assert harness["model_calls"] == 5  # 10 model calls: the four operations' and the finish check's never reached it


@pytest.mark.slow
@needs_mini
def test_mini_swe_agent_without_the_tab_gets_no_tab(bench: Path, tmp_path: Path) -> None:
    record = run_guide(bench, tmp_path, "mini_swe_agent", "dci", [_bash(WRITE), _bash(SUBMIT, "Done.")])
    assert record.result.stop_reason == "finished", record.result.error
    assert not (record.dir / "tab.json").exists()
    system = next(m for m in record.trajectory() if m["role"] == "system")
    assert [t["function"]["name"] for t in system["tools"]] == ["bash"]  # its one tool, no tab
    assert (record.deliverable_dir / "output" / "guide.md").exists() and record.result.turns == 2


@pytest.mark.slow
@needs_mini
def test_mini_swe_agent_reaches_nothing_but_its_endpoint_and_its_token_dies_with_the_job(bench: Path, tmp_path: Path) -> None:
    """As a hostile agent would: another address on the host's loopback, a host file, the token in
    its environment and in a file, the endpoint's socket, a trajectory file with the call ids."""
    (tmp_path / "out").mkdir()
    files = "find \"$HOME\" -name '*.traj.json' | wc -l > output/trajectories.txt"
    with host_bait(tmp_path) as bait:
        probe = bait + "printenv OPENAI_API_KEY > output/token.txt; ls /tmp/runningtab-harness-*/endpoint.sock > output/socket.txt; env | grep -i api_key"
        record = run_guide(bench, tmp_path / "out", "mini_swe_agent", "dci", [_bash(probe), _bash(files), _bash(SUBMIT)])
    assert record.result.stop_reason == "finished", record.result.error
    out = record.deliverable_dir / "output"
    assert missed(out)
    assert (out / "trajectories.txt").read_text().strip() == "0"  # -o /dev/null: no file with the call ids
    shown = next(m for m in record.trajectory() if m["role"] == "tool")["content"]
    assert "OPENAI_API_KEY=[job token]" in shown and "rt-job-" not in shown
    assert "rt-job-" not in (record.dir / "harness.json").read_text()
    token, socket = (out / "token.txt").read_text().strip(), (out / "socket.txt").read_text().strip()
    assert token.startswith("rt-job-") and socket.endswith("/endpoint.sock") and not Path(socket).exists()
    assert status_at_another_job(token, "chat_wire", "/v1/chat/completions") == 401  # the token died with its job


@pytest.mark.slow
@needs_mini
def test_mini_swe_agent_killed_by_the_agents_command_is_a_result(bench: Path, tmp_path: Path) -> None:
    """A command the model ran kills mini-swe-agent (issue 48): the job is scored on what it left."""
    record = run_guide(bench, tmp_path, "mini_swe_agent", "dci", [_bash(WRITE), _bash("kill -9 $PPID"), _bash(SUBMIT)])
    assert record.result.stop_reason == "harness_exit" and not record.result.errored, record.result
    assert "after the agent's first command" in (record.result.error or "") and record.plugin("harness")["exit_code"] != 0
    assert (record.deliverable_dir / "output" / "guide.md").exists()
