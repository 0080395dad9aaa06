"""Near-duplicate functions (``hybridmap clones ROOT``): AST shape hash plus MinHash/LSH.

Each function or method of at least ``clone_min_lines`` lines (and 30 syntax nodes) is parsed again with its
language's tree-sitter grammar and reduced to its **shape**: the types of its named syntax
nodes in order (``function_definition identifier parameters identifier block if_statement
comparison_operator ...``), so renaming variables, changing literals or comments does not change
it. Equal shapes are exact clones (``similarity`` 1.0). Otherwise the shape's 5-grams of node
types are MinHashed (datasketch, 128 permutations) and an LSH index at ``clone_similarity``
proposes candidate pairs, kept when their estimated Jaccard similarity reaches it. Pairs are
joined into groups (a clone of a clone is in the same group). Files are read through
:func:`.walk.read_source` like everything else (never outside the root).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired

from typing_extensions import TypedDict  # what pydantic reads MCP output schemas from (Python < 3.12)

from ..infra.sanitize import escape_path, safe_line
from ..languages.notebooks import NotebookError, cell_lines, is_notebook, read_notebook
from ..languages.registry import LanguageRegistry
from ..model import FileStatus, FileTags
from ..settings import Settings
from ..workspace.state import Progress
from ..workspace.walk import read_source

FUNCTION_KINDS = frozenset({"function", "method", "constructor"})
SHINGLE = 5
#: Shapes smaller than this are not compared: a stub (a docstring and ``pass``, a one-line
#: delegation) has the same shape as every other stub.
MIN_SHAPE_NODES = 30
_SKIPPED = frozenset({"comment", "line_comment", "block_comment", "string_content", "string_start", "string_end"})
PERMUTATIONS = 128


class CloneMemberJson(TypedDict):
    path: str
    name: str
    line: int
    end_line: int
    cell: NotRequired[int]


class CloneGroupJson(TypedDict):
    similarity: float
    exact: bool
    members: list[CloneMemberJson]


class ClonesJson(TypedDict):
    groups: list[CloneGroupJson]
    total: int
    """Groups found (``groups`` lists at most the limit asked, largest first)."""


@dataclass(frozen=True, slots=True)
class CloneMember:
    path: str
    name: str
    line: int
    end_line: int
    cell: int = 0
    """A notebook's function: its 1-based cell, and ``line``/``end_line`` count within it."""

    def to_json(self) -> CloneMemberJson:
        out: CloneMemberJson = {
            "path": escape_path(self.path),
            "name": safe_line(self.name),
            "line": self.line,
            "end_line": self.end_line,
        }
        if self.cell:
            out["cell"] = self.cell
        return out


@dataclass(frozen=True, slots=True)
class CloneGroup:
    members: tuple[CloneMember, ...]
    similarity: float
    """The lowest estimated similarity of a pair that joined the group (1.0: same shape)."""
    exact: bool

    def to_json(self) -> CloneGroupJson:
        return {
            "similarity": round(self.similarity, 3),
            "exact": self.exact,
            "members": [m.to_json() for m in self.members],
        }


def _shape(node: Any) -> list[str]:
    out: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.is_named and current.type not in _SKIPPED:
            out.append(current.type)
        stack.extend(reversed(current.children))
    return out


def function_shapes(
    root: Path,
    tags: Mapping[str, FileTags],
    languages: Mapping[str, str],
    registry: LanguageRegistry,
    settings: Settings,
    progress: Progress | None = None,
) -> list[tuple[CloneMember, list[str]]]:
    """(function, shape) of every function long enough, file by file (``progress("clones",
    files done, files)`` after each file: this re-parses the repository)."""
    out: list[tuple[CloneMember, list[str]]] = []
    paths = sorted(tags)
    for done, path in enumerate(paths):
        if progress is not None:
            progress("clones", done, len(paths))
        wanted = [
            s
            for s in tags[path].symbols
            if s.kind in FUNCTION_KINDS and s.span.end_line - s.span.start_line + 1 >= settings.clone_min_lines
        ]
        language = languages.get(path)
        if not wanted or language is None:
            continue
        source = _source(root, path, language, settings)
        if source is None:
            continue
        tree = registry.compiled(language).parser.parse(source)
        cells = tags[path].cells
        for sym in wanted:
            sp = sym.span
            node = tree.root_node.descendant_for_point_range((sp.start_line, sp.start_col), (sp.end_line, sp.end_col))
            if node is None:
                continue
            shape = _shape(node)
            if len(shape) >= MIN_SHAPE_NODES:
                cell, line, end = cell_lines(cells, sym.name_line, sp.end_line)
                out.append((CloneMember(path, sym.name, line + 1, end + 1, cell), shape))
    if progress is not None:
        progress("clones", len(paths), len(paths))
    return out


def _source(root: Path, path: str, language: str, settings: Settings) -> bytes | None:
    """The source the tags were made from: the file's bytes, or a notebook's code cells (the
    positions of its tags are in those, not in its JSON); None when it cannot be read now."""
    read = read_source(root, path, settings)
    if read.status is not FileStatus.OK:
        return None
    if not is_notebook(path):
        return read.data
    try:
        return read_notebook(read.data, language).source
    except NotebookError:
        return None


def find_clones(shapes: list[tuple[CloneMember, list[str]]], threshold: float) -> tuple[CloneGroup, ...]:
    """Groups of functions whose shapes are equal or similar at ``threshold`` or more."""
    from datasketch import MinHash, MinHashLSH  # type: ignore[import-untyped]

    parent = list(range(len(shapes)))
    similarity = [1.0] * len(shapes)
    exact = [True] * len(shapes)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int, value: float) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[b] = a
        similarity[a] = min(similarity[a], similarity[b], value)
        exact[a] = exact[a] and exact[b] and value == 1.0

    by_hash: dict[str, int] = {}
    hashes: list[MinHash] = []
    # 1.0 means the same shape only; datasketch's LSH cannot be banded for it.
    lsh = MinHashLSH(threshold=min(threshold, 0.95), num_perm=PERMUTATIONS) if threshold < 1.0 else None
    for i, (_, shape) in enumerate(shapes):
        digest = hashlib.sha256("\0".join(shape).encode()).hexdigest()
        minhash = MinHash(num_perm=PERMUTATIONS)
        for k in range(max(1, len(shape) - SHINGLE + 1)):
            minhash.update(" ".join(shape[k : k + SHINGLE]).encode())
        hashes.append(minhash)
        if digest in by_hash:
            join(by_hash[digest], i, 1.0)
            continue
        by_hash[digest] = i
        if lsh is None:
            continue
        for key in lsh.query(minhash):
            value = minhash.jaccard(hashes[key])
            if value >= threshold:
                join(key, i, min(value, 0.999))
        lsh.insert(i, minhash)
    groups: dict[int, list[int]] = {}
    for i in range(len(shapes)):
        groups.setdefault(find(i), []).append(i)
    out = [
        CloneGroup(tuple(shapes[i][0] for i in members), similarity[head], exact[head])
        for head, members in groups.items()
        if len(members) > 1
    ]
    return tuple(sorted(out, key=lambda g: (-len(g.members), -g.similarity, g.members[0].path, g.members[0].line)))


def clones_json(groups: Sequence[CloneGroup], limit: int | None = None) -> ClonesJson:
    """The JSON document of ``groups`` (largest first), at most ``limit`` of them listed."""
    shown = groups if limit is None else groups[:limit]
    return {"groups": [g.to_json() for g in shown], "total": len(groups)}
