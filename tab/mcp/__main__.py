"""`python -m tab.mcp --workspace DIR [--record DIR] [--transport stdio|http] [OVERRIDE ...]`.

OVERRIDEs are the jobs' own Hydra overrides of `env.*` and `method`, e.g. `method=runningtab_no_review
env.sandbox=bwrap method.tab.review_lines=5`: the environment (bash's sandbox included) and the tab are
composed from `conf/` exactly as for a job (default `method=runningtab`, `env=default`).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path

from envs.config import EnvConfig
from tab.config import TabConfig


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tab.mcp", description="The environment-side tab as an MCP server.")
    p.add_argument("--workspace", required=True, type=Path,
                   help="the folder the agent works on; used in place (bash may change it)")
    p.add_argument("--record", type=Path, default=None,
                   help="folder (outside the workspace) where tab.json is kept up to date after every call")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="http only; a loopback address")
    p.add_argument("--port", type=int, default=8765, help="http only")
    p.add_argument("--exclude", action="append", default=[], metavar="PATH",
                   help="workspace path the tab never records (e.g. the deliverable's folder); repeatable")
    p.add_argument("overrides", nargs="*", metavar="OVERRIDE",
                   help="job config overrides for env.* and method (default method=runningtab)")
    return p.parse_args(argv)


def compose(overrides: list[str]) -> tuple[EnvConfig, TabConfig]:
    """The environment and tab settings a job would get for these overrides."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from runners.config.schema import CONF_DIR, register, to_root

    bad = [o for o in overrides if not o.lstrip("+~").startswith(("env.", "method"))]
    if bad:
        raise SystemExit(f"tab.mcp: overrides {bad} are not for env.* or method: only those two groups apply here")
    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        chosen = any(o.lstrip("+~").split("=", 1)[0] == "method" for o in overrides)
        root = to_root(hydra_compose("config", overrides=[*([] if chosen else ["method=runningtab"]), *overrides]))
    if root.method.tab is None:
        raise SystemExit(f"tab.mcp: method={root.method.name} has no tab; choose runningtab or one of its ablations")
    return root.env, TabConfig.coerce(root.method.tab)


def check_paths(workspace: Path, record: Path | None) -> tuple[Path, Path | None]:
    """The workspace must be a folder; the record must live outside it (the agent could rewrite it)."""
    ws = Path(os.path.realpath(workspace))
    if not ws.is_dir():
        raise SystemExit(f"tab.mcp: --workspace {workspace} is not a directory")
    if record is None:
        return ws, None
    rec = Path(os.path.realpath(record))
    if rec == ws or ws in rec.parents:
        raise SystemExit(f"tab.mcp: --record {record} is inside the workspace; put it outside, where bash cannot reach it")
    rec.mkdir(parents=True, exist_ok=True)
    return ws, rec


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def check_host(host: str) -> str:
    """HTTP serves only this machine: the server has no authentication and its bash runs in the workspace."""
    if host not in LOOPBACK:
        raise SystemExit(
            f"tab.mcp: --host {host} is not a loopback address ({', '.join(LOOPBACK)}): the server has no "
            "authentication and offers bash in the workspace; reach it from elsewhere through an "
            "authenticating proxy or an SSH tunnel"
        )
    return host


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # stdout is the stdio transport
    args = parse_args(argv)
    workspace, record = check_paths(args.workspace, args.record)
    host = check_host(args.host)
    env_config, tab_config = compose(args.overrides)

    from tab.mcp.server import serve_http, serve_stdio
    from tab.mcp.session import TabSession

    session = TabSession(workspace, env_config, tab_config, exclude=args.exclude, record=record)
    signal.signal(signal.SIGTERM, _exit_cleanly)  # the host stopping us still closes the session

    def ready(where: str) -> None:
        print(ready_line(where, workspace, record, [t["function"]["name"] for t in session.tools()]), file=sys.stderr, flush=True)

    try:
        if args.transport == "stdio":
            import anyio

            anyio.run(serve_stdio, session, ready)
        else:
            serve_http(session, host, args.port, ready)
    finally:
        session.close()


def ready_line(where: str, workspace: Path, record: Path | None, tools: list[str]) -> str:
    """The one line (on stderr: stdout is the stdio transport) saying the server is up, what it serves
    and how a client reaches it."""
    from tab.mcp.server import FINISH

    kept = f"tab.json kept in {record}" if record else "no record kept (--record DIR keeps tab.json)"
    served = f"the tab of {workspace} ({', '.join([*tools, FINISH])}; {kept})"
    if where == "stdio":
        return (f"tab.mcp ready: {served} over stdio; the MCP client that started this process talks on its "
                "stdin/stdout (--transport http serves a URL instead)")
    return f"tab.mcp ready: {served} at {where} (streamable HTTP); point an MCP client at that URL; Ctrl-C stops"


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


if __name__ == "__main__":
    main()
