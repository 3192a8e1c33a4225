"""The vLLM path against a real vLLM: its CPU build, in a venv of its own (.ci/vllm-up.sh, which CI
runs), serving a tiny random Llama made here (tests/helpers/vllm_tiny_model.py), no download.

The project starts and stops every server itself (`model=vllm_cpu`), and vLLM's own `hermes` parser
turns the model's text into tool calls. Random weights never call a tool on their own: each request
forces a well-formed call with a regex (`structured_outputs`, through `model.extra_body`). Not
exercised here: vLLM on a GPU, tensor parallelism, a real model's own tool calls.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from runners.core.job_record import JobRecord
from runners.core.record_files import read_json
from runners.models.server import ModelServer, ServerError
from runners.sweep.ledger import Ledger
from tests.conftest import compose_root, write_native
from tests.helpers.server_procs import (
    MARK,
    clean_up,
    kill_driver_session,
    marked,
    new_mark,
    wait_marked,
)

VLLM_PYTHON = os.environ.get("RUNNINGTAB_VLLM_PYTHON")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("own_ray"),  # their sweeps start their own local Ray
    pytest.mark.skipif(not VLLM_PYTHON, reason="no vLLM here: RUNNINGTAB_VLLM_PYTHON names the Python of a venv "
                       "with vLLM's CPU build (RUNNINGTAB_VLLM_PYTHON=$(bash .ci/vllm-up.sh); CI sets it)"),
]
REPO = Path(__file__).resolve().parents[3]


def sweep_env() -> dict[str, str]:
    """The environment at the call (RAY_ADDRESS of the session's Ray, once a slow test started it)."""
    return {**os.environ, "PYTHONPATH": str(REPO)}
COMMANDS = ("ls", "cat data.csv")
REGEX = '<tool_call>[{]"name": "bash", "arguments": [{]"command": "(ls|cat data[.]csv)"[}][}]</tool_call>'
GRACE_S = 10.0


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[int, Path]:
    """The tiny model by head size: 64, which vLLM's CPU attention serves, and 16, which it refuses
    on the first completion; made in one process (torch's import once)."""
    assert VLLM_PYTHON and Path(VLLM_PYTHON).is_file(), f"RUNNINGTAB_VLLM_PYTHON={VLLM_PYTHON}: no such file"
    root = tmp_path_factory.mktemp("tiny")
    made = {head: root / f"head{head}" for head in (64, 16)}
    r = subprocess.run([VLLM_PYTHON, str(REPO / "tests" / "helpers" / "vllm_tiny_model.py"),
                        *(f"{out}:{head}" for head, out in made.items())], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return made


@pytest.fixture(scope="module")
def tiny(models: dict[int, Path]) -> Path:
    return models[64]


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    tasks = [{"id": f"count{i}", "prompt": "How many rows does data.csv have?", "workspace": "w", "answer": "3"}
             for i in range(4)]
    return write_native(tmp_path_factory.mktemp("bench"), tasks, {"w/data.csv": "a,b\n1,2\n3,4\n5,6\n"})


def vllm(model: Path, mark: str, *extra: str) -> list[str]:
    """`model=vllm_cpu` serving `model`, as a user would write it, plus what the tests need."""
    return ["model=vllm_cpu", "model.name=tiny", f"model.server.model_path={model}", "model.max_tokens=64",
            "model.server.env.VLLM_CPU_KVCACHE_SPACE=1", "+model.server.env.HF_HUB_OFFLINE=1",
            f"+model.server.env.{MARK}={mark}", f"+model.extra_body.structured_outputs.regex='{REGEX}'",
            f"model.server.stop_grace_s={GRACE_S}", "model.server.startup_timeout_s=300", *extra]


def assert_vllm_tool_calls(job: Path, turns: int) -> None:
    """Every turn a bash call that vLLM's parser made from the model's text, run by the environment."""
    assert read_json(job / "result.json")["stop_reason"] == "turn_budget"
    messages = JobRecord(job).trajectory()
    replies = [m for m in messages if m["role"] == "assistant"]
    assert len(replies) == turns
    for m in replies:
        assert m["extra"]["finish_reason"] == "tool_calls" and not m["content"]  # parsed, not left as text
        [call] = m["tool_calls"]
        assert call["function"]["name"] == "bash"
        assert json.loads(call["function"]["arguments"])["command"] in COMMANDS
        assert m["usage"]["input_tokens"] > 0 and m["usage"]["output_tokens"] > 0
    results = [m for m in messages if m["role"] == "tool"]
    assert len(results) == turns and all("data.csv" in r["content"] or "1,2" in r["content"] for r in results)


def completions(server_log: Path) -> int:
    """Chat completions a vLLM server answered, from its access log."""
    text = server_log.read_text(errors="replace") if server_log.exists() else ""
    return text.count('"POST /v1/chat/completions HTTP/1.1" 200')


def sweep_cmd(bench: Path, out: Path, *overrides: str) -> list[str]:
    return [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "method=dci",
            "agent.max_turns=3", "tracker=jsonl", f"out={out}", "sweep=v",
            "model.cache=off", *overrides]  # these test serving: every call must reach a server


def test_a_job_through_runners_job(tiny: Path, bench: Path, tmp_path: Path) -> None:
    mark = new_mark()
    started = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "task=count0",
         "method=dci", *vllm(tiny, mark), "agent.max_turns=3", f"out={tmp_path}"],
        cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(r.stdout.splitlines()) == 1, r.stdout  # the job directory, nothing else
    assert_vllm_tool_calls(Path(r.stdout.strip()), turns=3)
    assert marked(mark) == []  # the job stopped its server
    print(f"runners.job with vLLM: {time.monotonic() - started:.1f} s")


def test_two_replicas_serve_a_sweep_and_stop(tiny: Path, bench: Path, tmp_path: Path) -> None:
    """Both replicas serve jobs (each replica's log has calls beyond its readiness check), through
    Ray actors that pass model.server.env on; no server process outlives the sweep."""
    mark = new_mark()
    logs = Path(tempfile.mkdtemp(prefix="rt-vllm-", dir="/tmp"))  # each replica's log (short: Ray's socket paths)
    cmd = sweep_cmd(bench, tmp_path / "out", *vllm(tiny, mark, "model.server.replicas=2"), "cluster.max_in_flight=4",
                    "cluster.server_gpus=0")  # the CPU build holds no GPU
    with open(tmp_path / "sweep.log", "wb") as log:
        driver = subprocess.Popen(cmd, cwd=REPO, env={**sweep_env(), "TMPDIR": str(logs)}, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while not marked(mark):
            assert driver.poll() is None, (tmp_path / "sweep.log").read_text()[-3000:]
            time.sleep(0.5)  # model.server.env reaches the servers that Ray actors start (or this never ends)
        assert driver.wait(timeout=900) == 0, (tmp_path / "sweep.log").read_text()[-3000:]
        server_logs = sorted(logs.glob("vllm-*.log"))
        assert len(server_logs) == 2, server_logs
        calls = [completions(p) for p in server_logs]
        assert all(n >= 2 for n in calls), calls  # the readiness check, and at least one agent call each
        assert sum(calls) == 2 + 4 * 3  # 4 jobs × 3 turns
        sdir = tmp_path / "out" / "v"
        assert sorted(e["status"] for e in Ledger(sdir).entries()) == ["ok"] * 4
        for d in (p for p in sdir.iterdir() if (p / "job.json").exists()):
            assert_vllm_tool_calls(d, turns=3)
        assert wait_marked(mark, 5, gone=True) == [], "a vLLM process outlived the sweep"
    finally:
        clean_up(driver, mark)
        shutil.rmtree(logs, ignore_errors=True)


def test_killed_sweep_leaves_no_vllm_process(tiny: Path, bench: Path, tmp_path: Path) -> None:
    """Issue 25.10 with vLLM: SIGKILL the driver's session mid-run (driver, Ray, its workers); the
    server's API process, engine and worker all go."""
    mark = new_mark()
    cmd = sweep_cmd(bench, tmp_path / "out", *vllm(tiny, mark, f"model.server.log_path={tmp_path / 'server.log'}"),
                    "cluster.server_gpus=0")
    with open(tmp_path / "sweep.log", "wb") as log:
        driver = subprocess.Popen(cmd, cwd=REPO, env=sweep_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while completions(tmp_path / "server.log") < 2:  # the readiness check's and a job's: mid-run
            assert driver.poll() is None, (tmp_path / "sweep.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the sweep never reached its jobs"
            time.sleep(0.5)
        serving = marked(mark)
        assert len(serving) >= 3, serving  # the lifeline, vLLM's API server, its engine and worker
        left = kill_driver_session(driver, mark, GRACE_S + 20)
        assert left == [], f"vLLM processes {left} (of {serving}) outlived their killed sweep"
    finally:
        clean_up(driver, mark)


def test_a_server_that_dies_on_its_first_completion_fails_its_start(models: dict[int, Path], tmp_path: Path) -> None:
    """vLLM's CPU attention refuses a head size of 16: the server lists its model, then dies on the
    first completion. The start says so instead of handing out a dead server."""
    mark = new_mark()
    cfg = compose_root(vllm(models[16], mark, f"model.server.log_path={tmp_path / 'server.log'}")).model
    server = ModelServer(cfg)  # type: ignore[arg-type]
    with pytest.raises(ServerError, match=r"listed its model but failed a one-token completion \(HTTP 500"):
        server.start()
    assert "Unsupported CPU attention configuration" in (tmp_path / "server.log").read_text(errors="replace")
    assert wait_marked(mark, GRACE_S + 10, gone=True) == []
