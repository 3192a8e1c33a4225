"""The ten *company* tasks (TheAgentCompany-like): each writes its sources into the file server,
its checkpoints (points each, a deterministic check each) and its reference solution."""

from __future__ import annotations

import random
from typing import Any

from eval.benchmarks.builtin import solution as sol
from eval.benchmarks.builtin import words
from eval.benchmarks.builtin.office import csv_text
from eval.benchmarks.builtin.writer import SuiteWriter
from eval.benchmarks.builtin.ws_common import absent

WS = "fileserver"


def cp(text: str, points: int, check: dict[str, Any]) -> dict[str, Any]:
    return {"text": text, "points": points, "check": check}


def _rows(file: str, rows: list[list[Any]], tol: float = 0.0) -> dict[str, Any]:
    return {"type": "all", "checks": [{"type": "row", "file": file, "cells": r, "tolerance": tol} for r in rows]}


def _task(w: SuiteWriter, tid: str, prompt: str, output: str, checkpoints: list, solution: list, scoring: str = "sum") -> None:
    w.task(solution, id=tid, prompt=prompt, workspace=WS, output=output, checkpoints=checkpoints,
           **({"extra": {"scoring": scoring}} if scoring != "sum" else {}))


def drinks(w: SuiteWriter, rng: random.Random) -> None:
    names = ["Apple Juice", "Orange Juice", "Coke", "Diet Coke", "Sparkling Water", "Green Tea", "Vita Coco", "Talking Rain", "Milk"]
    common, rare = names[:6], names[6:]
    staff = words.people(rng, 16)
    picks = {p: rng.sample(common, rng.choice([1, 2])) for p in staff}
    for drink, who in zip(rare + ["Vita Coco"], rng.sample(staff, 4), strict=True):
        picks[who] = picks[who][:1] + [drink]
    tricky = next(p for p in staff if len(picks[p]) == 1 and picks[p][0] != "Diet Coke")
    picks[tricky] = picks[tricky] + ["Diet Coke"]
    counts = {d: sum(d in v for v in picks.values()) for d in names}
    lines = ["# Office drinks questionnaire (paper forms, transcribed)", ""]
    for p in staff:
        if p == tricky:
            lines += [f"- {p}: {picks[p][0]},", "  Diet Coke"]
        else:
            lines.append(f"- {p}: {', '.join(picks[p])}")
    src = w.text(WS, "Documents/Admin/drinks_survey_responses.md", "\n".join(lines))
    w.text(WS, "Documents/Admin/drinks_survey_2023.md", "# Drinks survey 2023 (closed)\n\n" + "\n".join(f"- {d}: {rng.randint(1, 9)} votes" for d in names[:5]))
    out = w.text(WS, "Documents/Admin/drinks_survey.csv", "drink,quantity")
    rows = [[d, counts[d]] for d in names]
    checkpoints = [
        cp(f"All {len(names)} drinks are listed, one row each (the trick: Diet Coke is on its own line), and nothing of the closed 2023 survey.", 2,
           {"type": "all", "checks": [{"type": "row_count", "file": out, "equals": len(names)}, {"type": "contains", "file": out, "values": names},
                                      absent(out, ["2023", "votes", "closed"], csv_text([["drink", "quantity"]] + rows))]}),
        cp(f"Count correctly that {counts['Apple Juice']} people like Apple Juice.", 1, {"type": "row", "file": out, "cells": ["Apple Juice", counts["Apple Juice"]]}),
        cp("Identify Vita Coco, Talking Rain and Milk.", 1, _rows(out, [[d] for d in rare])),
        cp(f"Count correctly that demand for Vita Coco is {counts['Vita Coco']} and for Diet Coke {counts['Diet Coke']}.", 1,
           _rows(out, [["Vita Coco", counts["Vita Coco"]], ["Diet Coke", counts["Diet Coke"]]])),
    ]
    prompt = ("We are collecting employees' preferences on drinks to help with our purchasing plan. The answers to the "
              f"questionnaire we placed in the office are transcribed in {src}. Organize the responses in the spreadsheet "
              f"prepared at {out} (columns drink, quantity): one row per type of beverage with the number of people who like it.")
    _task(w, "co-01-drinks-survey", prompt, out, checkpoints,
          [sol.read([src, out]), sol.write(out, csv_text([["drink", "quantity"]] + rows)), sol.finish("The survey spreadsheet is complete.")])


def budget_variance(w: SuiteWriter, rng: random.Random) -> None:
    depts, cats = ["Engineering", "Marketing", "Sales", "HR"], ["Salaries", "Software", "Travel", "Equipment"]
    months = [f"2023-{m:02d}" for m in range(1, 7)]
    budget, actual, flagged = [["Department", "Category", "Month", "Budgeted_Amount"]], [["Department", "Category", "Month", "Actual_Amount"]], []
    for d in depts:
        for c in cats:
            for m in months:
                b = rng.randrange(20_000, 90_000, 500)
                swing = rng.choice([0.02, -0.04, 0.06, -0.07, 0.09]) if rng.random() < 0.88 else rng.choice([0.18, -0.22, 0.31, -0.15])
                a = int(b * (1 + swing))
                budget.append([d, c, m, b])
                actual.append([d, c, m, a])
                if abs(a - b) > 0.10 * b and abs(a - b) > 5_000:
                    flagged.append(f"{d}_{c}_{m.replace('-', '')}")
    fb = w.sheet(WS, "Documents/Financials/budget.xlsx", budget, "Budget")
    fa = w.sheet(WS, "Documents/Financials/actual_spending.xlsx", actual, "Actuals")
    w.sheet(WS, "Documents/Financials/budget_2022.xlsx", [budget[0]] + [[d, c, "2022-01", rng.randrange(15_000, 80_000, 500)] for d in depts for c in cats], "Budget")
    out = "Documents/Financials/flagged_variances.csv"
    checkpoints = [
        cp("budget.xlsx and actual_spending.xlsx are used and flagged_variances.csv is created with a column Flagged_Variances.", 1,
           {"type": "columns", "file": out, "names": ["Flagged_Variances"]}),
        cp("All variances exceeding both 10% of the budget and $5,000 are flagged as Department_Category_YYYYMM.", 2,
           {"type": "contains", "file": out, "values": flagged}),
        cp("Nothing else is flagged, and nothing of the 2022 budget.", 1,
           {"type": "all", "checks": [{"type": "row_count", "file": out, "equals": len(flagged)},
                                      absent(out, ["2022-01", "2022"], csv_text([["Flagged_Variances"]] + [[f] for f in flagged]))]}),
    ]
    prompt = (f"Analyze actual spending against budgeted amounts across all departments and categories. {fb} holds the "
              f"budgeted amounts by department, category and month; {fa} the actual spending. For each department/category/"
              "month, compute the variance amount and percentage, and flag variances greater than both 10% of the budgeted "
              f"amount and $5,000. Create {out} with a column titled Flagged_Variances holding one identifier per significant "
              "variance, in the format Department_Category_YYYYMM.")
    _task(w, "co-02-budget-variance", prompt, out, checkpoints,
          [sol.read([fb, fa]), sol.write(out, csv_text([["Flagged_Variances"]] + [[f] for f in flagged])), sol.finish("Flagged variances written.")])


def _hm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def attendance(w: SuiteWriter, rng: random.Random) -> None:
    staff = words.people(rng, 8)
    rows, stats = [["Name", "Date", "Clock-in", "Clock-out"]], {}
    for p in staff:
        lengths, ontime, late = [], 0, 0
        for day in range(1, 11):
            cin, cout = rng.randint(8 * 60 + 25, 9 * 60 + 20), rng.randint(17 * 60, 18 * 60 + 40)
            rows.append([p, f"2024-04-{day + (day > 5) * 2:02d}", _hm(cin), _hm(cout)])
            lengths.append((cout - cin) / 60)
            ontime += 17 * 60 + 30 <= cout <= 18 * 60
            late += cin > 9 * 60
        stats[p] = (f"{sum(lengths) / len(lengths):.2f}", ontime, late)
    src = w.sheet(WS, "Documents/HR/Attendance/april-attendance-data.csv", rows)
    w.sheet(WS, "Documents/HR/Attendance/march-attendance-data.csv", [rows[0]] + [[p, "2024-03-04", "08:55", "17:40"] for p in staff])
    out = "Documents/HR/april-attendance-report.csv"
    report = [["Name", "Average Work Length", "On-time Departure Count", "Late Arrival Count"]] + [[p, *stats[p]] for p in staff]
    checkpoints = [
        cp("The report has the columns Name, Average Work Length, On-time Departure Count, Late Arrival Count, and no March data.", 1,
           {"type": "all", "checks": [{"type": "columns", "file": out, "names": report[0]}, absent(out, ["2024-03-04", "08:55"], csv_text(report))]}),
        cp("Average work length (hours) is right for every employee.", 2, _rows(out, [[p, float(stats[p][0])] for p in staff], 0.002)),
        cp("On-time departure and late arrival counts are right for every employee.", 2, _rows(out, [[p, float(stats[p][0]), stats[p][1], stats[p][2]] for p in staff], 0.002)),
    ]
    prompt = (f"Using the April attendance data in {src}, create a report at {out} with one row per employee and the columns "
              "Name, Average Work Length (in hours, two decimals), On-time Departure Count (days the employee left between "
              "17:30 and 18:00 inclusive) and Late Arrival Count (days the employee arrived after 9:00).")
    _task(w, "co-03-attendance-report", prompt, out, checkpoints, [sol.read([src]), sol.write(out, csv_text(report)), sol.finish("Report written.")])


def salaries(w: SuiteWriter, rng: random.Random) -> None:
    depts = ["Engineering", "Sales", "Marketing", "Finance", "Support"]
    staff = words.people(rng, 25)
    pay = {p: (depts[i % 5], rng.randrange(52_000, 160_000, 250)) for i, p in enumerate(staff)}
    src = w.text(WS, "Documents/HR/salaries.txt", "Name, Department, Salary\n" + "\n".join(f"{p}, {d}, {s}" for p, (d, s) in pay.items()))
    w.text(WS, "Documents/HR/salaries_2023.txt", "Name, Department, Salary\n" + "\n".join(f"{p}, {d}, {s - 3000}" for p, (d, s) in list(pay.items())[:10]))
    summary = []
    for d in depts:
        vals = [s for dd, s in pay.values() if dd == d]
        summary.append([d, f"{sum(vals) / len(vals):.2f}", max(vals), min(vals)])
    summary.sort(key=lambda r: -float(r[1]))
    out = "Documents/HR/salary_summary.csv"
    header = ["Department", "Average Salary", "Highest Salary", "Lowest Salary"]
    checkpoints = [
        cp("salary_summary.csv has the columns Department, Average Salary, Highest Salary, Lowest Salary, and no 2023 salary.", 1,
           {"type": "all", "checks": [{"type": "columns", "file": out, "names": header},
                                      absent(out, [s - 3000 for _, s in list(pay.values())[:10]], csv_text([header] + summary))]}),
        cp("Departments are sorted by average salary, highest first.", 1, {"type": "order", "file": out, "values": [r[0] for r in summary]}),
        cp("Average, highest and lowest salary are right for every department.", 2, _rows(out, [[r[0], float(r[1]), r[2], r[3]] for r in summary], 0.0005)),
    ]
    prompt = (f"{src} lists every employee's department and salary. Write {out} with one row per department and the columns "
              "Department, Average Salary (two decimals), Highest Salary and Lowest Salary, sorted by average salary from highest to lowest.")
    _task(w, "co-04-salary-summary", prompt, out, checkpoints, [sol.read([src]), sol.write(out, csv_text([header] + summary)), sol.finish("Summary written.")],
          scoring="bonus_for_completing_final")


def invoices(w: SuiteWriter, rng: random.Random) -> None:
    vendors = words.suppliers(rng, 8)
    invs, paid_rows, mism = [], [["Invoice Number", "Payment Date", "Amount Paid"]], []
    kinds = ["under", "over", "missing"] + ["ok"] * 5
    rng.shuffle(kinds)
    files = []
    for i, (v, kind) in enumerate(zip(vendors, kinds, strict=True)):
        num = f"INV-2024-{101 + i * 7:03d}"
        lines = [[it, q, p] for it, p in rng.sample(words.ITEMS, 3) for q in [rng.randint(1, 12)]]
        amount = sum(q * p for _, q, p in lines)
        files.append(w.doc(WS, f"Documents/Financials/Invoices/{num}.pdf", [
            ("title", f"INVOICE {num}"), ("para", f"Vendor: {v}"), ("para", f"Invoice date: 2024-05-{3 + i:02d}"),
            ("table", [["Item", "Qty", "Unit price"]] + [[a, b, f"{c:,.2f}"] for a, b, c in lines]), ("para", f"Total due: ${amount:,.2f}")]))
        paid = {"ok": amount, "under": amount - rng.choice([120, 450, 800]), "over": amount + rng.choice([60, 300]), "missing": None}[kind]
        if paid is not None:
            paid_rows.append([num, f"2024-06-{10 + i:02d}", paid])
        invs.append((num, amount, paid or 0))
        if kind != "ok":
            mism.append([num, f"{amount:.2f}", f"{paid or 0:.2f}", f"{(paid or 0) - amount:.2f}"])
    pay = w.sheet(WS, "Documents/Financials/payments.xlsx", paid_rows, "Payments")
    out = "Documents/Financials/invoice_mismatches.csv"
    header = ["Invoice Number", "Invoice Amount", "Amount Paid", "Difference"]
    ok_nums = [n for n, a, p in invs if a == p]
    checkpoints = [
        cp("invoice_mismatches.csv exists with the columns Invoice Number, Invoice Amount, Amount Paid, Difference.", 1, {"type": "columns", "file": out, "names": header}),
        cp("Every invoice whose payment differs from it or is missing is listed.", 2, {"type": "contains", "file": out, "values": [m[0] for m in mism]}),
        cp("The differences (amount paid minus invoice amount) are right.", 1, _rows(out, [[m[0], float(m[3])] for m in mism])),
        cp("Invoices paid exactly are not listed.", 1, {"type": "absent", "file": out, "values": ok_nums}),
    ]
    prompt = (f"The invoices received in May 2024 are PDFs in Documents/Financials/Invoices/, and the payments made are in {pay}. "
              f"Match them and write {out} listing every invoice that was underpaid, overpaid or not paid at all, with the columns "
              "Invoice Number, Invoice Amount, Amount Paid (0 if unpaid) and Difference (amount paid minus invoice amount).")
    _task(w, "co-05-invoice-matching", prompt, out, checkpoints,
          [sol.find("ls Documents/Financials/Invoices"), sol.read(files + [pay]), sol.write(out, csv_text([header] + mism)), sol.finish("Mismatches listed.")])


def quotes(w: SuiteWriter, rng: random.Random) -> None:
    vendors = [v.replace("Co., Ltd.", "Furniture") for v in words.suppliers(rng, 5)]
    offers = []
    for v in vendors:
        unit, disc, ship = rng.randrange(380, 640, 5), rng.choice([0, 5, 8, 10, 12, 15]), rng.randrange(0, 900, 50)
        offers.append((v, unit, disc, ship, round(20 * unit * (1 - disc / 100) + ship, 2)))
    while True:  # the cheapest unit price must lose on the total (the trap), and totals must differ
        cheap = min(range(5), key=lambda i: offers[i][1])
        if len({o[4] for o in offers}) == 5 and min(offers, key=lambda o: o[4]) != offers[cheap]:
            break
        v, unit, disc, ship, _ = offers[cheap]
        offers[cheap] = (v, unit, disc, ship + 250, round(20 * unit * (1 - disc / 100) + ship + 250, 2))
    best = min(offers, key=lambda o: o[4])
    files = []
    for i, (v, unit, disc, ship, _) in enumerate(offers):
        ext = ["docx", "md", "pdf", "txt", "docx"][i]
        files.append(w.doc(WS, f"Documents/Admin/Quotes/quote_{words.slug(v)}.{ext}", [
            ("title", f"Quotation from {v}"), ("para", "Item: height-adjustable standing desk, 140 x 70 cm, quantity 20."),
            ("table", [["Unit price (USD)", "Volume discount", "Shipping (USD)"], [f"{unit:.2f}", f"{disc}%", f"{ship:.2f}"]]),
            ("para", "Prices valid for 30 days. " + words.filler(rng, 1))]))
    out = "Documents/Admin/best_quote.txt"
    checkpoints = [
        cp("best_quote.txt exists.", 1, {"type": "exists", "path": out}),
        cp(f"The best quote is {best[0]} (lowest total after discount and shipping), and no other vendor is named.", 2,
           {"type": "all", "checks": [{"type": "contains", "file": out, "values": [best[0]]}, {"type": "absent", "file": out, "values": [o[0] for o in offers if o != best]}]}),
        cp(f"The total cost {best[4]:,.2f} is right.", 1, {"type": "contains", "file": out, "values": [best[4]]}),
    ]
    prompt = ("We need 20 standing desks. The vendor quotations are in Documents/Admin/Quotes/. Compare the total cost of each "
              "quote (unit price x 20, minus the volume discount, plus shipping) and write the vendor with the lowest total and "
              f"that total in {out}, as two lines: 'Vendor: <name>' and 'Total: <amount in USD>'.")
    _task(w, "co-06-best-vendor-quote", prompt, out, checkpoints,
          [sol.find("ls Documents/Admin/Quotes"), sol.read(files), sol.write(out, f"Vendor: {best[0]}\nTotal: {best[4]:.2f}"), sol.finish("Best quote recorded.")])


def expenses(w: SuiteWriter, rng: random.Random) -> None:
    cats = ["Travel", "Meals", "Office Supplies", "Software", "Training"]
    totals = dict.fromkeys(cats, 0.0)
    files = []
    for m, name in ((1, "jan"), (2, "feb"), (3, "mar")):
        rows = [["Date", "Employee", "Category", "Amount"]]
        for _ in range(rng.randint(12, 20)):
            c, amt = rng.choice(cats), rng.randrange(1500, 90000) / 100
            rows.append([words.date(rng, 2024, m), words.person(rng), c, f"{amt:.2f}"])
            totals[c] += amt
        files.append(w.sheet(WS, f"Documents/Financials/Expenses/2024-Q1/{name}_expenses.csv", rows))
    w.sheet(WS, "Documents/Financials/Expenses/2023-Q4/dec_expenses.csv", [["Date", "Employee", "Category", "Amount"], ["2023-12-04", words.person(rng), "Travel", "812.40"]])
    out = "Documents/Financials/q1_expense_totals.csv"
    result = [["Category", "Total"]] + [[c, f"{totals[c]:.2f}"] for c in cats] + [["Grand Total", f"{sum(totals.values()):.2f}"]]
    checkpoints = [
        cp("q1_expense_totals.csv has the columns Category and Total, and nothing of the 2023 claims.", 1,
           {"type": "all", "checks": [{"type": "columns", "file": out, "names": ["Category", "Total"]}, absent(out, ["2023-12-04", 812.40], csv_text(result))]}),
        cp("Every category's Q1 total is right.", 2, _rows(out, [[c, round(totals[c], 2)] for c in cats], 0.00001)),
        cp("The grand total row is right.", 1, {"type": "row", "file": out, "cells": ["Grand Total", round(sum(totals.values()), 2)], "tolerance": 0.00001}),
    ]
    prompt = ("The expense claims of the first quarter of 2024 are in Documents/Financials/Expenses/2024-Q1/ (one CSV per month). "
              f"Write {out} with the columns Category and Total: the Q1 total of each category, then a row 'Grand Total'.")
    _task(w, "co-07-expense-totals", prompt, out, checkpoints,
          [sol.find("ls -R Documents/Financials/Expenses"), sol.read(files), sol.write(out, csv_text(result)), sol.finish("Totals written.")])


def timesheets(w: SuiteWriter, rng: random.Random) -> None:
    projects, staff = ["Atlas", "Beacon", "Cobalt", "Delta"], words.people(rng, 6)
    hours = dict.fromkeys(projects, 0.0)
    files = []
    for week in range(10, 14):
        rows = [["Employee", "Project", "Hours"]]
        for p in staff:
            for proj in rng.sample(projects, 2):
                h = rng.randrange(8, 50) / 2
                rows.append([p, proj, h])
                hours[proj] += h
        files.append(w.sheet(WS, f"Documents/Engineering/Timesheets/2024-W{week}.xlsx", rows, f"Week {week}"))
    top = max(projects, key=lambda p: hours[p])
    out, top_file = "Documents/Engineering/project_hours.csv", "Documents/Engineering/top_project.txt"
    result = [["Project", "Total Hours"]] + [[p, f"{hours[p]:g}"] for p in projects]
    checkpoints = [
        cp("project_hours.csv has the columns Project and Total Hours.", 1, {"type": "columns", "file": out, "names": ["Project", "Total Hours"]}),
        cp("Total hours are right for every project.", 2, _rows(out, [[p, hours[p]] for p in projects])),
        cp(f"top_project.txt names {top}, the project with the most hours.", 1,
           {"type": "all", "checks": [{"type": "contains", "file": top_file, "values": [top]}, {"type": "absent", "file": top_file, "values": [p for p in projects if p != top]}]}),
    ]
    prompt = ("The engineering timesheets for weeks 10 to 13 of 2024 are in Documents/Engineering/Timesheets/. Write "
              f"{out} with the columns Project and Total Hours (hours over the four weeks), and write the name of the "
              f"project with the most hours in {top_file}.")
    _task(w, "co-08-project-hours", prompt, out, checkpoints,
          [sol.read(files), sol.write(out, csv_text(result)), sol.write(top_file, top, "And the top project."), sol.finish("Done.")],
          scoring="bonus_for_completing_any")


def contacts(w: SuiteWriter, rng: random.Random) -> None:
    staff = words.people(rng, 12)
    hr = {p: (f"{p.lower().replace(' ', '.')}@example.com", f"+1-555-{rng.randint(1000, 9999)}") for p in staff}
    listed = dict(hr)
    changes = []
    for p, field in zip(rng.sample(staff, 3), ["Phone", "Phone", "Email"], strict=True):
        email, phone = hr[p]
        if field == "Phone":
            new = f"+1-555-{(int(phone[-4:]) + rng.randint(1, 800)) % 9000 + 1000}"
            listed[p] = (email, new)
            changes.append([p, field, phone, new])
        else:
            new = email.replace("@", "2@")
            listed[p] = (new, phone)
            changes.append([p, field, email, new])
    depts = {p: rng.choice(words.DEPARTMENTS) for p in staff}
    src = w.doc(WS, "Documents/HR/personnel_records.docx", [
        ("title", "Personnel records (HR master data)"), ("para", "Maintained by Human Resources. " + words.filler(rng, 1)),
        ("table", [["Name", "Department", "Email", "Phone"]] + [[p, depts[p], *hr[p]] for p in staff])])
    lst = w.sheet(WS, "Documents/Admin/phone_list.xlsx", [["Name", "Phone", "Email"]] + [[p, listed[p][1], listed[p][0]] for p in staff], "Phone list")
    out = "Documents/HR/contact_mismatches.csv"
    header = ["Name", "Field", "HR Record", "Phone List"]
    order = {p: i for i, p in enumerate(staff)}
    changes.sort(key=lambda r: (order[r[0]], r[1]))
    checkpoints = [
        cp("Every employee whose phone or email differs between the two sources is listed with both values.", 2, _rows(out, changes)),
        cp("Only the differing entries are listed.", 1,
           {"type": "all", "checks": [{"type": "row_count", "file": out, "equals": len(changes)},
                                      absent(out, [hr[p][0] for p in staff if hr[p] == listed[p]], csv_text([header] + changes))]}),
    ]
    prompt = (f"HR keeps contact details in {src}; the office phone list is {lst}. Compare them and write {out} with one row "
              "per differing value and the columns Name, Field (Phone or Email), HR Record and Phone List.")
    _task(w, "co-09-contact-reconciliation", prompt, out, checkpoints,
          [sol.read([src, lst]), sol.write(out, csv_text([header] + changes)), sol.finish("Mismatches written.")])


def campaigns(w: SuiteWriter, rng: random.Random) -> None:
    names = ["Spring Launch", "Summer Sale", "Back to Office", "Partner Webinar", "Holiday Push", "Loyalty Drive"]
    stats, files = [], []
    for n in names:
        imp = rng.randrange(40_000, 400_000, 100)
        clicks = int(imp * rng.uniform(0.008, 0.045))
        conv, spend = max(3, int(clicks * rng.uniform(0.02, 0.09))), rng.randrange(2_000, 30_000, 50)
        stats.append((n, f"{clicks / imp * 100:.2f}", f"{spend / conv:.2f}"))
        files.append(w.text(WS, f"Documents/Marketing/Campaigns/2024/{words.slug(n)}.md", "\n".join([
            f"# Campaign report: {n}", "", f"Channel: {rng.choice(['Email', 'Search', 'Social', 'Display'])}", "",
            f"- Impressions: {imp:,}", f"- Clicks: {clicks:,}", f"- Conversions: {conv}", f"- Spend: ${spend:,}", "", words.filler(rng, 2)])))
    w.text(WS, "Documents/Marketing/Campaigns/2023/winter_promo.md", "# Campaign report: Winter Promo\n\n- Impressions: 90,000\n- Clicks: 5,400\n- Conversions: 210\n- Spend: $4,000")
    best = max(stats, key=lambda s: float(s[1]))
    out = "Documents/Marketing/campaign_summary.md"
    table = ["| Campaign | CTR (%) | Cost per Conversion |", "|---|---|---|"] + [f"| {n} | {c} | {k} |" for n, c, k in stats]
    checkpoints = [
        cp("All six 2024 campaigns are in the summary table, and not the 2023 Winter Promo.", 1,
           {"type": "all", "checks": [{"type": "row_count", "file": out, "equals": len(names)}, absent(out, ["Winter Promo"], "\n".join(table))]}),
        cp("CTR (clicks / impressions, in %) and cost per conversion are right for every campaign.", 2,
           _rows(out, [[n, float(c), float(k)] for n, c, k in stats], 0.005)),
        cp(f"The summary names {best[0]} as the best campaign by CTR.", 1, {"type": "contains", "file": out, "values": [f"Best campaign: {best[0]}"]}),
    ]
    prompt = ("The 2024 campaign reports are in Documents/Marketing/Campaigns/2024/. Write a summary at "
              f"{out}: a markdown table with the columns Campaign, CTR (%) (clicks / impressions x 100, two decimals) and Cost "
              "per Conversion (spend / conversions, two decimals), one row per campaign, followed by a line "
              "'Best campaign: <name>' for the campaign with the highest CTR.")
    _task(w, "co-10-campaign-summary", prompt, out, checkpoints,
          [sol.read(files), sol.write(out, "# 2024 campaign summary\n\n" + "\n".join(table) + f"\n\nBest campaign: {best[0]}"), sol.finish("Summary written.")],
          scoring="bonus_for_completing_final")


TASKS = [drinks, budget_variance, attendance, salaries, invoices, quotes, expenses, timesheets, contacts, campaigns]
