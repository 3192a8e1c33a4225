"""Text, tables and headings out of one deliverable file (docx, xlsx, pptx, pdf, csv, md, txt, json),
within the bounds of `ExtractLimits`.

Judges read office files as text, the way Workspace-Bench's judge does; the rule judge's checks
also need their tables and headings. Every file is hostile input, so each format is read within
bounds (eval/config.py) and a file past one is `Unreadable`, with the bound as the reason:
checks that read it fail with that reason instead of the scoring failing or running away. This
module reads in the calling process; judging calls it only inside the bounded extraction process
(eval/judges/extract/worker.py, through eval/judges/extract/session.py), which adds the memory, CPU and wall limits
that no parser can promise by itself.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import BinaryIO

from envs.safeio import UnsafePath, open_regular
from eval.config import ExtractLimits
from eval.judges.extract import office as extract_office
from eval.judges.extract.extracted import (
    Budget,
    Extracted,
    Table,
    Unreadable,
    cell_str,
    check_chars,
    markdown_headings,
    markdown_tables,
)

TEXT_SUFFIXES = {".md", ".txt", ".csv", ".tsv", ".json", ".jsonl", ".yaml", ".yml", ".html", ".xml", ".log", ".py"}
OFFICE_SUFFIXES = {".docx": "docx", ".xlsx": "openpyxl", ".xlsm": "openpyxl", ".pptx": "pptx", ".pdf": "pypdf"}  # -> the library that reads it


class HostError(OSError):
    """`root` itself, a folder of the host (the record's deliverable/, the task's workspace), cannot
    be opened: a failure of the host, never the agent's file."""


def extract_file(root: Path, rel: str, limits: ExtractLimits) -> Extracted:
    """`root/rel` read within `limits` (reached without links, a regular file); raises only
    `HostError`, when `root` cannot be opened (anything wrong below it is the file's)."""
    try:
        os.close(os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
    except OSError as e:
        raise HostError(f"cannot open the folder {root} ({e.strerror})") from None
    try:
        with open_regular(root, rel) as f:
            return _valid(extract(f, rel, limits), limits)
    except UnsafePath as e:
        return Extracted(error=str(e))
    except Unreadable as e:
        return Extracted(error=str(e))
    except RecursionError:
        return Extracted(error="nested too deeply to read")
    except MemoryError:
        raise  # the process's memory limit: its caller reports it
    except Exception as e:  # noqa: BLE001 - a broken file is unreadable, not a crash of the scoring
        return Extracted(error=f"cannot be read as {Path(rel).suffix or 'text'}: {type(e).__name__}: {str(e)[:300]}")


def extract(f: BinaryIO, name: str, limits: ExtractLimits) -> Extracted:
    """Text, tables and headings of the open file `f` (its format from `name`'s suffix), in one read."""
    suffix = Path(name).suffix.lower()
    size = os.fstat(f.fileno()).st_size
    if suffix in OFFICE_SUFFIXES:
        if size > limits.file_bytes:
            raise Unreadable(f"{size:,} bytes; files over {limits.file_bytes:,} bytes are not read")
        return extract_office.read(f, suffix, limits)
    head = f.read(4096)
    if suffix not in TEXT_SUFFIXES and b"\x00" in head:
        return Extracted()  # binary of a kind no judge reads: no text, not an error
    if size > limits.text_bytes:
        raise Unreadable(f"{size:,} bytes; text files over {limits.text_bytes:,} bytes are not read")
    data = head + f.read(limits.text_bytes + 1 - len(head))
    if len(data) > limits.text_bytes:
        raise Unreadable(f"grew past {limits.text_bytes:,} bytes while read")
    text = data.decode("utf-8", errors="replace")
    check_chars(text, limits)
    budget = Budget(limits)
    if suffix in (".csv", ".tsv"):
        tables = _csv_tables(data, "\t" if suffix == ".tsv" else ",", budget)
    elif suffix == ".json":
        tables = _json_file_tables(data, budget)
    else:
        tables = markdown_tables(text, budget)
    return Extracted(text, tables, markdown_headings(text))


def _csv_tables(data: bytes, delimiter: str, budget: Budget) -> list[Table]:
    rows: Table = []
    try:
        text = data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads it
        for r in csv.reader(io.StringIO(text), delimiter=delimiter):
            if any(c.strip() for c in r):
                budget.take(len(r))
                rows.append(r)
    except csv.Error:
        return []  # not a table: its text is still read
    return [rows]


def _json_file_tables(data: bytes, budget: Budget) -> list[Table]:
    try:
        obj = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return []  # not JSON: its text is still read
    return _json_tables(obj, budget)


def _json_tables(obj: object, budget: Budget) -> list[Table]:
    if isinstance(obj, list) and obj and all(isinstance(r, dict) for r in obj):
        header = list(dict.fromkeys(k for r in obj for k in r))
        budget.take(len(header) * (len(obj) + 1), len(obj) + 1)
        return [[header] + [[cell_str(r.get(k)) for k in header] for r in obj]]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _json_tables(v, budget)]
    return []


def _valid(e: Extracted, limits: ExtractLimits) -> Extracted:
    """`e` with every string valid UTF-8 (a lone surrogate, which a PDF or a JSON escape can carry,
    would stop the scores from being written), the text within its bound."""
    check_chars(e.text, limits)
    return Extracted(_utf8(e.text), [[[_utf8(c) for c in row] for row in t] for t in e.tables], [_utf8(h) for h in e.headings])


def _utf8(s: str) -> str:
    return s if s.isascii() else s.encode("utf-8", errors="replace").decode("utf-8")
