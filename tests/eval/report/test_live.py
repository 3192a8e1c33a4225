"""The report kept up to date while a sweep runs (issue 15, item 3), and one build at a time.

A sweep refreshes its report in a background process after every `report.live_every` finished
jobs, and writes each job's pages when it finishes, so that the build at its end writes no page of
a finished job; two builds of one
report (a refresh and the final build, two Slurm slices, a user's `python -m eval.report`) never
run at once: the second waits for the first.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from eval.report import write_report
from eval.report.build import LOCK
from runners.sweep.live_report import LIVE_LOG, LiveReport
from tests.conftest import write_native, write_script
from tests.helpers.report_sweeps import build_sweep_a

REPO = Path(__file__).resolve().parents[3]


def test_a_build_waits_for_another_build_of_the_same_report(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    build_sweep_a(sdir)
    fd = os.open(sdir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another build holds the report
    done = threading.Event()
    errors: list[BaseException] = []

    def build() -> None:
        try:
            write_report(sdir)
        except BaseException as e:  # noqa: BLE001 - shown by the assertion below
            errors.append(e)
        done.set()

    t = threading.Thread(target=build, daemon=True)
    t.start()
    try:
        assert not done.wait(1.5), "the build ran while another build of the same report held it"
        assert not (sdir / "report" / "index.html").exists()
    finally:
        os.close(fd)  # the other build ends
    assert done.wait(120) and not errors, errors
    assert (sdir / "report" / "index.html").is_file()


class Proc:
    """A refresh process as `LiveReport` sees it."""

    def __init__(self) -> None:
        self.rc: int | None = None
        self.waited = False

    def poll(self) -> int | None:
        return self.rc

    def wait(self) -> int:
        self.waited = True
        self.rc = 0 if self.rc is None else self.rc
        return self.rc


class Starts:
    """Refreshes started: their processes."""

    def __init__(self) -> None:
        self.procs: list[Proc] = []

    def __call__(self, sdir: Path, log: Path) -> Proc:
        self.procs.append(Proc())
        return self.procs[-1]


def test_a_refresh_starts_after_every_n_finished_jobs_one_at_a_time(tmp_path: Path) -> None:
    starts = Starts()
    live = LiveReport(tmp_path, every=3, start=starts)
    live.finished("a")
    live.finished("b")
    assert starts.procs == []
    live.finished("c")
    assert len(starts.procs) == 1
    for i in range(5):  # the refresh still runs: no second one beside it
        live.finished(f"d{i}")
    assert len(starts.procs) == 1
    starts.procs[0].rc = 0
    live.finished("e")  # 6 finished since the first started
    assert len(starts.procs) == 2
    live.close()  # the sweep's own build waits for the running refresh
    assert starts.procs[1].waited


def test_a_resumed_sweep_counts_its_complete_jobs(tmp_path: Path) -> None:
    starts = Starts()
    live = LiveReport(tmp_path, every=3, start=starts, already=[f"old{i}" for i in range(4)])
    live.finished("new")
    assert len(starts.procs) == 1


def test_a_failed_refresh_stops_the_refreshing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    starts = Starts()
    live = LiveReport(tmp_path, every=1, start=starts)
    live.finished("a")
    starts.procs[0].rc = 1
    with caplog.at_level(logging.WARNING, logger="runners.sweep.live_report"):
        for i in range(3):
            live.finished(f"b{i}")
    assert len(starts.procs) == 1
    assert str(tmp_path / LIVE_LOG) in caplog.text and "exit 1" in caplog.text
    live.close()


def test_no_refresh_with_live_every_0(tmp_path: Path) -> None:
    starts = Starts()
    live = LiveReport(tmp_path, every=0, start=starts, already=[str(i) for i in range(10)])
    for i in range(10):
        live.finished(f"j{i}")
    live.close()
    assert starts.procs == []


def test_a_negative_live_every_is_refused(compose_cfg) -> None:
    from runners.preflight.config_checks import ConfigError, check_config

    cfg = compose_cfg(["report.live_every=-1"])
    with pytest.raises(ConfigError, match=r"report\.live_every=-1: .*0"):
        check_config(cfg)


@pytest.mark.slow
def test_the_sweeps_last_build_writes_no_page_of_a_finished_job(tmp_path: Path) -> None:
    tasks = [{"id": f"t{i}", "prompt": "How many rows?", "workspace": "w", "answer": "3"} for i in range(4)]
    bench = write_native(tmp_path / "bench", tasks, {"w/data.csv": "a\n1\n2\n3\n"})
    script = write_script(tmp_path / "s.jsonl", [{"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "runners.sweep", "grid.benchmark=[native]", f"benchmark.path={bench}", "benchmark.limit=null",
           "grid.method=[dci,runningtab]", "grid.model=[scripted]", f"model.script={script}", "grid.seed=[0]", "judge=rule",
           "tracker=none", f"out={out}", "sweep=live", "report.live_every=3", "cluster.max_in_flight=1"]
    run = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    log = (out / "live" / LIVE_LOG).read_text()
    assert "index.html" in log, log[-3000:]  # a refresh ran to its end
    written = re.findall(r"writing (\d+) of (\d+) pages", run.stdout)
    assert written, run.stdout[-3000:]
    n, total = map(int, written[-1])
    assert (n, total) == (0, 12), run.stdout[-3000:]  # every page was written when its job finished
    assert len(list((out / "live" / "report" / "jobs").iterdir())) == 8
    assert len(list((out / "live" / "report" / "compare").glob("*__vs__dci.html"))) == 4  # each when the second of its pair finished


def test_a_build_leaves_the_collector_as_it_found_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from eval.report import build

    sdir = tmp_path / "s"
    build_sweep_a(sdir)
    seen = []
    real = build.run_analyses

    def analyses(*a, **k):
        seen.append(gc.isenabled())
        return real(*a, **k)

    monkeypatch.setattr(build, "run_analyses", analyses)
    assert gc.isenabled()
    write_report(sdir)
    assert seen == [False] and gc.isenabled()  # paused while it built, on again after

    def broken(*a, **k):
        raise RuntimeError("broken analysis")

    monkeypatch.setattr(build, "run_analyses", broken)
    with pytest.raises(RuntimeError):
        write_report(sdir)
    assert gc.isenabled()
    gc.disable()
    try:
        monkeypatch.setattr(build, "run_analyses", real)
        write_report(sdir)
        assert not gc.isenabled()  # a caller's own setting is kept
    finally:
        gc.enable()


def test_a_refresh_gets_no_credential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runners.sweep import live_report
    for name in ("OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "RAY_AUTH_TOKEN", "DB_PASSWORD", "GH_CREDENTIALS"):
        monkeypatch.setenv(name, "s3cr3t")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    seen: dict = {}
    monkeypatch.setattr(live_report.subprocess, "Popen", lambda cmd, **k: seen.update(k, cmd=cmd) or Proc())
    live_report.spawn(tmp_path, tmp_path / LIVE_LOG)
    env = seen["env"]
    assert "s3cr3t" not in env.values() and env["PATH"] == os.environ["PATH"]
    assert env["PYTHONPATH"] == f"{REPO}{os.pathsep}/elsewhere" and seen["cwd"] == REPO
    assert seen["cmd"][1:4] == ["-m", "eval.report", str(tmp_path)] and seen["cmd"][-2:] == ["--workers", "0"]
