"""The capture kept to what the organization's files say: reads of workspace files unchanged since
the job started, as the model received them. The tab's read log and every job's shown log
(`tab/shown.py`) are made by it, so both follow one rule of what an agent was shown."""

from __future__ import annotations

import weakref
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
    `urls`: (URL prefix, workspace folder) a server in the sandbox serves (a fetch is a read);
    `listings=False`: reads only, no listed files (`Capture`)."""

    def __init__(
        self, root: str | Path, exclude: Iterable[str] = (), cap: int | None = None, aliases: Iterable[str] = (),
        urls: Iterable[tuple[str, str]] = (), listings: bool = True,
    ) -> None:
        self.originals = Originals(root, frozenset({HARNESS_DIR}))
        self.capture = Capture(Workspace(root, exclude, self.originals, aliases, urls), listings)
        self.cap = cap
        self._last: tuple[weakref.ref[Observation], Captured] | None = None  # not holding the output on

    def __call__(self, obs: Observation) -> Captured:
        """What `obs` showed; its reads are of original files only (the agent's own writing, created or
        changed this episode, is not what the organization's files say). The same observation asked
        again (the tab and the shown log share one capture) is answered from the first time."""
        if self._last is not None and self._last[0]() is obs:
            return self._last[1]
        captured = self._capture(obs)
        self._last = (weakref.ref(obs), captured)
        return captured

    def _capture(self, obs: Observation) -> Captured:
        if self.cap is not None and len(obs.output) > self.cap:
            obs = replace(obs, output=obs.output[: self.cap])
        captured = self.capture(obs)
        captured.reads = [(path, excerpt) for path, excerpt in captured.reads if self.originals.original(path)]
        return captured
