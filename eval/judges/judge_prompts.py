"""Every wording the judges send to an LLM, in one place.

`WB_*` state Workspace-Bench's own judge instructions in our words (the default `llm_rubric`
judge; its evidence object is built in eval/judges/wb_protocol.py). `RUBRIC_*` are RunningTab's
earlier, stricter full-text variant (`llm_rubric_fulltext`): the task, the expected outputs, the
deliverable files as text, a trajectory summary, and the rubrics. Both answer in strict JSON. TheAgentCompany's yes/no question is the benchmark's own code and stays verbatim in
its stand-in module (`eval/tac/compat/common.py`, `evaluate_with_llm`).
"""

WB_SYSTEM = "You are a strict evaluator of task results."

WB_INSTRUCTIONS = """Act as a strict evaluator. Using the task, outputs and traceSummary in the JSON below, decide for every rubric whether it is satisfied.
Rules:
1) Rely only on the evidence given; assume nothing that it does not show.
2) Be somewhat lenient about small mistakes in how files are named or in how the agent went about finding files.
3) For every rubric give "passed" (true or false), "evidence" (a string that points to the specific file, excerpt or tool call) and "confidence" (0 to 1).
4) Reply with one JSON object in exactly this form: {{"rubrics": [{{"index": 0, "passed": true, "confidence": 0.8, "evidence": "..."}}, ...]}}
5) When the evidence is not enough, set "passed" to false and say in "evidence" what is missing.

{evidence}"""

RUBRIC_SYSTEM = (
    "You are a strict evaluator of deliverables that an AI agent produced while working in an "
    "organization's file workspace. Judge each rubric only from the evidence below: the deliverable "
    "files (office files shown as extracted text) and the summary of what the agent did. A rubric "
    "passes only when the evidence clearly shows it is satisfied; when in doubt, it fails. "
    "Answer with one JSON object and nothing else."
)

RUBRIC_USER = """## Task
{task}

## Expected output files
{expected}

## Deliverable files (created or modified by the agent)
{files}

## Agent's final message
{final}

## Trajectory summary
{trajectory}

## Rubrics
{rubrics}

Judge every rubric above. Answer with exactly this JSON shape, one entry per rubric index:
{{"rubrics": [{{"index": 0, "passed": true, "confidence": 0.8, "evidence": "where in the deliverable"}}]}}
"passed" must be a JSON boolean (true or false)."""

RUBRIC_RETRY = (
    "Your answer could not be parsed ({error}). Reply again with only the JSON object "
    '{{"rubrics": [{{"index": …, "passed": true|false, "confidence": …, "evidence": "…"}}]}} '
    "covering every rubric index."
)

NO_FILES = "(the agent produced no files)"
FILE_HEADER = "### {path}{note}\n"
TRUNCATED = " (truncated to {n} characters)"
OMITTED = "### {path}\n(omitted: the deliverable text exceeds the judge's budget)\n"
