"""A synthetic file-server export for the TheAgentCompany task folders of shared/samples (the
benchmark's export is not public): the files each task names, in the formats their evaluators read.
The correct deliverables are the project's references (eval/tac/references.py), made by its scripted
agent (eval/tac/scripted_agent.py); tests/eval/tac/test_samples.py and tests/eval/tac/test_solvable.py use them."""

from __future__ import annotations

from pathlib import Path

from eval.tac.references import (
    ATTENDANCE,
    COFFEE,
    EMPLOYEES,
    HR,
    RESUMES,
    TABLES,
    xlsx_bytes,
)
from tests.helpers.eval_records import SAMPLES

TASKS = SAMPLES / "theagentcompany"
SEVEN = ("ds-stock-analysis-slides", "hr-populate-salary-increase-memo", "hr-new-grad-job-description",
         "sde-copy-table-from-pdf-to-xlsx", "ds-coffee-shop-database-management", "ds-answer-numerical-data-question",
         "hr-organize-talent-info")


def write_export(root: Path) -> Path:
    """The file server's files these tasks name (synthetic stand-ins where the benchmark's are not
    public, in the formats their evaluators read)."""
    from reportlab.pdfgen import canvas

    def put(rel: str, data: bytes | str) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())

    def pdf(rel: str, lines: list[str]) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        c = canvas.Canvas(str(root / rel))
        for i, line in enumerate(lines):
            c.drawString(72, 720 - 16 * i, line)
        c.save()

    put("Documents/Financials/stock_data_raw.csv", (TASKS / "ds-stock-analysis-slides" / "stock_data.csv").read_bytes())
    put(f"{HR}/salary_increase.txt", "Name,Email,Salary Amount,Assignment Start Date,Assignment End Date\n"
        + "".join(f"{n},{e},{s},{a},{b}\n" for n, e, s, a, b in EMPLOYEES))
    for name, (school, work, skills) in RESUMES.items():
        pdf(f"{HR}/resumes/{name}.pdf", [name, f"Education: {school}", f"Experience: {work}", f"Skills: {skills}"])
    pdf("Documents/Research/OpenHands.pdf", ["OpenHands", *(" | ".join(str(v) for v in row) for t in TABLES for row in t)])
    for name in ("customers", "products", "inventory", "orders", "order_items"):
        put(f"{COFFEE}/{name}.csv", (TASKS / "ds-coffee-shop-database-management" / "eval_data" / f"{name}.csv").read_bytes())
    put(f"{COFFEE}/analysis.txt", "Products to reorder: <ANSWER HERE>\nBest selling products: <ANSWER HERE>\n"
        "Customers with pending payments: <ANSWER HERE>\n")
    put("Documents/Data Analysis/beverage_stats.xlsx", xlsx_bytes({"2015": [["Beverage", "Age 14-18"], ["Tea (including ice tea)", 20]]}))
    # the other paper tasks of the samples
    put(f"{ATTENDANCE}/attendance-2024-03-01.csv", (TASKS / "hr-check-attendance-one-day" / "attendance-2024-03-01.csv").read_bytes())
    put("Documents/Financials/July-September 2024 Financials.ods", b"ods")
    put("Documents/Data Analysis/respondent_counts.xlsx", (TASKS / "ds-format-excel-sheets" / "respondent_counts.xlsx").read_bytes())
    return root
