"""Workspace suite, role `operations_manager`: six tasks over policies, purchase orders, minutes,
project documents and quarterly reports (the paper's two case studies are ws-01 and ws-02)."""

from __future__ import annotations

import random

from eval.benchmarks.builtin import office, words
from eval.benchmarks.builtin import solution as sol
from eval.benchmarks.builtin.writer import SuiteWriter
from eval.benchmarks.builtin.ws_common import Policy, absent, contains, exists, rb, row

WS = "operations_manager"


def resource_manual(w: SuiteWriter, rng: random.Random) -> None:
    v = {"flow": rng.choice([5, 6, 7]), "leak": rng.choice([12, 24, 48]), "lights": rng.choice(["21:30", "22:00", "22:30"]),
         "standby": rng.choice([10, 15, 20]), "green": rng.choice([20, 30, 40]), "cool": rng.choice([26, 27]), "heat": rng.choice([18, 20]),
         "filters": rng.choice([2, 3]), "award": rng.choice([1000, 2000, 3000]), "date": f"{rng.randint(1, 28)} March 2024"}
    parts = [
        ("resource_conservation_general_and_water.docx", [
            ("General Provisions", [("Purpose", "This policy sets out how the company saves water and electricity in all offices."),
                                    ("Scope", "It applies to every office, warehouse and canteen operated by the company."),
                                    ("Responsibilities", "Facilities Management coordinates the policy; each department appoints a conservation contact.")]),
            ("Water Conservation", [("Water Metering", "Every building has a sub-meter per floor, read on the first working day of each month."),
                                    ("Faucets and Fixtures", f"New faucets and showers must not exceed a flow limit of {v['flow']} litres per minute."),
                                    ("Leak Reporting", f"Leaks must be reported to Facilities within {v['leak']} hours of being noticed."),
                                    ("Landscape Irrigation", "Gardens are watered only between 06:00 and 08:00, and not on rainy days."),
                                    ("Kitchen and Pantry Use", "Dishwashers run only when full; taps are turned off while cleaning.")])]),
        ("resource_conservation_electricity.docx", [
            ("Electricity Conservation", [("Lighting", f"Office lighting is switched off by {v['lights']} except in areas with night shifts."),
                                          ("Office Equipment", f"Computers and printers enter standby after {v['standby']} minutes of inactivity."),
                                          ("Elevators", "Between 20:00 and 07:00 only one elevator per bank stays in service."),
                                          ("Server Rooms", "Server rooms are kept at the supplier's highest recommended inlet temperature."),
                                          ("Renewable Purchasing", f"At least {v['green']}% of purchased electricity comes from renewable sources.")])]),
        ("resource_conservation_air_conditioning.docx", [
            ("Air Conditioning and Heating", [("Cooling Set Point", f"In summer, air conditioning is set no lower than {v['cool']}°C."),
                                              ("Heating Set Point", f"In winter, heating is set no higher than {v['heat']}°C."),
                                              ("Windows and Doors", "Windows and doors stay closed while air conditioning or heating runs."),
                                              ("Maintenance", f"Air-conditioning filters are cleaned every {v['filters']} months.")])]),
        ("resource_conservation_supervision.docx", [
            ("Supervision and Rewards", [("Monthly Reporting", "Facilities publishes water and electricity use per floor every month."),
                                         ("Awards", f"The floor with the largest saving each year receives an energy saving award of {v['award']:,} yuan."),
                                         ("Effective Date", f"This policy takes effect on {v['date']}.")])]),
    ]
    chapter, article, files, all_chapters = 1, 1, [], []
    for name, chapters in parts:
        p = Policy("Resource Conservation Policy", "Facilities Management", chapters, chapter, article)
        files.append(w.doc(WS, f"policies/facilities/{name}", p.blocks(f"Part {len(files) + 1} of 4.")))
        all_chapters += p.numbered()
        chapter += len(chapters)
        article += sum(len(a) for _, a in chapters)
    draft = Policy("Resource Conservation Policy (DRAFT 2019, superseded)", "Facilities Management",
                   [("Water and Electricity", [("Faucets", "Faucets must not exceed a flow limit of 9 litres per minute."),
                                               ("Cooling", "Air conditioning is set no lower than 24°C.")])])
    w.doc(WS, "archive/2019/resource_conservation_policy_draft.docx", draft.blocks())
    out = "output/resource_conservation_manual.md"
    rubrics = [rb(f"The manual is saved as {out}.", exists(out)),
               rb("The manual keeps the five chapters as headings, in their original order.", {"type": "headings", "file": out, "values": [c for c, _ in all_chapters]})]
    for ch, arts in all_chapters:
        rubrics.append(rb(f"{ch} keeps all its articles, in their original order.", {"type": "order", "file": out, "values": [ch] + [a for a, _ in arts]}))
    rubrics += [
        rb(f"States the faucet flow limit of {v['flow']} litres per minute.", contains(out, [f"{v['flow']} litres per minute"])),
        rb(f"States that leaks are reported within {v['leak']} hours.", contains(out, [f"within {v['leak']} hours"])),
        rb(f"States that lighting is switched off by {v['lights']} and standby starts after {v['standby']} minutes.", contains(out, [v["lights"], f"{v['standby']} minutes"])),
        rb(f"States the cooling ({v['cool']}°C) and heating ({v['heat']}°C) set points.", contains(out, [f"{v['cool']}°C", f"{v['heat']}°C"])),
        rb(f"States the energy saving award of {v['award']:,} yuan and the effective date {v['date']}.", contains(out, [f"{v['award']:,} yuan", v["date"]])),
        rb("Does not use the superseded 2019 draft's values (9 litres per minute, 24°C).", {"type": "absent", "file": out, "values": ["9 litres per minute", "24°C"]}),
    ]
    manual: list = [("title", "Water and Electricity Saving Manual")]
    for ch, arts in all_chapters:
        manual.append(("heading", ch, 1))
        manual += [b for a, t in arts for b in (("heading", a, 2), ("para", t))]
    rubrics.append(rb("Does not copy the superseded 2019 draft (its title or status).", absent(out, ["DRAFT 2019", "superseded"], office.markdown(manual))))
    prompt = ("Compile a water and electricity saving manual for staff from the company's current resource conservation "
              "policy, which is split over several files in the workspace. Keep every chapter and article of the policy, "
              f"with their numbers and titles, in their original order, as markdown headings. Save it as {out}.")
    w.task([sol.find("grep -ril conservation policies archive | sort", "Let me find the conservation policy files."), sol.read(files),
            sol.write(out, office.markdown(manual)), sol.finish("The manual is written.")],
           id="ws-01-resource-saving-manual", prompt=prompt, workspace=WS, output=out, rubrics=rubrics)


def purchase_orders(w: SuiteWriter, rng: random.Random) -> None:
    sups = words.suppliers(rng, 24)
    project, others = "Atlas office fit-out", ["Beacon data centre", "Cobalt warehouse", "Delta call centre", "General office"]
    mine, files = [], []
    for i in range(40):
        ours = i % 4 == 1 and len(mine) < 10
        sup = sups[len(mine)] if ours else rng.choice(sups[10:])
        items = rng.sample(words.ITEMS, rng.randint(1, 3))
        lines = [[name, q, price, q * price] for name, price in items for q in [rng.randint(2, 30)]]
        total = sum(x[3] for x in lines)
        num, status = f"PO-2024-{i + 1:03d}", rng.choice(words.STATUSES)
        rows = [["Purchase Order", num], ["Date", words.date(rng, 2024)], ["Supplier", sup], ["Project", project if ours else rng.choice(others)],
                ["Status", status], [], ["Item", "Quantity", "Unit price (CNY)", "Amount (CNY)"], *lines, [], ["Total (CNY)", "", "", total]]
        rel = w.sheet(WS, f"procurement/purchase_orders/2024/{num}.xlsx", rows, "PO")
        if ours:
            mine.append([sup, num, status, total])
            files.append(rel)
    ours_nums = {r[1] for r in mine}
    others_nums = [f"PO-2024-{i + 1:03d}" for i in range(40) if f"PO-2024-{i + 1:03d}" not in ours_nums]
    for i in range(20):
        others_nums.append(f"PO-2023-{i + 1:03d}")
        w.sheet(WS, f"procurement/purchase_orders/2023/PO-2023-{i + 1:03d}.csv",
                [["Purchase Order", f"PO-2023-{i + 1:03d}"], ["Supplier", rng.choice(sups)], ["Project", rng.choice(others)], ["Total (CNY)", rng.randint(800, 60000)]])
    big = max(mine, key=lambda r: r[3])
    out = "output/atlas_po_summary.csv"
    header = ["Supplier", "PO Number", "Status", "Amount (CNY)"]
    rubrics = [rb(f"The table is saved as {out}.", exists(out)),
               rb("The table has the columns Supplier, PO Number, Status and Amount (CNY).", {"type": "columns", "file": out, "names": header}),
               rb("The table has one row for each of the ten orders, and no other rows.", {"type": "row_count", "file": out, "equals": 10})]
    rubrics += [rb(f"A row gives {s}: {n}, status {st}, amount ¥{a:,}.", row(out, [s, n, st, a])) for s, n, st, a in mine]
    rubrics.append(rb(f"The largest order ({big[0]}, ¥{big[3]:,}) is included.", row(out, [big[0], big[3]])))
    rubrics.append(rb("Orders of other projects and the 2023 orders are left out.", absent(out, others + others_nums, office.csv_text([header] + mine))))
    prompt = (f"Summarize the ten purchase orders of the {project} project (the 2024 orders are in procurement/purchase_orders/2024/) "
              f"in a table saved as {out}, one row per supplier, with the columns Supplier, PO Number, Status and Amount (CNY).")
    w.task([sol.find("ls procurement/purchase_orders/2024 | head -n 50"), sol.read(files, "These are the Atlas orders."),
            sol.write(out, office.csv_text([header] + mine)), sol.finish("Summary table written.")],
           id="ws-02-purchase-order-summary", prompt=prompt, workspace=WS, output=out, rubrics=rubrics)


TOPICS = ["Travel Approval", "Transportation", "Accommodation and Per Diem", "Reimbursement Procedure", "Violation Handling"]


def travel_guide(w: SuiteWriter, rng: random.Random) -> None:
    v = {"days": rng.choice([3, 5]), "intl": rng.choice(["a vice president", "the managing director"]), "hours": rng.choice([4, 6]),
         "t1": rng.choice([550, 600, 650]), "t2": rng.choice([400, 450]), "t3": rng.choice([300, 350]), "pd1": rng.choice([180, 200]),
         "pd2": rng.choice([120, 150]), "submit": rng.choice([15, 30]), "receipt": rng.choice([100, 200]), "late": rng.choice([60, 90])}
    docs = {
        "policies/administration/business_travel_approval_procedure.docx": Policy("Business Travel Approval Procedure", "General Administration", [
            ("Approval", [("Approval Before Travel", "Every business trip is approved in the travel system before tickets are booked."),
                          ("Approval Levels", f"Trips longer than {v['days']} days need the approval of a director; international trips need the approval of {v['intl']}.")]),
            ("Transportation", [("Air Travel", f"Economy class is used for flights shorter than {v['hours']} hours."),
                                ("Rail and Taxi", "High-speed rail is preferred for trips under 800 km; taxis are used only when no public transport is available.")])]),
        "policies/finance/travel_accommodation_and_per_diem_standards.docx": Policy("Travel Accommodation and Per Diem Standards", "Finance Department", [
            ("Accommodation", [("Hotel Caps", f"Hotel costs are reimbursed up to {v['t1']} yuan per night in tier-1 cities, {v['t2']} yuan in tier-2 cities and {v['t3']} yuan elsewhere.")]),
            ("Per Diem", [("Daily Allowance", f"The per diem is {v['pd1']} yuan per day in tier-1 cities and {v['pd2']} yuan per day elsewhere, covering meals and local transport.")])]),
        "policies/finance/travel_expense_reimbursement_rules.docx": Policy("Travel Expense Reimbursement Rules", "Finance Department", [
            ("Reimbursement", [("Submission Deadline", f"Claims are submitted within {v['submit']} days after returning."),
                               ("Receipts", f"Original receipts are required for every expense above {v['receipt']} yuan."),
                               ("Approval of Claims", "Claims are approved by the line manager, then checked by Finance.")])]),
        "policies/administration/travel_policy_violations.docx": Policy("Handling of Travel Policy Violations", "Internal Audit", [
            ("Violations", [("First Violation", "A first violation leads to a written warning and repayment of the excess amount."),
                            ("Late Claims", f"Claims submitted more than {v['late']} days after the trip are not reimbursed."),
                            ("Falsified Receipts", "Falsified receipts lead to dismissal.")])]),
    }
    for rel, p in docs.items():
        w.doc(WS, rel, p.blocks())
    old = Policy("Business Travel Rules 2018 (withdrawn)", "General Administration", [("Rules", [("Hotels", "Hotels are reimbursed up to 480 yuan per night in every city.")])])
    w.doc(WS, "archive/old_drafts/business_travel_rules_2018.docx", old.blocks())
    files = list(docs)
    out = "output/business_travel_guide.md"
    facts = [
        (0, f"Trips longer than {v['days']} days need the approval of a director; international trips need {v['intl']}.", [f"{v['days']} days", v["intl"]]),
        (1, f"Economy class for flights shorter than {v['hours']} hours; high-speed rail preferred under 800 km.", [f"{v['hours']} hours", "800 km"]),
        (2, f"Hotels up to {v['t1']} yuan per night in tier-1 cities, {v['t2']} yuan in tier-2 cities and {v['t3']} yuan elsewhere.",
         [f"{v['t1']} yuan", f"{v['t2']} yuan", f"{v['t3']} yuan"]),
        (2, f"Per diem of {v['pd1']} yuan (tier-1) and {v['pd2']} yuan (elsewhere) per day.", [f"{v['pd1']} yuan", f"{v['pd2']} yuan"]),
        (3, f"Claims within {v['submit']} days after returning, receipts above {v['receipt']} yuan.", [f"{v['submit']} days", f"{v['receipt']} yuan"]),
        (3, "Claims are approved by the line manager, then checked by Finance.", ["line manager"]),
        (4, "A first violation leads to a written warning and repayment.", ["written warning"]),
        (4, f"Claims more than {v['late']} days late are not reimbursed; falsified receipts lead to dismissal.", [f"{v['late']} days", "dismissal"]),
    ]
    rubrics = [rb(f"The guide is saved as {out}.", exists(out)),
               rb("The guide has the five sections as headings, in the requested order.", {"type": "headings", "file": out, "values": TOPICS})]
    rubrics += [rb(f"{TOPICS[k]}: {text}", contains(out, vals)) for k, text, vals in facts]
    rubrics.append(rb("Does not use the withdrawn 2018 hotel cap of 480 yuan.", {"type": "absent", "file": out, "values": ["480 yuan"]}))
    guide: list = [("title", "Business Travel and Reimbursement Guide")]
    for k, topic in enumerate(TOPICS):
        guide += [("heading", topic, 1), ("bullets", [text for kk, text, _ in facts if kk == k])]
    rubrics.append(rb("Does not copy the withdrawn 2018 travel rules.", absent(out, ["Business Travel Rules 2018", "withdrawn"], office.markdown(guide))))
    prompt = ("Write a guide for employees on business travel and reimbursement, based on the company's current travel "
              "policies in the workspace. It must have five sections, as markdown headings in this order: "
              f"{', '.join(TOPICS)}. Give the concrete rules, limits and amounts in each. Save it as {out}.")
    w.task([sol.find("grep -ril travel policies archive | sort"), sol.read(files), sol.write(out, office.markdown(guide)), sol.finish("The guide is written.")],
           id="ws-03-business-travel-guide", prompt=prompt, workspace=WS, output=out, rubrics=rubrics)


def action_items(w: SuiteWriter, rng: random.Random) -> None:
    team = words.people(rng, 7)
    actions = ["finalize the floor plan", "collect three furniture quotes", "confirm the move date with the landlord",
               "book the network cabling contractor", "update the seating chart", "order signage", "test the badge readers",
               "plan the opening day", "return the old keys", "archive the lease documents"]
    rng.shuffle(actions)
    items, files, k = [], [], 0
    for month in [2, 3, 5, 6, 9]:
        date = f"2024-{month:02d}-{rng.randint(3, 26):02d}"
        mine = []
        for _ in range(2):
            owner, due = rng.choice(team), f"2024-{month + 1:02d}-{rng.randint(1, 28):02d}"
            mine.append((owner, actions[k], due))
            items.append([date, owner, actions[k], due])
            k += 1
        text = [f"# Atlas weekly sync — {date}", "", f"Attendees: {', '.join(rng.sample(team, 4))}", "", "## Discussion", words.filler(rng, 3), "", "## Action items"]
        text += [f"- [ ] {o}: {a} (due {d})" for o, a, d in mine]
        files.append(w.text(WS, f"meetings/2024/{date}-atlas-weekly-sync.md", "\n".join(text)))
    elsewhere = ["Beacon", "Cobalt", "Delta"]
    for i in range(10):
        date, proj = words.date(rng, 2024), rng.choice(["Beacon", "Cobalt", "Delta"])
        elsewhere.append(date)
        w.text(WS, f"meetings/2024/{date}-{proj.lower()}-status-meeting-{i}.md",
               f"# {proj} status meeting — {date}\n\n{words.filler(rng, 3)}\n\n## Action items\n- [ ] {rng.choice(team)}: {rng.choice(actions)} (due {words.date(rng, 2024)})")
    for i in range(8):
        date = words.date(rng, 2023)
        elsewhere.append(date)
        w.text(WS, f"meetings/2023/{date}-atlas-planning-{i}.md", f"# Atlas planning (2023) — {date}\n\n{words.filler(rng, 2)}\n\n## Action items\n- [ ] {rng.choice(team)}: {rng.choice(actions)} (due {words.date(rng, 2023)})")
    out = "output/atlas_action_items.csv"
    header = ["Meeting Date", "Owner", "Action", "Due Date"]
    rubrics = [rb(f"The tracker is saved as {out}.", exists(out)),
               rb("The tracker has the columns Meeting Date, Owner, Action, Due Date.", {"type": "columns", "file": out, "names": header}),
               rb(f"It lists all {len(items)} action items of the 2024 Atlas weekly syncs and nothing else.", {"type": "row_count", "file": out, "equals": len(items)})]
    rubrics += [rb(f"{o} must {a} by {d} (meeting of {m}).", row(out, [m, o, a, d])) for m, o, a, d in items]
    rubrics.append(rb("Meetings of other projects and the 2023 Atlas planning meetings are left out.",
                      absent(out, elsewhere, office.csv_text([header] + items))))
    prompt = ("Collect every action item from the 2024 Atlas weekly sync meetings (minutes are under meetings/) into a tracker "
              f"saved as {out}, one row per action item, with the columns Meeting Date, Owner, Action and Due Date (dates as YYYY-MM-DD).")
    w.task([sol.find("ls meetings/2024 | grep -i atlas"), sol.read(files), sol.write(out, office.csv_text([header] + items)), sol.finish("Tracker written.")],
           id="ws-04-atlas-action-items", prompt=prompt, workspace=WS, output=out, rubrics=rubrics)


def kickoff_archive(w: SuiteWriter, rng: random.Random) -> None:
    sources = [
        w.text(WS, "meetings/2024/2024-12-project-kickoff-meeting-minutes.md", f"# Project kickoff — 2024-12-09\n\nAttendees: {', '.join(words.people(rng, 5))}\n\n{words.filler(rng, 4)}"),
        w.text(WS, "meetings/2025/2025-01-technical-review-meeting-minutes.md", f"# Technical review — 2025-01-20\n\n{words.filler(rng, 5)}"),
        w.text(WS, "docs/project/project_requirements_document.md", f"# Project requirements\n\n## Goals\n{words.filler(rng, 3)}\n\n## Constraints\n{words.filler(rng, 2)}"),
        w.text(WS, "docs/project/project_charter.md", f"# Project charter\n\nSponsor: {words.person(rng)}\n\n{words.filler(rng, 3)}"),
    ]
    w.text(WS, "meetings/2025/2025-02-budget-review-meeting-minutes.md", f"# Budget review — 2025-02-11\n\n{words.filler(rng, 3)}")
    w.text(WS, "docs/templates/meeting_minutes_template.md", "# Meeting title — YYYY-MM-DD\n\nAttendees:\n\n## Decisions\n\n## Action items")
    out = "project_kickoff_archive/"
    names = [s.rsplit("/", 1)[1] for s in sources]
    rubrics = [rb("The folder project_kickoff_archive was created.", exists(out)),
               rb(f"project_kickoff_archive holds exactly {len(sources)} files.", {"type": "file_count", "dir": out, "equals": len(sources)})]
    rubrics += [rb(f"project_kickoff_archive contains {n} under its original name.", exists(out + n)) for n in names]
    rubrics += [rb(f"The copy of {n} is identical to the original.", {"type": "same_as", "path": out + n, "source": s}) for n, s in zip(names, sources, strict=True)]
    rubrics.append(rb("The budget review minutes and the minutes template are not copied.",
                      absent(out, ["Budget review", "Meeting title"], "\n".join(w.path(WS, s).read_text() for s in sources))))
    prompt = ("Copy the December 2024 project kickoff minutes (under meetings/2024) and the January 2025 technical review "
              "minutes (under meetings/2025), together with all documents under docs/project/, into a new folder "
              "project_kickoff_archive at the root of the workspace. Keep the original file names and contents; add nothing else.")
    w.task([sol.find("ls meetings/2024 meetings/2025 docs/project"), sol.read(sources[:2], "Let me check these are the right minutes."),
            sol.copy([(s, out + n) for s, n in zip(sources, names, strict=True)]), sol.finish("Archive created.")],
           id="ws-05-kickoff-archive", prompt=prompt, workspace=WS, output=out, rubrics=rubrics)


def kpi_summary(w: SuiteWriter, rng: random.Random) -> None:
    rows, files, earlier = [], [], ["Incident report", "2023"]
    for year in (2023, 2024):
        for q in range(1, 5):
            rev, cost = rng.randrange(3_200_000, 5_800_000, 1000), rng.randrange(2_100_000, 3_900_000, 1000)
            head, csat = rng.randint(180, 240), round(rng.uniform(78, 93), 1)
            rel = w.doc(WS, f"reports/quarterly/{year}_Q{q}_operations_report.pdf", [
                ("title", f"Operations Report {year} Q{q}"), ("para", words.filler(rng, 2)), ("heading", "Key figures", 1),
                ("table", [["Indicator", "Value"], ["Revenue (CNY)", f"{rev:,}"], ["Operating cost (CNY)", f"{cost:,}"],
                           ["Headcount (end of quarter)", head], ["Customer satisfaction (%)", csat]]),
                ("heading", "Comments", 1), ("para", words.filler(rng, 3))])
            if year == 2024:
                rows.append([f"Q{q}", rev, cost, head, csat])
                files.append(rel)
            else:
                earlier += [rev, cost]
    for i in range(6):
        w.doc(WS, f"reports/incidents/incident_report_2024_{i + 1:02d}.pdf", [("title", f"Incident report 2024-{i + 1:02d}"), ("para", words.filler(rng, 4))])
    out = "output/kpi_summary_2024.md"
    header = ["Quarter", "Revenue", "Operating Cost", "Headcount", "Customer Satisfaction"]
    rev_total, cost_total = sum(r[1] for r in rows), sum(r[2] for r in rows)
    rubrics = [rb(f"The summary is saved as {out}.", exists(out)),
               rb("The table has one row per 2024 quarter.", {"type": "row_count", "file": out, "equals": 4})]
    rubrics += [rb(f"{q}: revenue {r:,}, operating cost {c:,}, headcount {h}, satisfaction {s}%.", row(out, [q, r, c, h, s])) for q, r, c, h, s in rows]
    rubrics += [rb(f"States the full-year revenue of {rev_total:,}.", contains(out, [rev_total])),
                rb(f"States the full-year operating cost of {cost_total:,}.", contains(out, [cost_total]))]
    table = [header] + [[q, f"{r:,}", f"{c:,}", h, s] for q, r, c, h, s in rows]
    body = office.markdown([("title", "2024 KPI summary"), ("table", table), ("para", f"Full-year revenue: {rev_total:,}"), ("para", f"Full-year operating cost: {cost_total:,}")])
    rubrics.append(rb("Uses no 2023 report and no incident report (none of their figures or titles).", absent(out, earlier, body)))
    prompt = ("From the 2024 quarterly operations reports (reports/quarterly/), write a KPI summary as a markdown table with "
              "the columns Quarter, Revenue, Operating Cost, Headcount and Customer Satisfaction (one row per quarter), followed by "
              f"the full-year revenue and the full-year operating cost. Save it as {out}.")
    w.task([sol.find("ls reports/quarterly"), sol.read(files), sol.write(out, body), sol.finish("KPI summary written.")],
           id="ws-06-kpi-summary", prompt=prompt, workspace=WS, output=out, rubrics=rubrics)


TASKS = [resource_manual, purchase_orders, travel_guide, action_items, kickoff_archive, kpi_summary]
