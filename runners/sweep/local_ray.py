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

Leaving the block shuts down the Ray this block started (`shut_down`), on a normal exit, an error
or a signal alike. `ray.shutdown()` stops the processes the driver itself started (GCS, raylet) but
not the agents the raylet starts (the runtime-env agent, the dashboard agent, which runs even with
the dashboard off), nor workers still exiting: those end only once they notice their raylet gone,
and a runtime-env agent took over 60 s to (issue 40). So the node's processes and all their
descendants are listed before the shutdown and those left after it are ended. A cluster the sweep
joined (`cluster.address`, RAY_ADDRESS, a caller's `ray.init`) is never stopped: it is not ours.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from types import TracebackType
from typing import Any

from runners.config.runner import ClusterConfig

log = logging.getLogger(__name__)
WORKER_LOGGER = "ray._private.worker"
NOT_MAIN_NOTICE = "SIGTERM handler is not set"
PARK_S = 1.0
SHUTDOWN_S = 10.0  # `ray.shutdown()`'s bound: a cluster signalled with the driver drains for a minute
GRACE_S = 2.0  # after SIGTERM, before SIGKILL, for the node's processes left after the shutdown
_stuck: list[threading.Thread] = []  # a shutdown that did not end in time (the driver then exits at once)


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
            shut_down(SHUTDOWN_S)  # this block's `ray.init` ran: a joined cluster is only disconnected from

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


def shut_down(shutdown_s: float) -> bool:
    """`ray.shutdown()` for at most `shutdown_s`, then end what is left of the local node this
    process started (none when it joined a cluster). False when the shutdown did not end in time
    (now or in an earlier call): the caller should then exit without waiting on Ray again."""
    import ray

    if _stuck:
        return False
    if not ray.is_initialized():
        return True
    ours = _own_processes()
    closing = threading.Thread(target=ray.shutdown, name="ray-shutdown", daemon=True)
    closing.start()
    closing.join(shutdown_s)
    _end(ours, GRACE_S)
    if closing.is_alive():
        _stuck.append(closing)
        return False
    return True


def _own_processes() -> list[tuple[int, str]]:
    """The processes of the node this process started (GCS, raylet, …) and all their descendants
    (Ray's agents, workers), as (pid, start time); empty for a node it only connected to."""
    from ray._private import worker

    node = worker._global_node
    roots = [info.process.pid for infos in (node.all_processes.values() if node else ()) for info in infos]
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    todo = [pid for pid in roots if pid in table]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return [(pid, table[pid][1]) for pid in sorted(found)]


def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, start time) of every live process, from /proc (zombies left out)."""
    table = {}
    for p in os.listdir("/proc"):
        if p.isdigit() and (stat := _stat(int(p))) is not None:
            table[int(p)] = stat
    return table


def _stat(pid: int) -> tuple[int, str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in (b"Z", b"X"):  # a zombie waits to be reaped: it runs nothing
        return None
    return int(fields[1]), fields[19].decode()


def _end(processes: list[tuple[int, str]], grace_s: float) -> None:
    """SIGTERM each process still running (the same one: same pid and start time), SIGKILL those
    still there after `grace_s`."""

    def running() -> list[int]:
        return [pid for pid, started in processes if (stat := _stat(pid)) is not None and stat[1] == started]

    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = running()
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + grace_s
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = running()
        if not left:
            return
