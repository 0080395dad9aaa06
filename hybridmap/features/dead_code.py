"""Dead code: definitions nothing in the repository refers to (``hybridmap dead ROOT``).

A definition is **dead** when no file uses its name (outside the definition itself), and
**test-only** when only test files do. This pass is name-matched (``evidence: name-matched``,
``provenance: name-match``): a use of the name anywhere counts as a use of every definition of
it, so a dead function that shares its name with a used one is missed; but only the uses our
queries tag count (calls, imports, base classes, annotations, decorators), so a function only
handed over as a value looks dead. In hybrid mode :mod:`.dead_servers` asks a language server
for each candidate's references: ``evidence: resolved``, or the candidate is ``refuted``.

It is conservative on what other code may use from outside the repository: exported API is
left out and counted (``exported``), by each language's ``exported`` convention
(:mod:`hybridmap.languages.visibility`: its ``visibility`` unless it says otherwise; public
names of a Python package's ``__init__.py``, ``export``ed TypeScript/JavaScript, capitalised Go
names, ``pub`` Rust, ``public`` Java/C#/Swift, Kotlin and Scala unless ``private``...); so are
entry points and hooks a framework calls by name (``main``, dunder methods, tests, ``setUp``...).
Only functions, methods, classes and types are checked (variables and fields are too often read
by reflection or a template).
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from typing_extensions import TypedDict  # what pydantic reads MCP output schemas from (Python < 3.12)

from ..infra.sanitize import escape_path, safe_line
from ..languages.paths import is_test_path
from ..languages.visibility import is_public
from ..model import Diagnostic, DiagnosticJson, FileTags, Symbol

CHECKED_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait", "type", "macro"})
_ENTRY_NAMES = frozenset(
    {"main", "init", "setUp", "tearDown", "setUpClass", "tearDownClass", "setUpModule", "tearDownModule", "run"}
)
#: Languages whose definitions are entry points by nature (make targets, CMake functions).
_UNCHECKED_LANGUAGES = frozenset({"make", "cmake", "dockerfile"})


class DeadJson(TypedDict):
    path: str
    name: str
    kind: str
    line: int
    status: str
    evidence: str
    provenance: str
    used_by: list[str]


class DeadCodeJson(TypedDict):
    definitions: list[DeadJson]
    dead: int
    test_only: int
    checked: int
    exported: int
    resolved: int
    name_matched: int
    asked: int
    refuted: list[DeadJson]
    diagnostics: list[DiagnosticJson]
    truncated: bool
    """``definitions`` or ``refuted`` were cut at the limit asked (the counts never are)."""


@dataclass(frozen=True, slots=True)
class DeadDefinition:
    path: str
    name: str
    kind: str
    line: int
    """1-based line of the name."""
    status: str
    """``dead`` (nothing uses the name) or ``test-only`` (only test files do); ``used`` for a
    candidate a server refuted (:attr:`DeadCode.refuted`)."""
    used_by: tuple[str, ...] = ()
    """For ``test-only``: the test files using it; for ``used``: the files a server found using it."""
    provenance: str = "name-match"
    """``name-match``, or ``lsp:<server>`` for a server's references."""
    evidence: str = "name-matched"
    """``name-matched`` (a guess from names) or ``resolved`` (a server's references confirmed it)."""

    def to_json(self) -> DeadJson:
        return {
            "path": escape_path(self.path),
            "name": safe_line(self.name),
            "kind": self.kind,
            "line": self.line,
            "status": self.status,
            "evidence": self.evidence,
            "provenance": safe_line(self.provenance),
            "used_by": [escape_path(p) for p in self.used_by],
        }


@dataclass(frozen=True, slots=True)
class DeadCode:
    definitions: tuple[DeadDefinition, ...]
    checked: int
    """Definitions looked at (of :data:`CHECKED_KINDS`, neither exported nor an entry point)."""
    exported: int
    """Definitions left out as exported API."""
    refuted: tuple[DeadDefinition, ...] = ()
    """Name-matched candidates a server found used outside tests (status ``used``): not dead."""
    asked: int = 0
    """Candidates a server was asked about (hybrid mode)."""
    diagnostics: tuple[Diagnostic, ...] = ()
    """Why candidates stayed name-matched (a server failed, timed out, or a bound was reached)."""

    def to_json(self, *, under: str | None = None, limit: int | None = None) -> DeadCodeJson:
        """The JSON document; ``under`` lists only definitions in that file or directory and
        ``limit`` at most that many of each list. The counts are always the repository's."""

        def inside(found: tuple[DeadDefinition, ...]) -> list[DeadDefinition]:
            return [d for d in found if under is None or d.path == under or d.path.startswith(under + "/")]

        definitions, refuted = inside(self.definitions), inside(self.refuted)
        cut = limit is not None and (len(definitions) > limit or len(refuted) > limit)
        if limit is not None:
            definitions, refuted = definitions[:limit], refuted[:limit]
        return {
            "definitions": [d.to_json() for d in definitions],
            "dead": sum(1 for d in self.definitions if d.status == "dead"),
            "test_only": sum(1 for d in self.definitions if d.status == "test-only"),
            "checked": self.checked,
            "exported": self.exported,
            "resolved": sum(1 for d in self.definitions if d.evidence == "resolved"),
            "name_matched": sum(1 for d in self.definitions if d.evidence != "resolved"),
            "asked": self.asked,
            "refuted": [d.to_json() for d in refuted],
            "diagnostics": [
                {"path": escape_path(d.path), "kind": d.kind, "message": safe_line(d.message)} for d in self.diagnostics
            ],
            "truncated": cut,
        }


def users_by_name(tags: Mapping[str, FileTags]) -> dict[str, set[str]]:
    """identifier -> files using it, a definition's own name (a back-filled reference at the
    name's position) not counted as a use."""
    users: dict[str, set[str]] = defaultdict(set)
    for path, file_tags in tags.items():
        own = {(s.name_line, s.name_col) for s in file_tags.symbols}
        positions = array("I")
        positions.frombytes(file_tags.ref_positions)
        for i, name in enumerate(file_tags.ref_names):
            if (positions[2 * i], positions[2 * i + 1]) not in own:
                users[name].add(path)
    return users


def _entry_point(path: str, sym: Symbol) -> bool:
    name = sym.name
    return (
        name in _ENTRY_NAMES
        or (name.startswith("__") and name.endswith("__"))
        or name.lower().startswith("test")
        or is_test_path(path)
    )


def find_dead(
    tags: Mapping[str, FileTags], languages: Mapping[str, str], conventions: Mapping[str, str | None]
) -> DeadCode:
    """Dead and test-only definitions of ``tags`` (path -> tags; ``languages``: path -> language;
    ``conventions``: language -> its ``exported`` convention, from the registry)."""
    users = users_by_name(tags)
    found: list[DeadDefinition] = []
    checked = exported = 0
    for path in sorted(tags):
        language = languages.get(path, "")
        if language in _UNCHECKED_LANGUAGES:
            continue
        convention = conventions.get(language)
        symbols = tags[path].symbols
        for index, sym in enumerate(symbols):
            if sym.kind not in CHECKED_KINDS or _entry_point(path, sym):
                continue
            if is_public(convention, symbols, index, path):
                exported += 1
                continue
            checked += 1
            using = users.get(sym.name, set())
            if not using:
                found.append(DeadDefinition(path, sym.name, sym.kind, sym.name_line + 1, "dead"))
            elif all(is_test_path(p) for p in using):
                found.append(
                    DeadDefinition(path, sym.name, sym.kind, sym.name_line + 1, "test-only", tuple(sorted(using)))
                )
    return DeadCode(tuple(found), checked, exported)
