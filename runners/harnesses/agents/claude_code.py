"""Claude Code (`@anthropic-ai/claude-code`): run with `-p`, its transcript as stream-json, against the
job's endpoint as its Anthropic base URL. It is allowed its file and shell tools by name
(`--allowedTools`), which answers its permission prompts without `--dangerously-skip-permissions`;
the job's sandbox stays the boundary."""

from __future__ import annotations

import re
import shlex
from typing import Any

from runners.harnesses.harness import Harness

# Claude Code's Read shows `cat -n` style lines ("     1\ttext" or "     1→text"); ours show the text.
_NUMBERED = re.compile(r"^ *\d+(?:\t|→)", re.MULTILINE)


class ClaudeCode(Harness):
    def argv(self, prefix: str, prompt: str) -> list[str]:
        return [f"{prefix}/{self.binary}", "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--allowedTools", ",".join(self.tools_allowed), "--model", "runningtab-job-model",
                "--no-session-persistence"]  # no session file under the agent's HOME (its call ids, for a forger)

    def env(self, base_url: str, token: str, home: str) -> dict[str, str]:
        return {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": token, "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CONFIG_DIR": f"{home}/.claude"}

    def as_ours(self, tool: str, args: dict[str, Any], output: str) -> tuple[str, dict[str, Any], str] | None:
        if tool == "Bash" and isinstance(args.get("command"), str):
            return "bash", {"command": args["command"]}, output
        if tool == "Read" and isinstance(args.get("file_path"), str):
            read = {"path": args["file_path"], **{k: args[k] for k in ("offset", "limit") if isinstance(args.get(k), int)}}
            return "read", read, _NUMBERED.sub("", output)
        if tool == "Grep" and isinstance(args.get("pattern"), str):
            flag = "-n" if args.get("output_mode") == "content" else "-l"
            where = args.get("path") if isinstance(args.get("path"), str) else "."
            return "bash", {"command": f"rg {flag} {shlex.quote(args['pattern'])} {shlex.quote(where)}"}, output
        if tool == "Glob" and isinstance(args.get("pattern"), str):
            where = args.get("path") if isinstance(args.get("path"), str) else "."
            return "bash", {"command": f"rg --files -g {shlex.quote(args['pattern'])} {shlex.quote(where)}"}, output
        return None


HARNESS = ClaudeCode(
    "claude_code", "node_modules/.bin/claude", "messages_wire", ("Bash", "Read", "Write", "Edit", "Glob", "Grep"),
    compaction_marker="This session is being continued from a previous conversation that ran out of context.")
