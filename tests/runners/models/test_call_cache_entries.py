"""Model-call cache entries are data from disk or a bucket, checked on read: a bad one (a string where
a number belongs, a negative cost, a malformed tool call) is a miss, logged once, and replaced by the
next reply — never a failed job. Both stores: the local folder and the bucket tier."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runners.core.messages import AssistantMessage, Usage
from runners.models.call_cache import CallCache, reply_entry
from tests.conftest import write_native, write_script
from tests.helpers.s3_server import s3_client, start_s3

REPO = Path(__file__).resolve().parents[3]
GOOD = reply_entry(AssistantMessage(content="hi", usage=Usage(1, 2, 0.3)), "m")
BAD = {
    "usage a string": {**GOOD, "usage": {**GOOD["usage"], "cost": "a lot"}},
    "negative cost": {**GOOD, "usage": {**GOOD["usage"], "cost": -5.0}},
    "tokens a float": {**GOOD, "usage": {**GOOD["usage"], "input_tokens": 1.5}},
    "cost not finite": {**GOOD, "usage": {**GOOD["usage"], "cost": float("inf")}},
    "tool call without a name": {**GOOD, "tool_calls": [{"id": "c", "arguments": "{}"}]},
    "latency a string": {**GOOD, "latency_s": "slow"},
    "extra a list": {**GOOD, "extra": [1]},
}


@pytest.mark.parametrize("why", list(BAD))
def test_a_bad_local_entry_is_a_miss_logged_once(tmp_path: Path, why: str, caplog: pytest.LogCaptureFixture) -> None:
    cache, key = CallCache(tmp_path), f"{list(BAD).index(why):02d}" * 32  # a key of its own: logged once per key and process
    cache.path(key).parent.mkdir(parents=True)
    cache.path(key).write_text(json.dumps(BAD[why]))
    with caplog.at_level(logging.WARNING, logger="runners.models.call_cache"):
        assert cache.get(key) is None and cache.get(key) is None
    assert len([r for r in caplog.records if key in r.getMessage()]) == 1, caplog.text
    cache.put(key, GOOD)
    assert cache.get(key) == GOOD


def test_a_bad_bucket_entry_is_a_miss_and_is_not_copied_to_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runners.core.storage import S3StorageConfig
    from runners.models.call_cache_s3 import BucketTier

    server, url = start_s3()
    try:
        for k, v in {"AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t", "AWS_DEFAULT_REGION": "us-east-1"}.items():
            monkeypatch.setenv(k, v)
        s3_client(url).create_bucket(Bucket="bad-calls")  # moto's buckets outlive its server
        tier = BucketTier(S3StorageConfig(kind="s3", bucket="bad-calls", prefix="p", endpoint_url=url))
        key = "cd" * 32
        tier.put(key, json.dumps(BAD["negative cost"]).encode())
        cache = CallCache(tmp_path / "disk", tier)
        assert cache.get(key) is None and not cache.path(key).exists()
        cache.put(key, GOOD)  # the reply asked again replaces it in both stores
        assert CallCache(tmp_path / "other", tier).get(key) == GOOD
    finally:
        server.stop()


@pytest.mark.slow
def test_a_job_whose_cache_entries_are_bad_runs_and_replaces_them(tmp_path: Path) -> None:
    bench = write_native(tmp_path / "b", [{"id": "t", "prompt": "Count.", "workspace": "w", "answer": "3"}], {"w/a.txt": "1\n"})
    usage = {"input_tokens": 10, "output_tokens": 2, "cost": 0.1}
    script = write_script(tmp_path / "s.jsonl", [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo 1"}}], "usage": usage},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo 2"}}], "usage": usage},
        {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>", "usage": usage}])
    cache = tmp_path / "cache"

    def job(out: str) -> dict:
        cmd = [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "task=t", "model=scripted",
               f"model.script={script}", "judge=none", f"out={tmp_path / out}", "model.cache=read_write", f"model.cache_dir={cache}"]
        r = subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads((Path(r.stdout.strip().splitlines()[-1]) / "result.json").read_text()) | {"stderr": r.stderr}

    first = job("one")
    assert first["stop_reason"] == "finished" and first["turns"] == 3
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) == 3
    for entry, why in zip(entries, ["usage a string", "negative cost", "tool call without a name"], strict=True):
        entry.write_text(json.dumps(BAD[why]))
    again = job("two")
    assert again["stop_reason"] == "finished" and again["turns"] == 3 and again["cached_calls"] == 0, again
    assert again["spend"] == pytest.approx(0.3) and again["cost"] == pytest.approx(0.3)
    assert again["stderr"].count("model-call cache entry") == 3, again["stderr"][-3000:]  # one line per bad entry
    third = job("three")  # the bad entries were replaced: every call is a hit
    assert third["cached_calls"] == 3 and third["spend"] == 0


def test_a_torn_local_entry_is_a_miss_never_a_wrong_hit(tmp_path: Path) -> None:
    """Entries are written without fsync (a crash may leave one cut short, or its blocks zeroed):
    whatever part of the file survives reads as a miss or as the whole entry, never as another reply."""
    cache, key = CallCache(tmp_path), "ef" * 32
    cache.put(key, GOOD)
    whole = cache.path(key).read_bytes()
    for cut in range(len(whole)):
        for torn in (whole[:cut], b"\0" * cut, whole[:cut] + b"\0" * (len(whole) - cut)):
            cache.path(key).write_bytes(torn)
            assert cache.get(key) is None, torn
    cache.path(key).write_bytes(whole)
    assert cache.get(key) == GOOD
