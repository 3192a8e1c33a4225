"""Every name of the project that the README and docs/ use exists: a move that forgets a document fails
here, not in a reader's hands. Four kinds of name are read: slash paths (`runners/job/`), dotted names of
our modules and what they define (`eval.score.score_job`, checked statically with ast: nothing of the
product is imported), bare file names (`finish.py` in a table row or in backticks, found in the folder
the row or paragraph names), `python -m X` commands (X a runnable module of the repo, or a third-party
module on the allow-list) and `runningtab VERB` commands (VERB one of runners/cli.py's, read statically). Names that are examples of the reader's own files are listed below.

The functions take a repository root, so `bench/bench_layout.py` counts the stale names of any checkout."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PRODUCT = ("runners", "eval", "tab", "envs", "slurm", "bench", "conf")  # where a bare file name is looked for
PATH = re.compile(r"(?<![\w./-])((?:runners|eval|tab|envs|slurm|bench|tests|conf)/[\w./-]*[\w/])")
DOTTED = re.compile(r"(?<![\w./$-])((?:runners|eval|tab|envs|slurm|bench)(?:\.\w+)+)(?![\w/*<-])")
BARE = re.compile(r"(?<![\w./-])(\w+\.(?:py|yaml|sh|sbatch))(?![\w/-])")
FROM_IMPORT = re.compile(r"^\s*from ((?:runners|eval|tab|envs|slurm|bench)(?:\.\w+)*) import \(?([\w ,]+)", re.M)
COLON_NAME = re.compile(r"(?<![\w./-])((?:runners|eval|tab|envs|slurm|bench)(?:\.\w+)*):(\w+)")
# `runningtab VERB` where a command starts: a code line, after a backtick, a prompt or `&&`.
VERB_RUN = re.compile(r"(?:^|`|\$ |&& )[ \t]*runningtab[ \t]+([a-z][\w-]*)", re.M)
# Where a command writes (`--out PATH`, `out=PATH`): never a folder the repository tracks.
OUT_ARG = re.compile(r"(?:--out[ =]|(?<![\w.-])out=)([\w.][^\s`'\"|;)]*)")
TRACKED = ("runners", "eval", "tab", "envs", "slurm", "bench", "conf", "docs", "tests")
MODULE_RUN = re.compile(r"python3?\s+(?:-[XW]\s*\S+\s+|-[A-Za-z]+\s+)*-m\s+([A-Za-z_][\w.]*\w)")
# A dotted name that ends in a file's extension is a file (`tab.json`, a record), not a module.
FILE_SUFFIXES = ("json", "jsonl", "yaml", "yml", "md", "html", "csv", "txt", "log", "lock", "py", "js", "sh", "db")
# Not names of this repository: a reader's own files in the examples, a Harbor task folder's layout,
# an example data folder, name prefixes of a family of files, and the benchmarks' own files.
EXAMPLES = ("eval/benchmarks/mine.py", "eval/judges/mine/judge.py", "runners/models/mine.py", "conf/benchmark/mine.yaml",
            "conf/judge/mine.yaml", "conf/model/mine.yaml", "conf/benchmark/myplug.bench.yaml",
            "conf/method/todo_refine_tab.yaml", "conf/model/qwen3_32b.yaml", "conf/pricing/example.yaml",
            "tests/test.sh", "tests/spec/workspace",
            "eval/benchmarks/selections/NAME.csv")
# Bare file names that are not ours: a TheAgentCompany task's and a Harbor task's files, the benchmarks'
# own code (OfficeQA's `reward.py`, Workspace-Bench's judge), a reader's own files in the examples, the
# modules a hostile deliverable plants (docs/env.md), and files a sweep writes (`sweep.yaml`, `array.sbatch`).
NOT_OURS = ("evaluator.py", "test.sh", "solve.sh", "mine.py", "script.py", "__init__.py", "__main__.py",
            "reward.py", "agent_as_a_judge.py", "csv.py", "datetime.py", "openpyxl.py", "sweep.yaml", "array.sbatch")
# Modules `python -m` runs that are not ours.
THIRD_PARTY = ("pytest", "pip", "venv", "ruff", "wandb", "ray", "vllm", "llama_cpp.server", "moto.server", "json.tool",
               "http.server", "markitdown")
# The folders a document is about: a bare module name in a block that names no folder is looked for there
# (docs/tab.md's table of files is the tab's).
HOMES = {"docs/tab.md": ("tab",), "docs/mcp.md": ("tab",), "docs/env.md": ("envs", "eval"), "docs/report.md": ("eval",),
         "docs/benchmarks.md": ("eval",), "docs/harbor.md": ("eval",), "docs/models.md": ("runners",),
         "docs/sweeps.md": ("runners",), "docs/measurements.md": ("runners", "bench", "envs", "eval"), "slurm/README.md": ("slurm",)}


def documents(repo: Path = REPO) -> list[Path]:
    return [repo / "README.md", repo / "slurm" / "README.md", *sorted((repo / "docs").glob("*.md"))]


def named_paths(text: str) -> list[str]:
    out = []
    for m in PATH.finditer(text):
        path = m.group(1).rstrip("/.")
        if "<" in text[m.end() : m.end() + 1] or path.endswith(("_", "/slurm", "/runningtab")) or "*" in path:
            continue  # a prefix: `tests/test_env_*`, `conf/method/runningtab_no_<switch>.yaml`
        out.append(path)
    return out


def named_modules(text: str) -> list[str]:
    """Dotted names of our packages: `eval.score.score_job`, `runners.sweep` (a sentence's full stop and
    the file names of records, `tab.json`, left out), then what the examples take from them:
    `from runners.core import Task` is `runners.core.Task`, `pkg.module:Name` is `pkg.module.Name`."""
    out = [m.group(1) for m in DOTTED.finditer(text) if m.group(1).rpartition(".")[2] not in FILE_SUFFIXES]
    for m in FROM_IMPORT.finditer(text):
        out += [f"{m.group(1)}.{name.split()[0]}" for name in m.group(2).split(",") if name.strip()]
    out += [f"{m.group(1)}.{m.group(2)}" for m in COLON_NAME.finditer(text)]
    return out


def is_example(dotted: str) -> bool:
    """A name in a reader's own module of the examples (`eval.judges.mine:MyJudge`)."""
    parts = dotted.split(".")
    return any("/".join(parts[:cut]) + ".py" in EXAMPLES for cut in range(1, len(parts) + 1))


def module_commands(text: str) -> list[str]:
    return [m.group(1) for m in MODULE_RUN.finditer(text)]


def verb_commands(text: str) -> list[str]:
    return [m.group(1) for m in VERB_RUN.finditer(text)]


@cache
def verbs(repo: Path) -> frozenset[str]:
    """The verbs of `repo`'s `runningtab` (the keys of `VERBS` in runners/cli.py), read with ast."""
    cli = repo / "runners" / "cli.py"
    if not cli.is_file():
        return frozenset()
    for node in _tree(cli).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "VERBS" for t in node.targets):
            return frozenset(ast.literal_eval(node.value))
    return frozenset()


def _module_file(repo: Path, dotted: str) -> Path | None:
    base = repo.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return base if base.is_dir() and dotted.count(".") >= 1 else None  # a namespace folder (`eval.import`)


def _defined(body: list[ast.stmt]) -> set[str]:
    """Names a module or class body defines (functions, classes, assignments, imports), `if`/`try` included;
    with a module `__getattr__` (a lazy surface, as `runners.core` has), the keys of its name tables too."""
    names: set[str] = set()
    if any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in body):
        names |= {k.value for n in body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Dict)
                  for k in n.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If | ast.Try):
            names |= _defined(node.body + node.orelse + getattr(node, "finalbody", []))
            for handler in getattr(node, "handlers", []):
                names |= _defined(handler.body)
    return names


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def resolves(repo: Path, dotted: str) -> bool:
    """The longest prefix of `dotted` is a module file of `repo`; what follows is defined in it (a name of
    the module, then at most one member of a class it defines)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        found = _module_file(repo, ".".join(parts[:cut]))
        if found is not None:
            break
    else:
        return False
    rest = parts[cut:]
    if not rest:
        return True
    if found.is_dir() or len(rest) > 2:
        return False
    tree = _tree(found)
    if rest[0] not in _defined(tree.body):
        return (found.parent / rest[0]).is_dir() and found.name == "__init__.py" and len(rest) == 1
    if len(rest) == 1:
        return True
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == rest[0]]
    return any(rest[1] in _defined(c.body) for c in classes)


def runnable(repo: Path, module: str) -> bool:
    """`python -m module` runs something of ours: a package with `__main__.py`, or a module file with a
    `__main__` guard."""
    if module in THIRD_PARTY:
        return True
    base = repo.joinpath(*module.split("."))
    if (base / "__main__.py").is_file():
        return True
    if not base.with_suffix(".py").is_file():
        return False
    return any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in _tree(base.with_suffix(".py")).body)


def _blocks(text: str) -> list[str]:
    """Paragraphs, with each table row a block of its own (a row names its own folder)."""
    out, block = [], []
    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            out += ["\n".join(block), line]
            block = []
        elif line.strip():
            block.append(line)
        else:
            out.append("\n".join(block))
            block = []
    return [b for b in [*out, "\n".join(block)] if b]


def named_files(text: str) -> list[tuple[str, list[str]]]:
    """Bare file names (`finish.py`) in backticks or in table rows, each with the folders its block names."""
    out = []
    for block in _blocks(text):
        row = block.lstrip().startswith("|")
        spans = [block] if row else re.findall(r"`([^`\n]+)`", block)
        folders = [p for p in named_paths(block) if "." not in p.rpartition("/")[2]]
        folders += [m.replace(".", "/") for m in named_modules(block)]
        for span in spans:
            out += [(name, folders) for name in BARE.findall(span) if name not in NOT_OURS]
    return out


@cache
def _product_files(repo: Path) -> dict[str, list[str]]:
    files: dict[str, list[str]] = {}
    for top in PRODUCT:
        for p in (repo / top).rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts:
                files.setdefault(p.name, []).append(p.relative_to(repo).as_posix())
    return files


def file_found(repo: Path, name: str, folders: list[str]) -> bool:
    """`name` is a file of the product folders, and in one the block names if it names any that hold it."""
    where = _product_files(repo).get(name, [])
    near = [f for f in folders if (repo / f).is_dir()]
    if not where or not near:
        return bool(where)
    return any(w.startswith(f.rstrip("/") + "/") for w in where for f in near)


CALL = re.compile(r"`([A-Za-z_]\w*)\(\)`")
SLASH_NAME = re.compile(r"`((?:runners|eval|tab|envs|slurm|bench)/[\w/]+\.py):(\w+)`")
FOREIGN_CALLS = ("require", "close", "select", "flush", "record", "logged")  # node's `require()`; methods of the examples' objects


def _defines(repo: Path, module: str, name: str) -> bool:
    """Whether the module file defines `name` at its top level or in one of its classes."""
    body = _tree(repo / module).body
    return name in _defined(body) or any(name in _defined(c.body) for c in body if isinstance(c, ast.ClassDef))


def misplaced_functions(repo: Path, text: str) -> list[tuple[str, str]]:
    """(function, module) where the document says the function is in a module that does not define it:
    `path.py:name`, or `name()` in a paragraph or table row that names that one module of the product."""
    out = [(m.group(2), m.group(1)) for m in SLASH_NAME.finditer(text)
           if (repo / m.group(1)).is_file() and not _defines(repo, m.group(1), m.group(2))]
    for block in _blocks(text):
        mods = [p for p in named_paths(block) if p.endswith(".py") and not p.startswith("tests/") and (repo / p).is_file()]
        mods += [f.relative_to(repo).as_posix() for m in named_modules(block)
                 if (f := _module_file(repo, m)) is not None and f.suffix == ".py"]
        if len(set(mods)) == 1:
            out += [(name, mods[0]) for name in CALL.findall(block) if name not in FOREIGN_CALLS and not _defines(repo, mods[0], name)]
    return out


def stale_references(repo: Path = REPO) -> list[str]:
    """Every name the documents use that `repo` does not have, as `document: kind name`."""
    stale = []
    for doc in documents(repo):
        if not doc.is_file():
            continue
        text, where = doc.read_text(encoding="utf-8"), doc.relative_to(repo)
        stale += [f"{where}: path {p}" for p in named_paths(text) if p not in EXAMPLES and not (repo / p).exists()]
        stale += [f"{where}: module {m}" for m in named_modules(text)
                  if not is_example(m) and not resolves(repo, m)]
        stale += [f"{where}: command python -m {m}" for m in module_commands(text) if not runnable(repo, m)]
        stale += [f"{where}: command runningtab {v}" for v in verb_commands(text) if v not in verbs(repo)]
        home = list(HOMES.get(where.as_posix(), ()))
        files = [(n, f or (home if n.endswith(".py") else [])) for n, f in named_files(text)]
        stale += [f"{where}: file {n} (near {', '.join(f) or 'no folder'})" for n, f in files if not file_found(repo, n, f)]
        stale += [f"{where}: function {n} (not in {m})" for n, m in misplaced_functions(repo, text)]
    return sorted(set(stale))


def outputs_into_the_checkout(text: str) -> list[str]:
    """The relative output folders of the commands in `text` that lie in a tracked top-level folder
    (generated data belongs under `outputs/`, `data/` or `.cache/`, which .gitignore covers)."""
    return [p for p in (m.group(1).rstrip(".,") for m in OUT_ARG.finditer(text)) if p.split("/")[0] in TRACKED]


def test_no_command_of_the_documents_writes_into_a_tracked_folder() -> None:
    found = [f"{d.relative_to(REPO)}: {p}" for d in documents() for p in outputs_into_the_checkout(d.read_text(encoding="utf-8"))]
    assert found == []


def test_an_output_into_a_tracked_folder_is_caught() -> None:
    text = ("python -m eval.benchmarks.builtin --out bench  # 60 MB\n`eval.export harbor --out=docs/x`, out=outputs/a, "
            "--out DATA, --out /tmp/x, timeout=900, --output-format json, out=tests/tmp")
    assert outputs_into_the_checkout(text) == ["bench", "docs/x", "tests/tmp"]


def test_the_documents_name_only_things_that_exist() -> None:
    assert stale_references() == []


def test_a_moved_module_is_caught() -> None:
    assert named_paths("see `runners/sweep.py` and `tests/test_env_*.py`") == ["runners/sweep.py"]
    assert not (REPO / "runners/sweep.py").exists()


def test_a_moved_dotted_name_is_caught() -> None:
    text = "`eval.judges.scoring.no_such_function`, `runners.sweep.driver`, `tab.config.TabConfig`, `tab.json`, runners.job."
    assert named_modules(text) == ["eval.judges.scoring.no_such_function", "runners.sweep.driver", "tab.config.TabConfig",
                                   "runners.job"]
    assert [resolves(REPO, m) for m in named_modules(text)] == [False, True, True, True]
    assert not resolves(REPO, "runners.no_such_wing.driver")
    assert not resolves(REPO, "tab.config.TabConfig.no_such_field")
    example = "```python\nfrom runners.core import Task, no_such_name\n```\nname it `runners.sweep.driver:no_such_main`"
    assert named_modules(example)[-3:] == ["runners.core.Task", "runners.core.no_such_name", "runners.sweep.driver.no_such_main"]
    assert [resolves(REPO, m) for m in named_modules(example)[-3:]] == [True, False, False]
    assert is_example("eval.judges.mine.judge.MyJudge") and not is_example("eval.judges.rule.judge.RuleJudge")


def test_a_moved_bare_file_name_is_caught() -> None:
    text = ("| `eval/probe/` | the probe: items.py and `no_such_module.py` |\n\nIn `runners/job/`, `items.py` runs.\n\n"
            "The tab's `review.py`.\n")
    found = named_files(text)
    assert found == [("items.py", ["eval/probe"]), ("no_such_module.py", ["eval/probe"]), ("items.py", ["runners/job"]),
                     ("review.py", [])]
    assert [file_found(REPO, n, f) for n, f in found] == [True, False, False, True]


def test_a_module_that_cannot_run_is_caught() -> None:
    text = "python -m runners.sweep x=1; .venv/bin/python -X dev -m eval.no_such_entry; python -m pytest -q"
    assert module_commands(text) == ["runners.sweep", "eval.no_such_entry", "pytest"]
    assert [runnable(REPO, m) for m in module_commands(text)] == [True, False, True]
    assert not runnable(REPO, "runners.core")  # a package without __main__.py
    assert not runnable(REPO, "eval.report.pages.site")  # names `__main__` in a comment, runs nothing


def test_a_verb_runningtab_does_not_have_is_caught(tmp_path: Path) -> None:
    text = ("```bash\nrunningtab sweep experiment=demo\n  runningtab swep x=1\n```\nThen `runningtab report DIR`; "
            "the `runningtab` method, method=runningtab and runningtab or its ablations are no commands.")
    assert verb_commands(text) == ["sweep", "swep", "report"]
    assert {"sweep", "report"} <= verbs(REPO) and "swep" not in verbs(REPO)
    for path in ("README.md", "slurm/README.md", "runners/cli.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    (tmp_path / "runners" / "cli.py").write_text('VERBS = {"sweep": ("runners.sweep", "a sweep")}\n')
    (tmp_path / "README.md").write_text(text)
    assert stale_references(tmp_path) == ["README.md: command runningtab report", "README.md: command runningtab swep"]


def test_a_module_moved_out_of_the_documents_folder_is_caught(tmp_path: Path) -> None:
    for path in ("tab/status.py", "runners/sweep/driver.py", "README.md", "slurm/README.md"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "tab.md").write_text("| file | what |\n|---|---|\n| `status.py` | the status line |\n"
                                              "| `driver.py` | the tab's driver |\n")
    assert stale_references(tmp_path) == ["docs/tab.md: file driver.py (near tab)"]


# --- config keys: every `group.key` the documents name is a setting of the schema ----------------------

# Names of the form `group.key` that are not settings: objects of the examples (`env.tools()` is an
# environment's), a reader's own key, the misspelled key docs/sweeps.md shows refused, Harbor's agent
# fields.
NOT_KEYS = ("env.limits_hit", "env.evaluator_view", "env.sandbox_kind", "benchmark.my_key", "agent.max_turn",
            "agent.tool_definitions", "agent.user")
KEY_SUFFIXES = (*FILE_SUFFIXES, "pdf", "docx", "xlsx")


def schema_keys() -> tuple[frozenset[str], frozenset[str]]:
    """Every dotted setting of the root config (every model kind's, benchmark's and storage backend's
    fields included), and those that hold a free mapping (`cluster.extra`, `method.texts`), under
    which any key goes. Read from the schema itself: the one place the test imports the product."""
    import dataclasses
    import typing

    from eval.benchmarks import BENCHMARKS, config_class
    from runners.config.schema import RootConfig
    from runners.core.storage import STORAGES, storage_config_class
    from runners.models.registry import config_classes

    extra = {"model": list(config_classes()), "benchmark": [config_class(n) for n in BENCHMARKS.names()],
             "storage": [c for n in STORAGES.names() if (c := storage_config_class(n)) is not None]}
    keys: set[str] = set()
    free: set[str] = set()

    def walk(cls: type, path: str) -> None:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            here, hint = f"{path}{f.name}", hints.get(f.name)
            keys.add(here)
            kinds = [hint, *typing.get_args(hint)]
            if any(k is dict or typing.get_origin(k) is dict for k in kinds):
                free.add(here)
            for sub in dict.fromkeys([k for k in kinds if isinstance(k, type) and dataclasses.is_dataclass(k)] + extra.get(here, [])):
                walk(sub, f"{here}.")

    walk(RootConfig, "")
    return frozenset(keys), frozenset(free)


def named_keys(text: str, groups: list[str]) -> list[str]:
    """`group.key` names in backticks and code blocks (`budget.sweep_usd`, `model.script_dir=DIR`), but
    a call or attribute of an object (`env.tools()`) and a file (`report.md`)."""
    key = re.compile(r"(?<![\w./$<{+~-])((?:" + "|".join(groups) + r")\.[a-z_]\w*(?:\.[a-z_]\w*)*)(?![\w(])")
    spans = re.findall(r"`([^`\n]+)`", text) + re.findall(r"```[^\n]*\n(.*?)```", text, re.S)
    return [k for span in spans for m in key.finditer(span)
            if (k := m.group(1)).rpartition(".")[2] not in KEY_SUFFIXES and k not in NOT_KEYS]


def stale_keys(repo: Path = REPO) -> list[str]:
    keys, free = schema_keys()
    groups = sorted({k.partition(".")[0] for k in keys if "." in k})
    stale = []
    for doc in documents(repo):
        if doc.is_file():
            stale += [f"{doc.relative_to(repo)}: key {k}" for k in named_keys(doc.read_text(encoding="utf-8"), groups)
                      if k not in keys and not any(k.startswith(f"{f}.") for f in free)]
    return sorted(set(stale))


def test_a_function_named_beside_another_module_is_caught(tmp_path: Path) -> None:
    """Issue 49: a backticked function is checked against the module its paragraph names."""
    (tmp_path / "runners" / "sweep").mkdir(parents=True)
    (tmp_path / "runners" / "sweep" / "money.py").write_text("def money_line():\n    pass\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("The closing line is `money_line()` of `runners/sweep/money.py`.\n\n"
                                           "What the records paid: `_paid()` (`runners/sweep/money.py`); `runners/sweep/money.py:money_line`.\n")
    assert [s for s in stale_references(tmp_path) if "function" in s] == ["docs/x.md: function _paid (not in runners/sweep/money.py)"]


def test_every_config_key_the_documents_name_is_a_setting() -> None:
    assert stale_keys() == []


def test_a_renamed_setting_is_caught(tmp_path: Path) -> None:
    """Issue 49: renaming `budget.sweep_usd` left its mentions and this test green."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("Give `budget.sweep_usd=5` or `budget.sweep_dollars=5`; `env.tools()` is not a key.\n"
                                           "```\nrunningtab sweep model.script_dir=DIR cluster.extra.anything=1 method.textz.x=1\n```\n")
    assert stale_keys(tmp_path) == ["docs/x.md: key budget.sweep_dollars", "docs/x.md: key method.textz.x"]


def test_the_readme_and_the_harness_docs_agree_that_the_harness_is_a_table_1_axis() -> None:
    """Issue 50 item 9: README said the harness as an axis "with its own Table 1 rows is not built
    yet" while docs/harnesses.md (and eval/report/analyses/table1.py) give Table 1 a harness column."""
    readme, harnesses = (REPO / "README.md").read_text(), (REPO / "docs" / "harnesses.md").read_text()
    table1 = (REPO / "eval" / "report" / "analyses" / "table1.py").read_text()
    assert "harness column is shown only when a job ran another harness" in table1  # what both must say
    assert "Table 1 has a `harness` column" in harnesses
    assert "with a `harness` column in Table 1" in readme and "Table 1 rows is not built" not in readme
