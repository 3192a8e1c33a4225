"""The viewer's style and script, inlined into every page so that each opens alone from disk.

Plain JavaScript, no library, no network. The script only shows and hides what the page's JSON
holds: the job page's tab panel follows the selected turn (`#t<k>` in the address), the index's
filters hide the jobs that do not match (`#method=dci&outcome=errored` in the address). Every text
goes into the page through `textContent`, never as markup. Scrolling the trajectory moves the
panel along with it.
"""

LINKS = "links.js"  # in report/: each job's side-by-side links, loaded by every job page
LINKS_GLOBAL = "REPORT_LINKS"  # the name links.js assigns them to (the script below reads it)

STYLE = """
.viewer{display:flex;gap:1em;align-items:flex-start}
.traj{flex:3;min-width:0} .panel{flex:2;position:sticky;top:0;max-height:100vh;overflow-y:auto;
 border:1px solid #ccc;background:#fcfcfc;padding:4px 10px;font-size:13px}
.panel ul{padding-left:1.2em;margin:.2em 0} .panel h4{margin:.6em 0 .2em}
.turn{border-top:1px solid #ddd;padding:2px 0} .turn.current{background:#f3f7ff}
.thead{font-size:13px} .thead a{font-weight:bold;margin-right:.6em}
.tev{display:inline-block;background:#e8f3e8;border-radius:3px;padding:0 4px;margin:0 3px;font-size:12px}
.cm{color:#8a5a00;font-size:12px} .new{background:#fff4c2} .open{color:#b00} .done{color:#070}
.set_aside{color:#666} .status{font-family:monospace;background:#eef;padding:3px;white-space:pre-wrap}
.filters select{margin-right:.8em} tr[hidden]{display:none}
.pair td{width:50%} .lost{color:#b00;font-weight:bold}
"""

SCRIPT = r"""
(function () {
  "use strict";
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function hashParams() {
    const out = {};
    const h = location.hash.slice(1);
    if (h.indexOf("=") < 0) return out;
    h.split("&").forEach(function (kv) {
      const i = kv.indexOf("=");
      if (i > 0) out[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
    });
    return out;
  }

  function tabPanel(panel, d, k) {
    panel.textContent = "";
    panel.dataset.turn = String(k);
    const nav = el("div", "nav");
    const prev = el("button", "", "◀"), next = el("button", "", "▶"), range = el("input");
    range.type = "range"; range.min = "0"; range.max = String(d.last); range.value = String(k);
    prev.onclick = function () { go(Math.max(0, k - 1)); };
    next.onclick = function () { go(Math.min(d.last, k + 1)); };
    range.oninput = function () { go(Number(range.value)); };
    nav.append(prev, range, next);
    panel.append(el("h3", "", "Tab at turn " + k + " (of " + d.last + ")"), nav);
    const st = d.status.filter(function (s) { return s[0] <= k; }).pop();
    panel.append(el("div", "status", st ? "t" + st[0] + " " + st[1] : "(no status line yet)"));
    if (!d.tab) { panel.append(el("p", "", "This job has no tab.")); return; }
    const reqs = d.requirements.filter(function (r) { return r.added <= k; });
    const ul = el("ul"); ul.id = "tp-reqs"; let open = 0;
    reqs.forEach(function (r) {
      const ch = r.changes.filter(function (c) { return c[0] <= k; }).pop();
      const status = ch ? ch[1] : "open"; if (status === "open") open++;
      const li = el("li", status + (r.added === k || (ch && ch[0] === k) ? " new" : ""));
      li.dataset.id = r.id; li.dataset.status = status;
      li.textContent = r.id + " [" + status + (ch && ch[2] ? ": " + ch[2] : "") + "] t" + r.added + " " + r.text;
      ul.append(li);
    });
    panel.append(el("h4", "", "(A) Requirements: " + reqs.length + " (" + open + " open)"), ul);
    const ents = d.entries.filter(function (e) { return e.turn <= k; });
    const files = new Set(ents.map(function (e) { return e.path; }));
    const chars = ents.reduce(function (a, e) { return a + e.chars; }, 0);
    panel.append(el("h4", "", "(B) Read log: " + ents.length + " entries, " + files.size + " files, " + chars.toLocaleString("en") + " characters"));
    const el2 = el("ul"); el2.id = "tp-entries";
    ents.forEach(function (e) {
      const li = el("li", "entry" + (e.turn === k ? " new" : "")); li.dataset.id = e.id;
      const det = el("details"), sum = el("summary", "", e.id + " t" + e.turn + " " + e.path + " [" + e.command + "] " + e.first);
      sum.style.fontWeight = "normal";
      det.append(sum, el("pre", "", e.excerpt)); li.append(det); el2.append(li);
    });
    panel.append(el2);
    const cands = d.candidates.filter(function (c) { return c.listed <= k && (c.gone === null || c.gone > k); });
    panel.append(el("h4", "", "(B) Candidates: " + cands.length));
    const cl = el("ul"); cl.id = "tp-cands";
    cands.slice(0, 50).forEach(function (c) {
      const li = el("li", c.listed === k ? "new" : "", c.path + " (t" + c.listed + ": " + c.command + ")");
      li.dataset.path = c.path; cl.append(li);
    });
    if (cands.length > 50) cl.append(el("li", "", "… " + (cands.length - 50) + " more"));
    panel.append(cl);
    const rev = d.reviews.filter(function (r) { return r.turn <= k; }).pop();
    if (rev) {
      panel.append(el("h4", "", "(C) Review at t" + rev.turn + " (" + rev.source + ")"));
      const rl = el("ul");
      rev.rows.forEach(function (row) {
        rl.append(el("li", "", row[0] + " ← " + (row[1].join(", ") || "no line") + (row[2].length ? " · unopened: " + row[2].join(", ") : "")));
      });
      panel.append(rl);
    }
    d.finish.filter(function (f) { return f.turn <= k; }).forEach(function (f) {
      panel.append(el("h4", "", "Finish check at t" + f.turn + " (" + f.case + ")"), el("pre", "", f.text));
    });
  }

  let go = function () {};
  function jobViewer() {
    const node = document.getElementById("viewer-data"), panel = document.getElementById("tabpanel");
    if (!node || !panel) return;
    const d = JSON.parse(node.textContent);
    let current = null;
    function show(k) {
      tabPanel(panel, d, k);
      if (current) current.classList.remove("current");
      current = document.getElementById("t" + k);
      if (current) current.classList.add("current");
    }
    go = function (k) {  // a reader's choice: the address remembers it
      show(k);
      if (location.hash !== "#t" + k) history.replaceState(null, "", "#t" + k);
    };
    function fromHash() {
      const m = /^#t(\d+)$/.exec(location.hash);
      show(m ? Math.min(Number(m[1]), d.last) : d.last);
    }
    document.querySelectorAll(".turn").forEach(function (s) {
      s.addEventListener("click", function (ev) {
        if (ev.target.closest("details, a, button")) return;
        go(Number(s.dataset.turn));
      });
    });
    window.addEventListener("hashchange", fromHash);
    followScrolling(show);
    fromHash();
  }

  // Once the reader scrolls (wheel, touch or keys; not the browser's jump to #t<k>), the panel
  // follows the topmost turn in view.
  function followScrolling(show) {
    const turns = Array.prototype.slice.call(document.querySelectorAll(".traj .turn"));
    let reading = false, queued = false, shown = null;
    ["wheel", "touchmove", "keydown"].forEach(function (ev) {
      window.addEventListener(ev, function () { reading = true; }, { passive: true });
    });
    window.addEventListener("scroll", function () {
      if (!reading || queued) return;
      queued = true;
      requestAnimationFrame(function () {
        queued = false;
        const top = turns.find(function (s) { return s.getBoundingClientRect().bottom > 40; });
        if (top && top.dataset.turn !== shown) { shown = top.dataset.turn; show(Number(shown)); }
      });
    }, { passive: true });
  }

  function jobIndex() {
    const table = document.getElementById("jobs-table"), bar = document.getElementById("job-filters");
    if (!table || !bar) return;
    const selects = bar.querySelectorAll("select");
    function apply() {
      let shown = 0;
      table.querySelectorAll("tbody tr").forEach(function (tr) {
        let ok = true;
        selects.forEach(function (s) {
          if (!s.value) return;
          const v = tr.dataset[s.name] || "", have = s.dataset.multi ? v.split(" ") : [v];
          if (have.indexOf(s.value) < 0) ok = false;
        });
        tr.hidden = !ok; if (ok) shown++;
      });
      document.getElementById("jobs-shown").textContent = shown + " of " + table.querySelectorAll("tbody tr").length + " jobs shown";
    }
    function fromHash() {
      const p = hashParams();
      if (!Object.keys(p).length) return;
      selects.forEach(function (s) { s.value = p[s.name] || ""; });
      apply();
    }
    selects.forEach(function (s) {
      s.addEventListener("change", function () {
        const parts = [];
        selects.forEach(function (x) { if (x.value) parts.push(x.name + "=" + encodeURIComponent(x.value)); });
        history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname);
        apply();
      });
    });
    window.addEventListener("hashchange", fromHash);
    fromHash();
    apply();
  }

  // A job page's side-by-side links, from links.js (loaded before this script; absent before the
  // first build, when the paragraph keeps its link to the index).
  function sideBySide() {
    const p = document.getElementById("side-by-side"), all = window.REPORT_LINKS;
    if (!p || !all || !Object.prototype.hasOwnProperty.call(all, p.dataset.job)) {
      if (p && all) p.hidden = true;  // links.js is there and names none for this job
      return;
    }
    p.textContent = "Side by side: ";
    all[p.dataset.job].forEach(function (l, i) {
      if (i) p.append(" · ");
      const a = el("a", "", l[0]);
      a.setAttribute("href", "../" + l[1]);
      p.append(a);
    });
  }

  sideBySide();
  jobViewer();
  jobIndex();
})();
"""


def script_tag() -> str:
    return f"<script>{SCRIPT}</script>"
