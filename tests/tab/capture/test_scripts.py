"""Capture of files a script names on its command line (`python3 - FILE <<EOF`, `python3 script.py FILE`):
each run for real in a workspace of real office files. A document's lines are credited only where they
are its own text (its paragraphs, its rows of cells); a value the script computed is not (SPEC 3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envs.protocol import Observation
from eval.benchmarks.builtin.office import write_docx, write_pdf, write_pptx, write_xlsx
from eval.benchmarks.builtin.solution import READER
from tab.capture.file_reads import FileReads
from tab.capture.observe import Captured
from tests.tab.test_support import check_entry, missing_tools, snapshot, write_files

PY = sys.executable  # the real readers (openpyxl, python-docx, pypdf, pandas) are in the project's venv
DOCX, XLSX, PPTX, PDF = "policies/travel.docx", "finance/budget.xlsx", "decks/review.pptx", "reports/q1.pdf"
BUDGET = [["Department", "Budget", "Actual"], ["Finance", 1200, 1350], ["Legal", 800, 640], ["Sales", 2500, 2610]]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scripts")
    write_docx(root / DOCX, [("title", "Business travel policy"), ("para", "Hotel limit is 450 yuan per night."),
                             ("table", [["Grade", "Per diem"], ["Manager", "300"], ["Staff", "200"]])])
    write_xlsx(root / XLSX, [("Budget 2024", BUDGET)])
    write_pptx(root / PPTX, [("Strategy review 2024", []), ("Priorities", ["Expand the Atlas programme", "Cut travel spend by 10%"])])
    write_pdf(root / PDF, [("title", "Operations report Q1"), ("para", "Customer satisfaction reached 91 percent this quarter."),
                           ("table", [["KPI", "Value"], ["Uptime", "99.2"], ["Tickets", "1432"]])])
    write_files(root, {"notes/summary.md": "Summary of the quarter\nAll targets met.\n"})
    return root


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(template, tmp_path / "ws")
    return tmp_path / "ws"


def run(root: Path, command: str, before: str = "") -> Captured:
    """`before` runs first (e.g. the agent writing its script), then the command is run and captured
    as the job's tab would (reads of original files only), every entry checked by the shared invariant."""
    start = snapshot(root)
    reads = FileReads(root)
    if before:
        subprocess.run(before, shell=True, cwd=root, check=True, executable="/bin/bash")
    p = subprocess.run(command, shell=True, cwd=root, capture_output=True, text=True, executable="/bin/bash")
    assert p.returncode == 0, p.stderr
    got = reads(Observation("bash", {"command": command}, p.stdout, False, 1))
    for path, excerpt in got.reads:
        check_entry(path, excerpt, [p.stdout], start)
    return got


def test_the_reference_solutions_reader_credits_each_file_it_names(ws: Path) -> None:
    """`python3 - FILE ... <<'RT_PY'` as the built-in benchmark's reference solutions read office files."""
    files = [DOCX, XLSX, PPTX, PDF, "notes/summary.md"]
    got = run(ws, f"python3 - {' '.join(files)} <<'RT_PY'\n{READER}RT_PY")
    reads = dict(got.reads)
    assert [p for p, _ in got.reads] == files
    assert "Hotel limit is 450 yuan per night." in reads[DOCX] and "Manager\t300" in reads[DOCX]
    assert "Finance\t1200\t1350" in reads[XLSX] and "Expand the Atlas programme" in reads[PPTX]
    assert "Customer satisfaction reached 91 percent this quarter." in reads[PDF]
    assert reads["notes/summary.md"] == "Summary of the quarter\nAll targets met."
    assert all("==>" not in x for x in reads.values())  # the script's own headers are not content
    assert got.unattributed == "[slide 1]\n[slide 2]"  # nor are its slide labels


READERS = {
    "openpyxl rows": (XLSX, "import openpyxl, sys\nfor row in openpyxl.load_workbook(sys.argv[1]).active.iter_rows(values_only=True):\n"
                            "    print(row)", "('Finance', 1200, 1350)"),
    "openpyxl cells": (XLSX, "import openpyxl, sys\nfor row in openpyxl.load_workbook(sys.argv[1]).active.iter_rows(values_only=True):\n"
                             "    print('\\t'.join(str(c) for c in row))", "Legal\t800\t640"),
    "pandas": (XLSX, "import pandas, sys\nprint(pandas.read_excel(sys.argv[1]))", "Sales    2500    2610"),
    "python-docx": (DOCX, "import docx, sys\nfor p in docx.Document(sys.argv[1]).paragraphs:\n    print(p.text)",
                    "Hotel limit is 450 yuan per night."),
    "pypdf": (PDF, "import pypdf, sys\nfor page in pypdf.PdfReader(sys.argv[1]).pages:\n    print(page.extract_text())",
              "Customer satisfaction reached 91 percent this quarter."),
    "python-pptx": (PPTX, "import pptx, sys\nfor s in pptx.Presentation(sys.argv[1]).slides:\n    for sh in s.shapes:\n"
                          "        print(sh.text_frame.text)", "Cut travel spend by 10%"),
}


@pytest.mark.parametrize("reader", list(READERS))
def test_the_common_python_readers_of_office_files_are_credited(ws: Path, reader: str) -> None:
    path, code, shown = READERS[reader]
    got = run(ws, f"{PY} - {path} <<'EOF'\n{code}\nEOF")
    assert [p for p, _ in got.reads] == [path], got
    assert shown in got.reads[0][1]


def test_a_script_the_agent_wrote_is_not_a_read_but_the_file_it_is_given_is(ws: Path) -> None:
    script = "import docx, sys\nfor p in docx.Document(sys.argv[1]).paragraphs:\n    print(p.text)\n"
    got = run(ws, f"{PY} tools/show.py {DOCX}", before=f"mkdir -p tools && printf %s {_quote(script)} > tools/show.py")
    assert [p for p, _ in got.reads] == [DOCX]
    got = run(ws, f"cd policies && {PY} ../tools/show.py travel.docx")
    assert [p for p, _ in got.reads] == [DOCX]


def test_computed_values_are_not_credited(ws: Path) -> None:
    """A sum, a count or a rewritten row is a value the agent computed, not the document's content: it is
    kept unattributed; a real row shown beside them is credited, alone."""
    total = ("import openpyxl, sys\nrows = list(openpyxl.load_workbook(sys.argv[1]).active.iter_rows(values_only=True))\n"
             "print(rows[0])\nprint('total', sum(r[1] for r in rows[1:]))\nprint(len(rows))\n"
             "for r in rows[1:]:\n    print(r[0], r[2] - r[1], sep='\\t')")
    got = run(ws, f"{PY} - {XLSX} <<'EOF'\n{total}\nEOF")
    assert got.reads == [(XLSX, "('Department', 'Budget', 'Actual')")]
    assert "total 4500" in got.unattributed and "Finance\t150" in got.unattributed
    count = "import docx, sys\nprint(len(docx.Document(sys.argv[1]).paragraphs))"
    got = run(ws, f"{PY} - {DOCX} <<'EOF'\n{count}\nEOF")
    assert got.reads == [] and got.unattributed.strip().isdigit()
    upper = "import docx, sys\nfor p in docx.Document(sys.argv[1]).paragraphs:\n    print(p.text.upper())"
    assert run(ws, f"{PY} - {DOCX} <<'EOF'\n{upper}\nEOF").reads == []


def test_a_documents_markup_is_not_its_text(ws: Path) -> None:
    raw = "import zipfile, sys\nprint(zipfile.ZipFile(sys.argv[1]).read('word/document.xml').decode()[:400])"
    got = run(ws, f"{PY} - {DOCX} <<'EOF'\n{raw}\nEOF")
    assert got.reads == [] and "<w:document" in got.unattributed


def test_a_header_naming_another_file_does_not_move_its_lines(ws: Path) -> None:
    """The script's `==> path <==` headers are its own claim: a line goes to that file only if it holds it."""
    code = f"print('==> {XLSX} <==')\nprint('Hotel limit is 450 yuan per night.')\nprint('Legal\\t800\\t640')"
    got = run(ws, f"python3 - {XLSX} {DOCX} <<'EOF'\n{code}\nEOF")
    assert got.reads == [(XLSX, "Legal\t800\t640")]


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _zip(name: str, xml: str) -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(name, xml)
    return buf.getvalue()


HOSTILE = {
    "zip bomb": ("x.docx", _zip("word/document.xml", "<w:p><w:t>" + "a" * 100_000_000 + "</w:t></w:p>")),
    "unclosed tags": ("x.docx", _zip("word/document.xml", "<w:tbl><w:tr><w:p>" * 500_000)),
    "endless cells": ("x.xlsx", _zip("xl/worksheets/sheet1.xml", "<row><c><v>1</v></c></row>" * 1_000_000)),
    "unclosed pdf strings": ("x.pdf", b"1 0 obj<<>>stream\nBT " + b"(a\\(" * 1_000_000 + b"\nendstream"),
    "endless pdf text": ("x.pdf", b"1 0 obj<<>>stream\nBT " + b"(a)Tj " * 1_000_000 + b"\nendstream"),
    "not a zip": ("x.xlsx", b"PK\x03\x04" + b"\0" * 1000),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_document_is_read_within_bounds_and_credits_nothing(case: str) -> None:
    """The agent may have shaped any file it can point a script at (SPEC: hostile input): reading a
    document's text is bounded in bytes inflated and elements looked at, and a document past the
    bounds holds nothing a script printed."""
    from tab.capture.documents import document_text
    from tests.envs.test_attacks import bounded

    name, data = HOSTILE[case]
    assert bounded(lambda: document_text(name, data), 20) == ""


def test_a_scripts_output_through_a_pipe_or_a_glob_is_still_checked(ws: Path) -> None:
    paras = "import docx, sys\nfor f in sys.argv[1:]:\n    for p in docx.Document(f).paragraphs:\n        print(p.text)"
    got = run(ws, f"{PY} - policies/*.docx <<'EOF' | grep -i hotel\n{paras}\nEOF")
    assert got.reads == [(DOCX, "Hotel limit is 450 yuan per night.")]
    upper = paras.replace("p.text", "p.text.upper()")
    assert run(ws, f"{PY} - policies/*.docx <<'EOF' | head -n 3\n{upper}\nEOF").reads == []


def test_a_value_a_script_printed_beside_a_converter_is_not_the_documents(ws: Path) -> None:
    """A command that runs a script has every credited line checked against the document's text: the
    `4` a script printed after pdftotext's text is not the PDF's (it was, before: one file took it all)."""
    got = run(ws, f"pdftotext -layout {PDF} - && {PY} -c 'print(2 + 2)'")
    assert [p for p, _ in got.reads] == [PDF] and got.unattributed.strip("\f") == "4"  # pdftotext ends a page with \f


def test_rows_with_dates_and_narrow_columns_are_the_sheets_own(ws: Path) -> None:
    """xlsx keeps a date as a day count; readers print it as a date (openpyxl's datetime repr, pandas'
    2023-01-31), and pandas sets narrow columns one space apart: still the sheet's rows. A date the
    script computed is not."""
    import datetime

    rows = [["Department", "Category", "Month", "Actual"], ["Engineering", "Salaries", datetime.date(2023, 1, 31), 152764.67],
            ["Engineering", "Cloud hosting", datetime.date(2023, 2, 28), 9120.5]]
    write_xlsx(ws / "finance/actuals.xlsx", [("Sheet1", rows)])
    for code, shown in (("import pandas, sys\nprint(pandas.read_excel(sys.argv[1]))", "Salaries 2023-01-31"),
                        ("import openpyxl, sys\nfor r in openpyxl.load_workbook(sys.argv[1]).active.iter_rows(values_only=True):\n"
                         "    print(r)", "datetime.datetime(2023, 1, 31, 0, 0)")):
        got = run(ws, f"{PY} - finance/actuals.xlsx <<'EOF'\n{code}\nEOF")
        assert [p for p, _ in got.reads] == ["finance/actuals.xlsx"] and got.unattributed == "", got
        assert shown in got.reads[0][1] and len(got.reads[0][1].split("\n")) == 3
    later = ("import openpyxl, sys, datetime\nfor r in list(openpyxl.load_workbook(sys.argv[1]).active.iter_rows(values_only=True))[1:]:\n"
             "    print(r[0], r[2] + datetime.timedelta(days=30), sep='  ')")
    assert run(ws, f"{PY} - finance/actuals.xlsx <<'EOF'\n{later}\nEOF").reads == []


CONVERTED = {  # what a command around a converter may make of its output, and what the document holds
    "sed rewrites a figure": (f"docx2txt {DOCX} - | sed 's/450/9000/'", "Hotel limit is 9000 yuan per night."),
    "a sum echoed beside it": (f"docx2txt {DOCX} - ; echo $((1200+3400))", "4600"),
    "awk adds a word": (f"pdftotext {PDF} - | awk '{{print $0, \"FORGED\"}}'", "Operations report Q1 FORGED"),
    "a line printed after it": (f"pdftotext {PDF} - && echo 'Uptime 12.5'", "Uptime 12.5"),
    "tr upper-cases it": (f"docx2txt {DOCX} - | tr a-z A-Z", "HOTEL LIMIT IS 450 YUAN PER NIGHT."),
}


@pytest.mark.parametrize("case", list(CONVERTED))
def test_every_line_credited_to_a_converted_document_is_the_documents_own(ws: Path, case: str) -> None:
    """docs/tab.md's rule holds whatever the command does around a converter: a line the document
    does not hold is never credited to it (issue 49: `| sed` and an `echo $((…))` were)."""
    command, made = CONVERTED[case]
    missing = missing_tools(command)
    if missing:
        pytest.skip(f"not installed: {missing}")
    got = run(ws, command)
    assert all(made not in excerpt for _, excerpt in got.reads), got.reads
    assert made in got.unattributed


@pytest.mark.parametrize("command, path, held", [
    (f"docx2txt {DOCX} -", DOCX, "Hotel limit is 450 yuan per night."),
    (f"docx2txt {DOCX} - | grep -i hotel", DOCX, "Hotel limit is 450 yuan per night."),
    (f"pdftotext -layout {PDF} - | head -n 20", PDF, "Customer satisfaction reached 91 percent this quarter."),
])
def test_a_converters_own_lines_are_still_credited(ws: Path, command: str, path: str, held: str) -> None:
    """A converter's output alone, passed on by commands that keep lines unchanged, is the document's
    text by construction: kept whole (a real PDF's reader text holds far fewer of its lines)."""
    missing = missing_tools(command)
    if missing:
        pytest.skip(f"not installed: {missing}")
    got = run(ws, command)
    assert held in dict(got.reads)[path] and got.unattributed.strip("\f\n") == ""
