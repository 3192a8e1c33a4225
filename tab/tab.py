"""The environment-side tab as an `EnvPlugin` (SPEC section 3): the environment runs the same without it.

    tab = Tab(workspace_root, TabConfig(review=False))   # an ablation is a switch, not a fork

The agent writes only requirements and resolutions; the environment captures reads and listings
from every observation, appends the status line, answers the operations, sends the finish check
once, and removes all of it from what judges read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from envs.protocol import Observation, ToolResult
from tab.capture.file_reads import FileReads
from tab.config import TabConfig
from tab.evaluator import evaluator_view
from tab.finish_check import finish_check_message
from tab.ops import Operations
from tab.review import ExcerptIndex
from tab.state import TabState
from tab.status import status_line
from tab.tab_texts import Texts
from tab.tools import TOOL_NAMES, offered, schemas, system_block


class Tab:
    """One job's tab. `exclude` names workspace paths never recorded (e.g. the deliverable's folder);
    `cap` is the context level's cap on a tool result (envs/context.py CAPS), None for no cap; `aliases`
    are other absolute paths of the root (where the agent sees it: envs.sandbox.agent_root); `urls`
    (URL prefix, workspace folder) say which workspace files a server in the sandbox serves."""

    name = "tab"

    def __init__(
        self,
        root: str | Path,
        config: TabConfig | Mapping[str, Any] | None = None,
        exclude: Iterable[str] = (),
        cap: int | None = None,
        aliases: Iterable[str] = (),
        urls: Iterable[tuple[str, str]] = (),
        reads: FileReads | None = None,
    ) -> None:
        """`reads`: a capture of the same workspace with the same settings (and listings) to share."""
        self.config = TabConfig.coerce(config)
        self.texts = Texts(self.config.texts)
        self.state = TabState()
        self.index = ExcerptIndex()
        self.reads = reads or FileReads(root, exclude, cap, aliases, urls)
        self.ops = Operations(self.state, self.index, self.config, self.texts)
        self._handlers = {"tab_add": self.ops.add, "tab_review": self.ops.review,
                          "tab_resolve": self.ops.resolve, "tab_show": self.ops.show}
        self._offered = offered(self.config)
        self._stop_messages: list[str] = []

    def system_prompt(self) -> str:
        return system_block(self.config, self.texts)

    def tools(self) -> list[dict[str, Any]]:
        return schemas(self.config, self.texts)

    def call(self, name: str, arguments: dict[str, Any], turn: int) -> ToolResult:
        if name not in self._offered:
            if name in TOOL_NAMES:
                return ToolResult(self.texts.get("error_unavailable", name=name), is_error=True)
            names = ", ".join(self._offered)
            return ToolResult(self.texts.get("error_unknown_tool", name=name, names=names), is_error=True)
        return self._handlers[name](arguments or {}, turn)

    def observe(self, obs: Observation) -> str:
        if self.config.capture and obs.tool not in TOOL_NAMES:
            captured = self.reads(obs)
            for path, excerpt in captured.reads:
                entry = self.state.add_read(path, captured.command, obs.turn, excerpt)
                if entry is not None:
                    self.index.add(entry)
            self.state.add_unattributed(captured.unattributed, captured.command, obs.turn)
            known = self.state.files.union(self.state.candidates)  # checked once, when first listed
            listed = [p for p in captured.listed if p not in known and self.reads.originals.original(p)]
            self.state.add_candidates(listed, captured.command, obs.turn)
        return status_line(self.state, self.state.take_changes(), self.config, self.texts)

    def on_stop(self, turn: int) -> str | None:
        if not self.config.finish_check or self._stop_messages:
            return None
        case, message = finish_check_message(self.ops, turn)
        self.state.event(turn, "finish_check", case=case, text=message)
        self._stop_messages.append(message)
        return message

    def record(self) -> dict[str, Any]:
        return self.state.to_record(self.config.settings())

    def evaluator_view(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return evaluator_view(
            messages,
            status_prefix=self.texts.get("status_prefix"),
            stop_messages=self._stop_messages,
            system_block=self.system_prompt(),
        )
