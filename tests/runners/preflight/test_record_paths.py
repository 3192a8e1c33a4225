"""Issue 50 (7): where a run writes. `out` inside (or linked into) a benchmark's workspace folder put
earlier jobs' answers and verdicts into later jobs' workspaces (every job copies that folder, its
links followed): a seed-1 job read the seed-0 job's answer. `sweep=../x`, `..`, `.` or an absolute
name wrote outside `out`. Each is refused before anything is written, in one line."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runners.config.schema import ConfigError
from runners.preflight.config_checks import benchmark_tasks, check_config
from runners.preflight.record_paths import sweep_name_problem
from tests.conftest import compose_root, write_native, write_script

REPO = Path(__file__).resolve().parents[3]
TASKS = [{"id": "t", "prompt": "Write output/answer.md.", "workspace": "w", "answer": "42"}]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_native(tmp_path_factory.mktemp("b") / "bench", TASKS, {"w/notes.txt": "The answer is 42.\n"})


@pytest.fixture(scope="module")
def composed(bench: Path):
    return compose_root(["benchmark=native", f"benchmark.path={bench}"])


def _cfg(cfg, **settings: object):
    """`cfg` with `out`, `sweep` or a dotted setting (`model.cache_dir`) changed: composed once."""
    for key, value in settings.items():
        group, _, field = key.replace("__", ".").rpartition(".")
        cfg = dataclasses.replace(cfg, **{group: dataclasses.replace(getattr(cfg, group), **{field: value})}) if group else \
            dataclasses.replace(cfg, **{field: value})
    return cfg


def _refusal(cfg, **settings: object) -> str:
    with pytest.raises(ConfigError) as e:
        benchmark_tasks(_cfg(cfg, **settings))
    return str(e.value)


def test_records_inside_a_workspace_folder_are_refused(bench: Path, composed) -> None:
    ws = bench / "workspaces" / "w"
    assert f"out={ws / 'outputs'} is inside the benchmark's workspace folder {ws}" in _refusal(composed, out=str(ws / "outputs"))
    assert "sweep=w" in _refusal(composed, out=str(ws.parent), sweep="w")  # the sweep's folder is the workspace itself
    for key in ("model.cache_dir", "agent.work_dir", "judge.cache_dir"):
        assert f"{key}=" in _refusal(composed, **{key.replace(".", "__"): str(ws / ".cache")})


def test_records_linked_into_a_workspace_folder_are_refused(bench: Path, composed, tmp_path: Path) -> None:
    ws = bench / "workspaces" / "w"
    (ws / "runs").mkdir(exist_ok=True)
    os.symlink(ws / "runs", tmp_path / "records")  # out is a link into the workspace
    assert "inside the benchmark's workspace folder" in _refusal(composed, out=str(tmp_path / "records" / "x"))
    os.symlink(tmp_path / "outputs", ws / "earlier")  # the workspace links to where the records go
    try:
        message = _refusal(composed, out=str(tmp_path / "outputs"))
        assert "links to it" in message and "earlier" in message and "\n" not in message
        assert "links to it" in _refusal(composed, out=str(tmp_path))  # a link into the records' folder
    finally:
        (ws / "earlier").unlink()


def test_records_beside_or_around_the_benchmark_pass(bench: Path, composed) -> None:
    for settings in ({"out": str(bench.parent / "outputs")}, {"out": str(bench.parent)},  # beside it; the benchmark inside out
                     {"out": str(bench), "sweep": "runs"}):  # beside workspaces/
        assert [t.id for t in benchmark_tasks(_cfg(composed, **settings))] == ["t"]


@pytest.mark.parametrize("name", ["../x", "..", ".", "/tmp/elsewhere", "a/b", ".cache", ""])
def test_a_sweep_name_that_is_not_one_folder_under_out_is_refused(composed, name: str) -> None:
    assert sweep_name_problem(name)
    with pytest.raises(ConfigError, match=r"a sweep's name is one folder under out="):
        check_config(_cfg(composed, sweep=name))


def test_plain_sweep_names_pass() -> None:
    assert [sweep_name_problem(n) for n in ("mine", "paper_main", "demo-again", "a.b", "s=1")] == [None] * 5


@pytest.mark.slow
def test_the_entry_points_refuse_in_one_line_and_write_nothing(tmp_path: Path) -> None:
    """As a user runs them, from another folder with relative paths: the job that would have
    written its answer into the workspace, and a sweep named `../escaped`."""
    write_native(tmp_path / "bench", TASKS, {"w/notes.txt": "The answer is 42.\n"})
    here = tmp_path / "elsewhere"
    here.mkdir()
    script = write_script(tmp_path / "s.jsonl", [{"content": "<FINAL_ANSWER>42</FINAL_ANSWER>"}])
    common = ["benchmark=native", "benchmark.path=../bench", "model=scripted", f"model.script={script}", "tracker=none"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"}
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    job = subprocess.run([sys.executable, "-m", "runners.job", *common, "task=t", "out=../bench/workspaces/w/outputs"],
                         cwd=here, capture_output=True, text=True, timeout=300, env=env)
    sweep = subprocess.run([sys.executable, "-m", "runners.sweep", *common, "out=out", "sweep=../escaped"],
                           cwd=here, capture_output=True, text=True, timeout=300, env=env)
    for r, words in ((job, "out="), (sweep, "sweep=../escaped")):
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert r.returncode == 1 and "Traceback" not in r.stderr and len(lines) == 1, r.stderr
        assert lines[0].startswith("error: ") and words in lines[0], lines
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
