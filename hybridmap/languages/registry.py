"""Languages as data: ``lsp_configs/<lang>.toml`` + ``queries/<lang>-tags.scm``.

A :class:`LanguageRegistry` is built once per :class:`~hybridmap.api.repo.AsyncRepoMap`
(and once per parse worker). It maps file names to languages and compiles each
tag query at most once, on first use. Nothing here is module-global: two
registries never share state.

Directories are read in order: the built-in ``hybridmap/languages/lsp_configs/`` and
``hybridmap/languages/queries/`` (package data, shipped in the wheel), then the user's
``$XDG_CONFIG_HOME/hybridmap/{lsp_configs,queries}/``. A query file of a later directory
replaces the earlier one; a config file is merged over the earlier one of the same name, key by
key (tables merge, any other value, lists included, replaces): a user's ``python.toml`` that
sets only ``language-servers`` keeps the built-in file types, roots and server tables. (A
partial file used to replace the built-in one whole, and Python silently mapped no file.)
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.resources
import re
import threading
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..errors import ConfigError
from . import notebooks, query_predicates
from .visibility import CONVENTIONS


def _package_data_dir(name: str) -> Path:
    """A data directory shipped inside the package, as a real path.

    Every install (wheel, sdist, editable, checkout) puts the package on disk; the registry
    needs a path, not a Traversable, because parse workers reload it from ``config_dirs``.
    """
    resource = importlib.resources.files("hybridmap.languages") / name
    if not isinstance(resource, Path):  # a zipped import: no directory to glob or hand on
        raise ImportError(f"hybridmap's {name}/ is not on disk ({resource!r}): install it unzipped")
    return resource.resolve()


#: The built-in language data: package data (``hybridmap/languages/lsp_configs``, ``hybridmap/languages/queries``).
BUILTIN_CONFIG_DIR = _package_data_dir("lsp_configs")
BUILTIN_QUERY_DIR = _package_data_dir("queries")


@dataclass(frozen=True, slots=True)
class Language:
    name: str
    grammar: str
    extensions: frozenset[str]
    filenames: frozenset[str]
    globs: tuple[str, ...]
    roots: tuple[str, ...]
    query_path: Path
    config_path: Path
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    bare_names: frozenset[str] = frozenset()
    """Names without an extension taken only with a shebang (see :func:`_parse_file_types`)."""
    shebangs: frozenset[str] = frozenset()
    """Interpreters whose ``#!`` line makes such a file a source of this language (``sh``, ``php``)."""
    visibility: str | None = None
    """``[language] visibility``: which definitions are public (:mod:`.visibility`); the map's ``+``."""
    exported: str | None = None
    """``[language] exported``: which definitions code outside the repository can use (dead code
    leaves them out), in the same conventions; the ``visibility`` convention when not given."""
    lsp_language_id: str = ""
    """``[language] lsp-language-id``: the ``languageId`` its files are opened with on a language
    server (``typescriptreact`` for TSX); the language's name when not given."""


def _has_extension(name: str) -> bool:
    """``language_for``'s rule: a dot after the first character and before the last."""
    return 0 < name.rfind(".") < len(name) - 1


def _parse_file_types(value: Any, source: Path) -> tuple[set[str], set[str], set[str], list[str]]:
    """(extensions, whole names, bare names, globs) of a ``file-types`` list: the one rule for how
    a file name decides a language.

    * ``"py"``: files ending in ``.py`` (in any case). Helix also reads a string as a whole file
      name. A name with an extension of its own (``"CMakeLists.txt"``) is taken as one. A name
      without one (``"elm"``, ``"php"``, ``"sh"``) is only a *bare name*: projects put wrapper
      scripts by those names in ``bin/`` (``bin/elm`` running a pinned compiler), and parsing
      one as Elm failed the Elm server for the whole project. Such a file is a source only when
      its first line is a shebang naming an interpreter some language lists in ``shebangs``, and
      then of that language (``#!/bin/sh``: shell; ``#!/usr/bin/env php``: PHP).
    * ``{ glob = "Dockerfile.*" }``: file names or paths matching the glob. One without wildcards
      or ``/`` is an exact file name, taken from the name alone: how ``Makefile``, ``Dockerfile``,
      ``Gemfile`` and the like are declared.

    Only a listed file whose name has no extension and is a bare name costs a read, of its first
    line (``walk.read_head``); every other file is decided by its name.
    """
    if not isinstance(value, list):
        raise ConfigError(f"{source}: 'file-types' must be a list")
    extensions: set[str] = set()
    filenames: set[str] = set()
    bare: set[str] = set()
    globs: list[str] = []
    for item in value:
        if isinstance(item, str):
            extensions.add(item.lower().lstrip("."))
            (filenames if _has_extension(item) else bare).add(item)
        elif isinstance(item, dict) and isinstance(item.get("glob"), str):
            glob = item["glob"]
            if any(c in glob for c in "*?[/"):
                globs.append(glob)
            else:
                filenames.add(glob)
        else:
            raise ConfigError(f"{source}: bad file-types entry {item!r}")
    return extensions, filenames, bare, globs


def shebang_interpreter(head: bytes) -> str:
    """The program a ``#!`` first line runs, without its directory or version: ``#!/bin/sh`` ->
    ``sh``, ``#!/usr/bin/env -S python3.11 -u`` -> ``python``; "" when there is none."""
    line = head.split(b"\n", 1)[0]
    if not line.startswith(b"#!"):
        return ""
    words = line[2:].decode("utf-8", "replace").split()
    if words and words[0].rsplit("/", 1)[-1] == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return words[0].rsplit("/", 1)[-1].rstrip("0123456789.") if words else ""


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot load ({exc})") from exc


def merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``: tables merge key by key, any other value replaces."""
    out = dict(base)
    for key, value in over.items():
        below = out.get(key)
        out[key] = merged(below, value) if isinstance(below, dict) and isinstance(value, dict) else value
    return out


def load_language(config_path: Path, query_dirs: Sequence[Path], layers: Sequence[Path] = ()) -> Language:
    """The language of ``config_path``, merged over ``layers`` (earlier files of the same name,
    in order: the built-in one under a user's)."""
    data: dict[str, Any] = {}
    for layer in (*layers, config_path):
        data = merged(data, _read_toml(layer))
    section = data.get("language")
    if not isinstance(section, dict):
        raise ConfigError(f"{config_path}: missing [language] table")
    name = section.get("name", config_path.stem)
    grammar = section.get("grammar", name)
    if not isinstance(name, str) or not isinstance(grammar, str):
        raise ConfigError(f"{config_path}: 'name' and 'grammar' must be strings")
    if section.get("file-types") == []:  # over a built-in file, it silently dropped the language
        raise ConfigError(f"{config_path}: 'file-types' is empty: the language would map no file")
    extensions, filenames, bare_names, globs = _parse_file_types(section.get("file-types", []), config_path)
    shebangs = section.get("shebangs", [])
    if not isinstance(shebangs, list) or not all(isinstance(s, str) for s in shebangs):
        raise ConfigError(f"{config_path}: 'shebangs' must be a list of interpreter names")
    roots = section.get("roots", [])
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise ConfigError(f"{config_path}: 'roots' must be a list of strings")
    visibility = _convention(section, "visibility", config_path)
    exported = _convention(section, "exported", config_path)
    language_id = section.get("lsp-language-id", name)
    if not isinstance(language_id, str) or not language_id.strip() or not language_id.isprintable():
        raise ConfigError(f"{config_path}: 'lsp-language-id' must be a non-empty string")
    query_name = section.get("query", f"{name}-tags.scm")
    query_path = None
    for directory in reversed(list(query_dirs)):
        candidate = directory / query_name
        if candidate.is_file():
            query_path = candidate
            break
    if query_path is None:
        raise ConfigError(f"{config_path}: no query file '{query_name}' in {', '.join(map(str, query_dirs))}")
    return Language(
        name=name,
        grammar=grammar,
        extensions=frozenset(extensions),
        filenames=frozenset(filenames),
        globs=tuple(globs),
        roots=tuple(roots),
        query_path=query_path,
        config_path=config_path,
        raw=data,
        bare_names=frozenset(bare_names),
        shebangs=frozenset(shebangs),
        visibility=visibility,
        exported=exported if exported is not None else visibility,
        lsp_language_id=language_id,
    )


def _convention(section: Mapping[str, Any], key: str, config_path: Path) -> str | None:
    value = section.get(key)
    if value is not None and value not in CONVENTIONS:
        raise ConfigError(f"{config_path}: '{key}' must be one of {', '.join(CONVENTIONS)}")
    return value if isinstance(value, str) else None


_INHERITS = re.compile(r"^;+\s*inherits:\s*([\w,\s-]+)$", re.M)


def read_query(path: Path, _seen: frozenset[Path] = frozenset()) -> str:
    """A query's text with its ``; inherits: a, b`` parents (``a-tags.scm``...) prepended.

    Grammars that extend another (TSX over TypeScript, C++ over C) share its
    patterns instead of repeating them (the nvim-treesitter modeline convention).
    """
    if path in _seen:
        raise ConfigError(f"{path}: 'inherits' loops back to itself")
    text = path.read_text(encoding="utf-8")
    parents = []
    for match in _INHERITS.finditer(text):
        for name in filter(None, (n.strip() for n in match.group(1).split(","))):
            parent = path.with_name(f"{name}-tags.scm")
            if not parent.is_file():
                raise ConfigError(f"{path}: inherits '{name}', but {parent} does not exist")
            parents.append(read_query(parent, _seen | {path}))
    return "\n".join([*parents, text])


class CompiledLanguage:
    """A grammar with its tag query compiled, plus a fallback identifier query."""

    __slots__ = (
        "_parsers",
        "ancestor_checks",
        "has_references",
        "identifier_query",
        "language",
        "query",
        "query_hash",
        "ts_language",
    )

    def __init__(self, language: Language) -> None:
        from tree_sitter import Query, QueryError
        from tree_sitter_language_pack import get_language

        self.language = language
        try:
            self.ts_language = get_language(language.grammar)  # type: ignore[arg-type]
        except Exception as exc:  # the pack raises LookupError/ImportError variants
            raise ConfigError(f"{language.config_path}: unknown grammar '{language.grammar}' ({exc})") from exc
        source = read_query(language.query_path)
        problem = query_predicates.check(source)
        if problem:
            raise ConfigError(f"{language.query_path}: {problem}")
        try:
            self.query = Query(self.ts_language, source)
        except QueryError as exc:
            raise ConfigError(f"{language.query_path}: query does not compile: {exc}") from exc
        self.ancestor_checks = query_predicates.ancestor_checks(self.query, source)
        # A property at run time; tree-sitter 0.25's stub declares it a method.
        capture_count = cast("int", self.query.capture_count)
        names = [self.query.capture_name(i) for i in range(capture_count)]
        self.has_references = any(n.startswith("name.reference.") for n in names)
        self.identifier_query = None if self.has_references else self._identifier_query()
        self.query_hash = hashlib.sha256(f"{language.grammar}\0{source}".encode()).hexdigest()[:16]
        # One parser per thread: a map's parse and a background parse may run at once, and a
        # tree-sitter parser (its timeout, its resumable state) is not shared safely.
        self._parsers = threading.local()

    def _identifier_query(self) -> Any:
        """Back-fill references from identifier nodes when the query has none."""
        from tree_sitter import Query

        kinds = [
            k
            for k in (
                "identifier",
                "type_identifier",
                "simple_identifier",
                "constant",
                "field_identifier",
                "property_identifier",
                "name",
                "symbol",
                "word",
            )
            if self.ts_language.id_for_node_kind(k, True)
        ]
        if not kinds:
            return None
        return Query(self.ts_language, "\n".join(f"({k}) @name.reference.call" for k in kinds))

    @property
    def parser(self) -> Any:
        """This thread's parser of the language."""
        parser = getattr(self._parsers, "parser", None)
        if parser is None:
            from tree_sitter import Parser

            parser = self._parsers.parser = Parser(self.ts_language)
        return parser


class LanguageRegistry:
    """Maps paths to languages; compiles each language's query once, lazily."""

    def __init__(
        self, languages: Iterable[Language], config_dirs: Sequence[Path] = (), query_dirs: Sequence[Path] = ()
    ) -> None:
        #: Where this registry was loaded from (parse workers load the same).
        self.config_dirs = tuple(config_dirs)
        self.query_dirs = tuple(query_dirs)
        self._languages: dict[str, Language] = {}
        self._by_ext: dict[str, str] = {}
        self._by_name: dict[str, str] = {}
        self._bare: set[str] = set()
        self._by_shebang: dict[str, str] = {}
        self._globs: list[tuple[str, str]] = []
        for lang in languages:
            self._languages[lang.name] = lang
            for ext in lang.extensions:
                self._by_ext[ext] = lang.name
            for fname in lang.filenames:
                self._by_name[fname] = lang.name
            self._bare.update(lang.bare_names)
            for interpreter in lang.shebangs:
                self._by_shebang[interpreter] = lang.name
            for pattern in lang.globs:
                self._globs.append((pattern, lang.name))
        self._compiled: dict[str, CompiledLanguage] = {}
        self._lock = threading.Lock()

    @classmethod
    def load(
        cls, config_dirs: Sequence[Path] | None = None, query_dirs: Sequence[Path] | None = None
    ) -> LanguageRegistry:
        from ..settings import user_config_dir

        if config_dirs is None:
            config_dirs = [BUILTIN_CONFIG_DIR, user_config_dir() / "lsp_configs"]
        if query_dirs is None:
            query_dirs = [BUILTIN_QUERY_DIR, user_config_dir() / "queries"]
        by_stem: dict[str, list[Path]] = {}
        for directory in config_dirs:
            if directory.is_dir():
                for path in sorted(directory.glob("*.toml")):
                    by_stem.setdefault(path.stem, []).append(path)  # later ones merge over earlier
        languages = (load_language(paths[-1], query_dirs, paths[:-1]) for paths in by_stem.values())
        return cls(languages, config_dirs, query_dirs)

    @property
    def names(self) -> list[str]:
        return sorted(self._languages)

    def get(self, name: str) -> Language:
        return self._languages[name]

    def visibility_conventions(self) -> dict[str, str | None]:
        """Language -> its ``visibility`` convention (None when it declares none)."""
        return {name: lang.visibility for name, lang in self._languages.items()}

    def exported_conventions(self) -> dict[str, str | None]:
        """Language -> its ``exported`` convention (its ``visibility`` one when not given)."""
        return {name: lang.exported for name, lang in self._languages.items()}

    def lsp_language_ids(self) -> dict[str, str]:
        """Language -> the ``languageId`` a server is told for its files."""
        return {name: lang.lsp_language_id for name, lang in self._languages.items()}

    def language_for(self, path: str, head: Callable[[str], bytes] | None = None) -> str | None:
        """``path``'s language, by :func:`_parse_file_types`' rule; None when it is not a source.

        ``head`` gives a file's first bytes (``walk.read_head``): asked only for a name without an
        extension that is a bare name (``bin/elm``); without it, such a file is not a source."""
        # String slicing, not PurePosixPath: called for every listed path (a million in a large
        # tree), where building a path object was most of the cost. Same name and suffix rules.
        name = path[path.rfind("/") + 1 :]
        found = self._by_name.get(name)
        if found:
            return found
        dot = name.rfind(".")
        if 0 < dot < len(name) - 1:
            found = self._by_ext.get(name[dot + 1 :].lower())
            if found:
                return found
            if notebooks.is_notebook(name) and notebooks.DEFAULT_LANGUAGE in self._languages:
                return notebooks.DEFAULT_LANGUAGE  # until its kernel is read: notebook_language
        elif head is not None and name in self._bare:
            found = self._by_shebang.get(shebang_interpreter(head(path)))
            if found:
                return found
        for pattern, lang in self._globs:
            if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(name, pattern):
                return lang
        return None

    def notebook_language(self, data: bytes) -> str:
        """The language of a notebook's code cells: its kernel's, as this registry names it (``R``
        -> ``r``); not necessarily one it has. :class:`~.notebooks.NotebookError` when ``data`` is
        not a readable notebook."""
        return notebooks.resolve_language(notebooks.kernel_language(data), self._languages)

    def compiled(self, name: str) -> CompiledLanguage:
        compiled = self._compiled.get(name)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(name)
                if compiled is None:
                    compiled = CompiledLanguage(self._languages[name])
                    self._compiled[name] = compiled
        return compiled

    def fingerprint(self, name: str) -> str:
        """Changes whenever the grammar name, the query text (parents included) or what is
        parsed of a file (``embedded-blocks``: only a .vue file's script) changes."""
        lang = self._languages[name]
        text = read_query(lang.query_path).encode()
        section = lang.raw.get("language", {})
        blocks = section.get("embedded-blocks") if isinstance(section, Mapping) else None
        parsed = repr(blocks).encode() if blocks else b""
        return hashlib.sha256(lang.grammar.encode() + b"\0" + text + b"\0" + parsed).hexdigest()[:16]
