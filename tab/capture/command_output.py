"""What one command of a pipeline shows (`Stream`): the content of which files, matches, a listing, or nothing.

Decided from the command table (`command_table.py`) and the file system; the special commands
(find, tree, echo/printf, xargs, python, shells, curl and wget of a server in the sandbox) each
have a function here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tab.capture.command_table import SPECS, Spec, command_name, split_args
from tab.capture.lexer import Command
from tab.capture.workspace_files import GLOB_CHARS, Workspace

_STRING = re.compile(r"""(['"])((?:\\.|(?!\1)[^\\\n])*)\1""")
SHELLS = ("bash", "sh", "zsh", "dash")
MAX_SCRIPT_CHARS = 200_000
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
    verbatim: bool = False  # a converter's own output, passed on only by commands that keep lines unchanged


NONE = Stream("none")


def _words(argv: list[str], cmd: Command, indices: list[int]) -> list[str]:
    """Operands (by index into argv[1:]) plus a `< file` redirection."""
    words = [argv[1 + i] for i in indices if argv[1 + i] != "-"]
    return words + ([cmd.stdin_file] if cmd.stdin_file else [])


def command_stream(name: str, argv: list[str], cmd: Command, up: Stream | None, cwd: str | None, ws: Workspace) -> Stream:
    """What command `name` (its wrappers removed) shows, given what the pipe brings it (`up`)."""
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
    return Stream("content", cwd, files, verbatim=True) if to_stdout and files else NONE


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
            return command_stream(module, [module, *args[i + 2 :]], cmd, up, cwd, ws)
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
    # a script given several files may head each with `==> path <==` (as head does): a marker, checked like any line
    return Stream("content" if files else "none", cwd, files, markers=len(files) > 1)


def _shell(argv, cmd, up, cwd, ws) -> Stream:
    return NONE  # `bash -c '...'` alone is parsed by _walk; a script file shows nothing recordable


# curl's options that take a value, and those after which it prints something other than the file
_CURL = Spec("special", values="uXHdoTAeEFmrwzbcKxYyQtCDUhP",
             long_values=("--user", "--request", "--header", "--data", "--data-binary", "--data-raw", "--data-urlencode",
                          "--output", "--upload-file", "--user-agent", "--referer", "--form", "--max-time", "--range",
                          "--write-out", "--cookie", "--cookie-jar", "--config", "--proxy", "--connect-timeout",
                          "--retry", "--output-dir"))
_CURL_ELSEWHERE = ("-o", "--output", "-O", "--remote-name", "-T", "--upload-file", "-d", "--data", "--data-binary",
                   "--data-raw", "--data-urlencode", "-F", "--form", "-I", "--head", "-J", "--remote-header-name")


def _curl(argv, cmd, up, cwd, ws) -> Stream:
    """`curl URL` of a server in the sandbox prints the file it serves (a GET to stdout)."""
    opts, operands, _ = split_args(_CURL, argv[1:])
    method = next((v for o, v in zip(argv, argv[1:], strict=False) if o in ("-X", "--request")), "GET")
    if any(o in opts for o in _CURL_ELSEWHERE) or method.upper() != "GET":
        return NONE
    files = [f for i in operands if (f := ws.file(argv[1 + i], cwd))]
    return Stream("content", cwd, files) if files else NONE


def _wget(argv, cmd, up, cwd, ws) -> Stream:
    """`wget -O - URL` (`-qO-`) prints the file; without `-O -` wget saves it and prints nothing of it."""
    out, words, i = None, [], 1
    while i < len(argv):
        a = argv[i]
        if a in ("-O", "--output-document"):
            out, i = (argv[i + 1] if i + 1 < len(argv) else None), i + 2
            continue
        if a.startswith("--output-document="):
            out = a.split("=", 1)[1]
        elif a.startswith("-") and not a.startswith("--") and "O" in a:
            rest = a[a.index("O") + 1 :]
            out, i = (rest, i) if rest else ((argv[i + 1] if i + 1 < len(argv) else None), i + 1)
        elif not a.startswith("-"):
            words.append(a)
        i += 1
    files = [f for w in words if (f := ws.file(w, cwd))] if out == "-" else []
    return Stream("content", cwd, files) if files else NONE


_SPECIAL = {
    "find": _find, "tree": _tree, "echo": _echo, "printf": _echo, "xargs": _xargs, "python": _python,
    "curl": _curl, "wget": _wget, **{s: _shell for s in SHELLS},
}
