"""Vocabulary for realistic generated content (names, suppliers, items, places, filler prose)."""

from __future__ import annotations

import random

FIRST = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Gustavo", "Hana", "Ivan", "Jia", "Kofi", "Lena",
         "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wei", "Yusuf", "Zoe"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Novak", "Silva", "Kowalski", "Nguyen", "Fischer",
        "Ramirez", "Osei", "Petrov", "Larsen", "Mehta", "Costa", "Brennan", "Sato", "Yilmaz", "Adeyemi"]
SUPPLIER_STEMS = ["Northwind", "Bluepeak", "Harbor", "Cedar", "Summit", "Ironbridge", "Silverline", "Greenfield",
                  "Oakridge", "Brightway", "Redstone", "Clearwater", "Pinecrest", "Goldleaf", "Stonegate", "Riverside",
                  "Eastgate", "Westbrook", "Maplewood", "Lakeshore", "Highland", "Sunrise", "Keystone", "Fairview"]
SUPPLIER_KINDS = ["Office Supplies", "Trading", "Logistics", "Electronics", "Facilities", "Print Services",
                  "Industrial", "Catering", "Furniture", "IT Solutions"]
ITEMS = [("A4 copy paper (box)", 38), ("Toner cartridge", 96), ("Ergonomic chair", 420), ("Standing desk", 760),
         ("LED panel light", 85), ("Laptop docking station", 180), ("Conference phone", 650), ("Whiteboard", 140),
         ("Water dispenser", 310), ("Shredder", 260), ("Monitor 27-inch", 330), ("Network switch", 540),
         ("First-aid kit", 45), ("Projector", 890), ("Filing cabinet", 275), ("Coffee machine", 1250)]
DEPARTMENTS = ["Operations", "Finance", "Human Resources", "Engineering", "Marketing", "Sales", "Legal", "Procurement"]
CITIES = ["Shanghai", "Berlin", "Nairobi", "Toronto", "Lima", "Osaka", "Madrid", "Warsaw", "Austin", "Jakarta"]
PROJECTS = ["Atlas", "Beacon", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Horizon"]
STATUSES = ["Approved", "Pending", "Delivered", "Cancelled", "In Transit"]
FILLER = [
    "The team reviewed the current arrangements and agreed that the existing process remains in place until further notice.",
    "Departments are reminded to keep supporting documents for at least three years after the end of the fiscal year.",
    "Questions about this document should be sent to the office of the responsible department.",
    "This document replaces earlier guidance on the same subject and applies to all permanent and temporary staff.",
    "Exceptions must be approved in writing before the activity takes place.",
    "The figures in this section are preliminary and may be revised in the next reporting period.",
    "Staff are encouraged to suggest improvements through the usual channels.",
    "Progress will be reviewed at the next regular meeting.",
    "All amounts are stated before tax unless noted otherwise.",
    "The responsible manager confirms that the information above is complete and accurate.",
]


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def people(rng: random.Random, n: int) -> list[str]:
    """n distinct full names."""
    names = [f"{f} {last}" for f in FIRST for last in LAST]
    return rng.sample(names, n)


def suppliers(rng: random.Random, n: int) -> list[str]:
    """n distinct supplier company names."""
    names = [f"{s} {k} Co., Ltd." for s in SUPPLIER_STEMS for k in SUPPLIER_KINDS]
    return rng.sample(names, n)


def filler(rng: random.Random, n: int = 2) -> str:
    return " ".join(rng.sample(FILLER, n))


def date(rng: random.Random, year: int, month: int | None = None) -> str:
    m = month or rng.randint(1, 12)
    return f"{year}-{m:02d}-{rng.randint(1, 28):02d}"


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_").replace("__", "_")
