"""The report's first screen in headless Chromium (issue 53, items 4-5): the index and a job page opened as
a reader opens them, photographed, and the figures measured as the browser laid them out, at one row
and at 1,000: every expected row drawn, each label inside its own column (none cut but those ended
with "…" on purpose) and at a legible size, no two texts of a row or of two rows overlapping, every
interval drawn inside the plot with its point on it, every heat-map cell coloured and its text whole.

The sweeps are fabricated by `bench.bench_report_glance.fabricate` (the sweeps of docs/report.md's
pictures). Measuring runs in the browser: a page beside the report loads the index in a frame
(`--allow-file-access-from-files`) and writes what it measured into its own DOM, which Chromium dumps.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import matplotlib.image
import pytest

from bench.bench_report_glance import SHAPES, Block, fabricate
from eval.report import write_report
from eval.report.load import load_sweep
from eval.report.pages.viewer_compare import compare_name, pairs
from tests.eval.report.test_html import CHROMIUM

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install -y chromium)")
MIN_FONT_PX = 11
MEASURE = r"""
<!DOCTYPE html><html><body><pre id="out">pending</pre>
<iframe id="f" src="%(src)s" style="width:1400px;height:900px"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  const d = this.contentDocument, w = this.contentWindow, res = {forests: {}, heat: null, tasks: []};
  function box(e) { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }
  d.querySelectorAll("details").forEach(function (x) { x.open = true; });
  d.querySelectorAll("svg.forest").forEach(function (svg) {
    const id = svg.parentElement.id || svg.parentElement.parentElement.id;
    const out = {rows: 0, drawn: box(svg), cut: [], small: [], overlaps: [], intervals: [], kinds: [], counts: {}};
    const clips = {};
    svg.querySelectorAll("clipPath").forEach(function (c) {
      const r = c.querySelector("rect"); clips[c.id] = [Number(r.getAttribute("x")), Number(r.getAttribute("width"))];
    });
    const plot = Array.prototype.map.call(svg.querySelectorAll("text.tick"), function (t) { return Number(t.getAttribute("x")); });
    const lo = Math.min.apply(null, plot), hi = Math.max.apply(null, plot);
    const ticks = Array.prototype.map.call(svg.querySelectorAll("text.tick"), function (t) { return t.getBBox(); })
      .filter(function (b, k, all) { return b.y === all[0].y; }).sort(function (a, b) { return a.x - b.x; });
    for (let k = 1; k < ticks.length; k++) {
      if (ticks[k - 1].x + ticks[k - 1].width + 2 > ticks[k].x) out.overlaps.push(["ticks", k]);
    }
    let prevBottom = -1;
    svg.querySelectorAll("g.frow").forEach(function (g, i) {
      out.rows++; out.kinds.push(g.dataset.kind);
      const n = g.querySelector('text.lab[data-col="counts"]');
      if (n) out.counts[n.textContent] = (out.counts[n.textContent] || 0) + 1;
      const texts = Array.prototype.slice.call(g.querySelectorAll("text.lab"));
      const boxes = texts.map(function (t) {
        const ref = /url\(#(.*)\)/.exec(t.getAttribute("clip-path"))[1], col = clips[ref];
        const len = t.getComputedTextLength(), x = Number(t.getAttribute("x"));
        if (!col || d.getElementById(ref).ownerSVGElement !== svg) out.cut.push([i, t.dataset.col, "clipped by another figure"]);
        else if (x + len > col[0] + col[1] + 0.5) out.cut.push([i, t.dataset.col, t.textContent, len, col[1]]);
        if (parseFloat(w.getComputedStyle(t).fontSize) < %(min_font)s) out.small.push([i, t.textContent]);
        return t.getBBox();
      }).sort(function (a, b) { return a.x - b.x; });
      for (let k = 1; k < boxes.length; k++) {
        if (boxes[k - 1].x + boxes[k - 1].width > boxes[k].x) out.overlaps.push([i, "row", k]);
      }
      const top = Math.min.apply(null, boxes.map(function (b) { return b.y; }));
      if (top < prevBottom) out.overlaps.push([i, "rows"]);
      prevBottom = Math.max.apply(null, boxes.map(function (b) { return b.y + b.height; }));
      const ci = g.querySelector("line.ci"), pt = g.querySelector("rect.pt").getBBox();
      const x1 = Number(ci.getAttribute("x1")), x2 = Number(ci.getAttribute("x2")), mid = pt.x + pt.width / 2;
      const ok = lo - 0.5 <= x1 && x1 <= x2 && x2 <= hi + 0.5 && x1 - 0.5 <= mid && mid <= x2 + 0.5 && pt.width >= 6
        && parseFloat(ci.getAttribute("stroke-width")) >= 1.5;
      out.intervals.push(ok ? 1 : 0);
    });
    res.forests[id] = out;
  });
  const heat = d.getElementById("leaderboard-heat");
  if (heat) {
    const cells = heat.querySelectorAll("td");
    res.heat = {rows: heat.querySelectorAll("tbody tr").length, drawn: box(heat), blank: 0, cut: 0};
    cells.forEach(function (c) {
      const bg = w.getComputedStyle(c).backgroundColor;
      if (!c.textContent || bg === "rgba(0, 0, 0, 0)") res.heat.blank++;
      if (c.scrollWidth > c.clientWidth + 1) res.heat.cut++;
    });
  }
  d.querySelectorAll("table.per-task").forEach(function (t) {
    const chips = t.querySelectorAll(".chips a");
    let cut = 0, blank = 0;
    chips.forEach(function (a) {
      if (a.scrollWidth > a.clientWidth + 1) cut++;
      if (!a.offsetWidth || w.getComputedStyle(a).backgroundColor === "rgba(0, 0, 0, 0)") blank++;
    });
    res.tasks.push({benchmark: t.dataset.benchmark, model: t.dataset.model, rows: t.querySelectorAll("tbody tr").length,
                    chips: chips.length, cut: cut, blank: blank, drawn: box(t)});
  });
  document.getElementById("out").textContent = JSON.stringify(res);
});
</script></body></html>
"""


def measure(index: Path, work: Path) -> dict:
    """What the browser laid out on the index (see MEASURE)."""
    page = work / "measure.html"
    page.write_text(MEASURE % {"src": index.as_uri(), "min_font": MIN_FONT_PX})
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--allow-file-access-from-files",
           f"--user-data-dir={work / 'profile'}", "--virtual-time-budget=60000", "--dump-dom", page.as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = re.search(r'<pre id="out">(.*?)</pre>', done.stdout, re.DOTALL).group(1)
    assert out != "pending", "the index did not load in the frame"
    return json.loads(out.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"'))


def screenshot(url: str, png: Path, size: str = "1400,900") -> set[tuple[float, ...]]:
    """The page in a window of `size`; the colours it shows (sampled)."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={png.parent / 'profile-shot'}", f"--window-size={size}", f"--screenshot={png}", url]
    subprocess.run(cmd, capture_output=True, timeout=120, check=True)
    pixels = matplotlib.image.imread(png)
    return {tuple(p) for p in (pixels[::3, ::3, :3] * 255).round().reshape(-1, 3).tolist()}


def _rgb(color: str) -> tuple[float, ...]:
    return tuple(float(int(color[i : i + 2], 16)) for i in (1, 3, 5))


def _check_forest(f: dict, rows: int) -> None:
    assert f["rows"] == rows
    assert f["drawn"][2] - f["drawn"][0] > 600 and f["drawn"][3] - f["drawn"][1] > 18 * rows  # non-empty, a row's height each
    assert f["cut"] == [] and f["small"] == [] and f["overlaps"] == []
    assert f["intervals"] == [1] * rows


@pytest.mark.slow
def test_one_cell_index_and_job_page(tmp_path: Path) -> None:
    sdir = fabricate(tmp_path / "one", SHAPES["one"])
    report = write_report(sdir)
    got = measure(report / "index.html", tmp_path)
    _check_forest(got["forests"]["forest-headline"], 1)
    assert got["forests"]["forest-headline"]["counts"] == {"1 / 1": 1}
    assert got["forests"]["forest-other"]["rows"] == 1  # tcr70
    assert got["heat"]["rows"] == 2 and got["heat"]["blank"] == 0 and got["heat"]["cut"] == 0
    (grid,) = got["tasks"]
    assert (grid["rows"], grid["chips"], grid["cut"], grid["blank"]) == (1, 2, 0, 0)
    colors = screenshot((report / "index.html").as_uri(), tmp_path / "index.png")
    kind = got["forests"]["forest-headline"]["kinds"][0]
    assert _rgb({"gain": "#2166ac", "loss": "#b2182b", "unsure": "#6b6b6b"}[kind]) in colors  # the point is on the first screen
    job = next(j for j in load_sweep(sdir).jobs if j.method == "runningtab")
    page = report / "jobs" / f"{job.job_id}.html"
    shot = screenshot(f"{page.as_uri()}#deliverable", tmp_path / "job.png")
    assert len(shot) > 20, "the job page rendered blank"
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'p3'}", "--dump-dom",
                          page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    text = json.loads((job.dir / "extracted.json").read_text())["files"][0]["text"]
    assert '<h3>Final answer</h3>\n<pre class="answer">Written to output/report.md.</pre>' in dom
    assert re.search(r'output/report.md</a></h4>\s*<pre class="delivered">' + re.escape(text.split("\n")[0]), dom)


@pytest.mark.slow
def test_a_thousand_rows(tmp_path: Path) -> None:
    """1,000 forest rows (500 models × two methods against DCI, one task) and 1,000 tasks in one
    per-task grid; the pages of the records are taken as written (as the sweep writes them as
    each job finishes), so that the build is the index's (the first screen is photographed at one row)."""
    models = [f"model-{i:03d}" for i in range(500)]
    sdir = fabricate(tmp_path / "big", [Block("xbench", 1, ["dci", "runningtab", "todo"], models),
                                         Block("ybench", 1000, ["dci", "runningtab"], ["model-000"])], whole=False)
    (sdir / "ybench__ybe-0007__runningtab__model-000__s0" / "result.json").unlink()  # unfinished: 999 of 1,000 are results
    sweep = load_sweep(sdir)
    for sub, names in (("jobs", [f"{j.job_id}.html" for j in sweep.jobs]), ("compare", [compare_name(a, b) for a, b in pairs(sweep)])):
        (sdir / "report" / sub).mkdir(parents=True)
        for name in names:
            (sdir / "report" / sub / name).write_text("written with its record")
    report = write_report(sdir)
    got = measure(report / "index.html", tmp_path)
    _check_forest(got["forests"]["forest-headline"], 1001)  # xbench's 1,000 and ybench's one
    assert got["forests"]["forest-headline"]["counts"] == {"1 / 1": 1000, "999 / 1000": 1}  # each fits its column (_check_forest)
    assert got["forests"]["forest-other"]["rows"] == 1001
    assert got["heat"]["rows"] == 5 and got["heat"]["cut"] == 0  # xbench's three methods, ybench's two
    big = [g for g in got["tasks"] if g["benchmark"] == "ybench"]
    assert [(g["rows"], g["chips"], g["cut"], g["blank"]) for g in big] == [(1000, 2000, 0, 0)]
    assert sum(g["rows"] for g in got["tasks"] if g["benchmark"] == "xbench") == 500
