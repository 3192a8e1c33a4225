"""Where a bash call's output goes while it runs: the tail in memory, the head in a file if long.

Only the last ~50 KB stay in memory; once the output is too long to show whole, its first `cap`
bytes go to `<n>.txt` in the shell's output folder (made relative to a descriptor of that folder,
without following links). A command printing 1 GB leaves the runner's memory flat.
"""

from __future__ import annotations

from typing import BinaryIO

from envs.safeio import create_in


class OutputSink:
    """Where output goes: a rolling window of the tail in memory and, once the output is too long to
    show whole, the first `cap` bytes in a file (short outputs never touch the disk)."""

    def __init__(self, dir_fd: int, name: str, cap: int, max_lines: int, max_bytes: int) -> None:
        self.dir_fd, self.name = dir_fd, name
        self.cap, self.max_lines, self.max_bytes = cap, max_lines, max_bytes
        self.keep = max_bytes + 2  # what tail_window needs
        self.file: BinaryIO | None = None
        self.head: list[bytes] = []  # everything so far, until the file is opened
        self.saved = self.total = self.newlines = 0
        self.window = b""
        self.last = b"\n"
        self.last_nl = self.prev_nl = -1  # absolute offsets of the last two newlines

    def add(self, chunk: bytes) -> None:
        i = chunk.rfind(b"\n")
        if i >= 0:
            j = chunk.rfind(b"\n", 0, i)
            self.prev_nl = self.total + j if j >= 0 else self.last_nl
            self.last_nl = self.total + i
        self.total += len(chunk)
        self.newlines += chunk.count(b"\n")
        self.last = chunk[-1:]
        self.window = chunk[-self.keep :] if len(chunk) >= self.keep else (self.window + chunk)[-self.keep :]
        if self.file is None:
            self.head.append(chunk)
            if self.total > self.max_bytes or self.newlines >= self.max_lines:
                self.file = create_in(self.dir_fd, self.name)
                pending, self.head = self.head, []
                for part in pending:
                    self._save(part)
        else:
            self._save(chunk)

    def _save(self, chunk: bytes) -> None:
        if self.file is not None and self.saved < self.cap:
            part = chunk[: self.cap - self.saved]
            self.file.write(part)
            self.saved += len(part)

    def lines(self) -> int:
        return self.newlines + (0 if self.total == 0 or self.last == b"\n" else 1)

    def last_line_size(self) -> int:
        """Bytes of the output's last line (a trailing newline does not start a new line)."""
        if self.last == b"\n":
            return self.last_nl - self.prev_nl - 1
        return self.total - self.last_nl - 1

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
