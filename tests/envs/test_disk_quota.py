"""The disk quota of one job's agent (`env.disk_quota_bytes`, envs/disk_quota.py), through the real
environment and its real shell (bubblewrap and the unsandboxed fallback): many files, its /tmp, a
deleted file held open, a file written outside the workspace without bubblewrap, and the model's own
`write`; sparse files and hard links count what they really hold. Over quota, every process of the
shell is killed during the call, the call's result says so and ends the episode (`disk_quota`).
The sweep-level case (one job's runaway, the others complete) is tests/runners/sweep/test_disk_quota.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from envs.config import EnvConfig
from envs.disk_quota import POLL_MIN_S, DiskQuota, measure
from envs.environment import WorkspaceEnv
from envs.procfs import descendants
from envs.protocol import ToolCall
from envs.sandbox import bwrap_problem

QUOTA = 8 << 20
MODES = ["none", pytest.param("bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason="bubblewrap unusable"))]
# 400 MB in 1 MB files, fast: the watchdog must stop it long before the end.
MANY = "for i in $(seq 1 400); do head -c 1000000 /dev/zero > {dir}/f$i; done; echo done-writing"


def make_env(tmp_path: Path, mode: str, **cfg) -> WorkspaceEnv:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "in.txt").write_bytes(b"x" * 3_000_000)  # the task's own files are the baseline, not counted
    return WorkspaceEnv(ws, EnvConfig(sandbox=mode, disk_quota_bytes=QUOTA, **cfg))


def bash(env: WorkspaceEnv, command: str, timeout: int = 120):
    return env.execute(ToolCall("c", "bash", json.dumps({"command": command, "timeout": timeout})), 1)


def ended_by_quota(env: WorkspaceEnv, result) -> None:
    assert result.stop == "disk_quota" and result.is_error, result.content[-2000:]
    assert "done-writing" not in result.content and "disk quota (8.0 MB) was exceeded" in result.content
    assert "disk_quota" in env.limits_hit
    again = bash(env, "echo hi")  # later calls are refused
    assert again.stop == "disk_quota" and "hi" not in again.content


@pytest.mark.parametrize("mode", MODES)
def test_many_files_in_the_workspace_are_stopped_during_the_call(tmp_path: Path, mode: str) -> None:
    env = make_env(tmp_path, mode)
    try:
        began = time.monotonic()
        ended_by_quota(env, bash(env, MANY.format(dir=".")))
        held = measure([env.root], None)[0] - 3_000_000
        assert held < 120 << 20, held  # stopped early: the overshoot is one poll's worth of writing
        assert time.monotonic() - began < 60
    finally:
        env.close()


@pytest.mark.parametrize("mode", MODES)
def test_the_agents_tmp_counts(tmp_path: Path, mode: str) -> None:
    env = make_env(tmp_path, mode)
    try:
        ended_by_quota(env, bash(env, MANY.format(dir="$TMPDIR")))
    finally:
        env.close()


@pytest.mark.skipif(bwrap_problem() is not None, reason="bubblewrap unusable")
def test_the_sandboxs_own_mount_points_in_its_tmp_are_not_the_agents(tmp_path: Path) -> None:
    """bubblewrap makes a folder in the agent's /tmp for each path it binds under /tmp (the session's
    commands folder, a venv or a read-only folder under /tmp): 4 KB each, once the sandbox starts. They
    were charged to the agent, so a file of exactly the quota (the per-file cap) passed it while still
    being written, and the watchdog killed the writer before the cap did (a CI run's `file_size` lost)."""
    under_tmp = tmp_path / "deep" / "ro"  # pytest's tmp_path is under /tmp
    under_tmp.mkdir(parents=True)
    for session in (True, False):
        ws = tmp_path / f"ws{session}"
        ws.mkdir()
        env = WorkspaceEnv(ws, EnvConfig(sandbox="bwrap", disk_quota_bytes=QUOTA, shell_session=session,
                                         extra_ro_binds=[str(under_tmp)]))
        try:
            assert bash(env, f"ls {under_tmp} && echo ok").content.strip() == "ok"
            assert env.disk_quota.used == 0, env.disk_quota.used
            bash(env, "head -c 5000 /dev/zero > a && rm a")
            assert env.disk_quota.used == 0, env.disk_quota.used
            full = bash(env, "yes > big; echo after")  # one file at the per-file cap is within the quota
            assert full.stop is None and "after" in full.content and "file_size" in env.limits_hit, full.content
            assert QUOTA - QUOTA // 32 <= env.disk_quota.used <= QUOTA and env.disk_quota.exceeded is None
        finally:
            env.close()


# A file of exactly the per-file cap (bash's `ulimit -f`, in KB), written in two passes of alternate
# 4 KB blocks: each block its own extent, so the file system holds ~1% more than its bytes (ext4).
AT_THE_CAP = ("cap=$(( $(ulimit -f) * 1024 )); python3 -c 'import os,sys; cap=int(sys.argv[1]); n=cap//4096; "
              "f=os.open(\"big\",os.O_WRONLY|os.O_CREAT); b=bytes(4096)\n"
              "for first in (1,0):\n [os.pwrite(f,b,i*4096) for i in range(first,n,2)]; os.fsync(f)\n"
              "print(os.fstat(f).st_size, \"ok\")' $cap")


@pytest.mark.parametrize("mode", MODES)
def test_one_file_at_the_per_file_cap_is_within_the_quota(tmp_path: Path, mode: str) -> None:
    """The per-file cap is in bytes, the quota in the blocks the disk holds, the file system's own
    blocks for the file among them: with the cap at the quota, one file at the cap, written in
    pieces, passed the quota and ended the job (a CI run: `yes > big` at the cap, 4 KB over)."""
    env = make_env(tmp_path, mode)
    try:
        result = bash(env, AT_THE_CAP)
        assert result.stop is None and "ok" in result.content, result.content
        assert QUOTA - QUOTA // 32 <= int(result.content.split()[0]) < QUOTA
        assert 0 < env.disk_quota.used <= QUOTA and env.disk_quota.exceeded is None
    finally:
        env.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_deleted_file_held_open_counts(tmp_path: Path, mode: str) -> None:
    env = make_env(tmp_path, mode)
    try:
        result = bash(env, "exec 3>x 4>y; rm x y; for i in $(seq 1 400); do head -c 1000000 /dev/zero >&3; "
                           "head -c 1000000 /dev/zero >&4; sleep 0.02; done; echo done-writing")
        ended_by_quota(env, result)
    finally:
        env.close()


@pytest.mark.parametrize("mode", MODES)
def test_sparse_files_and_hard_links_count_what_they_hold(tmp_path: Path, mode: str) -> None:
    env = make_env(tmp_path, mode)
    try:
        result = bash(env, "truncate -s 7M sparse && for i in $(seq 1 30); do cp --sparse=always sparse s$i; done && "
                           "head -c 5000000 /dev/zero > a && for i in $(seq 1 50); do ln a l$i; done && du -sh --apparent-size .")
        assert result.stop is None and not result.is_error, result.content  # 215 MB sparse, 255 MB linked: 5 MB held
        assert "disk_quota" not in env.limits_hit
    finally:
        env.close()


@pytest.mark.parametrize("mode", MODES)
def test_many_empty_files_count_an_inode_each(tmp_path: Path, mode: str) -> None:
    env = make_env(tmp_path, mode)
    try:
        result = bash(env, "mkdir many && cd many && for i in $(seq 1 20); do touch $(seq -f \"$i-%g\" 1 200); sleep 0.1; done; echo done-writing")
        ended_by_quota(env, result)  # 4,000 empty files: 16 MB at 4 KiB each
    finally:
        env.close()


def test_without_bubblewrap_a_file_written_outside_counts(tmp_path: Path) -> None:
    env = make_env(tmp_path, "none")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    try:
        result = bash(env, f"exec 3>{outside}/a 4>{outside}/b; for i in $(seq 1 400); do head -c 1000000 /dev/zero >&3; "
                           "head -c 1000000 /dev/zero >&4; sleep 0.02; done; echo done-writing")
        ended_by_quota(env, result)
    finally:
        env.close()


def test_the_models_own_write_counts(tmp_path: Path) -> None:
    env = make_env(tmp_path, "none", write_tool=True)
    try:
        ok = env.execute(ToolCall("w", "write", json.dumps({"path": "small.txt", "content": "x" * 1000})), 1)
        assert ok.stop is None and not ok.is_error, ok.content
        big = env.execute(ToolCall("w", "write", json.dumps({"path": "big.txt", "content": "x" * (QUOTA + 1)})), 2)
        assert big.stop == "disk_quota" and "disk quota" in big.content
    finally:
        env.close()


def test_descendants_finds_the_whole_tree(tmp_path: Path) -> None:
    proc = subprocess.Popen(["sh", "-c", "sleep 30 & sh -c 'sleep 30 & wait' & wait"])
    try:
        def names(pids: list[int]) -> list[str]:
            return sorted(Path(f"/proc/{p}/comm").read_text().strip() for p in pids if os.path.exists(f"/proc/{p}"))

        for _ in range(250):  # until the shells' transient forks have become the two sleeps
            found = descendants([proc.pid])
            if names(found) == ["sh", "sh", "sleep", "sleep"]:
                break
            time.sleep(0.02)
        assert names(found) == ["sh", "sh", "sleep", "sleep"] and found[0] == proc.pid and os.getpid() not in found
    finally:
        for pid in reversed(descendants([proc.pid])):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:  # ended with its parent meanwhile
                pass
        proc.wait()


@pytest.mark.skipif(bwrap_problem() is not None, reason="bubblewrap unusable")
def test_dev_is_read_only_and_dev_shm_holds_at_most_the_quota(tmp_path: Path) -> None:
    """bubblewrap's /dev is a tmpfs of half the host's memory, writable and bounded by no cap before."""
    env = make_env(tmp_path, "bwrap")
    try:
        result = bash(env, "echo x > /dev/planted; echo y > /dev/null && echo null-ok; "
                           "python3 -c 'import multiprocessing as m; m.Lock(); print(\"lock-ok\")'; "
                           "head -c 6000000 /dev/zero > /dev/shm/x; head -c 6000000 /dev/zero > /dev/shm/y; "
                           "cat /dev/shm/x /dev/shm/y | wc -c")
        assert "/dev/planted: Read-only file system" in result.content and "null-ok" in result.content
        assert "lock-ok" in result.content and "No space left on device" in result.content, result.content
        assert int(result.content.split()[-1]) <= QUOTA
    finally:
        env.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_deleted_file_written_through_a_mapping_counts(tmp_path: Path, mode: str) -> None:
    """Mapped, closed, unlinked, then written through the mapping: no descriptor is left to find."""
    script = """import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
maps = []
for name in ("a", "b"):
    fd = os.open(name, os.O_RDWR | os.O_CREAT)
    os.ftruncate(fd, 6_000_000)
    maps.append(libc.mmap(None, 6_000_000, 3, 1, fd, 0))  # PROT_READ|PROT_WRITE, MAP_SHARED
    os.close(fd)  # Python's own mmap would keep a copy of the descriptor
    os.unlink(name)
for base in maps:
    for i in range(0, 6_000_000, 4096):
        ctypes.c_char.from_address(base + i).value = b"x"
        if i % 400_000 == 0:
            time.sleep(0.02)
time.sleep(3)
print("done-writing")"""
    env = make_env(tmp_path, mode)
    try:
        ended_by_quota(env, bash(env, f"python3 - <<'EOF'\n{script}\nEOF"))
    finally:
        env.close()


@pytest.mark.parametrize("after_another", [False, True])
def test_a_command_is_first_measured_one_interval_after_it_begins(tmp_path: Path, after_another: bool) -> None:
    """Nothing of a command is on disk as it begins (the last call's measure saw the same state):
    the watchdog first measures it one poll interval on, then every interval, and the last measure
    follows the call. Each measure asks for the environment's processes once. Also when another
    command ended just before (the watchdog was then waiting out that one's interval: red once
    in a full run, measured 0.02 s after the call began)."""
    if after_another:
        other = DiskQuota(QUOTA, [str(tmp_path)], list)
        other.start()
        time.sleep(POLL_MIN_S / 2)
        other.stop()
    asked: list[float] = []

    def pids() -> list[int]:
        asked.append(time.monotonic())
        return []

    quota = DiskQuota(QUOTA, [str(tmp_path)], pids)
    began = time.monotonic()
    quota.start()
    time.sleep(0.5)
    during = list(asked)
    quota.stop()
    assert during, "the watchdog measured nothing during a 0.5 s call"
    assert min(during) - began >= POLL_MIN_S, f"measured {min(during) - began:.3f} s after the call began"
    assert len(asked) == len(during) + 1  # the last measure


@pytest.mark.skipif(bwrap_problem() is not None, reason="bubblewrap unusable")
@pytest.mark.slow
def test_every_process_in_the_sandbox_is_scanned_and_only_bubblewraps_launcher_is_not(tmp_path: Path) -> None:
    """The open and mapped files of the shell's processes count; bubblewrap's launcher runs outside
    the sandbox's PID namespace (nothing inside can name it), so its own are not scanned at each
    measure. A process left running in the sandbox during a call is scanned."""
    env = make_env(tmp_path, "bwrap")
    try:
        bash(env, "true")
        quota = env.disk_quota
        def sample() -> tuple[set[int], set[int]]:
            """The scanned processes, and those in the sandbox's PID namespace (NSpid: a second id)."""
            holders, inside = set(quota.holders()), set()
            for pid in quota._pids():
                status = Path(f"/proc/{pid}/status").read_text()
                if len(status.split("NSpid:")[1].splitlines()[0].split()) > 1:
                    inside.add(pid)
            return holders, inside

        call = threading.Thread(target=bash, args=(env, "sleep 3 & sleep 3; wait"))
        call.start()
        time.sleep(1.5)
        during = sample()
        call.join()
        after = sample()
        assert during[0] == during[1] and len(during[0]) >= 3  # the supervisor and the call's processes
        assert after[0] == after[1] and len(after[0]) == 1  # the supervisor
        assert len(quota._pids()) == 2  # and the launcher
    finally:
        env.close()
