"""Our own loop's name on the harness axis (`agent.harness`), and the one test of it: every place that
treats our loop apart (ids, names, tables, W&B groups) asks `is_own_loop`, never the literal."""

OWN_LOOP = "dci"  # our own loop (SPEC section 2): the default harness, left unsaid in names


def is_own_loop(harness: str) -> bool:
    """Whether `harness` is our own loop rather than a production harness (claude_code, codex, …)."""
    return harness == OWN_LOOP
