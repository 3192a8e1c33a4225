"""An episode actor loads its benchmark once, however many jobs start at once.

Seen at 1,024 in flight: each actor's first 256 jobs looked the benchmark up in their own worker
threads at the same moment, all missed the cache, and each loaded every task (2,048 tasks, a
`realpath` apiece): minutes of CPU before the first model call.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from runners.job.identity import JobSpec
from runners.sweep.actors import EpisodeActor
from tests.conftest import compose_root, write_native

LOADS: list[float] = []


def _bench(tmp_path: Path, n: int) -> Path:
    tasks = [{"id": f"t{i}", "prompt": "p", "workspace": "w", "answer": "a"} for i in range(n)]
    return write_native(tmp_path / "b", tasks, {"w/in.txt": "a"})


def test_jobs_that_start_together_load_the_benchmark_once(tmp_path: Path, monkeypatch) -> None:
    import eval.benchmarks.native as native

    real = native.load
    started = threading.Barrier(16)

    def counted(cfg):
        LOADS.append(time.monotonic())
        time.sleep(0.2)  # a benchmark of many tasks takes a while to load
        return real(cfg)

    monkeypatch.setattr(native, "load", counted)
    LOADS.clear()
    cfg = compose_root(["benchmark=native", f"benchmark.path={_bench(tmp_path, 40)}", "model=scripted"])
    actor = EpisodeActor(capacity=16)

    def task(i: int) -> str:
        started.wait()
        return actor._task(JobSpec(f"j{i}", cfg, f"t{i}")).id

    with ThreadPoolExecutor(16) as pool:
        ids = list(pool.map(task, range(16)))
    assert ids == [f"t{i}" for i in range(16)]
    assert len(LOADS) == 1, f"the benchmark was loaded {len(LOADS)} times by 16 jobs starting together"
