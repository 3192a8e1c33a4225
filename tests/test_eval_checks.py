"""The check language of native rubrics, and text/table/heading extraction from office files."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.builtin import office
from eval.checks import CheckError, Context, run_check, validate
from eval.extract import extract_file
from eval.extract_limits import ExtractLimits
from eval.final_files import FinalFiles
from eval.matching import normalize
from runners.core.job_record import JobRecord
from runners.core.task import Task
from tests.test_eval_helpers import make_job

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
                                                     ("table", [["Item", "Cost"], ["Desk", "760"]])])  # fmt: skip
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
