"""Ray's start, overlapped with the driver's own work (issue 38.5).

A local `ray.init` takes seconds (its head's processes, the raylet's registration, the driver's
connect: docs/measurements.md), most of it waiting on other processes. The driver begins it in a
thread as soon as it knows jobs remain, and meanwhile opens the tracker (W&B), reconciles the
finished records and writes the live report; it waits for Ray only before its first Ray call. The
same `ray.init` runs either way: only when it starts changes.

Started off the main thread, Ray's `init` leaves the driver's Python signal handlers alone (on the
main thread it replaces SIGTERM's with its own), so Ctrl-C and SIGTERM during the start stop the
sweep as they do later (its core worker's native SIGTERM handler, set once Ray is up, is replaced by
the driver's again after `ready()`): leaving the block waits for the start to end, and the driver then shuts Ray down.

The thread that starts Ray's local processes stays parked until Ray is shut down: Linux's
parent-death signal, which Ray sets so that its processes die with the driver, fires when the
thread that started them ends, not the process.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from types import TracebackType
from typing import Any

from runners.config.runner import ClusterConfig

log = logging.getLogger(__name__)
WORKER_LOGGER = "ray._private.worker"
NOT_MAIN_NOTICE = "SIGTERM handler is not set"
PARK_S = 1.0


class _DropNotMainNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(NOT_MAIN_NOTICE)


class LocalRay:
    """Within its block: `begin()` starts (or joins) the sweep's Ray in the background, `ready()`
    waits for it and raises what stopped it. Leaving the block waits for a start still under way."""

    def __init__(self, cluster: ClusterConfig) -> None:
        self.cluster = cluster
        self._thread: threading.Thread | None = None
        self._started = threading.Event()  # set once `ray.init` has returned or raised
        self._error: BaseException | None = None

    def __enter__(self) -> LocalRay:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._thread is not None:
            self._started.wait()  # a start under way ends before the driver shuts Ray down or exits

    def begin(self) -> None:
        """Start Ray in a thread, unless this process is connected already (a caller's `ray.init`)."""
        import ray

        from runners.sweep.ray_notices import quiet_token_auth_notice

        if self._thread is not None or self._started.is_set():
            return
        if ray.is_initialized():
            self._started.set()
            return
        quiet_token_auth_notice()  # token auth stays on; its notice on every run goes
        logger = logging.getLogger(WORKER_LOGGER)  # the driver's handlers are the ones it wants
        if not any(isinstance(f, _DropNotMainNotice) for f in logger.filters):
            logger.addFilter(_DropNotMainNotice())
        self._thread = threading.Thread(target=self._init, name="ray-start", daemon=True)
        self._thread.start()

    def ready(self) -> None:
        """Wait for the start `begin` made; raises its error, if it failed."""
        self.begin()
        self._started.wait()
        if self._error is not None:
            raise self._error

    def _init(self) -> None:
        import ray

        try:
            ray.init(address=self.cluster.address, num_cpus=self.cluster.num_cpus, log_to_driver=False,
                     include_dashboard=False, runtime_env=_runtime_env())
        except BaseException as e:  # noqa: BLE001 - raised again on the main thread by `ready`
            self._error = e
            return
        finally:
            self._started.set()
        while ray.is_initialized():  # Ray's processes die when this thread ends (see above)
            time.sleep(PARK_S)


def _runtime_env() -> dict[str, Any]:
    """Workers import the project from this checkout, wherever the driver runs from."""
    from runners.core.project import pythonpath

    return {"env_vars": {"PYTHONPATH": pythonpath(os.environ.get("PYTHONPATH"))}}
