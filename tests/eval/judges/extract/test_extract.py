"""Reading deliverables for judging (eval/extract*.py, eval/judges/extract/session.py): normal files read exactly as
before, every bound makes a file unreadable with its reason, and the reading process's own limits
(memory, CPU, wall time, the job's budget) hold where no parser can promise anything."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import json
import os
import random
import re
import struct
from pathlib import Path

import pytest

from eval.benchmarks.builtin import office
from eval.config import ExtractLimits, JudgeConfig, MiB
from eval.judges.extract.extracted import markdown_headings
from eval.judges.extract.pool import ExtractionFailed, Pool
from eval.judges.extract.read import extract_file
from eval.judges.extract.session import Extractions, deliverable_texts, kept_doc
from eval.score.records import judge_key, score_job
from runners.core.job_record import JobRecord
from runners.core.record_files import EXTRACTED
from tests.conftest import write_native
from tests.helpers import deliverable_bombs as bombs
from tests.helpers.eval_records import FIXTURES, make_job

GOLDEN = FIXTURES / "extract_golden.json"  # what eval/judges/extract/read.py gave at dd8e538, before it was bounded
OLD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)


def write_normal_files(root: Path) -> list[str]:
    """Deliverables of every format a judge reads, made deterministically."""
    root.mkdir(parents=True, exist_ok=True)
    office.write_docx(root / "report.docx", [("title", "Quarterly Report"), ("heading", "Chapter 1 Scope", 1), ("para", "Limit 6 litres per minute."),
                                             ("heading", "1.1 Details", 2), ("bullets", ["First point", "Second point"]),
                                             ("table", [["Item", "Cost", "Note"], ["Desk", "760", ""], ["Chair", "1,250.50", "two"]])])
    office.write_xlsx(root / "data.xlsx", [("Hours", [["Name", "Hours", "Start", "When"], ["Atlas", 41.5, dt.date(2024, 3, 1), dt.datetime(2024, 3, 1, 10, 30)],
                                                       ["Beacon", 12.0, None, None], [None, None, None, None], ["", "  ", None, None], ["Cedar", None, None, "x"]]),
                                           ("Single", [[42]])])
    office.write_pptx(root / "deck.pptx", [("Deck title", ["Presenter"]), ("Market outlook", ["Growth 4%", "Risks"]), ("Close", [])])
    office.write_pdf(root / "report.pdf", [("title", "Operations Report"), ("para", "Revenue grew."), ("table", [["Indicator", "Value"], ["Revenue (CNY)", "3,456,000"]])])
    (root / "data.csv").write_bytes('\ufeffSupplier,Amount\r\nCedar Trading,"55,000"\r\n\r\nHarbor,"multi\nline"\r\n'.encode())
    (root / "data.tsv").write_text("a\tb\n1\t2\n")
    (root / "records.json").write_text(json.dumps({"orders": [{"id": 1, "amount": 55000.0}, {"id": 2, "supplier": "Harbor", "amount": 1.5}], "n": 2}))
    (root / "notes.md").write_text("# Manual #\n\n## Chapter 2 Water ##\n### Learn C#\n#NotHeading\n####### seven\n\n| A | B |\n|---|:-:|\n| 1 | 2 |\n"
                                   "x | y | z\n\ntext\r\n# CRLF title\r\n")
    (root / "log.txt").write_text("plain text | with | pipes\nline two\n")
    (root / "bad.json").write_text('{"a": 1,}')
    (root / "blob.bin").write_bytes(b"\x00\x01binary" * 10)
    return sorted(p.name for p in root.iterdir())


def test_normal_files_read_exactly_as_before(tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text())
    names = write_normal_files(tmp_path)
    assert names == sorted(golden)
    for name in names:
        got = extract_file(tmp_path, name, ExtractLimits())
        assert not got.error, (name, got.error)
        assert {"text": got.text, "tables": got.tables, "headings": got.headings} == golden[name], name


def test_headings_are_the_old_patterns_on_any_line() -> None:
    rng = random.Random(7)
    for _ in range(20_000):
        line = "".join(rng.choice(["#", "#", " ", "\t", "a", "b", "\r", "\x0b", "\u3000", "C#"]) for _ in range(rng.randint(1, 14)))
        assert markdown_headings(line) == [m.group(2).strip() for m in OLD_HEADING.finditer(line)], repr(line)


def test_a_spreadsheet_is_read_by_the_cells_it_holds(tmp_path: Path) -> None:
    (tmp_path / "dim.xlsx").write_bytes(bombs.xlsx_dimension_bomb())
    got = extract_file(tmp_path, "dim.xlsx", ExtractLimits())
    assert not got.error and [len(r) for r in got.tables[0]] == [16_384, 16_384]  # two rows, as wide as the real XFD cell
    assert got.tables[0][0][:3] == ["Name", "42", ""] and got.tables[0][1][-1] == "7"
    # a row past a <dimension> that claims less is read too: a claimed size neither pads nor hides
    rows = "".join(f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>' for r in (1, 2, 3))
    sheet = f'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:A2"/><sheetData>{rows}</sheetData></worksheet>'
    (tmp_path / "hidden.xlsx").write_bytes(bombs.minimal_xlsx(sheet))
    assert extract_file(tmp_path, "hidden.xlsx", ExtractLimits()).tables == [[["1"], ["2"], ["3"]]]


def _csv(rows: int, cols: int) -> bytes:
    return "\n".join(",".join(f"c{r}_{c}" for c in range(cols)) for r in range(rows)).encode()


def _merged_docx() -> bytes:
    import docx

    d = docx.Document()
    t = d.add_table(rows=10, cols=1)
    for row in t.rows:
        row.cells[0]._tc.get_or_add_tcPr().grid_span = 300  # one cell repeated over 300 grid columns
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _looping_pdf() -> bytes:
    data = bombs.pdf_page_bomb(2, 2)
    return data.replace(b"/Kids [4 0 R 4 0 R]", b"/Kids [2 0 R 4 0 R]")  # the second level lists the root


# name -> (file name, its bytes, limits that differ from the defaults, words of the reason)
BOUNDS = {
    "cells": ("t.csv", lambda: _csv(10, 10), {"cells": 50}, "more than 50 table cells"),
    "rows": ("t.csv", lambda: _csv(20, 1), {"rows": 10}, "more than 10 table rows"),
    "text_bytes": ("t.md", lambda: b"x" * 2000, {"text_bytes": 1000}, "text files over 1,000 bytes"),
    "text_chars": ("t.docx", lambda: _docx_text(), {"text_chars": 10}, "more than 10 characters"),
    "file_bytes": ("t.pdf", bombs.pdf_page_bomb, {"file_bytes": 100}, "files over 100 bytes"),
    "zip_members": ("t.docx", lambda: _docx_text(), {"zip_members": 3}, "zip members; at most 3"),
    "zip_part_bytes": ("t.docx", lambda: bombs.docx_zip_bomb(2 * MiB), {"zip_part_bytes": MiB}, "inflates to"),
    "zip_ratio": ("t.pptx", lambda: bombs.pptx_zip_bomb(2 * MiB), {}, "times; at most 100"),
    "zip_total_bytes": ("t.xlsx", lambda: _xlsx_text(), {"zip_total_bytes": 1000}, "more than 1,000 bytes"),
    "pdf_pages": ("t.pdf", bombs.pdf_page_bomb, {}, "more than 2,000 pages"),
    "pdf_loop": ("t.pdf", _looping_pdf, {}, "page tree"),
    # 10 cells that span 3,000 grid columns; at the default 500,000, python-docx would build 500,000 cells (~15 s) first
    "docx_merged_cells": ("t.docx", _merged_docx, {"cells": 1000}, "more than 1,000 table cells"),
    "json_keys": ("t.json", lambda: json.dumps([{f"k{i}": 1} for i in range(1000)]).encode(), {}, "table cells"),
}


def _docx_text() -> bytes:
    d = io.BytesIO()
    import docx

    doc = docx.Document()
    doc.add_paragraph("a paragraph longer than ten characters")
    doc.save(d)
    return d.getvalue()


def _xlsx_text() -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.append(["a", 1])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


@pytest.mark.parametrize("name", list(BOUNDS))
def test_each_bound_makes_the_file_unreadable_with_its_reason(name: str, tmp_path: Path) -> None:
    file, make, limits, reason = BOUNDS[name]
    (tmp_path / file).write_bytes(make())
    got = extract_file(tmp_path, file, dataclasses.replace(ExtractLimits(), **limits))
    assert reason in got.error, got.error
    assert got.text == "" and got.tables == [] and got.headings == []


def test_a_zip_member_that_inflates_past_its_declared_size_is_unreadable(tmp_path: Path) -> None:
    data = bytearray(_docx_text())
    at = data.find(b"word/document.xml", data.find(b"PK\x01\x02"))  # its entry in the central directory
    entry = data.rfind(b"PK\x01\x02", 0, at)
    (size,) = struct.unpack_from("<I", data, entry + 24)
    struct.pack_into("<I", data, entry + 24, size // 2)  # declares half of what it inflates to
    (tmp_path / "lie.docx").write_bytes(bytes(data))
    assert "cannot be inflated" in extract_file(tmp_path, "lie.docx", ExtractLimits()).error


def test_text_that_is_not_unicode_is_made_valid(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('[{"name": "\\ud800x"}]')  # a lone surrogate, as JSON may escape it
    got = extract_file(tmp_path, "s.json", ExtractLimits())
    assert got.tables == [[["name"], ["?x"]]]
    json.dumps(got.to_json(), ensure_ascii=False).encode("utf-8")  # the scores can be written


def test_links_and_fifos_are_not_read(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("secret")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    os.mkfifo(tmp_path / "fifo.md")
    assert "cannot open" in extract_file(tmp_path, "link.md", ExtractLimits()).error
    assert "not a regular file" in extract_file(tmp_path, "fifo.md", ExtractLimits()).error  # and it did not block


# ---------------------------------------------------------------- the reading process and its limits
@pytest.fixture
def pool() -> Pool:
    p = Pool(slots=1)
    yield p
    p.close()


@pytest.mark.slow
def test_the_reading_process_is_held_to_its_memory_cpu_and_wall_time(tmp_path: Path, pool: Pool) -> None:
    (tmp_path / "big.csv").write_bytes(_csv(40_000, 10))
    (tmp_path / "pages.pdf").write_bytes(bombs.pdf_page_bomb(100, 2))  # 10,000 pages: seconds of pypdf
    (tmp_path / "ok.md").write_text("# Fine\n")
    read = lambda name, **kw: pool.read(tmp_path, name, dataclasses.replace(ExtractLimits(pdf_pages=20_000), **kw)).extracted  # noqa: E731
    assert "memory" in read("big.csv", memory_bytes=64 * MiB).error
    assert "more than 1 s of CPU" in read("pages.pdf", cpu_s=1).error
    assert "took more than 0.5 s" in read("pages.pdf", wall_s=0.5).error
    assert read("ok.md").headings == ["Fine"]  # the worker serves the next file after each of those
    assert read("big.csv").tables[0][-1][-1] == "c39999_9"  # and the same csv within the default limits


def test_a_worker_that_dies_is_replaced(tmp_path: Path, pool: Pool) -> None:
    (tmp_path / "a.md").write_text("# A\n")
    assert pool.read(tmp_path, "a.md", ExtractLimits()).extracted.headings == ["A"]
    (worker,) = pool._idle
    worker.proc.kill()
    worker.proc.wait()
    assert pool.read(tmp_path, "a.md", ExtractLimits()).extracted.headings == ["A"]


def test_no_reading_process_is_the_hosts_failure_not_the_files(tmp_path: Path, pool: Pool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The job stays unscored (re-scorable) instead of scoring 0 for a file nobody could read."""
    (tmp_path / "a.md").write_text("# A\n")
    monkeypatch.setattr("eval.judges.extract.pool.sys.executable", str(tmp_path / "no-python"))
    with pytest.raises(ExtractionFailed, match="cannot start the reading process"):
        pool.read(tmp_path, "a.md", ExtractLimits())


def test_a_job_reads_each_file_once_within_its_budget(tmp_path: Path, pool: Pool) -> None:
    for n in ("a.md", "b.md"):
        (tmp_path / n).write_text(f"# {n}\n")
    files = Extractions(ExtractLimits(job_wall_s=1e-9), pool)
    assert files.get(tmp_path, "a.md").headings == ["a.md"] and files.get(tmp_path, "a.md").headings == ["a.md"]
    assert len(files.reads) == 1  # read once, reused
    assert "this job's 1e-09 s for reading files were spent" in files.get(tmp_path, "b.md").error


# ---------------------------------------------------------------- what the record keeps for the report
def test_the_scores_keep_the_text_the_judges_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = {"id": "t", "prompt": "p", "workspace": "w", "output": "output/", "rubrics": [{"text": "r", "check": {"type": "contains", "file": "output/h.xlsx", "values": ["Atlas"]}}]}
    bench = write_native(tmp_path / "bench", [task], {"w/in.txt": "x"})
    meta = {"job_id": "j", "benchmark": "native", "task_id": "t", "method": "dci", "model": "m", "seed": 0,
            "config": {"benchmark": {"name": "native", "path": str(bench)}, "judge": {"name": "rule"}}}
    xlsx = tmp_path / "h.xlsx"
    office.write_xlsx(xlsx, [("S", [["Name"], ["Atlas"]])])
    job = make_job(tmp_path / "j", {"output/h.xlsx": xlsx.read_bytes(), "output/a.md": "alpha " * 10, "output/bomb.pdf": bombs.pdf_page_bomb()}, job=meta)
    assert score_job(job)["metrics"]["pass_rate"] == 1.0
    kept = JobRecord(job).extracted
    assert [f["path"] for f in kept["files"]] == ["output/a.md", "output/bomb.pdf", "output/h.xlsx"]
    assert kept["files"][1] == {"path": "output/bomb.pdf", "error": "more than 2,000 pages"}
    assert deliverable_texts(JobRecord(job)) == ["alpha " * 10, "", "[sheet S]\nName\nAtlas"]
    (job / EXTRACTED).unlink()  # a record scored before there was one: read now, the same way
    assert deliverable_texts(JobRecord(job)) == ["alpha " * 10, "", "[sheet S]\nName\nAtlas"]
    (job / "deliverable" / "output").joinpath(os.fsdecode(b"b\xff.md")).write_text("# named in no encoding\n")
    kept = kept_doc(Extractions(), JobRecord(job))  # read through the worker, its name kept escaped
    assert {"path": "output/b\\xff.md", "text": "# named in no encoding\n"} in kept["files"]
    json.dumps(kept, ensure_ascii=False).encode("utf-8")
    monkeypatch.setattr("eval.judges.extract.session.KEEP_CHARS", 25)
    assert deliverable_texts(JobRecord(job)) == [("alpha " * 10)[:25]]  # bounded: the rest left out


def test_the_limits_are_part_of_the_judge_only_when_set() -> None:
    assert judge_key(JudgeConfig(name="rule")) == judge_key(JudgeConfig(name="rule", extract=ExtractLimits()))
    assert judge_key(JudgeConfig(name="rule")) != judge_key(JudgeConfig(name="rule", extract=ExtractLimits(cells=10)))


def test_the_llm_judges_see_why_a_file_is_unreadable(tmp_path: Path) -> None:
    from eval.judges.workspace_bench import protocol
    from eval.judges.workspace_bench.rubric_judge import deliverable_files
    from runners.core.task import Rubric, Task

    job = make_job(tmp_path / "j", {"output/notes.docx": bombs.docx_zip_bomb(2 * MiB), "output/a.md": "# Alpha\n"})
    task = Task(id="t", prompt="p", workspace=tmp_path, output="output/", rubrics=[Rubric("r")])
    body = protocol.payload(task, JobRecord(job))
    entries = {f["relToWorkDir"]: f for f in body["outputs"]}
    assert entries["output/a.md"]["excerpt"] == "# Alpha\n"
    assert "(unreadable: zip member 'word/document.xml' inflates" in entries["output/notes.docx"]["note"]
    texts = {f["path"]: f.get("text", "") for f in deliverable_files(JobRecord(job), ["output/"], 1000, 10_000)}
    assert texts["output/notes.docx"].startswith("(unreadable: zip member 'word/document.xml' inflates")


def test_a_file_is_read_when_the_judging_process_holds_over_1024_files(tmp_path: Path) -> None:
    """The judge runs in the episode actor, which holds hundreds of jobs' descriptors: the reply of
    the reading process came back on a descriptor select() refused (`filedescriptor out of range`)."""
    from tests.helpers.open_files import held_open

    (tmp_path / "notes.txt").write_text("the quarterly total is 42\n")
    pool = Pool(slots=1)
    try:
        with held_open():
            read = pool.read(tmp_path, "notes.txt", ExtractLimits())
            assert pool._idle and pool._idle[0].proc.stdout.fileno() > 1024
        assert "the quarterly total is 42" in read.extracted.text
    finally:
        pool.close()
