"""Issue 29 (1): every benchmark kind we load exported as Harbor tasks, checked by Harbor's own task
validation (its linter's default rules and its Task model, from the `harbor` package); the exported
verifier run from the exported code on solved and untouched workspaces; the tab's MCP server run
from the code the agent's image carries. No Docker: the images are never built here (docs/harbor.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from eval.benchmarks.builtin.loader import ensure_generated
from eval.benchmarks.native_format import load_native
from eval.harbor import harbor_texts
from eval.harbor.export_tasks import benchmark_from, export
from eval.harbor.spec import read_spec
from eval.score.records import named_judge_config
from runners.job.baselines import baseline_turns
from tests.conftest import write_native
from tests.helpers.eval_records import FIXTURES, SAMPLES
from tests.helpers.harbor_venv import harbor_check, harbor_cli

WB_SAMPLE = SAMPLES / "workspace-bench" / "lite_task_7.json"
NATIVE_TASKS = [
    {"id": "po-table", "prompt": "Make a table of the purchase orders, one row per supplier.", "workspace": "office",
     "output": "output/po_table.md", "rubrics": [{"text": "Supplier 15 has 55,000", "check": {"type": "row", "cells": ["Supplier 15", 55000]}},
                                                 {"text": "The table is clear"}]},
    {"id": "total", "prompt": "What is the total of the orders?", "workspace": "office", "answer": "55000"},
]


@pytest.fixture(scope="module")
def builtin_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_generated(tmp_path_factory.mktemp("builtin") / "seed0", 0)


def _wb_root(tmp: Path) -> Path:
    record = json.loads(WB_SAMPLE.read_text())[0]
    role = tmp / "wb" / "filesys" / "backend_developer_raw"
    (role / "meetings").mkdir(parents=True)
    (role / "meetings" / "review.md").write_text("# Sprint review\n")
    for entry in record["data_manifest"]:
        p = tmp / "wb" / entry["stored_relpath"]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"content of {entry['filename']}\n")
    return tmp / "wb"


def benchmarks(tmp: Path, builtin: Path) -> dict[str, tuple[str, list[str]]]:
    """One benchmark of each kind we load: (config name, overrides)."""
    native = write_native(tmp / "native", NATIVE_TASKS, {"office/orders/po.md": "| Supplier 15 | 55,000 |\n"})
    corpus = tmp / "corpus"
    corpus.mkdir()
    (corpus / "treasury_bulletin_1941_01.txt").write_text("National defense 1940: 2,602\n")
    tac = FIXTURES / "agentcompany"
    return {
        "builtin": ("builtin", [f"path={builtin}", "suite=workspace", "limit=1"]),
        "native": ("native", [f"path={native}"]),
        "workspace_bench": ("workspace_bench", [f"path={WB_SAMPLE}", f"workspaces={_wb_root(tmp)}"]),
        "agentcompany": ("agentcompany", [f"tasks_dir={tac / 'tasks'}", f"export_dir={tac / 'export'}", "include=[fs-drinks-count,fs-report-upload]"]),
        "officeqa": ("officeqa", [f"questions={SAMPLES / 'officeqa' / 'officeqa_pro_head5.csv'}", f"corpus={corpus}", "limit=2"]),
    }


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, builtin_root: Path) -> dict[str, dict[str, list[Path]]]:
    tmp = tmp_path_factory.mktemp("harbor")
    out = {}
    for kind, (name, overrides) in benchmarks(tmp, builtin_root).items():
        out[kind] = export(benchmark_from(name, overrides), named_judge_config("auto"), tmp / "out" / kind, "both")
    return out


@pytest.mark.slow
def test_every_kind_passes_harbors_task_validation(exported: dict[str, dict[str, list[Path]]]) -> None:
    # Harbor's lint takes ~5 ms a file of a task (a built-in task carries ~1,600): every kind without the
    # tab, and with it the built-in kind (the tab's declaration and code are the same for every kind).
    tasks = [t for kind, arms in exported.items() for arm, ts in arms.items() for t in ts if arm == "tab-off" or kind == "builtin"]
    verdicts = harbor_check(tasks=tasks)["tasks"]
    counts = {kind: {arm: len(ts) for arm, ts in arms.items()} for kind, arms in exported.items()}
    print("exported and validated:", json.dumps(counts))
    assert counts == {"builtin": {"tab-off": 1, "tab-on": 1}, "native": {"tab-off": 2, "tab-on": 2},
                      "workspace_bench": {"tab-off": 1, "tab-on": 1}, "agentcompany": {"tab-off": 2, "tab-on": 2},
                      "officeqa": {"tab-off": 2, "tab-on": 2}}
    for task in tasks:
        v = verdicts[str(task)]
        assert v["findings"] == [], (task, v["findings"])
        assert v["verifier_mode"] == "separate" and v["name"] == f"runningtab/{task.name}"
        on = task.parent.name == "tab-on"
        assert [s["name"] for s in v["mcp_servers"]] == ([harbor_texts.MCP_NAME] if on else [])
        assert {a["source"] for a in v["artifacts"]} == ({harbor_texts.WORKSPACE, harbor_texts.RECORD} if on else {harbor_texts.WORKSPACE})
        spec = read_spec(task / "tests" / "spec")
        assert v["instruction"].startswith(spec.task.prompt.rstrip())  # the benchmark's words, then where the files are
        assert "Your workspace is the folder" not in v["instruction"]  # not our harness's own wording


@pytest.mark.slow
def test_the_cli_exports_and_harbor_lint_passes(tmp_path: Path) -> None:
    native = write_native(tmp_path / "b", NATIVE_TASKS[:1], {"office/orders/po.md": "| Supplier 15 | 55,000 |\n"})
    proc = subprocess.run([sys.executable, "-m", "eval.export", "harbor", "native", f"benchmark.path={native}", "--out", str(tmp_path / "o"),
                           "--tab", "on"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "1 Harbor task(s) of native" in proc.stdout and not (tmp_path / "o" / "tab-off").exists()
    lint = harbor_cli("lint", str(tmp_path / "o" / "tab-on" / "native-po-table"))
    assert lint.returncode == 0 and "finding" not in lint.stdout.lower(), lint.stdout + lint.stderr
    again = subprocess.run([sys.executable, "-m", "eval.export", "harbor", "native", f"path={native}", "--out", str(tmp_path / "o")],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "exists: export into a new folder" in again.stderr
    bad = subprocess.run([sys.executable, "-m", "eval.export", "harbor", "native", "pth=x", "--out", str(tmp_path / "p")],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "pth" in bad.stderr.splitlines()[-1]


JUDGE_MODULES = ("rule/judge.py", "workspace_bench/rubric_judge.py", "agentcompany/judge.py", "workspace_bench/agent_judge.py",
                 "workspace_bench/protocol.py", "workspace_bench/judge_texts.py", "workspace_bench/judge_view.py",
                 "workspace_bench/verdicts.py", "client.py")


@pytest.mark.slow
def test_what_the_agent_can_see_holds_no_answer_key(exported: dict[str, dict[str, list[Path]]]) -> None:
    """The agent's image gets the workspace and the tab's server, never the spec, a judge or the
    built-in benchmark's generator (the verifier runs in a container of its own)."""
    for arms in exported.values():
        for task in arms["tab-on"]:
            env = task / "environment"
            spec = read_spec(task / "tests" / "spec")
            assert not (env / "runningtab" / "eval" / "benchmarks" / "builtin_suites").exists()
            judges = env / "runningtab" / "eval" / "judges"  # the check language and the readers the tab's config loads are there
            assert not [j for j in JUDGE_MODULES if (judges / j).exists()]
            secrets = [r.text for r in spec.task.rubrics] + [c.text for c in spec.task.checkpoints] + ([spec.task.answer] if spec.task.answer else [])
            for f in env.rglob("*"):
                if f.is_file() and f.suffix in (".py", ".yaml", ".json", ".toml"):
                    text = f.read_text(errors="replace")
                    assert not [s for s in secrets if len(s) > 12 and s in text], f
            assert "COPY" in (env / "Dockerfile").read_text() and "tests" not in (env / "Dockerfile").read_text()


def _solve(task: Path, builtin_root: Path, ws: Path) -> None:
    """What an oracle agent would do: the built-in task's reference solution, its commands run in `ws`."""
    spec = read_spec(task / "tests" / "spec")
    suite = builtin_root / "workspace"
    ref = {t.id: t for t in load_native(suite)}[spec.task.id]
    for turn in baseline_turns("reference", suite, ref):
        for call in turn.get("tool_calls") or []:
            if call["name"] == "bash":
                subprocess.run(["bash", "-c", call["arguments"]["command"]], cwd=ws, check=True, capture_output=True, timeout=120)


def _verify(task: Path, ws: Path, out: Path, record: Path | None = None) -> dict[str, float]:
    """tests/test.sh's command, run from the exported verifier code (not this checkout's)."""
    code = task / "tests" / "runningtab"
    args = [sys.executable, "-m", "eval.harbor.verify", "--spec", str(task / "tests" / "spec"), "--workspace", str(ws), "--out", str(out)]
    if record:
        args += ["--record", str(record)]
    proc = subprocess.run(args, cwd=code, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "reward.json").read_text())


@pytest.mark.slow
def test_the_exported_verifier_scores_the_final_files(exported: dict[str, dict[str, list[Path]]], builtin_root: Path, tmp_path: Path) -> None:
    task = exported["builtin"]["tab-on"][0]
    untouched = tmp_path / "ws0"
    shutil.copytree(task / "environment" / "workspace", untouched)
    assert _verify(task, untouched, tmp_path / "v0")["reward"] == 0.0
    solved = tmp_path / "ws1"
    shutil.copytree(task / "environment" / "workspace", solved)
    _solve(task, builtin_root, solved)
    record = tmp_path / "rec"
    record.mkdir()
    (record / "tab.json").write_text(json.dumps({"requirements": [], "read_log": [], "candidates": [], "events": []}))
    reward = _verify(task, solved, tmp_path / "v1", record)
    assert reward["reward"] == 1.0 and reward["pass_rate"] == 1.0 and reward["rubric_0"] == 1.0
    rec = tmp_path / "v1" / "runningtab"
    assert json.loads((rec / "job.json").read_text())["method"] == "runningtab" and (rec / "tab.json").is_file()
    assert json.loads((tmp_path / "v1" / "scores.json").read_text())["judge"] == "rule"
    assert sorted(p.name for p in (rec / "deliverable").rglob("*") if p.is_file())  # what the agent made, kept


@pytest.mark.slow
def test_an_answer_task_reads_the_answer_file(exported: dict[str, dict[str, list[Path]]], tmp_path: Path) -> None:
    task = next(t for t in exported["native"]["tab-off"] if t.name.endswith("total"))
    ws = tmp_path / "ws"
    shutil.copytree(task / "environment" / "workspace", ws)
    (ws / harbor_texts.ANSWER_FILE).write_text("The total is <FINAL_ANSWER>55000</FINAL_ANSWER>\n")
    reward = _verify(task, ws, tmp_path / "v")
    assert reward["reward"] == 1.0 and reward["acc1"] == 1.0
    (ws / harbor_texts.ANSWER_FILE).write_text("<FINAL_ANSWER>55001</FINAL_ANSWER>\n")
    assert _verify(task, ws, tmp_path / "w")["acc0"] == 0.0


@pytest.mark.slow
def test_a_hostile_workspace_cannot_reach_out_of_it(exported: dict[str, dict[str, list[Path]]], tmp_path: Path) -> None:
    task = exported["native"]["tab-on"][0]
    ws = tmp_path / "ws"
    shutil.copytree(task / "environment" / "workspace", ws)
    (ws / "output").mkdir()
    (ws / "output" / "po_table.md").symlink_to("/etc/passwd")  # a link out of the workspace is not a deliverable
    record = tmp_path / "rec"
    record.mkdir()
    (record / "tab.json").write_text("[not an object")
    reward = _verify(task, ws, tmp_path / "v", record)
    assert reward["rubric_0"] == 0.0
    rec = tmp_path / "v" / "runningtab"
    assert not (rec / "deliverable" / "output" / "po_table.md").exists() and not (rec / "tab.json").exists()


@pytest.mark.slow
def test_the_tab_server_runs_from_the_agents_image_code(exported: dict[str, dict[str, list[Path]]], tmp_path: Path) -> None:
    """The code the agent's image carries runs the MCP server as task.toml declares it (stdio, over the
    workspace, keeping tab.json in the record folder), with no module of ours from outside it."""
    task = exported["builtin"]["tab-on"][0]
    code = task / "environment" / "runningtab"
    closure = subprocess.run([sys.executable, "-m", "eval.harbor.closure"], cwd=code, capture_output=True, text=True, timeout=120)
    assert closure.returncode == 0, closure.stderr
    loaded = json.loads(closure.stdout)
    assert all((code / rel).is_file() for rel in loaded) and "tab/mcp/session.py" in loaded
    ws, record = tmp_path / "ws", tmp_path / "rec"
    shutil.copytree(task / "environment" / "workspace", ws)
    server = read_spec(task / "tests" / "spec")
    args = [a.replace(harbor_texts.WORKSPACE, str(ws)).replace(harbor_texts.RECORD, str(record)) for a in _declared_args(task)]
    first = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.suffix in (".md", ".txt", ".csv"))[0]
    seen = {}

    from mcp import Client, StdioServerParameters  # not at collection: 0.8 s of CPU

    async def session() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "tab.mcp", *args], cwd=str(code))
        with anyio.fail_after(120):
            async with Client(params, read_timeout_seconds=60) as client:
                seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
                seen["read"] = (await client.call_tool("read", {"path": first})).content[0].text

    anyio.run(session)
    assert {"read", "bash", "tab_add", "tab_finish"} <= set(seen["tools"]) and "[tab]" in seen["read"]
    tab = json.loads((record / "tab.json").read_text())
    assert [e["path"] for e in tab["read_log"]] == [first] and server.tab


def _declared_args(task: Path) -> list[str]:
    import tomllib

    doc = tomllib.loads((task / "task.toml").read_text())
    (server,) = doc["environment"]["mcp_servers"]
    return server["args"]
