"""Where `wb_agent` and `llm_rubric` disagree, measured on scripted deliverables with one judge
policy for both: an evidence oracle that passes a rubric exactly when the rubric's answer is in
what the protocol let it see (the prompt, the attached images, its own tool results). It drives the
real evidence builder, loop, sandbox and parsing, so the differences are what each protocol shows,
not what a particular model concludes. Its "vision" reads an attached image by a table of what the
image draws (a vision model reads the chart); text tools never see pixels. docs/benchmarks.md
reports the same table."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from envs.protocol import ToolCall
from eval.benchmarks.builtin import office
from eval.config import JudgeConfig
from eval.judges import make_judge
from runners.core.messages import AssistantMessage
from runners.core.task import Rubric, Task
from tests.helpers.eval_records import bash_call, make_job

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
DRAWN = {hashlib.sha256(PNG).hexdigest(): "A bar chart: Q1 31%, Q2 35%, Q3 churn 4.7%, Q4 29%."}
DUMP = ("python3 -c \"import sys, openpyxl; wb = openpyxl.load_workbook(sys.argv[1], read_only=True); "
        "[print(*r, sep='\\t') for ws in wb for r in ws.iter_rows(values_only=True)]\" ")


class EvidenceOracle:
    """Passes rubric i iff `answers[i]` is in what it was shown. With tools, it first lists the
    deliverable, then opens each file as a text-tool agent can (read, a spreadsheet dump, `file`)."""

    name = "evidence-oracle"

    def __init__(self, answers: list[str]):
        self.answers = answers
        self.planned: list[ToolCall] | None = None
        self.calls = 0

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        self.calls += 1
        if tools and self.planned is None:
            self.planned = []
            return self._call("bash", {"command": "find deliverable -type f | sort"})
        if tools and self.planned == [] and messages[-1].get("role") == "tool" and messages[-1]["tool_call_id"] == "list":
            self.planned = [self._open(p) for p in messages[-1]["content"].split()]
        if tools and self.planned:
            return AssistantMessage(None, [self.planned.pop(0)])
        seen = "\n".join(_visible(m) for m in messages)
        return AssistantMessage(json.dumps({"rubrics": [{"index": i, "passed": a in seen} for i, a in enumerate(self.answers)]}))

    def _call(self, name: str, args: dict[str, Any]) -> AssistantMessage:
        return AssistantMessage(None, [ToolCall("list", name, json.dumps(args))])

    def _open(self, path: str) -> ToolCall:
        suffix = Path(path).suffix
        if suffix == ".xlsx":
            return ToolCall(f"o{path}", "bash", json.dumps({"command": DUMP + path}))
        if suffix in (".png", ".jpg"):
            return ToolCall(f"o{path}", "bash", json.dumps({"command": f"file {path}"}))
        return ToolCall(f"o{path}", "read", json.dumps({"path": path}))


def _visible(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    out = []
    for part in content or []:
        if part.get("type") == "text":
            out.append(part["text"])
        elif part.get("type") == "image_url":
            data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            out.append(DRAWN.get(hashlib.sha256(data).hexdigest(), ""))
    return "\n".join(out)


def _xlsx(tmp_path: Path) -> bytes:
    rows = [["month", "region", "note"]] + [[f"2024-{m:02d}", f"region {r}", "filler text " * 3] for m in range(1, 13) for r in range(8)]
    rows.insert(90, ["2024-08", "north", "churn 4.7%"])
    office.write_xlsx(tmp_path / "x.xlsx", [("Data", rows)])
    return (tmp_path / "x.xlsx").read_bytes()


def cases(tmp_path: Path) -> dict[str, tuple[str, dict[str, str | bytes]]]:
    """name -> (expected output, deliverable); the rubric's answer is "churn 4.7%" in every case."""
    many = {f"notes/n{i:02d}.md": f"note {i}" for i in range(11)}
    return {
        "answer in the expected markdown file": ("report.md", {"report.md": "# Churn\nQ3 churn 4.7%.\n"}),
        "xlsx, answer past the 2,000-character excerpt": ("churn.xlsx", {"churn.xlsx": _xlsx(tmp_path)}),
        "image-only deliverable (a chart)": ("chart.png", {"chart.png": PNG}),
        "answer in a 13th file (past the 10 shown)": ("report.md", {"report.md": "# Churn\nSee notes.\n", **many,
                                                                     "notes/zz.md": "Q3 churn 4.7%."}),
    }


def verdict_of(tmp_path: Path, name: str, expected: str, files: dict[str, str | bytes]) -> tuple[bool, int]:
    task = Task(id="c", prompt="Report the Q3 churn.", workspace=tmp_path / "none", output=expected,
                rubrics=(Rubric("The deliverable reports the Q3 churn figure."),), extra={"output_files": [expected]})
    job = make_job(tmp_path / name / "job", files, final_answer="Done.", messages=bash_call("python3 build_report.py"))
    oracle = EvidenceOracle(["churn 4.7%"])
    scores = make_judge(JudgeConfig(name=name, cache_dir=str(tmp_path / name / "cache")), "llm_rubric", oracle).score(task, job)
    return scores["items"][0]["passed"], oracle.calls


# (llm_rubric, wb_agent) per case: what each protocol can see
EXPECTED = {
    "answer in the expected markdown file": (True, True),
    "xlsx, answer past the 2,000-character excerpt": (False, True),
    "image-only deliverable (a chart)": (True, False),
    "answer in a 13th file (past the 10 shown)": (False, True),
}


@pytest.mark.parametrize("case", list(EXPECTED))
def test_where_the_two_protocols_disagree(tmp_path: Path, case: str) -> None:
    expected, files = cases(tmp_path)[case]
    one, calls_one = verdict_of(tmp_path, "llm_rubric", expected, files)
    agent, calls_agent = verdict_of(tmp_path, "wb_agent", expected, files)
    assert (one, agent) == EXPECTED[case]
    assert calls_one == 1 and calls_agent == 2 + len(files)  # list, open each file, answer


def test_the_xlsx_answer_is_really_past_the_excerpt(tmp_path: Path) -> None:
    from eval.config import ExtractLimits
    from eval.judges.extract.read import extract_file
    from eval.judges.workspace_bench.protocol import MAX_CHARS

    (tmp_path / "c.xlsx").write_bytes(_xlsx(tmp_path))
    text = extract_file(tmp_path, "c.xlsx", ExtractLimits()).text
    assert MAX_CHARS < text.index("churn 4.7%") and re.search(r"2024-08\tnorth\tchurn 4.7%", text)
