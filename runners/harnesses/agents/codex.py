"""Codex CLI (`@openai/codex`): run as `codex exec --json`, against the job's endpoint as a model
provider of its own (the Responses API: Codex speaks nothing else). Its own sandbox cannot nest in
ours, so it runs with `-s danger-full-access`: this lifts only Codex's own sandbox; ours stays the
boundary."""

from __future__ import annotations

import re
import shlex
from typing import Any

from runners.harnesses.harness import Harness

# Codex's exec_command result: a header of its own, then the command's output.
_CODEX_OUTPUT = re.compile(r"\A(?:[^\n]*\n)*?Output:\n", re.MULTILINE)
# Codex's exec_command header lines that differ on every run (a random chunk id, the wall time).
_CODEX_VOLATILE = re.compile(r"^(?:Chunk ID|Wall time): [^\n]*\n", re.MULTILINE)


class Codex(Harness):
    def shown(self, text: str) -> str:
        return _CODEX_VOLATILE.sub("", text)

    def argv(self, prefix: str, prompt: str) -> list[str]:
        return [f"{prefix}/{self.binary}", "exec", "--json", "--skip-git-repo-check", "--ephemeral",  # no session file under HOME
                "-s", "danger-full-access", prompt]

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


HARNESS = Codex("codex", "node_modules/.bin/codex", "responses_wire",
                compaction_marker="Another language model started to solve this problem")
