"""A new judge re-scores finished records on resume; it never re-runs the agent (issue 16, item 7)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from runners.core.record_files import read_json
from tests.conftest import write_native, write_script

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]


def sweep(bench: Path, script: Path, out: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "runners.sweep", "grid.benchmark=[native]", f"benchmark.path={bench}", "benchmark.limit=null",
           "grid.method=[dci]", "grid.model=[scripted]", f"model.script={script}", "grid.seed=[0]", "tracker=jsonl",
           f"out={out}", "sweep=r", *overrides]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_a_new_judge_rescores_without_rerunning(tmp_path: Path) -> None:
    tasks = [{"id": f"t{i}", "prompt": "How many rows?", "workspace": "w", "answer": "3"} for i in range(2)]
    bench = write_native(tmp_path / "bench", tasks, {"w/data.csv": "a\n1\n2\n3\n"})
    script = write_script(tmp_path / "s.jsonl", [{"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])
    out = tmp_path / "out"
    first = sweep(bench, script, out, "judge=none")
    assert first.returncode == 0, first.stderr[-3000:]
    jobs = sorted(d for d in (out / "r").iterdir() if (d / "job.json").is_file())
    assert len(jobs) == 2 and not any((d / "scores.json").exists() for d in jobs)
    ran = {d: (d / "result.json").stat().st_mtime_ns for d in jobs}
    pages = {d: out / "r" / "report" / "jobs" / f"{d.name}.html" for d in jobs}
    assert all("Not scored (no scores.json)" in p.read_text() for p in pages.values())

    second = sweep(bench, script, out, "judge=rule")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "2 already complete, 0 to run" in second.stderr, second.stderr[-3000:]
    for d in jobs:
        assert (d / "result.json").stat().st_mtime_ns == ran[d]  # the agent did not run again
        scores = read_json(d / "scores.json")
        assert scores["judge"] == "rule" and scores["metrics"]["acc0"] == 1.0 and scores["judge_key"]
        assert "Judge: rule" in pages[d].read_text()  # its page written again with the new scores (no build rewrites it)
    keys = {d: read_json(d / "scores.json")["judge_key"] for d in jobs}

    third = sweep(bench, script, out, "judge=rule", "judge.cache_dir=" + str(tmp_path / "c"))  # runtime-only: no re-score
    assert third.returncode == 0 and "re-scored" not in third.stderr
    fourth = sweep(bench, script, out, "judge=rule", "judge.max_file_chars=100")  # a verdict-relevant setting
    assert fourth.returncode == 0 and "re-scored 2" in fourth.stderr, fourth.stderr[-3000:]
    assert all(read_json(d / "scores.json")["judge_key"] != keys[d] for d in jobs)
    assert all((d / "result.json").stat().st_mtime_ns == ran[d] for d in jobs)
