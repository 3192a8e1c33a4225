"""What a task's evaluator needs of the Python that runs it, checked before it runs.

The benchmark's image is `python:3.12` with the packages its base image and the task's Dockerfile
install; here the evaluator runs on the project's own interpreter (eval/tac/sandbox.py binds its
prefix alone) with the `tac` extra. An evaluator this Python cannot compile (3.12 syntax on 3.11)
or one that imports a module it does not have would only fail at scoring, after the agent ran:
`problem(task_dir)` says so beforehand, with what to do, so that the task is refused with its
reason (bench/tac_solvable.py) and a job of it is left unscored with the same words, re-scorable
once the module is installed (eval/judges/agentcompany/judge.py). It reads the evaluator's text and
imports nothing from it.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from eval.tac.dockerfile import PIP_REASON, DockerfileError, plan
from eval.tac.sandbox import COMPAT, task_files

# The modules of the base image's /utils here (eval/tac/compat, the runner) besides a task's own *.py files.
BASE_UTILS = frozenset({Path(name).stem for name in COMPAT} | {"run_evaluator"})
_FOUND: dict[str, bool] = {}  # top-level module -> importable by the evaluators' Python (one answer a process)


def imported(tree: ast.AST) -> list[str]:
    """The top-level modules the code imports anywhere (absolute imports), in order of first use."""
    names: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(dict.fromkeys(a.name.partition(".")[0] for a in node.names))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names[node.module.partition(".")[0]] = None
    return list(names)


def importable(names: list[str]) -> dict[str, bool]:
    """Which of `names` the evaluators' Python imports as the sandbox runs it (isolated: its own
    site-packages, nothing from the working folder or PYTHONPATH); asked once a process per name."""
    unknown = [n for n in names if n not in _FOUND]
    if unknown:
        code = "import importlib.util, json, sys; print(json.dumps({n: importlib.util.find_spec(n) is not None for n in sys.argv[1:]}))"
        proc = subprocess.run([sys.executable, "-I", "-c", code, *unknown], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"could not ask {sys.executable} which modules it has: {proc.stderr.strip()[-500:]}")
        _FOUND.update(json.loads(proc.stdout))
    return {n: _FOUND[n] for n in names}


def problem(task_dir: Path) -> str | None:
    """Why the task's evaluator.py cannot run on this Python (None: it can), in one line that says
    what to do. Checked: it compiles here, and every module it or the task's own files import is
    the standard library's, the base image's /utils, the task's own, or installed."""
    evaluator = task_dir / "evaluator.py"
    mine = {p.stem: p for p in task_files(task_dir, "*.py")}  # in /utils too (ONBUILD COPY *.py)
    needed: dict[str, None] = {}
    todo, seen = [evaluator], {evaluator}
    while todo:  # the evaluator, then the task's own modules it imports (and theirs)
        path = todo.pop(0)
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except SyntaxError as e:
            version = ".".join(map(str, sys.version_info[:2]))
            return (f"its {path.name} does not compile on this Python {version} (line {e.lineno}: {e.msg}); the task's image "
                    "runs python:3.12, whose syntax it may use: run RunningTab on Python 3.12 to score it")
        except (ValueError, RecursionError, OSError) as e:  # a null byte, a nesting too deep, an unreadable file
            return f"its {path.name} cannot be read as Python ({type(e).__name__}: {e})"
        for name in imported(tree):
            needed[name] = None
            if name in mine and mine[name] not in seen:
                seen.add(mine[name])
                todo.append(mine[name])
    outside = [n for n in needed if n not in sys.stdlib_module_names and n not in BASE_UTILS and n not in mine]
    missing = [n for n, ok in importable(outside).items() if not ok]
    if not missing:
        return None
    try:
        pips = [line for line, why in plan(task_dir).skipped if why == PIP_REASON]
    except DockerfileError:
        pips = []
    installs = f" (its Dockerfile: {'; '.join(pips)})" if pips else ""
    return (f"its evaluator imports {', '.join(missing)}, which the evaluators' Python ({sys.executable}) does not have{installs}: "
            "install it there (pip install -e '.[tac]' brings what the project supports), or leave the task out")
