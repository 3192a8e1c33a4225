"""The words and fixed paths an exported Harbor task adds to our task (kept in one place).

Our harness's own wording (runners/agent/agent_texts.py: where the workspace is, how to use the tools)
never enters `instruction.md`: a foreign harness has its own. A Harbor verifier sees only the files
the agent leaves, never its final message, so an answer task asks for the answer in a file too.
"""

WORKSPACE = "/workspace"  # the task's files, in the agent's image; the verifier gets the final ones here
RECORD = "/runningtab/record"  # where the tab's MCP server keeps tab.json (outside the workspace)
ANSWER_FILE = "final_answer.txt"  # workspace-relative: the answer of an answer task
SPEC = "/tests/spec"  # the task as our judge reads it, in the verifier's image only
CODE = "/opt/runningtab"  # the project's code in an image
VERIFIER_OUT = "/logs/verifier"
MCP_NAME = "runningtab-tab"  # the MCP server's name in task.toml (tools appear as mcp__runningtab-tab__read ...)
MCP_COMMAND = "/usr/local/bin/runningtab-tab"

WHERE = "\n\nThe files for this task are in {workspace}; work on them there."
DELIVERABLE_FILE = " Write the deliverable to {workspace}/{output}."
DELIVERABLE_AS_TOLD = " Write the deliverable where the task says, inside {workspace}."
ANSWER = (
    " Only the files you leave are graded, not your last message: also write your final answer, exactly as the "
    "task asks you to give it, to {workspace}/{answer_file}."
)


def instruction(prompt: str, kind: str, output: str) -> str:
    """`instruction.md`: the benchmark's own task text, then where the files are and where the result goes."""
    where = WHERE.format(workspace=WORKSPACE)
    if kind == "answer":
        where += ANSWER.format(workspace=WORKSPACE, answer_file=ANSWER_FILE)
    elif output.strip("./"):
        where += DELIVERABLE_FILE.format(workspace=WORKSPACE, output=output.lstrip("./"))
    else:
        where += DELIVERABLE_AS_TOLD.format(workspace=WORKSPACE)
    return prompt.rstrip() + where + "\n"
