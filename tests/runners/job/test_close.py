"""The end of an episode (runners/job/run.py `close_episode`): the job's model is closed, and its
last payments reach the sweep's governor, whatever the environment's close does. A close that
raises (a sandbox that would not stop) used to skip the model's, so the sweep's live spend lacked
the job's last batch. The governor is the real one, in this process, behind a handle of a Ray
actor's shape (as in tests/runners/models/test_governor_calls.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from runners.job.model import JobModel
from runners.job.run import close_episode
from runners.models.accounting import Paid
from runners.models.governor import Governor, SpendLimits, SweepSpend
from runners.models.scripted import ScriptedModel, ScriptedModelConfig
from tests.conftest import write_script


class _Method:
    def __init__(self, governor: Governor, name: str) -> None:
        self.governor, self.name = governor, name

    def remote(self, *args: Any) -> asyncio.Future[Any]:
        return asyncio.ensure_future(getattr(self.governor, self.name)(*args))


class Handle:
    """`handle.spend.remote(...)` as on a Ray actor, run on `governor`."""

    def __init__(self, governor: Governor) -> None:
        self.governor = governor
        self.spend = _Method(governor, "spend")


class StuckSandbox:
    """An environment whose close fails, as a sandbox that would not stop does."""

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True
        raise OSError("the sandbox would not stop")


def test_an_environment_whose_close_raises_still_has_its_model_closed_and_its_spend_reported(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"content": "done", "usage": {"cost": 0.25}}])
    governor = Governor(SpendLimits())
    handle = Handle(governor)
    paid = Paid(ScriptedModel(ScriptedModelConfig(script=str(script))), SweepSpend(handle, "job-1", "cell"))
    model = JobModel(paid, paid, None, "job-1", handle)
    env = StuckSandbox()

    async def main() -> None:
        await paid.acomplete([{"role": "user", "content": "hi"}], [])
        with pytest.raises(OSError, match="would not stop"):  # the environment's error is the job's, as before
            await close_episode(env, model)

    asyncio.run(main())
    assert env.closed
    assert governor.snapshot()["paid_total"] == 0.25  # the job's last batch reached the sweep's totals
