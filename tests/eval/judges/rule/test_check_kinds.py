"""The check language of native rubrics, and text/table/heading extraction from office files."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from eval.benchmarks.builtin import office
from eval.config import ExtractLimits
from eval.judges.extract.read import extract_file
from eval.judges.rule import bulk
from eval.judges.rule.check_kinds import CheckError, Context, run_check, validate
from eval.judges.rule.final_files import FinalFiles
from eval.judges.rule.matching import normalize
from runners.core.job_record import JobRecord
from runners.core.task import Task
from tests.helpers.eval_records import make_job

REPORT = """# Manual

## Chapter 1 General Provisions
### Article 1: Purpose
Applies to **all** offices. Award of ¥2,000 yuan; set to 26 °C.

## Chapter 2 Water
### Article 2 Metering

| Supplier | PO Number | Amount (CNY) |
|---|---|---|
| Cedar Trading Co., Ltd. | PO-2024-002 | 55,000 |
| Harbor Logistics | PO-2024-006 | 1,250.50 |
"""


@pytest.fixture
def ctx(tmp_path: Path) -> Context:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "original.md").write_text("original text\n")
    (ws / "docs" / "gone.md").write_text("will be deleted\n")
    office.write_docx(ws / "docs" / "policy.docx", [("title", "Policy"), ("heading", "Chapter 1 Scope", 1), ("para", "Limit 6 litres per minute."),
                                                     ("table", [["Item", "Cost"], ["Desk", "760"]])])
    task = Task(id="t", prompt="p", workspace=ws, output="output/")
    xlsx = tmp_path / "x.xlsx"
    office.write_xlsx(xlsx, [("S", [["Name", "Hours"], ["Atlas", 41.5], ["Beacon", 12]])])
    job = make_job(
        tmp_path / "job",
        deliverable={"output/manual.md": REPORT, "output/hours.xlsx": xlsx.read_bytes(), "archive/original.md": "original text\n", "archive/other.md": "x"},
        final_answer="Total is <FINAL_ANSWER>2,602</FINAL_ANSWER>",
        deleted=["docs/gone.md"],
    )
    return Context(FinalFiles(task, JobRecord(job)), task.output, "Total is <FINAL_ANSWER>2,602</FINAL_ANSWER>")


def check(ctx: Context, **c) -> bool:
    return run_check(ctx, c).passed


def test_normalize_ignores_markup_punctuation_and_thousands() -> None:
    assert normalize("**Article 4:** Water Metering.") == "article 4 water metering"
    assert normalize("¥2,000 yuan at 26°C") == "2000 yuan at 26 c"


def test_contains_absent_and_numbers(ctx: Context) -> None:
    f = "output/manual.md"
    assert check(ctx, type="contains", file=f, values=["Article 1 Purpose", "2,000 yuan", "26°C", 55000, "¥55,000"])
    assert not check(ctx, type="contains", file=f, values=["Article 1 Purpose", "Article 3"])
    assert not check(ctx, type="contains", file=f, values=["Article 1 P"])  # whole words only
    assert check(ctx, type="contains", file=f, values=[1250.5])
    assert check(ctx, type="contains", file=f, values=[1251], tolerance=0.001) and not check(ctx, type="contains", file=f, values=[1251])
    assert check(ctx, type="absent", file=f, values=["Article 3", 9999])
    assert not check(ctx, type="absent", file=f, values=["water"])
    assert not check(ctx, type="absent", file="output/missing.md", values=["x"])  # a missing file fails


def test_default_file_is_the_output_folder(ctx: Context) -> None:
    assert check(ctx, type="contains", values=["Article 2 Metering", "Beacon"])  # pooled over output/
    assert not check(ctx, type="contains", values=["original text"])


def test_order_and_headings(ctx: Context) -> None:
    f = "output/manual.md"
    assert check(ctx, type="order", file=f, values=["Chapter 1 General Provisions", "Article 1 Purpose", "Chapter 2 Water", "Article 2 Metering"])
    out = run_check(ctx, {"type": "order", "file": f, "values": ["Article 2 Metering", "Article 1 Purpose"]})
    assert not out.passed and "out of order" in out.reason
    assert check(ctx, type="headings", file=f, values=["Chapter 1 General Provisions", "Chapter 2 Water"])
    assert not check(ctx, type="headings", file=f, values=["Chapter 2 Water", "Chapter 1 General Provisions"])
    assert check(ctx, type="headings", file=f, values=["Chapter 2 Water", "Chapter 1 General Provisions"], ordered=False)
    assert not check(ctx, type="headings", file=f, values=["Applies to"])  # body text is not a heading
    assert check(ctx, type="headings", file="docs/policy.docx", values=["Policy", "Chapter 1 Scope"])


def test_tables(ctx: Context) -> None:
    f = "output/manual.md"
    assert check(ctx, type="row", file=f, cells=["Cedar Trading", "PO-2024-002", 55000])
    assert not check(ctx, type="row", file=f, cells=["Cedar Trading", "PO-2024-006"])  # cells from two rows
    assert check(ctx, type="row_count", file=f, equals=2) and not check(ctx, type="row_count", file=f, equals=3)
    assert check(ctx, type="row_count", file=f, min=1, max=2)
    assert check(ctx, type="columns", file=f, names=["supplier", "Amount (CNY)"]) and not check(ctx, type="columns", file=f, names=["Status"])
    assert check(ctx, type="row", file="output/hours.xlsx", cells=["Atlas", 41.5])
    assert check(ctx, type="row", file="output/*.xlsx", cells=["Beacon", "12"])
    assert check(ctx, type="row", file="docs/policy.docx", cells=["Desk", 760])  # an untouched workspace file


def test_row_values_take_cells_of_their_own(ctx: Context, tmp_path: Path) -> None:
    """Issue 25, item 5: a row passed when each value was *somewhere* in a cell and a number was any
    number inside a cell's text, so one cell holding a whole document passed every row check."""
    f = "output/manual.md"
    assert check(ctx, type="row", file=f, cells=["Harbor Logistics", "PO-2024-006", "1,250.50"])
    assert not check(ctx, type="row", file=f, cells=["Cedar Trading", 2024])  # 2024 is inside "PO-2024-002", not the cell
    assert not check(ctx, type="row", file=f, cells=["Cedar Trading", "Cedar Trading"])  # two values, one cell
    table = "| Item | Amount | Note |\n|---|---|---|\n" + "\n".join([
        "| Apple Juice 3 | ¥55,000 | (1,200.50) |", "| Desk | 55 000 CNY | 12.5 % |", "| Chair | 41.5 hours | PO 15 of 55,000 |",
        "| " + "Milk, Coke, Tea and everything else " * 10 + "| 7 | x |"])
    job = make_job(tmp_path / "rows", {"output/t.md": table})
    c = Context(FinalFiles(ctx.files.task, JobRecord(job)), "output/", "")
    assert not check(c, type="row", cells=["Apple Juice", 3])  # the number is inside the text of the name's cell
    assert check(c, type="row", cells=["Apple Juice 3", 55000, -1200.5]) and check(c, type="row", cells=["Desk", "55,000", "12.5%"])
    assert not check(c, type="row", cells=["Chair", 41.5]) and not check(c, type="row", cells=["Chair", 55000])  # units, text
    assert not check(c, type="row", cells=["Milk", 7])  # a cell that holds far more than the value is not its cell
    assert check(c, type="row", cells=["Desk", "¥55,000.00"])


def _memo(rng: random.Random, i: int) -> str:
    words = [rng.choice(VOCAB) for _ in range(40)]
    return f"# Memo {i}\n{BOILERPLATE}\n{' '.join(words)} code M{i:03d}.\n"


VOCAB = [f"{a}{b}" for a in ("tal", "mer", "vos", "kin", "dru", "pel", "sor", "fay") for b in ("ba", "co", "di", "fu", "go", "hi", "ju", "ke")]
BOILERPLATE = "Questions about this memo go to the office of the responsible department before the end of the month."


@pytest.fixture
def memos(tmp_path: Path) -> Task:
    """A workspace of 30 memos, each with text of its own and the same boilerplate sentence."""
    rng = random.Random(7)
    for i in range(30):
        (tmp_path / "ws" / "memos").mkdir(parents=True, exist_ok=True)
        (tmp_path / "ws" / "memos" / f"memo_{i:02d}.md").write_text(_memo(rng, i))
    return Task(id="t", prompt="p", workspace=tmp_path / "ws", output="output/out.md")


def _ctx(task: Task, job: Path, text: str) -> Context:
    return Context(FinalFiles(task, JobRecord(make_job(job, {"output/out.md": text}))), task.output, "")


def test_a_dump_of_the_workspace_fails_the_content_checks(memos: Task, tmp_path: Path) -> None:
    """Issue 25, item 5: pasting every workspace file into the output passed contains, order,
    headings and row checks. More than `max_copied_files` (20) files reproduced is a dump."""
    texts = [p.read_text() for p in sorted((memos.workspace / "memos").iterdir())]
    cell = " ".join(t.replace("\n", " ") for t in texts)
    dump = "\n".join(texts) + f"\n| Workspace | Code |\n|---|---|\n| {cell} | M004 |\n"
    ctx = _ctx(memos, tmp_path / "dump", dump)
    checks = [{"type": "contains", "values": ["M004"]}, {"type": "order", "values": ["Memo 3", "Memo 4"]},
              {"type": "headings", "values": ["Memo 3"]}, {"type": "row", "cells": ["M004"]}, {"type": "row_count", "min": 1},
              {"type": "columns", "names": ["Code"]}, {"type": "absent", "values": ["nowhere"]}]
    for c in checks:
        out = run_check(ctx, c)
        assert not out.passed and out.reason.startswith("bulk copy: the deliverable reproduces 30 workspace files (more than 20)"), (c, out)
        assert run_check(ctx, {**c, "max_copied_files": 30}).passed, c  # a task that calls for copying them says so
    few = _ctx(memos, tmp_path / "few", "\n".join(texts[:5]) + "\n| Code |\n|---|\n| M004 |\n")  # quoting five sources is fine
    assert all(run_check(few, c).passed for c in checks)
    twenty = _ctx(memos, tmp_path / "twenty", "\n".join(texts[:20]))
    assert check(twenty, type="contains", values=["M004"]) and not check(twenty, type="contains", values=["M004"], max_copied_files=19)
    boiler = _ctx(memos, tmp_path / "boiler", (BOILERPLATE + " M004\n") * 40)  # text every file shares copies no file
    assert check(boiler, type="contains", values=["M004"])


def test_sequences_read_in_chunks_are_the_same(monkeypatch) -> None:
    text = "**Article 4:** Water,\tmetering | is read\non the first working day of each month by Facilities " * 20
    whole = list(bulk.sequences(text))
    monkeypatch.setattr(bulk, "_CHUNK", 37)
    assert list(bulk.sequences(text)) == whole and len(whole) == len(re.findall(r"[^\W_]+", text)) - 7
    assert whole[0] == next(bulk.sequences("article 4 water metering is read on the"))  # markup, case, tabs ignored


def test_the_bulk_guard_judges_only_what_the_agent_wrote(memos: Task, tmp_path: Path) -> None:
    ctx = _ctx(memos, tmp_path / "job", "M004")
    assert check(ctx, type="contains", file="memos/", values=["M004", "M029"])  # the untouched workspace itself
    assert check(ctx, type="contains", values=["M004"])


def test_files(ctx: Context) -> None:
    assert check(ctx, type="exists", path="archive/original.md") and check(ctx, type="exists", path="archive/")
    assert check(ctx, type="exists", path="docs/original.md")  # untouched original
    assert not check(ctx, type="exists", path="docs/gone.md")  # deleted by the agent
    assert not check(ctx, type="exists", path="archive/other.md", min_bytes=5)
    assert check(ctx, type="same_as", path="archive/original.md", source="docs/original.md")
    assert not check(ctx, type="same_as", path="archive/other.md", source="docs/original.md")
    assert check(ctx, type="file_count", dir="archive", equals=2) and not check(ctx, type="file_count", dir="archive/", equals=1)
    assert check(ctx, type="file_count", dir="output", equals=1, pattern="*.md")


def test_answer_and_combinators(ctx: Context) -> None:
    assert check(ctx, type="answer", value="2602") and not check(ctx, type="answer", value="2629", tolerance=0.01)
    assert check(ctx, type="answer", value="2628", tolerance=0.01)
    yes, no = {"type": "exists", "path": "archive/"}, {"type": "exists", "path": "nope.md"}
    assert check(ctx, type="any", checks=[no, yes]) and not check(ctx, type="all", checks=[no, yes])
    assert check(ctx, type="all", checks=[yes, {"type": "answer", "value": "2,602"}])


def test_validate_rejects_bad_checks() -> None:
    with pytest.raises(CheckError, match="unknown check type 'bogus'; valid types: contains"):
        validate({"type": "bogus"})
    with pytest.raises(CheckError, match="needs field 'values'"):
        validate({"type": "contains", "file": "a.md"})
    with pytest.raises(CheckError, match="needs field 'source'"):
        validate({"type": "all", "checks": [{"type": "same_as", "path": "a"}]})
    with pytest.raises(CheckError, match="'max_copied_files' must be a whole number >= 0, got '20'"):
        validate({"type": "contains", "values": ["x"], "max_copied_files": "20"})


def test_extraction_from_office_files(tmp_path: Path) -> None:
    office.write_pptx(tmp_path / "d.pptx", [("Deck title", ["Presenter"]), ("Market outlook", ["Growth 4%"])])
    office.write_pdf(tmp_path / "r.pdf", [("title", "Operations Report"), ("table", [["Indicator", "Value"], ["Revenue (CNY)", "3,456,000"]])])
    office.write_docx(tmp_path / "p.docx", [("title", "Policy"), ("heading", "Chapter 1", 1), ("table", [["A", "B"], ["1", "2"]])])
    read = lambda name: extract_file(tmp_path, name, ExtractLimits())  # noqa: E731
    assert read("d.pptx").headings == ["Deck title", "Market outlook"]
    assert "Growth 4%" in read("d.pptx").text
    assert "Revenue (CNY)" in read("r.pdf").text and "3,456,000" in read("r.pdf").text
    assert read("p.docx").tables == [[["A", "B"], ["1", "2"]]]
    assert read("p.docx").headings == ["Policy", "Chapter 1"]
    (tmp_path / "broken.docx").write_bytes(b"not a zip")
    broken = read("broken.docx")  # a broken file is unreadable, with the reason, not an exception
    assert broken.text == "" and broken.tables == [] and "not a zip file" in broken.error
