"""The one reader of /proc's process facts (`envs/procfs.py`): a command name with spaces and
parentheses does not shift the fields; a process that is gone reads as nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from envs.procfs import descendants, parent, processes_of, start_time


def test_a_process_named_to_mislead_is_read_past_its_name(tmp_path: Path) -> None:
    odd = tmp_path / "x) S 1 1 (y"
    shutil.copy(sys.executable, odd)
    proc = subprocess.Popen([str(odd), "-c", "import subprocess, sys; subprocess.run(['sleep', '30'])"])
    try:
        for _ in range(100):
            kids = descendants([proc.pid])
            if len(kids) > 1:
                break
            subprocess.run(["sleep", "0.05"])
        assert parent(proc.pid) == os.getpid() and len(kids) == 2 and parent(kids[1]) == proc.pid
        assert start_time(proc.pid) is not None and start_time(proc.pid) >= start_time(os.getpid())
        assert processes_of(os.getuid()) >= 3
    finally:
        proc.kill()
        proc.wait()
    assert parent(proc.pid) is None and start_time(proc.pid) is None
