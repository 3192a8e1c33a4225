"""Writes one suite in the native format: workspaces, tasks.jsonl and solutions/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.benchmarks.builtin import office
from eval.benchmarks.builtin.office import Block
from eval.benchmarks.native_format import TASKS_FILE, WORKSPACES, task_to_json


class SuiteWriter:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.tasks: list[dict[str, Any]] = []
        self.solutions: dict[str, list[dict[str, Any]]] = {}

    def path(self, ws: str, rel: str) -> Path:
        p = self.root / WORKSPACES / ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def exists(self, ws: str, rel: str) -> bool:
        return (self.root / WORKSPACES / ws / rel).exists()

    def text(self, ws: str, rel: str, content: str) -> str:
        self.path(ws, rel).write_text(content if content.endswith("\n") else content + "\n", encoding="utf-8")
        return rel

    def doc(self, ws: str, rel: str, blocks: list[Block]) -> str:
        """A document in the format its suffix names (.docx, .pdf, .md/.txt)."""
        p = self.path(ws, rel)
        suffix = p.suffix.lower()
        if suffix == ".docx":
            office.write_docx(p, blocks)
        elif suffix == ".pdf":
            office.write_pdf(p, blocks)
        elif suffix in (".md", ".txt"):
            self.text(ws, rel, office.markdown(blocks))
        else:
            raise ValueError(f"no document writer for {rel}")
        return rel

    def sheet(self, ws: str, rel: str, rows: list[list[Any]], name: str = "Sheet1") -> str:
        """A table as .xlsx or .csv by suffix."""
        p = self.path(ws, rel)
        if p.suffix.lower() == ".xlsx":
            office.write_xlsx(p, [(name, rows)])
        elif p.suffix.lower() == ".csv":
            p.write_text(office.csv_text(rows), encoding="utf-8")
        else:
            raise ValueError(f"no table writer for {rel}")
        return rel

    def slides(self, ws: str, rel: str, slides: list[tuple[str, list[str]]]) -> str:
        office.write_pptx(self.path(ws, rel), slides)
        return rel

    def json(self, ws: str, rel: str, obj: Any) -> str:
        self.path(ws, rel).write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return rel

    def task(self, solution: list[dict[str, Any]], **fields: Any) -> None:
        """Register a task with its reference solution (scripted-model turns).

        The closing turn (no tool calls) is written twice: methods with a stop hook (the tab's
        finish check, self-refine) send one message at the first stop, and the solution answers
        it with the same final message; without a stop hook the run ends at the first one.
        """
        if any(t["id"] == fields["id"] for t in self.tasks):
            raise ValueError(f"duplicate task id {fields['id']}")
        if solution[-1].get("tool_calls"):
            raise ValueError(f"task {fields['id']}: a solution must end with a turn without tool calls")
        self.tasks.append(fields)
        self.solutions[fields["id"]] = solution + [solution[-1]]

    def close(self) -> None:
        (self.root / TASKS_FILE).write_text("".join(task_to_json(t) + "\n" for t in self.tasks), encoding="utf-8")
        sol = self.root / "solutions"
        sol.mkdir(parents=True, exist_ok=True)
        for tid, turns in self.solutions.items():
            (sol / f"{tid}.jsonl").write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in turns), encoding="utf-8")
