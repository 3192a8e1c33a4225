"""`python -m tab.mcp.demo`: a scripted MCP session over stdio, printed as the transcript in docs/mcp.md.

It starts the real server (`python -m tab.mcp`) on a small made-up workspace, drives it with the MCP
SDK's own client, and prints every call and result, then the `tab.json` it left.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from tab.mcp.server import FINISH

FILES = {
    "policies/hotel.md": "Article 7 Hotel\nHotel: up to 500 per night on business trips.\n",
    "policies/claims.md": "Article 9 Claims\nSubmit each invoice within 30 days.\nLate claims are refused.\n",
    "policies/archive_2019.md": "Superseded rules of 2019.\n",
}
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("tab_add", {"requirements": ["Hotel limit per night on business trips",
                                  "Deadline for submitting expense claims"]}),
    ("bash", {"command": "ls policies"}),
    ("read", {"path": "policies/hotel.md"}),
    ("bash", {"command": "grep -n invoice policies/claims.md"}),
    ("tab_review", {}),
    ("tab_resolve", {"id": "r1", "status": "done", "entries": ["L1"]}),
    ("tab_resolve", {"id": "r2", "status": "done", "entries": ["L1"]}),
    (FINISH, {}),
    ("tab_resolve", {"id": "r2", "status": "done", "entries": ["L2"]}),
    (FINISH, {}),
]


async def transcript(workspace: Path, record: Path) -> list[str]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tab.mcp", "--workspace", str(workspace), "--record", str(record)],
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    out: list[str] = []
    with anyio.fail_after(120):
        async with Client(params) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            out.append(f"tools/list -> {', '.join(tools)}")
            for name, args in SCRIPT:
                result = await client.call_tool(name, args)
                flag = "  (is_error)" if result.is_error else ""
                out.append(f"\n> {name} {json.dumps(args)}{flag}")
                out += [f"  {line}" for line in result.content[0].text.splitlines()]
    return out


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="tab-mcp-demo-") as tmp:
        ws, record = Path(tmp, "workspace"), Path(tmp, "record")
        for rel, text in FILES.items():
            Path(ws, rel).parent.mkdir(parents=True, exist_ok=True)
            Path(ws, rel).write_text(text)
        lines = anyio.run(transcript, ws, record)
        tab = json.loads((record / "tab.json").read_text())
    print("\n".join(lines))
    print("\n# tab.json (read log and requirements)")
    print(json.dumps({"requirements": tab["requirements"], "read_log": tab["read_log"]}, indent=1))


if __name__ == "__main__":
    main()
