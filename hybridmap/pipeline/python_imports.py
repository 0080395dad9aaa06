"""Python names imported from outside the repository: no name-matched edge for their uses. Pure.

``from typing import Any`` in a file means its uses of ``Any`` are not uses of a repository file
that happens to define a function ``Any`` (issue 24: such a module was in every co-edit map of a
large repository). :class:`ImportsOutside` finds those (file, name) pairs for the policies
(:func:`hybridmap.pipeline.policies.apply_policies`), which hand them to the graph as resolved to
nothing. A module is the repository's when some Python file's module path, or a directory
holding one, ends with it (:class:`PythonModules`).

The pairs are kept between merges by the map builder's policy memo and brought up to date from
the files whose facts changed: at 100,000 files a pass over every file's imports and names was
9 % of a map after an edit (py-spy), and 15 ms of one on the standard library.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from ..infra.patched import hinted_changes


class ImportFacts(Protocol):
    """What the rule reads of a file (:class:`hybridmap.pipeline.policies.FileFacts`)."""

    @property
    def imports(self) -> Mapping[str, str]:
        """Name as the file uses it -> the module a ``from module import`` brings it from."""

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the file defines, once each."""


class PythonModules:
    """Which dotted names an absolute import could give a repository module or package by: any
    suffix, whole names at the dots, of a Python file's module path (``src/pkg/sub/mod.py``:
    ``mod``, ``sub.mod``, ``pkg.sub.mod``, ``src.pkg.sub.mod``) or of a directory holding one,
    at any depth (namespace packages: ``pkg``, ``pkg.sub``, ``src.pkg``...).

    Asked per imported module, from the module paths kept by their last name: every suffix of
    every path built up front was 2 % of a one-shot map at 100,000 files (py-spy), for the few
    hundred modules a repository's files import from."""

    def __init__(self, paths: Iterable[str]) -> None:
        by_name: dict[str, set[str]] = {}
        directories: set[str] = set()
        for path in paths:
            if not path.endswith((".py", ".pyi")):
                continue
            module = path.rpartition(".")[0]
            directory, _, name = module.rpartition("/")
            if name != "__init__":
                by_name.setdefault(name, set()).add(module)
            while directory and directory not in directories:  # each directory above it, once
                directories.add(directory)
                directory = directory.rpartition("/")[0]
        for directory in directories:
            by_name.setdefault(directory.rpartition("/")[2], set()).add(directory)
        self._by_name = by_name
        self._answers: dict[str, bool] = {}
        """Each module asked, answered once: a repository's files import a few hundred modules
        hundreds of thousands of times, and a common last name (``models``) is held by thousands
        of paths (a map after an edit at 100,000 files spent 15 % of its time here)."""

    def __contains__(self, dotted: object) -> bool:
        if not isinstance(dotted, str) or not dotted:
            return False
        answer = self._answers.get(dotted)
        if answer is None:
            tail = dotted.replace(".", "/")
            held = self._by_name.get(tail.rpartition("/")[2], ())
            answer = self._answers[dotted] = any(h == tail or h.endswith("/" + tail) for h in held)
        return answer


class ImportsOutside:
    """The (file, name) pairs of names a file imports from outside the repository that some
    repository file defines, kept up to date between calls (see the module docstring). Not
    thread-safe: its owner calls it under its own lock (the builder merges one map at a time)."""

    def __init__(self) -> None:
        self._reset(None)

    def _reset(self, paths: frozenset[str] | None) -> None:
        self._paths = paths
        self._modules = PythonModules(paths or ())
        self._facts: dict[str, ImportFacts] = {}
        """Per file, the facts last read."""
        self._seen: Mapping[str, ImportFacts] | None = None
        """The mapping last passed in (what a ``since`` hint must be)."""
        self._outside: dict[str, tuple[str, ...]] = {}
        """Per importing file, the names it imports from outside, in its import order."""
        self._importers: dict[str, set[str]] = {}
        """Per name imported from outside, the files importing it so."""
        self._definers: dict[str, int] = {}
        """Per such name, how many files define it."""
        self._pairs: list[tuple[str, str]] | None = None
        """The last answer, while no file's outside names or a name's having definers moved."""
        self._order: tuple[str, ...] = ()
        """The paths of the last mapping scanned whole, in its order (the answer's order)."""

    def pairs(
        self,
        facts: Mapping[str, ImportFacts],
        changed: Iterable[str] | None = None,
        since: Mapping[str, ImportFacts] | None = None,
    ) -> list[tuple[str, str]]:
        """The pairs for the files of ``facts`` (every file of the map, by path: which modules are
        the repository's), in the order of ``facts`` and of each file's imports. ``changed``: the
        paths whose facts may differ from ``since``'s; used when ``since`` is the mapping this
        was last asked about (an edit's map then looks at those paths alone, not every file)."""
        changed = hinted_changes(facts, self._facts, self._paths, changed, since, self._seen)
        if changed is None:
            paths = frozenset(facts)
            if paths != self._paths:  # files added or removed: which modules are ours may change
                self._reset(paths)
            last = self._facts
            changed = [p for p, f in facts.items() if last.get(p) is not f]
            order = tuple(facts)  # a scan already: a mapping in another order answers in its order
            if order != self._order:
                self._order, self._pairs = order, None
        if changed:
            self._update(changed, facts)
        self._seen = facts
        if self._pairs is None:
            definers = self._definers
            self._pairs = [(path, name) for path in facts for name in self._outside.get(path, ()) if definers[name]]
        return list(self._pairs)

    def _outside_module(self, path: str, module: str) -> bool:
        # A relative module is always the repository's; other languages' imports are not read here.
        return path.endswith((".py", ".pyi")) and not module.startswith(".") and module not in self._modules

    def _update(self, changed: list[str], facts: Mapping[str, ImportFacts]) -> None:
        known, importers, definers = self._facts, self._importers, self._definers
        outside_before = {path: self._outside.get(path, ()) for path in changed}
        counts_before: dict[str, int] = {}
        for path in changed:  # what each changed file counted before, taken back
            old = known.pop(path, None)
            for name in self._outside.pop(path, ()):
                importers[name].discard(path)
                if not importers[name]:
                    del importers[name], definers[name]
            for name in old.names if old is not None else ():
                if name not in definers:
                    continue
                counts_before.setdefault(name, definers[name])
                definers[name] -= 1
        new_names: set[str] = set()
        for path in changed:  # and what it counts now
            now = facts.get(path)
            if now is None:
                continue
            known[path] = now
            for name in now.names:
                if name in definers:
                    counts_before.setdefault(name, definers[name])
                    definers[name] += 1
            outside = tuple(n for n, module in now.imports.items() if self._outside_module(path, module))
            if outside:
                self._outside[path] = outside
            for name in outside:
                if name not in importers:
                    importers[name] = set()
                    new_names.add(name)
                importers[name].add(path)
        if new_names:  # names newly imported from outside: counted over every file once
            counts = dict.fromkeys(new_names, 0)
            for file_facts in facts.values():
                for name in new_names.intersection(file_facts.names):
                    counts[name] += 1
            definers.update(counts)
        moved = (
            new_names
            or any(self._outside.get(path, ()) != names for path, names in outside_before.items())
            or any((count > 0) != (definers.get(name, 0) > 0) for name, count in counts_before.items())
        )
        if moved:
            self._pairs = None
