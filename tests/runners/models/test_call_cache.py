"""The model-call cache (runners/models/call_cache.py, caching.py): keys, the judges' unchanged keys,
the bucket tier, an interrupted job re-run from its cache, and finished sweeps re-run from their
cache into a new folder — identical trajectories and records at zero spend — on the scripted model
and on the embedded one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from runners.core.messages import AssistantMessage, Usage
from runners.models.call_cache import (
    CallCache,
    CallKeys,
    agent_identity,
    model_identity,
    reply_entry,
    reply_of,
)
from runners.models.config import ApiModelConfig
from tests.conftest import write_native, write_script
from tests.helpers.http_stub import Reply, StubServer, completion, tool_call
from tests.helpers.s3_server import s3_client, start_s3

REPO = Path(__file__).resolve().parents[3]
MSGS = [{"role": "system", "content": "Judge the deliverable."}, {"role": "user", "content": "Ünïcode rubric: 1,850 yuan"}]
TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {}}}]


def test_the_judges_keys_and_entries_are_those_written_before_the_move(tmp_path: Path) -> None:
    """Digests computed by the judges' client before the cache moved to runners/models/call_cache.py
    (HEAD c81a28b): every judge entry on disk is still found."""
    from eval.judges.client import CachedLLM

    mc = ApiModelConfig(kind="openai", name="gpt-5.4-mini", base_url="https://api.openai.com/v1", seed=0)
    llm = CachedLLM(_Counting(), model_identity(mc), tmp_path)
    assert llm.key(MSGS) == "4fbd2a9753cab365597b846ee1bdfd4c1fa8679163b64e445d2cc77b6973f826"
    assert llm.key(MSGS, TOOLS) == "770e22d6a001fd776f57593780b8ebffcdc7234807fc4e0265e7fc0115e0bfd1"
    old = {"content": "", "model": "gpt-5.4-mini", "usage": {"input_tokens": 3, "output_tokens": 4, "cost": 0.5},
           "tool_calls": [{"id": "c1", "name": "read", "arguments": "{}"}]}
    entry = tmp_path / llm.key(MSGS, TOOLS)[:2] / f"{llm.key(MSGS, TOOLS)}.json"
    entry.parent.mkdir(parents=True)
    entry.write_text(json.dumps(old))
    reply = llm.reply(MSGS, TOOLS)
    assert reply.content is None and reply.tool_calls[0].name == "read" and reply.usage.cost == 0.5 and llm.calls == 0
    assert llm.complete(MSGS) == "counted 1" and llm.complete(MSGS) == "counted 1" and llm.calls == 1


class _Counting:
    name = "counting"

    def __init__(self) -> None:
        self.n = 0

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        self.n += 1
        return AssistantMessage(content=f"counted {self.n}", usage=Usage(1, 1, 0.25))


def test_agent_keys_count_identical_calls_and_hash_each_message_once() -> None:
    mc = ApiModelConfig(kind="openai", name="m", base_url="http://x/v1", temperature=0.7)
    keys = CallKeys(agent_identity(mc, 0), [])
    history = [*MSGS]
    first, repeat = keys(history, TOOLS), keys(history, TOOLS)
    assert first != repeat  # the second identical call in a job is its own entry (sampling differs)
    history.append({"role": "assistant", "content": "hm", "extra": {"finish_reason": "stop"}})
    grown = keys(history, TOOLS)
    fresh = CallKeys(agent_identity(mc, 0), [])
    fresh(list(MSGS), TOOLS), fresh(list(MSGS), TOOLS)
    assert fresh(list(history), TOOLS) == grown  # the incremental digest equals one from scratch
    assert CallKeys(agent_identity(mc, 1), [])(MSGS, TOOLS) != first  # another seed of the job
    assert CallKeys(agent_identity(mc, 0), [])(MSGS, []) != first  # other tools
    # what is not sent (a reply's finish_reason in `extra`) is not in the key
    other = [*MSGS, {"role": "assistant", "content": "hm", "extra": {"finish_reason": "length"}}]
    again = CallKeys(agent_identity(mc, 0), [])
    again(list(MSGS), TOOLS), again(list(MSGS), TOOLS)
    assert again(other, TOOLS) == grown


def test_entries_round_trip_and_a_bad_entry_is_a_miss(tmp_path: Path) -> None:
    from runners.models.caching import CachingModel

    cache = CallCache(tmp_path)
    reply = AssistantMessage(content=None, usage=Usage(5, 6, 0.1, cached_tokens=2), latency_s=1.5, extra={"reasoning_content": "r"})
    cache.put("ab" * 32, reply_entry(reply, "m"))
    back = reply_of(cache.get("ab" * 32) or {})
    assert back == reply
    (tmp_path / "cd").mkdir()
    (tmp_path / "cd" / f"{'cd' * 32}.json").write_text('{"usage": {}, "content": "x", "tool_calls": [{"id": 1}]}')
    model = CachingModel(_Counting(), cache, lambda m, t: "cd" * 32, "read_write")
    assert model.complete([], []).content == "counted 1" and model.hits == 0  # unreadable: asked, and stored again
    assert model.complete([], []).content == "counted 1" and model.hits == 1


def test_the_bucket_tier_serves_another_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runners.core.storage import S3StorageConfig
    from runners.models.call_cache_s3 import BucketTier

    server, url = start_s3()
    try:
        for k, v in {"AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t", "AWS_DEFAULT_REGION": "us-east-1"}.items():
            monkeypatch.setenv(k, v)
        s3_client(url).create_bucket(Bucket="calls")
        tier = BucketTier(S3StorageConfig(kind="s3", bucket="calls", prefix="p", endpoint_url=url))
        entry = reply_entry(AssistantMessage(content="hi", usage=Usage(1, 2, 0.3)), "m")
        CallCache(tmp_path / "one", tier).put("ef" * 32, entry)
        other = CallCache(tmp_path / "two", tier)
        assert other.get("ef" * 32) == entry and (tmp_path / "two" / "ef" / f"{'ef' * 32}.json").is_file()
        assert other.get("00" * 32) is None
        keys = [o["Key"] for o in s3_client(url).list_objects_v2(Bucket="calls")["Contents"]]
        assert keys == [f"p/_calls/ef/{'ef' * 32}.json"]
    finally:
        server.stop()


def _job_cmd(bench: Path, url: str, out: Path, cache: Path, work: Path) -> list[str]:
    return [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "task=t", "method=dci",
            "model=openai", "model.name=stub", f"model.base_url={url}", "model.cache=read_write", f"model.cache_dir={cache}",
            "model.price_in_per_mtok=1", "model.price_out_per_mtok=2", "judge=none", f"out={out}", f"agent.work_dir={work}",
            "model.max_retries=0"]


@pytest.mark.slow
def test_an_interrupted_job_reruns_from_its_cache_then_continues_live(tmp_path: Path) -> None:
    """Killed while its third call was in flight, the job's re-run asks the model only from there:
    its first two calls come from the cache, unpaid, and the third is sent as it was sent before."""
    bench = write_native(tmp_path / "b", [{"id": "t", "prompt": "Read the notes.", "workspace": "w", "answer": "3"}],
                         {"w/notes.txt": "three\n"})
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with StubServer() as stub:
        stub.push(Reply(body=completion(None, [tool_call("c1", "bash", '{"command": "ls"}')])),
                  Reply(body=completion(None, [tool_call("c2", "bash", '{"command": "cat notes.txt"}')])),
                  Reply(body=completion("too late"), delay_s=60))
        cmd = _job_cmd(bench, stub.url, tmp_path / "out", tmp_path / "cache", tmp_path / "work")
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while len(stub.requests) < 3:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        stub.replies.clear()
        stub.push(Reply(body=completion("three <FINAL_ANSWER>3</FINAL_ANSWER>")))
        r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        assert len(stub.requests) == 4  # one more call: the one that was in flight
        assert stub.requests[3]["body"]["messages"] == stub.requests[2]["body"]["messages"]
    job_dir = Path(r.stdout.strip().splitlines()[-1])
    result = json.loads((job_dir / "result.json").read_text())
    per_call = (10 * 1 + 5 * 2) / 1e6  # the stub's usage at the configured prices
    assert result["stop_reason"] == "finished" and result["turns"] == 3 and result["cached_calls"] == 2
    assert result["cost"] == pytest.approx(3 * per_call) and result["spend"] == pytest.approx(per_call)


def _sweep(out: Path, name: str, cache: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "runners.sweep", "tracker=jsonl", f"out={out}", f"sweep={name}", f"model.cache_dir={cache}",
           "cluster.max_in_flight=4", *overrides]
    r = subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


def _record(job: Path) -> dict[str, Any]:
    """Everything a job left, without what the clock decides (message times, wall time) and what the
    second run paid."""
    out: dict[str, Any] = {}
    for p in sorted(job.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(job).as_posix()
        if rel == "trajectory.jsonl":
            out[rel] = [_timeless(json.loads(line)) for line in p.read_text().splitlines()]
        elif rel == "evaluator_view.json":
            view = json.loads(p.read_text())
            out[rel] = {**view, "messages": [_timeless(m) for m in view["messages"]]}
        elif rel == "result.json":
            out[rel] = {k: v for k, v in json.loads(p.read_text()).items() if k not in ("wall_s", "spend", "cached_calls")}
        else:
            out[rel] = p.read_bytes()
    return out


def _timeless(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "time"}


def _replayed(out: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(first run's result, replay's result) per job; asserts every record is the same."""
    jobs = sorted(d.name for d in (out / "first").iterdir() if (d / "job.json").is_file())
    assert jobs and jobs == sorted(d.name for d in (out / "again").iterdir() if (d / "job.json").is_file())
    pairs = []
    for job in jobs:
        assert _record(out / "first" / job) == _record(out / "again" / job), job
        pairs.append(tuple(json.loads((out / run / job / "result.json").read_text()) for run in ("first", "again")))
    return pairs  # type: ignore[return-value]


@pytest.mark.slow
def test_a_finished_scripted_sweep_reruns_from_its_cache_into_a_new_folder(tmp_path: Path) -> None:
    turn = {"usage": {"input_tokens": 100, "output_tokens": 10, "cost": 0.25}}
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}], **turn},
                                                 {"tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}], **turn},
                                                 {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>", **turn}])
    bench = write_native(tmp_path / "b", [{"id": f"t{i}", "prompt": f"Count {i}.", "workspace": "w", "answer": "3"} for i in range(2)],
                         {"w/notes.txt": "1\n2\n3\n"})
    args = ("benchmark=native", f"benchmark.path={bench}", "model=scripted", f"model.script={script}", "grid.method=[dci,runningtab]")
    _sweep(tmp_path / "out", "first", tmp_path / "cache", *args)
    _sweep(tmp_path / "out", "again", tmp_path / "cache", *args)
    for first, again in _replayed(tmp_path / "out"):
        assert first["spend"] == first["cost"] > 0 and first["cached_calls"] == 0
        assert again["spend"] == 0 and again["cached_calls"] == again["turns"]  # every call answered from the cache
    spent = json.loads((tmp_path / "out" / "again" / "spend.json").read_text())
    assert spent["spent"] == 0 and json.loads((tmp_path / "out" / "first" / "spend.json").read_text())["spent"] > 0


@pytest.mark.slow
def test_a_finished_embedded_model_sweep_reruns_from_its_cache(tmp_path: Path) -> None:
    """SmolLM2 on llama.cpp, one job: the re-run's every call comes from the cache."""
    pytest.importorskip("llama_cpp")
    bench = write_native(tmp_path / "b", [{"id": "t", "prompt": "List the files, then say done.", "workspace": "w", "answer": "x"}],
                         {"w/notes.txt": "hello\n"})
    args = ("benchmark=native", f"benchmark.path={bench}", "model=smollm2", "agent.max_turns=3", "judge=none", "cluster.max_in_flight=1")
    _sweep(tmp_path / "out", "first", tmp_path / "cache", *args)
    _sweep(tmp_path / "out", "again", tmp_path / "cache", *args)
    [(first, again)] = _replayed(tmp_path / "out")
    assert first["cached_calls"] == 0 and again["cached_calls"] == first["turns"] >= 1
