"""One bubblewrap sandbox per job, started once: each bash call runs as a child of a supervisor in it.

Creating a sandbox (user, pid, net, ipc and mount namespaces, ~20 bind mounts) costs ~12 ms of
kernel CPU; per call, that caps a 2-core machine at ~130 sandboxed calls/s. A session creates it
once per job. Inside, a small POSIX sh supervisor reads a command number from its stdin, runs
`commands/<n>` (written by the runner into a folder the sandbox sees read-only) exactly as a
one-off sandbox would (`bash -c 'eval "$(</dev/fd/9)"'`, stdin /dev/null, output to the session's
pipe), waits for it, kills every other process of the sandbox (what the command left behind), and
writes the exit code on its status pipe. A call past its timeout, or interrupted, ends the whole
sandbox; the next call starts a new one.

Nothing the agent runs may reach the supervisor's pipes (a forged status line shifted every later
exit code, issue 48). The supervisor is the sandbox's PID 1 (`--as-pid-1`), which no signal from
inside reaches, and it is not dumpable: its shell is a copy bubblewrap makes in the sandbox,
execute-only (`SUPERVISOR_SHELL`), and the kernel makes a process that runs a program it may not
read not dumpable, so that opening its /proc/1/fd/*, tracing it or reading its memory takes
CAP_SYS_PTRACE, which no process of the sandbox has. The programs it runs get none of its pipes.
A task's service (a benchmark's server, envs/sandbox_extras.py) runs beside the commands, spared by
the killing and started again when a command killed it; whether it listens before the job's first
command is the runner's own reading of the sandbox's TCP table from outside (`service_ready`).

Without bubblewrap the same session runs with `envs/reaper.py --session` as its supervisor (the
`supervisor` argument): the same protocol, a subreaper instead of a PID namespace, so a command's
leftovers past `setsid` are found as its descendants; a timeout asks it (SIGTERM) to kill them
before its process group is killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable

from envs.fd_wait import readable
from envs.safeio import create_in
from envs.sandbox_extras import Service

# `state PID` sets v to the process's State ("" once it is gone). A read of /proc can end early when
# the shell takes a signal (a child's exit: ~1 in 700 reads at PID 1), which left v empty: a service
# just started was taken for dead and never waited for (the job's first command then met a dead
# server), and the reaping could skip a live process. It reads again, and after 5 short reads takes
# the process for alive (waited for, or killed: both harmless for one that is not).
PROC_STATE = r"""
state() {
  v=
  for _ in 1 2 3 4 5; do
    [ -e "/proc/$1/status" ] || return
    while read -r k v; do [ "$k" = State: ] && break; done < "/proc/$1/status"
    [ -n "$v" ] && return
  done
  v=unknown
}
"""

# The supervisor (POSIX sh, the sandbox's PID 1 so that commands cannot kill it): fd 0 command
# numbers, fd 1 its status pipe, fd 2 the output pipe, $1 the commands folder. With a service
# ($2 its script in that folder, $3 its port, $4 how many 50 ms waits for it to listen) it starts
# it from a subshell that exits at once, so that the service is not one of its jobs (`wait` never
# waits for it) and its pid comes back on the subshell's output; the service is spared by the
# reaping, and started again before a command when it has died. Each command's status line is its
# exit code, and with a service whether it was listening when the command began (1 or 0). Every
# program it runs gets /dev/null or the output pipe in place of its stdin and stdout: none of them
# holds the command or status pipe. It ignores SIGINT and SIGQUIT, the two signals sh catches (a
# `kill -INT 1` cut its `wait` short: that call's exit code read 130); its commands, run in the
# background, have both ignored anyway (as POSIX has a shell without job control do).
SUPERVISOR = PROC_STATE + r"""
dir=$1 svc=$2 port=$3 tries=$4 spid= ok=
exec 4>&2 2>/dev/null
trap '' INT QUIT
[ -z "$svc" ] || hex=$(printf ':%04X [0-9A-F]*:0000 0A' "$port")
listening() { grep -q "$hex" /proc/net/tcp /proc/net/tcp6 </dev/null >/dev/null 4>&-; }
up() {
  [ -n "$spid" ] || return 1
  state "$spid"
  case $v in Z*|"") return 1 ;; esac
}
serve() {
  if ! up; then
    spid=$(/bin/sh "$dir/$svc" </dev/null >/dev/null 2>&1 4>&- & echo $!)
    i=0
    while [ $i -lt "$tries" ] && up && ! listening; do sleep 0.05 </dev/null >/dev/null 4>&-; i=$((i+1)); done
  fi
  if listening; then ok=1; else ok=0; fi
}
reap() {
  for n in 1 2 3 4 5 6 7 8; do
    live=0
    for d in /proc/[0-9]*; do
      p=${d#/proc/}
      [ "$p" = 1 ] && continue
      [ "$p" = "$spid" ] && continue
      state "$p"
      case $v in Z*|"") continue ;; esac
      kill -9 "$p" && live=1
    done
    wait
    [ $live = 0 ] && return
  done
}
[ -z "$svc" ] || serve
while IFS= read -r n; do
  [ -n "$svc" ] && serve
  /bin/bash -c 'eval "$(</dev/fd/9)" 9<&-' 9<"$dir/$n" </dev/null >&4 2>&4 4>&- &
  wait $!
  code=$?
  reap
  echo "$code${svc:+ $ok}"
done
"""
SERVICE_FILE = "service"  # the service's script, in the commands folder
POLL_S = 0.05


DRAIN_S = 2.0  # how long to read what is left in the pipe once a call is over


class SessionGone(RuntimeError):
    """The sandbox ended (killed by a timeout, an interrupt or the command itself)."""


class ShellSession:
    """The long-lived sandbox (or reaper) of one workspace's shell; `run_in_session` is one bash call in it."""

    def __init__(
        self, argv_prefix: list[str], env: dict[str, str], workspace: str, commands_dir: str, supervisor: list[str],
        service: Service | None = None, before_start: Callable[[], None] | None = None, seen_at: str | None = None,
        terminate_s: float = 0.0, pass_fds: tuple[int, ...] = (),
    ) -> None:
        """`workspace`: the host folder; `seen_at`: where the sandbox shows it (its service's paths),
        default the same. `supervisor`: its argv after the prefix (`supervisor_argv`, or envs/reaper.py's
        without bubblewrap; the service's script, port and tries are added); `terminate_s`: how long
        `kill` lets it end its commands on SIGTERM before SIGKILL (0: at once); `pass_fds`: descriptors
        the launcher inherits (`before_start` runs before each start, e.g. to rewind them)."""
        self._prefix, self._env, self._workspace = argv_prefix, env, workspace
        self._supervisor, self._terminate_s, self._pass_fds = list(supervisor), terminate_s, pass_fds
        self._before_start = before_start
        self.commands_dir = commands_dir
        self.service = service
        if service is not None:
            with open(os.path.join(commands_dir, SERVICE_FILE), "w", encoding="utf-8") as f:
                f.write(service.command(seen_at or workspace) + "\n")
            self._supervisor += [SERVICE_FILE, str(service.port), str(max(int(service.start_s / POLL_S), 1))]
        self._dir_fd = os.open(commands_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._count = 0
        self._name = ""
        self.service_listening: bool | None = None  # at the last command's start, as the supervisor saw it (None: no service)
        self.proc: subprocess.Popen | None = None

    def _start(self) -> None:
        if self._before_start is not None:
            self._before_start()
        ctl_r, self._ctl = os.pipe()
        self._out, out_w = os.pipe()
        self._status, st_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [*self._prefix, *self._supervisor],
                cwd=self._workspace, env=self._env, stdin=ctl_r, stdout=st_w, stderr=out_w,
                start_new_session=True, close_fds=True, pass_fds=self._pass_fds,
            )
        finally:
            for fd in (ctl_r, out_w, st_w):
                os.close(fd)
        os.set_blocking(self._out, False)
        self._pending = b""

    def service_ready(self) -> bool:
        """Start the sandbox (when it is not running) and wait, up to the service's `start_s`, until
        its service listens: read by the runner from the sandbox's network table (the kernel's, seen
        from outside through a process of the sandbox), so that nothing the agent runs can answer for
        it. Before the job's first command this is the evidence that the environment failed."""
        assert self.service is not None
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self._start()
        return wait_listening(self.proc, self.service.port, self.service.start_s)

    def send(self, command: str) -> int:
        """Hand the supervisor one command; returns the descriptor its output arrives on."""
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self._start()
        self._count += 1
        name = self._name = str(self._count)
        with create_in(self._dir_fd, name) as f:
            f.write(command.encode("utf-8", errors="surrogateescape"))
        try:
            os.write(self._ctl, f"{name}\n".encode())
        except BrokenPipeError:
            raise SessionGone("the shell's sandbox ended before the command was sent") from None
        return self._out

    def exit_code(self) -> int | None:
        """The command's exit code once the supervisor reported it (None: still running); raises
        SessionGone when the sandbox ended instead."""
        if not readable([self._status], 0):
            return None
        data = os.read(self._status, 64)
        if not data:
            raise SessionGone("the shell's sandbox ended during the command")
        self._pending += data
        line, sep, rest = self._pending.partition(b"\n")
        if not sep:
            return None
        self._pending = rest
        self._forget()
        code, _, listening = line.decode(errors="replace").strip().partition(" ")
        if self.service is not None:
            self.service_listening = listening == "1"
        return int(code) if code.isdigit() else 1

    def _forget(self) -> None:
        try:
            os.unlink(self._name, dir_fd=self._dir_fd)
        except OSError:
            pass

    def wait_readable(self, timeout: float) -> None:
        """Wait until output or the exit code arrives (or `timeout` seconds pass)."""
        readable([self._out, self._status], timeout)

    def kill(self) -> None:
        """End the sandbox and everything in it (a timeout, an interrupt); the next call starts anew."""
        proc = self.proc
        if proc is not None and proc.poll() is None and self._terminate_s > 0:
            try:
                proc.terminate()
                proc.wait(timeout=self._terminate_s)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                pass
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def stop(self) -> None:
        """Kill the sandbox (if any) and close its pipes."""
        if self.proc is None:
            return
        self.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for fd in (self._ctl, self._out, self._status):
            try:
                os.close(fd)
            except OSError:
                pass
        self._forget()
        self.proc = None

    def returncode(self) -> int:
        """The sandbox's exit status once it ended (a signal N as 128 + N, as bash reports it)."""
        code = self.proc.wait() if self.proc is not None else 1
        return 128 - code if code < 0 else code

    def close(self) -> None:
        self.stop()
        try:
            os.close(self._dir_fd)
        except OSError:
            pass


def wait_listening(launcher: subprocess.Popen, port: int, seconds: float) -> bool:
    """Whether TCP `port` listens in the network namespace of the sandbox `launcher` started (its
    first child is in it), polled every POLL_S for up to `seconds`; False once the sandbox ended."""
    deadline = time.monotonic() + seconds
    while True:
        inside = _first_child(launcher.pid)
        if inside is not None and _listening(f"/proc/{inside}/net", port):
            return True
        if launcher.poll() is not None or time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)


def _first_child(pid: int) -> int | None:
    """The launcher's first child once it is in a network namespace other than the runner's (the sandbox's)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            kids = f.read().split()
        if kids and os.readlink(f"/proc/{int(kids[0])}/ns/net") != os.readlink("/proc/self/ns/net"):
            return int(kids[0])
    except OSError:
        pass
    return None


def _listening(net: str, port: int) -> bool:
    """Whether a socket listens on TCP `port` in the network namespace whose tables are in `net`."""
    want = f":{port:04X}".encode()
    for table in ("tcp", "tcp6"):
        try:
            with open(f"{net}/{table}", "rb") as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[1].endswith(want) and fields[3] == b"0A":
                return True
    return False


def supervisor_argv(shell: str, commands_dir: str) -> list[str]:
    """The sandbox's supervisor: SUPERVISOR run by `shell` (the execute-only copy) over `commands_dir`."""
    return [shell, "-c", SUPERVISOR, "supervisor", commands_dir]


def drain(fd: int, add: Callable[[bytes], None], until: float) -> None:
    """Read what is already in the (non-blocking) output pipe, up to `until`."""
    while time.monotonic() < until:
        try:
            chunk = os.read(fd, 1 << 20)
        except BlockingIOError:
            return
        if not chunk:
            return
        add(chunk)


def run_in_session(
    session: ShellSession, command: str, seconds: float, add: Callable[[bytes], None], stopped: Callable[[], bool]
) -> tuple[int | None, bool]:
    """One bash call in the job's sandbox: (exit code, timed out). Output goes to `add` until the
    supervisor reports the exit code (what the call left is killed by then); at the deadline, or
    once `stopped()`, the sandbox ends (exit code None)."""
    deadline = time.monotonic() + seconds
    try:
        out = session.send(command)
    except SessionGone:  # it ended between two calls: once more, in a new one
        session.stop()
        out = session.send(command)
    try:
        while True:
            drain(out, add, deadline)
            code = session.exit_code()
            if code is not None:
                drain(out, add, time.monotonic() + DRAIN_S)
                return code, False
            now = time.monotonic()
            if now >= deadline or stopped():
                break
            session.wait_readable(min(deadline - now, 0.5))
    except SessionGone:  # the call ended its own sandbox
        return _end(session, out, add), False
    _end(session, out, add)
    return None, True


def _end(session: ShellSession, out: int, add: Callable[[bytes], None]) -> int:
    """End the sandbox, keep what its pipe still holds; returns the sandbox's exit status."""
    session.kill()
    code = session.returncode()
    drain(out, add, time.monotonic() + DRAIN_S)
    session.stop()
    return code
