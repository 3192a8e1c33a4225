"""The single-job entry point (`python -m runners.job`), secrets, model errors and the embedded model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runners.core.job_record import JobRecord
from runners.core.record_files import read_json
from runners.job.identity import job_id
from runners.job.run import run_and_score
from tests.conftest import compose_root, write_native, write_script
from tests.helpers.http_stub import Reply, StubServer, completion, tool_call

REPO = Path(__file__).resolve().parents[3]
SECRET = "sk-test-DO-NOT-LEAK-8c1f2e"


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    task = {"id": "count", "prompt": "How many rows does data.csv have?", "workspace": "w", "answer": "3"}
    return write_native(root, [task], {"w/data.csv": "a,b\n1,2\n3,4\n5,6\n"})


@pytest.mark.slow
def test_cli_runs_one_job_and_prints_its_dir(bench: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "tail -n +2 data.csv | wc -l"}}]},
        {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"},
    ])
    cmd = [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "task=count",
           "method=runningtab", "model=scripted", f"model.script={script}", "seed=1", f"out={tmp_path / 'o'}"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    job = Path(r.stdout.strip().splitlines()[-1])
    assert job.parent == tmp_path / "o"
    assert read_json(job / "result.json")["stop_reason"] == "finished"
    assert read_json(job / "job.json")["seed"] == 1
    # the sandbox actually used is in the record (bubblewrap runs here: CI installs it)
    assert read_json(job / "job.json")["sandbox"] == read_json(job / "result.json")["sandbox"] == "bwrap"
    assert (job / "tab.json").exists() and (job / "scores.json").exists()
    # a second run of the same job finds it complete and runs nothing
    again = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "already complete" in again.stderr


def test_cli_without_task_lists_tasks(bench: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}",
                        "model=scripted"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "task=ID" in r.stderr and "count" in r.stderr


def test_api_key_never_reaches_the_record(bench: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RT_TEST_KEY", SECRET)
    with StubServer() as stub:
        stub.push(
            Reply(body=completion(None, [tool_call("c1", "bash", json.dumps({"command": "env; cat data.csv"}))])),
            Reply(body=completion(None, [tool_call("c2", "read", "{not json")])),
            Reply(body=completion("<FINAL_ANSWER>3</FINAL_ANSWER>")),
            Reply(body=completion("<FINAL_ANSWER>3</FINAL_ANSWER>")),  # after the finish check
        )
        cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", "method=runningtab", "model=openai",
                            f"model.base_url={stub.url}", "model.name=stub", "model.api_key_env=RT_TEST_KEY"])
        jid = job_id(cfg, "count")
        out = run_and_score(cfg, "count", tmp_path / jid, jid, None)
    assert stub.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert out.result.stop_reason == "finished"
    traj = JobRecord(tmp_path / jid).trajectory()
    bad = [m for m in traj if m.get("role") == "tool" and m["tool_call_id"] == "c2"][0]
    assert bad["is_error"]  # malformed JSON became an error result, and the run went on
    for p in (tmp_path / jid).rglob("*"):
        if p.is_file():
            assert SECRET not in p.read_text(errors="replace"), p


def test_model_error_is_the_stop_reason(bench: Path, tmp_path: Path) -> None:
    with StubServer(default=Reply(500, {"error": {"message": "down"}})) as stub:
        cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", "model=openai", f"model.base_url={stub.url}",
                            "model.name=stub", "model.max_retries=1", "model.backoff_base_s=0.01", "judge=none"])
        jid = job_id(cfg, "count")
        out = run_and_score(cfg, "count", tmp_path / jid, jid, None)
    assert out.result.stop_reason == "model_error"
    assert out.result.turns == 0


def test_context_length_is_the_stop_reason(bench: Path, tmp_path: Path) -> None:
    body = {"error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}}
    with StubServer(default=Reply(400, body)) as stub:
        cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", "model=openai", f"model.base_url={stub.url}",
                            "model.name=stub", "judge=none"])
        jid = job_id(cfg, "count")
        out = run_and_score(cfg, "count", tmp_path / jid, jid, None)
    assert out.result.stop_reason == "context_length"
    assert len(stub.requests) == 1


@pytest.mark.slow
def test_embedded_model_short_episode(tmp_path: Path) -> None:
    """A real episode on SmolLM2 through the llama.cpp server: the whole path, a few turns."""
    cfg = compose_root(["benchmark=builtin", "benchmark.suite=qa", "method=runningtab", "model=smollm2",
                        "agent.max_turns=3", f"out={tmp_path}"])
    from eval.benchmarks import load_benchmark

    task = load_benchmark(cfg.benchmark).tasks()[0].id
    r = subprocess.run(
        [sys.executable, "-m", "runners.job", "benchmark=builtin", "benchmark.suite=qa", f"task={task}",
         "method=runningtab", "model=smollm2", "agent.max_turns=3", f"out={tmp_path}"],
        cwd=REPO, capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(r.stdout.splitlines()) == 1, r.stdout  # what the command returns; logs (the health check's) on stderr
    job = Path(r.stdout.strip())
    result = read_json(job / "result.json")
    assert result["stop_reason"] in ("finished", "turn_budget"), result
    assistant = [m for m in JobRecord(job).trajectory() if m["role"] == "assistant"]
    assert assistant and all(m["usage"]["output_tokens"] > 0 for m in assistant)
    assert result["tokens_in"] > 0


def _job_cmd(bench: Path, out: Path, *overrides: str) -> list[str]:
    return [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "task=count",
            "model=scripted", f"out={out}", *overrides]


def _bad_configs(tmp_path: Path) -> list[tuple[list[str], str]]:
    good = write_script(tmp_path / "good.jsonl", [{"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(b'{"content": "caf\xe9"}\n')
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"content": "ok"}\n{not json\n')
    return [
        ([f"model.script={tmp_path / 'missing.jsonl'}"], "script file not found"),
        ([f"model.script={tmp_path}"], "is a directory"),
        ([f"model.script={latin1}"], "not valid UTF-8"),
        ([f"model.script={broken}"], "broken.jsonl:2:"),
        ([f"model.script={good}", "agent.context_level=9"], "agent.context_level=9"),
        ([f"model.script={good}", "agent.max_turns=-1"], "agent.max_turns=-1"),
        ([f"model.script={good}", "agent.time_limit_s=0"], "agent.time_limit_s=0"),
    ]


@pytest.mark.slow
def test_bad_config_fails_before_any_record(bench: Path, tmp_path: Path) -> None:
    """Everything checkable up front fails with a clear message, a non-zero exit and no record."""
    for overrides, message in _bad_configs(tmp_path):
        out = tmp_path / "o"
        r = subprocess.run(_job_cmd(bench, out, *overrides), cwd=REPO, capture_output=True, text=True, timeout=120)
        assert r.returncode != 0, (overrides, r.stderr[-2000:])
        assert message in r.stderr, (overrides, r.stderr[-2000:])
        assert "Traceback" not in r.stderr, r.stderr[-2000:]
        assert not out.exists() or not any(out.iterdir()), overrides


@pytest.mark.slow
def test_errored_job_is_retried_and_keeps_the_earlier_error(bench: Path, tmp_path: Path) -> None:
    """A model_error is recorded but not complete: every re-run retries it (issue 48: a host failure
    is never final, nor "already complete"), and the record keeps the earlier attempts' errors."""
    script = write_script(tmp_path / "s.jsonl", [{"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])
    dead = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    erroring = ["model=openai", f"model.base_url={dead}", "model.name=stub", "model.max_retries=0", "cluster.error_retries=1"]
    cmd = [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "task=count",
           f"out={tmp_path / 'o'}", "judge=none", *erroring]
    first = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert first.returncode != 0 and "model_error" in first.stderr, first.stderr[-2000:]
    job = Path(first.stdout.strip().splitlines()[-1])
    r1 = read_json(job / "result.json")
    assert r1["stop_reason"] == "model_error" and r1["errored"] is True and r1["error"]
    second = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "already complete" not in second.stderr, second.stderr[-2000:]
    r2 = read_json(job / "result.json")
    assert r2["attempt"] == 2 and [e["error"] for e in r2["earlier_errors"]] == [r1["error"]]
    third = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert third.returncode != 0 and "already complete" not in third.stderr and "not a result" in third.stderr, third.stderr[-2000:]
    assert read_json(job / "result.json")["attempt"] == 3
    # the fixed cause (a working model, same identity otherwise) is a different job; it runs and is complete
    fixed = subprocess.run([*cmd[:-len(erroring)], "model=scripted", f"model.script={script}"], cwd=REPO,
                           capture_output=True, text=True, timeout=120)
    assert fixed.returncode == 0, fixed.stderr[-2000:]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["task=nope"], "task=nope is not a task of it; native has: count"),
        (["task=count", "benchmark.path=/nonexistent"], "error: benchmark=native: no tasks.jsonl in /nonexistent"),
    ],
)
def test_a_wrong_task_or_benchmark_is_one_line(bench: Path, tmp_path: Path, args: list[str], message: str) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"content": "x"}])
    cmd = [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "model=scripted",
           f"model.script={script}", f"out={tmp_path / 'o'}", *args]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and message in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert not (tmp_path / "o").exists()


def test_a_new_judge_rescores_the_finished_job(bench: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])
    cmd = [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "task=count",
           "model=scripted", f"model.script={script}", f"out={tmp_path / 'o'}"]
    first = subprocess.run([*cmd, "judge=none"], cwd=REPO, capture_output=True, text=True, timeout=120)
    job = Path(first.stdout.strip().splitlines()[-1])
    assert first.returncode == 0 and not (job / "scores.json").exists(), first.stderr[-2000:]
    again = subprocess.run([*cmd, "judge=rule"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "already complete (re-scored with judge rule)" in again.stderr, again.stderr[-2000:]
    assert read_json(job / "scores.json")["judge"] == "rule"


@pytest.mark.slow
def test_a_finished_job_its_judge_cannot_read_is_never_already_complete(tmp_path: Path) -> None:
    """Issue 48: "already complete" is said only of results. A finished job whose deliverable was lost
    on the host is unscored (not a result): a re-run under a judge says so and exits non-zero, as the
    run that finished it does. Before: "already complete (UNSCORED: ...)", exit 0."""
    task = {"id": "t", "prompt": "p", "workspace": "w", "output": "output/a.csv",
            "rubrics": [{"text": "row", "check": {"type": "row", "cells": ["x", 1]}}]}
    bench = write_native(tmp_path / "b", [task], {"w/in.txt": "x"})
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {
        "command": "mkdir -p output && printf 'k,v\\nx,1\\n' > output/a.csv"}}]}, {"content": "done"}])
    cmd = [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "task=t", "method=dci",
           "model=scripted", f"model.script={script}", f"out={tmp_path / 'o'}"]
    first = subprocess.run([*cmd, "judge=none"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr[-2000:]
    job = Path(first.stdout.strip().splitlines()[-1])
    shutil.rmtree(job / "deliverable")  # lost on the host after the run
    again = subprocess.run([*cmd, "judge=rule"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode != 0 and "already complete" not in again.stderr, again.stderr[-2000:]
    assert "UNSCORED" in again.stderr and "not a result" in again.stderr and "python -m eval.score" in again.stderr, again.stderr[-2000:]
    assert not (job / "scores.json").exists()
