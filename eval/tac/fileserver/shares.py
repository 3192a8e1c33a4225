"""Public link shares: the store (a JSON file in the state folder) and ownCloud's OCS answers.

A share is `{id, token, path, item_type, permissions, stime, password}`; `path` is relative to the
served folder ("/Documents/x.md"). Tokens are 15 letters and digits, as ownCloud's. The store is
read when the server starts (the agent's shares reach the evaluator's server) and written on every
change. It is data the agent could have written (`.image/fileserver/shares.json`), so it is read as
such: a regular file only (never a link or a FIFO), at most `MAX_STORE_BYTES`, and a store that does
not parse (or nests too deep) is an empty one; each entry is rebuilt from fields of the right type,
and one whose path is not a clean path inside the served folder (`clean_path`) is dropped. Where a
path leads is checked again when it is served (app.py): never through a link, never out of the root.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import secrets
import stat
import string
import threading
import time
from typing import Any
from xml.sax.saxutils import escape

TOKEN_CHARS = string.ascii_letters + string.digits
MAX_SHARES = 10_000
MAX_STORE_BYTES = 4 * 1024 * 1024
MAX_PATH_CHARS = 4096
_TOKEN = re.compile(r"[A-Za-z0-9]{1,64}")


def clean_path(path: object) -> str | None:
    """'/Documents/x.md' for 'Documents/x.md', '/Documents//x.md/'...; None for what is not a path
    inside the root: a `..` step anywhere (never clamped at the root), a NUL or another control
    character, not a string, too long."""
    if not isinstance(path, str) or len(path) > MAX_PATH_CHARS or any(ord(c) < 32 or c == "\x7f" for c in path):
        return None
    raw = path.strip()
    if ".." in raw.split("/"):
        return None
    return posixpath.normpath("/" + raw.lstrip("/"))


def read_store(file: str) -> object:
    """The parsed store, or None: only a regular file (no link followed, a FIFO never waited on), at
    most MAX_STORE_BYTES, JSON that parses without nesting past the interpreter's limit."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_STORE_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_STORE_BYTES + 1)
        return json.loads(data) if len(data) <= MAX_STORE_BYTES else None
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)


def valid_share(entry: object) -> dict[str, Any] | None:
    """A share rebuilt from a stored entry (only its known fields, each of its type), or None."""
    if not isinstance(entry, dict):
        return None
    token, share_id, path = entry.get("token"), entry.get("id"), clean_path(entry.get("path"))
    if not isinstance(token, str) or not _TOKEN.fullmatch(token) or type(share_id) is not int or not 0 < share_id < 2**53 or path is None:
        return None
    permissions, stime = entry.get("permissions"), entry.get("stime")
    return {
        "id": share_id, "token": token, "path": path,
        "item_type": entry.get("item_type") if entry.get("item_type") in ("file", "folder") else "file",
        "permissions": permissions if type(permissions) is int and 0 <= permissions < 2**31 else 1,
        "stime": stime if type(stime) is int and 0 <= stime < 2**53 else 0,
        "password": bool(entry.get("password")),
    }


class ShareStore:
    """The shares of one server, kept in `<state>/shares.json`."""

    def __init__(self, state_dir: str) -> None:
        self.file = os.path.join(state_dir, "shares.json")
        self._lock = threading.Lock()
        self.shares: list[dict[str, Any]] = self._load()

    def _load(self) -> list[dict[str, Any]]:
        data = read_store(self.file)
        keep = [s for s in map(valid_share, data[:MAX_SHARES] if isinstance(data, list) else []) if s is not None]
        return keep

    def _save(self) -> None:
        os.makedirs(os.path.dirname(self.file), exist_ok=True)
        tmp = f"{self.file}.tmp{os.getpid()}"
        try:
            os.unlink(tmp)  # whatever is there (a link) is not followed
        except FileNotFoundError:
            pass
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644), "w", encoding="utf-8") as f:
            json.dump(self.shares, f)
        os.replace(tmp, self.file)

    def create(self, path: str, item_type: str, permissions: int, password: str) -> dict[str, Any]:
        with self._lock:
            share = {
                "id": max((s["id"] for s in self.shares), default=0) + 1,
                "token": "".join(secrets.choice(TOKEN_CHARS) for _ in range(15)),
                "path": path,
                "item_type": item_type,
                "permissions": permissions,
                "stime": int(time.time()),
                "password": bool(password),
            }
            self.shares.append(share)
            self._save()
            return share

    def by_token(self, token: str) -> dict[str, Any] | None:
        return next((s for s in self.shares if s["token"] == token), None)

    def by_id(self, share_id: int) -> dict[str, Any] | None:
        return next((s for s in self.shares if s["id"] == share_id), None)

    def delete(self, share_id: int) -> bool:
        with self._lock:
            before = len(self.shares)
            self.shares = [s for s in self.shares if s["id"] != share_id]
            if len(self.shares) == before:
                return False
            self._save()
            return True


def share_data(share: dict[str, Any], base: str, user: str) -> dict[str, Any]:
    """A share as the OCS API describes it."""
    name = posixpath.basename(share["path"]) or "/"
    return {
        "id": share["id"], "share_type": 3, "uid_owner": user, "displayname_owner": user,
        "permissions": share["permissions"], "stime": share["stime"], "parent": None, "expiration": None,
        "token": share["token"], "uid_file_owner": user, "displayname_file_owner": user, "path": share["path"],
        "item_type": share["item_type"], "storage_id": f"home::{user}", "file_target": f"/{name}",
        "share_with": None, "share_with_displayname": None, "name": "", "mail_send": 0,
        "url": f"{base}/index.php/s/{share['token']}",
    }


def ocs_body(version: int, status: int, message: str, data: Any, as_json: bool) -> tuple[str, bytes]:
    """(content type, body) of an OCS answer. v1 says 100 for success, v2 200."""
    ok = status < 300
    code = (100 if version == 1 else 200) if ok else status
    meta = {"status": "ok" if ok else "failure", "statuscode": code, "message": message}
    if as_json:
        return "application/json; charset=utf-8", json.dumps({"ocs": {"meta": meta, "data": data}}).encode()
    return "text/xml; charset=UTF-8", f'<?xml version="1.0"?>\n<ocs>\n{_xml("meta", meta)}\n{_xml("data", data)}\n</ocs>\n'.encode()


def _xml(tag: str, value: Any) -> str:
    if isinstance(value, dict):
        return f"<{tag}>" + "".join(_xml(k, v) for k, v in value.items()) + f"</{tag}>"
    if isinstance(value, list):
        return f"<{tag}>" + "".join(_xml("element", v) for v in value) + f"</{tag}>"
    if value is None or value == "":
        return f"<{tag}/>"
    return f"<{tag}>{escape(str(value))}</{tag}>"
