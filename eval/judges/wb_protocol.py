"""What Workspace-Bench's own judge is shown, rebuilt from our job record (the default `llm_rubric`).

The benchmark's judge sends one user message: its instructions, then a JSON object with the task,
the expected output names, the candidate output files (path, size in bytes, MIME type, a text
excerpt of at most 2,000 characters; at most 10 files), a trace summary (the first 30 events,
strings clipped to 2,000 characters) and the rubrics with their types; up to 3 image outputs are
attached as images. Its instructions ask for evidence-only judging, with some leniency for small
mistakes in naming or finding files. Here the candidate files are the deliverable (what the agent
created or changed), ordered so that the expected outputs come first: the exact expected path,
then a file with the expected name elsewhere, then the rest by path.
"""

from __future__ import annotations

import base64
import mimetypes
import re
import stat
from pathlib import Path
from typing import Any

from envs.safeio import lstat_inside, read_regular
from eval.extraction import current
from runners.core.job_record import JobRecord
from runners.core.task import Task

MAX_FILES = 10
MAX_CHARS = 2_000
MAX_TRACE_ITEMS = 30
MAX_IMAGES = 3
MAX_IMAGE_BYTES = 2_000_000
IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
TRUNCATED = "...[truncated]"


def clip(text: str, n: int = MAX_CHARS) -> str:
    return text if len(text) <= n else text[:n] + TRUNCATED


def name_key(name: str) -> str:
    """A file name compared loosely (case, spaces, quotes and brackets ignored), as the benchmark matches outputs."""
    return re.sub(r"[\s'\"‘’“”()（）\u3000]", "", name).lower()


def ordered_outputs(files: list[str], expected: list[str]) -> list[str]:
    """Deliverable paths, expected outputs first (exact path, then same name elsewhere), then by path."""
    paths = {e.strip().lstrip("./").strip("/") for e in expected if e.strip().strip("/.")}
    names = {name_key(Path(p).name) for p in paths}

    def rank(rel: str) -> tuple[int, str]:
        if rel in paths or any(rel.startswith(p + "/") for p in paths):
            return 0, rel
        return (1 if name_key(Path(rel).name) in names else 2), rel

    return sorted(files, key=rank)


def file_entry(root: Path, rel: str) -> dict[str, Any] | None:
    """One output file as the judge sees it (None unless it is a regular file reached without links)."""
    st = lstat_inside(root, rel)
    if st is None or not stat.S_ISREG(st.st_mode):
        return None
    suffix = Path(rel).suffix.lower()
    is_image = suffix in IMAGE_SUFFIXES
    text = "" if is_image else current().get(root, rel).shown()
    return {
        "path": rel,
        "sizeBytes": st.st_size,
        "mime": IMAGE_SUFFIXES.get(suffix) or mimetypes.guess_type(rel)[0],
        "excerpt": clip(text) if text else None,
        "hasImage": is_image and st.st_size <= MAX_IMAGE_BYTES,
    }


def outputs(record: JobRecord, expected: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The file entries the judge sees (with a note when some are left out) and the image files to attach."""
    rels = ordered_outputs(record.deliverable_files(), expected)
    entries = [e for e in (file_entry(record.deliverable_dir, rel) for rel in rels[:MAX_FILES]) if e is not None]
    if len(rels) > MAX_FILES:
        entries.append({"note": f"...[truncated {len(rels) - MAX_FILES} more files]"})
    images = [e["path"] for e in entries if e.get("hasImage")][:MAX_IMAGES]
    return entries, images


def trace_summary(messages: list[dict[str, Any]]) -> list[Any]:
    """The agent's texts and tool calls with their results, in order: the first 30 events."""
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
                           "output": clip(str(out.get("content") or "")), "isError": bool(out.get("is_error"))})  # fmt: skip
    if len(events) > MAX_TRACE_ITEMS:
        return [*events[:MAX_TRACE_ITEMS], f"...[truncated {len(events) - MAX_TRACE_ITEMS} more items]"]
    return events


def payload(task: Task, record: JobRecord) -> tuple[dict[str, Any], list[str]]:
    """The JSON evidence object and the image files to attach."""
    expected = list(task.extra.get("output_files") or [task.output])
    files, images = outputs(record, expected)
    types = list(task.extra.get("rubric_types") or [])
    rubrics = [{"index": i, "rubric": r.text, "rubricType": types[i] if i < len(types) else None} for i, r in enumerate(task.rubrics)]
    trace = trace_summary(record.view.get("messages") or [])
    if record.final_answer:
        trace = [*trace, {"type": "final", "text": clip(record.final_answer)}]
    body = {"taskId": task.id, "task": task.prompt, "expectedOutputs": expected, "outputs": files, "traceSummary": trace,
            "rubrics": rubrics}  # fmt: skip
    return body, images


def image_parts(record: JobRecord, images: list[str]) -> list[dict[str, Any]]:
    """The image outputs as OpenAI-style image parts (data URLs)."""
    parts = []
    for rel in images:
        data = read_regular(record.deliverable_dir, rel, limit=MAX_IMAGE_BYTES)
        if data is not None:
            url = f"data:{IMAGE_SUFFIXES[Path(rel).suffix.lower()]};base64,{base64.b64encode(data).decode('ascii')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts
