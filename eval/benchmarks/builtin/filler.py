"""Distractor files: plausible office documents that no task needs, in every format."""

from __future__ import annotations

import random

from eval.benchmarks.builtin import words
from eval.benchmarks.builtin.writer import SuiteWriter

TOPICS = ["Quarterly review", "Team offsite plan", "Vendor onboarding", "Office relocation", "Safety inspection",
          "Training calendar", "Holiday schedule", "Printer fleet", "Parking allocation", "Customer feedback",
          "Software licences", "Archive retention", "Visitor policy", "Recruitment pipeline", "Equipment audit",
          "Budget planning", "Service desk metrics", "Energy usage", "Insurance renewal", "Sustainability goals"]


def _blocks(rng: random.Random, title: str) -> list[tuple]:
    blocks: list[tuple] = [("title", title), ("para", words.filler(rng, 2))]
    for k in range(rng.randint(1, 3)):
        blocks.append(("heading", f"{k + 1}. {rng.choice(['Background', 'Findings', 'Next steps', 'Scope', 'Summary', 'Risks'])}", 1))
        blocks.append(("para", words.filler(rng, 3)))
    if rng.random() < 0.5:
        rows = [["Item", "Owner", "Amount"]] + [[rng.choice(words.ITEMS)[0], words.person(rng), rng.randint(100, 9000)] for _ in range(rng.randint(3, 6))]
        blocks.append(("table", rows))
    return blocks


def fill(w: SuiteWriter, rng: random.Random, ws: str, folders: list[str], n: int) -> list[str]:
    """Write `n` distractor files spread over `folders` (never overwriting); returns their paths."""
    made = []
    formats = ["docx", "md", "pdf", "xlsx", "csv", "txt", "pptx", "json"]
    i = 0
    while len(made) < n:
        i += 1
        folder = folders[i % len(folders)]
        topic = rng.choice(TOPICS)
        year = rng.choice([2022, 2023, 2024])
        fmt = formats[i % len(formats)]
        rel = f"{folder}/{words.slug(topic)}_{year}_{i:03d}.{fmt}"
        if w.exists(ws, rel):
            continue
        title = f"{topic} {year}"
        if fmt in ("docx", "md", "pdf", "txt"):
            w.doc(ws, rel, _blocks(rng, title))
        elif fmt in ("xlsx", "csv"):
            rows = [["Date", "Description", "Owner", "Amount"]] + [
                [words.date(rng, year), rng.choice(words.ITEMS)[0], words.person(rng), rng.randint(50, 20000)] for _ in range(rng.randint(5, 15))
            ]
            w.sheet(ws, rel, rows)
        elif fmt == "pptx":
            w.slides(ws, rel, [(title, [words.person(rng)])] + [(f"{topic}: {h}", [words.filler(rng, 1)]) for h in ("Context", "Plan")])
        else:
            w.json(ws, rel, {"title": title, "owner": words.person(rng), "status": rng.choice(words.STATUSES), "notes": words.filler(rng, 1)})
        made.append(rel)
    return made
