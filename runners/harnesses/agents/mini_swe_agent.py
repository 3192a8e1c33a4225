"""mini-swe-agent (`mini-swe-agent` from PyPI, in a venv of its own under the agents' prefix): its `mini`
command, unattended (`-y --exit-immediately`), with its own default settings (its `mini.yaml`: its
prompts, its one `bash` tool, its observation template), against the job's endpoint as an
OpenAI-compatible model (`openai/…` through litellm: the Chat Completions API, `chat_wire`).

Its own environment runs each command with `subprocess`, inside the job's sandbox, and returns the
output as the tool result of its `bash` call. It stops by a command of its own, `echo
COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` (`finishes`: where the tab's finish check comes first); an
answer without a command is not a stop for it: it leaves the answer out of its history and sends its
format error instead (`keeps_answers`). It writes no trajectory
(`-o /dev/null`: the file would hold the call ids), looks up no price (the cost is ours) and retries
no model call (the endpoint's refusal is final).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from envs.protocol import ToolCall
from runners.harnesses.harness import Harness

MODEL = "openai/runningtab-job-model"  # litellm's OpenAI-compatible provider, at OPENAI_BASE_URL
SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


class MiniSweAgent(Harness):
    def argv(self, prefix: str, prompt: str) -> list[str]:
        return [f"{prefix}/{self.binary}", "-y", "--exit-immediately", "-l", "0", "-m", MODEL, "-t", prompt, "-o", "/dev/null"]

    def env(self, base_url: str, token: str, home: str) -> dict[str, str]:
        return {"OPENAI_BASE_URL": f"{base_url}/v1", "OPENAI_API_KEY": token, "MSWEA_CONFIGURED": "true",
                "MSWEA_COST_TRACKING": "ignore_errors", "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",
                "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

    def finishes(self, calls: list[ToolCall]) -> bool:
        """The submit command alone (its output's first line is what mini-swe-agent looks for)."""
        if len(calls) != 1 or calls[0].name not in self.tools_allowed:
            return False
        command = _command(calls[0].arguments)
        try:
            words = shlex.split(command.split("\n", 1)[0]) if command else []
        except ValueError:
            return False
        return words[:2] == ["echo", SUBMIT] and (len(words) == 2 or words[2] in ("&&", ";"))

    def as_ours(self, tool: str, args: dict[str, Any], output: str) -> tuple[str, dict[str, Any], str] | None:
        if tool != "bash" or not isinstance(args.get("command"), str):
            return None
        return "bash", {"command": args["command"]}, _output(output)


def _command(arguments: str) -> str:
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return ""
    return args["command"] if isinstance(args, dict) and isinstance(args.get("command"), str) else ""


def _output(observation: str) -> str:
    """The command's output in mini-swe-agent's observation (`{"returncode": N, "output": …}`; a long one
    as its first and last 5,000 characters, `output_head` and `output_tail`)."""
    try:
        shown = json.loads(observation)
    except json.JSONDecodeError:
        return observation
    if not isinstance(shown, dict):
        return observation
    if isinstance(shown.get("output"), str):
        return shown["output"]
    head, tail = shown.get("output_head"), shown.get("output_tail")
    if not (isinstance(head, str) and isinstance(tail, str)):
        return observation
    return head + tail if head.endswith("\n") else f"{head}\n{tail}"


HARNESS = MiniSweAgent("mini_swe_agent", "mini-swe-agent/bin/mini", "chat_wire", ("bash",), keeps_answers=False)
