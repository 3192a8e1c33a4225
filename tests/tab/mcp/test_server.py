"""The tab as an MCP server (`python -m tab.mcp`), driven by the MCP SDK's own client over stdio and
streamable HTTP: the same tool results and the same `tab.json` as the loop's in-process tab."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall
from envs.sandbox import bwrap_problem
from tab.config import TabConfig
from tab.tab import Tab

if TYPE_CHECKING:
    from mcp import Client

# mcp (0.8 s of CPU) is imported by the tests that use it, not at every xdist worker's collection
REPO = Path(__file__).resolve().parents[3]
LIMIT_S = 90  # a whole scripted session, server start included

REQUIREMENTS = ["Hotel limit per night on business trips", "Deadline for submitting expense claims"]
# (tool, arguments): the scripted agent. r2 is first resolved against the hotel excerpt (refused:
# no shared word), then against an entry that does not exist (refused), and stays open.
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("tab_add", {"requirements": REQUIREMENTS}),
    ("bash", {"command": "ls policies"}),
    ("read", {"path": "policies/hotel.md"}),
    ("bash", {"command": "grep -n invoice policies/claims.md"}),
    ("tab_review", {}),
    ("tab_resolve", {"id": "r1", "status": "done", "entries": ["L1"]}),
    ("tab_resolve", {"id": "r2", "status": "done", "entries": ["L1"]}),
    ("tab_resolve", {"id": "r2", "status": "done", "entries": ["L7"]}),
    ("tab_show", {"entry_id": "L2"}),
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "policies").mkdir(parents=True)
    (ws / "policies/hotel.md").write_text("Article 7 Hotel\nHotel: up to 500 per night on business trips.\n")
    (ws / "policies/claims.md").write_text(
        "Article 9 Claims\nSubmit each invoice within 30 days.\nLate claims are refused.\n")
    (ws / "policies/archive_2019.md").write_text("Superseded rules of 2019.\n")
    return ws


def in_process(ws: Path) -> tuple[list[tuple[str, bool]], list[str | None], dict[str, Any]]:
    """The same script through the loop's own path: one WorkspaceEnv with the Tab, one turn per call."""
    tab = Tab(ws, TabConfig())
    env = WorkspaceEnv(ws, EnvConfig(), [tab])
    try:
        results = []
        for turn, (name, args) in enumerate(SCRIPT, 1):
            r = env.execute(ToolCall(f"c{turn}", name, json.dumps(args)), turn)
            results.append((r.content, r.is_error))
        stops = [env.on_stop(len(SCRIPT) + 1), env.on_stop(len(SCRIPT) + 2)]
        return results, stops, tab.record()
    finally:
        env.close()


async def scripted_session(client: Client, record: Path) -> dict[str, Any]:
    """Run SCRIPT and the finish check over MCP; checks what the client sees as it goes."""
    from tab.mcp.server import FINISH

    listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == {"read", "bash", "tab_add", "tab_review", "tab_resolve", "tab_show", FINISH}
    assert "tab_add" in (client.instructions or "") and FINISH in (client.instructions or "")
    results = []
    for name, args in SCRIPT:
        r = await client.call_tool(name, args)
        results.append((r.content[0].text, r.is_error))
        if name == "read":  # the record is written as the session goes, not only at its end
            mid = json.loads((record / "tab.json").read_text())
            assert [e["path"] for e in mid["read_log"]] == ["policies/hotel.md"]
    finish = await client.call_tool(FINISH, {})
    again = await client.get_prompt(FINISH)
    return {"tools": listed, "results": results, "finish": finish.content[0].text,
            "again": again.messages[0].content.text}


def check_session(seen: dict[str, Any], record: Path, ws: Path) -> None:
    """Tool results and tab.json are exactly the in-process tab's, and say what the script did."""
    from tab.mcp.server import FINISH_NOTHING

    expected, stops, expected_record = in_process(ws)
    env = WorkspaceEnv(ws, EnvConfig(), [Tab(ws, TabConfig())])
    try:
        for schema in env.tools():
            fn = schema["function"]
            assert seen["tools"][fn["name"]].input_schema == fn["parameters"]
            assert seen["tools"][fn["name"]].description == fn["description"]
    finally:
        env.close()
    assert seen["results"] == expected
    assert seen["finish"] == stops[0] and stops[1] is None and seen["again"] == FINISH_NOTHING

    results = dict(zip([n for n, _ in SCRIPT], seen["results"], strict=False))
    assert all(text.splitlines()[-1].startswith("[tab]") for text, _ in seen["results"])
    assert "+L1 policies/hotel.md" in results["read"][0]
    refused = seen["results"][6:8]
    assert all(is_error for _, is_error in refused) and not seen["results"][5][1]
    assert "r2" in seen["finish"]

    tab = json.loads((record / "tab.json").read_text())
    assert tab == expected_record
    assert [(e["id"], e["path"]) for e in tab["read_log"]] == [("L1", "policies/hotel.md"), ("L2", "policies/claims.md")]
    assert "invoice" in tab["read_log"][1]["excerpt"] and "grep" in tab["read_log"][1]["command"]
    assert {c["path"] for c in tab["candidates"]} == {"policies/archive_2019.md"}
    status = {r["id"]: (r["status"], r["entries"]) for r in tab["requirements"]}
    assert status == {"r1": ("done", ["L1"]), "r2": ("open", [])}
    why = [e["why"] for e in tab["events"] if e["kind"] == "resolve_refused"]
    assert why == ["no_shared_words", "unknown_entries"]
    checks = [e for e in tab["events"] if e["kind"] == "finish_check"]
    assert [c["case"] for c in checks] == ["open"] and checks[0]["text"] == seen["finish"]


def server_args(ws: Path, record: Path, *extra: str) -> list[str]:
    return ["-m", "tab.mcp", "--workspace", str(ws), "--record", str(record), *extra]


def private_tmp(tmp_path: Path) -> Path:
    """The server's TMPDIR: where its shell's scratch folder lives, so a test can see it removed."""
    tmp = tmp_path / "server-tmp"
    tmp.mkdir()
    return tmp


@pytest.mark.slow
def test_stdio_session(workspace: Path, tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    record, tmp = tmp_path / "record", private_tmp(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=server_args(workspace, record), cwd=str(REPO),
                                   env={"TMPDIR": str(tmp)})

    async def main() -> dict[str, Any]:
        with anyio.fail_after(LIMIT_S):
            async with Client(params, read_timeout_seconds=30) as client:
                return await scripted_session(client, record)

    seen = anyio.run(main)
    check_session(seen, record, workspace)
    assert list(tmp.iterdir()) == []  # the session was closed: the shell's scratch folder is gone


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ready_line_of(proc: subprocess.Popen, limit_s: float) -> str:
    """The server's first stderr line, read within `limit_s`."""
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(proc.stderr.readline() if proc.stderr else ""), daemon=True)
    reader.start()
    reader.join(limit_s)
    assert got and got[0], f"no ready line within {limit_s}s"
    return got[0].rstrip("\n")


def test_stdio_says_it_is_ready_on_stderr_and_keeps_stdout_for_mcp(workspace: Path, tmp_path: Path) -> None:
    """The ready line goes to stderr (stdout is the stdio transport: a stray byte there breaks the client)."""
    argv = [sys.executable, *server_args(workspace, tmp_path / "record")]
    proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "TMPDIR": str(private_tmp(tmp_path))})
    try:
        ready = ready_line_of(proc, LIMIT_S / 2)
    finally:
        out, _ = proc.communicate(input="", timeout=60)  # stdin closed: the session ends
    assert ready.startswith(f"tab.mcp ready: the tab of {workspace.resolve()} (read, bash, tab_add") and "tab_finish;" in ready, ready
    assert f"tab.json kept in {(tmp_path / 'record').resolve()}" in ready and "over stdio" in ready
    assert out == "" and proc.returncode == 0


def test_the_ready_lines_name_only_real_flags(workspace: Path, tmp_path: Path) -> None:
    from tab.mcp.__main__ import parse_args, ready_line

    lines = [ready_line("stdio", workspace, None, ["bash"]), ready_line("http://127.0.0.1:1/mcp", workspace, None, ["bash"])]
    flags = {w.strip("();,") for line in lines for w in line.split() if w.startswith(("--", "(--"))}
    assert flags == {"--transport", "--record"}
    args = parse_args(["--workspace", str(workspace), "--transport", "http", "--record", str(tmp_path / "r")])
    assert (args.transport, args.record) == ("http", tmp_path / "r")


def test_http_session(workspace: Path, tmp_path: Path) -> None:
    from mcp import Client

    record, port, tmp = tmp_path / "record", free_port(), private_tmp(tmp_path)
    argv = [sys.executable, *server_args(workspace, record, "--transport", "http", "--port", str(port))]
    proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "TMPDIR": str(tmp)})
    try:
        ready = ready_line_of(proc, LIMIT_S / 2)
        assert ready.startswith("tab.mcp ready: the tab of") and f"at http://127.0.0.1:{port}/mcp" in ready, ready
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # "ready" means listening: no wait, no retry

        async def main() -> dict[str, Any]:
            with anyio.fail_after(LIMIT_S):
                async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=30) as client:
                    return await scripted_session(client, record)

        seen = anyio.run(main)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err  # SIGTERM is a clean stop
    check_session(seen, record, workspace)
    assert list(tmp.iterdir()) == []


@pytest.mark.skipif(bwrap_problem() is not None, reason="bubblewrap cannot run here")
def test_bash_is_sandboxed_like_a_job(workspace: Path, tmp_path: Path) -> None:
    """The agent's bash sees the workspace but not the record beside it (bubblewrap, as in jobs)."""
    from mcp import Client, StdioServerParameters

    record = tmp_path / "record"
    params = StdioServerParameters(command=sys.executable, args=server_args(workspace, record), cwd=str(REPO))

    async def main() -> str:
        with anyio.fail_after(LIMIT_S):
            async with Client(params, read_timeout_seconds=30) as client:
                cmd = f"test -e {record}/tab.json && echo VISIBLE || echo HIDDEN; cat policies/hotel.md | head -1; pwd"
                return (await client.call_tool("bash", {"command": cmd})).content[0].text

    out = anyio.run(main)
    assert (record / "tab.json").is_file()
    # the foreign agent knows the workspace by its host path, and its wrapped bash finds it there
    assert out.splitlines()[:3] == ["HIDDEN", "Article 7 Hotel", os.path.realpath(workspace)]


@pytest.mark.parametrize("case", ["record_inside", "no_tab", "not_a_folder", "foreign_override", "open_host"])
def test_bad_invocations_are_refused_with_a_reason(case: str, workspace: Path, tmp_path: Path) -> None:
    args = {
        "record_inside": (["--workspace", str(workspace), "--record", str(workspace / "rec")], "inside the workspace"),
        "no_tab": (["--workspace", str(workspace), "method=dci"], "has no tab"),
        "not_a_folder": (["--workspace", str(tmp_path / "nope")], "is not a directory"),
        "foreign_override": (["--workspace", str(workspace), "model=openai"], "not for env.* or method"),
        "open_host": (["--workspace", str(workspace), "--transport", "http", "--host", "0.0.0.0"], "not a loopback"),
    }[case]
    proc = subprocess.run([sys.executable, "-m", "tab.mcp", *args[0]], cwd=REPO, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, env={**os.environ})
    assert proc.returncode != 0 and args[1] in proc.stderr
    assert not (workspace / "rec").exists()


def test_an_ablation_is_a_job_override(workspace: Path, tmp_path: Path) -> None:
    """`method=runningtab_no_capture`: the tools, schemas and status line follow the switch, as in a job."""
    from mcp import Client, StdioServerParameters

    from tab.mcp.server import FINISH

    record = tmp_path / "record"
    args = server_args(workspace, record, "method=runningtab_no_capture")
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(REPO))

    async def main() -> tuple[dict[str, Any], str]:
        with anyio.fail_after(LIMIT_S):
            async with Client(params, read_timeout_seconds=30) as client:
                tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
                await client.call_tool("tab_add", {"requirements": REQUIREMENTS})
                return tools, (await client.call_tool("read", {"path": "policies/hotel.md"})).content[0].text

    tools, read = anyio.run(main)
    assert set(tools) == {"read", "bash", "tab_add", "tab_resolve", FINISH}
    assert "entries" not in tools["tab_resolve"]["properties"]
    assert read.splitlines()[-1].startswith("[tab]") and "read-log" not in read.splitlines()[-1]
    tab = json.loads((record / "tab.json").read_text())
    assert tab["settings"]["capture"] is False and tab["read_log"] == []


def test_concurrent_calls_are_served_one_at_a_time(workspace: Path) -> None:
    """Over HTTP calls may overlap; the tab still sees one ordered sequence (one turn per call)."""
    from mcp import Client

    from tab.mcp.server import build_server
    from tab.mcp.session import TabSession

    session = TabSession(workspace, EnvConfig(), TabConfig())
    paths = ["policies/hotel.md", "policies/claims.md", "policies/archive_2019.md"] * 2

    async def main() -> None:
        with anyio.fail_after(LIMIT_S):
            async with Client(build_server(session)) as client, anyio.create_task_group() as tg:
                for i, path in enumerate(paths):
                    call = ("read", {"path": path}) if i % 2 else ("bash", {"command": f"cat {path}"})
                    tg.start_soon(client.call_tool, *call)

    try:
        anyio.run(main)
        record = session.tab.record()
    finally:
        session.close()
    assert session.turn == len(paths)
    reads = [e for e in record["events"] if e["kind"] == "read"]
    assert sorted(e["turn"] for e in reads) == sorted({e["turn"] for e in reads})
    assert {e["path"] for e in record["read_log"]} == set(paths)
