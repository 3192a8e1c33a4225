"""What each pipeline of a bash command shows: the content of which files, matches, or a listing.

Works from the command text and the file system only. `analyse` walks the chain (`cd dir &&` moves
the working directory, `f=x; cat $f` substitutes, `bash -c '...'` is parsed in turn) and gives one
`Stream` per pipeline; `tab/attribute.py` then splits the output among them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tab.commands import SPECS, WRAPPERS, Spec, command_name, split_args
from tab.shell import Command, Pipeline, parse, substitute
from tab.workspace import GLOB_CHARS, Workspace

_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_STRING = re.compile(r"""(['"])((?:\\.|(?!\1)[^\\\n])*)\1""")
_SHELLS = ("bash", "sh", "zsh", "dash")
MAX_SCRIPT_CHARS = 200_000
MAX_LOOP_LINES = 200  # names a `while read` loop is unrolled over
MAX_FOUND = 200  # files a `find | xargs cat` may have shown, compared against its output


@dataclass
class Stream:
    kind: str  # content | search | listing | none
    cwd: str | None = ""
    files: list[str] = field(default_factory=list)  # files whose content the output shows
    bases: list[str] = field(default_factory=list)  # listing: folders the names may be relative to
    markers: bool = False  # lines may say which file they come from
    tree: bool = False
    names: frozenset[str] = frozenset()  # command names (their error lines are not content)
    roots: list[str] = field(default_factory=list)  # find: the folders it searched


NONE = Stream("none")


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
            text = ws.text(listed) if listed and ws.manifest and ws.manifest.original(listed) else None
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
        if len(cmds) == 1 and argv[:1] and command_name(argv[0]) in _SHELLS and "-c" in argv and depth < 3:
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
        stream = _command(name, argv, cmd, stream, cwd, ws)
    if stream is None or cmds[-1].stdout_to_file:
        stream = NONE
    return replace(stream, names=frozenset(names))


def _words(argv: list[str], cmd: Command, indices: list[int]) -> list[str]:
    """Operands (by index into argv[1:]) plus a `< file` redirection."""
    words = [argv[1 + i] for i in indices if argv[1 + i] != "-"]
    return words + ([cmd.stdin_file] if cmd.stdin_file else [])


def _command(name: str, argv: list[str], cmd: Command, up: Stream | None, cwd: str | None, ws: Workspace) -> Stream:
    spec = SPECS.get(name)
    if spec is None:
        return NONE
    if spec.kind == "special":
        return _SPECIAL[name](argv, cmd, up, cwd, ws)
    opts, operands, supplied = split_args(spec, argv[1:])
    kind = spec.mode(opts)
    if kind == "drop" or any(o in opts for o in spec.out_opts):
        return NONE
    if kind == "filter":
        return up or NONE
    if kind == "listing":
        if name == "rg":  # `rg --files [dirs]`, `rg -l PATTERN [dirs]`
            operands = operands if "--files" in opts else operands[0 if supplied else 1 :]
        elif not supplied:
            operands = operands[spec.leading :]
        return _listing(_words(argv, cmd, operands), cwd, ws)
    if kind == "convert":
        return _convert(spec, argv, cmd, operands, cwd, ws)
    operands = operands[0 if supplied else spec.leading :]
    words = _words(argv, cmd, operands)
    if kind == "search":
        return _search(name, opts, words, up, cwd, ws)
    if not words:
        return up if up is not None else NONE
    files = ws.files(words, cwd)
    return Stream("content", cwd, files, markers=spec.headers and len(files) > 1) if files else NONE


def _listing(words: list[str], cwd: str | None, ws: Workspace, tree: bool = False) -> Stream:
    dirs = [d for w in words for e in ws.expand(w, cwd) if (d := ws.dir(e, cwd)) is not None]
    return Stream("listing", cwd, bases=dirs, tree=tree)


def _search(name: str, opts: list[str], words: list[str], up: Stream | None, cwd: str | None, ws: Workspace) -> Stream:
    recursive = name in ("rg", "ag", "ack") or any(o in opts for o in ("-r", "-R", "--recursive"))
    if not words:
        if up is not None:
            return up
        return Stream("search", cwd, markers=True) if recursive else NONE
    files = ws.files(words, cwd)
    dirs = [w for w in words if ws.dir(w, cwd) is not None]
    if not files and not dirs:
        return NONE
    # A single file is searched without the `path:` prefix unless -H asks for it.
    prefixed = recursive or dirs or len(files) > 1 or any(o in opts for o in ("-H", "--with-filename"))
    no_prefix = any(o in opts for o in ("-h", "--no-filename")) and name != "rg"
    return Stream("search", cwd, files, markers=bool(prefixed) and not no_prefix)


def _convert(spec: Spec, argv: list[str], cmd: Command, operands: list[int], cwd: str | None, ws: Workspace) -> Stream:
    words = [argv[1 + i] for i in operands]
    if len(words) > 1:
        to_stdout = words[1] == "-"
    else:
        to_stdout = spec.stdout
    files = ws.files(words[:1] or ([cmd.stdin_file] if cmd.stdin_file else []), cwd)
    return Stream("content", cwd, files) if to_stdout and files else NONE


# --- special commands ---

def _find(argv, cmd, up, cwd, ws) -> Stream:
    args = argv[1:]
    starts = []
    for a in args:
        if a.startswith(("-", "(", "!")):
            break
        starts.append(a)
    if any(a in ("-delete", "-fprint", "-fprintf", "-fls") for a in args):
        return NONE
    for flag in ("-exec", "-execdir", "-ok", "-okdir"):
        if flag in args:
            inner = args[args.index(flag) + 1 :]
            kind = SPECS.get(command_name(inner[0]), Spec("none")).kind if inner else "none"
            if kind == "content" and not SPECS[command_name(inner[0])].headers:
                return Stream("content", cwd, _found(starts, cwd, ws))
            if kind in ("search", "content"):
                return Stream("search", cwd, markers=True)
            if kind != "listing":
                return NONE
    # find prints paths from the working directory (the start point included)
    listing = _listing(starts, cwd, ws)
    return replace(listing, bases=[cwd] if cwd is not None else [], roots=listing.bases or [cwd or ""])


def _found(starts: list[str], cwd: str | None, ws: Workspace) -> list[str]:
    """The files a find over these start points may reach (those there at the start)."""
    dirs = [d for w in starts or ["."] if (d := ws.dir(w, cwd)) is not None]
    return ws.under(dirs, MAX_FOUND)


def _tree(argv, cmd, up, cwd, ws) -> Stream:
    opts, operands, _ = split_args(Spec("listing", values="LIPo", long_values=("--filelimit",)), argv[1:])
    if "-o" in opts:
        return NONE
    stream = _listing(_words(argv, cmd, operands), cwd, ws, tree=True)
    return replace(stream, bases=stream.bases or [cwd or ""])


def _echo(argv, cmd, up, cwd, ws) -> Stream:
    globbed = any(GLOB_CHARS.intersection(w) and not q for w, q in zip(argv[1:], cmd.quoted[1:], strict=False))
    return Stream("listing", cwd) if globbed else NONE


def _xargs(argv, cmd, up, cwd, ws) -> Stream:
    spec = Spec("special", values="nILPdEsa", long_values=("--max-args", "--replace", "--delimiter"))
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 1 + (len(argv[i]) == 2 and argv[i][1] in spec.values)
    inner = argv[i:] or ["echo"]
    kind = SPECS.get(command_name(inner[0]), Spec("none")).kind
    if kind == "content" and not SPECS[command_name(inner[0])].headers and up is not None and up.roots:
        return Stream("content", cwd, ws.under(up.roots, MAX_FOUND))
    if kind == "search" or (kind == "content" and SPECS[command_name(inner[0])].headers):
        return Stream("search", cwd, markers=True)
    if kind == "listing" or inner[0] == "echo":
        return Stream("listing", cwd)
    return NONE


def _python(argv, cmd, up, cwd, ws) -> Stream:
    args, code, operands = argv[1:], None, []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-c":
            code, operands = (args[i + 1] if i + 1 < len(args) else ""), args[i + 2 :]
            break
        if a == "-m" and i + 1 < len(args):
            module = args[i + 1].split(".")[0]
            spec = SPECS.get(module)
            if spec is None or spec.kind == "special":
                return NONE
            return _command(module, [module, *args[i + 2 :]], cmd, up, cwd, ws)
        if a == "-":
            code, operands = cmd.heredoc, args[i + 1 :]
            break
        if not a.startswith("-"):
            script = ws.rel(a, cwd)  # the agent's own script may sit in an excluded folder
            code = ws.text(script) if script else None
            operands = args[i + 1 :]
            break
        i += 1 + (a in ("-W", "-X"))
    if code is None:
        code = cmd.heredoc or next((t for op, t in cmd.redirects if op == "<<<"), None)
    literals = [m.group(2) for m in _STRING.finditer((code or "")[:MAX_SCRIPT_CHARS])]
    files = ws.files([w for w in literals + operands if w and "\n" not in w], cwd)
    return Stream("content", cwd, files) if files else NONE


def _shell(argv, cmd, up, cwd, ws) -> Stream:
    return NONE  # `bash -c '...'` alone is parsed by _walk; a script file shows nothing recordable


_SPECIAL = {
    "find": _find, "tree": _tree, "echo": _echo, "printf": _echo, "xargs": _xargs, "python": _python,
    **{s: _shell for s in _SHELLS},
}
