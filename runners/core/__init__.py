"""The vocabulary every layer shares: the task (`task.py`), the job record (its files, typed
documents, its one reader and writers) and the registry convention (`registry.py`).

Nothing here imports the rest of `runners/` or `eval/`, so both can import it without a cycle
(`tests/test_layers.py` holds that line).
"""
