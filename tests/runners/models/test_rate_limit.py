"""The providers' rate limiters (runners/models/rate_limit.py, runners/models/governor.py): pacing, tokens per
minute, adaptive concurrency on 429 with Retry-After, leases, the client's attempts through the
gate, and a two-actor sweep that stays under a stub's limit of N requests a second."""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from runners.models.config import ApiModelConfig
from runners.models.openai_compat import OpenAICompatModel
from runners.models.rate_limit import AsyncLimiter, Limits, LocalGate, RateLimiter
from tests.conftest import write_native
from tests.helpers.http_stub import Reply, StubServer, completion, tool_call

pytestmark = pytest.mark.usefixtures("own_ray")  # their sweeps start their own local Ray

REPO = Path(__file__).resolve().parents[3]


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_requests_per_minute_are_paced() -> None:
    clock = Clock()
    lim = RateLimiter(Limits(rpm=120), clock)
    assert lim.try_acquire("a", 1, 60) == 0
    assert lim.try_acquire("b", 1, 60) == pytest.approx(0.5)  # one start every 60/120 s
    clock.t += 0.5
    assert lim.try_acquire("b", 1, 60) == 0


def test_overload_halves_the_limit_pauses_for_retry_after_and_grows_back() -> None:
    clock = Clock()
    lim = RateLimiter(Limits(concurrency=8), clock)
    for g in "abcd":
        assert lim.try_acquire(g, 1, 60) == 0
    lim.release("a", None, 429, 2.0)
    assert lim.limit == 2 and lim.try_acquire("e", 1, 60) == math.inf  # b, c, d in flight: over the new limit of 2
    lim.release("b", None, 429, None)  # the same burst of 429s: halved once
    lim.release("c", None, 200, None)
    assert lim.limit == 2 and lim.try_acquire("e", 1, 60) == pytest.approx(2.0)  # under the limit, paused by Retry-After
    clock.t += 2.0
    assert lim.try_acquire("e", 1, 60) == 0 and lim.try_acquire("f", 1, 60) == math.inf
    lim.release("d", None, 200, None)
    assert lim.limit == 3  # two answers in a row at a limit of 2: one more
    for g in "xy":
        assert lim.try_acquire(g, 1, 60) == 0
    assert lim.try_acquire("w", 1, 60) == math.inf
    snap = lim.snapshot(waiting=1)
    assert (snap["in_flight"], snap["limit"], snap["overloads_1m"], snap["waiting"]) == (3, 3, 2, 1)
    clock.t += 61
    assert lim.snapshot(0)["overloads_1m"] == 0 and lim.snapshot(0)["in_flight"] == 0  # leases of 60 s reclaimed


def test_tokens_per_minute_slide_over_the_last_minute() -> None:
    clock = Clock()
    lim = RateLimiter(Limits(tpm=100), clock)
    assert lim.try_acquire("a", 60, 600) == 0
    assert lim.try_acquire("b", 60, 600) == math.inf  # 60 held + 60 > 100: wait for a release
    lim.release("a", 50, 200, None)  # the reply said 50
    clock.t += 10
    assert lim.try_acquire("b", 60, 600) == pytest.approx(50.0)  # 50 in the window until it is a minute old
    assert lim.try_acquire("c", 40, 600) == 0
    assert RateLimiter(Limits(tpm=100), clock).try_acquire("big", 500, 600) == 0  # alone, larger than the limit: goes


def test_a_cancelled_wait_gives_nothing_back_twice() -> None:
    async def run() -> None:
        lim = AsyncLimiter(Limits(concurrency=1))
        gate = LocalGate(lim, 60)
        held = await gate.acquire(1)
        waiter = asyncio.ensure_future(gate.acquire(1))
        await asyncio.sleep(0.05)
        assert lim.snapshot()["waiting"] == 1
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        gate.release(held, None, 200, None)
        assert lim.snapshot()["in_flight"] == 0
        again = await asyncio.wait_for(gate.acquire(1), 1)
        assert lim.snapshot()["in_flight"] == 1 and again

    asyncio.run(run())


class CrowdedStub(StubServer):
    """Answers 429 (Retry-After) while more than `k` requests are in flight, else after `delay_s`."""

    def __init__(self, k: int, delay_s: float, retry_after: str) -> None:
        super().__init__(Reply(body=completion("ok"), delay_s=delay_s))
        self.k, self.retry_after, self.refused = k, retry_after, 0

    def _next(self) -> Reply:
        with self._lock:
            if self.in_flight > self.k:
                self.refused += 1
                return Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": self.retry_after})
        return super()._next()


@pytest.mark.slow
def test_the_gate_adapts_the_clients_attempts_to_the_providers_429s() -> None:
    """40 calls at once to a server that takes 2 at a time: through one gate (cap 8) every call
    succeeds with the limit brought down to what the server takes, and far fewer attempts are
    refused than by the same client without it."""

    async def run(url: str, gated: bool) -> tuple[list[str], float | None]:
        lim = AsyncLimiter(Limits(concurrency=8))
        lowest: list[float] = []
        model = OpenAICompatModel(ApiModelConfig(kind="openai", name="m", base_url=url, max_retries=30, backoff_base_s=0.05,
                                                 backoff_max_s=0.2))
        if gated:
            model.gate = LocalGate(lim, 60)

        async def watch() -> None:
            while True:
                lowest.append(lim.core.limit or 8)
                await asyncio.sleep(0.01)

        watcher = asyncio.ensure_future(watch())
        try:
            replies = await asyncio.gather(*(model.acomplete([{"role": "user", "content": f"q{i}"}], []) for i in range(40)))
        finally:
            watcher.cancel()
            await model.aclose()
        return [r.content or "" for r in replies], min(lowest)

    refused = {}
    for gated in (False, True):
        with CrowdedStub(k=2, delay_s=0.05, retry_after="0.2") as stub:
            contents, lowest = asyncio.run(run(stub.url, gated))
        assert contents == ["ok"] * 40
        refused[gated] = stub.refused
    assert lowest is not None and lowest <= 2
    assert 0 < refused[True] < refused[False] / 2, refused


class PerSecondStub(StubServer):
    """Answers 429 to any request beyond `n` in the last second; each job reads a file 4 times, then answers."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n, self.refused = n, 0
        self.current = threading.local()  # each handler thread's request

    def _enter(self, record: dict) -> None:
        super()._enter(record)
        self.current.body = record["body"]

    def _next(self) -> Reply:
        body = self.current.body
        with self._lock:
            now = time.monotonic()
            if sum(1 for r in self.requests if r["time"] > now - 1.0) > self.n:
                self.refused += 1
                return Reply(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})
        turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turns < 4:
            return Reply(body=completion(None, [tool_call(f"c{turns}", "read", '{"path": "notes.txt"}')]))
        return Reply(body=completion("<FINAL_ANSWER>3</FINAL_ANSWER>"))


@pytest.mark.slow
def test_two_actors_share_one_limit_and_stay_under_n_requests_a_second(tmp_path: Path) -> None:
    """4 jobs of 5 calls on 2 episode actors, 4 in flight, against a provider that refuses more than 5
    requests in any second: with model.rpm=180 held by the sweep's one limiter, no request is refused
    (each actor limiting alone would send 6 a second). 20 calls, ~7 s of pacing, show it as 40 did."""
    bench = write_native(tmp_path / "b", [{"id": f"t{i}", "prompt": f"Read {i}.", "workspace": "w", "answer": "3"} for i in range(4)],
                         {"w/notes.txt": "three\n"})
    with PerSecondStub(n=5) as stub:
        cmd = [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "model=openai",
               "model.name=stub", f"model.base_url={stub.url}", "model.rpm=180", "judge=none", "tracker=none",
               f"out={tmp_path / 'out'}", "sweep=s", "cluster.actors=2", "cluster.max_in_flight=4", "model.cache=off"]
        r = subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=600)
        times = [q["time"] for q in stub.requests]
    assert r.returncode == 0, r.stderr[-3000:]
    results = [json.loads(p.read_text()) for p in (tmp_path / "out" / "s").glob("*/result.json")]
    assert len(results) == 4 and {x["stop_reason"] for x in results} == {"finished"}
    assert stub.refused == 0 and len(times) == 20
    busiest = max(sum(1 for u in times if t - 1.0 < u <= t) for t in times)
    assert busiest <= 5
    assert (max(times) - min(times)) < 20 * 60 / 180 + 5  # paced at 3 a second, not slower
    spend = json.loads((tmp_path / "out" / "s" / "spend.json").read_text())
    [(provider, state)] = spend["providers"].items()
    assert "127.0.0.1" in provider and state["granted"] == 20 and state["overloads_1m"] == 0


def test_the_progress_line_shows_counts_spend_and_the_limiters() -> None:
    import io

    from rich.console import Console

    from runners.job.identity import JobSpec
    from runners.sweep.progress import Progress
    from tests.conftest import compose_root

    class Watch:  # what Progress reads of a SweepWatch
        snapshot = {"providers": {"https://api.openai.com/v1 [OPENAI_API_KEY]": {"in_flight": 16, "limit": 16, "waiting": 3, "overloads_1m": 2}}}

        class budget:  # noqa: N801
            cfg = type("B", (), {"sweep_usd": 50.0})
            held: set[str] = set()

            @staticmethod
            def not_started() -> None:
                return None

        @staticmethod
        def totals() -> tuple[float, float]:
            return 12.4, 39.7

        @staticmethod
        def cells() -> dict[str, dict[str, float]]:
            return {"c": {"spent": 1.0, "expected": 2.0}}

        @staticmethod
        def finished(job_id: str, spend: float | None) -> None:
            pass

    cfg = compose_root(["model=scripted", "judge=none"])
    specs = [JobSpec(f"j{i}", cfg, f"t{i}") for i in range(3)]
    term = io.StringIO()
    with Progress(specs, 0, console=Console(file=term, force_terminal=True, width=300), watch=Watch(), name="t") as p:  # type: ignore[arg-type]
        p.start(specs[0])
        line = p.status()
    assert line.startswith("sweep t · 0/3 done · 1 running · 0 errored · 0 failed · ETA")
    assert "$12.40 spent, $39.70 expected of $50.00" in line and "api.openai.com: 16/16 in flight, 3 waiting, 2×429/min" in line
    assert "sweep progress" in term.getvalue()  # the table per method, once, at the end
    plain = io.StringIO()
    with Progress(specs, 0, console=Console(file=plain, width=300), watch=Watch(), name="t", every_s=0.05):  # type: ignore[arg-type]
        threading.Event().wait(0.3)
    printed = plain.getvalue()
    assert printed.count("sweep t · 0/3 done") >= 2 and "  c: $1.0000 spent, $2.0000 expected" in printed
