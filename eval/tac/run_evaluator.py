"""Subprocess entry: run one TheAgentCompany evaluator and write its result as JSON.

    python -I -B run_evaluator.py EVALUATOR_PY TRAJECTORY_FILE RESULT_JSON

Mirrors the benchmark's own `eval.py`: load the evaluator, call `grade_checkpoints` with the
trajectory text, require a `Result` with at least one checkpoint, dump `result.to_dict()`: on the
descriptor named by `RT_TAC_RESULT_FD` when there is one (the judge's pipe), else to RESULT_JSON.
Before anything else the process makes itself not dumpable (`not_dumpable`): a program the
evaluator starts (the agent's code) runs as the same user and could otherwise open this process's
pipes through /proc/<pid>/fd and forge its progress or its result.
It runs isolated (`-I`), with the working folder /workspace, which the agent wrote: its own
`sys.path` gets /utils (the helper modules `common`, `scoring`, `config` and the evaluator) put
there explicitly, never the working folder, and every Python it starts is isolated too (the file
server, by `isolated`; the evaluator's own programs, by PYTHONSAFEPATH in eval/tac/sandbox.py).

It first starts the company's file server (`start_file_server`). While it runs it reports its progress, one JSON object a line, on the descriptor named by
`RT_TAC_PROGRESS_FD` (a pipe the judge reads; closed to every program the evaluator starts):
`{"started": true}` once the evaluator is loaded, `{"handed": "trajectory"}` when
`grade_checkpoints` is given the trajectory, `{"checkpoint": [total, result]}` for each
checkpoint made, then `{"unreachable": [SERVICES], "withheld": POINTS}` when it reached for a
service that is not here, `{"strategy": NAME}` for the scoring strategy, `{"open": PATH}` for the files
under /workspace, /data or /srv/owncloud it opens (the file server reports those it serves), and
`{"raised": TYPE}` when it ends on an exception. If a limit stops the evaluator, the judge knows from this which
checkpoints were done and whether it was reading the agent's files (eval/tac/outcome.py).

A checkpoint that reached for a service that is not here (compat/absent.py says which) is
unreachable and scores 0 whatever the evaluator gave it, before its strategy sees it: a check such
as "no issue left open" passes on a GitLab that is not there, which is no result. Besides the
stand-ins' own reports, the audit hook here reports a program the evaluator starts that this
sandbox lacks (the image's `apt-get` installs it: `psql`), a connection to another service's port
(GitLab, the chat, Plane, Redis) and a name it looks up beyond the sandbox (the network).
"""

import importlib.util
import inspect
import json
import os
import shutil
import socket
import subprocess
import sys
import time

MAX_OPENS = 2000  # distinct paths reported
UTILS = "/utils"  # the image's helpers and the task's evaluator: the one folder of the image on sys.path
# The company's file server (eval/tac/fileserver): its code is bound at FILESERVER_CODE/fileserver,
# its state (the shares the agent made) at FILESERVER_STATE; eval/tac/sandbox.py binds both.
FILESERVER_CODE = "/opt/runningtab"
FILESERVER_STATE = "/srv/fileserver"
FILESERVER_FILES = "/srv/owncloud"  # the server's files when the agent had them served; else /workspace
FILESERVER_PORT = 8092
FILESERVER_HIDDEN = (".image", ".runningtab")  # workspace folders that are not the file server's
REPORTED = ("/workspace/", "/data/", f"{FILESERVER_FILES}/")  # where the files the agent made are
START_S = 30.0
LOCAL_NAMES = ("localhost", "the-agent-company.com", "127.0.0.1", "::1", "")  # names the sandbox answers itself


class Progress:
    """Writes progress lines to the judge's pipe; never lets a failure reach the evaluator."""

    def __init__(self, fd_text):
        self.fd = int(fd_text) if fd_text and fd_text.isdigit() else None
        if self.fd is not None:
            try:
                os.set_inheritable(self.fd, False)
            except OSError:
                self.fd = None
        self.opened = set()
        self.absent = None  # compat/absent.py's report, once the evaluator's modules are there
        self.ports = {}

    def send(self, **item):
        if self.fd is None:
            return
        try:
            os.write(self.fd, (json.dumps(item) + "\n").encode())
        except (OSError, TypeError, ValueError):
            pass

    def audit(self, event, args):
        if event == "open":
            if not args or not isinstance(args[0], str) or len(self.opened) >= MAX_OPENS:
                return
            path = os.path.normpath(args[0])
            if path.startswith(REPORTED) and path not in self.opened:
                self.opened.add(path)
                self.send(open=path)
        elif self.absent is not None and event in ABSENT_EVENTS:
            try:
                service = ABSENT_EVENTS[event](args, self.ports)
            except Exception:  # noqa: BLE001 - the evaluator's own call goes on as it would
                return
            if service:
                self.absent(service)


def absent_program(args, ports):
    """A program started by name that this sandbox does not have: the image's `apt-get` would
    (the events' first argument is the program: Popen's executable, posix_spawn's and exec's path)."""
    name = os.fsdecode(args[0])
    return f"program {name}" if name and "/" not in name and shutil.which(name) is None else None


def absent_port(args, ports):
    """A connection to one of the benchmark's other servers (their ports in config.py)."""
    address = args[1]
    return ports.get(address[1]) if isinstance(address, tuple) and len(address) >= 2 else None


def absent_network(args, ports):
    """A name looked up beyond what the sandbox answers itself: the network, which is not here."""
    host = os.fsdecode(args[0]) if args[0] is not None else ""
    return None if host.lower() in LOCAL_NAMES or host.startswith("127.") else "the network"


ABSENT_EVENTS = {"subprocess.Popen": absent_program, "os.posix_spawn": absent_program, "os.exec": absent_program,
                 "socket.connect": absent_port, "socket.getaddrinfo": absent_network}


def instrument(progress):
    """Report each checkpoint and the strategy as the evaluator makes them (scoring's classes,
    patched); a checkpoint that reached for a service that is not here scores 0 (module doc)."""
    import config
    import scoring

    try:
        import absent
    except ImportError:  # the benchmark's own helpers in /utils (tests/eval/tac/test_samples.py): no stand-ins
        absent = None
    else:
        progress.absent = absent.report
        progress.ports = {int(config.GITLAB_PORT): "gitlab", int(config.ROCKETCHAT_PORT): "chat", int(config.PLANE_PORT): "plane", 6379: "redis"}
    checkpoint_init = scoring.Checkpoint.__post_init__
    result_init = scoring.Result.__post_init__

    def checkpoint_post_init(self):
        checkpoint_init(self)
        services = absent.take() if absent is not None else []
        withheld = int(self.result)
        if services:
            self.result = 0
        progress.send(checkpoint=[int(self.total), int(self.result)])
        if services:
            progress.send(unreachable=services, withheld=withheld)

    def result_post_init(self):
        result_init(self)
        progress.send(strategy=getattr(self.scoring_strategy, "__name__", "custom"))

    scoring.Checkpoint.__post_init__ = checkpoint_post_init
    scoring.Result.__post_init__ = result_post_init


def isolated(python, code_dir, module):
    """The argv of `python -m MODULE` with MODULE found in `code_dir` alone: an isolated interpreter
    (-I: neither its working folder nor a script's folder on sys.path, no PYTHON* variables, no
    user site; -B: no bytecode written), `code_dir` put on sys.path explicitly. Arguments follow."""
    boot = (f"import runpy, sys; sys.path.insert(0, {code_dir!r}); "
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
    return [python, "-I", "-B", "-c", boot]


def fileserver_argv(python, root, state):
    """The file server's command line over `root`, its shares in `state` (run it from FILESERVER_CODE)."""
    return [*isolated(python, FILESERVER_CODE, "fileserver"), "--root", root, "--state", state, "--port", str(FILESERVER_PORT)]


def start_file_server(progress):
    """The file server over /workspace, answering on loopback before this returns (it reports the
    files it serves on the progress pipe); an OSError when it does not come up. It runs from its
    own code's folder, never one the agent wrote, and imports nothing from /workspace."""
    root = FILESERVER_FILES if os.path.isdir(FILESERVER_FILES) else "/workspace"
    argv = fileserver_argv(sys.executable, root, FILESERVER_STATE) + [a for name in FILESERVER_HIDDEN for a in ("--hide", name)]
    fds = ()
    if progress.fd is not None:
        argv += ["--report-fd", str(progress.fd)]
        fds = (progress.fd,)
    server = subprocess.Popen(argv, cwd=FILESERVER_CODE, pass_fds=fds, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise OSError(f"the file server exited with {server.returncode} before it answered")
        try:
            socket.create_connection(("127.0.0.1", FILESERVER_PORT), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.02)
    server.kill()
    raise OSError(f"the file server did not answer within {START_S:.0f} s")


def not_dumpable():
    """prctl(PR_SET_DUMPABLE, 0): no other process of the user may open this one's /proc/<pid>/fd
    (nor ptrace it); the file server does the same for its report descriptor."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def result_sink(fd_text, path):
    """Where the result goes: the judge's pipe (kept from every program started here), else `path`."""
    if fd_text and fd_text.isdigit():
        fd = int(fd_text)
        os.set_inheritable(fd, False)
        return os.fdopen(fd, "w", encoding="utf-8")
    return open(path, "w", encoding="utf-8")


def main(evaluator_py: str, trajectory_file: str, result_json: str) -> None:
    not_dumpable()
    sys.path.insert(0, UTILS)
    from scoring import Result  # the compat module, from /utils

    progress = Progress(os.environ.get("RT_TAC_PROGRESS_FD"))
    sink = result_sink(os.environ.get("RT_TAC_RESULT_FD"), result_json)
    server = start_file_server(progress)
    try:
        evaluate(evaluator_py, trajectory_file, sink, progress, Result)
    except BaseException as e:
        progress.send(raised=type(e).__name__)
        raise
    finally:
        server.kill()
        server.wait()


def evaluate(evaluator_py, trajectory_file, sink, progress, Result):
    """The benchmark's eval.py: load, grade with the trajectory, check and write the result to `sink`."""
    instrument(progress)
    sys.addaudithook(progress.audit)
    spec = importlib.util.spec_from_file_location("evaluator", evaluator_py)
    module = importlib.util.module_from_spec(spec)
    sys.modules["evaluator"] = module
    spec.loader.exec_module(module)
    progress.send(started=True)
    with open(trajectory_file, encoding="utf-8") as f:
        trajectory = f.read()
    grade = module.grade_checkpoints
    params = inspect.signature(grade).parameters
    if params:
        progress.send(handed="trajectory")
    result = grade(trajectory=trajectory) if "trajectory" in params else grade(trajectory) if params else grade()
    if not isinstance(result, Result):
        raise TypeError(f"grade_checkpoints must return Result type, got {type(result)}")
    if not result.checkpoints:
        raise ValueError(f"Result must have at least one checkpoint, got {result}")
    with sink:
        json.dump(result.to_dict(), sink)


if __name__ == "__main__":
    main(*sys.argv[1:4])
