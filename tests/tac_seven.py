"""The seven TheAgentCompany task folders of issue 26 (shared/samples), for tests/test_tac_samples.py:
a file-server export holding the files each task names, and for each a correct deliverable derived
from its evaluator's logic (no tests here).

A deliverable says what the agent leaves where: on the file server (`server`, paths from its root,
which is the workspace when mounted and `.image/owncloud` when served), in its local workspace
(`local`, the image's /workspace), in /data (`data`), which server files it reads (`reads`), and
which server file it shares in link.txt (`share`). `agent_script` turns it into the bash calls a
scripted model makes, for either file-server mode.
"""

from __future__ import annotations

import base64
import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from runners.core.messages import AssistantMessage
from tests.test_eval_helpers import SAMPLES

TASKS = SAMPLES / "theagentcompany"
SEVEN = ("ds-stock-analysis-slides", "hr-populate-salary-increase-memo", "hr-new-grad-job-description",
         "sde-copy-table-from-pdf-to-xlsx", "ds-coffee-shop-database-management", "ds-answer-numerical-data-question",
         "hr-organize-talent-info")
HR = "Documents/Human Resources Team"
COFFEE = "Documents/Data Analysis/Coffee Shop"
SERVER = "http://the-agent-company.com:8092"
AUTH = "-u theagentcompany:theagentcompany"
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
RESUMES = {
    "Emily Johnson": ("University of California, Berkeley", "Google; Amazon",
                      "Python, Java, C++, JavaScript, React, Node.js, Flask, Git, Docker, AWS, MySQL"),
    "Michael Davis": ("New York University", "Meta; Spotify",
                      "JavaScript, Python, Swift, Ruby, Django, Angular, React Native, Git, Firebase, PostgreSQL, Jenkins"),
    "Sarah Thompson": ("University of Texas at Austin", "Microsoft; Oracle",
                       "Python, Java, C#, HTML/CSS, Angular, Spring Boot, Express.js, Git, Docker, MongoDB, Kubernetes"),
}
# The rows of TheAgentCompany's OpenHands paper tables 3-6 that sde-copy-table-from-pdf-to-xlsx checks.
TABLES = [
    [["Lemur", "Lemur-chat-70b", None, 5.3, None, None], ["CodeActAgent v1.8", "claude-3-5-sonnet", 26.0, 15.3, 52.0, None]],
    [["SWE-agent 1-shot", "gpt-4-turbo", 87.7, None], ["OH CodeActAgent v1.5", "gpt-3.5-turbo-16k-0613", 20.1, 0.11]],
    [["WebArena Agent", "Llama3-chat-70b", 7.0, None]],
    [["OH CodeActAgent v1.5", "gpt-3.5-turbo-0125", 11.8, 0.006]],
]


@dataclass
class Deliverable:
    server: dict[str, bytes] = field(default_factory=dict)
    local: dict[str, bytes] = field(default_factory=dict)
    data: dict[str, bytes] = field(default_factory=dict)
    script: str = ""  # a Python program the agent runs (in its workspace) after writing the files
    reads: list[str] = field(default_factory=list)
    share: str | None = None
    plain_link: bool = False  # link.txt holds the file's WebDAV URL instead of a share link


def write_export(root: Path) -> Path:
    """The file server's files these seven tasks name (synthetic stand-ins where the benchmark's are
    not public, in the formats their evaluators read)."""
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
    put("Documents/Data Analysis/beverage_stats.xlsx", _xlsx({"2015": [["Beverage", "Age 14-18"], ["Tea (including ice tea)", 20]]}))
    return root


def deliverable(task: str, tmp: Path) -> Deliverable:
    """A correct deliverable of `task`, derived from what its evaluator.py checks."""
    return _BUILDERS[task](tmp)


def _stock(tmp: Path) -> Deliverable:
    folder = "Documents/Financials/stock_presentation"
    script = "Good morning, board members, and thank you for joining. " + " ".join(
        f"Slide {i}: {t} and its business impact." for i, t in enumerate(STOCK_PLOTS, 1)) + " Thank you for your time."
    return Deliverable(
        server={f"{folder}/stock_cleaned.csv": (TASKS / "ds-stock-analysis-slides" / "stock_data.csv").read_bytes(),
                f"{folder}/stock_analysis.pptx": slides(tmp), f"{folder}/stock_analysis_script.md": script.encode()},
        reads=["Documents/Financials/stock_data_raw.csv"],
    )


def _memo(tmp: Path) -> Deliverable:
    fields = ("Name", "Email", "Salary Amount", "Assignment Start and End Date")
    template = _odt([f"{f}: ____" for f in fields])
    notices = {f"{HR}/salary_increase_notice/{n.replace(' ', '_')}_MEMO.odt": _odt([f"Name: {n}", f"Email: {e}", f"Salary Amount: {s}",
                                                                                    f"Assignment Start and End Date: {a} to {b}"])
               for n, e, s, a, b in EMPLOYEES}
    return Deliverable(server={f"{HR}/Salary_Increase_MEMO.odt": template, **notices}, reads=[f"{HR}/salary_increase.txt"])


def _new_grad(tmp: Path) -> Deliverable:
    task = TASKS / "hr-new-grad-job-description"
    sections = re.split(r"\n(?=[A-Z][A-Za-z ]+:\n)", (task / "requirement.txt").read_text().strip())
    text = (task / "template.md").read_text()
    for section in sections:
        text = text.replace("[Insert Information]", section.split("\n", 1)[1].strip(), 1)
    assert "[Insert Information]" not in text
    return Deliverable(server={"Documents/job_description.md": text.encode()}, share="Documents/job_description.md")


def _copy_table(tmp: Path) -> Deliverable:
    heads = [["Agent", "Model", "A", "B", "C", "D"], ["Agent", "Model", "A", "B"], ["Agent", "Model", "A", "B"], ["Agent", "Model", "A", "B"]]
    sheets = {f"Table {i + 3}": [heads[i], *TABLES[i]] for i in range(4)}
    return Deliverable(server={"Documents/Research/openhands_evaluation.xlsx": _xlsx(sheets)}, reads=["Documents/Research/OpenHands.pdf"],
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


def _coffee(tmp: Path) -> Deliverable:
    analysis = "Products to reorder: P001, P003, P005\nBest selling products: P001, P002, P004\nCustomers with pending payments: Sarah Johnson, Emma Brown\n"
    return Deliverable(local={"analysis.txt": analysis.encode()}, script=COFFEE_DB,
                       reads=[f"{COFFEE}/{n}.csv" for n in ("customers", "products", "inventory", "orders", "order_items")])


def _numerical(tmp: Path) -> Deliverable:
    import docx

    doc = docx.Document()
    for answer in ("Tea (including ice tea)", "88.475", "74.775"):
        doc.add_paragraph(answer)
    buf = io.BytesIO()
    doc.save(buf)
    return Deliverable(local={"answer.docx": buf.getvalue()}, reads=["Documents/Data Analysis/beverage_stats.xlsx"])


def _talent(tmp: Path) -> Deliverable:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["Name", "Education", "Work Experience", "Skills"])
    for name, row in RESUMES.items():
        w.writerow([name, *row])
    return Deliverable(local={"summary.csv": buf.getvalue().encode()}, reads=[f"{HR}/resumes/{n}.pdf" for n in RESUMES])


_BUILDERS = {"ds-stock-analysis-slides": _stock, "hr-populate-salary-increase-memo": _memo, "hr-new-grad-job-description": _new_grad,
             "sde-copy-table-from-pdf-to-xlsx": _copy_table, "ds-coffee-shop-database-management": _coffee,
             "ds-answer-numerical-data-question": _numerical, "hr-organize-talent-info": _talent}


def agent_script(d: Deliverable, served: bool) -> list[dict]:
    """The scripted model's turns: read what the task names, write the deliverable where it goes
    (served: upload to the file server with curl, share through its OCS API), then finish."""
    turns = []
    for rel in d.reads:
        turns.append(_bash(f"curl -s {AUTH} '{SERVER}/remote.php/webdav/{quote(rel)}' | head -c 300" if served else f"head -c 300 '{rel}'"))
        if rel.endswith(".csv") and rel.startswith(COFFEE):  # the coffee task works on local copies
            name = rel.rsplit("/", 1)[1]
            turns.append(_bash(f"curl -s {AUTH} -o {name} '{SERVER}/remote.php/webdav/{quote(rel)}'" if served else f"cp '{rel}' {name}"))
    for rel, data in d.local.items():
        turns.append(_bash(_write(rel, data)))
    for rel, data in d.data.items():
        turns.append(_bash(_write(f"/data/{rel}", data)))
    for rel, data in d.server.items():
        if not served:
            turns.append(_bash(_write(rel, data)))
            continue
        parents = [rel.rsplit("/", 1)[0].split("/")[: i + 1] for i in range(rel.count("/"))]
        mkcol = "; ".join(f"curl -s {AUTH} -X MKCOL '{SERVER}/remote.php/webdav/{quote('/'.join(p))}' >/dev/null" for p in parents)
        turns.append(_bash(f"{_write('/tmp/upload', data)}\n{mkcol}; curl -sf {AUTH} -T /tmp/upload '{SERVER}/remote.php/webdav/{quote(rel)}'"))
    if d.script:
        turns.append(_bash(f"python - <<'PY'\n{d.script}\nPY"))
    if d.share:
        url = f"{SERVER}/remote.php/webdav/{quote(d.share)}"
        if served and not d.plain_link:
            ocs = f"{SERVER}/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json"
            turns.append(_bash(f"curl -s {AUTH} -d 'path=/{d.share}&shareType=3' '{ocs}' | python -c "
                               "'import json,sys; print(json.load(sys.stdin)[\"ocs\"][\"data\"][\"url\"])' > link.txt; cat link.txt"))
        else:
            turns.append(_bash(f"echo '{url}' > link.txt"))
    return [*turns, {"content": "Done."}]


def _bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def _write(path: str, data: bytes) -> str:
    b64 = base64.b64encode(data).decode()
    lines = "\n".join(b64[i : i + 76] for i in range(0, len(b64), 76))
    return f"mkdir -p \"$(dirname '{path}')\" && base64 -d > '{path}' <<'B64'\n{lines}\nB64"


class RuleJudge:
    """A judge model with rules: an image question is "yes" when a PNG is attached; a text question
    is "yes" when the content is not empty and holds every `backquoted` answer of the predicate."""

    name = "rule-judge"

    def complete(self, messages, tools) -> AssistantMessage:
        parts = messages[0]["content"]
        parts = parts if isinstance(parts, list) else [{"type": "text", "text": parts}]
        text = next((p["text"] for p in parts if p.get("type") == "text"), "")
        image = next((p["image_url"]["url"] for p in parts if p.get("type") == "image_url"), None)
        if image is not None:
            ok = base64.b64decode(image.split(",", 1)[-1] or "AA==")[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            m = re.match(r'Does the content """(.*)""" indicate (.*?)\? Please answer', text, re.S)
            ok = bool(m and m.group(1).strip()) and all(a.lower() in m.group(1).lower() for a in re.findall(r"`([^`]+)`", m.group(2)))
        return AssistantMessage(content="yes" if ok else "no")


STOCK_PLOTS = ("Closing Prices Over Time", "Close Price with 50 and 200-Day Moving Averages", "Correlation Between Columns",
               "Daily Return Distribution", "Volume Distribution")


def slides(tmp: Path) -> bytes:
    """Five slides, one plot each (the five the task names), drawn from the task's own data."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    from pptx import Presentation
    from pptx.util import Inches

    df = pd.read_csv(TASKS / "ds-stock-analysis-slides" / "stock_data.csv")
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


def _xlsx(sheets: dict[str, list[list]]) -> bytes:
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
