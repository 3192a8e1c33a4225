"""What each pipeline of a bash command shows, walking the command's chain.

Works from the command text and the file system only. `analyse` walks the chain (`cd dir &&` moves
the working directory, `f=x; cat $f` substitutes, `bash -c '...'` is parsed in turn, a `while read`
loop over an original file is unrolled) and gives one `Stream` per pipeline (what each command shows:
`command_output.py`); `attribution.py` then splits the output among them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tab.capture.command_output import NONE, SHELLS, Stream, command_stream
from tab.capture.command_table import WRAPPERS, command_name, selects_lines
from tab.capture.lexer import Command, Pipeline, parse, substitute
from tab.capture.workspace_files import Workspace

_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
MAX_LOOP_LINES = 200  # names a `while read` loop is unrolled over


def analyse(text: str, ws: Workspace) -> list[Stream]:
    """One stream per pipeline of the command text (`cd`, assignments and empty pipelines omitted)."""
    return _walk(parse(text), "", {}, ws, depth=0)


def _while_read(pipes: list[Pipeline], cwd: str | None, ws: Workspace) -> list[Pipeline]:
    """`while read f; do cat "$f"; done < list` → the body once per line of `list` (a file that was
    there at the start, so its names are the ones the loop read)."""
    out: list[Pipeline] = []
    i = 0
    while i < len(pipes):
        argv = pipes[i].commands[0].argv
        end = next((j for j in range(i + 1, len(pipes)) if not pipes[j].commands[0].argv
                    and pipes[j].commands[0].stdin_file), None)
        words = [w for w in argv[1:] if not w.startswith("-")]
        if len(pipes[i].commands) == 1 and argv[:1] == ["read"] and len(words) == 1 and end is not None:
            listed = ws.rel(pipes[end].commands[0].stdin_file or "", cwd)
            text = ws.text(listed) if listed and ws.originals and ws.originals.original(listed) else None
            names = [n.strip() for n in (text or "").split("\n") if n.strip()][:MAX_LOOP_LINES]
            out.extend(substitute(p, words[0], n, True) for n in names for p in pipes[i + 1 : end])
            i = end + 1
            continue
        out.append(pipes[i])
        i += 1
    return out


def _walk(pipes: list[Pipeline], cwd: str | None, env: dict[str, str], ws: Workspace, depth: int) -> list[Stream]:
    streams: list[Stream] = []
    for pipe in _while_read(pipes, cwd, ws):
        cmds = [_expand_vars(c, env) for c in pipe.commands]
        first = cmds[0].argv
        if len(cmds) == 1 and first and first[0] in ("cd", "pushd"):
            cwd = _cd(first[1:], cwd, ws)
            continue
        words = first[1:] if first[:1] == ["export"] else first
        if len(cmds) == 1 and words and all(_ASSIGN.match(w) for w in words):
            env.update(w.split("=", 1) for w in words)
            continue
        argv = _unwrap(cmds[0].argv)
        if len(cmds) == 1 and argv[:1] and command_name(argv[0]) in SHELLS and "-c" in argv and depth < 3:
            code = argv[argv.index("-c") + 1 : argv.index("-c") + 2]
            streams.extend(_walk(parse(code[0]) if code else [], cwd, env, ws, depth + 1))
            continue
        streams.append(_pipeline(cmds, cwd, ws))
    return streams


def _cd(args: list[str], cwd: str | None, ws: Workspace) -> str | None:
    target = next((a for a in args if not a.startswith("-")), None)
    if target is None or target == "~":
        return None
    if target == "-":
        return cwd
    return ws.dir(target, cwd) if cwd is not None or target.startswith("/") else None


def _expand_vars(cmd: Command, env: dict[str, str]) -> Command:
    if not env or not any("$" in w for w in cmd.argv):
        return cmd
    pattern = re.compile(r"\$(?:\{(\w+)\}|(\w+))")

    def sub(word: str) -> str:
        return pattern.sub(lambda m: env.get(m.group(1) or m.group(2), m.group(0)), word)

    return replace(cmd, argv=[sub(w) for w in cmd.argv])


def _unwrap(argv: list[str]) -> list[str]:
    """Drop `VAR=x` prefixes and wrappers (`timeout 10`, `sudo`, `env X=1`) before the real command."""
    argv = list(argv)
    while argv:
        if _ASSIGN.match(argv[0]):
            argv.pop(0)
            continue
        wrapper = WRAPPERS.get(command_name(argv[0]))
        if wrapper is None:
            break
        values, leading = wrapper
        i = 1
        while i < len(argv) and (argv[i].startswith("-") or _ASSIGN.match(argv[i])):
            i += 1 + (len(argv[i]) == 2 and argv[i][1:] in values)
        argv = argv[i + leading :]
    return argv


def _pipeline(cmds: list[Command], cwd: str | None, ws: Workspace) -> Stream:
    stream: Stream | None = None
    names: set[str] = set()
    for cmd in cmds:
        argv = _unwrap(cmd.argv)
        if not argv:
            if cmd.stdin_file and stream is None:  # `< f` alone shows nothing
                stream = NONE
            continue
        name = command_name(argv[0])
        names.add(name)
        piped = stream
        stream = command_stream(name, argv, cmd, stream, cwd, ws)
        if stream is piped and stream.verbatim and not selects_lines(name, argv):  # `| sed 's/450/9000/'`, `| tr`
            stream = replace(stream, verbatim=False)
    if stream is None or cmds[-1].stdout_to_file:
        stream = NONE
    return replace(stream, names=frozenset(names))

