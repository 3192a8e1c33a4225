"""Today's tab over one recorded trajectory: the job's workspace as it was at the start, its tool
results observed again in order, its own tab calls made again (no model is called).

The tab attaches to a fresh copy of the task's workspace (as the job's did, so its record of original files is the
start's); the files the agent changed or deleted are then put in their final state, so that no read
of them is evidence (the job may have read some of them before it changed them: those reads are
not credited here — the replay errs on the side of fewer entries). Each tool result is given to the
tab exactly as the job's environment gave it (the tool's own output, before any status line), with
the context level's cap; the agent's `tab_*` calls are made again with their recorded arguments,
the read-log ids they cite translated to today's ids of the same excerpts (a citation of an
excerpt today's capture does not make is dropped); a reply without tool calls asks for the finish
check, as the loop did.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from envs.config import EnvConfig
from envs.context import CAPS
from envs.deliverable import copy_tree
from envs.harness_texts import SYSTEM_PROMPT
from envs.protocol import Observation
from envs.safeio import lstat_inside
from envs.tool_args import ToolError, check_arguments, parse_arguments
from envs.workspace import materialize
from runners.core.job_record import JobRecord
from runners.core.task import Task
from tab.config import TabConfig
from tab.tab import Tab
from tab.tools import TOOL_NAMES

_ROOT = re.compile(re.escape(SYSTEM_PROMPT.split("{root}")[0]) + r"(.+?)\. ")


def replay_tab(record: JobRecord, task: Task, config: TabConfig, scratch: Path | None = None) -> dict[str, Any]:
    """The tab record (`tab.json` shape) today's tab makes from `record`'s trajectory under `config`."""
    meta = record.meta
    messages = record.trajectory()
    before = record.plugin("tab")
    level = int((meta.config.get("agent") or {}).get("context_level", 3))
    with tempfile.TemporaryDirectory(prefix="rt-replay-", dir=scratch) as tmp:
        ws = Path(tmp) / "workspace"
        materialize(task.workspace, ws, task.stage, method="copy")
        root = agent_root(messages)
        tab = Tab(ws, config, exclude=[task.output], cap=CAPS.get(level), aliases=[root] if root else [])
        _final_state(record, ws)
        _drive(tab, messages, {e["id"]: (e["path"], e["excerpt"]) for e in (before or {}).get("read_log", [])})
        return tab.record()


def agent_root(messages: list[dict[str, Any]]) -> str | None:
    """Where the agent saw its workspace (its system prompt says; /workspace under bubblewrap)."""
    if not messages or not isinstance(messages[0].get("content"), str):
        return None
    found = _ROOT.search(messages[0]["content"])
    return found.group(1) if found else None


def _final_state(record: JobRecord, ws: Path) -> None:
    """The files the agent wrote, as it left them; those it deleted, gone."""
    caps = EnvConfig()  # the record's deliverable is within these already
    if record.deliverable_dir.is_dir():
        copy_tree(record.deliverable_dir, ws, caps.deliverable_max_files, caps.deliverable_max_bytes)
    for rel in record.result.deleted:
        st = lstat_inside(ws, rel)
        if st is not None and stat.S_ISREG(st.st_mode):
            os.unlink(ws / rel)


def _drive(tab: Tab, messages: list[dict[str, Any]], recorded: dict[str, tuple[str, str]]) -> None:
    calls: dict[str, tuple[str, str]] = {}
    schemas = {s["function"]["name"]: s["function"]["parameters"] for s in tab.tools()}
    for m in messages:
        turn = int(m.get("turn") or 0)
        if m.get("role") == "assistant":
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                calls[str(c.get("id"))] = (str(fn.get("name")), fn.get("arguments") or "")
            if not m.get("tool_calls"):
                tab.on_stop(turn)
        elif m.get("role") == "tool":
            name, raw = calls.get(str(m.get("tool_call_id")), (str(m.get("name")), ""))
            content = str(m.get("content") or "")
            own = content[: m["chars"]] if isinstance(m.get("chars"), int) else content
            try:
                args = parse_arguments(name, raw)
            except ToolError:
                args = {}
            if name in TOOL_NAMES:
                try:
                    args = check_arguments(name, schemas[name], _translate(name, args, recorded, tab)) if name in schemas else args
                except ToolError:
                    continue  # refused by the environment's schema check: it never reached the tab
                own = tab.call(name, args, turn).content
            tab.observe(Observation(tool=name, arguments=args, output=own, is_error=bool(m.get("is_error")), turn=turn))


def _translate(name: str, args: dict[str, Any], recorded: dict[str, tuple[str, str]], tab: Tab) -> dict[str, Any]:
    """The recorded read-log ids an agent's tab call cites, as today's ids of the same excerpts."""
    today = {(e.path, e.excerpt): e.id for e in tab.state.entries.values()}

    def one(entry_id: Any) -> str | None:
        key = recorded.get(_entry_id(entry_id))
        return today.get(key) if key else None

    if name == "tab_resolve" and isinstance(args.get("entries"), list):
        return {**args, "entries": [x for x in map(one, args["entries"]) if x]}
    if name == "tab_show" and "entry_id" in args:
        return {**args, "entry_id": one(args["entry_id"]) or "L0"}
    return args


def _entry_id(value: Any) -> str:
    text = str(value).strip()
    digits = text[1:] if text[:1] in "lL" else text
    return f"L{int(digits)}" if digits.isdigit() else text


def tab_config_of_method(name: str) -> TabConfig:
    """The tab settings of `conf/method/<name>.yaml` (composed by Hydra, its defaults list applied)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    from eval.config import REPO_ROOT

    conf = REPO_ROOT / "conf" / "method"
    if not (conf / f"{name}.yaml").is_file():
        raise ValueError(f"no method {name!r}; valid: {', '.join(sorted(p.stem for p in conf.glob('*.yaml')))}")
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf), version_base=None):
        node = OmegaConf.to_container(compose(config_name=name), resolve=True)
    tab = node.get("tab") if isinstance(node, dict) else None
    if not tab:
        raise ValueError(f"method {name!r} has no tab to replay")
    return TabConfig.coerce(tab)

