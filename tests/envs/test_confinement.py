"""Confinement: `read` stays in the workspace; bash under bubblewrap sees nothing else of the host."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from envs import sandbox
from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall
from envs.sandbox import SandboxUnavailable, bwrap_problem

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unusable: {bwrap_problem()}")


def call(env: WorkspaceEnv, name: str, **args):
    return env.execute(ToolCall(id="c", name=name, arguments=json.dumps(args)), 1)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("inside\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return root


@pytest.fixture
def boxed(ws: Path):
    e = WorkspaceEnv(ws, EnvConfig(sandbox="bwrap"))
    yield e
    e.close()


def test_read_refuses_paths_outside_the_workspace(ws):
    os.symlink(ws.parent / "secret.txt", ws / "link.txt")
    os.symlink("/etc", ws / "etc")
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none"))
    for path in ["/etc/passwd", "../secret.txt", "link.txt", "etc/passwd", str(ws.parent / "secret.txt")]:
        r = call(e, "read", path=path)
        assert r.is_error and "outside the workspace" in r.content, path
        assert "outside\n" not in r.content and "root:" not in r.content
    assert "through a symbolic link" in call(e, "read", path="link.txt").content
    assert call(e, "read", path=str(ws / "notes.txt")).content == "inside"  # absolute paths inside are fine
    assert call(e, "read", path="sub/../notes.txt").content == "inside"
    e.close()


def test_secrets_never_reach_the_shell(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-should-not-leak")
    monkeypatch.setenv("RUNNINGTAB_CANARY", "canary-value")
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none"))
    r = call(e, "bash", command="env")
    e.close()
    assert "sk-test-should-not-leak" not in r.content and "canary-value" not in r.content
    env = dict(line.split("=", 1) for line in r.content.splitlines())
    assert env["HOME"] != os.environ.get("HOME") and env["PATH"].split(":")[0].endswith("/bin")
    with pytest.raises(ValueError, match="credential-like"):
        EnvConfig(env_passthrough=["LANG", "OPENAI_API_KEY"])


def test_sandbox_bwrap_without_bubblewrap_is_a_clear_error(ws, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    sandbox.bwrap_problem.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="bwrap is not on PATH.*bubblewrap"):
            WorkspaceEnv(ws, EnvConfig(sandbox="bwrap"))
        fallback = WorkspaceEnv(ws, EnvConfig(sandbox="auto"))  # falls back (with a warning)
        assert not fallback.sandboxed
        assert call(fallback, "bash", command="cat notes.txt").content == "inside"
        fallback.close()
    finally:
        sandbox.bwrap_problem.cache_clear()


@needs_bwrap
def test_bwrap_hides_the_host(boxed, ws):
    assert boxed.sandboxed
    for command in ["cat /etc/hostname", "ls /work/shared", f"cat {ws.parent / 'secret.txt'}", "ls /root/.ssh /home", f"ls {ws}"]:
        r = call(boxed, "bash", command=command)
        assert r.is_error and "No such file or directory" in r.content, (command, r.content)
    assert call(boxed, "bash", command="pwd").content == boxed.agent_root == "/workspace"  # not the host's scratch path
    assert call(boxed, "bash", command="cat notes.txt").content == "inside"


@needs_bwrap
def test_bwrap_cannot_write_outside_the_workspace(boxed, ws):
    venv_file = Path(os.environ.get("VIRTUAL_ENV", "/usr")) / "runningtab-escape"
    for target in ["/usr/runningtab-escape", "/etc/runningtab-escape", "/runningtab-escape", str(venv_file)]:
        r = call(boxed, "bash", command=f"echo x > {target}")
        assert r.is_error and "Read-only file system" in r.content, (target, r.content)
        assert not Path(target).exists()
    # /tmp is the sandbox's own: a write beside the workspace (here under the host's /tmp) stays in it
    sibling = ws.parent / "runningtab-escape"
    call(boxed, "bash", command=f"echo x > {sibling}")
    assert not sibling.exists()
    assert not call(boxed, "bash", command="echo ok > inside.txt").is_error
    assert (ws / "inside.txt").read_text() == "ok\n"


@needs_bwrap
def test_bwrap_has_no_network_to_host_loopback(ws):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    probe = f"python -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')\""
    try:
        plain = WorkspaceEnv(ws, EnvConfig(sandbox="none"))
        assert call(plain, "bash", command=probe).content == "connected"  # the server is reachable unsandboxed
        plain.close()
        boxed = WorkspaceEnv(ws, EnvConfig(sandbox="bwrap"))
        r = call(boxed, "bash", command=probe)
        boxed.close()
        assert r.is_error and "connected" not in r.content and "Error" in r.content
    finally:
        server.close()


@needs_bwrap
def test_bwrap_secrets_and_capabilities(boxed, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-should-not-leak")
    r = call(boxed, "bash", command="env; cat /proc/*/environ | tr '\\0' '\\n'; grep CapEff /proc/self/status")
    assert "sk-test-should-not-leak" not in r.content
    assert "CapEff:\t0000000000000000" in r.content


@needs_bwrap
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext missing (Debian package poppler-utils)")
def test_bwrap_shell_has_document_tools(boxed, ws):
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(ws / "report.pdf"))
    c.drawString(72, 720, "Quarterly revenue 4,210")
    c.save()
    assert "Quarterly revenue 4,210" in call(boxed, "bash", command="pdftotext report.pdf -").content
    r = call(boxed, "bash", command="python -c 'import docx, openpyxl, pypdf, pptx; print(\"ok\")' && python3 -V")
    assert r.content.startswith("ok\nPython 3"), r.content
