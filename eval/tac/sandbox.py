"""What a TheAgentCompany evaluator sees, rebuilt in a temp folder from the job record.

- `files/`: the task's workspace as the agent left it (file-server export + staged inputs, the
  deliverable over them, deletions removed). It stands for both `/workspace` and the file
  server's root. It is a real copy (`cp --reflink=auto`: copy-on-write where the filesystem
  supports it), so an evaluator that writes can never touch the user's export.
- `utils/`: a copy of the task folder (grader reference files, as the benchmark's image has them).
- `instruction/`: task.md. `outputs/`: the trajectory file.
Absolute paths in the evaluator's string literals (`/workspace`, `/utils`, `/instruction`,
`/outputs`) are rewritten to these folders before it runs.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import tokenize
from pathlib import Path

from eval.record import JobRecord
from eval.task import Task

MOUNTS = ("workspace", "utils", "instruction", "outputs")
_MOUNT_RE = re.compile(r"(?<![\w/.])/(workspace|utils|instruction|outputs)(?=[/'\"\s{}]|$)")
OWNCLOUD_URL = "http://the-agent-company.com:8092"


def build_files_view(task: Task, record: JobRecord, dest: Path) -> Path:
    """Materialize the final workspace at `dest` (see module doc)."""
    _copy_tree(task.workspace, dest)
    for rel, src in task.stage.items():
        _place(Path(src), dest / rel)
    for rel in record.deliverable_files():
        _place(record.deliverable_dir / rel, dest / rel)
    for rel in record.deleted:
        target = dest / rel
        if target.is_file() or target.is_symlink():
            target.unlink()
    return dest


def _copy_tree(src: Path, dest: Path) -> None:
    """A real copy (evaluators may write), copy-on-write where the filesystem supports it."""
    if shutil.which("cp") and src.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["cp", "-a", "--reflink=auto", str(src), str(dest)], capture_output=True, text=True)
        if proc.returncode == 0:
            return
        shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest, symlinks=True)


def _place(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_symlink() or dest.exists():
        dest.unlink()
    shutil.copyfile(src, dest)


def rewrite_paths(source: str, mounts: dict[str, Path]) -> str:
    """The evaluator source with mount paths inside string literals pointed at `mounts`."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    edits = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.STRING and _MOUNT_RE.search(tok.string):
            start = offsets[tok.start[0] - 1] + tok.start[1]
            end = offsets[tok.end[0] - 1] + tok.end[1]
            new = _MOUNT_RE.sub(lambda m: str(mounts[m.group(1)]), tok.string)
            edits.append((start, end, new))
    for start, end, new in reversed(edits):
        source = source[:start] + new + source[end:]
    return source


def trajectory_text(record: JobRecord, files: Path) -> str:
    """The evaluator view as JSON, then one file-server URL per workspace file or folder the agent
    named in its tool calls — the offline counterpart of the pages the benchmark's checks look for
    (e.g. `dir=/Documents/Financials`)."""
    messages = record.view.get("messages") or []
    urls = []
    for path in _named_paths(messages, files):
        parent, name = (path, "") if (files / path).is_dir() else (str(Path(path).parent), Path(path).name)
        parent = "" if parent == "." else parent
        url = f"{OWNCLOUD_URL}/index.php/apps/files/?dir=/{parent}"
        urls.append(url + (f"&openfile={name}" if name else ""))
    return json.dumps(messages, ensure_ascii=False) + "\n" + "\n".join(urls)


def _named_paths(messages: list[dict], files: Path) -> list[str]:
    found: dict[str, None] = {}
    for m in messages:
        for call in m.get("tool_calls") or []:
            args = (call.get("function") or {}).get("arguments") or ""
            try:
                parsed = json.loads(args)
                args = " ".join(str(v) for v in parsed.values()) if isinstance(parsed, dict) else args
            except (json.JSONDecodeError, TypeError):
                pass
            tokens = re.findall(r"'([^']+)'|\"([^\"]+)\"|([^\s'\"|;&<>()]+)", args)
            for tok in ("".join(t) for t in tokens):
                rel = _resolve(tok, files)
                if rel:
                    found[rel] = None
    return list(found)


def _resolve(token: str, files: Path) -> str | None:
    parts = [p for p in token.replace("\\", "/").split("/") if p not in ("", ".")]
    for i in range(min(len(parts), 20)):
        rel = "/".join(parts[i:])
        if rel and ".." not in parts[i:] and (files / rel).exists():
            return rel
    return None
