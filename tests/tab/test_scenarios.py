"""The paper's worked example (Table 5) and its two case studies (Tables 6 and 7), replayed turn by turn
through the real workspace environment with the tab plugged in."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tab import render_tab, review_coverage, tab_summary
from tests.tab.test_support import (
    Session,
    missing_tools,
    status_of,
    write_docx,
    write_files,
    write_pdf,
)

PY = sys.executable  # has python-docx, as an agent's python would
pytestmark = pytest.mark.skipif(bool(missing_tools("pdftotext")), reason="pdftotext not installed (poppler-utils)")


def docx_cmd(path: str) -> str:
    return f"{PY} -c \"import docx; print('\\n'.join(p.text for p in docx.Document('{path}').paragraphs))\""


# --- Table 5: a business travel and reimbursement guide ---

TOPICS = [
    "Travel approval: who approves a business trip request and when",
    "Transportation and accommodation standards by staff grade",
    "Reimbursement standards: amounts for reimbursing travel expenses",
    "Reimbursement process: submitting claims with invoices",
    "Violation handling: consequences of false expense claims",
    "A business travel and reimbursement guide covering the five topics, written to output/guide.md",
]


@pytest.fixture
def travel_ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    write_files(root, {
        "policies/travel_approval.md": (
            "Article 3 Travel approval\nA business trip request is approved by the department head "
            "before departure.\nUrgent trips may be approved afterwards within 2 days.\n"),
        "policies/reimbursement_standards.md": (
            "Article 7 Standards for reimbursing travel expenses\nHotel: up to 500 per night.\n"
            "Meals: 100 per day.\nTaxis are reimbursed only at night.\n"),
        "archive/reimbursement_standards_2019.md": "Article 7 (2019) Standards for reimbursing ...\n",
    })
    write_pdf(root / "policies/expense_claims.pdf", [
        "Article 9 Reimbursement process", "Submit claims with original invoices within 30 days."])
    write_docx(root / "policies/travel.docx", [
        "Article 5 Transportation and accommodation", "Staff grade A: economy class, standard room.",
        "Article 12 Violation handling", "False claims are repaid and reported to HR."])
    for i in range(1, 94):  # the rest of a shared drive: 98 files in all
        sub = "projects" if i % 2 else "meetings"
        write_files(root, {f"{sub}/item_{i:02d}/notes.md": f"Notes {i}: nothing on the subject.\n"})
    return root


def test_table5_business_travel_guide(travel_ws: Path) -> None:
    s = Session(travel_ws, exclude=("output",))
    added = s.one("tab_add", requirements=TOPICS)  # turn 1, before opening any file
    assert "r1: Travel approval" in added.content and "r6: A business travel" in added.content
    assert s.one("bash", command="ls").appendix.endswith("0 candidates")  # folders only
    found = s.one("bash", command="find . -type f")  # turn 3
    assert status_of(found) == (
        "[tab] 6 requirements (6 open) · 0 read-log entries (0 files) · 98 candidates · +98 candidates")
    s.one("bash", command="cat policies/travel_approval.md")  # L1
    s.one("read", path="policies/reimbursement_standards.md")  # L2
    s.one("bash", command="pdftotext policies/expense_claims.pdf -")  # L3
    assert status_of(s.one("bash", command="wc -w policies/*.md")).endswith("95 candidates")  # nothing new
    last = s.one("bash", command=docx_cmd("policies/travel.docx"))  # turn 8: L4
    assert s.turn == 8
    assert status_of(last) == (
        "[tab] 6 requirements (6 open) · 4 read-log entries (4 files) · 94 candidates · "
        "+L4 policies/travel.docx · 1 candidate opened")

    s.one("bash", command="mkdir -p output")
    review = s.one("tab_review").content.split("\n")  # turn 10
    r3 = review.index("r3 [open] " + TOPICS[2])
    assert review[r3 + 1] == "  L2 policies/reimbursement_standards.md: Article 7 Standards for reimbursing travel expenses"
    block = review[r3 + 1 : next(i for i in range(r3 + 1, len(review)) if review[i].startswith("r4"))]
    assert "  unopened: archive/reimbursement_standards_2019.md" in block

    guide = "# Business travel guide\n" + "\n".join(f"## {t}" for t in TOPICS[:5])
    written = s.one("bash", command=f"cat > output/guide.md <<'EOF'\n{guide}\nEOF")  # turn 11
    assert "+L" not in status_of(written)
    assert s.one("tab_resolve", id="r3", status="done", entries=["L2"]).content.startswith("r3 done, citing L2.")
    for rid, entries in [("r1", ["L1"]), ("r2", ["L4"]), ("r4", ["L3"]), ("r5", ["L4"]), ("r6", ["L1", "L2", "L3", "L4"])]:
        reply = s.one("tab_resolve", id=rid, status="done", entries=entries)
        assert not reply.is_error, reply.content
    assert "All 6 requirements are resolved." in reply.content
    s.one("tab_show", entry_id="L2")
    while s.turn < 21:
        s.one("bash", command="cat output/guide.md")  # the deliverable is excluded: never an entry
    check = s.stop()  # turn 22
    assert check is not None and check.startswith("All 6 requirements on the tab are resolved:")
    assert "r3 done (L2): " + TOPICS[2] in check
    assert s.stop() is None  # sent once; the next stop ends the run

    record = s.tab.record()
    assert [e["path"] for e in record["read_log"]] == [
        "policies/travel_approval.md", "policies/reimbursement_standards.md", "policies/expense_claims.pdf",
        "policies/travel.docx"]
    assert record["read_log"][1]["command"] == "read policies/reimbursement_standards.md"
    assert tab_summary(record)["candidates"] == 94 and review_coverage(record) == 1.0
    at3, at8 = render_tab(record, upto_turn=3), render_tab(record, upto_turn=8)
    assert "Candidates: 98" in at3 and "Read log: 0 entries" in at3
    assert "Candidates: 94" in at8 and "Read log: 4 entries, 4 files" in at8
    assert "r3 [open]" in at8 and "r3 [done L2]" in render_tab(record, upto_turn=12)
    s.close()


# --- Table 6: a water and electricity saving manual from four policy files ---

def test_case_study_saving_manual_one_requirement_per_file(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write_docx(root / "policies/water_saving.docx", [
        "Chapter 1 Water saving", "Article 1 Turn taps off after use.", "Article 2 Report leaking pipes."])
    write_files(root, {
        "policies/electricity_saving.md": "Chapter 2 Electricity saving\nArticle 6 Switch lights off when leaving.\n",
        "policies/air_conditioning.md": "Chapter 4 Air conditioning\nArticle 14 Cooling at 26 degrees or above.\n",
    })
    write_pdf(root / "policies/office_equipment.pdf", [
        "Chapter 3 Office equipment", "Article 10 Computers and printers on standby after 18:00."])
    files = ["policies/water_saving.docx", "policies/electricity_saving.md", "policies/office_equipment.pdf",
             "policies/air_conditioning.md"]
    reqs = ["Water saving chapter: turning taps off and reporting leaking pipes",
            "Electricity saving chapter: switching lights off",
            "Office equipment chapter: computers and printers on standby",
            "Air conditioning chapter: cooling at 26 degrees"]
    s = Session(root, exclude=("output",))
    s.one("tab_add", requirements=reqs)  # (A)
    assert status_of(s.one("bash", command="ls policies")).endswith("4 candidates · +4 candidates")
    s.one("bash", command=docx_cmd(files[0]))
    s.one("read", path=files[1])
    s.one("bash", command=f"pdftotext {files[2]} -")
    s.one("bash", command=f"cat {files[3]}")
    assert [e.path for e in s.tab.state.entries.values()] == files  # (B) L1..L4, one per file
    s.one("bash", command="mkdir -p output && printf '# Manual\\n' > output/manual.md")
    review = s.one("tab_review").content.split("\n")  # (C)
    for i, req in enumerate(reqs, start=1):
        at = review.index(f"r{i} [open] {req}")
        assert review[at + 1].startswith(f"  L{i} {files[i - 1]}: "), review[at + 1]
    for i in range(1, 5):  # (D) each against the entry of its own file
        assert not s.one("tab_resolve", id=f"r{i}", status="done", entries=[f"L{i}"]).is_error
    check = s.stop()  # (E)
    assert check is not None and check.startswith("All 4 requirements on the tab are resolved:")
    assert all(f"r{i} done (L{i})" in check for i in range(1, 5))
    s.close()


# --- Table 7: ten purchase orders, one row each ---

SUPPLIERS = [2, 4, 7, 8, 9, 11, 12, 13, 14, 15]
AMOUNTS = [3200, 12800, 4500, 900, 23000, 7600, 15400, 2100, 8800, 55000]


def test_case_study_purchase_orders_finish_check_asks_for_requirements(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    orders = {}
    for k, (sup, amount) in enumerate(zip(SUPPLIERS, AMOUNTS, strict=True), start=1):
        status = "Approved" if k % 3 else "Pending"
        orders[f"orders/PO-2024-{k:03d}.md"] = (
            f"Purchase order PO-2024-{k:03d}\nSupplier: Supplier {sup}\nStatus: {status}\nAmount: ¥{amount:,}\n")
    write_files(root, {"README.md": "Summarize the purchase orders by supplier.\n",
                       "suppliers.csv": "id,name\n" + "".join(f"{n},Supplier {n}\n" for n in SUPPLIERS), **orders})
    s = Session(root, exclude=("output",))
    s.one("bash", command="cat README.md")  # L1
    s.one("bash", command="head -n 3 suppliers.csv")  # L2
    for path in orders:  # read one at a time: L3 .. L12
        s.one("read", path=path)
    assert s.tab.state.entries["L12"].path == "orders/PO-2024-010.md"
    assert "Supplier 15" in s.tab.state.entries["L12"].excerpt
    s.one("bash", command="mkdir -p output && echo '| Supplier 15 | 55,000 |' > output/summary.md")

    check = s.stop()  # the finish check: no requirement recorded
    assert check is not None and "no requirement recorded" in check and "tab_add" in check
    rows = [f"Row for Supplier {sup}: status, amount ¥{amount:,}, source order PO-2024-{k:03d}"
            for k, (sup, amount) in enumerate(zip(SUPPLIERS, AMOUNTS, strict=True), start=1)]
    s.one("tab_add", requirements=rows)
    review = s.one("tab_review").content.split("\n")
    at = review.index("r10 [open] " + rows[9])
    assert review[at + 1].startswith("  L12 orders/PO-2024-010.md: ")  # its own order first
    for k in range(1, 11):
        reply = s.one("tab_resolve", id=f"r{k}", status="done", entries=[f"L{k + 2}"])
        assert not reply.is_error, reply.content
    assert s.tab.state.requirements["r10"].entries == ["L12"]
    assert s.stop() is None  # the check was sent once
    events = [e["kind"] for e in s.tab.record()["events"]]
    assert events.count("finish_check") == 1 and events.index("finish_check") < events.index("add")
    s.close()
