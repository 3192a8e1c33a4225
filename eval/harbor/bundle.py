"""The project's code an exported task's images carry, and the packages they install.

The agent's image gets only what the tab's MCP server imports (`tab_files`: measured by starting the
server's code in a child process, `closure.py`), never the built-in benchmark's generator or a
judge: the agent can read everything in its image. The verifier's image, which the agent never
sees, gets the whole project. Both install their packages pinned by our `constraints.txt`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from eval.config import REPO_ROOT

PACKAGES = ("runners", "envs", "tab", "eval", "slurm")  # the project's Python packages (pyproject.toml)
CONSTRAINTS = "constraints.txt"
# What the tab's MCP server imports from PyPI (the rest follows from these, pinned by constraints.txt).
TAB_REQUIREMENTS = ("mcp", "hydra-core", "omegaconf", "PyYAML", "httpx", "rich")
# What our judges import (office files as text; the LLM judge's client), and the packages
# TheAgentCompany's evaluators import (pyproject's `tac` extra).
VERIFIER_REQUIREMENTS = (*TAB_REQUIREMENTS, "python-docx", "openpyxl", "pypdf", "python-pptx")
TAC_REQUIREMENTS = ("PyPDF2", "odfpy", "scikit-learn", "pandas")


@lru_cache(maxsize=1)
def tab_files() -> tuple[str, ...]:
    """Repo-relative files of the project's modules the tab's MCP server loads, with their packages'
    `__init__.py` (measured once per process: see closure.py)."""
    proc = subprocess.run([sys.executable, "-m", "eval.harbor.closure"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    if proc.returncode != 0:
        raise RuntimeError(f"could not list the tab server's modules: {proc.stderr.strip()[-2000:]}")
    return tuple(json.loads(proc.stdout))


def _copy(rels: list[str], dest: Path) -> None:
    for rel in rels:
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO_ROOT / rel, out)


def _project_files() -> list[str]:
    """Every source file of the project's packages and its Hydra configs (no caches, no data)."""
    out = []
    for top in (*PACKAGES, "conf"):
        for dirpath, dirs, files in os.walk(REPO_ROOT / top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            out.extend(os.path.relpath(os.path.join(dirpath, f), REPO_ROOT) for f in sorted(files) if f.endswith((".py", ".yaml")))
    return out


def conf_files() -> list[str]:
    return [r for r in _project_files() if r.startswith("conf/")]


def write_tab_bundle(dest: Path) -> None:
    """The tab's server code, its configs and the constraints, into `dest` (the agent's image)."""
    _copy([*tab_files(), *conf_files(), CONSTRAINTS], dest)


def write_verifier_bundle(dest: Path) -> None:
    """The whole project's code, configs and constraints, into `dest` (the verifier's image)."""
    _copy([*_project_files(), CONSTRAINTS], dest)
