"""The MCP face of a `TabSession`: its tools, a finish check as a tool and a prompt, two transports.

Tool schemas are the environment's own (`env.tools()`); results are the environment's own text
(tool output plus the tab's status line), with `is_error` as the loop records it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from anyio import to_thread
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from tab.mcp.session import TabSession

FINISH = "tab_finish"
FINISH_DESCRIPTION = (
    "Call this when you believe the task is complete, before your final answer (MCP has no stop hook, "
    "so the tab's finish check is this call). The first call returns what the tab still holds against "
    "finishing (requirements not yet stated, open ones with their review, or each resolution): act on it, "
    "then call again. A later call says you may stop."
)
FINISH_NOTHING = "The tab has nothing more to ask: you may stop and give your final answer."
INSTRUCTIONS_FINISH = f"Before you stop, call {FINISH} and act on what it returns."


def mcp_tool(schema: dict[str, Any]) -> types.Tool:
    """An OpenAI-format function schema as an MCP tool (same name, description and parameters)."""
    fn = schema["function"]
    return types.Tool(name=fn["name"], description=fn["description"], input_schema=fn["parameters"])


def finish_tool() -> types.Tool:
    return types.Tool(
        name=FINISH, description=FINISH_DESCRIPTION,
        input_schema={"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    )


def build_server(session: TabSession) -> Server[Any]:
    """A low-level MCP server whose every request is answered by `session`."""

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[*map(mcp_tool, session.tools()), finish_tool()])

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == FINISH:
            text = await to_thread.run_sync(finish_text, session)
            return types.CallToolResult(content=[types.TextContent(text=text)])
        result = await to_thread.run_sync(session.call, params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(text=result.content)], is_error=result.is_error)

    async def list_prompts(ctx: ServerRequestContext[Any], params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(name=FINISH, description=FINISH_DESCRIPTION)])

    async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != FINISH:
            raise ValueError(f"unknown prompt {params.name!r}; the only prompt is {FINISH!r}")
        text = await to_thread.run_sync(finish_text, session)
        message = types.PromptMessage(role="user", content=types.TextContent(text=text))
        return types.GetPromptResult(description=FINISH_DESCRIPTION, messages=[message])

    return Server(
        "runningtab-tab",
        instructions=f"{session.instructions()}\n{INSTRUCTIONS_FINISH}",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def finish_text(session: TabSession) -> str:
    """The finish check's message, or the adapter's line saying the session may end."""
    return session.finish() or FINISH_NOTHING


async def serve_stdio(session: TabSession, ready: Callable[[str], None]) -> None:
    """MCP over this process's stdin/stdout; `ready("stdio")` once the channel is open."""
    from mcp.server.stdio import stdio_server

    server = build_server(session)
    async with stdio_server() as (read, write):
        ready("stdio")
        await server.run(read, write, server.create_initialization_options())


def serve_http(session: TabSession, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp until interrupted (Ctrl-C or SIGTERM); `ready(url)`
    once the port accepts connections."""
    import asyncio

    import uvicorn

    app = build_server(session).streamable_http_app(host=host)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    shown = f"[{host}]" if ":" in host else host

    async def announced() -> None:
        serving = asyncio.create_task(server.serve())
        while not server.started and not serving.done():
            await asyncio.sleep(0.02)
        if server.started:
            ready(f"http://{shown}:{port}/mcp")
        await serving

    asyncio.run(announced())
