"""The table of command forms the capture knows: one `Spec` per command name.

A new command form is one entry here. A spec says what the command's output is:
- `content`: the content of its file operands (cat, head, sed, awk ...); with no operand it filters
  what it is piped (`cat f | grep x` keeps showing f);
- `search`: matching lines that may say which file they come from (`path:line:text`);
- `listing`: file names (ls, du ...); `convert`: the text of a document (pdftotext FILE -);
- `filter`: passes what it is piped through (tr, tee); `drop`: prints something else (wc, md5sum);
- `special`: handled by a function in `command_output.py` (find, tree, python, xargs, echo, shells,
  curl and wget: a URL a server in the sandbox serves is the file it serves).
Unknown commands print nothing the tab records.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spec:
    kind: str
    values: str = ""  # short options that take a value (`-n 20`)
    long_values: tuple[str, ...] = ()  # whole options that take a separate value (`--lines 20`, `-enc x`)
    leading: int = 0  # operands before the files: a pattern, a script, a program
    supplies: str = ""  # short options that supply the leading operand instead (`grep -e PAT`)
    long_supplies: tuple[str, ...] = ()
    modes: tuple[tuple[str, str], ...] = ()  # an option that changes the kind (`grep -l` → listing)
    headers: bool = False  # with several files it prints `==> path <==` before each
    stdout: bool = True  # convert: writes to stdout unless an output operand other than '-' is given
    out_opts: tuple[str, ...] = ()  # convert/sort: options that send the output to a file

    def mode(self, opts: list[str]) -> str:
        for opt, kind in self.modes:
            if opt in opts:
                return kind
        return self.kind


_GREP_LONG = ("--regexp", "--file", "--max-count", "--after-context", "--before-context", "--context",
              "--include", "--exclude", "--exclude-dir", "--label", "--devices", "--directories")
_GREP = Spec(
    "search", values="efmABCdD", long_values=_GREP_LONG, leading=1, supplies="ef",
    long_supplies=("--regexp", "--file"),
    modes=(("-l", "listing"), ("--files-with-matches", "listing"), ("-L", "listing"),
           ("--files-without-match", "listing"), ("-c", "drop"), ("--count", "drop"), ("-q", "drop"),
           ("--quiet", "drop"), ("--silent", "drop")),
)
_RG = Spec(
    "search", values="efgtTmABCMjrEd",
    long_values=("--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count",
                 "--after-context", "--before-context", "--context", "--max-depth", "--replace",
                 "--max-columns", "--threads", "--sort", "--sortr", "--encoding", "--pre", "--type-add",
                 "--max-filesize", "--colors", "--context-separator", "--field-match-separator"),
    leading=1, supplies="ef", long_supplies=("--regexp", "--file"),
    modes=(("--files", "listing"), ("-l", "listing"), ("--files-with-matches", "listing"),
           ("--files-without-match", "listing"), ("-c", "drop"), ("--count", "drop"),
           ("--count-matches", "drop"), ("-q", "drop"), ("--quiet", "drop")),
)
_SED = Spec("content", values="efl", leading=1, supplies="ef", long_supplies=("--expression", "--file"),
            long_values=("--expression", "--file", "--line-length"),
            modes=(("-i", "drop"), ("--in-place", "drop")))
_AWK = Spec("content", values="Fvf", leading=1, supplies="f", long_supplies=("--file",),
            long_values=("--field-separator", "--assign", "--file"))
_PDFTOTEXT_VALUES = ("-f", "-l", "-r", "-x", "-y", "-W", "-H", "-opw", "-upw", "-enc", "-eol")

SPECS: dict[str, Spec] = {
    # content of the named files (or a filter when piped)
    "cat": Spec("content"),
    "tac": Spec("content"),
    "nl": Spec("content", values="bdfhilnsvw"),
    "head": Spec("content", values="nc", long_values=("--lines", "--bytes"), headers=True),
    "tail": Spec("content", values="ncs", long_values=("--lines", "--bytes", "--sleep-interval"), headers=True),
    "less": Spec("content", values="bhjkoOpPtTxyz", headers=True),
    "more": Spec("content", values="n", headers=True),
    "bat": Spec("content", values="lrHmp", long_values=("--language", "--line-range", "--highlight-line")),
    "batcat": Spec("content", values="lrHmp", long_values=("--language", "--line-range", "--highlight-line")),
    "sed": _SED,
    "awk": _AWK, "gawk": _AWK, "mawk": _AWK, "nawk": _AWK,
    "perl": Spec("content", values="eEIM", leading=1, supplies="eE"),
    "cut": Spec("content", values="bcdf", long_values=("--delimiter", "--fields", "--bytes", "--characters")),
    "sort": Spec("content", values="ktoST", long_values=("--key", "--field-separator", "--output"),
                 out_opts=("-o", "--output")),
    "uniq": Spec("content", values="fsw"),
    "column": Spec("content", values="cstnoNRHOWEd"),
    "fold": Spec("content", values="w"),
    "fmt": Spec("content", values="wpg"),
    "rev": Spec("content"),
    "strings": Spec("content", values="ntTe"),
    "jq": Spec("content", leading=1, long_values=("--arg", "--argjson", "--slurpfile", "--rawfile", "--indent")),
    "iconv": Spec("content", values="ftco", long_values=("--from-code", "--to-code", "--output"),
                  out_opts=("-o", "--output")),
    "diff": Spec("content", values="CUDIFLSx", long_values=("--label", "--ignore-matching-lines")),
    "paste": Spec("content", values="d"),
    "expand": Spec("content", values="t"),
    # search
    "grep": _GREP, "egrep": _GREP, "fgrep": _GREP, "zgrep": _GREP,
    "rg": _RG,
    "ag": Spec("search", values="GABCmg", leading=1, modes=(("-l", "listing"), ("-c", "drop"))),
    "ack": Spec("search", values="ABCm", leading=1, modes=(("-l", "listing"), ("-c", "drop"))),
    # listings
    "ls": Spec("listing", values="IwT", long_values=("--hide", "--ignore", "--width", "--tabsize")),
    "dir": Spec("listing"),
    "du": Spec("listing", values="dBt", long_values=("--max-depth", "--exclude", "--threshold")),
    "fd": Spec("listing", values="etdEjx", leading=1,
               long_values=("--extension", "--type", "--max-depth", "--exclude", "--exec", "--threads")),
    "fdfind": Spec("listing", values="etdEjx", leading=1),
    # documents converted to text
    "pdftotext": Spec("convert", long_values=_PDFTOTEXT_VALUES, stdout=False),
    "docx2txt": Spec("convert"),
    "markitdown": Spec("convert", values="oxm", long_values=("--output", "--extension", "--mime-type"),
                       out_opts=("-o", "--output")),
    "pandoc": Spec("convert", values="oftr", long_values=("--output", "--from", "--to", "--read", "--write"),
                   out_opts=("-o", "--output")),
    "xlsx2csv": Spec("convert", values="sdnlqiEIP", long_values=("--sheet", "--delimiter", "--sheetname")),
    "in2csv": Spec("convert", values="fsdqeKS", long_values=("--format", "--sheet", "--encoding")),
    "catdoc": Spec("convert", values="dsmw"),
    "antiword": Spec("convert", values="mw"),
    "odt2txt": Spec("convert", long_values=("--output", "--encoding", "--width"), out_opts=("--output",)),
    "pdf2txt": Spec("convert", values="opmt", out_opts=("-o",)),
    "pdf2txt.py": Spec("convert", values="opmt", out_opts=("-o",)),
    # pass-through filters and commands that print something other than the content
    "tr": Spec("filter"),
    "tee": Spec("filter"),
    "wc": Spec("drop"),
    "md5sum": Spec("drop"), "sha1sum": Spec("drop"), "sha256sum": Spec("drop"), "cksum": Spec("drop"),
    "base64": Spec("drop"), "xxd": Spec("drop"), "od": Spec("drop"), "hexdump": Spec("drop"),
    "file": Spec("drop"), "stat": Spec("drop"),
    # handled in command_output.py
    **{name: Spec("special") for name in ("find", "tree", "echo", "printf", "xargs", "python", "bash", "sh",
                                            "zsh", "dash", "curl", "wget")},
}

# Commands that run the command after their own options: `timeout 10 cat f`, `sudo grep ...`.
WRAPPERS: dict[str, tuple[str, int]] = {  # name → (short options taking a value, leading operands)
    "timeout": ("sk", 1), "sudo": ("ugCDhpRrt", 0), "nice": ("n", 0), "nohup": ("", 0),
    "command": ("", 0), "builtin": ("", 0), "exec": ("a", 0), "stdbuf": ("ioe", 0), "env": ("uCS", 0),
    "time": ("fo", 0), "ionice": ("cnp", 0),
}


def command_name(word: str) -> str:
    """`/usr/bin/python3.11` → `python`; `./cat` stays `./cat` (a script of the agent's, not cat)."""
    if word.startswith("./"):
        return word
    name = word.rsplit("/", 1)[-1]
    if name.startswith("python"):
        return "python"
    return name


# Commands that pass on some of the lines they are piped, each unchanged, with the options that keep
# it so: after a converter they leave its output its own text (`pdftotext f - | grep -i hotel`).
_LINE_OPTS = frozenset({"-n", "--lines"})
_GREP_KEEPS = frozenset("-i -v -E -F -G -P -w -x -e -f -A -B -C -s -a -y --ignore-case --invert-match --regexp --file "
                        "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --word-regexp --line-regexp "
                        "--after-context --before-context --context --no-messages --text".split())
LINE_SELECTORS: dict[str, frozenset[str]] = {
    "grep": _GREP_KEEPS, "egrep": _GREP_KEEPS, "fgrep": _GREP_KEEPS, "head": _LINE_OPTS, "tail": _LINE_OPTS,
    "cat": frozenset(), "tee": frozenset({"-a", "--append"}),
    "sort": frozenset("-r -u -f -b -d -i -n -V -g -M -h -s -k -t --reverse --unique".split()),
    "uniq": frozenset({"-i", "-u", "-d"}),
}


def selects_lines(name: str, argv: list[str]) -> bool:
    """Whether the command passes on lines it is piped unchanged (some of them, in some order)."""
    keeps = LINE_SELECTORS.get(name)
    if keeps is None:
        return False
    opts, _, _ = split_args(SPECS[name], argv[1:])
    return all(o in keeps or (name in ("head", "tail") and o[1:].isdigit()) for o in opts)


def split_args(spec: Spec, args: list[str]) -> tuple[list[str], list[int], bool]:
    """Options seen, indices of operands, and whether an option supplied the leading operand."""
    opts: list[str] = []
    operands: list[int] = []
    supplied = False
    i, ended = 0, False
    while i < len(args):
        a = args[i]
        if ended or a == "-" or not a.startswith("-") or len(a) == 1:
            operands.append(i)
        elif a == "--":
            ended = True
        elif a.startswith("--") or a.split("=", 1)[0] in spec.long_values:
            name, eq, _ = a.partition("=")
            opts.append(name)
            supplied = supplied or name in spec.long_supplies
            if not eq and name in spec.long_values:
                i += 1
        else:
            for k, ch in enumerate(a[1:], 1):
                opts.append("-" + ch)
                supplied = supplied or ch in spec.supplies
                if ch in spec.values:
                    i += k == len(a) - 1
                    break
        i += 1
    return opts, operands, supplied
