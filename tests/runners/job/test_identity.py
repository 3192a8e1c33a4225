"""Job identity (runners/job/identity.py): the id covers what can change what the agent does — the
task's content and workspace included — and nothing else (prices, retries, timeouts, the judge)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runners.job.identity import job_id
from tests.conftest import compose_root, write_native

TASK = {"id": "t", "prompt": "Count the rows.", "workspace": "w", "answer": "3"}


def _id(bench: Path, *overrides: str, model: tuple[str, ...] = ("model=scripted", "model.script=s.jsonl")) -> str:
    cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", *model, *overrides])
    return job_id(cfg, "t")


def test_task_content_changes_the_id(tmp_path: Path) -> None:
    bench = write_native(tmp_path / "b", [TASK], {"w/data.csv": "a\n1\n2\n3\n"})
    base = _id(bench)
    assert _id(bench) == base
    (bench / "tasks.jsonl").write_text(json.dumps({**TASK, "prompt": "Count the rows, please."}) + "\n")
    edited_prompt = _id(bench)
    (bench / "tasks.jsonl").write_text(json.dumps({**TASK, "answer": "4"}) + "\n")
    edited_answer = _id(bench)
    (bench / "tasks.jsonl").write_text(json.dumps(TASK) + "\n")
    assert _id(bench) == base  # back to the same content: the same job
    (bench / "workspaces" / "w" / "data.csv").write_text("a\n1\n2\n3\n4\n")
    edited_file = _id(bench)
    (bench / "workspaces" / "w" / "data.csv").write_text("a\n1\n2\n3\n")
    (bench / "workspaces" / "w" / "more.txt").write_text("x")
    added_file = _id(bench)
    assert len({base, edited_prompt, edited_answer, edited_file, added_file}) == 5


@pytest.mark.slow
def test_what_cannot_change_the_agent_is_not_in_the_id(tmp_path: Path) -> None:
    bench = write_native(tmp_path / "b", [TASK], {"w/data.csv": "a\n1\n"})
    base = _id(bench)
    for o in ("model.price_in_per_mtok=9.5", "model.price_out_per_mtok=3", "model.concurrency=2", "judge=none",
              "judge.max_retries=7", "cluster.retries=5", "storage=s3", "tracker=none", f"agent.work_dir={tmp_path}"):
        assert _id(bench, o) == base, o
    for o in ("agent.max_turns=7", "method=runningtab", "seed=1", "env.bash_timeout=10"):
        assert _id(bench, o) != base, o
    api = ("model=openai", "model.name=m", "model.base_url=http://127.0.0.1:9/v1")
    api_base = _id(bench, model=api)
    for o in ("model.max_retries=1", "model.timeout_s=5", "model.backoff_base_s=0.1"):
        assert _id(bench, o, model=api) == api_base, o
    assert _id(bench, "model.temperature=0.5", model=api) != api_base
    served = ("model=vllm", "model.name=m", "model.server.model_path=org/m")
    served_base = _id(bench, model=served)
    for o in ("model.server.executable=[/opt/vllm/bin/vllm,serve]", "+model.server.env.VLLM_CPU_KVCACHE_SPACE=4",
              "model.server.replicas=2", "model.server.startup_timeout_s=60"):  # how the server starts
        assert _id(bench, o, model=served) == served_base, o
    assert _id(bench, "model.server.ctx_size=8192", model=served) != served_base


def test_budgets_prices_the_cache_and_rate_limits_are_not_in_the_id(tmp_path: Path) -> None:
    """How calls are fetched, cached and billed, and what may be spent, never make another job: a
    re-run with a higher `budget.job_usd` must find (and re-run) the same job."""
    bench = write_native(tmp_path / "b", [TASK], {"w/data.csv": "a\n1\n"})
    base = _id(bench)
    for o in ("budget.job_usd=0.5", "budget.sweep_usd=100", "budget.cell_usd=3", "budget.estimate_usd=0.1",
              "budget.allow_unpriced=false", "model.cache=read", f"model.cache_dir={tmp_path}", "model.pricing=openai"):
        assert _id(bench, o) == base, o
    api = ("model=openai", "model.name=m", "model.base_url=http://127.0.0.1:9/v1")
    api_base = _id(bench, model=api)
    for o in ("model.rpm=600", "model.tpm=100000", "model.cache=off", "model.pricing=openai"):
        assert _id(bench, o, model=api) == api_base, o


def test_same_content_elsewhere_is_the_same_job(tmp_path: Path) -> None:
    """A second machine (another checkout path, fresh mtimes) computes the same id."""
    a = write_native(tmp_path / "a", [TASK], {"w/data.csv": "a\n1\n"})
    b = write_native(tmp_path / "b", [TASK], {"w/data.csv": "a\n1\n"})
    assert _id(a) == _id(b)


def test_a_later_field_at_its_default_leaves_ids_unchanged() -> None:
    """`method.plugins` came after sweeps were recorded: empty, it is not in the identity (their ids
    still resume); set, it makes a different job."""
    from runners.job.identity import config_identity
    from tests.conftest import compose_root

    base = ["benchmark=builtin", "method=dci", "model=scripted", "model.script=x.jsonl"]
    assert "plugins" not in config_identity(compose_root(base))["method"]
    assert config_identity(compose_root([*base, "method.plugins=[mypkg.hooks:make]"]))["method"]["plugins"] == ["mypkg.hooks:make"]


def test_runners_job_and_the_sweep_give_the_same_job_the_same_id(tmp_path: Path) -> None:
    """`runners.job` names the task in the config (`task=ID`), a sweep's cell does not: same job, same id."""
    bench = write_native(tmp_path / "b", [TASK], {"w/data.csv": "a\n1\n"})
    base = ["benchmark=native", f"benchmark.path={bench}", "method=dci", "model=scripted", "model.script=x.jsonl"]
    assert job_id(compose_root([*base, f"task={TASK['id']}"]), TASK["id"]) == job_id(compose_root(base), TASK["id"])


def test_a_production_harness_job_says_its_harness_in_its_folder_name(tmp_path: Path) -> None:
    """Issue 49: `native__stock-table__dci__scripted__s0__…` was a Codex job. Our own loop's ids are unchanged."""
    bench = write_native(tmp_path / "b", [TASK], {"w/data.csv": "a\n1\n"})
    ids = {h: _id(bench, f"agent={h}") for h in ("dci", "codex", "claude_code")}
    assert ids["dci"].split("__")[:5] == ["native", "t", "dci", "scripted", "s0"]
    assert ids["codex"].split("__")[:6] == ["native", "t", "codex", "dci", "scripted", "s0"]
    assert ids["claude_code"].split("__")[:6] == ["native", "t", "claude_code", "dci", "scripted", "s0"]
    assert len({i.rsplit("__", 1)[1] for i in ids.values()}) == 3  # the hash covers the harness as before
