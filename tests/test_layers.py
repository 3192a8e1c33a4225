"""The import layers: no module imports itself through others (function-level imports included),
and the shared vocabulary in `runners/core/` stands on nothing above it."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("runners", "envs", "tab", "eval", "slurm")
CORE_MAY_IMPORT = ("runners.core", "envs", "tab.config", "tab.tab_texts")  # the layers below it


def modules(repo: Path = REPO, skip: tuple[str, ...] = ()) -> dict[str, Path]:
    """The project's modules by dotted name (`repo`: another checkout; `skip`: folders left out)."""
    out = {}
    for pkg in PACKAGES:
        for p in sorted((repo / pkg).rglob("*.py")):
            if not p.relative_to(repo).as_posix().startswith(skip):
                name = ".".join(p.relative_to(repo).with_suffix("").parts)
                out[name.removesuffix(".__init__")] = p
    return out


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node but those under `if TYPE_CHECKING:` (imports for annotations never run)."""
    out, todo = [], [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            todo.extend(node.orelse)
            continue
        out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def imports(path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules `path` imports anywhere in its code that runs (function level included)."""
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module for a in node.names]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_cycle_finder_finds_a_planted_cycle(tmp_path: Path) -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    src = tmp_path / "m.py"
    src.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x\ndef f():\n    import y\n")
    assert imports(src, {"x": src, "y": src}) == {"y"}


def test_no_module_imports_itself_through_others() -> None:
    known = modules()
    graph = {name: imports(path, known) - {name} for name, path in known.items()}
    assert cycles(graph) == []


def test_the_core_stands_on_nothing_above_it() -> None:
    known = modules()
    for name, path in known.items():
        if name.startswith("runners.core"):
            above = {m for m in imports(path, known) if not m.startswith(CORE_MAY_IMPORT)}
            assert not above, f"{name} imports {sorted(above)}"


RECORD_NAMES = {"job.json", "result.json", "scores.json", "tab.json", "trajectory.jsonl", "evaluator_view.json", "extracted.json"}
# Files of other programs' records that happen to share a name: TheAgentCompany's evaluator writes its
# own result.json; the MCP tab server (tab/, below runners/) keeps its own tab.json; a Harbor trial
# directory has its own result.json (eval/harbor/harbor_files.py).
NOT_OURS = ("eval/judges/agentcompany/judge.py", "eval/tac/evaluation.py", "tab/mcp/", "eval/harbor/harbor_files.py")


def test_the_record_file_names_are_spelled_only_in_record_files() -> None:
    spelled = []
    for path in modules().values():
        rel = path.relative_to(REPO).as_posix()
        if rel == "runners/core/record_files.py" or rel.startswith(NOT_OURS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in RECORD_NAMES:
                spelled.append(f"{rel}:{node.lineno} {node.value}")
    assert spelled == []


# What eval/ may use of runners/ besides the core: the model stack (judges and the probe call LLMs
# through it), the run settings the probe replays, the tracker the report logs to, and the agent
# loop and its episode, in which the wb_agent judge runs its judge model (one loop for agents and
# judges, not a copy).
LOOP = ("runners.agent.loop", "runners.agent.episode")
EVAL_MAY_USE = ("runners.core", "runners.models", "runners.config.runner", "runners.tracking.tracker", *LOOP)
# The loop is a service eval may use only while it stands on the layers below the runner's jobs.
LOOP_MAY_IMPORT = ("envs", "runners.core", "runners.config.runner", *LOOP)


def test_eval_uses_of_the_runner_only_the_core_and_its_services() -> None:
    known = modules()
    for name, path in known.items():
        if name.startswith("eval"):
            runner = {m for m in imports(path, known) if m.startswith("runners") and not m.startswith(EVAL_MAY_USE)}
            assert not runner, f"{name} imports {sorted(runner)}"


def test_the_loop_eval_uses_stands_on_nothing_of_the_runners_jobs() -> None:
    known = modules()
    for loop in LOOP:
        above = {m for m in imports(known[loop], known) if not m.startswith(LOOP_MAY_IMPORT)}
        assert not above, f"{loop} imports {sorted(above)}: eval may use it only while it imports {LOOP_MAY_IMPORT}"


# The runner's wings, by stage: the agent loop and its methods know no job, a job knows no sweep;
# judges never read the report. Each pair is (wing, what it must not import).
WINGS = (
    ("runners.agent", ("runners.job", "runners.sweep", "runners.tracking")),
    ("runners.job", ("runners.sweep", "runners.tracking")),
    ("runners.config", ("runners.preflight", "runners.agent", "runners.job", "runners.sweep", "runners.tracking")),
    ("runners.models", ("runners.agent", "runners.job", "runners.sweep", "runners.tracking")),
    ("runners.harnesses", ("runners.job", "runners.sweep", "runners.tracking")),
    ("eval.judges", ("eval.report", "eval.replay", "eval.probe", "eval.score")),
    ("eval.benchmarks", ("eval.report", "runners.job", "runners.sweep")),
    # TheAgentCompany's runtime (task image, file server, evaluator) is what its benchmark and judge call, not the reverse
    ("eval.tac", ("eval.judges", "eval.benchmarks")),
    # the report reads records (runners.core), never the sweep or the job that wrote them
    ("eval.report", ("runners.sweep", "runners.job")),
    # the tab is environment-side: it stands on envs/ alone (tab/mcp, which composes a job's config, aside)
    ("tab", ("runners",)),
    # the ground floor: the workspace environment knows nothing of ours above it
    ("envs", ("runners", "eval", "tab", "slurm")),
    # the launcher stands on the runner (its config is runners/config/slurm.py), never the reverse
    ("runners", ("slurm",)),
)
# Parts of a wing its rule does not cover, and why: `python -m tab.mcp` composes the environment and
# the tab from conf/ exactly as a job does, through the job's schema (runners/config/schema.py).
OUTSIDE_THEIR_WING = ("tab.mcp",)


def wing_crossings(known: dict[str, Path], wings: tuple[tuple[str, tuple[str, ...]], ...] = WINGS) -> list[str]:
    """Each import of a module of a wing into what the wing must not import."""
    broken = []
    for wing, forbidden in wings:
        for name, path in known.items():
            inside = name == wing or name.startswith(wing + ".")
            if inside and not any(name == o or name.startswith(o + ".") for o in OUTSIDE_THEIR_WING):
                broken += [f"{name} imports {m}" for m in sorted(imports(path, known)) if m.startswith(forbidden)]
    return broken


def test_each_wing_imports_nothing_of_the_stages_after_it() -> None:
    assert wing_crossings(modules()) == []


def test_a_planted_wing_crossing_is_found(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from runners.sweep.ledger import Ledger\n")
    assert imports(src, {"runners.sweep.ledger": src}) == {"runners.sweep.ledger"}


def test_planted_crossings_of_the_floor_rules_are_found(tmp_path: Path) -> None:
    planted = {
        "eval/tac/evaluation.py": "from eval.judges.rule import judge\n",
        "eval/report/pages.py": "def f():\n    import runners.job.run\n",
        "eval/report/tables.py": "from runners.sweep.ledger import Ledger\n",
        "tab/ops.py": "from runners.core.task import Task\n",
        "tab/mcp/__main__.py": "from runners.config.schema import register\n",  # outside the tab's rule
        "envs/sandbox.py": "from tab.config import TabConfig\n",
        "runners/config/runner.py": "from slurm.launch import check\n",
    }
    targets = ("eval/judges/rule.py", "runners/job/run.py", "runners/sweep/ledger.py", "runners/core/task.py",
               "runners/config/schema.py", "tab/config.py", "slurm/launch.py")
    for rel in (*planted, *targets):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(planted.get(rel, ""))
    assert wing_crossings(modules(tmp_path)) == [
        "eval.tac.evaluation imports eval.judges.rule",
        "eval.report.pages imports runners.job.run",
        "eval.report.tables imports runners.sweep.ledger",
        "tab.ops imports runners.core.task",
        "envs.sandbox imports tab.config",
        "runners.config.runner imports slurm.launch",
    ]


# eval/judges/ by protocol: each protocol's judge stands on the judges' shared floor (the seam, the
# client, the metrics, the fence, reading deliverables, OfficeQA's reward), never on another protocol,
# and the floor imports no protocol (a piece two protocols share goes down to the floor).
JUDGE_PROTOCOLS = ("eval.judges.rule", "eval.judges.workspace_bench", "eval.judges.agentcompany")
JUDGES_FLOOR = ("eval.judges.base", "eval.judges.client", "eval.judges.metrics", "eval.judges.untrusted", "eval.judges.extract",
                "eval.judges.officeqa_reward")


def judge_protocol_crossings(known: dict[str, Path]) -> list[str]:
    """Imports from one judge protocol into another, or from the judges' shared floor into a protocol."""
    rules = [(p, tuple(q for q in JUDGE_PROTOCOLS if q != p)) for p in JUDGE_PROTOCOLS] + [(f, JUDGE_PROTOCOLS) for f in JUDGES_FLOOR]
    broken = []
    for part, forbidden in rules:
        for name, path in known.items():
            if name == part or name.startswith(part + "."):
                broken += [f"{name} imports {m}" for m in sorted(imports(path, known)) if m.startswith(forbidden)]
    return broken


def test_each_judge_protocol_stands_on_the_judges_floor_alone() -> None:
    assert set(JUDGE_PROTOCOLS + JUDGES_FLOOR) <= set(modules()), "a judge protocol or floor module named here moved"
    assert judge_protocol_crossings(modules()) == []


TEST_FOLDERS_OF_THEIR_OWN = ("e2e", "helpers", "fixtures")  # runs that cross wings; shared helpers; data


def misplaced_test_folders(repo: Path = REPO) -> list[str]:
    """Test folders that name no product folder: `tests/<wing>/…` mirrors `<wing>/…`, as in verl's layout check."""
    tests = repo / "tests"
    out = []
    for folder in sorted(p for p in tests.rglob("*") if p.is_dir() and p.name != "__pycache__"):
        rel = folder.relative_to(tests)
        if rel.parts[0] in TEST_FOLDERS_OF_THEIR_OWN:
            continue
        if not (repo / rel).is_dir():
            out.append(f"tests/{rel.as_posix()} names no folder {rel.as_posix()}/")
    return out


def root_test_modules(repo: Path = REPO) -> list[str]:
    """Test modules directly in `tests/` (a wing's tests sit in `tests/<wing>/…`)."""
    return sorted(p.name for p in (repo / "tests").glob("test_*.py"))


def test_every_test_folder_names_a_product_folder() -> None:
    assert misplaced_test_folders() == []
    root_modules = root_test_modules()
    assert len(root_modules) <= 3, f"tests/ root holds {root_modules}: a wing's tests go in tests/<wing>/"


def test_a_test_folder_naming_no_product_folder_is_found(tmp_path: Path) -> None:
    (tmp_path / "tab" / "capture").mkdir(parents=True)
    for folder in ("tab/capture", "tab/renderer", "e2e/anything"):
        (tmp_path / "tests" / folder).mkdir(parents=True)
    assert misplaced_test_folders(tmp_path) == ["tests/tab/renderer names no folder tab/renderer/"]
