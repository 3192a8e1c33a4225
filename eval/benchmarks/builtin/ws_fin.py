"""Workspace suite, role `finance_analyst`: four tasks over budgets, supplier profiles, slide
decks and expense claims."""

from __future__ import annotations

import random

from eval.benchmarks.builtin import office, words
from eval.benchmarks.builtin import solution as sol
from eval.benchmarks.builtin.writer import SuiteWriter
from eval.benchmarks.builtin.ws_common import Policy, absent, contains, exists, rb, row

WS = "finance_analyst"


def variance_memo(w: SuiteWriter, rng: random.Random) -> None:
    depts = words.DEPARTMENTS
    budget = {d: rng.randrange(400_000, 2_000_000, 10_000) for d in depts}
    actual, over_set = {}, set(rng.sample(depts, rng.choice([3, 4])))
    for d in depts:
        factor = rng.choice([1.07, 1.12, 1.18]) if d in over_set else rng.choice([0.91, 0.95, 0.98, 1.01, 1.03])
        actual[d] = [int(budget[d] * factor / 4) + rng.randint(-3000, 3000) for _ in range(4)]
    fb = w.sheet(WS, "budgets/2024/department_budgets_2024.xlsx", [["Department", "Annual Budget (CNY)"]] + [[d, budget[d]] for d in depts], "Budget 2024")
    fa = [w.sheet(WS, f"expenses/actuals/2024_Q{q + 1}_actuals_by_department.csv", [["Department", "Actual (CNY)"]] + [[d, actual[d][q]] for d in depts])
          for q in range(4)]
    w.sheet(WS, "budgets/2023/department_budgets_2023.xlsx", [["Department", "Annual Budget (CNY)"]] + [[d, int(budget[d] * 0.9)] for d in depts], "Budget 2023")
    w.sheet(WS, "budgets/2025/draft_budgets_2025.xlsx", [["Department", "Proposed Budget (CNY)"]] + [[d, int(budget[d] * 1.1)] for d in depts], "Draft")
    over = [[d, budget[d], sum(actual[d]), sum(actual[d]) - budget[d], f"{(sum(actual[d]) - budget[d]) / budget[d] * 100:.1f}%"]
            for d in depts if sum(actual[d]) > 1.05 * budget[d]]
    within = [d for d in depts if d not in {o[0] for o in over}]
    out = "output/budget_variance_memo.md"
    header = ["Department", "Budget", "Actual", "Overrun", "Overrun %"]
    rubrics = [rb(f"The memo is saved as {out}.", exists(out)),
               rb(f"The table lists exactly the {len(over)} department(s) more than 5% over budget.", {"type": "row_count", "file": out, "equals": len(over)}),
               rb("The table has the columns Department, Budget, Actual, Overrun and Overrun %.", {"type": "columns", "file": out, "names": header})]
    rubrics += [rb(f"{d}: budget {b:,}, actual {a:,}, overrun {o:,} ({p}).", row(out, [d, b, a, o, float(p[:-1])], 0.001)) for d, b, a, o, p in over]
    rubrics += [rb("Departments within 5% of their budget are not listed as over budget.", {"type": "absent", "file": out, "values": within}),
                rb(f"States the total overrun of {sum(o[3] for o in over):,}.", contains(out, [sum(o[3] for o in over)])),
                rb("Uses the 2024 budgets, not the 2023 or draft 2025 ones.", contains(out, [over[0][1]]))]
    table = [header] + [[d, f"{b:,}", f"{a:,}", f"{o:,}", p] for d, b, a, o, p in over]
    body = office.markdown([("title", "2024 budget variance memo"), ("para", "Departments whose 2024 spending exceeded the annual budget by more than 5%:"),
                            ("table", table), ("para", f"Total overrun: {sum(o[3] for o in over):,} CNY")])
    stale = [x for d, *_ in over for x in (int(budget[d] * 0.9), int(budget[d] * 1.1))]
    rubrics.append(rb("No figure of the 2023 budgets or of the draft 2025 budgets is used.", absent(out, stale, body)))
    prompt = ("Write a short memo on the 2024 budget variance: compare each department's annual budget with its actual "
              "spending (the sum of the four quarterly actuals under expenses/) and list, in a markdown table with the columns Department, Budget, "
              "Actual, Overrun and Overrun %, only the departments that spent more than 5% over budget; then give the total "
              f"overrun of those departments. Save it as {out}.")
    w.task([sol.find("ls -R budgets expenses | head -n 40"), sol.read([fb, *fa]), sol.write(out, body), sol.finish("Memo written.")],
           id="ws-07-budget-variance-memo", prompt=prompt, workspace=WS, output=out, rubrics=rubrics)


def supplier_directory(w: SuiteWriter, rng: random.Random) -> None:
    sups = words.suppliers(rng, 10)
    active, files = [], []
    for i, s in enumerate(sups):
        contact = words.person(rng)
        email = f"{contact.split()[0].lower()}@{words.slug(s.split()[0])}.example.com"
        phone, terms = f"+86-21-{rng.randint(5000_0000, 6999_9999)}", rng.choice(["Net 30", "Net 45", "Net 60", "2/10 Net 30"])
        status = "Active" if i < 8 else rng.choice(["Inactive", "Suspended"])
        rec = {"supplier": s, "contact": contact, "email": email, "phone": phone, "payment_terms": terms, "status": status}
        if i % 3 == 0:
            rel = w.doc(WS, f"suppliers/profiles/{words.slug(s)}.docx", [
                ("title", f"Supplier profile: {s}"), ("table", [["Field", "Value"], ["Contact", contact], ["Email", email], ["Phone", phone],
                                                                ["Payment terms", terms], ["Status", status]]), ("para", words.filler(rng, 1))])
        else:
            rel = w.json(WS, f"suppliers/profiles/{words.slug(s)}.json", rec)
        files.append(rel)
        if status == "Active":
            active.append([s, contact, email, phone, terms])
    out = "output/supplier_directory.csv"
    header = ["Supplier", "Contact", "Email", "Phone", "Payment Terms"]
    rubrics = [rb(f"The directory is saved as {out}.", exists(out)),
               rb("It has the columns Supplier, Contact, Email, Phone and Payment Terms.", {"type": "columns", "file": out, "names": header}),
               rb(f"It lists exactly the {len(active)} active suppliers.", {"type": "row_count", "file": out, "equals": len(active)})]
    rubrics += [rb(f"{s}: {c}, {e}, {p}, {t}.", row(out, [s, c, e, p, t])) for s, c, e, p, t in active]
    rubrics.append(rb("Inactive and suspended suppliers are left out.", {"type": "absent", "file": out, "values": [s for s in sups if s not in {a[0] for a in active}]}))
    prompt = ("Build a directory of our active suppliers from their profiles in suppliers/profiles/ (JSON and Word files). "
              f"Save it as {out} with the columns Supplier, Contact, Email, Phone and Payment Terms, one row per active supplier.")
    w.task([sol.find("ls suppliers/profiles"), sol.read(files), sol.write(out, office.csv_text([header] + active)), sol.finish("Directory written.")],
           id="ws-08-supplier-directory", prompt=prompt, workspace=WS, output=out, rubrics=rubrics)


def deck_outline(w: SuiteWriter, rng: random.Random) -> None:
    themes = {"2024 Strategy Review": ["Where we stand", "Market outlook", "Three priorities", "Cost programme", "Risks", "Next steps"],
              "2024 Finance Transformation": ["Why change", "Target operating model", "Systems roadmap", "Team changes", "Timeline"],
              "2024 Procurement Plan": ["Spend overview", "Supplier consolidation", "Savings targets", "Contract calendar", "Governance", "Questions"]}
    files, decks = [], []
    for title, slides in themes.items():
        rel = w.slides(WS, f"presentations/{words.slug(title)}.pptx", [(title, [words.person(rng), "Board meeting, March 2024"])] + [(s, [words.filler(rng, 1)]) for s in slides])
        files.append(rel)
        decks.append((title, slides))
    archived = ["2023 Strategy Review", "Team Offsite 2024", "Audit Findings 2023", "Treasury Update Q2"]
    for title in archived:
        w.slides(WS, f"presentations/archive/{words.slug(title)}.pptx", [(title, [])] + [(s, []) for s in rng.sample(["Agenda", "Results", "Outlook", "Risks", "Decisions"], 3)])
    out = "output/deck_outline.md"
    rubrics = [rb(f"The outline is saved as {out}.", exists(out)),
               rb("Each of the three decks has a heading with its title, in the requested order.", {"type": "headings", "file": out, "values": list(themes)})]
    for title, slides in decks:
        rubrics.append(rb(f"Under '{title}', every slide title appears in slide order.", {"type": "order", "file": out, "values": [title] + slides}))
    rubrics += [rb(f"'{title}' lists its slide '{slides[-1]}' (the last one).", contains(out, [slides[-1]])) for title, slides in decks]
    body: list = [("title", "Deck outline")]
    for title, slides in decks:
        body += [("heading", title, 1), ("bullets", [f"Slide {i + 2}: {s}" for i, s in enumerate(slides)])]
    rubrics.append(rb("Archived decks are not included.", absent(out, archived, office.markdown(body))))
    prompt = (f"Outline the three 2024 decks in presentations/ ({', '.join(themes)}). Write {out} with one markdown heading per "
              "deck (its title), in that order, and under each heading the titles of its content slides in slide order.")
    w.task([sol.find("ls presentations"), sol.read(files), sol.write(out, office.markdown(body)), sol.finish("Outline written.")],
           id="ws-09-deck-outline", prompt=prompt, workspace=WS, output=out, rubrics=rubrics)


def over_limit_claims(w: SuiteWriter, rng: random.Random) -> None:
    limits = {"Meals": rng.choice([80, 100]), "Taxi": rng.choice([60, 80]), "Hotel": rng.choice([450, 500]), "Training": 2000, "Software": 300}
    pol = Policy("Employee Expense Policy 2024", "Finance Department", [
        ("Limits", [(f"{c} Limit", f"{c} expenses are reimbursed up to {lim:,} yuan per claim.") for c, lim in limits.items()]),
        ("Exceptions", [("Pre-approval", "Expenses above a limit need written pre-approval by the CFO.")])])
    fp = w.doc(WS, "policies/employee_expense_policy_2024.docx", pol.blocks())
    old = Policy("Employee Expense Policy 2022", "Finance Department", [("Limits", [("Meals Limit", "Meals are reimbursed up to 60 yuan per claim.")])])
    w.doc(WS, "policies/archive/employee_expense_policy_2022.docx", old.blocks())
    staff = words.people(rng, 10)
    header_in = ["Claim ID", "Employee", "Category", "Amount", "Date"]
    rows, over, fc = [], [], []
    for month, name in ((7, "july"), (8, "august"), (9, "september")):
        mine = []
        for _ in range(12):
            cat, i = rng.choice(list(limits)), len(rows)
            amt = round(limits[cat] * (rng.uniform(1.05, 1.6) if i % 5 == 2 else rng.uniform(0.3, 0.99)), 2)
            mine.append([f"CLM-Q3-{i + 1:03d}", rng.choice(staff), cat, f"{amt:.2f}", words.date(rng, 2024, month)])
            rows.append(mine[-1])
            if amt > limits[cat]:
                over.append([mine[-1][0], mine[-1][1], cat, f"{amt:.2f}", limits[cat], f"{amt - limits[cat]:.2f}"])
        fc.append(w.sheet(WS, f"expenses/claims/2024-Q3/claims_{name}.csv", [header_in] + mine))
    w.sheet(WS, "expenses/claims/2024-Q2/claims_june.csv", [header_in] + [[f"CLM-Q2-{i:03d}", rng.choice(staff), "Meals", "120.00", "2024-06-10"] for i in range(1, 6)])
    q2 = [f"CLM-Q2-{i:03d}" for i in range(1, 6)] + ["2024-06-10"]
    out = "output/over_limit_claims_q3.csv"
    header = ["Claim ID", "Employee", "Category", "Amount", "Limit", "Excess"]
    ok = [r[0] for r in rows if r[0] not in {o[0] for o in over}]
    rubrics = [rb(f"The list is saved as {out}.", exists(out)),
               rb("It has the columns Claim ID, Employee, Category, Amount, Limit, Excess.", {"type": "columns", "file": out, "names": header}),
               rb(f"It lists exactly the {len(over)} Q3 claims above their category limit.", {"type": "row_count", "file": out, "equals": len(over)})]
    rubrics += [rb(f"Claim {c} ({e}, {cat}, {a}) exceeds the {lim} limit by {x}.", row(out, [c, e, cat, float(a), lim, float(x)])) for c, e, cat, a, lim, x in over]
    rubrics.append(rb("Claims within their limits are not listed.", {"type": "absent", "file": out, "values": ok}))
    rubrics.append(rb("The June (Q2) claims are not listed.", absent(out, q2, office.csv_text([header] + over))))
    prompt = ("Check the Q3 2024 expense claims (expenses/claims/2024-Q3/) against the category limits of the current employee expense "
              f"policy, and list every claim above its limit in {out} with the columns Claim ID, Employee, Category, Amount, "
              "Limit and Excess (amount minus limit).")
    w.task([sol.find("ls -R policies expenses"), sol.read([fp, *fc]), sol.write(out, office.csv_text([header] + over)), sol.finish("List written.")],
           id="ws-10-over-limit-claims", prompt=prompt, workspace=WS, output=out, rubrics=rubrics)


TASKS = [variance_memo, supplier_directory, deck_outline, over_limit_claims]
