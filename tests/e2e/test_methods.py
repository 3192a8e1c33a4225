"""Each method end to end on the scripted model over a small workspace, asserting on the written record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runners.agent.agent_texts import TEXTS
from runners.core.job_record import JobRecord
from runners.core.record_files import read_json
from runners.job.identity import job_id
from runners.job.resume import fresh_job_dir
from runners.job.run import run_and_score
from tests.conftest import compose_root, write_native, write_script

POLICY = """# Business travel policy
Chapter 2 Reimbursement
Article 7 Travel expenses are reimbursed at 450 yuan per night for hotels.
Article 8 Taxi fares need receipts.
"""

TURNS = [
    {"content": "Looking around.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls -R"}}]},
    {"tool_calls": [{"name": "read", "arguments": {"path": "policies/travel.md"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "mkdir -p output && grep -i 'article 7' policies/travel.md > output/guide.md"}}]},
    {"content": "Done."},
    {"content": "Final."},
]
TAB_TURNS = [
    {"tool_calls": [{"name": "tab_add", "arguments": {"requirements": ["hotel reimbursement per night"]}}]},
    *TURNS[:3],
    {"tool_calls": [{"name": "tab_resolve", "arguments": {"id": "r1", "status": "done", "entries": ["L1"]}}]},
    *TURNS[3:],
]

# method -> (todo block, stop-hook messages, tab on)
EXPECT = {
    "dci": (False, 0, False),
    "todo": (True, 0, False),
    "self_refine": (False, 1, False),
    "self_tracking": (True, 1, False),
    "runningtab": (False, 1, True),
    "runningtab_no_capture": (False, 1, True),
    "runningtab_no_review": (False, 1, True),
    "runningtab_no_evidence_check": (False, 1, True),
    "runningtab_no_finish_check": (False, 0, True),
}


def method_cfg(method: str, bench: Path, tmp: Path, extra: list[str] = ()):
    turns = TAB_TURNS if EXPECT[method][2] else TURNS
    script = write_script(tmp / f"{method}.jsonl", turns)
    return compose_root(
        ["benchmark=native", f"benchmark.path={bench}", f"method={method}", "model=scripted",
         f"model.script={script}", "judge=none", f"out={tmp}", *extra]
    )


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    files = {"travel/policies/travel.md": POLICY, "travel/policies/other.md": "Article 1 Other things.\n"}
    for i in range(5):
        files[f"travel/archive/old_{i}.md"] = f"old note {i}\n"
    task = {"id": "guide", "prompt": "Write a travel guide.", "workspace": "travel", "output": "output/guide.md",
            "rubrics": [{"text": "Mentions 450 yuan per night"}]}
    return write_native(root, [task], files)


def run_method(method: str, bench: Path, tmp: Path, extra: list[str] = ()) -> Path:
    cfg = method_cfg(method, bench, tmp, extra)
    jid = job_id(cfg, "guide")
    run_and_score(cfg, "guide", tmp / jid, jid, None)
    return tmp / jid


@pytest.mark.parametrize("method", list(EXPECT))
def test_method_record(method: str, bench: Path, tmp_path: Path) -> None:
    todo, hooks, tab_on = EXPECT[method]
    job = run_method(method, bench, tmp_path)
    traj = JobRecord(job).trajectory()
    system = traj[0]
    assert system["role"] == "system"
    assert (TEXTS["todo"] in system["content"]) is todo
    tool_names = {t["function"]["name"] for t in system["tools"]}
    assert {"read", "bash"} <= tool_names
    assert any(n.startswith("tab_") for n in tool_names) is tab_on
    stop_msgs = [m for m in traj if m.get("stop_hook")]
    assert len(stop_msgs) == hooks
    if method in ("self_refine", "self_tracking"):
        assert stop_msgs[0]["content"] == TEXTS["self_refine"]
    result = read_json(job / "result.json")
    assert result["stop_reason"] == "finished"
    assert result["final_answer"] == ("Final." if hooks else "Done.")
    assert result["chars_read"] > len("Article 7")
    assert (job / "deliverable" / "output" / "guide.md").read_text().startswith("Article 7")
    assert (job / "tab.json").exists() is tab_on
    view = read_json(job / "evaluator_view.json")
    assert "[tab]" not in json.dumps(view)
    assert not any(c["function"]["name"].startswith("tab_") for m in view["messages"] for c in m.get("tool_calls") or [])
    if tab_on:
        tab = read_json(job / "tab.json")
        paths = [e["path"] for e in tab["read_log"]]
        if method == "runningtab_no_capture":
            assert paths == [] and tab["candidates"] == []
        else:
            assert "policies/travel.md" in paths
            assert tab["requirements"][0]["status"] == "done"


def test_turn_budget_and_no_rerun(bench: Path, tmp_path: Path) -> None:
    job = run_method("dci", bench, tmp_path, ["agent.max_turns=2"])
    result = read_json(job / "result.json")
    assert result["stop_reason"] == "turn_budget" and result["turns"] == 2
    before = {p.name: p.stat().st_mtime_ns for p in job.iterdir()}
    assert run_method("dci", bench, tmp_path, ["agent.max_turns=2"]) == job  # a finished record is kept…
    assert {p.name: p.stat().st_mtime_ns for p in job.iterdir()} == before  # …not run again nor rewritten
    with pytest.raises(FileExistsError):  # and the record itself still refuses to be overwritten
        fresh_job_dir(job)


def test_killed_job_is_redone(bench: Path, tmp_path: Path) -> None:
    stale = tmp_path / job_id(method_cfg("dci", bench, tmp_path), "guide")
    stale.mkdir()
    (stale / "trajectory.jsonl").write_text('{"role": "system"}\n')
    job = run_method("dci", bench, tmp_path)
    assert job == stale
    assert (job / "result.json").exists()
    assert len(JobRecord(job).trajectory()) > 1
