"""Reference deliverables of TheAgentCompany tasks: for each task named in REFERENCES, a correct
deliverable derived from what its evaluator.py checks and from the task's own folder (the answers
its evaluator holds, the data files it ships). `bench/tac_solvable.py` has a scripted agent make each one
in its real sandbox, in the preset's file-server mode (eval/tac/scripted_agent.py), and checks that
the task's evaluator gives full marks; tests/eval/tac/test_solvable.py does the same on the shared samples.

A deliverable says what the agent leaves where: on the file server (`server`, paths from its root,
which is the workspace when mounted and `.image/owncloud` when served), in its local workspace
(`local`, the image's /workspace), in /data (`data`), which server files it reads (`reads`, so the
trajectory names their pages) or copies into its workspace (`fetch`), a Python program it then runs
there (`script`), and which server file it shares in link.txt (`share`).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HR = "Documents/Human Resources Team"
COFFEE = "Documents/Data Analysis/Coffee Shop"
ATTENDANCE = f"{HR}/Attendance"
RESUMES = {
    "Emily Johnson": ("University of California, Berkeley", "Google; Amazon",
                      "Python, Java, C++, JavaScript, React, Node.js, Flask, Git, Docker, AWS, MySQL"),
    "Michael Davis": ("New York University", "Meta; Spotify",
                      "JavaScript, Python, Swift, Ruby, Django, Angular, React Native, Git, Firebase, PostgreSQL, Jenkins"),
    "Sarah Thompson": ("University of Texas at Austin", "Microsoft; Oracle",
                       "Python, Java, C#, HTML/CSS, Angular, Spring Boot, Express.js, Git, Docker, MongoDB, Kubernetes"),
}
# The rows of the OpenHands paper's tables 3-6 that sde-copy-table-from-pdf-to-xlsx checks.
TABLES = [
    [["Lemur", "Lemur-chat-70b", None, 5.3, None, None], ["CodeActAgent v1.8", "claude-3-5-sonnet", 26.0, 15.3, 52.0, None]],
    [["SWE-agent 1-shot", "gpt-4-turbo", 87.7, None], ["OH CodeActAgent v1.5", "gpt-3.5-turbo-16k-0613", 20.1, 0.11]],
    [["WebArena Agent", "Llama3-chat-70b", 7.0, None]],
    [["OH CodeActAgent v1.5", "gpt-3.5-turbo-0125", 11.8, 0.006]],
]
# hr-populate-salary-increase-memo counts the notices (ten); their names and figures are not checked.
EMPLOYEES = [("John Doe", "john.doe@theagentcompany.com", 95000, "2024-01-01", "2024-12-31"),
             ("Jane Smith", "jane.smith@theagentcompany.com", 105000, "2024-02-01", "2025-01-31"),
             ("Li Ming", "li.ming@theagentcompany.com", 88000, "2024-03-01", "2025-02-28"),
             ("Sarah Lee", "sarah.lee@theagentcompany.com", 99000, "2024-01-15", "2024-12-15"),
             ("Mark Chen", "mark.chen@theagentcompany.com", 120000, "2024-04-01", "2025-03-31"),
             ("Emma Brown", "emma.brown@theagentcompany.com", 92000, "2024-05-01", "2025-04-30"),
             ("Raj Patel", "raj.patel@theagentcompany.com", 101000, "2024-06-01", "2025-05-31"),
             ("Ana Silva", "ana.silva@theagentcompany.com", 97000, "2024-07-01", "2025-06-30"),
             ("Tom Hardy", "tom.hardy@theagentcompany.com", 110000, "2024-08-01", "2025-07-31"),
             ("Mia Wong", "mia.wong@theagentcompany.com", 93000, "2024-09-01", "2025-08-31")]


@dataclass
class Deliverable:
    server: dict[str, bytes] = field(default_factory=dict)
    local: dict[str, bytes] = field(default_factory=dict)
    data: dict[str, bytes] = field(default_factory=dict)
    script: str = ""  # a Python program the agent runs (in its workspace) after writing the files
    reads: list[str] = field(default_factory=list)
    fetch: dict[str, str] = field(default_factory=dict)  # server file -> where the agent copies it in its workspace
    share: str | None = None
    plain_link: bool = False  # link.txt holds the file's WebDAV URL instead of a share link


def deliverable(task: str, task_dir: Path, tmp: Path) -> Deliverable:
    """A correct deliverable of `task` (one of REFERENCES), from its folder `task_dir`."""
    return REFERENCES[task](task_dir, tmp)


def _stock(task_dir: Path, tmp: Path) -> Deliverable:
    folder = "Documents/Financials/stock_presentation"
    script = "Good morning, board members, and thank you for joining. " + " ".join(
        f"Slide {i}: {t} and its business impact." for i, t in enumerate(STOCK_PLOTS, 1)) + " Thank you for your time."
    return Deliverable(
        server={f"{folder}/stock_cleaned.csv": (task_dir / "stock_data.csv").read_bytes(),
                f"{folder}/stock_analysis.pptx": slides(task_dir / "stock_data.csv", tmp), f"{folder}/stock_analysis_script.md": script.encode()},
        reads=["Documents/Financials/stock_data_raw.csv"],
    )


def _memo(task_dir: Path, tmp: Path) -> Deliverable:
    fields = ("Name", "Email", "Salary Amount", "Assignment Start and End Date")
    template = _odt([f"{f}: ____" for f in fields])
    notices = {f"{HR}/salary_increase_notice/{n.replace(' ', '_')}_MEMO.odt": _odt([f"Name: {n}", f"Email: {e}", f"Salary Amount: {s}",
                                                                                    f"Assignment Start and End Date: {a} to {b}"])
               for n, e, s, a, b in EMPLOYEES}
    return Deliverable(server={f"{HR}/Salary_Increase_MEMO.odt": template, **notices}, reads=[f"{HR}/salary_increase.txt"])


def _new_grad(task_dir: Path, tmp: Path) -> Deliverable:
    sections = re.split(r"\n(?=[A-Z][A-Za-z ]+:\n)", (task_dir / "requirement.txt").read_text().strip())
    text = (task_dir / "template.md").read_text()
    for section in sections:
        text = text.replace("[Insert Information]", section.split("\n", 1)[1].strip(), 1)
    if "[Insert Information]" in text:
        raise ValueError("hr-new-grad-job-description: template.md has more blanks than requirement.txt has sections")
    return Deliverable(server={"Documents/job_description.md": text.encode()}, share="Documents/job_description.md")


def _copy_table(task_dir: Path, tmp: Path) -> Deliverable:
    heads = [["Agent", "Model", "A", "B", "C", "D"], ["Agent", "Model", "A", "B"], ["Agent", "Model", "A", "B"], ["Agent", "Model", "A", "B"]]
    sheets = {f"Table {i + 3}": [heads[i], *TABLES[i]] for i in range(4)}
    return Deliverable(server={"Documents/Research/openhands_evaluation.xlsx": xlsx_bytes(sheets)}, reads=["Documents/Research/OpenHands.pdf"],
                       share="Documents/Research/openhands_evaluation.xlsx")


COFFEE_DB = """
import sqlite3, pandas as pd
con = sqlite3.connect("/data/coffee_shop.db")
for name in ("customers", "products", "inventory", "orders", "order_items"):
    pd.read_csv(f"{name}.csv").to_sql(name, con, index=False)
con.executescript('''
CREATE VIEW v_short_stock AS SELECT product_id, quantity_in_stock, reorder_point FROM inventory
  WHERE quantity_in_stock < reorder_point;
CREATE VIEW v_sales AS SELECT oi.product_id AS product_id,
  ROUND(SUM(oi.quantity) * 1.0 / (SELECT COUNT(DISTINCT order_date) FROM orders), 2) AS average_sales,
  ROUND(SUM(oi.quantity * oi.unit_price), 2) AS revenue_generated,
  ROUND(SUM(oi.quantity * (oi.unit_price - p.unit_cost)), 2) AS profit_generated
  FROM order_items oi JOIN products p ON p.product_id = oi.product_id GROUP BY oi.product_id;
CREATE TABLE short_stock AS SELECT * FROM v_short_stock;
CREATE TABLE average_sales AS SELECT * FROM v_sales;
''')
con.commit()
"""


def _coffee(task_dir: Path, tmp: Path) -> Deliverable:
    analysis = "Products to reorder: P001, P003, P005\nBest selling products: P001, P002, P004\nCustomers with pending payments: Sarah Johnson, Emma Brown\n"
    names = ("customers", "products", "inventory", "orders", "order_items")
    return Deliverable(local={"analysis.txt": analysis.encode()}, script=COFFEE_DB, reads=[f"{COFFEE}/{n}.csv" for n in names],
                       fetch={f"{COFFEE}/{n}.csv": f"{n}.csv" for n in names})


def _numerical(task_dir: Path, tmp: Path) -> Deliverable:
    import docx

    doc = docx.Document()
    for answer in ("Tea (including ice tea)", "88.475", "74.775"):
        doc.add_paragraph(answer)
    buf = io.BytesIO()
    doc.save(buf)
    return Deliverable(local={"answer.docx": buf.getvalue()}, reads=["Documents/Data Analysis/beverage_stats.xlsx"])


def _talent(task_dir: Path, tmp: Path) -> Deliverable:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["Name", "Education", "Work Experience", "Skills"])
    for name, row in RESUMES.items():
        w.writerow([name, *row])
    return Deliverable(local={"summary.csv": buf.getvalue().encode()}, reads=[f"{HR}/resumes/{n}.pdf" for n in RESUMES])


def _remove_pages(task_dir: Path, tmp: Path) -> Deliverable:
    return Deliverable(local={"openhands_short.pdf": (task_dir / "expected_openhands_short.pdf").read_bytes()})


def _fix_table(task_dir: Path, tmp: Path) -> Deliverable:
    import openpyxl

    wb = openpyxl.load_workbook(task_dir / "ref_data.xlsx")
    ws = wb["data"]
    for row in ws.iter_rows():
        for cell in row:
            if cell.value == "x":
                cell.value = 0
    ws["B24"], ws["B92"] = 2809, 0.988  # the two answer cells (rows 23 and 91 of the data frame)
    buf = io.BytesIO()
    wb.save(buf)
    return Deliverable(local={"corrected_other_corp_area_totals.xlsx": buf.getvalue()})


def _attendance(task_dir: Path, tmp: Path) -> Deliverable:
    with open(task_dir / "attendance-2024-03-01.csv", newline="") as f:
        rows = [{k.strip(): v.strip() for k, v in r.items()} for r in csv.DictReader(f)]
    perfect = [r["Name"] for r in rows if "17:30" <= r["Clock-out"] <= "18:00"]
    return Deliverable(local={"2024-03-attendance-summary.xlsx": xlsx_bytes({"Sheet": [["Name"], *([n] for n in perfect)]})},
                       reads=[f"{ATTENDANCE}/attendance-2024-03-01.csv"])


def _research(task_dir: Path, tmp: Path) -> Deliverable:
    answers = (task_dir / "eval_data" / "answers.txt").read_text().splitlines()
    sheet = "".join(f"Question {i + 1}: {a}\n" for i, a in enumerate(answers))
    return Deliverable(local={"noise_simulation_paper.pdf": b"%PDF-1.4", "noise_simulation_analysis_sheet.txt": sheet.encode()})


FINANCIAL_DB = """
import sqlite3
con = sqlite3.connect("financial_report.db")
con.executescript('''
CREATE TABLE financial_categories (category_id INTEGER PRIMARY KEY, category_name TEXT, category_type TEXT);
CREATE TABLE financial_details (detail_id INTEGER PRIMARY KEY, category_id INTEGER, month TEXT, actual REAL,
  budget REAL, variance REAL, percent_of_budget REAL);
INSERT INTO financial_categories VALUES (1, 'Total Income', 'Income'), (2, 'Software Development Services', 'Income'),
  (3, 'Consulting', 'Income');
INSERT INTO financial_details VALUES (1, 1, '2024-07', 150000, 160000, -10000, 93.75),
  (2, 1, '2024-08', 140000, 175000, -35000, 80.0), (3, 1, '2024-09', 170000, 165000, 5000, 103.0),
  (4, 2, '2024-07', 70000, 80000, -10000, 87.5), (5, 3, '2024-07', 25000, 20000, 5000, 125.0);
''')
con.commit()
"""


def _sqlite(task_dir: Path, tmp: Path) -> Deliverable:
    ods = "Documents/Financials/July-September 2024 Financials.ods"
    return Deliverable(reads=[ods], fetch={ods: "July-September 2024 Financials.ods"}, script=FINANCIAL_DB)


FORMATTED = ("A3", "B3", "B5", "C3", "C4", "D4", "D5", "E5", "F3", "F4", "G4", "G5", "H5", "I3", "I4", "J4", "J5", "K5")


def _format_sheets(task_dir: Path, tmp: Path) -> Deliverable:
    import openpyxl
    from openpyxl.styles import Alignment, PatternFill

    wb = openpyxl.load_workbook(task_dir / "respondent_counts.xlsx")
    ws = wb.copy_worksheet(wb["unformatted"])
    ws.title = "formatted"
    for row in ws.iter_rows(min_row=1, max_row=max(ws.max_row, 21), max_col=11):
        for cell in row:
            if cell.coordinate in FORMATTED:
                cell.fill = PatternFill(start_color="FF87CEEB", end_color="FF87CEEB", fill_type="solid")
            if cell.row >= 3 and cell.value is not None:
                cell.alignment = Alignment(horizontal="center", vertical=cell.alignment.vertical, wrap_text=cell.alignment.wrap_text)
    buf = io.BytesIO()
    wb.save(buf)
    return Deliverable(server={"Documents/Data Analysis/respondent_counts.xlsx": buf.getvalue()},
                       reads=["Documents/Data Analysis/respondent_counts.xlsx"])


REFERENCES: dict[str, Callable[[Path, Path], Deliverable]] = {
    "admin-remove-pages-pdf": _remove_pages, "ds-answer-numerical-data-question": _numerical,
    "ds-coffee-shop-database-management": _coffee, "ds-fix-table-values-and-missing-answers": _fix_table,
    "ds-format-excel-sheets": _format_sheets, "ds-stock-analysis-slides": _stock, "hr-check-attendance-one-day": _attendance,
    "hr-new-grad-job-description": _new_grad, "hr-organize-talent-info": _talent, "hr-populate-salary-increase-memo": _memo,
    "research-answer-questions-on-paper": _research, "sde-copy-table-from-pdf-to-xlsx": _copy_table,
    "sde-create-sqlite-database": _sqlite,
}


STOCK_PLOTS = ("Closing Prices Over Time", "Close Price with 50 and 200-Day Moving Averages", "Correlation Between Columns",
               "Daily Return Distribution", "Volume Distribution")


def slides(stock_csv: Path, tmp: Path) -> bytes:
    """Five slides, one plot each (the five the task names), drawn from the task's own data."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    from pptx import Presentation
    from pptx.util import Inches

    df = pd.read_csv(stock_csv)
    close = df["Close"]
    draw = [lambda ax: ax.plot(close), lambda ax: [ax.plot(close), ax.plot(close.rolling(50).mean()), ax.plot(close.rolling(200).mean())],
            lambda ax: ax.imshow(df[["Close", "Volume", "Open"]].corr()), lambda ax: ax.hist(close.pct_change().dropna(), bins=50),
            lambda ax: ax.hist(df["Volume"], bins=50)]
    deck = Presentation()
    for i, (title, plot) in enumerate(zip(STOCK_PLOTS, draw, strict=True)):
        fig, ax = plt.subplots(figsize=(4, 3))
        plot(ax)
        ax.set_title(title)
        png = tmp / f"plot{i}.png"
        fig.savefig(png, dpi=50)
        plt.close(fig)
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = title
        slide.shapes.add_picture(str(png), Inches(1), Inches(1.5), width=Inches(6))
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def xlsx_bytes(sheets: dict[str, list[list]]) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _odt(paragraphs: list[str]) -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    doc = OpenDocumentText()
    for text in paragraphs:
        doc.text.addElement(P(text=text))
    buf = io.BytesIO()
    doc.write(buf)
    return buf.getvalue()
