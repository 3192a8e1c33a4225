"""Production agent harnesses (Claude Code, Codex CLI) run as a job's agent instead of our own loop.

`bridge/` is the job's model endpoint they call: the APIs they speak, answered by the job's `Model`.
"""
