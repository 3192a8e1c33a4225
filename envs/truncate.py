"""Line/byte truncation shared by the tools (Pi's rules: whole lines only, a line or a byte limit).

`read` cuts from the head while streaming the file (see envs/read_tool.py); `bash` keeps the tail of
a stream it never holds whole, so `tail_window` works on the last bytes of the output only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def format_size(n: int) -> str:
    """Pi's size format: 512B, 50.0KB, 1.2MB."""
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f}KB"
    return f"{n / (1024 * 1024):.1f}MB"


def decode(data: bytes) -> str:
    """Bytes as the model sees them: UTF-8 (invalid bytes replaced), CRs and control characters removed."""
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def cut_utf8(data: bytes, n: int, from_end: bool = False) -> bytes:
    """At most n bytes from the start (or end) of data, never splitting a UTF-8 character."""
    if len(data) <= n:
        return data
    if from_end:
        part = data[-n:]
        i = 0
        while i < len(part) and i < 4 and (part[i] & 0xC0) == 0x80:
            i += 1
        return part[i:]
    part = data[:n]
    i = len(part)
    # step back over continuation bytes and the lead byte of a cut character
    j = i - 1
    while j >= 0 and j >= i - 4 and (part[j] & 0xC0) == 0x80:
        j -= 1
    if j >= 0 and part[j] >= 0xC0:
        need = 2 if part[j] < 0xE0 else 3 if part[j] < 0xF0 else 4
        if i - j < need:
            return part[:j]
    return part


@dataclass
class Tail:
    """What to show of an output's end. `first`/`last` are 1-based line numbers of the shown lines."""

    text: bytes
    first: int
    last: int
    truncated: bool
    by: str  # "" | "lines" | "bytes" | "partial" (the last line alone is over the byte limit)


def tail_window(window: bytes, total_bytes: int, total_lines: int, max_lines: int, max_bytes: int) -> Tail:
    """Keep whole lines from the end of an output of which `window` holds the last bytes.

    `window` must hold at least max_bytes + 2 bytes of the output, or all of it. A trailing newline
    does not make an extra (empty) line.
    """
    at_start = len(window) >= total_bytes
    data = window[:-1] if window.endswith(b"\n") else window
    parts = data.split(b"\n")
    candidates = parts if at_start else parts[1:]  # the first piece may be the end of a longer line
    kept: list[bytes] = []
    size = 0
    by = ""
    for line in reversed(candidates):
        add = len(line) + (1 if kept else 0)
        if len(kept) == max_lines:
            by = "lines"
            break
        if size + add > max_bytes:
            by = "bytes"
            break
        kept.append(line)
        size += add
    else:
        if not at_start:
            by = "lines" if len(kept) == max_lines else "bytes"
    if not kept and total_bytes > 0:
        return Tail(cut_utf8(parts[-1], max_bytes, from_end=True), total_lines, total_lines, True, "partial")
    kept.reverse()
    return Tail(b"\n".join(kept), total_lines - len(kept) + 1, total_lines, bool(by), by)
