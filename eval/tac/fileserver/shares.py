"""Public link shares: the store (a JSON file in the state folder) and ownCloud's OCS answers.

A share is `{id, token, path, item_type, permissions, stime, password}`; `path` is relative to the
served folder ("/Documents/x.md"). Tokens are 15 letters and digits, as ownCloud's. The store is
read when the server starts (the agent's shares reach the evaluator's server) and written on every
change. A store that does not parse is treated as empty: it is data the agent could have written.
"""

from __future__ import annotations

import json
import os
import posixpath
import secrets
import string
import threading
import time
from typing import Any
from xml.sax.saxutils import escape

TOKEN_CHARS = string.ascii_letters + string.digits
MAX_SHARES = 10_000
MAX_STORE_BYTES = 4 * 1024 * 1024


def clean_path(path: str) -> str | None:
    """'/Documents/x.md' for 'Documents/x.md', '/Documents//x.md/'...; None for paths leaving the root."""
    norm = posixpath.normpath("/" + (path or "").strip().lstrip("/"))
    return None if ".." in norm.split("/") else norm


class ShareStore:
    """The shares of one server, kept in `<state>/shares.json`."""

    def __init__(self, state_dir: str) -> None:
        self.file = os.path.join(state_dir, "shares.json")
        self._lock = threading.Lock()
        self.shares: list[dict[str, Any]] = self._load()

    def _load(self) -> list[dict[str, Any]]:
        try:
            with open(self.file, "rb") as f:
                data = json.loads(f.read(MAX_STORE_BYTES + 1)[:MAX_STORE_BYTES])
        except (OSError, ValueError):
            return []
        keep = []
        for s in data if isinstance(data, list) else []:
            if isinstance(s, dict) and isinstance(s.get("token"), str) and isinstance(s.get("path"), str) and isinstance(s.get("id"), int):
                keep.append(s)
        return keep[:MAX_SHARES]

    def _save(self) -> None:
        os.makedirs(os.path.dirname(self.file), exist_ok=True)
        tmp = f"{self.file}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
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
