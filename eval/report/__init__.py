"""The sweep report: tables and figures of the paper's section 6 from a sweep's job records.

`write_report(sweep_dir)` writes `<sweep>/report/` (Markdown, CSV, PNG, `index.html` and one page
per job) and returns that folder; `python -m eval.report outputs/<sweep>` does the same.
"""

from eval.report.build import ANALYSES, write_report

__all__ = ["ANALYSES", "write_report"]
