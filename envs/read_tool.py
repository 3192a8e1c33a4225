"""Pi's `read`: a text file from the head, 1-based offset, limit in lines, whole lines within the limits.

The file is streamed: memory stays at one result's worth however big the file or its lines are.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO, Any

from envs import harness_texts
from envs.filetypes import HEAD_BYTES, why_not_text
from envs.paths import ToolError, resolve_inside
from envs.protocol import ToolResult, function_schema
from envs.safeio import UnsafePath, open_regular
from envs.truncate import cut_utf8, decode, format_size

_CHUNK = 1 << 20


def read_schema(max_lines: int, max_bytes: int) -> dict[str, Any]:
    """The OpenAI function-calling schema of `read`."""
    return function_schema(
        "read",
        harness_texts.READ_DESCRIPTION.format(max_lines=max_lines, max_kb=max_bytes // 1024),
        {
            "path": {"type": "string", "description": "Path to the file (relative to the workspace, or absolute)"},
            "offset": {"type": "integer", "description": "Line number to start reading from (1-indexed)"},
            "limit": {"type": "integer", "description": "Maximum number of lines to read"},
        },
        ["path"],
    )


@dataclass
class _Line:
    head: bytes  # the line without its newline, at most cap bytes of it
    size: int  # the whole line's length in bytes


def read_file(
    root: str, path: str, offset: int | None, limit: int | None, max_lines: int, max_bytes: int
) -> ToolResult:
    """Run one `read` call. Bad paths, binary files and an offset past the end raise ToolError."""
    if offset is not None and offset < 0:
        raise ToolError(f"offset must be a line number (1 or more), got {offset}")
    if limit is not None and limit < 1:
        raise ToolError(f"limit must be a number of lines (1 or more), got {limit}")
    real = resolve_inside(root, path)
    if not os.path.exists(real):
        raise ToolError(f"File not found: {path}")
    if os.path.isdir(real):
        raise ToolError(f"{path} is a directory; list it with bash, e.g. ls -la {path}")
    start = max(offset or 1, 1)
    try:
        with open_regular(root, os.path.relpath(real, root)) as f:
            problem = why_not_text(path, os.path.splitext(real)[1].lower(), f.read(HEAD_BYTES))
            if problem:
                raise ToolError(problem)
            f.seek(0)
            text, meta = _read_from(f, path, start, limit, max_lines, max_bytes)
    except UnsafePath as e:
        raise ToolError(f"Cannot read {path}: not a regular file (FIFOs, devices and sockets are never opened)") from e
    except OSError as e:
        raise ToolError(f"Cannot read {path}: {e.strerror or e}") from e
    meta["path"] = os.path.relpath(real, root)
    return ToolResult(text, meta=meta)


def _read_from(
    f: IO[bytes], path: str, start: int, limit: int | None, max_lines: int, max_bytes: int
) -> tuple[str, dict[str, Any]]:
    lines: list[bytes] = []
    size = 0
    lineno = 0
    stop = ""  # why we stopped collecting: limit | lines | bytes | long
    long_line: _Line | None = None
    while True:
        line = _next_line(f, max_bytes + 1)
        if line is None:
            break
        lineno += 1
        if lineno < start:
            continue
        if limit is not None and len(lines) == limit:
            stop = "limit"
        elif not lines and line.size > max_bytes:
            stop, long_line = "long", line
            break
        elif len(lines) == max_lines:
            stop = "lines"
        elif size + line.size + (1 if lines else 0) > max_bytes:
            stop = "bytes"
        else:
            lines.append(line.head)
            size += line.size + (1 if len(lines) > 1 else 0)
            continue
        break
    total = lineno + _count_lines(f)
    if total == 0 and start == 1:
        return harness_texts.READ_EMPTY, {"total_lines": 0}
    if start > total:
        raise ToolError(harness_texts.READ_OFFSET_PAST_END.format(offset=start, total=total))
    if long_line is not None:
        return _long_line_text(path, start, total, long_line, max_bytes), {"total_lines": total, "lines": [start, start]}
    end = start + len(lines) - 1
    text = decode(b"\n".join(lines))
    limit_s = format_size(max_bytes)
    if stop == "lines":
        text += "\n\n" + harness_texts.READ_LINES_NOTICE.format(start=start, end=end, total=total, next=end + 1)
    elif stop == "bytes":
        text += "\n\n" + harness_texts.READ_BYTES_NOTICE.format(
            start=start, end=end, total=total, limit=limit_s, next=end + 1
        )
    elif stop == "limit":
        text += "\n\n" + harness_texts.READ_MORE_NOTICE.format(remaining=total - end, next=end + 1)
    return text, {"total_lines": total, "lines": [start, end], "truncated": stop in ("lines", "bytes")}


def _long_line_text(path: str, lineno: int, total: int, line: _Line, max_bytes: int) -> str:
    shown = cut_utf8(line.head, max_bytes)
    more = harness_texts.READ_LONG_LINE_MORE.format(next=lineno + 1) if lineno < total else ""
    notice = harness_texts.READ_LONG_LINE_NOTICE.format(
        line=lineno, size=format_size(line.size), limit=format_size(max_bytes), path=path,
        skip=len(shown) + 1, max_bytes=max_bytes, more=more,
    )
    return decode(shown) + "\n\n" + notice


def _next_line(f: IO[bytes], cap: int) -> _Line | None:
    """The next line, keeping at most `cap` bytes of it; the rest of a longer line is skipped unread."""
    head = f.readline(cap)
    if not head:
        return None
    if head.endswith(b"\n"):
        return _Line(head[:-1], len(head) - 1)
    size = len(head)
    while True:
        chunk = f.readline(_CHUNK)
        if not chunk:
            break
        if chunk.endswith(b"\n"):
            size += len(chunk) - 1
            break
        size += len(chunk)
    return _Line(head, size)


def _count_lines(f: IO[bytes]) -> int:
    """Lines from the current position to the end (a last line without newline counts)."""
    count = 0
    last = b"\n"
    while chunk := f.read(_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)
