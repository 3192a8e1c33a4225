"""The trajectory text a TheAgentCompany evaluator reads, rebuilt from our job record.

In the benchmark the agent browses the file server (ownCloud) and its trajectory holds the pages
it visited; evaluators look for them, e.g. `dir=/Documents/Human%20Resources%20Team/Attendance`
or `payments.xlsx&openfile=true`. Here the agent reads the same files in its workspace, so every
workspace file or folder its tool calls name becomes the URL ownCloud's web interface shows for
it: a folder as `…/index.php/apps/files/?dir=/<path>`, a file as its folder's page and the file
opened, `…?dir=/<path of the file>&openfile=true`. Paths are percent-encoded as a browser's
address bar has them (`/` kept, a space as `%20`). A served file server's URLs in the calls
(`curl …/remote.php/webdav/Documents/A%20B/x.txt`) name its files the same way.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import quote, unquote

from runners.core.job_record import JobRecord

OWNCLOUD_URL = "http://the-agent-company.com:8092"
MAX_TOKEN = 4096  # longer tokens of a call's arguments are not paths
FILES_APP = f"{OWNCLOUD_URL}/index.php/apps/files/"


def folder_url(rel: str) -> str:
    return f"{FILES_APP}?dir=/{quote(rel.strip('/'), safe='/')}"


def file_urls(rel: str) -> list[str]:
    parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
    return [folder_url(parent), f"{FILES_APP}?dir=/{quote(rel.strip('/'), safe='/')}&openfile=true"]


def trajectory_text(record: JobRecord, files: Path) -> str:
    """The evaluator view as JSON, then one line per file-server page the agent's calls imply."""
    messages = record.view.get("messages") or []
    urls: dict[str, None] = {}
    for rel in named_paths(messages, files):
        for url in [folder_url(rel)] if (files / rel).is_dir() else file_urls(rel):
            urls[url] = None
    return json.dumps(messages, ensure_ascii=False) + "\n" + "\n".join(urls)


def named_paths(messages: list[dict], files: Path) -> list[str]:
    """Workspace-relative paths (existing in `files`) that the agent's tool-call arguments name."""
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
                rel = _resolve(_url_path(tok), files)
                if rel:
                    found[rel] = None
    return list(found)


def _url_path(token: str) -> str:
    """A file-server URL's path, percent-decoded (`…/remote.php/webdav/Documents/A%20B` →
    `…/Documents/A B`, `…?dir=/Documents/A%20B&x` → `/Documents/A B`); other tokens as they are."""
    if "://" not in token:
        return token
    if "dir=" in token:
        token = token.split("dir=", 1)[1].split("&", 1)[0]
    return unquote(token.split("?", 1)[0])


def _resolve(token: str, files: Path) -> str | None:
    if len(token) > MAX_TOKEN:  # a script's text, not a path (and too long for one)
        return None
    parts = [p for p in token.replace("\\", "/").split("/") if p not in ("", ".")]
    for i in range(min(len(parts), 20)):
        rel = "/".join(parts[i:])
        if rel and ".." not in parts[i:] and _exists(files / rel):
            return rel
    return None


def _exists(path: Path) -> bool:
    """Whether the view has the path (links not followed); any name the agent wrote may be invalid."""
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):
        return False
