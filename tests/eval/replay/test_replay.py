"""`python -m eval.replay`: today's tab over a finished sweep's trajectories, no model call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eval.replay.sweep import main, parser, replay_sweep
from eval.replay.tab import tab_config_of_method
from tests.conftest import write_native, write_script

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]


def _call(name: str, **args: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": args}]}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished sweep: one task under dci and runningtab; the agent reads a note, states a
    requirement, reviews, resolves it citing the entry, then once more citing nothing (refused)."""
    tmp = tmp_path_factory.mktemp("replay")
    bench = write_native(tmp / "b", [{"id": "t", "prompt": "What is the hotel rate?", "workspace": "w", "answer": "450"}],
                         {"w/notes.txt": "Travel rules\nThe hotel rate is 450 yuan per night.\n", "w/old/memo.txt": "x\n"})
    script = write_script(tmp / "s.jsonl", [_call("bash", command="cat notes.txt; ls old"), _call("tab_add", requirements=["hotel rate"]),
                                            _call("tab_review"), _call("tab_resolve", id="r1", status="done", entries=["L1"]),
                                            _call("tab_resolve", id="r1", status="done", entries=[]),
                                            {"content": "<FINAL_ANSWER>450</FINAL_ANSWER>"}])
    cmd = [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "model=scripted", f"model.script={script}",
           "grid.method=[dci,runningtab]", "judge=none", "tracker=none", f"out={tmp / 'out'}", "sweep=s", "model.cache=off"]
    r = subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return tmp / "out" / "s"


def _tab_job(sweep: Path) -> Path:
    return next(d for d in sweep.iterdir() if "__runningtab__" in d.name)


def test_todays_tab_over_its_own_trajectory_changes_nothing(sweep: Path) -> None:
    recorded = json.loads((_tab_job(sweep) / "tab.json").read_text())
    assert [e["kind"] for e in recorded["events"] if e["kind"].startswith("resolve")] == ["resolve", "resolve_refused"]
    report = replay_sweep(sweep, None, {}, None, None)
    [job] = report["jobs"]
    assert not any(job[k] for k in ("entries_gained", "entries_lost", "candidates_gained", "candidates_lost", "now_refused", "now_accepted"))
    assert job["review_hits"] == {"before": {"r1": [1, 1]}, "after": {"r1": [1, 1]}}
    assert report["table3_before"] == report["table3_after"] and report["skipped"] == {"with no tab (pass --method to replay one over them)": 1}


def test_another_setting_answers_the_recorded_calls_differently(sweep: Path) -> None:
    no_check = replay_sweep(sweep, None, {"evidence_check": False}, "runningtab", None)["jobs"][0]
    assert [r["id"] for r in no_check["now_accepted"]] == ["r1"] and no_check["now_accepted"][0]["was_refused_for"] == "no_entries"
    no_capture = replay_sweep(sweep, tab_config_of_method("runningtab_no_capture"), {}, "runningtab", None)
    job = no_capture["jobs"][0]
    assert len(job["entries_lost"]) == 1 and job["entries_lost"][0].startswith("notes.txt") and job["candidates_lost"] == ["old/memo.txt"]
    assert no_capture["table3_before"] != no_capture["table3_after"]


def test_a_capture_that_differs_from_the_recorded_one_is_reported(sweep: Path, tmp_path: Path) -> None:
    """The recorded excerpt is not what today's capture makes (as after a change to attribution):
    the entry is gained and lost, and the resolution that cited it would now be refused."""
    import shutil

    copy = tmp_path / "s"
    shutil.copytree(sweep, copy)
    tab_file = _tab_job(copy) / "tab.json"
    tab = json.loads(tab_file.read_text())
    tab["read_log"][0]["excerpt"] = "Travel rules"
    tab_file.write_text(json.dumps(tab))
    [job] = replay_sweep(copy, None, {}, None, None)["jobs"]
    assert len(job["entries_gained"]) == len(job["entries_lost"]) == 1
    assert job["now_refused"] == [{"id": "r1", "turn": 4, "status": "done", "why": "no_entries"}]


def test_the_command_line_covers_jobs_without_a_tab_and_says_what_it_cannot_answer(sweep: Path, tmp_path: Path, capsys) -> None:
    assert main([str(sweep), "--method", "runningtab", "--out", str(tmp_path / "r")]) == 0
    text = capsys.readouterr().out
    assert "2 job(s) replayed (1 with a recorded tab)" in text and "cannot answer" in text and "## Table 3, after" in text
    lines = [json.loads(x) for x in (tmp_path / "r" / "replay.jsonl").read_text().splitlines()]
    dci = next(x for x in lines if "__dci__" in x["job_id"])
    assert not dci["recorded_tab"] and dci["entries_gained"][0].startswith("notes.txt") and dci["candidates_gained"] == ["old/memo.txt"]
    assert (tmp_path / "r" / "summary.md").read_text().startswith("# Replay of s")
    with pytest.raises(SystemExit):
        main([str(sweep), "--set", "nope=1"])


def test_the_summary_reads_as_text_and_json_is_asked_for(sweep: Path, tmp_path: Path, capsys) -> None:
    """Issue 38 item 4: the console shows no raw JSON (the skipped jobs were a JSON object), but a
    table of what changed per job; `--json` prints the machine form instead."""
    assert main([str(sweep), "--set", "evidence_check=false", "--out", str(tmp_path / "r")]) == 0
    text = capsys.readouterr().out
    assert "{" not in text and '":' not in text, text
    assert "Not replayed: 1 job with no tab (pass --method to replay one over them)." in text
    header = next(x for x in text.splitlines() if x.startswith("| job"))
    assert [c.strip() for c in header.strip("|").split("|")] == ["job", "read-log entries", "candidates", "resolutions",
                                                                   "review hits (before → after)"]
    row = next(x for x in text.splitlines() if x.startswith("| ") and "__runningtab__" in x)
    assert "+0 -0" in row and "1 now accepted" in row and "1/1 → 1/1" in row, row
    flags = {w.strip("().;,") for w in text.split() if w.lstrip("(").startswith("--")}
    assert flags == {"--method"} and flags <= set(parser()._option_string_actions)  # every flag it names exists
    assert main([str(sweep), "--set", "evidence_check=false", "--out", str(tmp_path / "j"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["totals"]["now_accepted"] == 1 and doc["skipped"] == {"with no tab (pass --method to replay one over them)": 1}
    assert [j["job_id"] for j in doc["jobs"]] == [_tab_job(sweep).name] and doc["written"] == str(tmp_path / "j")
