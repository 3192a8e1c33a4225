"""A small bash lexer: command text → pipelines of commands (words, redirections, heredoc bodies).

It never runs anything. It knows what capture needs: quotes, `|`, `&&`, `||`, `;`, newlines,
redirections (with fd prefixes such as `2>&1`), heredocs, comments, `$(...)` kept as one word, and
`for VAR in WORDS; do ...; done` unrolled with the words substituted. Anything else (functions,
`while read`, arithmetic) passes through as plain words that name no file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time"})
_HEREDOC_DELIM = re.compile(r"[ \t]*(['\"]?)([^\s'\";|&<>()]+)\1")
MAX_UNROLL = 200


@dataclass
class Command:
    argv: list[str] = field(default_factory=list)
    quoted: list[bool] = field(default_factory=list)  # a quoted word is not glob-expanded by the shell
    redirects: list[tuple[str, str]] = field(default_factory=list)  # (operator with fd, target)
    heredoc: str | None = None

    @property
    def stdout_to_file(self) -> bool:
        """True when this command's standard output goes to a file instead of the agent's screen."""
        return any(op in (">", ">>", ">|", "1>", "1>>", "&>", "&>>") and t not in ("/dev/stdout", "/dev/tty")
                   for op, t in self.redirects)

    @property
    def stdin_file(self) -> str | None:
        return next((t for op, t in self.redirects if op in ("<", "0<")), None)


@dataclass
class Pipeline:
    commands: list[Command]


def parse(text: str) -> list[Pipeline]:
    """The command text as a list of pipelines (separated by `;`, `&&`, `||`, `&`, newlines)."""
    pipes = (_strip_keywords(p) for p in _unroll_loops(_Lexer(text).run()))
    return [p for p in pipes if p.commands]


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s, self.i = text, 0
        self.out: list[Pipeline] = []
        self.pipe: list[Command] = []
        self.cmd = Command()
        self.buf: list[str] = []
        self.in_word = self.word_quoted = False
        self.redirect: str | None = None
        self.heredocs: list[tuple[Command, str, bool]] = []

    def run(self) -> list[Pipeline]:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in " \t\r":
                self.end_word()
                self.i += 1
            elif c == "\n":
                self.end_pipeline()
                self.i += 1
                self.read_heredocs()
            elif c == "\\":
                if s[self.i + 1 : self.i + 2] == "\n":
                    self.i += 2
                else:
                    self.add(s[self.i + 1 : self.i + 2], quoted=True)
                    self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                end = n if end < 0 else end
                self.add(s[self.i + 1 : end], quoted=True)
                self.i = end + 1
            elif c == '"':
                self.double_quoted()
            elif c == "#" and not self.in_word:
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            elif (c == "$" and s[self.i + 1 : self.i + 2] == "(") or c == "`":
                self.substitution()
            elif c in "|&;()<>":
                self.operator()
            else:
                self.add(c)
                self.i += 1
        self.end_pipeline()
        return self.out

    def add(self, text: str, quoted: bool = False) -> None:
        self.buf.append(text)
        self.in_word = True
        self.word_quoted = self.word_quoted or quoted

    def double_quoted(self) -> None:
        s, j, chars = self.s, self.i + 1, []
        while j < len(s) and s[j] != '"':
            if s[j] == "\\" and s[j + 1 : j + 2] in ('"', "\\", "$", "`"):
                chars.append(s[j + 1])
                j += 2
            else:
                chars.append(s[j])
                j += 1
        self.add("".join(chars), quoted=True)
        self.i = j + 1

    def substitution(self) -> None:
        """`$(...)` or a backquoted command: kept verbatim inside the current word."""
        s, start = self.s, self.i
        if s[start] == "`":
            end = s.find("`", start + 1)
            end = len(s) - 1 if end < 0 else end
        else:
            depth, end = 0, start + 1
            while end < len(s):
                depth += {"(": 1, ")": -1}.get(s[end], 0)
                if depth == 0:
                    break
                end += 1
        self.add(s[start : end + 1], quoted=True)
        self.i = end + 1

    def operator(self) -> None:
        s, i = self.s, self.i
        two, three = s[i : i + 2], s[i : i + 3]
        if s[i] in "<>":
            fd = ""
            if self.in_word and not self.word_quoted and "".join(self.buf).isdigit():
                fd, self.buf, self.in_word = "".join(self.buf), [], False
            else:
                self.end_word()
            if two == "<<" and three != "<<<":
                i += 2
                strip = s[i : i + 1] == "-"
                i += strip
                m = _HEREDOC_DELIM.match(s, i)
                if m:
                    self.heredocs.append((self.cmd, m.group(2), strip))
                    i = m.end()
                self.i = i
                return
            op = next(o for o in ("<<<", ">>", ">&", ">|", "<&", "<>", "<", ">") if s.startswith(o, i))
            self.redirect, self.i = fd + op, i + len(op)
            return
        self.end_word()
        if s.startswith("&>", i):
            op = "&>>" if three == "&>>" else "&>"
            self.redirect, self.i = op, i + len(op)
        elif two in ("&&", "||"):
            self.end_pipeline()
            self.i += 2
        elif two == "|&" or s[i] == "|":
            self.end_command()
            self.i += 2 if two == "|&" else 1
        else:  # ; & ( )
            self.end_pipeline()
            self.i += 1

    def end_word(self) -> None:
        if not self.in_word:
            return
        word = "".join(self.buf)
        if self.redirect:
            self.cmd.redirects.append((self.redirect, word))
            self.redirect = None
        else:
            self.cmd.argv.append(word)
            self.cmd.quoted.append(self.word_quoted)
        self.buf, self.in_word, self.word_quoted = [], False, False

    def end_command(self) -> None:
        self.end_word()
        if self.cmd.argv or self.cmd.redirects or self.cmd.heredoc is not None:
            self.pipe.append(self.cmd)
        self.cmd = Command()
        self.redirect = None

    def end_pipeline(self) -> None:
        self.end_command()
        if self.pipe:
            self.out.append(Pipeline(self.pipe))
        self.pipe = []

    def read_heredocs(self) -> None:
        """After a newline, the bodies of the heredocs opened on the previous line."""
        s = self.s
        for cmd, delim, strip in self.heredocs:
            body: list[str] = []
            while self.i < len(s):
                end = s.find("\n", self.i)
                end = len(s) if end < 0 else end
                line = s[self.i : end]
                self.i = end + 1
                if (line.lstrip("\t") if strip else line) == delim:
                    break
                body.append(line)
            cmd.heredoc = "\n".join(body) if cmd.heredoc is None else cmd.heredoc + "\n" + "\n".join(body)
        self.heredocs = []


def _strip_keywords(pipe: Pipeline) -> Pipeline:
    """`then cat f`, `do grep x f` → the command itself; empty commands (a lone `done`) disappear."""
    commands = []
    for cmd in pipe.commands:
        k = _keywords(cmd, ())
        if k:
            cmd = Command(cmd.argv[k:], cmd.quoted[k:], cmd.redirects, cmd.heredoc)
        if cmd.argv or cmd.heredoc is not None or cmd.redirects:
            commands.append(cmd)
    return Pipeline(commands)


def _keywords(cmd: Command, keep: tuple[str, ...]) -> int:
    """How many leading words of a command are shell keywords (other than those in `keep`)."""
    k = 0
    while k < len(cmd.argv) and cmd.argv[k] in KEYWORDS and cmd.argv[k] not in keep and not cmd.quoted[k]:
        k += 1
    return k


def _first_words(pipe: Pipeline) -> list[str]:
    if not pipe.commands:
        return []
    cmd = pipe.commands[0]
    return cmd.argv[_keywords(cmd, ("done",)) :]


def _unroll_loops(pipes: list[Pipeline]) -> list[Pipeline]:
    """`for f in a b; do cat "$f"; done` → `cat a; cat b` (the words are substituted, not expanded)."""
    out: list[Pipeline] = []
    i = 0
    while i < len(pipes):
        head = _first_words(pipes[i])
        if len(head) < 3 or head[0] != "for" or head[2] != "in":
            out.append(pipes[i])
            i += 1
            continue
        cmd = pipes[i].commands[0]
        skip = len(cmd.argv) - len(head)
        depth, j = 1, i + 1
        while j < len(pipes) and depth:
            first = _first_words(pipes[j])[:1]
            depth += first in (["for"], ["while"], ["until"])
            depth -= first == ["done"]
            j += 1
        body = _unroll_loops(pipes[i + 1 : j - 1] if depth == 0 else pipes[i + 1 : j])
        words = list(zip(cmd.argv[skip + 3 :], cmd.quoted[skip + 3 :], strict=True))[:MAX_UNROLL]
        for word, quoted in words:
            out.extend(substitute(p, head[1], word, quoted) for p in body)
        i = j
    return out


def substitute(pipe: Pipeline, var: str, value: str, quoted: bool) -> Pipeline:
    pattern = re.compile(r"\$(?:\{" + re.escape(var) + r"\}|" + re.escape(var) + r"\b)")
    commands = []
    for cmd in pipe.commands:
        argv, flags = [], []
        for word, q in zip(cmd.argv, cmd.quoted, strict=True):
            new = pattern.sub(lambda _m: value, word)
            argv.append(new)
            flags.append(quoted if new != word else q)
        redirects = [(op, pattern.sub(lambda _m: value, t)) for op, t in cmd.redirects]
        commands.append(Command(argv, flags, redirects, cmd.heredoc))
    return Pipeline(commands)
