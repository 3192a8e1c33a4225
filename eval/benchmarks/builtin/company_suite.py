"""The *company* suite (like TheAgentCompany's file-server tasks): one company file server
(`fileserver/Documents/…`) shared by ten tasks with checkpoints, each worth points and scored by
a deterministic check over the output files; some tasks use the benchmark's scoring strategies."""

from __future__ import annotations

import random

from eval.benchmarks.builtin import filler
from eval.benchmarks.builtin.company_tasks import TASKS, WS
from eval.benchmarks.builtin.writer import SuiteWriter

FOLDERS = ["Documents/Admin", "Documents/Financials", "Documents/HR", "Documents/Engineering", "Documents/Marketing",
           "Documents/Sales", "Documents/Legal", "Documents/Admin/Archive", "Documents/Financials/Reports",
           "Documents/HR/Policies", "Documents/Engineering/Design", "Templates"]


def build(w: SuiteWriter, rng: random.Random) -> None:
    for make in TASKS:
        make(w, random.Random(f"{rng.random()}-{make.__name__}"))
    filler.fill(w, rng, WS, FOLDERS, 72)
