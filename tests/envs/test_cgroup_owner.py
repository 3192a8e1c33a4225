"""Pids cgroups a killed runner left behind (envs/cgroup_owner.py): the next runner that makes one
empties and removes those whose owner is gone, and touches no other. A killed sweep's test left a
sandbox blocked in its start, orphaned in its cgroup, for hours; and 55 empty cgroups after three
runs of the suite."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from envs import cgroup_owner
from envs.config import EnvConfig
from envs.limits import Caps, _pids_bases
from envs.procfs import pid_namespace, start_time


def _base() -> str | None:
    caps = Caps(EnvConfig())
    try:
        return os.path.dirname(caps.cgroup) if caps.cgroup else None
    finally:
        caps.close()


BASE = _base()
pytestmark = pytest.mark.skipif(BASE is None, reason="this process may not make a pids cgroup (root with cgroup v1, or a delegated v2 tree)")


def gone_owner() -> tuple[int, int]:
    """The pid and start time of a process that has ended."""
    proc = subprocess.Popen(["sleep", "30"])
    began = start_time(proc.pid)
    proc.kill()
    proc.wait()
    assert began is not None
    return proc.pid, began


def cgroup(owner: str, *holding: subprocess.Popen) -> Path:
    assert BASE is not None
    path = Path(BASE, f"runningtab-{owner}-{uuid.uuid4().hex[:12]}")
    path.mkdir()
    for proc in holding:
        (path / "cgroup.procs").write_text(str(proc.pid))
    return path


@pytest.fixture
def made() -> Iterator[list[Path]]:
    paths: list[Path] = []
    yield paths
    for p in paths:
        if p.exists():
            cgroup_owner.empty_and_remove(str(p))


def test_a_killed_runners_cgroup_is_emptied_and_removed_by_the_next_runner(made: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    pid, began = gone_owner()
    stuck = subprocess.Popen(["sleep", "300"])  # what the killed runner's sandbox left running
    orphan = cgroup(f"{pid_namespace()}-{pid}-{began}", stuck)
    mine = cgroup(cgroup_owner.owner_tag())  # a live owner's (this process)
    other_ns = cgroup(f"{pid_namespace() + 1}-{pid}-{began}")  # another pid namespace's: its pids are not ours
    older = Path(BASE or "", f"runningtab-{uuid.uuid4().hex[:12]}")  # an older runner's name: no owner to check
    older.mkdir()
    made.extend([orphan, mine, other_ns, older])
    monkeypatch.setattr(cgroup_owner, "_last_reap", {})
    caps = Caps(EnvConfig())  # the next runner's first environment
    try:
        assert stuck.wait(timeout=10) == -9
        assert not orphan.exists()
        assert mine.exists() and other_ns.exists() and older.exists()
        assert Path(caps.cgroup).exists() and cgroup_owner.owner_tag() in caps.cgroup
    finally:
        caps.close()


def test_the_reaping_runs_at_most_once_a_minute_per_folder(made: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroup_owner, "_last_reap", {})
    [base] = [b for b in _pids_bases() if b == BASE]
    cgroup_owner.reap_orphans(base, now=1000.0)
    pid, began = gone_owner()
    made.append(cgroup(f"{pid_namespace()}-{pid}-{began}"))
    assert cgroup_owner.reap_orphans(base, now=1059.0) == 0 and made[0].exists()
    assert cgroup_owner.reap_orphans(base, now=1061.0) >= 1 and not made[0].exists()  # (a killed sweep of another test may have left more)


def test_a_pid_reused_by_another_process_is_not_its_owner(made: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The owner is its pid and its start time: a new process under the same pid owns nothing."""
    me = os.getpid()
    began = start_time(me)
    assert began is not None
    made.append(cgroup(f"{pid_namespace()}-{me}-{began - 1}"))
    monkeypatch.setattr(cgroup_owner, "_last_reap", {})
    assert str(made[0]) in cgroup_owner.orphans(BASE or "")
