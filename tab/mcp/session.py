"""One workspace's environment with the tab, driven one MCP request at a time.

MCP has no model turns: each tool call (and each finish check) is one turn of the tab's record.
Requests may arrive concurrently over HTTP; they are served one at a time, in arrival order, so
the tab sees the same sequence of observations an agent loop would give it.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall, ToolResult
from envs.safeio import write_json
from tab.config import TabConfig
from tab.tab import Tab


class TabSession:
    """The one `WorkspaceEnv` (with its `Tab`) an MCP server dispatches every call to.

    `record`, when given, is a folder that holds each plugin's record (`tab.json`), rewritten
    atomically after every call with the job's own writer (`envs.safeio.write_json`).
    """

    def __init__(
        self,
        workspace: Path,
        env_config: EnvConfig,
        tab_config: TabConfig,
        exclude: Iterable[str] = (),
        record: Path | None = None,
    ) -> None:
        self.tab = Tab(workspace, tab_config, exclude=exclude)
        # The foreign agent knows the workspace by its host path: its wrapped bash sees it there too.
        self.env = WorkspaceEnv(workspace, dataclasses.replace(env_config, agent_root=None), [self.tab])
        self.record_dir = record
        self.turn = 0
        self._lock = threading.Lock()
        self.write_record()

    def tools(self) -> list[dict[str, Any]]:
        """The environment's tool schemas (OpenAI function format), the loop's own."""
        return self.env.tools()

    def instructions(self) -> str:
        """The tab's block of the system prompt (the host harness keeps its own base prompt)."""
        return self.tab.system_prompt()

    def call(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """Run one tool call through the environment, as the loop does, and update the record."""
        with self._lock:
            self.turn += 1
            call = ToolCall(id=f"mcp-{self.turn}", name=name, arguments=json.dumps(arguments or {}))
            result = self.env.execute(call, self.turn)
            self.write_record()
            return result

    def finish(self) -> str | None:
        """The host harness is about to stop: the environment's stop hook (the tab's finish check).

        None means nothing more is asked and the session may end, as in the loop.
        """
        with self._lock:
            self.turn += 1
            message = self.env.on_stop(self.turn)
            self.write_record()
            return message

    def write_record(self) -> None:
        if self.record_dir is None:
            return
        for plugin in self.env.plugins:
            record = plugin.record()
            if record is not None:
                write_json(self.record_dir / f"{plugin.name}.json", record)

    def close(self) -> None:
        with self._lock:
            self.write_record()
            self.env.close()
