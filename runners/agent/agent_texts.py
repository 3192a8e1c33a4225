"""Every wording the runner itself adds (the tab's own wording lives in `tab/tab_texts.py`).

Methods can override any of these by name through `method.texts`.
"""

from runners.core.task import Task

TEXTS: dict[str, str] = {
    # The user message that opens every task: where the workspace is and where the deliverable goes.
    "task": "{prompt}\n\nYour workspace is the folder {root}. Work on its files directly with your tools. {deliverable}",
    # Where the deliverable goes, by what scores the task (see `task_message`).
    "deliverable_file": "Write the deliverable to {output} (relative to the workspace).",
    "deliverable_as_told": "Write the deliverable where the task says, inside the workspace.",
    "deliverable_answer": "Give your answer in your final message.",
    # TODO (plan-first prompting, Wang et al. 2023).
    "todo": (
        "Before you start working, write a TODO list of every fact, figure and deliverable element "
        "the task asks for."
    ),
    # Self-Refine (Madaan et al. 2023): sent once, at the first stop.
    "self_refine": (
        "Before you finish, re-check each fact, figure and deliverable element the task asks for "
        "against the source files you read, and make sure each one is in the deliverable. "
        "Fix the deliverable where anything is missing or wrong, then finish again."
    ),
}


def task_message(task: Task, root: str, overrides: dict[str, str] | None = None) -> str:
    """The opening user message: the task, where the workspace is, where the deliverable goes."""
    if task.kind == "answer":
        where = text("deliverable_answer", overrides)
    elif task.output.strip("./"):
        where = text("deliverable_file", overrides).format(output=task.output)
    else:
        where = text("deliverable_as_told", overrides)
    return text("task", overrides).format(prompt=task.prompt, root=root, deliverable=where)


def text(name: str, overrides: dict[str, str] | None = None) -> str:
    """The wording called `name`, from the method's overrides when it has one."""
    if overrides and name in overrides:
        return overrides[name]
    if name not in TEXTS:
        raise KeyError(f"unknown text {name!r}; known: {', '.join(sorted(TEXTS))}")
    return TEXTS[name]
