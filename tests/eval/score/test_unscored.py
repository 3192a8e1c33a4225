"""A judge that cannot read a record for a reason that is not the agent's leaves the job unscored,
never scored 0, and `eval.score` never overwrites a score with one from a record it could not read
(issue 35.1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eval.config import ExtractLimits, JudgeConfig
from eval.judges.base import InfrastructureFailure
from eval.judges.extract.pool import ExtractionFailed, Pool
from eval.score.records import score_job
from eval.score.rescore import main as score_main
from tests.conftest import write_native
from tests.helpers.eval_records import make_job

TASK = {"id": "t", "prompt": "p", "workspace": "w", "output": "output/a.csv",
        "rubrics": [{"text": "row", "check": {"type": "row", "cells": ["x", 1]}}, {"text": "rows", "check": {"type": "row_count", "min": 1}},
                    {"text": "the input is kept", "check": {"type": "contains", "file": "in.txt", "values": ["x"]}}]}


def _scored_job(tmp_path: Path) -> Path:
    bench = write_native(tmp_path / "bench", [TASK], {"w/in.txt": "x"})
    job = {"job_id": "j", "benchmark": "native", "task_id": "t", "method": "dci", "model": "m", "seed": 0,
           "config": {"benchmark": {"name": "native", "path": str(bench)}, "judge": {"name": "auto"}}}
    job_dir = make_job(tmp_path / "out" / "j", {"output/a.csv": "k,v\nx,1\n"}, job=job)
    assert score_job(job_dir)["metrics"]["pass_rate"] == 1.0
    return job_dir


def test_a_relative_or_missing_folder_is_the_hosts_failure_not_the_files(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n")
    pool = Pool(slots=1)
    try:
        assert pool.read(tmp_path, "a.md", ExtractLimits()).extracted.text == "# A\n"
        with pytest.raises(ExtractionFailed, match="relative folder"):
            pool.read(Path("outputs/relout/j/deliverable"), "a.md", ExtractLimits())
        with pytest.raises(ExtractionFailed, match="cannot open the folder .*a failure of the host"):
            pool.read(tmp_path / "gone", "a.md", ExtractLimits())
        (tmp_path / "d").mkdir()
        (tmp_path / "d" / "link.md").symlink_to(tmp_path / "a.md")  # what an agent may leave: its file's fault
        assert "cannot open" in pool.read(tmp_path / "d", "link.md", ExtractLimits()).extracted.error
    finally:
        pool.close()


def test_a_record_whose_deliverable_is_gone_stays_unscored_and_keeps_its_scores(tmp_path: Path, capsys) -> None:
    job_dir = _scored_job(tmp_path)
    before = (job_dir / "scores.json").read_bytes()
    shutil.rmtree(job_dir / "deliverable")  # lost on the host: result.json still lists the file
    with pytest.raises(InfrastructureFailure, match="deliverable is missing, but result.json lists 1 file"):
        score_job(job_dir, JudgeConfig(name="rule"))
    assert score_main([str(job_dir)]) == 1
    out = capsys.readouterr().out
    assert "UNSCORED" in out and "1 job(s) left unscored by a failure of the host" in out
    assert (job_dir / "scores.json").read_bytes() == before  # never overwritten with a 0


def test_eval_score_of_a_relative_folder_from_elsewhere_keeps_the_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job_dir = _scored_job(tmp_path)
    before = json.loads((job_dir / "scores.json").read_text())
    monkeypatch.chdir(tmp_path)
    assert score_main(["out/j"]) == 0
    after = json.loads((job_dir / "scores.json").read_text())
    assert after["metrics"] == before["metrics"] == {**before["metrics"], "pass_rate": 1.0}


def test_a_record_of_a_relative_benchmark_path_rescored_from_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records written before paths were made absolute (scored 0 then) get their scores back."""
    job_dir = _scored_job(tmp_path)
    doc = json.loads((job_dir / "job.json").read_text())
    doc["config"]["benchmark"]["path"] = "bench"
    (job_dir / "job.json").write_text(json.dumps(doc))
    (job_dir / "scores.json").unlink()
    monkeypatch.chdir(tmp_path)
    assert score_main(["out"]) == 0
    assert json.loads((job_dir / "scores.json").read_text())["metrics"]["pass_rate"] == 1.0


@pytest.mark.slow
def test_a_sweep_counts_an_unscored_job_and_never_scores_it_0(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import write_script

    bench = write_native(tmp_path / "bench", [TASK, {**TASK, "id": "t2"}], {"w/in.txt": "x"})
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {
        "command": "mkdir -p output && printf 'k,v\\nx,1\\n' > output/a.csv"}}]}, {"content": "done"}])
    out = tmp_path / "out"

    def sweep(judge: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "model=scripted",
               f"model.script={script}", "method=dci", "tracker=jsonl", f"out={out}", "sweep=u", f"judge={judge}",
               "cluster.error_retries=1", "cluster.error_wait_s=0.1"]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300)

    assert sweep("none").returncode == 0
    jobs = sorted(d for d in (out / "u").iterdir() if (d / "job.json").is_file())
    shutil.rmtree(jobs[0] / "deliverable")  # lost on the host after the run
    second = sweep("rule")
    assert second.returncode == 4, second.stderr[-3000:]  # a job that is not a result: the sweep says so (issue 48)
    assert "1 of 2 planned job(s) are not results: 1 unscored" in second.stderr.strip().splitlines()[-1]
    assert not (jobs[0] / "scores.json").exists(), "a record the judge could not read was scored"
    assert json.loads((jobs[1] / "scores.json").read_text())["metrics"]["pass_rate"] == 1.0
    said = second.stdout + second.stderr
    assert f"ok      {jobs[0].name} (finished" in said and "UNSCORED\n" in said, said[-3000:]
    assert "1 job(s) finished but are UNSCORED" in said and "deliverable is missing" in said
    table1 = (out / "u" / "report" / "index.html").read_text(encoding="utf-8")
    assert "1 unscored (its judge failed on evidence the agent cannot write" in table1
