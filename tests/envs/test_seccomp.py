"""Issue 48 (4): no disk space the agent has not written. `fallocate -n -l 1200M /tmp/big` reserved 19
times a 64 MB quota in one call, before the disk quota's next poll (FALLOC_FL_KEEP_SIZE is not even
checked by RLIMIT_FSIZE), and on a disk it filled the job's own record could not be written. Under
bubblewrap the sandbox's seccomp filter (envs/seccomp.py) refuses every call that allocates without
writing, through each door: fallocate's modes, the ioctls that reach it, io_uring, and the machine's
other ABIs; what only frees space, and glibc's posix_fallocate (it writes), still work."""

from __future__ import annotations

import dataclasses
import json
import platform
from pathlib import Path

import pytest

from envs import seccomp
from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall, ToolResult
from envs.sandbox import bwrap_problem

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"needs bubblewrap: {bwrap_problem()}")
QUOTA = 64 << 20
# Each prints the call's errno (0: it ran) and the blocks the file then holds, in bytes.
PROBE = """import ctypes, fcntl, mmap, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/tmp/probe", os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"x" * 8192)
def errno_of(ret):
    return ctypes.get_errno() if ret == -1 else 0
def i386(nr, *args):  # a system call through the i386 ABI (int 0x80) of this x86-64 process
    code = b"\\x55\\x53\\xb8" + struct.pack("<I", nr)
    for op, v in zip((b"\\xbb", b"\\xb9", b"\\xba", b"\\xbe", b"\\xbf", b"\\xbd"), [*args, 0, 0, 0, 0, 0, 0]):
        code += op + struct.pack("<I", v & 0xFFFFFFFF)
    buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(code + b"\\xcd\\x80\\x5b\\x5d\\xc3")
    ret = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(buf)))()
    return -ret if ret < 0 else 0
kind, arg = sys.argv[1], int(sys.argv[2], 0)
if kind == "mode":
    err = errno_of(libc.fallocate(fd, arg, ctypes.c_long(0), ctypes.c_long(1 << 30)))
elif kind == "ioctl":
    try:
        fcntl.ioctl(fd, arg, struct.pack("=hhxxxxqqiI16x", 0, 0, 0, 1 << 30, 0, 0))
        err = 0
    except OSError as e:
        err = e.errno
elif kind == "x32":
    err = errno_of(libc.syscall(285 | 0x40000000, fd, 1, ctypes.c_long(0), ctypes.c_long(1 << 30)))
elif kind == "i386":
    err = i386(324, fd, 1, 0, 0, 1 << 30, 0)
elif kind == "io_uring":
    err = errno_of(libc.syscall(425, 4, ctypes.create_string_buffer(120)))
elif kind == "posix":
    err = os.posix_fallocate(fd, 0, arg) or 0
print(err, os.fstat(fd).st_blocks * 512)
"""


def bash(env: WorkspaceEnv, command: str) -> ToolResult:
    return env.execute(ToolCall("c", "bash", json.dumps({"command": command})), 1)


@pytest.fixture
def env(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "probe.py").write_text(PROBE)
    e = WorkspaceEnv(ws, dataclasses.replace(EnvConfig(), sandbox="bwrap", disk_quota_bytes=QUOTA))
    yield e
    e.close()


def probe(env: WorkspaceEnv, kind: str, arg: int = 0) -> tuple[int, int]:
    result = bash(env, f"python3 probe.py {kind} {arg}")
    assert result.meta["exit_code"] == 0 and result.stop is None, result.content
    err, held = result.content.split()
    return int(err), int(held)


def test_the_issues_command_is_refused_and_the_job_goes_on(env: WorkspaceEnv) -> None:
    result = bash(env, ": > /tmp/big; fallocate -n -l 1200M /tmp/big; fallocate -l 1200M /tmp/big2; du -k /tmp/big /tmp/big2")
    assert result.stop is None and "disk quota" not in result.content, result.content
    assert result.content.count("fallocate failed") == 2 and "0\t/tmp/big\n0\t/tmp/big2" in result.content, result.content
    assert env.disk_quota.used < 1 << 20 and bash(env, "echo next").content == "next"


ALLOCATING = {"plain": 0x0, "keep size": 0x1, "zero range": 0x10, "zero range, keep size": 0x11, "insert range": 0x20,
              "unshare range": 0x40, "write zeroes": 0x80}


@pytest.mark.parametrize("mode", sorted(ALLOCATING))
def test_every_fallocate_mode_that_allocates_is_refused(env: WorkspaceEnv, mode: str) -> None:
    assert probe(env, "mode", ALLOCATING[mode]) == (seccomp.EOPNOTSUPP, 8192)


def test_what_only_frees_space_still_works(env: WorkspaceEnv) -> None:
    assert probe(env, "mode", 0x03) == (0, 0)  # a hole punched over the whole file


@pytest.mark.parametrize("cmd", seccomp.ABIS["x86_64"][0].ioctls, ids=hex)
def test_the_ioctls_that_reserve_space_are_refused(env: WorkspaceEnv, cmd: int) -> None:
    assert probe(env, "ioctl", cmd) == (seccomp.EOPNOTSUPP, 8192)


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the i386 and x32 ABIs are x86-64's")
@pytest.mark.parametrize("abi", ["i386", "x32"])
def test_the_other_abis_of_the_machine_are_no_way_around(env: WorkspaceEnv, abi: str) -> None:
    err, held = probe(env, abi)
    assert held == 8192 and err in (seccomp.ENOSYS, seccomp.EOPNOTSUPP), err


def test_io_uring_is_not_there(env: WorkspaceEnv) -> None:
    assert probe(env, "io_uring") == (seccomp.ENOSYS, 8192)


def test_posix_fallocate_writes_its_blocks_under_the_writers_caps(env: WorkspaceEnv) -> None:
    """glibc's emulation after EOPNOTSUPP writes the blocks: a writer, held by the file size cap (and
    the quota) as any other."""
    assert probe(env, "posix", 1 << 20) == (0, 1 << 20)
    result = bash(env, "python3 probe.py posix 0x8000000")  # 128 MB, over the file size cap of a 64 MB quota
    assert "File too large" in result.content and result.stop is None, result.content


def test_the_program_refuses_unknown_abis_and_exists_only_where_built() -> None:
    code = seccomp.program("x86_64")
    assert code is not None and len(code) % 8 == 0 and seccomp.program("riscv64") is None
    first_return = code[24:32]  # after the arch load and two arch compares: every other ABI
    assert int.from_bytes(first_return[4:], "little") == seccomp.RET_ERRNO | seccomp.ENOSYS
