"""Which finished records run again (runners/job/resume.py): a host failure always, a job stopped at
its own budget only under a higher one, read from the config that would run the job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runners.core.job_record import read_result, write_result
from runners.core.record_types import Result
from runners.job.resume import Logged, Reruns, fresh_job_dir, is_final


def test_reruns_are_read_from_the_config_that_would_run_the_job(compose_cfg) -> None:
    cfg = compose_cfg(["cluster.error_retries=1", "budget.job_usd=0.5"])
    assert Reruns.of(cfg) == Reruns(job_usd=0.5)


def test_an_errored_record_is_never_final(tmp_path: Path) -> None:
    """Issue 48 (5): a host failure is not a result however often it was tried: every run of the sweep
    runs it again (before: final after `cluster.error_retries` attempts, and counted "already complete")."""
    reruns = Reruns()
    for attempt in (1, 2, 9):
        write_result(tmp_path, Result("j", "env_error", attempt=attempt, error="boom"))
        assert reruns.again(read_result(tmp_path)) and not is_final(tmp_path, False, reruns)
    assert not reruns.again(Result("j", "finished"))


def test_a_record_stopped_at_its_budget_is_a_result_run_again_only_under_a_higher_one(tmp_path: Path) -> None:
    """Issue 48: `budget.job_usd` stops a job on what its agent did, like its turn limit: a result."""
    write_result(tmp_path, Result("j", "budget", budget_usd=0.5))  # as the loop hands it over
    result = read_result(tmp_path)
    assert (result.stop_reason, result.errored) == ("job_budget", False)
    assert json.loads((tmp_path / "result.json").read_text())["stop_reason"] == "job_budget"
    assert is_final(tmp_path, False, Reruns(job_usd=0.5))
    assert not is_final(tmp_path, False, Reruns(job_usd=1.0))
    assert not is_final(tmp_path, False, Reruns(job_usd=None))  # no budget now: higher than any
    logged = Logged("ok", 1, 1e12, "job_budget")  # the ledger's line does not vouch for it: the record decides
    assert not is_final(tmp_path, False, Reruns(job_usd=1.0), logged)
    earlier = fresh_job_dir(tmp_path)  # replaced by the run under the higher budget, its spend kept
    assert [e["stop_reason"] for e in earlier] == ["job_budget"] and not (tmp_path / "result.json").exists()


def test_a_record_of_the_stop_before_it_had_its_own_name_reads_as_a_job_budget_stop(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text(json.dumps({"stop_reason": "budget", "budget_usd": 2.0, "errored": True}))
    assert read_result(tmp_path).stop_reason == "job_budget" and not read_result(tmp_path).errored
    (tmp_path / "result.json").write_text(json.dumps({"stop_reason": "budget", "budget_usd": None, "errored": True}))
    assert read_result(tmp_path).errored  # the sweep's (or its cell's) budget: the host's


def test_a_result_is_never_cleared(tmp_path: Path) -> None:
    write_result(tmp_path, Result("j", "harness_exit", error="the harness exited with code 137 after the agent's first command ran"))
    with pytest.raises(FileExistsError):
        fresh_job_dir(tmp_path)
