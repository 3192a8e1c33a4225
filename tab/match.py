"""Lexical matching: normalized words shared between a requirement and a line (cheap, deterministic).

Words are lowercased, stop words dropped, suffixes stripped by a small Porter-like stemmer; numbers
are kept (thousands separators and leading zeros removed, so "55,000" meets "55000" and "07" meets
"7"). Runs of CJK characters, written without spaces, become overlapping character pairs.
"""

from __future__ import annotations

import re
from functools import lru_cache

STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each either etc few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself just
    may me might more most must my myself no nor not now of off on once only or other our ours ourselves
    out over own per same shall she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up upon us use used using very via was we
    were what when where which while who whom why will with within without would you your yours yourself
    yourselves""".split()
)
# Verbs a requirement is phrased with ("List the vendors", "State the cap"): not its content.
INSTRUCTION_VERBS = frozenset(
    """state list lists listed include includes included give gives report reports provide
    provides describe describes summarize summarise summarizes write writes make makes ensure ensures
    note notes specify specifies show shows explain explains identify identifies indicate indicates find
    mention mentions present presents outline outlines add adds confirm confirms please""".split()
)
REQUIREMENT_STOP_WORDS = STOP_WORDS | INSTRUCTION_VERBS
# Words of a path that say nothing about its subject.
PATH_STOP_WORDS = STOP_WORDS | frozenset(
    "md txt csv tsv json jsonl xml yaml yml html htm pdf doc docx xls xlsx xlsm ppt pptx odt ods odp rtf "
    "png jpg jpeg gif svg zip log py js ts sh ipynb bak tmp".split()
)
# Identifiers mixing letters and digits (Q1, FY2024, 2024Q1) first, then numbers, then words.
# A comma groups thousands only before three digits ("1,850"); "15,55000" is two CSV fields.
_TOKEN = re.compile(
    r"(?:[^\W\d_]+\d|\d+[^\W\d_])[^\W_]*|\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)*|[^\W\d_]+"
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_VOWELS = frozenset("aeiou")
_INFLECTIONS = ("ingly", "edly", "ing", "ed")
_SUFFIXES = (
    ("ational", "ate"), ("ization", "ize"), ("isation", "ize"), ("fulness", ""), ("iveness", ""),
    ("ousness", ""), ("tional", "tion"), ("ements", ""), ("ement", ""), ("ment", ""), ("ness", ""),
    ("ation", "ate"), ("ator", "ate"), ("ities", ""), ("ity", ""), ("ance", ""), ("ence", ""),
    ("able", ""), ("ible", ""), ("ful", ""), ("ous", ""), ("ive", ""), ("ize", ""), ("ise", ""),
    ("ism", ""), ("ist", ""), ("ally", "al"), ("ently", "ent"), ("ously", "ous"), ("ively", "ive"),
    ("fully", "ful"), ("al", ""), ("er", ""),
)
_SUFFIX_ENDS = tuple(suffix for suffix, _ in _SUFFIXES)
# state/statement, agree/agreement stay apart; reimburse/reimbursement still meet.
_MIN_STEM = {"er": 4, "al": 4, "ements": 5, "ement": 5, "ment": 6}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A Porter-lite stem: plural, -ed/-ing, then up to two derivational suffixes, final -e and -y."""
    w = word
    if len(w) <= 3:
        return w
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "i"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in _INFLECTIONS:
        rest = w[: -len(suffix)]
        if w.endswith(suffix) and len(rest) >= 3 and _VOWELS.intersection(rest):
            w = rest
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in _VOWELS and w[-1] != "s":
                w = w[:-1]
            break
    for _ in range(2):
        if not w.endswith(_SUFFIX_ENDS):
            break
        for suffix, replacement in _SUFFIXES:
            if w.endswith(suffix) and len(w) - len(suffix) >= _MIN_STEM.get(suffix, 3):
                w = w[: -len(suffix)] + replacement
                break
        else:
            break
    if w.endswith("y") and len(w) > 3 and w[-2] not in _VOWELS:
        w = w[:-1] + "i"
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in _VOWELS and w[-1] != "s":
        w = w[:-1]
    return w


def _number(token: str) -> str:
    if "," in token and re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", token):
        token = token.replace(",", "")
    if token.isdigit():
        return token.lstrip("0") or "0"
    return token


def words(text: str, stop: frozenset[str] = STOP_WORDS) -> list[str]:
    """The normalized words of a text, in order (repeats kept). Identifiers (Q1) stay whole; a
    capitalized plural inside a text (the United States) keeps its -s."""
    out: list[str] = []
    cjk = not text.isascii() and _CJK.search(text) is not None
    before = ""
    for m in _TOKEN.finditer(text):
        raw, prev = m.group(), before
        before = raw
        token = raw.lower()
        if token[0].isdigit() and token.replace(",", "").replace(".", "").isdigit():
            out.append(_number(token))
        elif any(c.isdigit() for c in token):
            out.append(token)
        elif cjk and _CJK.search(token):
            for part in _split_cjk(token):
                if _CJK.match(part):
                    out.extend(part[i : i + 2] for i in range(max(1, len(part) - 1)))
                elif len(part) > 1 and part not in stop:
                    out.append(stem(part))
        elif len(token) > 1 and token not in stop:
            proper = _proper_plural(raw, prev)
            out.append(token if proper else stem(token))
    return out


def _proper_plural(raw: str, prev: str) -> bool:
    """A capitalized plural in a name (the United States, the Netherlands, Human Resources) keeps
    its -s; one after a number or at a clause's start (Article 7 Hotels) is an ordinary plural."""
    if not (raw[0].isupper() and raw[1:].islower() and raw.endswith("s") and not raw.endswith("ss")):
        return False
    return prev.lower() == "the" or (prev[:1].isupper() and prev[1:].islower() and prev.isalpha())


def _split_cjk(token: str) -> list[str]:
    if not _CJK.search(token):
        return [token]
    parts, last = [], 0
    for m in _CJK.finditer(token):
        parts.extend(p for p in (token[last : m.start()], m.group()) if p)
        last = m.end()
    if token[last:]:
        parts.append(token[last:])
    return parts


def word_set(text: str) -> frozenset[str]:
    return frozenset(words(text))


def requirement_words(text: str) -> frozenset[str]:
    """A requirement's content words: its instruction verbs (list, state, give...) dropped."""
    return frozenset(words(text, REQUIREMENT_STOP_WORDS))


def supports(wanted: frozenset[str], line: frozenset[str]) -> bool:
    """Whether a line can ground a requirement: it shares two of its content words (or its only
    one; or one of two when the line states a value, as in "hotel rate" / "Hotels: 450 yuan per
    night"), and one of its numbers or identifiers (Q1, Supplier 15) when it names any."""
    shared = wanted & line
    marked = [w for w in wanted if _marked(w)]
    need = 1 if len(wanted) == 2 and any(_marked(w) for w in line) else min(2, len(wanted))
    return len(shared) >= need and (not marked or any(w in shared for w in marked))


def _marked(word: str) -> bool:
    return any(c.isdigit() for c in word)


def path_words(path: str) -> frozenset[str]:
    """The words of a file path (directories, name; camelCase and separators split; extensions dropped)."""
    return frozenset(words(_CAMEL.sub(" ", path).replace("_", " "), PATH_STOP_WORDS))


def shared(a: frozenset[str], b: frozenset[str]) -> int:
    return len(a & b)


def clip(line: str, wanted: frozenset[str], limit: int) -> str:
    """The line cut to `limit` characters around its first word in `wanted` (what a review shows)."""
    line = line.strip()
    if len(line) <= limit:
        return line
    start = 0
    for m in _TOKEN.finditer(line):
        if wanted & frozenset(words(m.group())):
            start = max(0, m.start() - limit // 4)
            break
    start = min(start, len(line) - limit)
    cut = line[start : start + limit]
    return ("…" if start else "") + cut + ("…" if start + limit < len(line) else "")
