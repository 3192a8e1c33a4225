"""The bounds on reading an agent-made file for judging (`judge.extract.*`).

Every deliverable is hostile input: a 1.5 KB spreadsheet can claim a million rows, a 400 KB docx can
inflate to gigabytes, a 2 KB PDF can hold a million pages. A file past any of these bounds is
unreadable, and every check that reads it fails with the bound it crossed as the reason. The
defaults are far above what a real deliverable needs (docs/benchmarks.md, "Reading deliverables").
"""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1 << 20


@dataclass
class ExtractLimits:
    """What reading one file may take (eval/extract.py inside the limits, eval/extract_worker.py the process).

    file_bytes: a file larger on disk is not opened.
    text_bytes: a plain text file (md, csv, json, ...) larger than this is not read.
    text_chars: the text extracted from any format.
    cells, rows: all the tables of one file together (an xlsx's empty cells between real ones count).
    zip_members, zip_part_bytes, zip_total_bytes: a docx/xlsx/pptx's members, one member and all of
      them decompressed (declared in the zip's directory and counted while inflating, before any
      library parses the file).
    zip_ratio: a member's decompressed size over its compressed size, for members over 1 MiB.
    pdf_pages: pages, counted in the page tree before any page is read.
    memory_bytes: the address space of the process that reads one file (RLIMIT_AS).
    cpu_s: its CPU time (RLIMIT_CPU); wall_s: its wall time.
    job_wall_s: the wall time of all the files of one job's scoring; a file asked for after it is
      spent is unreadable without being opened.
    """

    file_bytes: int = 64 * MiB
    text_bytes: int = 8 * MiB
    text_chars: int = 4_000_000
    cells: int = 500_000
    rows: int = 100_000
    zip_members: int = 10_000
    zip_part_bytes: int = 64 * MiB
    zip_total_bytes: int = 256 * MiB
    zip_ratio: float = 100.0
    pdf_pages: int = 2_000
    memory_bytes: int = 1024 * MiB
    cpu_s: float = 30.0
    wall_s: float = 60.0
    job_wall_s: float = 180.0
