"""Jupyter notebooks (``.ipynb``) as sources: their code cells, and positions as cell and line.

A notebook is JSON (nbformat 4): ``cells``, each with a ``cell_type`` and a ``source`` (a string
or a list of strings), and ``metadata`` naming the kernel's language. :func:`read_notebook`
concatenates the code cells' sources into one virtual source in that language, which the
tree-sitter pipeline parses like any file, and keeps where each cell starts in it
(:class:`Notebook.cells`); :func:`cell_position` maps a virtual line back to (cell, line).

A notebook is untrusted input. It is read with the standard library's JSON decoder, bounded by
``max_notebook_bytes`` before it is read; only the code cells' sources, ``cell_type`` and the two
metadata fields naming the language are looked at: outputs, attachments and cell metadata never
reach the map. Anything that is not a well-formed nbformat 4 notebook (malformed JSON, nesting
deeper than the decoder allows, a code cell whose source is not text) raises
:class:`NotebookError` (the caller turns it into a diagnostic).

Pure: bytes in, a :class:`Notebook` out.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Collection
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


# --- reading the JSON -------------------------------------------------------------------------


def _scan(data: bytes, with_cells: bool) -> tuple[str, list[tuple[int, str]], int]:
    """(language, [(cell number, source)] of code cells, number of cells).

    The standard library's decoder reads the whole document (``max_notebook_bytes`` bounds it: a
    20 MB notebook of plots costs about 40 MB more while it is read, in 0.05 s); outputs,
    attachments and metadata are decoded with it but never looked at. A hand-written scanner that
    skipped them was tried and measured slower (0.19 s on the same file) for that memory, so the
    kept library stays. Nesting deeper than the decoder allows is an unreadable notebook."""
    try:
        document = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError) as exc:
        raise NotebookError(f"not a readable notebook: {str(exc)[:120]}") from exc
    if not isinstance(document, dict):
        raise NotebookError("not a notebook: the top level is not an object")
    if "worksheets" in document:
        raise NotebookError("an nbformat 3 notebook (worksheets): only nbformat 4 is read")
    cells = document.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("not a notebook: no 'cells'")
    language = _metadata_language(document.get("metadata"))
    code: list[tuple[int, str]] = []
    if with_cells:
        for number, cell in enumerate(cells, start=1):
            source = _code(cell)
            if source is not None:
                code.append((number, source))
    return language or DEFAULT_LANGUAGE, code, len(cells)


def _code(cell: object) -> str | None:
    """The source of a code cell (a string, or a list of strings); None for any other cell."""
    if not isinstance(cell, dict) or cell.get("cell_type") != "code":
        return None
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise NotebookError("not a readable notebook: a code cell's source is not text")


def _metadata_language(metadata: object) -> str:
    """``kernelspec.language``, else ``language_info.name``; "" when neither is there."""
    if not isinstance(metadata, dict):
        return ""
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        inner = metadata.get(key)
        if isinstance(inner, dict) and isinstance(inner.get(field), str) and inner[field]:
            return str(inner[field])
    return ""
