"""Jupyter notebooks (``.ipynb``) as sources: their code cells, and positions as cell and line.

A notebook is JSON (nbformat 4): ``cells``, each with a ``cell_type`` and a ``source`` (a string
or a list of strings), and ``metadata`` naming the kernel's language. :func:`read_notebook`
concatenates the code cells' sources into one virtual source in that language, which the
tree-sitter pipeline parses like any file, and keeps where each cell starts in it
(:class:`Notebook.cells`); :func:`cell_position` maps a virtual line back to (cell, line).

A notebook is untrusted input. The scanner here reads the structure with a bracket counter and
regular expressions, never recursing, so nesting depth costs nothing; it decodes only the
strings it needs (the code cells' sources, ``cell_type`` and the two metadata fields naming
the language): outputs, attachments and cell metadata are skipped as bytes, never decoded.
Anything that is not well-formed JSON where the scanner has to look raises
:class:`NotebookError` (the caller turns it into a diagnostic).

Pure: bytes in, a :class:`Notebook` out.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass

#: The suffix of a notebook's file name (case-insensitive).
SUFFIX = ".ipynb"
#: The language of a notebook whose metadata names none (nbformat's default kernel is IPython).
DEFAULT_LANGUAGE = "python"
#: Bumped when the virtual source of the same notebook bytes changes (part of its cache key).
FORMAT_VERSION = 1

#: Kernel language names (``kernelspec.language``, ``language_info.name``, lower-cased) that are
#: not the registry's name of the language.
_ALIASES = {
    "python2": "python",
    "python3": "python",
    "ipython": "python",
    "c++": "cpp",
    "c++11": "cpp",
    "c++14": "cpp",
    "c++17": "cpp",
    "c++20": "cpp",
    "c#": "csharp",
    "f#": "fsharp",
    "sh": "bash",
    "shell": "bash",
    "js": "javascript",
    "node": "javascript",
    "nodejs": "javascript",
    "ts": "typescript",
}

#: An IPython line that is not Python: a line magic (``%time``), a shell escape (``!pip
#: install``), either assigned (``files = !ls``), or help (``?name``, ``name??``). Not a line that
#: continues an expression: ``% x)`` (string formatting), ``!= b`` (a comparison).
_MAGIC = re.compile(r"^\s*(?:%{1,2}[A-Za-z_]|!(?!=)|[\w.]+\s*=\s*(?:%[A-Za-z_]|!(?!=))|\?|[\w.]+\?{1,2}\s*$)")
#: Cell magics whose body is Python: only their first line is blanked (``%%bash``'s body is not).
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})


class NotebookError(ValueError):
    """The bytes are not a notebook we can read (malformed JSON where we looked, wrong shape)."""


@dataclass(frozen=True, slots=True)
class Notebook:
    """A notebook's code, as one virtual source."""

    language: str
    """The kernel's language, lower-cased and aliased (``python``, ``r``, ``cpp``...)."""
    source: bytes
    """The code cells' sources, in order, each ending with a newline; magics blanked (Python)."""
    cells: tuple[tuple[int, int], ...]
    """(first 0-based line in :attr:`source`, 1-based cell number among all cells) per code cell."""
    total_cells: int = 0


def is_notebook(path: str) -> bool:
    """Whether ``path`` names a notebook (by its suffix, in any case)."""
    return path[-len(SUFFIX) :].lower() == SUFFIX


def cell_position(cells: tuple[tuple[int, int], ...], line: int) -> tuple[int, int]:
    """(1-based cell number, 0-based line within the cell) of the virtual source's 0-based
    ``line``; (0, line) when ``cells`` is empty (not a notebook)."""
    if not cells:
        return 0, line
    index = max(0, bisect.bisect_right(cells, (line, 1 << 62)) - 1)
    first, number = cells[index]
    return number, max(0, line - first)


def cell_lines(cells: tuple[tuple[int, int], ...], line: int, end: int) -> tuple[int, int, int]:
    """(1-based cell number, 0-based line, 0-based end line) of a definition at the virtual
    source's ``line`` to ``end``, both within its cell (``end`` stops at the cell's last line,
    and is never before ``line``); (0, line, end) when ``cells`` is empty (not a notebook)."""
    if not cells:
        return 0, line, max(line, end)
    index = max(0, bisect.bisect_right(cells, (line, 1 << 62)) - 1)
    first, number = cells[index]
    if index + 1 < len(cells):
        end = min(end, cells[index + 1][0] - 1)
    return number, max(0, line - first), max(0, max(line, end) - first)


def kernel_language(data: bytes) -> str:
    """The notebook's language (:data:`DEFAULT_LANGUAGE` when its metadata names none), read
    without decoding any cell; :class:`NotebookError` when the top level is not readable."""
    return _scan(data, with_cells=False)[0]


def read_notebook(data: bytes, language: str = "") -> Notebook:
    """The code cells of ``data`` as one virtual source in ``language`` (a registry's name; the
    kernel's, through :func:`resolve_language`, when not given); IPython's magics are blanked
    when it is Python."""
    kernel, cells, total = _scan(data, with_cells=True)
    language = language or resolve_language(kernel, ())
    python = language == "python"
    parts: list[str] = []
    starts: list[tuple[int, int]] = []
    line = 0
    for number, text in cells:
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", " ")
        if not text.endswith("\n"):
            text += "\n"
        if python:
            text = blank_magics(text)
        starts.append((line, number))
        parts.append(text)
        line += text.count("\n")
    source = "".join(parts).encode("utf-8", "replace")  # a lone surrogate from JSON becomes "?"
    return Notebook(language, source, tuple(starts), total)


def resolve_language(name: str, languages: Collection[str]) -> str:
    """``name`` as the registry spells it when it has it (``R`` -> ``r``, ``C++17`` -> ``cpp``);
    else ``name`` lower-cased."""
    lowered = name.strip().lower()
    if lowered in languages:
        return lowered
    return _ALIASES.get(lowered, lowered)


def blank_magics(text: str) -> str:
    """IPython's own syntax blanked, line ends kept: a cell whose first line is a cell magic
    (``%%bash``: the rest is another language) is blanked whole, but for the magics whose body
    is Python (``%%time``: its first line only); other magic lines one by one."""
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in _PYTHON_CELL_MAGICS:
            return "\n" * (len(lines) - 1)
    return "\n".join("" if _MAGIC.search(line) else line for line in lines)


# --- the scanner -----------------------------------------------------------------------------

_WS = re.compile(rb"[ \t\r\n]*")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SCALAR = re.compile(rb"-?[0-9][0-9.eE+-]*|true|false|null")
_NEXT = re.compile(rb'["\[\]{}]')
_CLOSER = {ord("{"): ord("}"), ord("["): ord("]")}


class _Scanner:
    """A cursor over JSON bytes that reads only what it is asked for and skips the rest."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def fail(self, what: str) -> NotebookError:
        return NotebookError(f"not a readable notebook: {what} at byte {self.pos}")

    def peek(self) -> int:
        self.pos = _WS.match(self.data, self.pos).end()  # type: ignore[union-attr]  # always matches
        if self.pos >= len(self.data):
            raise self.fail("unexpected end")
        return self.data[self.pos]

    def expect(self, char: bytes) -> None:
        if self.peek() != char[0]:
            raise self.fail(f"expected {char.decode()!r}")
        self.pos += 1

    def string_span(self) -> tuple[int, int]:
        if self.peek() != ord('"'):
            raise self.fail("expected a string")
        match = _STRING.match(self.data, self.pos)
        if match is None:
            raise self.fail("unterminated string")
        self.pos = match.end()
        return match.span()

    def string(self) -> str:
        return decode_string(self.data, self.string_span())

    def skip(self) -> None:
        """Skip one value without decoding it (a bracket stack, no recursion)."""
        head = self.peek()
        if head == ord('"'):
            self.string_span()
            return
        if head not in _CLOSER:
            match = _SCALAR.match(self.data, self.pos)
            if match is None:
                raise self.fail("expected a value")
            self.pos = match.end()
            return
        stack = bytearray([_CLOSER[head]])
        self.pos += 1
        while stack:
            found = _NEXT.search(self.data, self.pos)
            if found is None:
                raise self.fail("unclosed bracket")
            self.pos = found.start()
            char = self.data[self.pos]
            if char == ord('"'):
                self.string_span()
            elif char in _CLOSER:
                stack.append(_CLOSER[char])
                self.pos += 1
            elif char == stack[-1]:
                stack.pop()
                self.pos += 1
            else:
                raise self.fail("mismatched bracket")

    def members(self) -> Iterator[str]:
        """The keys of an object, one at a time; the caller reads or skips each value."""
        self.expect(b"{")
        if self.peek() == ord("}"):
            self.pos += 1
            return
        while True:
            key = self.string()
            self.expect(b":")
            yield key
            if self.peek() == ord(","):
                self.pos += 1
                continue
            self.expect(b"}")
            return

    def items(self) -> Iterator[None]:
        """The elements of an array, one at a time; the caller reads or skips each."""
        self.expect(b"[")
        if self.peek() == ord("]"):
            self.pos += 1
            return
        while True:
            yield None
            if self.peek() == ord(","):
                self.pos += 1
                continue
            self.expect(b"]")
            return


def decode_string(data: bytes, span: tuple[int, int]) -> str:
    try:
        value = json.loads(data[span[0] : span[1]])
    except (ValueError, RecursionError) as exc:
        raise NotebookError(f"not a readable notebook: bad string at byte {span[0]}") from exc
    if not isinstance(value, str):  # pragma: no cover - the span is a string literal
        raise NotebookError("not a readable notebook: bad string")
    return value


def _scan(data: bytes, with_cells: bool) -> tuple[str, list[tuple[int, str]], int]:
    """(language, [(cell number, source)] of code cells, number of cells)."""
    scan = _Scanner(data)
    language = ""
    cells: list[tuple[int, str]] = []
    total = 0
    seen_cells = False
    for key in scan.members():
        if key == "cells":
            seen_cells = True
            if not with_cells:
                scan.skip()
                continue
            for _ in scan.items():
                total += 1
                code = _cell(scan)
                if code is not None:
                    cells.append((total, code))
        elif key == "metadata":
            language = _metadata_language(scan) or language
        elif key == "worksheets":
            raise NotebookError("an nbformat 3 notebook (worksheets): only nbformat 4 is read")
        else:
            scan.skip()
    if scan.pos < len(data) and _WS.match(data, scan.pos).end() != len(data):  # type: ignore[union-attr]
        raise scan.fail("data after the notebook")
    if not seen_cells:
        raise NotebookError("not a notebook: no 'cells'")
    return language or DEFAULT_LANGUAGE, cells, total


def _cell(scan: _Scanner) -> str | None:
    """The source of a code cell; None for any other cell (its source is never decoded)."""
    cell_type = ""
    source: list[tuple[int, int]] | None = None
    for key in scan.members():
        if key == "cell_type":
            cell_type = scan.string()
        elif key == "source":
            if scan.peek() == ord("["):
                source = []
                for _ in scan.items():
                    source.append(scan.string_span())
            else:
                source = [scan.string_span()]
        else:
            scan.skip()  # outputs, attachments, metadata, execution_count, id
    if cell_type != "code" or not source:
        return None
    return "".join(decode_string(scan.data, span) for span in source)


def _metadata_language(scan: _Scanner) -> str:
    """``kernelspec.language``, else ``language_info.name``; "" when neither is there."""
    found: dict[str, str] = {}
    if scan.peek() != ord("{"):
        scan.skip()
        return ""
    for key in scan.members():
        wanted = {"kernelspec": "language", "language_info": "name"}.get(key)
        if wanted is None or scan.peek() != ord("{"):
            scan.skip()
            continue
        for inner in scan.members():
            if inner == wanted and scan.peek() == ord('"'):
                found[key] = scan.string()
            else:
                scan.skip()
    return found.get("kernelspec") or found.get("language_info") or ""
