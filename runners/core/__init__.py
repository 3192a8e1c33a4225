"""The vocabulary every layer shares: the job record (its files, its typed documents, its one
reader and writers).

Nothing here imports the rest of `runners/` or `eval/`, so both can import it without a cycle
(`tests/test_layers.py` holds that line).
"""
