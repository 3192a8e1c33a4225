"""Capture coverage: each command form, run for real in a workspace, must yield exactly these entries
(paths whose content it showed) and candidates (files its listings named), and nothing else."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from envs.protocol import Observation
from envs.read_tool import read_file
from tab.capture.observe import Capture, Captured
from tab.capture.workspace_files import Workspace
from tests.tab.test_support import (
    check_entry,
    missing_tools,
    snapshot,
    write_docx,
    write_files,
    write_pdf,
)

TRAVEL = (
    "# Travel policy\nArticle 1 Travel approval\nEmployees file a travel request before departure.\n"
    "Article 2 Hotel limit 500 per night\n"
)
MEALS = "# Meals\nMeal allowance 100 per day\nNo alcohol is reimbursed.\n"
FILES = {
    "policies/travel.md": TRAVEL,
    "policies/meals.md": MEALS,
    "policies/with space.md": "Spaced file about travel.\n",
    "data/orders.csv": "supplier,amount\nSupplier 15,55000\nSupplier 3,1200\n",
    "notes/2024/minutes.md": "Minutes: travel budget approved\n",
    "README.md": "Workspace of the finance team.\n",
}
ALL_FILES = {*FILES, "policies/water.docx", "policies/guide.pdf"}
POLICIES = {"policies/travel.md", "policies/meals.md", "policies/with space.md", "policies/water.docx",
            "policies/guide.pdf"}
MD_FILES = {"policies/travel.md", "policies/meals.md", "policies/with space.md", "notes/2024/minutes.md", "README.md"}
TRAVEL_GREP = {"policies/travel.md", "policies/with space.md", "notes/2024/minutes.md"}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template")
    write_files(root, FILES)
    write_docx(root / "policies/water.docx", ["Water saving manual", "Article 3 Turn off taps"])
    write_pdf(root / "policies/guide.pdf", ["Violation handling", "Repay within 30 days"])
    (root / "archive/old").mkdir(parents=True)
    (root / "output").mkdir()
    return root


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(template, root)
    return root


def run_bash(root: Path, command: str) -> Captured:
    """Run the command for real, then capture from its genuine output (each read checked by the invariant)."""
    p = subprocess.run(command, shell=True, cwd=root, capture_output=True, text=True, executable="/bin/bash")
    return capture(root, Observation("bash", {"command": command}, p.stdout + p.stderr, p.returncode != 0, 1))


def capture(root: Path, obs: Observation, exclude: tuple[str, ...] = ()) -> Captured:
    """The capture of one observation, every read checked by the shared invariant (`check_entry`)."""
    start = snapshot(root)
    got = Capture(Workspace(root, exclude))(obs)
    for path, excerpt in got.reads:
        check_entry(path, excerpt, [obs.output], start)
    return got


PY = "python3"
CASES = [
    # (command, entries in order (a set when the tool's order is the file system's), candidates)
    ("cat policies/travel.md", ["policies/travel.md"], set()),
    ('cat "policies/with space.md"', ["policies/with space.md"], set()),
    ("cat ./policies/../policies/meals.md", ["policies/meals.md"], set()),
    ("cd policies && cat travel.md", ["policies/travel.md"], set()),
    ("cd notes; cd 2024; cat minutes.md", ["notes/2024/minutes.md"], set()),
    ("head -n 2 policies/travel.md", ["policies/travel.md"], set()),
    ("tail -n 1 policies/meals.md", ["policies/meals.md"], set()),
    ("head -n 2 policies/travel.md policies/meals.md", ["policies/travel.md", "policies/meals.md"], set()),
    ("sed -n '2,3p' policies/travel.md", ["policies/travel.md"], set()),
    ("nl -ba policies/meals.md", ["policies/meals.md"], set()),
    ("less policies/meals.md", ["policies/meals.md"], set()),
    ("more policies/meals.md", ["policies/meals.md"], set()),
    ("grep -n Hotel policies/travel.md", ["policies/travel.md"], set()),
    ("grep -rn travel .", TRAVEL_GREP, set()),
    ("grep -ri hotel policies/", {"policies/travel.md"}, set()),
    ("grep -C1 -n Meal policies/travel.md policies/meals.md", ["policies/meals.md"], set()),
    ("rg -n travel", TRAVEL_GREP, set()),
    ("cat policies/travel.md | grep Hotel", ["policies/travel.md"], set()),
    ("cat policies/travel.md 2>/dev/null | head -n 2", ["policies/travel.md"], set()),
    ("pdftotext policies/guide.pdf -", ["policies/guide.pdf"], set()),
    ("docx2txt policies/water.docx -", ["policies/water.docx"], set()),
    (f"{PY} -c \"import zipfile; print(zipfile.ZipFile('policies/water.docx').read('word/document.xml')[:60])\"",
     [], set()),  # a script's output is checked against the document's text: its XML markup is not that
    (f"{PY} - policies/water.docx <<'EOF'\nimport re, sys, zipfile\nxml = zipfile.ZipFile(sys.argv[1]).read('word/document.xml')"
     ".decode()\nfor p in re.findall(r'<w:p[ >].*?</w:p>', xml):\n    print(''.join(re.findall(r'<w:t[^>]*>([^<]*)<', p)))\nEOF",
     ["policies/water.docx"], set()),
    (f"{PY} - <<'EOF'\nfor line in open('data/orders.csv'):\n    print(line, end='')\nEOF",
     ["data/orders.csv"], set()),
    (f"{PY} - <<'EOF'\nimport csv\nfor row in csv.reader(open('data/orders.csv')):\n    print(row)\nEOF",
     [], set()),  # a list's repr is not the file's own text: kept unattributed
    ("awk -F, '{print $1}' data/orders.csv", ["data/orders.csv"], set()),
    ("cat policies/travel.md policies/meals.md", ["policies/travel.md", "policies/meals.md"], set()),
    ("cat policies/travel.md; echo ----; cat policies/meals.md", ["policies/travel.md", "policies/meals.md"], set()),
    ("for f in policies/travel.md policies/meals.md; do head -n 1 \"$f\"; done",
     ["policies/travel.md", "policies/meals.md"], set()),
    ("f=policies/meals.md; cat $f", ["policies/meals.md"], set()),
    ("bash -c 'cat policies/meals.md'", ["policies/meals.md"], set()),
    ("timeout 5 cat policies/meals.md", ["policies/meals.md"], set()),
    ("find . -name '*.md' | xargs grep -n Hotel", ["policies/travel.md"], set()),
    ("ls policies && cat policies/travel.md", ["policies/travel.md"], POLICIES - {"policies/travel.md"}),
    # listings
    ("ls", [], {"README.md"}),
    ("ls -l policies", [], POLICIES),
    ("ls -la policies", [], POLICIES),
    ("ls -R", [], ALL_FILES),
    ("ls policies notes/2024", [], POLICIES | {"notes/2024/minutes.md"}),
    ("find . -name '*.md'", [], MD_FILES),
    ("find . -type f | head -n 100", [], ALL_FILES),
    ("tree", [], ALL_FILES),
    ("tree policies", [], POLICIES),
    ("grep -rl travel .", [], TRAVEL_GREP),
    ("rg --files", [], ALL_FILES),
    ("du -a policies", [], POLICIES),
    ("echo policies/*.md", [], {"policies/travel.md", "policies/meals.md", "policies/with space.md"}),
    ("ls policies/*.md | sort", [], {"policies/travel.md", "policies/meals.md", "policies/with space.md"}),
    # nothing to record
    ("echo hi", [], set()),
    ("wc -l policies/travel.md", [], set()),
    (f"{PY} -c 'print(1+2)'", [], set()),
    ("ls -d */", [], set()),
    ("ls archive", [], set()),
    ("find . -type d", [], set()),
    ("cat missing.md", [], set()),
    ("grep -c Hotel policies/travel.md", [], set()),
    ("grep -q Hotel policies/travel.md", [], set()),
    ("cat policies/travel.md | wc -l", [], set()),
    ("cat policies/travel.md > output/copy.md", [], set()),
    ("sed -i 's/500/600/' policies/travel.md", [], set()),
    ("cat > output/guide.md <<'EOF'\n# Guide\nsee policies/travel.md\nEOF", [], set()),
    ("pdftotext policies/guide.pdf", [], set()),
    ("cat /etc/hostname", [], set()),
]


@pytest.mark.parametrize(("command", "entries", "candidates"), CASES, ids=[c[0][:48] for c in CASES])
def test_capture_form(ws: Path, command: str, entries: list[str] | set[str], candidates: set[str]) -> None:
    if missing_tools(command):
        pytest.skip(f"not installed: {', '.join(missing_tools(command))}")
    got = run_bash(ws, command)
    paths = [p for p, _ in got.reads]
    if isinstance(entries, set):
        assert set(paths) == entries and len(paths) == len(entries)
    else:
        assert paths == entries
    assert set(got.listed) == candidates
    assert all(excerpt.strip() for _, excerpt in got.reads)


def test_capture_covers_at_least_thirty_forms() -> None:
    assert len({c[0] for c in CASES}) >= 30


def excerpts(ws: Path, command: str) -> dict[str, str]:
    return dict(run_bash(ws, command).reads)


@pytest.mark.skipif(bool(missing_tools("pdftotext")), reason="pdftotext not installed (apt-get install poppler-utils)")
def test_excerpt_is_what_the_agent_saw(ws: Path) -> None:
    assert excerpts(ws, "cat policies/travel.md") == {"policies/travel.md": TRAVEL.rstrip("\n")}
    assert excerpts(ws, "cat policies/travel.md | grep Hotel") == {
        "policies/travel.md": "Article 2 Hotel limit 500 per night"}
    assert excerpts(ws, "grep -n Hotel policies/travel.md") == {
        "policies/travel.md": "4:Article 2 Hotel limit 500 per night"}
    assert "Violation handling" in excerpts(ws, "pdftotext policies/guide.pdf -")["policies/guide.pdf"]


def test_multi_file_output_is_split_per_file(ws: Path) -> None:
    both = excerpts(ws, "head -n 2 policies/travel.md policies/meals.md")
    assert both == {"policies/travel.md": "# Travel policy\nArticle 1 Travel approval",
                    "policies/meals.md": "# Meals\nMeal allowance 100 per day"}
    cat = excerpts(ws, "cat policies/travel.md; echo ----; cat policies/meals.md")
    assert cat == {"policies/travel.md": TRAVEL.rstrip("\n"), "policies/meals.md": MEALS.rstrip("\n")}
    grep = excerpts(ws, "grep -rn travel .")
    assert grep["notes/2024/minutes.md"] == "1:Minutes: travel budget approved"  # the path prefix goes
    ctx = excerpts(ws, "grep -C1 -n allowance policies/travel.md policies/meals.md")
    assert ctx["policies/meals.md"].split("\n")[:2] == ["1-# Meals", "2:Meal allowance 100 per day"]


def test_merged_output_credits_each_line_to_the_file_that_holds_it(ws: Path) -> None:
    got = excerpts(ws, "cat policies/travel.md policies/meals.md | grep -i -e hotel -e alcohol")
    assert got == {"policies/travel.md": "Article 2 Hotel limit 500 per night",
                   "policies/meals.md": "No alcohol is reimbursed."}


def test_error_lines_and_harness_notices_are_not_content(ws: Path) -> None:
    got = run_bash(ws, "cat missing.md policies/meals.md")
    assert dict(got.reads) == {"policies/meals.md": MEALS.rstrip("\n")}
    obs = Observation("bash", {"command": "cat policies/meals.md"},
                      MEALS + "\n\n[Showing lines 1-3 of 3. Full output: /tmp/x]\n\nCommand exited with code 1",
                      True, 2)
    assert capture(ws, obs).reads == [("policies/meals.md", MEALS.rstrip("\n"))]


def read_obs(root: Path, path: str, **kw: int) -> Observation:
    """A genuine `read` result from the harness's own read tool."""
    from envs.paths import ToolError

    try:
        res = read_file(str(root), path, kw.get("offset"), kw.get("limit"), 2000, 51200)
    except ToolError as e:
        return Observation("read", {"path": path, **kw}, str(e), True, 1)
    return Observation("read", {"path": path, **kw}, res.content, res.is_error, 1)


def test_read_tool_entry_drops_the_continuation_notice(ws: Path) -> None:
    obs = read_obs(ws, "policies/travel.md", limit=2)
    assert "Use offset=3" in obs.output
    got = capture(ws, obs)
    assert got.reads == [("policies/travel.md", "# Travel policy\nArticle 1 Travel approval")]
    assert got.command == "read policies/travel.md limit=2"


def test_read_tool_errors_capture_nothing(ws: Path) -> None:
    cap = Capture(Workspace(ws))
    assert cap(read_obs(ws, "policies/travel.md", offset=99)).reads == []
    assert cap(read_obs(ws, "nope.md")).reads == []
    assert cap(Observation("read", {}, "bad arguments", True, 1)).reads == []


def test_other_tools_capture_nothing(ws: Path) -> None:
    obs = Observation("write", {"path": "policies/x.md", "content": "hi"}, "Wrote policies/x.md", False, 1)
    assert Capture(Workspace(ws))(obs) == Captured()


def test_reading_a_saved_long_output_is_attributed_to_its_command(tmp_path: Path) -> None:
    """A bash output too long to show whole is saved by the harness; reading it shows the source file."""
    from tests.tab.test_support import Session, read_log

    write_files(tmp_path, {"big.md": "".join(f"row {i} of the ledger\n" for i in range(1, 3001))})
    s = Session(tmp_path)
    shown = s.one("bash", command="cat big.md")
    assert "Full output:" in shown.content and "+L1 big.md" in shown.appendix
    assert s.tab.state.entries["L1"].excerpt.startswith("row 1001 of the ledger")  # the tail it saw
    saved = shown.meta["full_output"]
    head = s.one("read", path=saved, limit=3)
    assert "+L2 big.md" in head.appendix
    entry = s.tab.state.entries["L2"]
    assert entry.excerpt == "row 1 of the ledger\nrow 2 of the ledger\nrow 3 of the ledger"
    assert entry.command == f"read {saved} limit=3 (saved output of: cat big.md)"
    assert [e["path"] for e in read_log(s)] == ["big.md", "big.md"]
    assert s.tab.record()["candidates"] == []  # the harness's folder is never a candidate
    s.close()


@pytest.mark.skipif(bool(missing_tools("tree")), reason="tree not installed (apt-get install tree)")
def test_tree_in_the_c_locale_and_non_ascii_names(ws: Path) -> None:
    write_files(ws, {"政策/差旅 标准.md": "差旅报销标准\n"})
    for locale in ("C", "C.UTF-8"):
        out = subprocess.run("tree", shell=True, cwd=ws, capture_output=True, text=True,
                             env={"LC_ALL": locale, "PATH": "/usr/bin:/bin"}).stdout
        got = Capture(Workspace(ws))(Observation("bash", {"command": "tree"}, out, False, 1))
        assert set(got.listed) == ALL_FILES | {"政策/差旅 标准.md"}, locale


def test_python_script_that_opens_a_workspace_file(ws: Path) -> None:
    write_files(ws, {"output/summarize.py": "for line in open('data/orders.csv'):\n    print(line, end='')\n"})
    p = subprocess.run("python3 output/summarize.py", shell=True, cwd=ws, capture_output=True, text=True)
    obs = Observation("bash", {"command": "python3 output/summarize.py"}, p.stdout, False, 1)
    got = capture(ws, obs, exclude=("output",))
    assert [path for path, _ in got.reads] == ["data/orders.csv"]
    assert "Supplier 15,55000" in got.reads[0][1]
    assert got.unattributed == ""


@pytest.mark.parametrize(("command", "entries", "candidates"), CASES, ids=[c[0][:48] for c in CASES])
def test_reads_only_capture_gives_the_same_reads(ws: Path, command: str, entries: object, candidates: object) -> None:
    """The shown log's capture (`listings=False`) skips what only listings need, and keeps every read."""
    if missing_tools(command):
        pytest.skip(f"not installed: {', '.join(missing_tools(command))}")
    p = subprocess.run(command, shell=True, cwd=ws, capture_output=True, text=True, executable="/bin/bash")
    obs = Observation("bash", {"command": command}, p.stdout + p.stderr, p.returncode != 0, 1)
    full = Capture(Workspace(ws))(obs)
    reads_only = Capture(Workspace(ws), listings=False)(obs)
    assert reads_only.reads == full.reads
    assert reads_only.listed == [] or reads_only.listed == full.listed


def test_a_file_read_again_unchanged_is_indexed_once_and_a_rewrite_is_seen(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each observation of an unchanged file checks its lines against the text read the first time
    (one read of the file, not one per observation); rewritten, even to the same size, it is read again."""
    import tab.capture.workspace_files as workspace_files

    opened: list[str] = []
    real = workspace_files.read_regular
    monkeypatch.setattr(workspace_files, "read_regular", lambda root, rel, limit=None: opened.append(rel) or real(root, rel, limit))
    cap = Capture(Workspace(ws))
    cat = Observation("bash", {"command": "cat policies/meals.md"}, MEALS, False, 1)
    for _ in range(3):
        assert cap(cat).reads == [("policies/meals.md", MEALS.rstrip("\n"))]
    assert opened == ["policies/meals.md"]
    rewritten = MEALS.replace("100", "999")
    (ws / "policies/meals.md").write_text(rewritten)
    assert cap(cat).reads == [("policies/meals.md", "# Meals\nNo alcohol is reimbursed.")]  # the old line is no longer its text
    assert cap(Observation("bash", {"command": "cat policies/meals.md"}, rewritten, False, 2)).reads == [
        ("policies/meals.md", rewritten.rstrip("\n"))]
    assert opened == ["policies/meals.md"] * 2
