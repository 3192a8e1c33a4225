"""Helpers shared by the eval tests (no tests here): job records on disk and a canned judge model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from runners.core.messages import AssistantMessage

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "eval"
def _samples() -> Path:
    """The real benchmark samples: `shared/samples` beside the checkout (as in CI), else this machine's."""
    here = Path(__file__).resolve().parents[3] / "shared" / "samples"
    return here if here.is_dir() else Path("/work/shared/samples")


SAMPLES = _samples()


def make_job(
    job_dir: Path,
    deliverable: dict[str, str | bytes] | None = None,
    final_answer: str = "",
    messages: list[dict[str, Any]] | None = None,
    deleted: list[str] | None = None,
    job: dict[str, Any] | None = None,
) -> Path:
    """A finished job record as the runner writes it (job.json, result.json, evaluator view, deliverable)."""
    job_dir.mkdir(parents=True, exist_ok=True)
    for rel, data in (deliverable or {}).items():
        p = job_dir / "deliverable" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
    (job_dir / "job.json").write_text(json.dumps(job or {"job_id": job_dir.name, "benchmark": "native", "task_id": "t", "method": "dci", "model": "m",
                                                        "seed": 0, "config": {}}))
    (job_dir / "evaluator_view.json").write_text(json.dumps({"task": "", "messages": messages or [], "final_answer": final_answer}))
    (job_dir / "result.json").write_text(
        json.dumps({"stop_reason": "finished", "final_answer": final_answer, "deleted": deleted or [], "deliverable": sorted(deliverable or {})})
    )
    return job_dir


def bash_call(command: str, turn: int = 1) -> list[dict[str, Any]]:
    """An assistant tool call and its result, in the trajectory's OpenAI chat format."""
    return [
        {"role": "assistant", "turn": turn, "content": None,
         "tool_calls": [{"id": f"c{turn}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]},
        {"role": "tool", "turn": turn, "tool_call_id": f"c{turn}", "name": "bash", "content": "ok", "is_error": False},
    ]


class FakeModel:
    """A judge model that answers with canned texts in order and records what it was sent."""

    def __init__(self, *answers: str, name: str = "fake-judge"):
        self.name = name
        self.answers = list(answers)
        self.sent: list[list[dict[str, Any]]] = []

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        self.sent.append(messages)
        return AssistantMessage(content=self.answers[min(len(self.sent), len(self.answers)) - 1])


def split_fence(text: str) -> tuple[str, str]:
    """(the text outside, the payload inside) the one fence of a judge prompt around the agent's data:
    a line that is just its start marker, the payload, a line that is just its end marker."""
    starts = re.findall(r"^<(untrusted-[0-9a-f]{16,})>$", text, flags=re.M)
    assert len(starts) == 1, f"expected one fence, found {starts}"
    start, end = f"\n<{starts[0]}>\n", f"\n</{starts[0]}>"
    assert text.count(start) == 1 and len(re.findall(f"^</{starts[0]}>$", text, flags=re.M)) == 1
    before, rest = text.split(start)
    payload, after = rest.split(end)
    return before + after, payload


def fenced_payload(text: str) -> str:
    return split_fence(text)[1]
