"""Derivation policies: edges derived from what the sources resolved, each under its own name. Pure.

A source that resolves names (a language server, a SCIP index) says where a use points; its
edges carry its name (``lsp``, ``scip``). Some relations the map wants follow from those answers
without being them, and are derived here, once, after every source has been merged
(:func:`apply_policies`, called by :class:`hybridmap.pipeline.build.MapBuilder`):

- ``header-definition``: a use resolved to a C/C++ function *prototype* in a header also
  reaches the file that defines the function with a body (clangd without a background index
  stops at the prototype, and the edits go where the body is);
- ``own-header``: a C/C++ source file's use of its own function (the server answers with the
  body in the same file) also reaches the headers the file includes that declare it: the
  file's interface, edited with it (``lexer.c`` -> ``lexer.h``).

Every derived edge respects **linkage** and the **include relation** (``docs/policies.md``):

- a C/C++ function with internal linkage (``static`` before its name at file or namespace
  scope, or anything inside an anonymous namespace) is never a derived target;
- a source file reaches only headers it includes, directly or through other headers
  (``#include`` paths resolved as :meth:`_Repo.include` says);
- a definition is a ``header-definition`` target only if its file includes the header, or,
  when no defining file does, if it is the only definition with external linkage.

With ``name_match_linkage`` on, linkage also restricts the *name-matched* edges the graph
would add for uses no source resolved: a C/C++ file-local definition is a candidate only in its
own file (and, for a header, in the files that include it), a Go unexported name only in its
own package (directory). Such a pair is handed to the graph as resolved, with the surviving
candidates under the ``name-match`` provenance. Policies produce no targets for other
languages, so no other linkage rule is needed here (a Python name is imported, a TypeScript
one exported: the servers resolve those).

Facts per file (includes, functions, file-local names) are memoized by the identity of the
file's tags (``memo``), so a warm map pays only for the pairs it derives from.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..infra.patched import changed_keys
from ..languages.paths import is_c_family, is_c_header, is_c_source
from ..model import REFERENCE_KIND_CODES, STAR_IMPORT, FileTags, Pair, Provenance, ResolvedEdges, Symbol
from ..settings import Settings
from .import_targets import ImportTargets
from .merge import Merged
from .python_imports import ImportsOutside

HEADER_DEFINITION = "header-definition"
"""A use resolved to a header prototype, extended to the function's defining file."""
OWN_HEADER = "own-header"
"""A source file's use of its own function, extended to the included headers declaring it."""

#: Where an include not found beside the including file or at the root is looked for (what
#: build files most often pass as -I), before a unique repository file with that path suffix.
INCLUDE_DIRS = ("include", "inc", "src", "lib")

_FUNCTION_KINDS = frozenset({"function", "method"})
_CLASS_KINDS = frozenset({"class", "struct", "interface"})
#: Kinds that have linkage of their own at file or namespace scope.
_LINKAGE_KINDS = frozenset({"function", "method", "variable"})
#: The name the C++ query gives an anonymous namespace (its keyword).
_ANONYMOUS_NAMESPACE = "namespace"
#: The C/C++ queries tag an ``#include`` as a module reference named by its path.
_INCLUDE_KIND = REFERENCE_KIND_CODES.index("module")
_STATIC = re.compile(r"\bstatic\b")
_SCOPE = re.compile(r"(\w+)\s*::\s*~?\w+\s*\($")


@dataclass(frozen=True, slots=True)
class Function:
    """A C/C++ function or method as the policies see it."""

    body: bool
    """A definition (else a prototype: the declaration ends with ``;`` before any ``{``)."""
    local: bool
    """Internal linkage: never a target from another file."""
    symbol: Symbol = field(repr=False)
    symbols: tuple[Symbol, ...] = field(repr=False, compare=False)
    """Its file's symbols (its parents among them)."""

    @property
    def owner(self) -> str:
        """The class it belongs to (enclosing class, or ``Owner`` of an out-of-line
        ``Owner::name``); "" if free. Read when a derivation compares two (a server resolved a
        use to a prototype): a regular expression per function for every C/C++ file of every
        map was 0.7 s of a one-shot map at 100,000 files, mostly never asked."""
        return _owner(self.symbol, self.symbols)


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What the policies read from one file's tags."""

    includes: tuple[str, ...] = ()
    """Raw ``#include`` paths (``<...>`` for system-style ones), in file order."""
    functions: Mapping[str, tuple[Function, ...]] = field(default_factory=dict)
    local_names: frozenset[str] = frozenset()
    """Names every definition of which here is file-local (C/C++) or package-local (Go)."""
    names: tuple[str, ...] = ()
    """Every name the file defines (what name matching makes it a candidate for), once each.
    Tuples, not sets: the rules meet them with one small set each, and 100,000 files' sets of
    names and uses were 157 MB of a one-shot map's peak (tuples: about a fifth)."""
    refs: tuple[str, ...] = ()
    """Every name the file uses, once each."""
    imports: Mapping[str, str] = field(default_factory=dict)
    """Name as the file uses it -> the module its import statement names (Python, TypeScript,
    JavaScript, Java: :attr:`hybridmap.model.FileTags.imports` but star imports)."""
    stars: tuple[str, ...] = ()
    """The modules of its star imports (``from m import *``, ``export * from 'm'``)."""


@dataclass
class FactsMemo:
    """The facts of the tags last read: what :func:`file_facts` reuses."""

    tags: Mapping[str, FileTags] | None = None
    facts: dict[str, FileFacts] = field(default_factory=dict)
    """Per path of :attr:`tags`, in their order."""
    changed: Sequence[str] | None = None
    """The paths whose tags moved at the last call (None: not known, every file may have)."""
    before: Mapping[str, FileFacts] | None = None
    """The facts :attr:`changed` is relative to (the call before's)."""


@dataclass
class PolicyMemo:
    """What the policies keep between merges of one repository (its owner: the map builder)."""

    facts: FactsMemo = field(default_factory=FactsMemo)
    imports_outside: ImportsOutside = field(default_factory=ImportsOutside)
    import_targets: ImportTargets = field(default_factory=ImportTargets)


def apply_policies(merged: Merged, settings: Settings, memo: PolicyMemo | None = None) -> Merged:
    """``merged`` with the derived edges added to its resolved pairs (see the module docstring).

    ``memo`` keeps per-file facts between calls; it is left holding exactly the current files."""
    restricts = settings.name_match_linkage or settings.name_match_imports or settings.name_match_import_files
    if not merged.resolved and not restricts:
        return merged  # nothing resolved to derive from, nothing to restrict: no facts to read
    facts = file_facts(merged.tags, memo.facts if memo is not None else None)
    if not any(f.functions or f.local_names or f.imports or f.stars for f in facts.values()):
        return merged  # no C/C++ or Go definitions, no imports: nothing to derive or restrict
    repo = _Repo(merged.tags, facts)
    resolved = derive(merged.resolved, repo, settings.prototype_yields_to_definition)
    if settings.name_match_linkage:
        resolved.update(restrict_name_matches(resolved, repo, settings.max_definers_per_ident))
    hint = (memo.facts.before, memo.facts.changed) if memo is not None else None  # for the kept rules
    if settings.name_match_imports:
        outside = memo.imports_outside if memo is not None else ImportsOutside()
        resolved.update(external_imports(resolved, repo, outside, hint))
    if settings.name_match_import_files:
        targets = memo.import_targets if memo is not None else ImportTargets()
        resolved.update(imported_from_files(resolved, repo, targets, hint))
    return dataclasses.replace(merged, resolved=resolved)


def external_imports(
    resolved: Mapping[Pair, Mapping[str, str]],
    repo: _Repo,
    outside: ImportsOutside,
    hint: tuple[Mapping[str, FileFacts] | None, Sequence[str] | None] | None = None,
) -> ResolvedEdges:
    """Python uses of a name the file imports from a module that is not in the repository
    (``from typing import Any``): no name-matched edge to a repository file that happens to
    define ``Any`` (:mod:`hybridmap.pipeline.python_imports`). Handed to the graph as resolved to
    nothing; pairs a source resolved stay. ``hint``: the facts before and the paths changed
    since (:attr:`FactsMemo.changed`)."""
    since, changed = hint if hint is not None else (None, None)
    return {pair: {} for pair in outside.pairs(repo.facts, changed, since) if pair not in resolved}


def imported_from_files(
    resolved: Mapping[Pair, Mapping[str, str]],
    repo: _Repo,
    targets: ImportTargets,
    hint: tuple[Mapping[str, FileFacts] | None, Sequence[str] | None] | None = None,
) -> ResolvedEdges:
    """Uses of a name the file imports from a specific repository file (``from .console import
    Console``, ``import { Console } from './console'``): linked to the files that define it there
    (:mod:`hybridmap.pipeline.import_targets`), under the ``name-match`` provenance; pairs a
    source resolved, or an earlier rule restricted, stay."""
    since, changed = hint if hint is not None else (None, None)
    found = targets.pairs(repo.facts, changed, since)
    # The rule's own mappings, shared among pairs: the graph reads them, nothing changes them.
    return {pair: files for pair, files in found.items() if pair not in resolved}


def file_facts(tags: Mapping[str, FileTags], memo: FactsMemo | None = None) -> dict[str, FileFacts]:
    """Each file's :class:`FileFacts`, in ``tags``' order, reusing those ``memo`` read from the same
    tags object. After an edit only the changed paths are looked at (:func:`changed_keys`), the
    last facts copied (a pass over every file was 115 ms of an edit's map at 100,000 files)."""
    if memo is None:
        return {path: read_facts(path, file_tags) for path, file_tags in tags.items()}
    last, known = memo.tags, memo.facts
    if last is tags:
        memo.changed, memo.before = (), known
        return known
    changed = changed_keys(last, tags) if last is not None else None
    if changed is not None and all(path in known or path not in tags for path in changed):
        # Edits and removals: the order stays that of ``tags`` (a patch keeps a path's place).
        out = dict(known)
        for path in changed:
            file_tags = tags.get(path)
            if file_tags is None:
                out.pop(path, None)
            else:
                out[path] = read_facts(path, file_tags)
    else:
        before = last or {}
        out = {
            path: known[path] if before.get(path) is file_tags else read_facts(path, file_tags)
            for path, file_tags in tags.items()
        }
    memo.tags, memo.facts, memo.changed, memo.before = tags, out, changed, known
    return out


def read_facts(path: str, tags: FileTags) -> FileFacts:
    """One file's facts: C/C++ includes and functions, C/C++ and Go file-local names."""
    names = tuple(dict.fromkeys(s.name for s in tags.symbols))
    refs = tuple(dict.fromkeys(tags.ref_names))
    if path.endswith(".go"):
        # Go: a name is exported iff it starts with an upper-case letter; otherwise it is visible
        # in its package (the directory) only.
        unexported = frozenset(name for name in names if name and not name[0].isupper())
        return FileFacts(local_names=unexported, names=names, refs=refs)
    if not is_c_family(path):
        imports = tags.imports
        if not any(name == STAR_IMPORT for name, _ in imports):
            return FileFacts(names=names, refs=refs, imports=dict(imports))
        stars = tuple(dict.fromkeys(module for name, module in imports if name == STAR_IMPORT))
        named = {name: module for name, module in imports if name != STAR_IMPORT}
        return FileFacts(names=names, refs=refs, imports=named, stars=stars)
    kinds = tags.ref_kinds
    includes = tuple(n for i, n in enumerate(tags.ref_names) if kinds[i] == _INCLUDE_KIND and _is_path(n))
    symbols = tags.symbols
    functions: dict[str, list[Function]] = {}
    local: dict[str, bool] = {}
    for sym in symbols:
        file_local = sym.kind in _LINKAGE_KINDS and _internal_linkage(sym, symbols)
        local[sym.name] = local.get(sym.name, True) and file_local
        if sym.kind in _FUNCTION_KINDS:
            functions.setdefault(sym.name, []).append(Function(_has_body(sym), file_local, sym, symbols))
    return FileFacts(
        includes,
        {name: tuple(found) for name, found in functions.items()},
        frozenset(name for name, only_local in local.items() if only_local),
        names,
        refs,
    )


def _is_path(name: str) -> bool:
    # The C++ query also tags `using ns::Name;` as a module reference: an identifier, never a path.
    return name.startswith("<") or "." in name or "/" in name


def _call_position(sym: Symbol) -> int:
    """Where the symbol's name (followed by its parameter list, for a function) starts in its signature."""
    text, name = sym.signature, sym.name
    first = -1
    start = text.find(name)
    while start >= 0:  # str.find, not a regex per symbol: a cold map reads every C/C++ symbol
        end = start + len(name)
        if (start == 0 or not _is_word(text[start - 1])) and (end == len(text) or not _is_word(text[end])):
            if text[end:].lstrip().startswith("("):
                return start
            first = start if first < 0 else first
        start = text.find(name, start + 1)
    return first if first >= 0 else len(text)


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _has_body(sym: Symbol) -> bool:
    # The signature runs to the body's first line: a prototype's reaches its `;` first. One-line
    # definitions keep `{ ... ; }` on that line, hence "which comes first after the name".
    rest = sym.signature[_call_position(sym) :]
    semicolon, brace = rest.find(";"), rest.find("{")
    return not (semicolon >= 0 and (brace < 0 or semicolon < brace))


def _class_parent(sym: Symbol, symbols: tuple[Symbol, ...]) -> Symbol | None:
    parent = symbols[sym.parent] if 0 <= sym.parent < len(symbols) else None
    return parent if parent is not None and parent.kind in _CLASS_KINDS else None


def _owner(sym: Symbol, symbols: tuple[Symbol, ...]) -> str:
    parent = _class_parent(sym, symbols)
    if parent is not None:
        return parent.name
    scope = _SCOPE.search(sym.signature[: _call_position(sym) + len(sym.name)] + "(")
    return scope.group(1) if scope is not None else ""


def _internal_linkage(sym: Symbol, symbols: tuple[Symbol, ...]) -> bool:
    """``static`` before the name at file/namespace scope, or inside an anonymous namespace.

    A ``static`` member of a class has external linkage (it is the class's), so a symbol with
    a class parent is never file-local."""
    if _class_parent(sym, symbols) is not None:
        return False
    index = sym.parent
    while 0 <= index < len(symbols):
        if symbols[index].kind == "namespace" and symbols[index].name == _ANONYMOUS_NAMESPACE:
            return True
        index = symbols[index].parent
    return bool(_STATIC.search(sym.signature[: _call_position(sym)]))


class _Repo:
    """Include resolution and closure over one snapshot's files (computed as asked, per call)."""

    def __init__(self, tags: Mapping[str, FileTags], facts: Mapping[str, FileFacts]) -> None:
        self.tags = tags
        self.facts = facts
        self._closure: dict[str, frozenset[str]] = {}
        self._by_basename: dict[str, list[str]] | None = None
        self._definers: dict[str, list[str]] | None = None

    def include(self, including: str, raw: str) -> str | None:
        """The repository file ``#include raw`` in ``including`` names, if any.

        A quoted path is looked for beside the including file first (the compiler's rule);
        then, for both kinds, at the root and under :data:`INCLUDE_DIRS`; last, the one
        repository file whose path ends with it (a project's own -I directory), if only one does."""
        system = raw.startswith("<")
        target = raw.strip("<>")
        bases = ([] if system else [posixpath.dirname(including)]) + ["", *INCLUDE_DIRS]
        for base in bases:
            candidate = posixpath.normpath(posixpath.join(base, target))
            if candidate in self.tags:
                return candidate
        if self._by_basename is None:
            self._by_basename = {}
            for path in self.tags:
                self._by_basename.setdefault(posixpath.basename(path), []).append(path)
        suffix = "/" + posixpath.normpath(target)
        found = [p for p in self._by_basename.get(posixpath.basename(target), ()) if p.endswith(suffix)]
        return found[0] if len(found) == 1 else None

    def closure(self, path: str) -> frozenset[str]:
        """The files ``path`` includes, directly or through the files it includes."""
        known = self._closure.get(path)
        if known is not None:
            return known
        seen: set[str] = set()
        stack = [path]
        while stack:
            current = stack.pop()
            for raw in self.facts[current].includes if current in self.facts else ():
                found = self.include(current, raw)
                if found is not None and found not in seen and found != path:
                    seen.add(found)
                    stack.append(found)
        self._closure[path] = result = frozenset(seen)
        return result

    def definers(self, name: str) -> list[str]:
        """C/C++ source files defining ``name`` with a body and external linkage."""
        if self._definers is None:
            self._definers = {}
            for path, facts in self.facts.items():
                if is_c_source(path):
                    for fname, functions in facts.functions.items():
                        if any(f.body and not f.local for f in functions):
                            self._definers.setdefault(fname, []).append(path)
        return self._definers.get(name, [])


def _prototypes(facts: FileFacts | None, name: str) -> list[Function]:
    """``name``'s prototypes in a header, unless the header also defines it (an inline body)."""
    functions = facts.functions.get(name, ()) if facts is not None else ()
    if any(f.body for f in functions):
        return []
    return [f for f in functions if not f.local]


def _matches(prototype: Function, definition: Function) -> bool:
    # A member's prototype is defined as that class's member (in its body, or out of line as
    # `Owner::name`). A free function's scope is not known across files (`ns::name` may be a
    # namespace or a class), so any same-named definition matches it: an over-approximation
    # the include rule narrows.
    return not prototype.owner or definition.owner == prototype.owner


def derive(resolved: ResolvedEdges, repo: _Repo, yield_prototype: bool = False) -> ResolvedEdges:
    """``resolved`` plus the ``header-definition`` and ``own-header`` edges (a new mapping).

    Derived only from edges a source gave (never from another derived edge), and never over
    them: a target a source named keeps the source's provenance. With ``yield_prototype``, a
    header the source named only for a prototype gives way to the definitions derived from it
    (the edge moves to where the function lives; a header whose prototype has no definer here
    keeps it): the ranking the resolver gave before issue 14, now under honest names."""
    out: ResolvedEdges = {}
    for pair, targets in resolved.items():
        path, name = pair
        extra: dict[str, str] = {}
        yielded: set[str] = set()
        if is_c_family(path):
            for target in targets:
                if is_c_header(target) and target != path:
                    definitions = _header_definitions(repo, path, target, name)
                    extra.update(dict.fromkeys(definitions, HEADER_DEFINITION))
                    if yield_prototype and definitions:
                        yielded.add(target)
            if path in targets and is_c_source(path):
                extra.update(dict.fromkeys(_own_headers(repo, path, name), OWN_HEADER))
        kept = {t: p for t, p in targets.items() if t not in yielded} if yielded else targets
        out[pair] = {**extra, **kept} if extra else targets
    return out


def _header_definitions(repo: _Repo, path: str, header: str, name: str) -> list[str]:
    """Files defining the function whose prototype in ``header`` a use in ``path`` resolved to.

    Those that include the header (the customary place: the compiler then checks the
    definition against the prototype); when none does, the only externally linked
    definition, if there is exactly one (a program links one definition of an external name;
    with several, which one is the build's choice, not ours)."""
    prototypes = _prototypes(repo.facts.get(header), name)
    if not prototypes:
        return []
    candidates = [
        d
        for d in repo.definers(name)
        if d != path
        and any(f.body and not f.local and _matches(p, f) for f in repo.facts[d].functions[name] for p in prototypes)
    ]
    including = [d for d in candidates if header in repo.closure(d)]
    return including or (candidates if len(candidates) == 1 else [])


def _own_headers(repo: _Repo, path: str, name: str) -> list[str]:
    """Headers ``path`` includes (transitively) that declare its own externally linked ``name``."""
    own = [f for f in repo.facts[path].functions.get(name, ()) if f.body and not f.local]
    if not own:
        return []
    return sorted(
        header
        for header in repo.closure(path)
        if is_c_header(header) and any(_matches(p, f) for p in _prototypes(repo.facts.get(header), name) for f in own)
    )


def restrict_name_matches(resolved: Mapping[Pair, Mapping[str, str]], repo: _Repo, limit: int) -> ResolvedEdges:
    """Pairs no source resolved whose name-matched candidates include a definition the use
    cannot see (file-local elsewhere): the candidates it can see, as ``name-match`` edges.

    Pairs whose name has more than ``limit`` definers are left alone (the graph adds no
    name-matched edge for them anyway)."""
    hidden = frozenset().union(*(facts.local_names for facts in repo.facts.values()))
    if not hidden:
        return {}
    uses = {path: hidden.intersection(facts.refs) for path, facts in repo.facts.items()}
    wanted = frozenset().union(*uses.values())
    definers: dict[str, list[str]] = {}
    for path, facts in repo.facts.items():
        for name in wanted.intersection(facts.names):
            definers.setdefault(name, []).append(path)
    out: ResolvedEdges = {}
    for path, names in uses.items():
        for name in names:
            found = definers.get(name, ())
            if (path, name) in resolved or not found or len(found) > limit:
                continue
            visible = [d for d in found if _visible(repo, path, d, name)]
            if len(visible) < len(found):
                out[(path, name)] = dict.fromkeys(visible, Provenance.NAME_MATCH.value)
    return out


def _visible(repo: _Repo, path: str, target: str, name: str) -> bool:
    """Can a use of ``name`` in ``path`` mean ``target``'s definition (linkage only)?"""
    if target == path:
        return True
    if is_c_family(path) and name in repo.facts[path].local_names:
        return False  # the file's own `static` definition is what its uses mean (it shadows the rest)
    if name not in repo.facts[target].local_names:
        return True
    if target.endswith(".go"):
        return path.endswith(".go") and posixpath.dirname(path) == posixpath.dirname(target)
    # C/C++ internal linkage: visible where the defining file is compiled, i.e. in the files
    # that include it (a header's `static inline` function), never from another source file.
    return is_c_header(target) and target in repo.closure(path)
