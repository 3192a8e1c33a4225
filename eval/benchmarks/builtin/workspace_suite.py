"""The *workspace* suite (like Workspace-Bench): two role workspaces with a few hundred files in
nested folders (policies as docx, purchase orders as xlsx/csv, minutes as md, reports as pdf,
slides as pptx, profiles as json), most of them distractors, and ten tasks whose deliverables
draw on 3–10 of the files, each with 8–20 machine-checkable rubrics."""

from __future__ import annotations

import random

from eval.benchmarks.builtin import filler, ws_fin, ws_ops
from eval.benchmarks.builtin.writer import SuiteWriter

OPS_FOLDERS = ["notes", "slides", "templates", "procurement/suppliers", "policies/hr", "policies/it", "policies/security",
               "docs/handbooks", "reports/misc", "archive/old_drafts", "meetings/2025", "facilities/floor_plans"]
FIN_FOLDERS = ["notes", "correspondence", "reports/monthly", "reports/audit", "archive", "budgets/working_files",
               "expenses/receipts", "treasury", "tax", "presentations/drafts"]


def build(w: SuiteWriter, rng: random.Random) -> None:
    for make in ws_ops.TASKS:
        make(w, random.Random(f"{rng.random()}-{make.__name__}"))
    for make in ws_fin.TASKS:
        make(w, random.Random(f"{rng.random()}-{make.__name__}"))
    filler.fill(w, rng, ws_ops.WS, OPS_FOLDERS, 100)
    filler.fill(w, rng, ws_fin.WS, FIN_FOLDERS, 90)
