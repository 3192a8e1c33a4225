"""A job page's Deliverable section: the agent's final answer under a heading of its own, then each
delivered file's link with, under it, the file's text as the judges read it (`extracted.json`, the
judges' bounded reading; never parsed here), itself bounded on the page.

A record scored before `extracted.json` existed is read now through the judges' bounded workers, as
Figure 2 reads it; a job that was never scored shows its files' links only (the judges read nothing).
"""

from __future__ import annotations

import html
import os
from typing import Any
from urllib.parse import quote

from envs.names import shown
from eval.judges.extract.session import deliverable_doc
from eval.judges.extract.session import shown as extracted_path
from eval.report.load import Job
from runners.core.job_record import JobRecord, has_file
from runners.core.record_files import DELIVERABLE, EXTRACTED

FILE_CHARS = 20_000  # of one file's text on the page; the link has the whole file
PAGE_CHARS = 200_000  # of all files' text on one page
PAGE_FILES = 200  # files whose text the page shows; the others are listed by link


def _texts(job: Job) -> tuple[dict[str, dict[str, Any]], str]:
    """Each file's `extracted.json` entry by its path, and why there are none (blank when there are)."""
    if job.scores is None and not has_file(job.dir, EXTRACTED):
        return {}, "not scored: the judges have not read these files"
    doc = job.held(EXTRACTED, lambda: job.document(EXTRACTED, lambda: deliverable_doc(JobRecord(job.dir))))
    if doc is None:  # its reader refused it (checked field by field: runners/core/document_checks.py)
        return {}, f"what the judges read cannot be shown ({job.unreadable[EXTRACTED]})"
    return {f["path"]: f for f in doc.get("files") or []}, ""


def _file_text(entry: dict[str, Any] | None, room: int) -> str:
    """A file's text under its link: bounded by FILE_CHARS and the page's `room`, with what was cut."""
    if entry is None:
        return '<p class="note">(not in what the judges read: past extracted.json\'s limits)</p>'
    if isinstance(entry.get("error"), str):
        return f'<p class="note">unreadable to the judges: {html.escape(entry["error"])}</p>'
    text = entry.get("text")
    if not isinstance(text, str) or not text.strip():
        return '<p class="note">(no text)</p>'
    cap = min(FILE_CHARS, room)
    notes = []
    if len(text) > cap:
        notes.append(f"the first {cap:,} of {len(text):,} characters shown; the file's link has the whole file")
    clipped = entry.get("clipped")
    if isinstance(clipped, int) and clipped > 0:
        notes.append(f"the judges' reading kept {len(text):,} characters ({clipped:,} more past extracted.json's limit)")
    note = f'<p class="note">{html.escape("; ".join(notes))}</p>' if notes else ""
    return f'<pre class="delivered">{html.escape(text[:cap])}</pre>{note}'


def deliverable_html(job: Job) -> str:
    """The section: the final answer, then every file's link with its text under it."""
    result = job.result
    out = ['<h2 id="deliverable">Deliverable</h2>', "<h3>Final answer</h3>"]
    answer = result.final_answer if result is not None else None
    out.append(f'<pre class="answer">{html.escape(answer)}</pre>' if answer else '<p class="note">(none)</p>')
    rels = [p.relative_to(job.dir / DELIVERABLE).as_posix() for p in job.deliverable_files()]
    out.append(f"<h3>Files ({len(rels)})</h3>")
    if not rels:
        out.append('<p class="note">(no files)</p>')
    entries, why = _texts(job) if rels else ({}, "")
    if why:
        out.append(f'<p class="note">{html.escape(why)}</p>')
    room, texts, rest = PAGE_CHARS, 0, []
    for rel in rels:
        link = f'<a href="../../{quote(job.dir.name)}/{DELIVERABLE}/{quote(os.fsencode(rel))}">{html.escape(shown(rel))}</a>'
        if why or room <= 0 or texts >= PAGE_FILES:
            rest.append(link)
        else:
            entry = entries.get(extracted_path(rel))
            out += [f'<h4 class="file">{link}</h4>', _file_text(entry, room)]
            texts += 1
            if entry is not None and isinstance(entry.get("text"), str):
                room -= min(len(entry["text"]), FILE_CHARS, room)
    if rest and why:
        out.append(f'<p class="files">{" · ".join(rest)}</p>')
    elif rest:
        out.append(f'<p class="note">{len(rest):,} more file(s), text not shown (a page shows the text of {PAGE_FILES} files, '
                   f'{PAGE_CHARS:,} characters in all):</p><p>{" · ".join(rest)}</p>')
    if result is not None and (result.left_out or result.left_out_rest):
        left = [html.escape(shown(f)) for f in result.left_out] + (["and every other file not above"] if result.left_out_rest else [])
        out.append(f"<p>Left out of the record (judged missing; {html.escape(', '.join(result.limits_hit or []))}): {' · '.join(left)}</p>")
    return "\n".join(out)
