"""The capture kept to what the organization's files say: reads of workspace files unchanged since
the job started, as the model received them. The tab's read log and every job's shown log
(`tab/shown.py`) are made by it, so both follow one rule of what an agent was shown."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from envs.protocol import Observation
from tab.capture.observe import Capture, Captured
from tab.capture.originals import Originals
from tab.capture.workspace_files import HARNESS_DIR, Workspace


class FileReads:
    """Capture over one workspace. `exclude`: workspace paths never recorded (the deliverable's);
    `cap`: the context level's cap on a tool result (None: none), so that excerpts hold what the
    model got; `aliases`: other absolute paths of the root (where the agent sees it in its sandbox);
    `urls`: (URL prefix, workspace folder) a server in the sandbox serves (a fetch is a read)."""

    def __init__(
        self, root: str | Path, exclude: Iterable[str] = (), cap: int | None = None, aliases: Iterable[str] = (),
        urls: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.originals = Originals(root, frozenset({HARNESS_DIR}))
        self.capture = Capture(Workspace(root, exclude, self.originals, aliases, urls))
        self.cap = cap

    def __call__(self, obs: Observation) -> Captured:
        """What `obs` showed; its reads are of original files only (the agent's own writing, created or
        changed this episode, is not what the organization's files say)."""
        if self.cap is not None and len(obs.output) > self.cap:
            obs = replace(obs, output=obs.output[: self.cap])
        captured = self.capture(obs)
        captured.reads = [(path, excerpt) for path, excerpt in captured.reads if self.originals.original(path)]
        return captured
