"""Gemini CLI (`@google/gemini-cli`): run headless (`-p`), its transcript as stream-json, against the
job's endpoint as its Gemini API base URL (`GOOGLE_GEMINI_BASE_URL`, the job's token as its API key).

Its settings, under the agent's HOME, turn off its telemetry, usage statistics and update checks, the
side calls it would make to the job's model (the next-speaker check, loop detection) and its history
compression, whose calls do not continue the conversation (docs/harnesses.md). A policy denies every
tool but its shell, file and search tools (web search and fetch, subagents, skills, memory are not
offered). Its approval heuristics (a command it deems dangerous or cannot parse, a redirection) would
refuse in headless mode commands our own agent runs, so it runs with `--approval-mode yolo`, which
lifts only its own confirmations; its own sandbox (`--sandbox`, Docker or Podman) stays off: the
job's sandbox is the boundary.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from typing import Any

from runners.harnesses.harness import Harness

MODEL = "runningtab-job-model"
TOOLS = ("run_shell_command", "read_file", "list_directory", "glob", "grep_search", "write_file", "replace")
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False, "logPrompts": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False, "checkpointing": {"enabled": False},
                "topicUpdateNarration": False, "plan": {"enabled": False}},
    "model": {"skipNextSpeakerCheck": True, "disableLoopDetection": True, "compressionThreshold": 1},
    "ide": {"enabled": False},
}
POLICY = (f"[[rule]]\ntoolName = {json.dumps(list(TOOLS))}\ndecision = \"allow\"\npriority = 900\nallowRedirection = true\n\n"
          "[[rule]]\ntoolName = \"*\"\ndecision = \"deny\"\npriority = 800\n")

# run_shell_command's result: `Output: …`, then lines of its own after the command's output.
_SHELL = re.compile(r"\A(?:<untrusted_context>\n)?Output: (?P<out>.*?)"
                    r"(?P<tail>(?:\n(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): [^\n]*)*)"
                    r"(?:\n</untrusted_context>)?\n?\Z", re.DOTALL)
# ... of which these differ on every run (process ids).
_VOLATILE = re.compile(r"\n(?:Background PIDs|Process Group PGID): [\d, ]+(?=\n|\Z)")
_READ_HEAD = re.compile(r"\A\n?IMPORTANT: The file content has been truncated\..*?\n--- FILE CONTENT \(truncated\) ---\n", re.DOTALL)
_GREP_LINE = re.compile(r"^L(\d+)([:-]) ?(.*)$")


class GeminiCli(Harness):
    def argv(self, prefix: str, prompt: str) -> list[str]:
        return [f"{prefix}/{self.binary}", "-p", prompt, "-m", MODEL, "--output-format", "stream-json", "--approval-mode", "yolo"]

    def env(self, base_url: str, token: str, home: str) -> dict[str, str]:
        # Node's WebAssembly reserves ~10 GB of address space per instance unless its trap handler is off:
        # past the job's memory cap (RLIMIT_AS), Gemini CLI's HTTP client could not start.
        return {"GOOGLE_GEMINI_BASE_URL": base_url, "GEMINI_API_KEY": token, "GEMINI_TELEMETRY_ENABLED": "false",
                "GEMINI_CLI_NO_RELAUNCH": "true", "NODE_OPTIONS": "--disable-wasm-trap-handler"}

    def files(self, base_url: str) -> dict[str, str]:
        return {".gemini/settings.json": json.dumps(SETTINGS, indent=1), ".gemini/policies/runningtab.toml": POLICY}

    def shown(self, text: str) -> str:
        match = _SHELL.match(text)
        if match is None:
            return text
        return text[: match.start("tail")] + _VOLATILE.sub("", match.group("tail")) + text[match.end("tail"):]

    def as_ours(self, tool: str, args: dict[str, Any], output: str) -> tuple[str, dict[str, Any], str] | None:
        path = args.get("file_path") if tool == "read_file" else args.get("dir_path")
        where = path if isinstance(path, str) and path else "."
        if tool == "run_shell_command" and isinstance(args.get("command"), str):
            command = args["command"] if where == "." else f"cd {shlex.quote(where)} && {args['command']}"
            match = _SHELL.match(output)
            text = output if match is None else "" if match.group("out") == "(empty)" else match.group("out")
            return "bash", {"command": command}, text
        if tool == "read_file" and isinstance(path, str):
            return "read", {"path": path, **_lines(args)}, _READ_HEAD.sub("", output, count=1)
        if tool == "grep_search" and isinstance(args.get("pattern"), str):
            flag = "-l" if args.get("names_only") is True else "-n"
            return "bash", {"command": f"rg {flag} {shlex.quote(args['pattern'])} {shlex.quote(where)}"}, _grep(output, where, flag)
        if tool == "glob" and isinstance(args.get("pattern"), str):
            return "bash", {"command": f"rg --files -g {shlex.quote(args['pattern'])} {shlex.quote(where)}"}, _after_header(output)
        if tool == "list_directory" and isinstance(path, str):
            names = [re.sub(r"^\[DIR\] (.*)$", r"\1/", re.sub(r" \(\d+ bytes\)$", "", n)) for n in _after_header(output).splitlines()]
            return "bash", {"command": f"ls -p {shlex.quote(where)}"}, "\n".join(names)
        return None


def _lines(args: dict[str, Any]) -> dict[str, int]:
    """read_file's 1-based `start_line`/`end_line` as our read's `offset`/`limit`."""
    start, end = args.get("start_line"), args.get("end_line")
    out = {"offset": start} if isinstance(start, int) else {}
    if isinstance(end, int):
        out["limit"] = end - (start if isinstance(start, int) else 1) + 1
    return out


def _after_header(output: str) -> str:
    """A listing without Gemini CLI's line before it (`Found 2 file(s) matching …:`, `Directory listing for …:`)."""
    head, _, rest = output.partition("\n")
    return rest if head.endswith(":") else output


def _grep(output: str, where: str, flag: str) -> str:
    """grep_search's result as `rg` prints it: `path:N:line` for a match, `path-N-line` for context
    (Gemini CLI groups them under `File: path`, relative to the folder searched); names for `-l`."""
    if flag == "-l":
        return _after_header(output)
    out, path = [], ""
    for line in output.splitlines():
        if line.startswith("File: "):
            path = posixpath.normpath(posixpath.join(where, line[len("File: "):]))
        elif (m := _GREP_LINE.match(line)) and path:
            out.append(f"{path}{m.group(2)}{m.group(1)}{m.group(2)}{m.group(3)}")
    return "\n".join(out)


HARNESS = GeminiCli("gemini_cli", "node_modules/.bin/gemini", "gemini_wire")
