"""Model servers die with the process that started them.

A server runs in a session of its own, so that stopping it reaches every process it spawned (vLLM's
engine and workers). That also means nothing ends it when the process that started it is killed: a
driver killed with its Ray workers used to leave its server running, holding its memory (or a GPU),
parented to init. So every server is started under a lifeline (`wrap`): a small session leader, this
file run as a script, that runs the server in its group and, when the process that started it is
gone, stops the group (SIGTERM, then SIGKILL after the grace period). Stopping the group as usual
(`ModelServer.stop`) stops the lifeline with it; it exits with the server's exit code.

Should a lifeline itself be killed, the server still carries its owner in its environment
(`RUNNINGTAB_SERVER_OWNER=<scope>:<host>:<pid>`, inherited by everything it spawns): a sweep's start
stops the servers that its own dead drivers left behind (`stop_orphans`), as it cleans their scratch.

Run as a script it imports only the standard library: `python lifeline.py PARENT GRACE_S -- CMD...`.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

OWNER_ENV = "RUNNINGTAB_SERVER_OWNER"
POLL_S = 0.5
log = logging.getLogger(__name__)


def wrap(cmd: list[str], grace_s: float) -> list[str]:
    """`cmd` under a lifeline tied to this process (start it with `start_new_session=True`)."""
    return [sys.executable, str(Path(__file__).resolve()), str(os.getpid()), f"{grace_s:g}", "--", *cmd]


def owner_label(scope: str) -> str:
    """The owner a server started by this process carries: `scope` names what it serves (a sweep)."""
    return f"{scope}:{socket.gethostname()}:{os.getpid()}"


def stop_orphans(scope: str, grace_s: float = 10.0) -> list[int]:
    """Stop the server process groups of `scope` on this host whose owner process is gone; returns
    their group ids. A process that cannot be read (another user's) is not ours and is left alone."""
    host, groups = socket.gethostname(), set()
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            label = _owner(environ.read_bytes())
            pgid = os.getpgid(int(environ.parent.name)) if label else 0
        except (OSError, ValueError):
            continue
        if label and label.rpartition(":")[0] == f"{scope}:{host}" and not pid_alive(int(label.rpartition(":")[2])):
            groups.add(pgid)
    for pgid in groups:
        log.warning("stopping an orphaned model server (process group %d) left by a killed driver", pgid)
        _stop_group(pgid, grace_s)
    return sorted(groups)


def _owner(environ: bytes) -> str | None:
    prefix = f"{OWNER_ENV}=".encode()
    for item in environ.split(b"\0"):
        if item.startswith(prefix):
            label = item[len(prefix):].decode(errors="replace")
            return label if label.rpartition(":")[2].isdigit() else None
    return None


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop_group(pgid: int, grace_s: float) -> None:
    """SIGTERM the group, SIGKILL what is left of it after `grace_s`."""
    try:
        os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and _group_alive(pgid):
            time.sleep(0.2)
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def main(argv: list[str]) -> int:
    parent, grace_s, sep, cmd = int(argv[0]), float(argv[1]), argv[2], argv[3:]
    assert sep == "--" and cmd, "usage: lifeline.py PARENT GRACE_S -- CMD..."
    # A stop signals the whole group: the server shuts down on its own signal, and the lifeline
    # waits for it (relaying it would signal the server twice, which makes uvicorn exit at once).
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: None)
    child = subprocess.Popen(cmd)
    while (code := child.poll()) is None:
        if os.getppid() != parent:
            print(f"lifeline: process {parent}, which started this server, is gone: stopping the server",
                  file=sys.stderr, flush=True)
            os.killpg(0, signal.SIGTERM)
            try:
                child.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
            os.killpg(0, signal.SIGKILL)  # what the server left behind, and the lifeline itself
        time.sleep(POLL_S)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
