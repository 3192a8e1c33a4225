"""Issue 38 item 4: eval.prepare's messages and `--help` name only the flags each preparer has
(workspace_bench said "pass --from DIR", which only officeqa takes; agentcompany's help listed
--lite, --full and --revision, which it refuses or ignores); and every message written in the
preflight's and eval.prepare's source names only flags and settings the real parsers know."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from eval.prepare.__main__ import parser
from tests.helpers.named_settings import (
    HOLE,
    compose,
    config_groups,
    option_strings,
    subparsers,
    unknown_flags,
    unknown_keys,
)

REPO = Path(__file__).resolve().parents[3]
SOURCES = [*sorted((REPO / "runners/preflight").glob("*.py")), *sorted((REPO / "eval/prepare").glob("*.py"))]


def prepare(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eval.prepare", *args], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"})


def parsers() -> dict[str, object]:
    from hydra._internal.utils import get_args_parser

    p = parser()
    hydra = get_args_parser()
    return {"eval.prepare": p, **{f"eval.prepare {k}": s for k, s in subparsers(p).items()},
            "runners.sweep": hydra, "runners.job": hydra}


@pytest.mark.parametrize("name", ["workspace_bench", "officeqa"])
def test_an_unreachable_hub_names_the_preparers_own_flag(tmp_path: Path, name: str) -> None:
    r = prepare(name, "--out", str(tmp_path / "DATA"))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert unknown_flags(r.stderr, f"eval.prepare {name}", parsers()) == [], r.stderr
    assert ("--tasks-from DIR" if name == "workspace_bench" else "--from DIR") in r.stderr, r.stderr


def test_each_preparers_help_lists_only_its_flags() -> None:
    subs = subparsers(parser())
    assert not {"--lite", "--full", "--revision"} & option_strings(subs["agentcompany"])
    for name in ("workspace_bench", "officeqa"):
        assert {"--lite", "--full", "--revision"} <= option_strings(subs[name])
    r = prepare("agentcompany", "--help")
    assert r.returncode == 0 and "--lite" not in r.stdout and "--revision" not in r.stdout and "--commit" in r.stdout, r.stdout


def messages(path: Path) -> list[str]:
    """The text of every string literal in `path` with a space in it (a message), but its docstrings;
    an f-string's values as HOLE."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, ast.Module | ast.FunctionDef | ast.ClassDef)
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    parts: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts[id(node)] = "".join(v.value if isinstance(v, ast.Constant) else HOLE for v in node.values)
            for v in node.values:
                docs.add(id(v))
    out = [text for node in ast.walk(tree) if (text := parts.get(id(node))) is not None]
    out += [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]
    return [t for t in out if " " in t]  # a message; not one word of a command's argv (`"--depth"`)


def module_of(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    if rel.parts[0] == "runners":
        return "runners.sweep"
    name = {"owncloud_archive": "agentcompany"}.get(rel.name, rel.name)  # the archive's checks are agentcompany's
    return f"eval.prepare {name}" if name in subparsers(parser()) else "eval.prepare"


@pytest.fixture(scope="module")
def configs() -> list[object]:
    """The root composed with each model and benchmark: every key a message may name is in one."""
    groups = config_groups()
    return [compose([]), *(compose([f"{g}={o}"]) for g in ("model", "benchmark") for o in groups[g])]


def bad_names(path: Path, texts: list[str], configs: list[object]) -> list[str]:
    groups, known = config_groups(), parsers()
    return [f"{path.name}: {bad}" for t in texts
            for bad in (*unknown_flags(t, module_of(path), known), *unknown_keys(t, configs, groups))]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_messages_name_only_flags_and_settings_that_exist(path: Path, configs: list[object]) -> None:
    assert bad_names(path, messages(path), configs) == []


@pytest.mark.parametrize("planted", ["pass --from DIR", "or pass benchmark.workspace=DIR",
                                     "then python -m eval.prepare agentcompany --lite --out DATA", "or judge=nobody"])
def test_a_planted_wrong_name_is_caught(planted: str, configs: list[object]) -> None:
    assert bad_names(REPO / "eval/prepare/workspace_bench.py", [planted], configs) != []


def test_a_key_the_users_config_lacks_is_caught() -> None:
    """`benchmark.workspaces` is a key of benchmark=workspace_bench, not of paper_main's root (a grid
    of three benchmarks), where Hydra refuses it: checked against the config the command composes."""
    text = "workspace_bench needs benchmark.workspaces=DIR; or pass data.workspace_bench=DATA/workspace_bench"
    assert unknown_keys(text, [compose(["experiment=paper_main"])], config_groups()) == ["benchmark.workspaces"]
