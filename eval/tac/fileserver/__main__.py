"""Run the file server: `python -m fileserver --root DIR --state DIR [--port 8092] [--report-fd N]`.

Prints `listening on HOST:PORT` once it accepts connections, then serves until killed (the
sandbox ends it). `--report-fd` names a descriptor to which the path of
every file served is written as `{"open": PATH}` lines (the evaluator's progress pipe).
"""

from __future__ import annotations

import argparse
import json
import os
import threading

from cheroot import wsgi

from .app import FileServer, Settings


def reporter(fd: int):  # noqa: ANN201 - a callable or None
    lock = threading.Lock()

    def report(path: str) -> None:
        with lock:
            try:
                os.write(fd, (json.dumps({"open": path}) + "\n").encode())
            except OSError:
                pass

    return report


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="fileserver", description="An ownCloud-compatible file server over one folder.")
    p.add_argument("--root", required=True, help="the folder served")
    p.add_argument("--state", required=True, help="where shares are kept (outside --root)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8092)
    p.add_argument("--user", default="theagentcompany")
    p.add_argument("--password", default="theagentcompany")
    p.add_argument("--hide", action="append", default=[], help="a top-level name of --root never served (repeatable)")
    p.add_argument("--report-fd", type=int, default=None)
    p.add_argument("--threads", type=int, default=8)
    a = p.parse_args(argv)
    if a.report_fd is not None:
        os.set_inheritable(a.report_fd, False)
        _not_dumpable()  # no program of the user opens the report descriptor through /proc/<pid>/fd
    os.makedirs(a.root, exist_ok=True)  # a served export with no files, or state not made yet
    os.makedirs(a.state, exist_ok=True)
    settings = Settings(os.path.abspath(a.root), os.path.abspath(a.state), a.user, a.password, frozenset(a.hide),
                        reporter(a.report_fd) if a.report_fd is not None else None)
    server = wsgi.Server((a.host, a.port), FileServer(settings), numthreads=a.threads, server_name="ownCloud")
    server.prepare()
    print(f"listening on {server.bind_addr[0]}:{server.bind_addr[1]}", flush=True)  # --port 0: the port taken
    try:
        server.serve()
    finally:
        server.stop()


def _not_dumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0), as run_evaluator.py does for itself (it imports nothing of ours)."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


if __name__ == "__main__":
    main()
