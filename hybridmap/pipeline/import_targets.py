"""Names a file imports from a specific repository file: their name-matched edges go there. Pure.

Name matching links a use of ``Console`` to every file defining a ``Console``. A file that says
where the name comes from (``from .console import Console``, ``import { Console } from
'./console'``, ``import rich.console.Console;``) names the one file it means, and its uses of the
name are linked to that file alone (issue 24 item 4). The module is resolved as the language
would, from the repository's own paths:

- Python: a relative module from the importing file's package (``..pkg.mod``); an absolute one
  to the modules or packages whose path ends with it (``rich.console``: ``rich/console.py``,
  ``src/rich/console.py``; ``pkg``: ``pkg/__init__.py``), stubs (``.pyi``) beside sources;
- TypeScript and JavaScript: a relative specifier (``./x``, ``../x.js``) as TypeScript's
  bundler resolution tries it (``x.ts``, ``x.tsx``, ``x/index.ts``..., ``x.js`` written for
  ``x.ts``); a package's (``react``, ``@scope/pkg``, a ``paths`` alias) is left to name matching;
- Java: ``import a.b.C;`` to the files ending ``a/b/C.java``.

A module that does not define the name but re-exports it (``from .core import X`` in a package's
``__init__.py``, ``export { X } from './x'``, ``export * from './x'``, ``from .core import *``)
is followed, :data:`MAX_REEXPORT_HOPS` steps at most. When no file the module names defines the
name (an alias, a submodule, a file outside the listing), the uses stay name-matched.

The linked targets are handed to the graph as resolved pairs under the ``name-match``
provenance (:func:`hybridmap.pipeline.policies.apply_policies`): still a guess from a name, among
fewer candidates, weighted as before. A name a source resolved keeps the source's answer.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from typing import Protocol

from ..infra.patched import hinted_changes
from ..model import Pair, Provenance

#: Re-exports followed from the module an import names to the file defining the name: a package's
#: ``__init__.py`` re-exporting from a submodule is one, a barrel ``index.ts`` of barrels two.
#: A bound, not a weight: it stops import cycles (``a`` re-exports from ``b``, ``b`` from ``a``).
MAX_REEXPORT_HOPS = 3

_PYTHON = (".py", ".pyi")
_SCRIPT = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
#: What a relative specifier may name, in the order TypeScript's resolution tries them.
_SCRIPT_TRIES = ("", ".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
#: A specifier written with the emitted file's extension names the source beside it (ESM style).
_EMITTED_SOURCES = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}


class ImportFacts(Protocol):
    """What the rule reads of a file (:class:`hybridmap.pipeline.policies.FileFacts`)."""

    @property
    def imports(self) -> Mapping[str, str]:
        """Name as the file uses it -> the module its import statement names."""

    @property
    def stars(self) -> tuple[str, ...]:
        """The modules of its star imports and star re-exports."""

    @property
    def names(self) -> tuple[str, ...]:
        """Every name the file defines, once each."""


def _language(path: str) -> str:
    if path.endswith(_PYTHON):
        return "python"
    if path.endswith(_SCRIPT):
        return "script"
    if path.endswith(".java"):
        return "java"
    return ""


class ModuleFiles:
    """Which repository files a module, as one file's import statement writes it, names (see the
    module docstring). Built from one listing's paths; answers kept per (package, module)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths = frozenset(paths)
        modules: dict[str, list[str]] = {}
        java: dict[str, list[str]] = {}
        for path in sorted(self._paths):
            if path.endswith(_PYTHON):
                module = path.rpartition(".")[0]
                if module == "__init__" or module.endswith("/__init__"):
                    module = module[: -len("__init__")].rstrip("/")
                modules.setdefault(module, []).append(path)
            elif path.endswith(".java"):
                java.setdefault(path.rpartition("/")[2], []).append(path)
        by_last: dict[str, list[str]] = {}
        for module in modules:
            by_last.setdefault(module.rpartition("/")[2], []).append(module)
        self._modules = modules
        """Python module path (``pkg/sub/mod``; a package's is its directory) -> its files."""
        self._by_last = by_last
        """A module path's last part -> the module paths ending with it (absolute imports)."""
        self._java = java
        """A Java file's name -> the files of that name."""
        self._answers: dict[tuple[str, str, str], tuple[str, ...]] = {}

    def files(self, importer: str, module: str) -> tuple[str, ...]:
        """The repository files ``module``, written in ``importer``'s import statement, names."""
        language = _language(importer)
        if not language:
            return ()
        # A relative module's answer depends on where the importer is; an absolute one's does not.
        relative = module.startswith(".")
        key = (language, posixpath.dirname(importer) if relative else "", module)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = self._resolve(language, key[1], module)
        return answer

    def _resolve(self, language: str, package: str, module: str) -> tuple[str, ...]:
        if language == "python":
            return self._python(package, module)
        if language == "script":
            return self._script(package, module)
        return self._java_files(module)

    def _python(self, package: str, module: str) -> tuple[str, ...]:
        if module.startswith("."):
            rest = module.lstrip(".")
            base = package
            for _ in range(len(module) - len(rest) - 1):  # one dot: the importer's own package
                if not base:
                    return ()  # above the repository's root
                base = posixpath.dirname(base)
            path = "/".join(p for p in (base, rest.replace(".", "/")) if p)
            return tuple(self._modules.get(path, ()))
        tail = module.replace(".", "/")
        held = self._by_last.get(tail.rpartition("/")[2], ())
        return tuple(f for m in held if m == tail or m.endswith("/" + tail) for f in self._modules[m])

    def _script(self, package: str, module: str) -> tuple[str, ...]:
        if not (module.startswith(("./", "../")) or module in (".", "..")):
            return ()  # a package, or an alias: not resolved here
        path = posixpath.normpath(posixpath.join(package, module))
        if path == ".." or path.startswith("../"):
            return ()
        stem, extension = posixpath.splitext(path)
        tries = [path + t for t in _SCRIPT_TRIES] + [f"{path}/index{t}" for t in _SCRIPT_TRIES[1:]]
        tries += [stem + t for t in _EMITTED_SOURCES.get(extension, ())]
        for candidate in tries:
            if candidate in self._paths:
                return (candidate,)
        return ()

    def _java_files(self, module: str) -> tuple[str, ...]:
        relative = module.replace(".", "/") + ".java"
        held = self._java.get(relative.rpartition("/")[2], ())
        return tuple(f for f in held if f == relative or f.endswith("/" + relative))


class ImportTargets:
    """The (file, name) pairs whose uses an import statement points at specific repository files,
    with those files, kept up to date between calls as :class:`~hybridmap.pipeline.python_imports.ImportsOutside`
    is: after an edit only the changed files and the files whose links read them are linked
    again. Not thread-safe: its owner calls it under its own lock (the builder merges one map at
    a time)."""

    def __init__(self) -> None:
        self._reset(None)

    def _reset(self, paths: frozenset[str] | None) -> None:
        self._paths = paths
        self._modules = ModuleFiles(paths or ())
        self._facts: dict[str, ImportFacts] = {}
        """Per file, the facts last read."""
        self._seen: Mapping[str, ImportFacts] | None = None
        """The mapping last passed in (what a ``since`` hint must be)."""
        self._links: dict[str, tuple[str, ...]] = {}
        """Per importing file, the names it has linked (its keys in :attr:`_answer`)."""
        self._reads: dict[str, frozenset[str]] = {}
        """Per importing file, the other files its links were read from."""
        self._readers: dict[str, set[str]] = {}
        """Per file, the importing files whose links read it."""
        self._answer: dict[Pair, dict[str, str]] = {}
        self._shared: dict[tuple[str, ...], dict[str, str]] = {}
        """One targets mapping per set of targets: many files import the same names from the
        same file, and the graph only reads these."""

    def pairs(
        self,
        facts: Mapping[str, ImportFacts],
        changed: Iterable[str] | None = None,
        since: Mapping[str, ImportFacts] | None = None,
    ) -> Mapping[Pair, dict[str, str]]:
        """(file, name) -> the files its uses are linked to, for the files of ``facts`` (every file
        of the map, by path). ``changed`` and ``since`` as for ``ImportsOutside.pairs``. The
        answer is this object's own: read it, do not change it."""
        changed = hinted_changes(facts, self._facts, self._paths, changed, since, self._seen)
        if changed is None:
            paths = frozenset(facts)
            if paths != self._paths:  # files added or removed: what a module names may change
                self._reset(paths)
            changed = [p for p, f in facts.items() if self._facts.get(p) is not f]
        if changed:
            relink = set(changed)
            for path in changed:
                relink.update(self._readers.get(path, ()))
                now = facts.get(path)
                if now is None:
                    self._facts.pop(path, None)
                else:
                    self._facts[path] = now
            for path in relink:
                self._link(path, facts)
        self._seen = facts
        return self._answer

    def _link(self, path: str, facts: Mapping[str, ImportFacts]) -> None:
        for name in self._links.pop(path, ()):
            del self._answer[(path, name)]
        for read in self._reads.pop(path, ()):
            readers = self._readers[read]
            readers.discard(path)
            if not readers:
                del self._readers[read]
        own = facts.get(path)
        if own is None or not own.imports:
            return
        reads: set[str] = set()
        linked: list[str] = []
        for name, module in own.imports.items():
            files = self._modules.files(path, module)
            if not files:
                continue
            targets = tuple(dict.fromkeys(self._definers(name, files, facts, MAX_REEXPORT_HOPS, reads)))
            if not targets:
                continue
            shared = self._shared.get(targets)
            if shared is None:
                shared = self._shared[targets] = dict.fromkeys(targets, Provenance.NAME_MATCH.value)
            self._answer[(path, name)] = shared
            linked.append(name)
        if linked:
            self._links[path] = tuple(linked)
        reads.discard(path)
        if reads:
            self._reads[path] = frozenset(reads)
            for read in reads:
                self._readers.setdefault(read, set()).add(path)

    def _definers(
        self, name: str, files: tuple[str, ...], facts: Mapping[str, ImportFacts], hops: int, reads: set[str]
    ) -> list[str]:
        """Of ``files``, those defining ``name``, and through their re-exports (``hops`` more)
        the files defining it; every file looked at is added to ``reads``."""
        found: list[str] = []
        for file in files:
            reads.add(file)
            file_facts = facts.get(file)
            if file_facts is None:
                continue
            if name in file_facts.names:
                found.append(file)
                continue
            if hops == 0:
                continue
            module = file_facts.imports.get(name)
            modules = (module,) if module is not None else file_facts.stars
            for module in modules:
                found += self._definers(name, self._modules.files(file, module), facts, hops - 1, reads)
        return found
