"""Issue 11: the read log holds exactly what the agent saw, from the file that showed it.

Each test is a scripted episode through the real tools; `read_log` asserts the invariant on every
entry (received at that turn, lines from the credited file as it was at the start).
"""

from __future__ import annotations

from pathlib import Path

from tab.config import TabConfig
from tests.tab.test_support import Session, own, read_log, write_files

BIG = "".join(f"big line {i} of the archive ledger\n" for i in range(2000))  # ~70 KB, past the 50 KB rule
FILES = {
    "a.txt": "alpha note\n",
    "b.txt": "bravo note\n",
    "big.txt": BIG,
    "finance/budget_2026.txt": "Budget 2026\nThe per-employee spending cap is 1,850 EUR.\nTravel is separate.\n",
    "notes/holidays.md": "# Holidays\nStaff may list up to three preferred dates.\nNo cap on requests.\n",
    "long.txt": "".join(f"row {i}\n" for i in range(30)),
    "data/orders.csv": "supplier,amount\nAcme,1\nBolt,1\n",
    "lists/files.txt": "a.txt\nb.txt\n",
}


def _session(tmp_path: Path, **kw: object) -> Session:
    write_files(tmp_path, FILES)
    return Session(tmp_path, **kw)  # type: ignore[arg-type]


def _by_path(log: list[dict]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for e in log:
        out.setdefault(e["path"], []).append(e["excerpt"])
    return out


def test_cat_two_files_cut_to_the_tail_credits_no_leftover_to_the_first(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.one("bash", command="cat a.txt big.txt")
    log = _by_path(read_log(s))
    assert "a.txt" not in log  # a.txt's line was cut away; big.txt's tail is not a.txt's content
    assert all("big line" in x for x in log.get("big.txt", []))


def test_loop_over_files_does_not_give_each_file_the_tail(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.one("bash", command='for f in *.txt; do cat "$f"; done')
    log = _by_path(read_log(s))
    assert all("big line" not in x for p in ("a.txt", "b.txt") for x in log.get(p, []))


def test_grep_over_a_pipe_credits_the_file_that_holds_the_line(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.one("bash", command="cat finance/budget_2026.txt notes/holidays.md | grep -i 'spending cap'")
    log = _by_path(read_log(s))
    assert list(log) == ["finance/budget_2026.txt"]
    assert s.tab.record()["unattributed"] == []


def test_unprovable_output_is_kept_unattributed(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.one("bash", command="cat a.txt b.txt | tr a-z A-Z")
    assert read_log(s) == []
    (item,) = s.tab.record()["unattributed"]
    assert "ALPHA NOTE" in item["text"] and item["turn"] == 1


def test_agent_written_files_are_not_evidence(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.one("bash", command="echo '9,999 EUR (my guess)' > scratch.md && cat scratch.md")
    s.one("bash", command="sleep 0.01; echo 'alpha note' > a.txt")  # rewritten, same words
    s.one("read", path="a.txt")
    s.one("bash", command="cat b.txt")
    assert [e["path"] for e in read_log(s)] == ["b.txt"]


def test_entry_is_what_the_model_received_after_the_context_cap(tmp_path: Path) -> None:
    write_files(tmp_path, {"huge.txt": "".join(f"clause {i} of the contract text here\n" for i in range(1500))})
    s = Session(tmp_path, level=3)
    s.one("read", path="huge.txt")
    (entry,) = read_log(s)
    assert entry["chars"] <= 20_000
    shown = own(s.one("tab_show", entry_id="L1"))
    assert shown.endswith(entry["excerpt"])


def test_computed_values_are_not_content(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.one("bash", command="python3 -c \"print(sum(1 for _ in open('long.txt')))\"")
    s.one("bash", command="awk -F, 'NR>1{s+=$2} END{print s}' data/orders.csv")
    assert read_log(s) == []


def test_find_xargs_exec_and_while_read_are_captured(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.one("bash", command="find finance -name '*.txt' | xargs cat")
    s.one("bash", command="find notes -name '*.md' -exec cat {} +")
    s.one("bash", command='while read f; do cat "$f"; done < lists/files.txt')
    log = _by_path(read_log(s))
    assert set(log) == {"finance/budget_2026.txt", "notes/holidays.md", "a.txt", "b.txt"}


def test_no_review_refusal_does_not_name_tab_review(tmp_path: Path) -> None:
    s = _session(tmp_path, config=TabConfig(review=False))
    s.one("tab_add", requirements=["Spending cap per employee"])
    refusal = own(s.one("tab_resolve", id="r1", status="done"))
    assert "tab_review" not in refusal


def test_one_requirement_is_counted_in_the_singular(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.one("tab_add", requirements=["Spending cap per employee"])
    s.one("bash", command="cat finance/budget_2026.txt")
    reply = own(s.one("tab_resolve", id="r1", status="done", entries=["L1"]))
    assert "All 1 requirement are" not in reply and "resolved" in reply


def test_todo_prompt_says_only_what_the_papers_plan_first_prompt_says() -> None:
    from runners.agent.methods import text

    todo = text("todo", {})
    assert "TODO list of every fact, figure and deliverable element the task asks for" in todo
    assert "up to date" not in todo  # the paper asks for the list at the start, not for upkeep


def test_the_runner_gives_the_tab_its_context_level_cap(tmp_path: Path) -> None:
    from envs.config import EnvConfig
    from envs.environment import WorkspaceEnv
    from envs.protocol import ToolCall
    from runners.agent.methods import build_plugins
    from runners.config.runner import MethodConfig

    write_files(tmp_path, {"huge.txt": "".join(f"clause {i} of the contract text here\n" for i in range(1500))})
    tab, _shown = build_plugins(MethodConfig(name="tab", tab=TabConfig()), tmp_path, "output", 2)
    env = WorkspaceEnv(tmp_path, EnvConfig(sandbox="none"), [tab])
    env.execute(ToolCall("c1", "read", '{"path": "huge.txt"}'), 1)
    (entry,) = tab.record()["read_log"]
    assert 0 < entry["chars"] <= 20_000


def test_a_fifo_named_like_a_script_does_not_hang_the_capture(tmp_path: Path) -> None:
    import os
    import threading

    from envs.protocol import Observation

    s = _session(tmp_path)
    os.mkfifo(tmp_path / "summarize.py")
    done = threading.Event()

    def observe() -> None:
        s.tab.observe(Observation("bash", {"command": "python3 summarize.py"}, "alpha note\n", False, 1))
        done.set()

    threading.Thread(target=observe, daemon=True).start()
    assert done.wait(10), "the tab blocked opening a FIFO"


def test_a_symlink_into_or_out_of_the_workspace_is_not_evidence(tmp_path: Path) -> None:
    s = _session(tmp_path)
    (tmp_path / "outside.txt").symlink_to("/etc/hostname")
    (tmp_path / "alias.txt").symlink_to(tmp_path / "a.txt")
    s.one("bash", command="cat outside.txt alias.txt")
    assert read_log(s) == []


def test_a_rewrite_that_keeps_size_mtime_and_inode_is_still_the_agents(tmp_path: Path) -> None:
    write_files(tmp_path, {"cap.txt": "Cap: 1,850 EUR\n"})
    s = Session(tmp_path)
    s.one("bash", command="touch -r cap.txt /tmp/.ref$$ && printf 'Cap: 9,999 EUR\\n' > cap.txt "
                          "&& touch -r /tmp/.ref$$ cap.txt && rm /tmp/.ref$$ && cat cap.txt")
    assert read_log(s) == []


def test_windows_line_endings_do_not_hide_a_files_own_lines(tmp_path: Path) -> None:
    """Bash output reaches the model with CRLF normalized; the credited file's text is compared the same way."""
    (tmp_path / "export.csv").write_bytes(b"region,total\r\nNorth,120\r\nSouth,80\r\n")
    s = _session(tmp_path)
    s.one("bash", command="cat a.txt export.csv")
    log = _by_path(read_log(s))
    assert log.get("export.csv") == ["region,total\nNorth,120\nSouth,80"] and s.tab.record()["unattributed"] == []
