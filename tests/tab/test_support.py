"""Shared helpers of the tab tests (real files, the real environment), plus tests of path resolution."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from envs.config import EnvConfig
from envs.context import CAPS, cap_result
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall, ToolResult
from envs.safeio import walk_regular
from tab.capture.workspace_files import Workspace
from tab.config import TabConfig
from tab.tab import Tab

# Debian packages of the command-line tools the capture tests run for real outputs.
TOOL_PACKAGES = {"rg": "ripgrep", "tree": "tree", "docx2txt": "docx2txt", "pdftotext": "poppler-utils"}


def missing_tools(text: str) -> list[str]:
    """Tools a command text uses that are not installed here (their tests are skipped, saying which)."""
    words = set(text.replace("|", " ").replace(";", " ").split())
    return [f"{t} (apt-get install {p})" for t, p in TOOL_PACKAGES.items() if t in words and not shutil.which(t)]


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def write_docx(path: Path, paragraphs: list[str]) -> None:
    import docx

    path.parent.mkdir(parents=True, exist_ok=True)
    d = docx.Document()
    for para in paragraphs:
        d.add_paragraph(para)
    d.save(str(path))


def write_pdf(path: Path, lines: list[str]) -> None:
    from reportlab.pdfgen import canvas

    path.parent.mkdir(parents=True, exist_ok=True)
    c = canvas.Canvas(str(path))
    for i, line in enumerate(lines):
        c.drawString(72, 720 - 18 * i, line)
    c.save()


class Session:
    """The real workspace environment with a tab, driven one assistant turn at a time.

    `level` is the agent's context level: `received` keeps each turn's tool results as the model
    got them (after the cap), and `start` each file's bytes when the job started.
    """

    def __init__(
        self, root: Path, config: TabConfig | None = None, exclude: tuple[str, ...] = (), level: int = 0
    ) -> None:
        self.start = snapshot(root)
        self.level = level
        self.tab = Tab(root, config or TabConfig(), exclude=exclude, cap=CAPS.get(level))
        self.env = WorkspaceEnv(root, EnvConfig(sandbox="none"), [self.tab])
        self.turn = 0
        self._ids = 0
        self.received: dict[int, list[str]] = {}

    def step(self, *calls: tuple[str, dict[str, Any]]) -> list[ToolResult]:
        """One assistant turn with these tool calls; the results as the model would see them."""
        self.turn += 1
        results = []
        for name, args in calls:
            self._ids += 1
            result = self.env.execute(ToolCall(f"c{self._ids}", name, json.dumps(args)), self.turn)
            results.append(result)
            seen = result.content
            if self.level in CAPS and name != "tab_show":
                seen = cap_result(seen, result.appendix, CAPS[self.level])
            self.received.setdefault(self.turn, []).append(seen)
        for e in self.tab.state.entries.values():  # every episode of every test keeps the invariant
            if e.turn == self.turn:
                check_entry(e.path, e.excerpt, self.received[self.turn], self.start)
        return results

    def one(self, name: str, **args: Any) -> ToolResult:
        return self.step((name, args))[0]

    def stop(self) -> str | None:
        """The agent answers without a tool call."""
        self.turn += 1
        return self.env.on_stop(self.turn)

    def close(self) -> None:
        self.env.close()


def read_log(s: Session) -> list[dict[str, Any]]:
    """The read log as `tab.json` holds it, each entry checked by `check_entry`."""
    record = json.loads(json.dumps(s.tab.record()))
    for e in record["read_log"]:
        check_entry(e["path"], e["excerpt"], s.received[e["turn"]], s.start)
    return record["read_log"]


_NUMBERED = re.compile(r"^\s*\d+(?::|-|\t| {2,})")


def check_entry(path: str, excerpt: str, received: list[str], start: dict[str, bytes]) -> None:
    """The invariant of every capture test: the excerpt's lines occur, in order, in what the model
    received at that turn, and every non-empty line occurs in the credited file as it was at the
    job's start (a line-number prefix aside; binary files are checked through their own tests)."""
    assert any(_in_order(excerpt, r) for r in received), f"{path}: not what the model received: {excerpt!r}"
    original = start.get(path)
    assert original is not None, f"credited {path}, which was not there at the start"
    try:
        text = original.decode("utf-8")
    except UnicodeDecodeError:
        return
    for line in excerpt.split("\n"):
        bare = _NUMBERED.sub("", line, count=1).strip()
        assert not line.strip() or line.strip() in text or bare in text, f"{line!r} is not in {path}"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file's bytes under `root`, by relative path."""
    return {rel: (root / rel).read_bytes() for rel, _ in walk_regular(root)}


def _in_order(excerpt: str, received: str) -> bool:
    at = 0
    for line in excerpt.split("\n"):
        found = received.find(line, at)
        if found < 0:
            return False
        at = found + len(line)
    return True


def status_of(result: ToolResult) -> str:
    """The status line the tab appended."""
    return result.appendix


def own(result: ToolResult) -> str:
    """A result without the appended status line: the tool's (or the operation's) own reply."""
    return result.content[: result.chars]


def test_workspace_resolves_relative_absolute_and_cwd_paths(tmp_path: Path) -> None:
    write_files(tmp_path, {"a/b.md": "x", "c.md": "y"})
    ws = Workspace(tmp_path)
    assert ws.file("a/b.md") == "a/b.md"
    assert ws.file("./a/../c.md") == "c.md"
    assert ws.file(str(tmp_path / "a" / "b.md")) == "a/b.md"
    assert ws.file("b.md", "a") == "a/b.md"
    assert ws.file("../c.md", "a") == "c.md"
    assert ws.file("a") is None and ws.dir("a") == "a"  # a folder is not a file
    assert ws.file("../outside.md") is None
    assert ws.file("b.md", None) is None  # the shell left the workspace


def test_workspace_excludes_paths_and_the_harness_folder(tmp_path: Path) -> None:
    write_files(tmp_path, {"output/guide.md": "x", "src.md": "y", ".runningtab/bash-output/1.txt": "z"})
    ws = Workspace(tmp_path, exclude=["output/"])
    assert ws.file("output/guide.md") is None
    assert ws.file(".runningtab/bash-output/1.txt") is None
    assert ws.file("src.md") == "src.md"


def test_workspace_sees_files_created_after_a_refresh(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    assert ws.file("new.md") is None
    (tmp_path / "new.md").write_text("now")
    assert ws.file("new.md") is None  # cached within one observation
    ws.refresh()
    assert ws.file("new.md") == "new.md"
    assert os.path.isabs(ws.root)
