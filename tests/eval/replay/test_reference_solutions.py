"""Issue 38.2: the built-in benchmark's reference solutions read office files with `python3 - FILE ...
<<'RT_PY'`; a sweep of them under RunningTab records those reads, and `python -m eval.replay` of a
sweep recorded without a tab shows them as gained (before the fix: empty read logs, Table 3 zeros)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from eval.benchmarks.builtin.loader import ensure_generated
from eval.replay.sweep import main
from runners.core.job_record import JobRecord, is_job_dir

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
# one task per office format the solutions read with the script: docx, xlsx, pdf, pptx
TASKS = ("ws-01-resource-saving-manual", "ws-02-purchase-order-summary", "ws-06-kpi-summary", "ws-09-deck-outline")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("refsol")
    bench = ensure_generated(tmp / "builtin", 0)
    cmd = [sys.executable, "-m", "runners.sweep", "benchmark=builtin", f"benchmark.path={bench}", "benchmark.suite=workspace",
           f"benchmark.ids=[{','.join(TASKS)}]", "model=scripted", f"model.script_dir={bench / 'workspace' / 'solutions'}",
           "grid.method=[dci,runningtab]", "judge=none", "tracker=none", f"out={tmp / 'out'}", "sweep=ref", "model.cache=off"]
    r = subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return tmp / "out" / "ref", bench / "workspace" / "solutions"


def _script_reads(solutions: Path, task: str) -> list[str]:
    """The files a solution's `python3 - FILE ... <<'RT_PY'` names."""
    for line in (solutions / f"{task}.jsonl").read_text().splitlines():
        for call in json.loads(line).get("tool_calls") or []:
            words = shlex.split(call["arguments"]["command"].split("<<", 1)[0])
            if words[:2] == ["python3", "-"]:
                return words[2:]
    raise AssertionError(f"{task}: no script read")


def _jobs(sweep: Path, method: str) -> dict[str, Path]:
    jobs = (JobRecord(d) for d in sweep.iterdir() if is_job_dir(d))
    return {j.meta.task_id: j.dir for j in jobs if j.meta.method == method}


def test_the_reference_solutions_read_logs_hold_every_file_their_script_read(sweep: tuple[Path, Path]) -> None:
    out, solutions = sweep
    jobs = _jobs(out, "runningtab")
    assert sorted(jobs) == sorted(TASKS)
    for task, job in jobs.items():
        log = json.loads((job / "tab.json").read_text())["read_log"]
        files = _script_reads(solutions, task)
        assert {e["path"] for e in log} >= set(files), (task, files, [e["path"] for e in log])
        assert all(e["excerpt"].strip() and "==>" not in e["excerpt"] for e in log), task


def test_replay_of_a_sweep_recorded_without_a_tab_shows_the_script_reads(sweep: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    out, solutions = sweep
    assert main([str(out), "--method", "runningtab", "--only", "__dci__", "--out", str(tmp_path / "r")]) == 0
    text = capsys.readouterr().out
    assert "4 job(s) replayed (0 with a recorded tab); 4 changed." in text
    lines = {json.loads(x)["job_id"]: json.loads(x) for x in (tmp_path / "r" / "replay.jsonl").read_text().splitlines()}
    for task, job in _jobs(out, "dci").items():
        gained = {g.split(" (turn")[0] for g in lines[job.name]["entries_gained"]}
        assert gained >= set(_script_reads(solutions, task)), task
    after = text.split("## Table 3, after (replayed)")[1]
    row = next(r for r in after.splitlines() if r.startswith("| builtin"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    header = [c.strip() for c in next(r for r in after.splitlines() if r.startswith("| benchmark")).strip("|").split("|")]
    values = dict(zip(header, cells, strict=True))
    assert float(values["read_log_entries"]) >= 3 and float(values["distinct_files"]) >= 3, values
