"""Every text the harness itself shows the model, in one place so wording changes touch no logic.

Tool-result notices follow Pi's (`[Showing lines X-Y of N. Use offset=Z to continue.]`, ...);
the base system prompt follows the DCI-Agent-Lite setting: a workspace, `read` and `bash`.
"""

from __future__ import annotations

SYSTEM_PROMPT = """\
You are an agent that completes tasks by working directly on an organization's files.

Your workspace is the folder {root}. Every file you need is in it, and every file you create or \
modify there is part of your deliverable. Commands run with the workspace as the working directory.

Available tools:
{tool_lines}

Guidelines:
- Explore the workspace with bash (ls, find, grep) and open files to read what they say.
- Office documents and PDFs are binary: extract their text in bash, e.g. `pdftotext -layout file.pdf -`, \
or Python with python-docx, openpyxl, python-pptx or pypdf.
- Write deliverables with bash (e.g. a Python script); write them where the task asks.
- When the task is complete, reply with your final answer and no tool call."""

TOOL_LINES = {
    "read": "- read: read a text file from the workspace (use offset/limit for large files)",
    "bash": "- bash: run a bash command in the workspace (ls, grep, find, python, pdftotext ...)",
    "write": "- write: create or overwrite a file in the workspace",
    "edit": "- edit: replace an exact piece of text in a workspace file",
}

READ_DESCRIPTION = (
    "Read the contents of a text file in the workspace. Output is truncated to {max_lines} lines or "
    "{max_kb}KB (whichever is hit first). Use offset/limit for large files; when you need the full file, "
    "continue with offset until complete. Binary files (PDF, Office documents, images) cannot be read "
    "with this tool: extract their text with bash."
)
BASH_DESCRIPTION = (
    "Execute a bash command with the workspace as the working directory. Returns stdout and stderr. "
    "Output is truncated to the last {max_lines} lines or {max_kb}KB (whichever is hit first); if "
    "truncated, the full output is saved to a file in the workspace that you can read. Timeout "
    "defaults to {timeout} seconds; pass a timeout in seconds (at most {timeout_max})."
)
WRITE_DESCRIPTION = (
    "Write content to a file in the workspace. Creates the file if it does not exist, overwrites it if "
    "it does, and creates parent directories."
)
EDIT_DESCRIPTION = (
    "Edit a file in the workspace by replacing exact text. old_text must match exactly once "
    "(including whitespace)."
)

# read
READ_LINES_NOTICE = "[Showing lines {start}-{end} of {total}. Use offset={next} to continue.]"
READ_BYTES_NOTICE = "[Showing lines {start}-{end} of {total} ({limit} limit). Use offset={next} to continue.]"
READ_MORE_NOTICE = "[{remaining} more lines in file. Use offset={next} to continue.]"
READ_LONG_LINE_NOTICE = (
    "[Line {line} is {size}, over the {limit} limit: showing its first {limit}. To see more of it, use "
    "bash, e.g. sed -n '{line}p' {path} | tail -c +{skip} | head -c {max_bytes}{more}]"
)
READ_LONG_LINE_MORE = ". Use offset={next} to continue after this line."
READ_EMPTY = "[The file is empty.]"
READ_OFFSET_PAST_END = "Offset {offset} is beyond end of file ({total} lines total)"

# bash
BASH_NO_OUTPUT = "(no output)"
BASH_LINES_NOTICE = "[Showing lines {start}-{end} of {total}. Full output: {path}]"
BASH_BYTES_NOTICE = "[Showing lines {start}-{end} of {total} ({limit} limit). Full output: {path}]"
BASH_PARTIAL_LINE_NOTICE = "[Showing last {shown} of line {line} (line is {size}). Full output: {path}]"
BASH_CAPPED_NOTE = " (the saved file holds only the first {saved} of {total})"
BASH_EXIT = "Command exited with code {code}"
BASH_INTERRUPTED = "Command not run: the job was stopped (it reached the sweep's time limit)"
BASH_TIMEOUT = (
    "Command timed out after {seconds} seconds; it and all the processes it started were killed."
)
BASH_SERVICE_DOWN = (
    "Note: the task's server ({name}) was not listening on port {port} when this command began; "
    "it is started again before each command (a stopped server comes back)."
)
BASH_SERVICE_FAILED = (
    "The task's server ({name}) was not listening on port {port} {seconds} s after it was started, before "
    "anything of the agent's ran: the environment failed, and the job ends here (an environment error, run again on resume)."
)
BASH_DISK_QUOTA = (
    "The job's disk quota ({quota}) was exceeded: {why}. Every process of the shell was killed, "
    "and the job ends here."
)
BASH_TIMEOUT_CLAMPED = "[timeout {asked} s is above the maximum; used {used} s]"
BASH_TIMEOUT_JOB_CLAMPED = "[the job has {used} s left; the command may run at most that long]"

# runtime context management (envs/context.py)
CONTEXT_ALERT = "[SYSTEM ALERT: Exceeded {k}k characters. Truncated.]"
CONTEXT_PLACEHOLDER = "[Old tool result cleared to save context; run the tool again if you need it.]"
