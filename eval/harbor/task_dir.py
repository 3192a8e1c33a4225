"""One Harbor task per task of a benchmark we load (the layout Harbor's `harbor task init` makes):

    <task>/instruction.md        the benchmark's task text (harbor_texts.py adds where the files are)
    <task>/task.toml             timeouts, resources, the verifier's network and key, the tab's MCP server
    <task>/environment/          the agent's image: the workspace at /workspace (and the tab's server)
    <task>/tests/                the verifier's image (separate from the agent's): our judge, the spec
                                 and the original workspace; test.sh writes /logs/verifier/reward.json

The verifier runs in its own container (Harbor's `environment_mode = "separate"`): rubrics, answers
and evaluators never enter the agent's image. Harbor copies the declared artifacts (the final
workspace; the tab's record) from the agent's container into the verifier's, at the same paths.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.workspace import check_rel
from eval.harbor import bundle, harbor_texts
from eval.harbor.spec import TAC_DIR, WORKSPACE_DIR, Spec, write_spec
from eval.harbor.toml_out import dumps

BASE_IMAGE = "python:3.11-slim-bookworm"  # the Python our constraints.txt pins for
TAB_DIR = "runningtab"  # the project's code, beside each Dockerfile


@dataclass(frozen=True)
class Resources:
    """What task.toml asks of the sandbox: the agent's time limit (the paper's 1 hour by default),
    the verifier's, the image build's, and the container's CPUs, memory and disk."""

    agent_timeout_s: float = 3600.0
    verifier_timeout_s: float = 900.0
    build_timeout_s: float = 1800.0
    cpus: int = 2
    memory_mb: int = 4096
    storage_mb: int = 10240


def task_name(benchmark: str, task_id: str) -> str:
    """A Harbor-valid name (`org/name`, letters, digits, `._-`) that still reads as the task's id; a
    digest of the id keeps two ids that clean to one name apart."""
    clean = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{benchmark}-{task_id}").strip("-._") or "task"
    if clean != f"{benchmark}-{task_id}":
        clean = f"{clean[:80]}-{hashlib.sha256(task_id.encode()).hexdigest()[:8]}"
    return clean[:120]


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link where the file system allows it (an exported corpus costs no space), else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def copy_workspace(spec: Spec, dest: Path) -> None:
    """The task's workspace as the agent starts it: the folder plus the staged inputs (links followed).
    A staged input's name is a plain workspace-relative path (ValueError otherwise): one named
    `../../tests/test.sh` would land on the exported task's own files, or outside the export."""
    task = spec.task
    for rel in task.stage:
        try:
            check_rel(rel)
        except ValueError as e:
            raise ValueError(f"task {task.id!r} of {spec.benchmark}: staged input {e}; fix the benchmark's data") from None
    if task.workspace.is_dir():
        shutil.copytree(task.workspace, dest, copy_function=_link_or_copy, dirs_exist_ok=True)
    dest.mkdir(parents=True, exist_ok=True)
    for rel, src in task.stage.items():
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists():
            out.unlink()
        _link_or_copy(str(src), str(out))


def mcp_server(spec: Spec) -> dict[str, Any]:
    """The tab's MCP server as task.toml declares it: stdio, started by the agent in its container,
    over the same /workspace, keeping tab.json in the record folder (an artifact the verifier and the
    import collect). Bash runs without bubblewrap: the container is the sandbox."""
    args = ["--workspace", harbor_texts.WORKSPACE, "--record", harbor_texts.RECORD, "--exclude", spec.task.output,
            f"method={spec.tab_method}", "env.sandbox=none"]
    return {"name": harbor_texts.MCP_NAME, "transport": "stdio", "command": harbor_texts.MCP_COMMAND, "args": args}


def task_toml(spec: Spec, name: str, res: Resources, judge_model_key: str | None) -> str:
    """task.toml, in Harbor's schema 1.4 (checked by `harbor lint` in tests/eval/harbor/test_export.py)."""
    artifacts = [{"source": harbor_texts.WORKSPACE, "destination": "workspace"}]
    if spec.tab:
        artifacts.append({"source": harbor_texts.RECORD, "destination": "runningtab"})
    verifier: dict[str, Any] = {"timeout_sec": res.verifier_timeout_s, "environment_mode": "separate",
                                "network_mode": "public" if judge_model_key else "no-network"}
    if judge_model_key:
        verifier["env"] = {judge_model_key: "${" + judge_model_key + "}"}  # Harbor fills it from the host's environment
    environment: dict[str, Any] = {
        "build_timeout_sec": res.build_timeout_s, "cpus": res.cpus, "memory_mb": res.memory_mb,
        "storage_mb": res.storage_mb, "workdir": harbor_texts.WORKSPACE,
    }
    if spec.tab:
        environment["mcp_servers"] = [mcp_server(spec)]
    doc = {
        "schema_version": "1.4",
        "artifacts": artifacts,
        "task": {"name": f"runningtab/{name}", "description": f"{spec.benchmark} task {spec.task.id}" + (" with the tab" if spec.tab else ""),
                 "keywords": ["runningtab", spec.benchmark, "tab-on" if spec.tab else "tab-off"]},
        "metadata": {"runningtab": {"benchmark": spec.benchmark, "task_id": spec.task.id, "tab": spec.tab, "method": spec.method,
                                    "judge": spec.judge_name}},
        "verifier": verifier,
        "agent": {"timeout_sec": res.agent_timeout_s},
        "environment": environment,
    }
    return dumps(doc, top_inline=("artifacts",))


def agent_dockerfile(spec: Spec) -> str:
    lines = [f"FROM {BASE_IMAGE}", ""]
    if spec.tab:
        reqs = " ".join(bundle.TAB_REQUIREMENTS)
        lines += [
            "# The tab's MCP server (python -m tab.mcp, docs/mcp.md), its packages pinned by our constraints.",
            f"COPY {TAB_DIR}/ {harbor_texts.CODE}/",
            f"RUN pip install --no-cache-dir -c {harbor_texts.CODE}/{bundle.CONSTRAINTS} {reqs}",
            f"RUN printf '#!/bin/sh\\ncd {harbor_texts.CODE} && exec python -m tab.mcp \"$@\"\\n' > {harbor_texts.MCP_COMMAND} && chmod 755 {harbor_texts.MCP_COMMAND}",
            f"RUN mkdir -p {harbor_texts.RECORD}",
            "",
        ]
    lines += ["# The task's files, as the agent starts them.", f"COPY {WORKSPACE_DIR}/ {harbor_texts.WORKSPACE}/", f"WORKDIR {harbor_texts.WORKSPACE}", ""]
    return "\n".join(lines)


def verifier_dockerfile(spec: Spec) -> str:
    tac = bool(spec.task.extra.get("evaluator"))
    reqs = " ".join((*bundle.VERIFIER_REQUIREMENTS, *(bundle.TAC_REQUIREMENTS if tac else ())))
    lines = [f"FROM {BASE_IMAGE}", ""]
    if tac:
        lines += ["# TheAgentCompany's evaluator runs under bubblewrap (eval/tac/sandbox.py).",
                  "RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/*", ""]
    lines += [
        "# Our judge (the whole project's code) and its packages, pinned by our constraints.",
        f"COPY {TAB_DIR}/{bundle.CONSTRAINTS} /tmp/{bundle.CONSTRAINTS}",
        f"RUN pip install --no-cache-dir -c /tmp/{bundle.CONSTRAINTS} {reqs}",
        "# test.sh, the project's code, the spec (task.json) and the original workspace.",
        "COPY . /tests/",
        "WORKDIR /tests",
        "",
    ]
    return "\n".join(lines)


TEST_SH = f"""#!/bin/bash
# RunningTab's verifier: our own judge for this task, on the files the agent left in {harbor_texts.WORKSPACE}
# (Harbor copies them into this container); writes {harbor_texts.VERIFIER_OUT}/reward.json and scores.json.
cd /tests/{TAB_DIR} && exec python -m eval.harbor.verify --spec {harbor_texts.SPEC} --workspace {harbor_texts.WORKSPACE} \\
    --record {harbor_texts.RECORD} --out {harbor_texts.VERIFIER_OUT}
"""


def write_task(spec: Spec, dest: Path, res: Resources, judge_model_key: str | None) -> Path:
    """Write one Harbor task for `spec` into `dest` (which must not exist); returns `dest`."""
    name = dest.name
    env_dir, tests = dest / "environment", dest / "tests"
    env_dir.mkdir(parents=True)
    copy_workspace(spec, env_dir / WORKSPACE_DIR)
    (env_dir / "Dockerfile").write_text(agent_dockerfile(spec), encoding="utf-8")
    if spec.tab:
        bundle.write_tab_bundle(env_dir / TAB_DIR)
    spec_dir = tests / "spec"
    spec_dir.mkdir(parents=True)
    copy_workspace(spec, spec_dir / WORKSPACE_DIR)
    if spec.task.extra.get("task_dir"):
        shutil.copytree(spec.task.extra["task_dir"], spec_dir / TAC_DIR, ignore=shutil.ignore_patterns("__pycache__"))
    write_spec(spec_dir, spec)
    bundle.write_verifier_bundle(tests / TAB_DIR)
    (tests / "Dockerfile").write_text(verifier_dockerfile(spec), encoding="utf-8")
    (tests / "test.sh").write_text(TEST_SH, encoding="utf-8")
    os.chmod(tests / "test.sh", 0o755)
    (dest / "instruction.md").write_text(harbor_texts.instruction(spec.task.prompt, spec.task.kind, spec.task.output), encoding="utf-8")
    (dest / "task.toml").write_text(task_toml(spec, name, res, judge_model_key), encoding="utf-8")
    return dest
