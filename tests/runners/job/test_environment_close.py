"""A job's environment is closed whatever stops the job between its making and its episode: a
model that cannot be made or a job.json that cannot be written (runners/job/run.py) used to leave
the environment's scratch folder and cgroup to the garbage collector, and to whatever still held
the environment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import runners.job.run as job_run
from eval.benchmarks import load_benchmark
from runners.job.identity import job_id
from runners.job.run import run_job
from tests.conftest import compose_root, write_script


@pytest.mark.parametrize("fails", ["job_model", "write_meta"])
def test_a_job_stopped_before_its_episode_has_its_environment_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     fails: str) -> None:
    made: list[Any] = []
    real = job_run.WorkspaceEnv

    def kept(*args: Any, **kwargs: Any) -> Any:
        made.append(real(*args, **kwargs))
        return made[-1]

    def no_model(*args: Any) -> Any:
        raise RuntimeError("no model here")

    write_meta = job_run.write_meta

    def no_meta(job_dir: Path, meta: Any) -> None:
        if meta.sandbox is not None:  # the one that says the sandbox, once the environment is made
            raise RuntimeError("no model here")  # (the same words: one assertion below)
        write_meta(job_dir, meta)

    monkeypatch.setattr(job_run, "WorkspaceEnv", kept)
    monkeypatch.setattr(job_run, fails, {"job_model": no_model, "write_meta": no_meta}[fails])
    cfg = compose_root(["benchmark=builtin", "benchmark.suite=qa", "method=dci", "model=scripted",
                        f"model.script={write_script(tmp_path / 's.jsonl', [])}", f"out={tmp_path}"])
    task = load_benchmark(cfg.benchmark).tasks()[0]
    jid = job_id(cfg, task)
    result = run_job(cfg, task, tmp_path / jid, jid)
    assert result.errored and "no model here" in (result.error or "")  # the job's error, as before
    [env] = made
    assert not os.path.exists(env.shell.scratch)
    assert env.shell.caps.cgroup == ""  # removed (or there was none to make)
