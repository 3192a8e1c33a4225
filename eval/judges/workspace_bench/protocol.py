"""What Workspace-Bench's own judge is shown, rebuilt from our job record (the default `llm_rubric`).

The benchmark's judge (`evaluation/src/agent_eval.py`) sends one user message: its instructions,
then a JSON object with the fields, in order, `taskId`, `task` (the record's own task text),
`steps`, `expectedOutputs` (the record's output names, sorted, once each), `workDir`, `outputs`,
`traceSummary` and `rubrics` (`index`, `rubric`, `rubricType`, `rubricDiff`). Each entry of
`outputs` has `path`, `relToWorkDir`, `sizeBytes`, `excerpt` (at most 2,000 characters), `mime`,
`hasImage`, `_imageDataUrl` and `note`; at most 10 entries, then a note of how many more there were
(of at most 50). Images up to 2 MB are also attached, at most 3; their data URL is in their entry
as well, as the benchmark's JSON has it.

The values follow the benchmark's rules: a MIME type only for images, pdf, the Office formats and
zip; for an image, no excerpt and a note when it is too large to attach; for pdf and the Office
formats, the extracted text, or no excerpt and a note when none came out; for other files, the
text (possibly empty). Adapted (docs/benchmarks.md, "Fidelity"): the files are the deliverable,
expected outputs first (the exact expected path, then the same name elsewhere, then by path); the
work folder is the record's `deliverable/` folder, and paths are given relative to the record
rather than as host paths, so the judge's input is the same on every machine; office text comes
from eval/judges/extract/read.py; the trace summary is our evaluator view's (the first 30 events).
"""

from __future__ import annotations

import base64
import re
import stat
from pathlib import Path
from typing import Any

from envs.safeio import lstat_inside, read_regular
from eval.benchmarks.workspace_bench import Extras, record_task_text
from eval.judges.extract.session import current
from runners.core.job_record import JobRecord
from runners.core.task import Task

MAX_FILES = 10
MAX_CANDIDATES = 50
MAX_CHARS = 2_000
MAX_TRACE_ITEMS = 30
MAX_IMAGES = 3
MAX_IMAGE_BYTES = 2_000_000
WORK_DIR = "deliverable"
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
MIME_TYPES = {
    **IMAGE_TYPES,
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".zip": "application/zip",
}
EXTRACTED = {".pdf", ".docx", ".xlsx", ".pptx", ".xls", ".doc", ".zip"}  # text comes from a parser, else a note
NO_TEXT = {".heic", ".heif"}  # images the judge neither reads nor attaches
TRUNCATED = "...[truncated]"
NOTE_IMAGE = "image over 2 MB or unreadable: not attached"
NOTE_NO_TEXT = "no text could be extracted from this {kind} file"


def clip(text: str, n: int = MAX_CHARS) -> str:
    return text if len(text) <= n else text[:n] + TRUNCATED


def shown(rel: str) -> str:
    """A deliverable path as text: bytes that are not UTF-8 (an agent-made name) shown escaped."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def name_key(name: str) -> str:
    """A file name compared loosely (case, spaces, quotes and brackets ignored), as the benchmark matches outputs."""
    return re.sub(r"[\s'\"‘’“”()（）\u3000]", "", name).lower()


def expected_outputs(task: Task) -> list[str]:
    """The output names the judge is told: the record's, sorted and once each (the task's output otherwise)."""
    names = task.extra_as(Extras).output_files or [task.output]
    return sorted({n.strip() for n in names if isinstance(n, str) and n.strip()})


def ordered_outputs(files: list[str], expected: list[str]) -> list[str]:
    """Deliverable paths, expected outputs first (exact path, then same name elsewhere), then by path."""
    paths = {e.strip().lstrip("./").strip("/") for e in expected if e.strip().strip("/.")}
    names = {name_key(Path(p).name) for p in paths}

    def rank(rel: str) -> tuple[int, str]:
        if rel in paths or any(rel.startswith(p + "/") for p in paths):
            return 0, rel
        return (1 if name_key(Path(rel).name) in names else 2), rel

    return sorted(files, key=rank)


def image_data_url(root: Path, rel: str) -> str | None:
    """The image as a data URL, None when it is over 2 MB or cannot be read as a regular file."""
    data = read_regular(root, rel, limit=MAX_IMAGE_BYTES + 1)
    if data is None or len(data) > MAX_IMAGE_BYTES:
        return None
    return f"data:{IMAGE_TYPES[Path(rel).suffix.lower()]};base64,{base64.b64encode(data).decode('ascii')}"


def file_entry(root: Path, rel: str) -> dict[str, Any] | None:
    """One output file as the judge sees it (None unless it is a regular file reached without links)."""
    st = lstat_inside(root, rel)
    if st is None or not stat.S_ISREG(st.st_mode):
        return None
    suffix = Path(rel).suffix.lower()
    entry: dict[str, Any] = {"path": f"{WORK_DIR}/{shown(rel)}", "relToWorkDir": shown(rel), "sizeBytes": st.st_size,
                             "excerpt": None, "mime": MIME_TYPES.get(suffix), "hasImage": False, "_imageDataUrl": None, "note": None}
    if suffix in IMAGE_TYPES:
        url = image_data_url(root, rel)
        entry.update(hasImage=url is not None, _imageDataUrl=url, note=None if url else NOTE_IMAGE)
    elif suffix in EXTRACTED:
        got = current().get(root, rel)
        if got.text:
            entry["excerpt"] = clip(got.text)
        else:  # no text, or unreadable within the bounds: the note says which
            entry["note"] = NOTE_NO_TEXT.format(kind=suffix[1:]) + (f" (unreadable: {got.error})" if got.error else "")
    elif suffix not in NO_TEXT:
        entry["excerpt"] = clip(current().get(root, rel).shown())
    return entry


def outputs(record: JobRecord, expected: list[str]) -> list[dict[str, Any]]:
    """The file entries the judge sees, with a note when some are left out."""
    rels = ordered_outputs(record.deliverable_files(), expected)[:MAX_CANDIDATES]
    entries = [e for e in (file_entry(record.deliverable_dir, rel) for rel in rels[:MAX_FILES]) if e is not None]
    if len(rels) > MAX_FILES:
        entries.append({"note": f"...[truncated {len(rels) - MAX_FILES} more files]"})
    return entries


def trace_summary(messages: list[dict[str, Any]], final_answer: str = "", max_items: int | None = MAX_TRACE_ITEMS) -> list[Any]:
    """The agent's texts and tool calls with their results, in order (the first `max_items` events,
    all for None), then its final message."""
    events: list[Any] = []
    results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool"}
    for m in messages:
        if m.get("role") != "assistant":
            continue
        if m.get("content"):
            events.append({"type": "text", "text": clip(str(m["content"]))})
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            out = results.get(call.get("id")) or {}
            events.append({"type": "tool", "tool": fn.get("name"), "input": clip(str(fn.get("arguments") or "")),
                           "output": clip(str(out.get("content") or "")), "isError": bool(out.get("is_error"))})
    if max_items is not None and len(events) > max_items:
        events = [*events[:max_items], f"...[truncated {len(events) - max_items} more items]"]
    return [*events, {"type": "final", "text": clip(final_answer)}] if final_answer else events


def task_fields(task: Task) -> dict[str, Any]:
    """The task part of the evidence (what the benchmark's record says; nothing the agent wrote)."""
    extra = task.extra_as(Extras)
    types, diffs = list(extra.rubric_types or []), list(extra.rubric_diffs or [])

    def text_at(values: list[Any], i: int) -> str | None:
        return values[i] if i < len(values) and isinstance(values[i], str) else None

    rubrics = [{"index": i, "rubric": r.text, "rubricType": text_at(types, i), "rubricDiff": text_at(diffs, i)} for i, r in enumerate(task.rubrics)]
    return {"taskId": task.id, "task": record_task_text(task), "steps": extra.steps, "expectedOutputs": expected_outputs(task),
            "rubrics": rubrics}


def payload(task: Task, record: JobRecord) -> dict[str, Any]:
    """The JSON evidence object, its fields in the benchmark's order."""
    fields = task_fields(task)
    trace = trace_summary(record.view.get("messages") or [], record.final_answer)
    return {"taskId": fields["taskId"], "task": fields["task"], "steps": fields["steps"], "expectedOutputs": fields["expectedOutputs"],
            "workDir": WORK_DIR, "outputs": outputs(record, fields["expectedOutputs"]), "traceSummary": trace, "rubrics": fields["rubrics"]}


def image_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The first 3 image outputs of the evidence as OpenAI-style image parts."""
    urls = [f["_imageDataUrl"] for f in body["outputs"] if f.get("_imageDataUrl")][:MAX_IMAGES]
    return [{"type": "image_url", "image_url": {"url": u}} for u in urls]
