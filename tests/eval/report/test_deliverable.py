"""A job page's Deliverable section (issue 53, item 3): the final answer under a heading of its own, and
each delivered file's text as the judges read it (`extracted.json`) under that file's link, bounded;
the page never parses a deliverable itself and escapes everything the agent wrote."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from eval.report.load import load_sweep
from eval.report.pages import deliverable
from eval.report.pages.jobpage import job_html
from tests.helpers.report_sweeps import rubric_scores, write_job

HOSTILE = '</pre><script>document.title="pwned"</script><b id="x">'


def _section(page: str) -> str:
    return re.split(r"<h2|<script", page.split('<h2 id="deliverable">Deliverable</h2>')[1])[0]


def _files(section: str) -> list[tuple[str, str]]:
    """(link text, what follows it up to the next file) per file."""
    parts = re.split(r'<h4 class="file"><a href="[^"]+">([^<]*)</a></h4>', section)
    return list(zip(parts[1::2], parts[2::2], strict=True))


def _job(tmp_path: Path, files: dict[str, str], extracted: list[dict] | None, answer: str = "Actions written.", scored: bool = True) -> str:
    sdir = tmp_path / "s"
    d = write_job(sdir, "wb", "t1", "dci", "m1", 0, rubric_scores(["a"], "1") if scored else None, deliverable=files, final_answer=answer)
    if extracted is not None:
        (d / "extracted.json").write_text(json.dumps({"files": extracted, "left_out": 0, "keep_chars": 1_000_000}))
    (job,) = load_sweep(sdir).jobs
    return _section(job_html(job))


def test_the_final_answer_has_its_heading_and_each_file_its_text_under_its_link(tmp_path: Path) -> None:
    files = {"output/actions.md": "1. Book the hotel", "output/notes.txt": "x", "output/plan.xlsx": "PK", "output/big.md": "b"}
    big = "line\n" * 6000  # 30,000 characters: past a file's share of the page
    extracted = [{"path": "output/actions.md", "text": "1. Book the hotel at 450 yuan per night" + HOSTILE},
                 {"path": "output/big.md", "text": big, "clipped": 12},
                 {"path": "output/plan.xlsx", "error": "not read: the file is 60 MB, over the 50 MB limit"}]
    section = _job(tmp_path, files, extracted)
    head, rest = section.split("<h3>Files (4)</h3>")
    assert '<h3>Final answer</h3>\n<pre class="answer">Actions written.</pre>' in head  # not after a file's link
    got = dict(_files(rest))
    assert list(got) == ["output/actions.md", "output/big.md", "output/notes.txt", "output/plan.xlsx"]
    text = re.search(r'<pre class="delivered">(.*?)</pre>', got["output/actions.md"], re.DOTALL).group(1)
    assert text.startswith("1. Book the hotel at 450 yuan per night") and "<script>" not in section and "&lt;/pre&gt;&lt;script&gt;" in text
    shown = re.search(r'<pre class="delivered">(.*?)</pre>', got["output/big.md"], re.DOTALL).group(1)
    assert len(shown) == deliverable.FILE_CHARS and f"the first {deliverable.FILE_CHARS:,} of 30,000 characters shown" in got["output/big.md"]
    assert "12 more past extracted.json" in got["output/big.md"]
    assert "not in what the judges read" in got["output/notes.txt"]  # the deliverable is never parsed here
    assert "unreadable to the judges: not read: the file is 60 MB" in got["output/plan.xlsx"]


def test_the_page_holds_a_bounded_share_of_many_files(tmp_path: Path) -> None:
    n = deliverable.PAGE_CHARS // deliverable.FILE_CHARS + 5
    files = {f"out/f{i:02d}.md": "x" for i in range(n)}
    section = _job(tmp_path, files, [{"path": p, "text": "y" * 50_000} for p in files])
    texts = re.findall(r'<pre class="delivered">(.*?)</pre>', section, re.DOTALL)
    assert sum(map(len, texts)) == deliverable.PAGE_CHARS and len(texts) == n - 5
    assert "5 more file(s), text not shown" in section and section.count('href="../../') == n  # every file still linked


def test_a_file_whose_name_is_not_utf8_finds_its_text(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    d = write_job(sdir, "wb", "t1", "dci", "m1", 0, rubric_scores(["a"], "1"))
    (d / "deliverable").mkdir()
    (d / "deliverable" / os.fsdecode(b"bad\xff.md")).write_text("kept")
    (d / "extracted.json").write_text(json.dumps({"files": [{"path": "bad\\xff.md", "text": "what the judges read"}]}))
    (job,) = load_sweep(sdir).jobs
    (name, body), = _files(_section(job_html(job)))
    assert name == "bad\\xff.md" and "what the judges read" in body


def test_an_unscored_job_lists_its_files_without_reading_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def never(record: object) -> dict:
        raise AssertionError("the deliverable was read for a job the judges never read")

    monkeypatch.setattr(deliverable, "deliverable_doc", never)
    section = _job(tmp_path, {"output/a.md": "secret plan"}, None, scored=False)
    assert "not scored: the judges have not read these files" in section and "output/a.md</a>" in section
    assert "secret plan" not in section


def test_a_record_without_extracted_json_is_read_through_the_judges_workers(tmp_path: Path) -> None:
    section = _job(tmp_path, {"output/a.md": "Total 55,000"}, None)
    (_, body), = _files(section)
    assert '<pre class="delivered">Total 55,000</pre>' in body


def test_a_broken_extracted_json_costs_only_the_texts(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    d = write_job(sdir, "wb", "t1", "dci", "m1", 0, rubric_scores(["a"], "1"), deliverable={"a.md": "x"}, final_answer="Done.")
    (d / "extracted.json").write_text("{not json")
    (job,) = load_sweep(sdir).jobs
    section = _section(job_html(job))
    assert "what the judges read cannot be shown" in section and "a.md</a>" in section and "Done." in section
    (d / "extracted.json").write_text(json.dumps({"files": [{"path": "a.md", "text": ["not", "text"]}]}))
    (job,) = load_sweep(sdir).jobs
    section = _section(job_html(job))
    assert "what the judges read cannot be shown" in section and "a.md</a>" in section and job.unreadable  # named, not shown
