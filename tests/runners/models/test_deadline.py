"""Every model call ends in time and reads a bounded reply (issue 25, item 9 and "a 100 MB model
reply"), against real HTTP servers on 127.0.0.1 that trickle or flood (tests/helpers/http_stub.py), through
the real single-job entry point and through the client the judges and the probe use."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eval.judges.client import CachedLLM
from runners.core import deadline
from runners.core.messages import ModelError
from runners.models import ApiModelConfig, build_model
from tests.helpers.http_stub import (
    Reply,
    StubServer,
    completion,
    huge_completion,
    tool_call,
    trickle,
)

REPO = Path(__file__).resolve().parents[3]
MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]


def job_cmd(url: str, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "runners.job", "benchmark=builtin", "task=ws-01-resource-saving-manual",
            "model=openai", "model.name=stub", f"model.base_url={url}", "judge=none", f"out={out}", *extra]


def only_record(out: Path) -> Path:
    [job] = [d for d in out.iterdir() if d.is_dir()]
    return job


@pytest.mark.slow
def test_a_trickling_reply_ends_at_the_jobs_time_limit(tmp_path: Path) -> None:
    """The issue's case: 200, then one byte every 2 s, with agent.time_limit_s=5 model.timeout_s=5.
    Every gap is under the 5 s between bytes, so only a deadline on the whole call ends it (before:
    still in its first call after 40 s)."""
    with StubServer(default=trickle(completion("never whole"), pause_s=2.0)) as stub:
        t0 = time.monotonic()
        r = subprocess.run(job_cmd(stub.url, tmp_path / "o", "agent.time_limit_s=5", "model.timeout_s=5"),
                           cwd=REPO, capture_output=True, text=True, timeout=40)
        wall = time.monotonic() - t0
    result = json.loads((only_record(tmp_path / "o") / "result.json").read_text())
    assert result["stop_reason"] == "time_limit", (result, r.stderr[-2000:])
    assert result["wall_s"] < 8, result  # the episode ended at its limit, not at the stream's end
    assert len(stub.requests) == 1 and wall < 30


def test_a_100_mb_reply_is_not_read_past_the_cap(tmp_path: Path) -> None:
    """A 200 of 100 MB (a valid completion, streamed): before, the job read it whole (531 MB of
    RSS), recorded it twice (trajectory and evaluator view, 96 MB each) and sent it back as the next
    request. Now the client stops reading at `model.max_reply_bytes` (16 MiB) and the job ends in
    model_error with a small record."""
    with StubServer(default=Reply(stream=huge_completion(100_000_000))) as stub:
        r = subprocess.run(job_cmd(stub.url, tmp_path / "o", "model.max_retries=0"), cwd=REPO,
                           capture_output=True, text=True, timeout=300)
        sent = stub.sent_bytes
    job = only_record(tmp_path / "o")
    result = json.loads((job / "result.json").read_text())
    assert result["stop_reason"] == "model_error", (result, r.stderr[-2000:])
    assert "max_reply_bytes" in result["error"]
    assert sum(p.stat().st_size for p in job.rglob("*") if p.is_file()) < 1_000_000
    assert sent < 40_000_000  # the client hung up; the server never got to send it all


def test_a_reply_declared_over_the_cap_is_refused_before_reading(tmp_path: Path) -> None:
    body = json.dumps(completion("y" * 5000)).encode()
    with StubServer(default=Reply(stream=iter([body]), length=len(body))) as stub:
        model = build_model(ApiModelConfig(kind="openai", name="m", base_url=stub.url, max_retries=0, max_reply_bytes=1000))
        with pytest.raises(ModelError, match="max_reply_bytes"):
            model.complete(MESSAGES, [])


@pytest.mark.parametrize("path", ["complete", "acomplete"])
def test_call_timeout_bounds_a_whole_call(path: str) -> None:
    """Without a job (the judges, the probe), `model.call_timeout_s` bounds a call, its retries and
    waits included; the 5 s between bytes never fires on a trickle."""
    with StubServer(default=trickle(completion("slow"), pause_s=0.5)) as stub:
        model = build_model(ApiModelConfig(kind="openai", name="m", base_url=stub.url, timeout_s=5.0, call_timeout_s=1.5))
        t0 = time.monotonic()
        with pytest.raises(ModelError, match="call_timeout_s"):
            _call(model, path)
        assert time.monotonic() - t0 < 4


@pytest.mark.parametrize("path", ["complete", "acomplete"])
def test_a_job_deadline_caps_every_call_and_its_retry_waits(path: str) -> None:
    """A retry whose wait would end past the job's deadline is not waited for."""
    with StubServer(default=Reply(503, {"error": "busy"}, headers={"Retry-After": "30"})) as stub:
        model = build_model(ApiModelConfig(kind="openai", name="m", base_url=stub.url, max_retries=5))
        t0 = time.monotonic()
        with deadline.until(time.monotonic() + 2.0), pytest.raises(ModelError, match="job's remaining time"):
            _call(model, path)
        assert time.monotonic() - t0 < 1.5 and len(stub.requests) == 1


def test_the_judges_client_ends_at_the_jobs_deadline(tmp_path: Path) -> None:
    """A judge runs in a worker thread of the episode actor, after the episode: the deadline set on
    the job reaches its calls through the thread's context."""
    import asyncio

    with StubServer(default=trickle(completion("verdict"), pause_s=0.5)) as stub:
        llm = CachedLLM(build_model(ApiModelConfig(kind="openai", name="judge", base_url=stub.url, timeout_s=5.0)),
                        {"name": "judge"}, tmp_path)

        async def job() -> float:
            with deadline.until(time.monotonic() + 1.5):
                t0 = time.monotonic()
                with pytest.raises(ModelError):
                    await asyncio.to_thread(llm.complete, MESSAGES)
                return time.monotonic() - t0

        assert asyncio.run(job()) < 4


@pytest.mark.slow
def test_a_thousand_turns_of_invalid_tool_call_json_end_in_a_scored_record(tmp_path: Path) -> None:
    """1,000 replies whose tool-call arguments are not JSON, through the HTTP client and the real
    entry point: each is an error result the agent sees, the job runs its turns and is scored."""
    with StubServer() as stub:
        stub.push(*[Reply(body=completion(None, [tool_call(f"c{i}", "bash", '{"command": oops ' + str(i))]))
                    for i in range(1000)])
        stub.push(Reply(body=completion("done")))
        r = subprocess.run(job_cmd(stub.url, tmp_path / "o", "agent.max_turns=1005", "judge=auto"), cwd=REPO,
                           capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    job = only_record(tmp_path / "o")
    result = json.loads((job / "result.json").read_text())
    assert (result["stop_reason"], result["turns"]) == ("finished", 1001)
    tools = [json.loads(line) for line in (job / "trajectory.jsonl").open() if '"role": "tool"' in line]
    assert len(tools) == 1000 and all(m["is_error"] and "not valid JSON" in m["content"] for m in tools)
    assert (job / "scores.json").is_file()


def _call(model, path: str):
    import asyncio

    if path == "complete":
        return model.complete(MESSAGES, [])

    async def once():
        try:
            return await model.acomplete(MESSAGES, [])
        finally:
            await model.aclose()

    return asyncio.run(once())


def test_the_tac_evaluators_llm_calls_end_at_the_jobs_deadline(tmp_path: Path) -> None:
    """TheAgentCompany's evaluators reach the judge LLM through a proxy whose request threads start
    with an empty context: the proxy carries the deadline of the job that opened it into them."""
    import http.client
    import socket

    from eval.judges.agentcompany.llm_server import LLMProxy

    class UnixConnection(http.client.HTTPConnection):
        def __init__(self, path: str) -> None:
            super().__init__("localhost", timeout=60)
            self.path = path

        def connect(self) -> None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(self.path)

    with StubServer(default=trickle(completion("verdict"), pause_s=0.5)) as stub:
        model = build_model(ApiModelConfig(kind="openai", name="judge", base_url=stub.url, timeout_s=5.0, call_timeout_s=30.0))
        sock = tmp_path / "llm.sock"
        with deadline.until(time.monotonic() + 1.5), LLMProxy(CachedLLM(model, {"name": "judge"}, tmp_path), sock):
            t0 = time.monotonic()
            conn = UnixConnection(str(sock))
            conn.request("POST", "/", body=json.dumps({"messages": MESSAGES}), headers={"Content-Type": "application/json"})
            status = conn.getresponse().status
            took = time.monotonic() - t0
    assert status == 502 and took < 5, (status, took)
