"""The bulk guard of the rule checks: a deliverable that reproduces many workspace files is a dump,
not an answer, and fails the checks that read its content.

A task draws on a handful of files; a script that pastes every workspace file into the output
contains every value a `contains`, `order`, `headings` or `row` check looks for. What sets such a
dump apart from an honest deliverable that quotes its sources (a manual compiled verbatim from four
policy files) is how many files it reproduces:

- text is read as 8-word sequences (lower case, letters and digits only, so markup, tabs and csv
  quoting do not matter);
- a workspace file's *distinctive* sequences are those that occur in at most 2 workspace files
  (boilerplate shared by many files, such as a standard disclaimer, is not evidence of copying one);
- a file is *reproduced* when at least half of its distinctive sequences occur in the deliverable
  (files with fewer than 10 distinctive sequences are not counted: too short to tell);
- the checks fail when the files they read reproduce more than `max_copied_files` workspace files
  (default 20).

On the built-in suites a dump of the workspace reproduces every countable file (110 to 185); the
reference solutions reproduce at most 4. The workspace's index is built once per process and
workspace (keyed by every file's path, size and mtime) and bounded (`MAX_INDEX_FILES` files,
`MAX_FILE_CHARS` characters each, `MAX_INDEX_SEQUENCES` sequences in all, in path order); files past
those bounds are not counted.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from eval.config import ExtractLimits
from eval.judges.extract.read import extract_file

SEQUENCE_WORDS = 8
MAX_SHARED_FILES = 2
COPIED_SHARE = 0.5
MIN_SEQUENCES = 10
MAX_COPIED_FILES = 20
MAX_INDEX_FILES = 10_000
MAX_FILE_CHARS = 1_000_000
MAX_INDEX_SEQUENCES = 1_000_000
_WORD = re.compile(r"[^\W_]+")
_CHUNK = 1 << 20


def sequences(text: str) -> Iterator[int]:
    """Hashes of the text's 8-word sequences, read in chunks cut at white space (a large text is
    never normalized whole)."""
    window: deque[str] = deque(maxlen=SEQUENCE_WORDS)
    pos, n = 0, len(text)
    while pos < n:
        end = min(pos + _CHUNK, n)
        cut = max(text.rfind(c, pos, end) for c in " \n\t") if end < n else -1
        if cut > pos:
            end = cut
        for m in _WORD.finditer(unicodedata.normalize("NFKC", text[pos:end]).lower()):
            window.append(m.group())
            if len(window) == SEQUENCE_WORDS:
                yield hash(tuple(window))
        pos = end


@dataclass(frozen=True)
class WorkspaceIndex:
    """The distinctive sequences of each countable workspace file, and all of them together."""

    files: dict[str, array]
    known: frozenset[int]

    def copied(self, text: str) -> list[str]:
        """The workspace files that `text` reproduces (see the module docstring), in path order."""
        seen = {h for h in sequences(text) if h in self.known}
        return [rel for rel, seqs in self.files.items() if sum(h in seen for h in seqs) >= COPIED_SHARE * len(seqs)]


def workspace_index(originals: dict[str, Path]) -> WorkspaceIndex:
    """The index of these workspace files (cached while no file changes path, size or mtime)."""
    key = []
    for rel, path in sorted(originals.items())[:MAX_INDEX_FILES]:
        try:
            st = path.stat()
        except OSError:
            continue
        key.append((rel, str(path), st.st_size, st.st_mtime_ns))
    return _build(tuple(key))


def _text(path: Path) -> str:
    """A workspace file's text (the task's own, not the agent's: read in this process, within the bounds)."""
    return extract_file(path.parent, path.name, ExtractLimits()).text


@lru_cache(maxsize=2)
def _build(files: tuple[tuple[str, str, int, int], ...]) -> WorkspaceIndex:
    per_file: dict[str, set[int]] = {}
    total = 0
    for rel, path, _size, _mtime in files:
        seqs = set(sequences(_text(Path(path))[:MAX_FILE_CHARS]))
        if total + len(seqs) > MAX_INDEX_SEQUENCES:
            break
        per_file[rel], total = seqs, total + len(seqs)
    shared = Counter(h for seqs in per_file.values() for h in seqs)
    index = {}
    for rel, seqs in per_file.items():
        own = [h for h in seqs if shared[h] <= MAX_SHARED_FILES]
        if len(own) >= MIN_SEQUENCES:
            index[rel] = array("q", own)
    return WorkspaceIndex(index, frozenset(h for seqs in index.values() for h in seqs))
