"""A sweep's records as pandas DataFrames, for notebooks (docs/frames.md).

    from eval.frames import read_sweep, jobs_df, items_df, turns_df, tab_df
    sweep = read_sweep("outputs/demo")            # or "s3://bucket/prefix/<sweep>"
    jobs = jobs_df(sweep)                         # one row per job
    items = items_df(sweep)                       # one row per rubric, checkpoint or answer
    turns = turns_df(sweep)                       # one row per model call
    tab = tab_df(sweep)                           # one row per tab event
    rows = accounting_df(sweep)                   # Table 1's rows: planned, results, not results by kind

Columns come from the record's own types (`JobMeta`, `Result`, `Usage`, ...: `columns.py`), and the
records are read by the report's readers, bounded (`read.py`).
"""

from eval.frames.frames import accounting_df, items_df, jobs_df, tab_df, turns_df
from eval.frames.read import read_sweep

__all__ = ["accounting_df", "items_df", "jobs_df", "read_sweep", "tab_df", "turns_df"]
