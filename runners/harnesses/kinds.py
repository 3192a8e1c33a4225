"""The production harnesses a job can run as its agent, by name: how each is started, headless and
non-interactive, against the job's endpoint, and how its tools read as ours for the method's plugins.

Each runs inside the job's bubblewrap sandbox (`runners/harnesses/run.py`), so nothing here lifts a
limit of ours: Codex's own sandbox is turned off (`-s danger-full-access`) because it cannot nest in
ours and ours is the boundary; Claude Code is allowed its file and shell tools by name
(`--allowedTools`), which answers its permission prompts without `--dangerously-skip-permissions`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from runners.core.registry import Registry

# Claude Code's Read shows `cat -n` style lines ("     1\ttext" or "     1→text"); ours show the text.
_NUMBERED = re.compile(r"^ *\d+(?:\t|→)", re.MULTILINE)
# Codex's exec_command result: a header of its own, then the command's output.
_CODEX_OUTPUT = re.compile(r"\A(?:[^\n]*\n)*?Output:\n", re.MULTILINE)


@dataclass(frozen=True)
class Harness:
    """One harness: its binary under the npm prefix, its command line for a task prompt, the files
    and variables that point it at the job's endpoint, and its tools as ours."""

    name: str
    binary: str  # relative to RUNNINGTAB_AGENTS_PREFIX
    api: str  # the API it speaks: "messages" (Anthropic) or "responses" (OpenAI)
    tools_allowed: tuple[str, ...] = field(default=())
    compaction_marker: str = ""  # how its summary of a compacted history begins (its own text)

    def argv(self, prefix: str, prompt: str) -> list[str]:
        raise NotImplementedError

    def env(self, base_url: str, token: str, home: str) -> dict[str, str]:
        raise NotImplementedError

    def files(self, base_url: str) -> dict[str, str]:
        """Files to write under the harness's HOME before it starts (relative path -> text)."""
        return {}

    def as_ours(self, tool: str, args: dict[str, Any], output: str) -> tuple[str, dict[str, Any], str] | None:
        raise NotImplementedError

    def shown(self, text: str) -> str:
        """A tool result as the model is sent it: what varies from run to run and tells the model
        nothing is dropped, so that a job re-run from the model-call cache meets the same calls."""
        return text


class ClaudeCode(Harness):
    def argv(self, prefix: str, prompt: str) -> list[str]:
        return [f"{prefix}/{self.binary}", "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--allowedTools", ",".join(self.tools_allowed), "--model", "runningtab-job-model"]

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


# Codex's exec_command header lines that differ on every run (a random chunk id, the wall time).
_CODEX_VOLATILE = re.compile(r"^(?:Chunk ID|Wall time): [^\n]*\n", re.MULTILINE)


class Codex(Harness):
    def shown(self, text: str) -> str:
        return _CODEX_VOLATILE.sub("", text)

    def argv(self, prefix: str, prompt: str) -> list[str]:
        return [f"{prefix}/{self.binary}", "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access", prompt]

    def env(self, base_url: str, token: str, home: str) -> dict[str, str]:
        return {"CODEX_HOME": f"{home}/.codex", "RUNNINGTAB_JOB_TOKEN": token}

    def files(self, base_url: str) -> dict[str, str]:
        return {".codex/config.toml": (
            'model = "runningtab-job-model"\nmodel_provider = "runningtab"\n'
            '[model_providers.runningtab]\nname = "runningtab"\n'
            f'base_url = "{base_url}/v1"\nwire_api = "responses"\nenv_key = "RUNNINGTAB_JOB_TOKEN"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n"
            "[analytics]\nenabled = false\n"
        )}

    def as_ours(self, tool: str, args: dict[str, Any], output: str) -> tuple[str, dict[str, Any], str] | None:
        if tool == "exec_command" and isinstance(args.get("cmd"), str):
            return "bash", {"command": args["cmd"]}, _CODEX_OUTPUT.sub("", output, count=1)
        if tool == "shell" and isinstance(args.get("command"), list) and all(isinstance(a, str) for a in args["command"]):
            argv = args["command"]
            command = argv[2] if len(argv) == 3 and argv[1] in ("-lc", "-c") else shlex.join(argv)
            return "bash", {"command": command}, output
        return None


HARNESSES: Registry[Harness] = Registry("agent.harness", reserved=("dci",))  # dci: our own loop
HARNESSES.add("claude_code", ClaudeCode(
    "claude_code", "node_modules/.bin/claude", "messages", ("Bash", "Read", "Write", "Edit", "Glob", "Grep"),
    compaction_marker="This session is being continued from a previous conversation that ran out of context."))
HARNESSES.add("codex", Codex("codex", "node_modules/.bin/codex", "responses",
                             compaction_marker="Another language model started to solve this problem"))
