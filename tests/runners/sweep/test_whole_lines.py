"""The driver's lines on stderr are written whole. Ray starts in a thread of the driver and logs its
own lines to stderr meanwhile ("Using address ... set in the environment variable RAY_ADDRESS"):
`print(line, file=sys.stderr)` writes the line and its newline in two writes, and a Ray line written
between them joined the sweep's start line to it (`... -> <sweep dir>2026-12-05 ... INFO ...`), so
the line naming the sweep's folder was lost to a reader of the log (seen in a full run of the suite)."""

from __future__ import annotations

import ast
import sys
import threading
from pathlib import Path

import pytest

from runners.sweep.stopping import say

DRIVER = Path(__file__).resolve().parents[3] / "runners" / "sweep" / "driver.py"


def _prints_to_stderr(path: Path) -> list[int]:
    """Lines of `print(..., file=sys.stderr)` calls in `path`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            if any(k.arg == "file" and ast.unparse(k.value) == "sys.stderr" for k in node.keywords):
                out.append(node.lineno)
    return out


def test_the_driver_writes_its_lines_to_stderr_whole() -> None:
    assert _prints_to_stderr(DRIVER) == [], "use runners.sweep.stopping.say: one write per line"


def test_a_line_said_while_another_thread_logs_stays_whole(capfd: pytest.CaptureFixture[str]) -> None:
    """`say` keeps every line whole under another thread's writes (`print` split some of 3,000 here)."""
    stop = threading.Event()

    def ray_like() -> None:
        while not stop.is_set():
            sys.stderr.write("INFO other thread\n")

    other = threading.Thread(target=ray_like)
    other.start()
    try:
        for i in range(1000):
            say(f"sweep s: line {i} -> /dir")
    finally:
        stop.set()
        other.join()
    mine = [line for line in capfd.readouterr().err.splitlines() if line.startswith("sweep s:")]
    assert len(mine) == 1000 and all(line.endswith("-> /dir") for line in mine)
