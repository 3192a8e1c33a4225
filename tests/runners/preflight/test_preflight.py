"""The sweep entry point: a bad config fails before anything is written; errored jobs are counted
apart in the progress and the ledger, their errors printed at the end, and retried on resume."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from runners.core.record_files import read_json
from runners.sweep.ledger import Ledger
from tests.conftest import write_native, write_script

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    tasks = [{"id": f"t{i}", "prompt": "How many rows?", "workspace": "w", "answer": "3"} for i in range(2)]
    return write_native(root, tasks, {"w/data.csv": "a\n1\n2\n3\n"})


def sweep(bench: Path, out: Path, *overrides: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "runners.sweep", "grid.benchmark=[native]", f"benchmark.path={bench}", "benchmark.limit=null", "grid.method=[dci]",
           "grid.model=[scripted]", "grid.seed=[0]", "tracker=jsonl", f"out={out}", "sweep=p", *overrides]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["model.script={tmp}"], "is a directory"),
        (["model.script={tmp}/missing.jsonl"], "script file not found"),
        (["model.script={good}", "agent.context_level=9"], "agent.context_level=9"),
        (["model.script={good}", "agent.max_turns=-1"], "agent.max_turns=-1"),
    ],
)
def test_bad_config_fails_before_anything_is_written(bench: Path, tmp_path: Path, overrides: list[str], message: str) -> None:
    good = write_script(tmp_path / "good.jsonl", [{"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])
    out = tmp_path / "out"
    r = sweep(bench, out, *(o.format(tmp=tmp_path, good=good) for o in overrides))
    assert r.returncode != 0, r.stderr[-2000:]
    assert message in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert not out.exists()


def test_a_judge_without_its_key_is_refused_before_any_job(tmp_path: Path) -> None:
    """Issue 30: a judge's missing key was found only after every agent ran (the sweep exited 0 and
    every job ended unscored); the preflight now refuses the sweep before anything is written."""
    rubric_bench = write_native(tmp_path / "b", [{"id": "t", "prompt": "Count the rows.", "workspace": "w",
                                                  "rubrics": ["The count is 3"]}], {"w/data.csv": "a\n1\n2\n3\n"})
    good = write_script(tmp_path / "good.jsonl", [{"content": "3 rows"}])
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    r = sweep(rubric_bench, out, f"model.script={good}", "judge=llm_rubric", env=env)
    assert r.returncode != 0, r.stderr[-2000:]
    assert "judge llm_rubric" in r.stderr and "$OPENAI_API_KEY, which is not set" in r.stderr and "judge=none" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and not out.exists()


def test_errored_jobs_are_counted_apart_retried_and_the_sweep_exits_with_its_own_code(bench: Path, tmp_path: Path) -> None:
    """Issue 48 (5), a provider outage that does not heal (every call refused): each run tries the jobs
    again within the run, then exits NOT_RESULTS_EXIT, its last line saying how many, why and the
    command that runs them again; the next run runs them again ("0 already complete"), never calls
    them complete. Before: every run exited 0, and after the retries "2 already complete, 0 to run"."""
    from runners.sweep.ending import NOT_RESULTS_EXIT

    erroring = ["grid.model=[openai]", "model.base_url=http://127.0.0.1:9/v1", "model.name=stub", "model.max_retries=0",
                "cluster.error_retries=1", "cluster.error_wait_s=0.2"]
    out = tmp_path / "out"
    first = sweep(bench, out, *erroring)
    assert first.returncode == NOT_RESULTS_EXIT, first.stderr[-3000:]
    last = first.stderr.strip().splitlines()[-1]
    assert last.startswith("sweep p: 2 of 2 planned job(s) are not results: 2 errored (model_error ×2)"), last
    assert "run them again with: " in last and " -m runners.sweep " in last and "model.base_url=http://127.0.0.1:9/v1" in last, last
    assert "a failure of the host, tried again in 0 s (retry 1 of 1" in first.stdout + first.stderr, first.stdout[-3000:]
    sdir = out / "p"
    entries = Ledger(sdir).entries()
    assert len(entries) == 2 and {e["status"] for e in entries} == {"error"}  # one line a job: its last try
    assert all(e["error"] and e["stop_reason"] == "model_error" for e in entries)
    assert "2 job(s) did not finish ok" in first.stderr and "model_error" in first.stderr  # the first errors, at the end
    assert re.search(r"\] error +native__t0", first.stderr) and not re.search(r"\] ok ", first.stderr)  # none shown as ok
    for run in (2, 3):
        again = sweep(bench, out, *erroring)
        assert again.returncode == NOT_RESULTS_EXIT and "0 already complete, 2 to run" in again.stderr, again.stderr[-3000:]
        for d in sdir.iterdir():
            if (d / "result.json").exists():
                r = read_json(d / "result.json")
                assert r["errored"] and r["attempt"] == 2 * run and len(r["earlier_errors"]) == 2 * run - 1


def test_an_outage_of_a_few_calls_heals_within_the_run(bench: Path, tmp_path: Path) -> None:
    """Issue 48 (5): the provider refuses the first calls (503), then answers: the jobs it failed run
    again after the backoff, and the sweep ends with every job a result, exit 0, no human involved."""
    from tests.helpers.http_stub import Reply, StubServer, completion

    with StubServer(default=Reply(200, completion("<FINAL_ANSWER>3</FINAL_ANSWER>"))) as stub:
        stub.push(*[Reply(503, {"error": {"message": "overloaded"}})] * 2)
        r = sweep(bench, tmp_path / "out", "grid.model=[openai]", f"model.base_url={stub.url}", "model.name=stub",
                  "model.max_retries=0", "cluster.error_retries=2", "cluster.error_wait_s=0.5")
    assert r.returncode == 0, r.stderr[-3000:]
    results = [read_json(p) for p in (tmp_path / "out" / "p").glob("*/result.json")]
    assert len(results) == 2 and all(x["stop_reason"] == "finished" and not x["errored"] for x in results), results
    assert sorted(x["attempt"] for x in results) == [2, 2] and all(x["earlier_errors"][0]["stop_reason"] == "model_error" for x in results)
    assert "not results" not in r.stderr
