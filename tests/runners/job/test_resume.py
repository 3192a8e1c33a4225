"""Which finished records run again (runners/job/resume.py): the config's retries and job budget,
read together from the config that would run the job."""

from __future__ import annotations

from pathlib import Path

from runners.core.job_record import write_result
from runners.core.record_types import Result
from runners.job.resume import Reruns, is_final


def test_reruns_are_read_from_the_config_that_would_run_the_job(compose_cfg) -> None:
    cfg = compose_cfg(["cluster.error_retries=1", "budget.job_usd=0.5"])
    assert Reruns.of(cfg) == Reruns(error_retries=1, job_usd=0.5)


def test_an_errored_record_runs_again_until_its_retries_are_spent(tmp_path: Path) -> None:
    reruns = Reruns(error_retries=1)
    write_result(tmp_path, Result("j", "env_error", attempt=1, error="boom"))
    assert reruns.again(Result("j", "env_error", attempt=1)) and not is_final(tmp_path, False, reruns)
    write_result(tmp_path, Result("j", "env_error", attempt=2, error="boom"))
    assert is_final(tmp_path, False, reruns)
    assert not reruns.again(Result("j", "finished"))


def test_a_record_stopped_at_its_budget_runs_again_only_under_a_higher_one(tmp_path: Path) -> None:
    write_result(tmp_path, Result("j", "budget", budget_usd=0.5))
    assert is_final(tmp_path, False, Reruns(error_retries=2, job_usd=0.5))
    assert not is_final(tmp_path, False, Reruns(error_retries=2, job_usd=1.0))
    assert not is_final(tmp_path, False, Reruns(error_retries=2, job_usd=None))  # no budget now: higher than any
