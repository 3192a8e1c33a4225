"""A production harness as a job's agent, through `runners.job`'s own code path: the real `claude` and
`codex` binaries, in the job's bubblewrap sandbox, drive the scripted model behind the job's
endpoint; the record is ours (trajectory, tab, stop reason, deliverable, cost and tokens).

Skipped, saying why, without RUNNINGTAB_AGENTS_PREFIX (a prefix with both: .ci/agents-up.sh) or
without bubblewrap (in CI, which requires them, failed saying why). Gemini CLI's and mini-swe-agent's jobs: test_gemini_cli.py, test_mini_swe_agent.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_native, write_script
from tests.helpers.harness_jobs import (
    WRITE,
    guide_bench,
    host_bait,
    installed,
    missed,
    run_guide,
)

pytestmark = installed("claude_code", "codex")


def _claude(with_tab: bool) -> list[dict[str, Any]]:
    turns = [
        {"content": "Looking around.", "tool_calls": [{"name": "Bash", "arguments": {"command": "ls -R"}}]},
        {"tool_calls": [{"name": "Read", "arguments": {"file_path": "/workspace/policies/travel.md"}}]},
        {"tool_calls": [{"name": "Bash", "arguments": {"command": WRITE}}]},
        {"content": "Done."},
    ]
    if not with_tab:
        return turns
    return [
        {"tool_calls": [{"name": "tab_add", "arguments": {"requirements": ["hotel reimbursement per night"]}}]},
        *turns[:3],
        {"tool_calls": [{"name": "tab_resolve", "arguments": {"id": "r1", "status": "done", "entries": ["L1"]}}]},
        turns[3],
        {"content": "Final."},
    ]


def _codex() -> list[dict[str, Any]]:
    return [
        {"content": "Looking around.", "tool_calls": [{"name": "exec_command", "arguments": {"cmd": "cat policies/travel.md"}}]},
        {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": f"{WRITE}; find \"$HOME\" -name '*.jsonl' | wc -l > output/sessions.txt"}}]},
        {"content": "Done."},
    ]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return guide_bench(tmp_path_factory.mktemp("bench"))



def test_claude_code_with_the_tab_records_a_paper_episode(bench: Path, tmp_path: Path) -> None:
    record = run_guide(bench, tmp_path, "claude_code", "runningtab", _claude(with_tab=True))
    result = record.result
    assert result.stop_reason == "finished", result.error
    assert (record.deliverable_dir / "output" / "guide.md").read_text().strip().endswith("450 yuan per night for hotels.")
    assert result.turns == 7 and result.tokens_in == 700 and result.cost == pytest.approx(0.007)
    messages = list(record.trajectory())
    names = [c["function"]["name"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert names == ["tab_add", "Bash", "Read", "Bash", "tab_resolve"]
    # the finish check stopped the first stop once, as in the paper; the next stop ended the run
    assert sum(1 for m in messages if m.get("stop_hook")) == 1
    # the tab captured the harness's Read of the policy, and its status line reached the model
    tab = record.plugin("tab")
    assert [e["path"] for e in tab["read_log"]][:1] == ["policies/travel.md"]
    read = next(m for m in messages if m["role"] == "tool" and m.get("name") == "Read")
    assert "[tab]" in read["appendix"] and "450 yuan" in read["content"]
    harness = record.plugin("harness")
    assert harness["exit_code"] == 0 and harness["model_calls"] == 4  # 7 model calls: the tab's 2 and the finish check's never reached the harness
    assert harness["refused"] == []  # each of its requests continued the conversation the endpoint held


def test_claude_code_without_the_tab_gets_no_tab(bench: Path, tmp_path: Path) -> None:
    record = run_guide(bench, tmp_path, "claude_code", "dci", _claude(with_tab=False))
    assert record.result.stop_reason == "finished", record.result.error
    messages = list(record.trajectory())
    assert not (record.dir / "tab.json").exists()
    assert not any("tab_" in json.dumps(m.get("tools") or []) for m in messages)
    assert (record.deliverable_dir / "output" / "guide.md").exists()


def test_codex_runs_the_job_in_the_sandbox(bench: Path, tmp_path: Path) -> None:
    record = run_guide(bench, tmp_path, "codex", "runningtab_no_finish_check", _codex())
    assert record.result.stop_reason == "finished", record.result.error
    assert (record.deliverable_dir / "output" / "guide.md").read_text().strip().endswith("hotels.")
    tab = record.plugin("tab")
    assert [e["path"] for e in tab["read_log"]][:1] == ["policies/travel.md"]
    assert record.result.turns == 3 and record.plugin("harness")["refused"] == []
    assert (record.deliverable_dir / "output" / "sessions.txt").read_text().strip() == "0"  # --ephemeral: no session file


def test_the_harness_reaches_nothing_but_its_endpoint_and_never_shows_its_token(bench: Path, tmp_path: Path) -> None:
    """As a hostile agent would: another address on the host's loopback, a host file outside the
    workspace, the job's token printed where the model and the record would see it."""
    (tmp_path / "out").mkdir()
    with host_bait(tmp_path) as bait:
        probe = bait + "find \"$HOME\" -name '*.jsonl' 2>/dev/null | wc -l > output/sessions.txt; env | grep -i -E 'token|api_key'"
        record = run_guide(bench, tmp_path / "out", "claude_code", "dci", [
            {"tool_calls": [{"name": "Bash", "arguments": {"command": probe}}]},
            {"content": "Done."},
        ])
    assert record.result.stop_reason == "finished", record.result.error
    out = record.deliverable_dir / "output"
    assert missed(out)
    assert (out / "sessions.txt").read_text().strip() == "0"  # no session file of the harness's, with its call ids, to read
    shown = next(m for m in record.trajectory() if m["role"] == "tool")["content"]
    assert "ANTHROPIC_API_KEY=[job token]" in shown and "rt-job-" not in shown
    assert "rt-job-" not in (record.dir / "harness.json").read_text()


@pytest.mark.slow
def test_a_sweep_of_both_harnesses_with_and_without_the_tab_reruns_from_its_cache_at_no_cost(tmp_path: Path) -> None:
    """Ray actors run the harnesses as they run our loop; run again into a new folder from the same
    cache, every model call is answered from it (spend 0) and every record is the same."""
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[3]
    bench = write_native(tmp_path / "b", [{"id": "t", "prompt": "Copy the number.", "workspace": "w", "answer": "3"}],
                         {"w/notes.txt": "3\n"})
    turn = {"usage": {"input_tokens": 100, "output_tokens": 10, "cost": 0.25}}
    scripts = {
        "claude_code": [{"tool_calls": [{"name": "Bash", "arguments": {"command": "cat notes.txt"}}], **turn},
                        {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>", **turn}, {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>", **turn}],
        "codex": [{"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "cat notes.txt"}}], **turn},
                  {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>", **turn}, {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>", **turn}],
    }
    spent = {}
    for harness, turns in scripts.items():
        script = write_script(tmp_path / f"{harness}.jsonl", turns)
        for name in ("first", "again"):
            cmd = [sys.executable, "-m", "runners.sweep", "tracker=jsonl", f"out={tmp_path / 'out'}", f"sweep={harness}-{name}",
                   f"model.cache_dir={tmp_path / 'cache'}", "benchmark=native", f"benchmark.path={bench}", "model=scripted",
                   f"model.script={script}", "grid.method=[dci,runningtab]", f"agent.harness={harness}", "env.sandbox=bwrap"]
            r = subprocess.run(cmd, cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, capture_output=True, text=True, timeout=600)
            assert r.returncode == 0, r.stderr[-3000:]
            results = [json.loads(p.read_text()) for p in (tmp_path / "out" / f"{harness}-{name}").glob("*/result.json")]
            assert len(results) == 2 and all(x["stop_reason"] == "finished" for x in results), results
            spent[harness, name] = results
    for harness in scripts:
        assert all(x["spend"] > 0 and x["cached_calls"] == 0 for x in spent[harness, "first"])
        assert all(x["spend"] == 0 and x["cached_calls"] == x["turns"] > 0 for x in spent[harness, "again"])


def test_a_runaway_writer_under_a_harness_ends_its_job_at_the_disk_quota(bench: Path, tmp_path: Path) -> None:
    """The harness runs as one long command: the job's disk quota is watched for all of it (files of
    the per-file cap, 1/32 under the quota, one after another)."""
    result = run_guide(bench, tmp_path, "claude_code", "dci", [
        {"tool_calls": [{"name": "Bash", "arguments": {"command": "for i in $(seq 1 20); do yes runaway > big$i.txt; done"}}]},
        {"content": "Done."},
    ], f"env.disk_quota_bytes={8 << 20}").result
    assert result.stop_reason == "disk_quota", (result.stop_reason, result.error)
    assert "disk quota" in (result.error or "")


def test_the_finish_check_stops_claude_code_once_while_a_requirement_is_open(bench: Path, tmp_path: Path) -> None:
    """As in the paper: at the first stop with a requirement open, the check lists it with its review
    and the model goes on (here it resolves it); the next stop ends the run. The harness sees neither."""
    record = run_guide(bench, tmp_path, "claude_code", "runningtab", [
        {"tool_calls": [{"name": "tab_add", "arguments": {"requirements": ["hotel reimbursement per night"]}}]},
        {"tool_calls": [{"name": "Read", "arguments": {"file_path": "/workspace/policies/travel.md"}}]},
        {"tool_calls": [{"name": "Bash", "arguments": {"command": WRITE}}]},
        {"content": "Done."},
        {"tool_calls": [{"name": "tab_resolve", "arguments": {"id": "r1", "status": "done", "entries": ["L1"]}}]},
        {"content": "Final."},
    ])
    assert record.result.stop_reason == "finished", record.result.error
    messages = list(record.trajectory())
    checks = [m for m in messages if m.get("stop_hook")]
    assert len(checks) == 1 and "hotel reimbursement per night" in checks[0]["content"]
    events = [e for e in record.plugin("tab")["events"] if e.get("kind") == "finish_check"]
    assert [e["case"] for e in events] == ["open"]
    assert record.result.final_answer == "Final."
    assert record.plugin("harness")["model_calls"] == 3


@pytest.mark.parametrize("harness", ["claude_code", "codex"])
def test_a_harness_killed_by_the_agents_command_is_a_result(bench: Path, tmp_path: Path, harness: str) -> None:
    """Issue 48 (2): a command that SIGKILLs the harness is the agent's doing once its first command
    ran: a result (`harness_exit`), scored on what it left, never `env_error` (errored, left out,
    retried on resume, where it did it again). Before: env_error."""
    kill = "mkdir -p output && echo partial > output/guide.md && kill -9 $(pgrep -f -o 'claude|codex')"
    call = {"name": "Bash", "arguments": {"command": kill}} if harness == "claude_code" else {"name": "exec_command", "arguments": {"cmd": kill}}
    record = run_guide(bench, tmp_path, harness, "dci", [{"tool_calls": [call]}, {"content": "Done."}])
    result = record.result
    assert (result.stop_reason, result.errored) == ("harness_exit", False), (result.stop_reason, result.error)
    assert "after the agent's first command" in (result.error or "") and record.plugin("harness")["exit_code"] != 0
    assert (record.deliverable_dir / "output" / "guide.md").read_text() == "partial\n"  # what it left is the deliverable
