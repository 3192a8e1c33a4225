"""The sandbox's seccomp filter: no disk space the agent has not written.

The disk quota (envs/disk_quota.py) is a watchdog: it stops a writer after the fact, by what it
writes in one poll interval, and that bound rests on the speed of writing. `fallocate` reserves
space without writing it, 1.2 GB in one call faster than any poll (and FALLOC_FL_KEEP_SIZE is not
even checked by RLIMIT_FSIZE), so the filter, passed to bubblewrap (`--seccomp FD`), refuses every
call that allocates without writing:

- `fallocate` in every mode that allocates (plain, KEEP_SIZE, ZERO_RANGE, UNSHARE_RANGE, INSERT_RANGE,
  WRITE_ZEROES): EOPNOTSUPP, what a file system without it answers (glibc's `posix_fallocate` then
  writes the blocks, as a writer the watchdog measures). Punching a hole and collapsing a range,
  which only free space, still work;
- the `ioctl`s that reach the same code (FS_IOC_RESVSP, FS_IOC_RESVSP64, FS_IOC_ZERO_RANGE, and XFS's
  old ALLOCSP): EOPNOTSUPP;
- io_uring (`io_uring_setup`, `_enter`, `_register`), whose IORING_OP_FALLOCATE no system-call
  filter sees: ENOSYS, what a kernel without it answers (programs fall back to plain calls);
- the other ABIs of the machine (i386 and x32 on x86-64, arm on arm64) get the same rules with their
  own numbers; an ABI the filter does not know gets ENOSYS for everything.

The program is classic BPF assembled here (no libseccomp); the filter is built for x86-64 and arm64,
and elsewhere there is none (`program()` is None; docs/env.md says what that leaves open).
"""

from __future__ import annotations

import fcntl
import functools
import os
import platform
import struct
from dataclasses import dataclass

RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
EOPNOTSUPP, ENOSYS = 95, 38
ALLOCATE_NOT = (0x03, 0x08)  # PUNCH_HOLE|KEEP_SIZE, COLLAPSE_RANGE: the fallocate modes that only free space
X32_BIT = 0x40000000

_LD_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_NR, _ARCH, _ARG1 = 0, 4, 24  # offsets in struct seccomp_data (args[1]'s low word, little-endian)


def _resv_ioctls(struct_size: int) -> tuple[int, ...]:
    """_IOW('X', n, struct space_resv) for ALLOCSP (10), ALLOCSP64 (36), RESVSP (40), RESVSP64 (42), ZERO_RANGE (57)."""
    return tuple((1 << 30) | (struct_size << 16) | (ord("X") << 8) | n for n in (10, 36, 40, 42, 57))


@dataclass(frozen=True)
class Abi:
    audit_arch: int
    fallocate: int
    ioctl: int
    ioctls: tuple[int, ...]
    x32: bool = False  # syscall numbers with X32_BIT are another ABI on the same arch value
    io_uring: tuple[int, ...] = (425, 426, 427)


ABIS = {
    "x86_64": (Abi(0xC000003E, 285, 16, _resv_ioctls(48), x32=True), Abi(0x40000003, 324, 54, _resv_ioctls(44))),
    "aarch64": (Abi(0xC00000B7, 47, 29, _resv_ioctls(48)), Abi(0x40000028, 352, 54, _resv_ioctls(48))),
}


def _assemble(lines: list[tuple]) -> bytes:
    """(code, k, true-label, false-label) instructions and ("label", name) markers into struct sock_filter[]."""
    where: dict[str, int] = {}
    body = []
    for line in lines:
        if line[0] == "label":
            where[line[1]] = len(body)
        else:
            body.append(line)
    out = bytearray()
    for i, (code, k, jt, jf) in enumerate(body):
        jumps = [0 if j is None else where[j] - i - 1 for j in (jt, jf)]
        assert all(0 <= j < 256 for j in jumps), "a jump too far for classic BPF"
        out += struct.pack("=HBBI", code, jumps[0], jumps[1], k)
    return bytes(out)


@functools.cache
def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine (or `machine`), None where there is none."""
    abis = ABIS.get(machine or platform.machine())
    if abis is None:
        return None
    lines: list[tuple] = [(_LD_ABS, _ARCH, None, None)]
    lines += [(_JEQ, abi.audit_arch, f"abi{i}", None) for i, abi in enumerate(abis)]
    lines.append((_RET, RET_ERRNO | ENOSYS, None, None))
    for i, abi in enumerate(abis):
        lines += [("label", f"abi{i}"), (_LD_ABS, _NR, None, None)]
        if abi.x32:
            lines.append((_JGE, X32_BIT, "nosys", None))
        lines += [(_JEQ, abi.fallocate, "fallocate", None), (_JEQ, abi.ioctl, f"ioctl{i}", None)]
        lines += [(_JEQ, nr, "nosys", None) for nr in abi.io_uring]
        lines.append((_RET, RET_ALLOW, None, None))
    lines += [("label", "fallocate"), (_LD_ABS, _ARG1, None, None)]
    lines += [(_JEQ, mode, "allow", None) for mode in ALLOCATE_NOT]
    lines.append((_RET, RET_ERRNO | EOPNOTSUPP, None, None))
    for i, abi in enumerate(abis):
        lines += [("label", f"ioctl{i}"), (_LD_ABS, _ARG1, None, None)]
        lines += [(_JEQ, cmd, "notsup", None) for cmd in abi.ioctls]
        lines.append((_RET, RET_ALLOW, None, None))
    lines += [("label", "allow"), (_RET, RET_ALLOW, None, None)]
    lines += [("label", "notsup"), (_RET, RET_ERRNO | EOPNOTSUPP, None, None)]
    lines += [("label", "nosys"), (_RET, RET_ERRNO | ENOSYS, None, None)]
    return _assemble(lines)


def filter_fd() -> int | None:
    """A sealed memfd holding the program (None where there is none), for `bwrap --seccomp FD`.
    bubblewrap reads it from the current offset: `os.lseek(fd, 0, 0)` before each launch."""
    code = program()
    if code is None:
        return None
    fd = os.memfd_create("runningtab-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.write(fd, code)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
