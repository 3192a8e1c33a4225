"""`python -m eval.harbor.closure`: print (JSON) the repo-relative files of the project's modules the
tab's MCP server loads when it starts, serves a `read` and a `bash`, and writes its record.

Run in a child process, so that only the server's own imports are counted (bundle.py).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from eval.config import REPO_ROOT


def main() -> None:
    from tab.mcp.__main__ import compose
    from tab.mcp.server import serve_stdio  # noqa: F401 - what the server imports to serve
    from tab.mcp.session import TabSession

    env, tab = compose(["env.sandbox=none"])
    with tempfile.TemporaryDirectory(prefix="rt-closure-") as tmp:
        ws, rec = Path(tmp) / "ws", Path(tmp) / "rec"
        ws.mkdir()
        rec.mkdir()
        (ws / "a.md").write_text("hello\n")
        session = TabSession(ws, env, tab, record=rec)
        session.call("tab_add", {"requirements": ["hello"]})
        session.call("read", {"path": "a.md"})
        session.call("bash", {"command": "ls && cat a.md"})
        session.call("tab_review", {})
        session.finish()
        session.close()
    root = REPO_ROOT.resolve()
    files: set[str] = set()
    for mod in list(sys.modules.values()):
        path = Path(getattr(mod, "__file__", None) or "/").resolve()
        if path.is_relative_to(root) and path.suffix == ".py":
            rel = path.relative_to(root)
            files.add(rel.as_posix())
            for parent in rel.parents:  # every package on the way down needs its __init__.py
                if parent != Path(".") and (root / parent / "__init__.py").is_file():
                    files.add((parent / "__init__.py").as_posix())
    print(json.dumps(sorted(files)))


if __name__ == "__main__":
    main()
