"""Harbor's own validators, from the venv `make harbor-venv` builds (Harbor needs Python >= 3.12; ours is
3.11, so it cannot share our venv). `RUNNINGTAB_HARBOR_PYTHON` names another interpreter with harbor."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECK = Path(__file__).with_name("harbor_check.py")


def harbor_python() -> Path:
    path = Path(os.environ.get("RUNNINGTAB_HARBOR_PYTHON") or REPO / ".venv-harbor" / "bin" / "python")
    if not path.is_file():
        pytest.skip(f"no Python with harbor at {path}: run `make harbor-venv` (Harbor needs Python >= 3.12 and PyPI)")
    return path


def harbor_check(tasks: list[Path] = (), trajectories: list[Path] = (), results: list[Path] = ()) -> dict[str, Any]:
    """Harbor's verdicts on our exported tasks, ATIF files and trial results (tests/helpers/harbor_check.py)."""
    request = {"tasks": [str(t) for t in tasks], "trajectories": [str(t) for t in trajectories], "results": [str(r) for r in results]}
    proc = subprocess.run([str(harbor_python()), str(CHECK)], input=json.dumps(request), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def harbor_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The `harbor` command of that venv."""
    exe = harbor_python().parent / "harbor"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=600, cwd=cwd)
