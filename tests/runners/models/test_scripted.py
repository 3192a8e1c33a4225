"""The scripted model replays a JSONL file turn by turn."""

from __future__ import annotations

import json

import pytest

from runners.models import ScriptedModelConfig, build_model
from runners.models.scripted import ScriptError


def write(tmp_path, lines: list[str]) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def scripted(path: str):
    return build_model(ScriptedModelConfig(kind="scripted", name="scripted", script=path))


def test_replays_turns_then_stops_calling_tools(tmp_path):
    path = write(tmp_path, [
        json.dumps({"content": "look", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}},
                                                      {"name": "read", "arguments": {"path": "a.md"}}]}),
        "",
        json.dumps({"tool_calls": [{"name": "bash", "arguments": '{"command": "cat a.md"'}],
                    "usage": {"input_tokens": 12, "output_tokens": 3, "cost": 0.5}}),
        json.dumps({"content": "<FINAL_ANSWER>42</FINAL_ANSWER>"}),
    ])
    model = scripted(path)
    first = model.complete([], [])
    assert first.content == "look"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in first.tool_calls] == [
        ("call_1_0", "bash", {"command": "ls"}), ("call_1_1", "read", {"path": "a.md"})]
    second = model.complete([], [])
    assert second.content is None and second.tool_calls[0].arguments == '{"command": "cat a.md"'
    assert (second.usage.input_tokens, second.usage.output_tokens, second.usage.cost) == (12, 3, 0.5)
    assert model.complete([], []).content == "<FINAL_ANSWER>42</FINAL_ANSWER>"
    for _ in range(2):  # exhausted: no tool call, so the loop stops
        done = model.complete([], [])
        assert done.tool_calls == [] and done.content == ""


def test_ids_are_deterministic_across_instances(tmp_path):
    path = write(tmp_path, [json.dumps({"tool_calls": [{"name": "bash", "arguments": {}}]})])
    assert scripted(path).complete([], []).tool_calls == scripted(path).complete([], []).tool_calls


@pytest.mark.parametrize("line,message", [
    ("{not json", "Expecting property name"),
    ("[1, 2]", "must be a JSON object"),
    ('{"content": "x", "tool_call": []}', "unknown key"),
    ('{"tool_calls": [{"arguments": {}}]}', "needs a 'name'"),
    ('{"tool_calls": {"name": "bash"}}', "must be a list"),
    ('{"content": 5}', "'content' must be a string"),
    ('{"content": "x", "usage": {"input_tokens": -5}}', "give numbers >= 0"),  # its record would be unreadable
    ('{"content": "x", "usage": {"cost": NaN}}', "give numbers >= 0"),
])
def test_bad_line_names_file_and_line(tmp_path, line, message):
    path = write(tmp_path, [json.dumps({"content": "fine"}), line])
    with pytest.raises(ScriptError, match=message) as e:
        scripted(path)
    assert f"{path}:2:" in str(e.value)


def test_missing_script(tmp_path):
    with pytest.raises(ScriptError, match="script file not found"):
        scripted(str(tmp_path / "nope.jsonl"))
    with pytest.raises(ScriptError, match="model.script=PATH"):
        build_model(ScriptedModelConfig(kind="scripted"))


def test_script_directory_and_bad_encoding(tmp_path):
    with pytest.raises(ScriptError, match="is a directory"):
        scripted(str(tmp_path))
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"content": "caf\xe9"}\n')
    with pytest.raises(ScriptError, match="not valid UTF-8"):
        scripted(str(bad))


# --------------------------------------------------------------------------- one script per task
def _tasks_and_scripts(tmp_path):
    from tests.conftest import write_native, write_script

    tasks = [{"id": t, "prompt": f"Write {t}.", "workspace": "w", "output": f"output/{t}.md",
              "rubrics": [{"text": f"{t} is written", "check": {"type": "contains", "values": [t]}}]} for t in ("a1", "b2")]
    bench = write_native(tmp_path / "bench", tasks, {"w/x.txt": "x\n"})
    scripts = tmp_path / "solutions"
    scripts.mkdir()
    for t in ("a1", "b2"):
        write_script(scripts / f"{t}.jsonl", [
            {"tool_calls": [{"name": "bash", "arguments": {"command": f"mkdir -p output && echo {t} > output/{t}.md"}}]},
            {"content": "done"}])
    return bench, scripts


def test_a_script_dir_drives_each_task_with_its_own_script(tmp_path):
    """`model.script_dir` holds `<task_id>.jsonl`: a sweep over a built-in benchmark's reference
    `solutions/` runs each task's own solution."""
    from runners.job.identity import job_id
    from runners.job.run import run_and_score
    from tests.conftest import compose_root

    bench, scripts = _tasks_and_scripts(tmp_path)
    cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", "model=scripted", f"model.script_dir={scripts}",
                        "judge=rule", "tracker=none"])
    for t in ("a1", "b2"):
        jid = job_id(cfg, t)
        done = run_and_score(cfg, t, tmp_path / "out" / jid, jid, None)
        assert done.scores["metrics"]["pass_rate"] == 1.0, t
    # the scripts' content is in the id (wherever the folder is), so a changed solution is a new job
    before = job_id(cfg, "a1")
    (scripts / "b2.jsonl").write_text('{"content": "nothing"}\n')
    assert job_id(cfg, "a1") != before


def test_a_script_dir_without_a_tasks_script_is_refused_before_any_job(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    bench, scripts = _tasks_and_scripts(tmp_path)
    (scripts / "b2.jsonl").unlink()
    cmd = [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "model=scripted",
           f"model.script_dir={scripts}", f"out={tmp_path / 'out'}", "sweep=s", "tracker=none"]
    r = subprocess.run(cmd, cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "no script for 1 of 2 task(s) (b2)" in r.stderr.splitlines()[-1], r.stderr[-2000:]
    assert not list((tmp_path / "out").glob("s/native__*")), "no job ran"
    from runners.preflight.config_checks import ConfigError, check_config
    from tests.conftest import compose_root

    with pytest.raises(ConfigError, match="one of model.script=PATH"):
        check_config(compose_root(["model=scripted", "model.script=x.jsonl", f"model.script_dir={scripts}"]))
