"""The job record: one shape per document whatever way a job ends, a schema version, one benchmark
label, old records readable, newer ones refused rather than cleared, the config reloaded typed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from eval.report.load import load_sweep
from runners.config.schema import job_record_config, recorded_config
from runners.core.job_record import JobRecord
from runners.core.record_files import SCHEMA_VERSION, read_json
from runners.core.record_types import RecordError
from runners.job.identity import job_id
from runners.job.resume import Reruns, fresh_job_dir, is_final
from runners.job.run import record_time_limit, run_and_score
from tests.conftest import compose_root, write_script

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A built-in task run to its end and scored by the rule judge."""
    tmp = tmp_path_factory.mktemp("rec")
    script = write_script(tmp / "s.jsonl", [{"content": "<FINAL_ANSWER>none</FINAL_ANSWER>"}])
    cfg = compose_root(["benchmark=builtin", "benchmark.suite=qa", "method=dci", "model=scripted",
                        f"model.script={script}", "judge=rule", f"out={tmp}"])
    from eval.benchmarks import load_benchmark

    task = load_benchmark(cfg.benchmark).tasks()[0]
    jid = job_id(cfg, task)
    run_and_score(cfg, task.id, tmp / jid, jid, None)
    return tmp / jid


def test_every_document_carries_the_schema_version(finished: Path) -> None:
    for name in ("job.json", "result.json", "scores.json"):
        assert read_json(finished / name)["schema_version"] == SCHEMA_VERSION, name


def test_scores_name_the_benchmark_as_the_job_does(finished: Path) -> None:
    job, scores = read_json(finished / "job.json"), read_json(finished / "scores.json")
    assert job["benchmark"] == "builtin-qa"
    assert scores["benchmark"] == job["benchmark"]


def test_a_stopped_job_has_the_shape_of_every_result(finished: Path, tmp_path: Path) -> None:
    stopped = tmp_path / "stopped"
    stopped.mkdir()
    (stopped / "job.json").write_text((finished / "job.json").read_text())
    record_time_limit(stopped, "stopped", 60, 61.5)
    normal, limit = read_json(finished / "result.json"), read_json(stopped / "result.json")
    assert set(limit) == set(normal)
    assert limit["stop_reason"] == "time_limit" and limit["tokens_in"] == 0 and limit["deliverable"] == []
    assert limit["sandbox"] == read_json(finished / "job.json")["sandbox"]  # the sandbox it ran in


def test_the_job_config_reloads_as_the_typed_config(finished: Path) -> None:
    meta = JobRecord(finished).meta
    cfg = recorded_config(meta.config)
    assert cfg.benchmark.suite == "qa" and cfg.method.name == "dci" and cfg.judge.name == "rule"
    assert job_record_config(cfg) == meta.config


def write_v1(sdir: Path) -> Path:
    """A record as written before the schema version: a short time-limit result, the old label."""
    d = sdir / "old"
    d.mkdir(parents=True)
    (d / "job.json").write_text(json.dumps({"job_id": "old", "benchmark": "builtin-workspace", "task_id": "t1",
                                            "method": "dci", "model": "m", "seed": 0, "config": {}}))
    (d / "result.json").write_text(json.dumps({"job_id": "old", "stop_reason": "time_limit", "turns": None,
                                               "final_answer": "", "wall_s": 9.0, "error": "stopped"}))
    (d / "scores.json").write_text(json.dumps({"judge": "rule", "task_id": "t1", "kind": "workspace", "benchmark": "builtin/workspace",
                                               "metrics": {"pass_rate": 0.5}, "items": []}))
    return d


def test_a_version_1_record_reads_with_what_it_lacks_filled(tmp_path: Path) -> None:
    write_v1(tmp_path / "sw")
    (job,) = load_sweep(tmp_path / "sw").jobs
    assert job.result is not None and job.result.schema_version == 1
    assert job.result.stop_reason == "time_limit" and job.result.tokens_in == 0 and job.result.deleted == []
    assert not job.errored and job.chars_read == 0
    assert job.scores is not None and job.scores["benchmark"] == "builtin-workspace" == job.benchmark


def test_a_record_from_a_newer_version_is_refused_and_kept(tmp_path: Path) -> None:
    d = write_v1(tmp_path / "sw")
    newer = {**read_json(d / "result.json"), "stop_reason": "env_error", "schema_version": SCHEMA_VERSION + 1}
    (d / "result.json").write_text(json.dumps(newer))
    with pytest.raises(RecordError, match="newer than this RunningTab reads"):
        is_final(d, scored=False, reruns=Reruns())
    with pytest.raises(RecordError, match="schema_version"):
        fresh_job_dir(d)
    assert read_json(d / "result.json") == newer and (d / "scores.json").exists()  # nothing cleared


def test_the_job_entry_point_says_what_is_wrong_with_a_newer_record(finished: Path, tmp_path: Path) -> None:
    cfg = JobRecord(finished).meta.config
    script = cfg["model"]["script"]
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "runners.job", "benchmark=builtin", "benchmark.suite=qa", f"task={JobRecord(finished).meta.task_id}",
           "method=dci", "model=scripted", f"model.script={script}", "judge=rule", f"out={out}"]
    first = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    job = Path(first.stdout.strip().splitlines()[-1])
    result = {**read_json(job / "result.json"), "schema_version": SCHEMA_VERSION + 1}
    (job / "result.json").write_text(json.dumps(result))
    again = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert again.returncode != 0 and "Traceback" not in again.stderr
    assert "newer than this RunningTab reads" in again.stderr
    assert read_json(job / "result.json") == result


def test_the_tab_settings_of_a_record_read_typed_whatever_version_wrote_them(finished: Path) -> None:
    from runners.core.record_types import JobMeta

    meta = JobRecord(finished).meta
    assert meta.tab_config is None  # dci has no tab
    tab = {"capture": True, "review": False, "a_setting_of_another_version": 1}
    other = JobMeta.from_json({**meta.to_json(), "config": {"method": {"name": "x", "tab": tab}}})
    assert other.tab_config is not None and other.tab_config.settings()["review"] is False
