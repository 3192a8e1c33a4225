"""Workspace-Bench's own judge protocol: the LLM rubric judge, its agent-as-a-judge, their view and wording."""
