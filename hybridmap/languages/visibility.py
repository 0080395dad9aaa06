"""Whether a definition is public, by its language's convention.

A language declares its convention in its TOML (``[language] visibility = "..."``), one of:

* ``underscore``: a name starting with ``_`` is private (Python, Dart); dunder names are public;
* ``capitalized``: a name starting with an upper-case letter is exported (Go); a method or field
  too, whatever its receiver;
* ``export``: a top-level definition is public when its signature starts with ``export``
  (TypeScript, JavaScript: ``export function``, ``export default class``); a member of an
  exported class is public unless marked ``private``/``protected`` or named ``#private``;
* ``pub``: the signature has ``pub`` before the item keyword (Rust, Zig, V);
* ``modifiers``: public unless the signature has ``private``/``protected``/``internal``/
  ``fileprivate`` (Java, Kotlin, Swift, Scala, PHP: members are public or package-wide unless
  said otherwise);
* ``public-keyword``: public only when the signature says ``public`` (C#: members are private
  unless said otherwise), for a member also its type;
* ``defp``: Elixir's ``defp``/``defmacrop`` are private;
* ``header``: C/C++: what a header (``.h``, ``.hpp``...) declares is public, ``static`` is not;
* ``package-face``: ``underscore``, and only in a package's ``__init__.py`` (Python's
  ``exported``: what a package offers its importers, where the rest of an application's modules
  are its own business);
* none (the key absent): not said.

``exported`` (same conventions) says which definitions code *outside the repository* can use, for
dead code; when a language does not give it, it is its ``visibility``. They differ where the
language's own word differs: Java's package-private members are visible to the map's reader but
not outside the package (``public-keyword``), and a Python module's public names are reachable
from outside only through its package (``package-face``).

Only the symbol's own signature, name and path are read: no parse, no server. Where a server's
detail says more (a Go method on an unexported type), this convention still answers; the map
marks what the language's readers would call public. ``+`` in the map text (``render.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from ..model import Symbol
from .paths import is_c_header

CONVENTIONS = (
    "underscore",
    "capitalized",
    "export",
    "pub",
    "modifiers",
    "public-keyword",
    "defp",
    "header",
    "package-face",
)

_PRIVATE_MODIFIER = re.compile(r"\b(private|protected|internal|fileprivate)\b")
_PUB = re.compile(r"^\s*(#\[[^\]]*\]\s*)*pub\b")
_EXPORT = re.compile(r"^\s*(@\w+(\([^)]*\))?\s*)*export\b")
_STATIC = re.compile(r"^\s*(static|inline\s+static)\b")


def _first_line(symbol: Symbol) -> str:
    return symbol.signature.lstrip("\n").split("\n", 1)[0]


def _underscore(symbol: Symbol, path: str, parents: Sequence[Symbol]) -> bool:
    name = symbol.name
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _package_face(symbol: Symbol, path: str, parents: Sequence[Symbol]) -> bool:
    return path.rsplit("/", 1)[-1] == "__init__.py" and _underscore(symbol, path, parents)


def _capitalized(symbol: Symbol, path: str, parents: Sequence[Symbol]) -> bool:
    return symbol.name[:1].isupper()


def _export(symbol: Symbol, path: str, parents: Sequence[Symbol]) -> bool:
    if not parents:
        return bool(_EXPORT.match(_first_line(symbol)))
    line = _first_line(symbol)
    return (
        _export(parents[-1], path, parents[:-1])
        and not symbol.name.startswith("#")
        and not _PRIVATE_MODIFIER.search(line.split("(", 1)[0])
    )


def _pub(symbol: Symbol, path: str, parents: Sequence[Symbol]) -> bool:
    return bool(_PUB.match(_first_line(symbol)))


def _modifiers(symbol: Symbol, path: str, parents: Sequence[Symbol]) -> bool:
    head = _first_line(symbol).split("(", 1)[0].split("{", 1)[0]
    return not _PRIVATE_MODIFIER.search(head) and all(_modifiers(p, path, ()) for p in parents[-1:])


_PUBLIC = re.compile(r"\bpublic\b")


def _public_keyword(symbol: Symbol, path: str, parents: Sequence[Symbol]) -> bool:
    head = _first_line(symbol).split("(", 1)[0].split("{", 1)[0]
    return bool(_PUBLIC.search(head)) and all(_public_keyword(p, path, ()) for p in parents[-1:])


def _defp(symbol: Symbol, path: str, parents: Sequence[Symbol]) -> bool:
    return not re.match(r"^\s*(defp|defmacrop|defguardp)\b", _first_line(symbol))


def _header(symbol: Symbol, path: str, parents: Sequence[Symbol]) -> bool:
    return is_c_header(path) and not _STATIC.match(_first_line(symbol))


def is_static(symbol: Symbol) -> bool:
    """A C/C++ definition declared ``static`` (file-local)."""
    return bool(_STATIC.match(_first_line(symbol)))


_RULES: dict[str, Callable[[Symbol, str, Sequence[Symbol]], bool]] = {
    "underscore": _underscore,
    "capitalized": _capitalized,
    "export": _export,
    "pub": _pub,
    "modifiers": _modifiers,
    "public-keyword": _public_keyword,
    "defp": _defp,
    "header": _header,
    "package-face": _package_face,
}


def is_public(convention: str | None, symbols: Sequence[Symbol], index: int, path: str) -> bool | None:
    """Whether ``symbols[index]`` (of the file ``path``) is public by ``convention``; None when
    the language declares none (or one this version does not know)."""
    rule = _RULES.get(convention or "")
    if rule is None:
        return None
    parents: list[Symbol] = []
    parent = symbols[index].parent
    while 0 <= parent < len(symbols) and len(parents) < 64:
        parents.append(symbols[parent])
        parent = symbols[parent].parent
    parents.reverse()  # outermost first
    return rule(symbols[index], path, parents)


class Visibility:
    """Public or not, per definition, by each file's language convention (memoized per map)."""

    def __init__(self, conventions: Mapping[str, str | None], languages: Mapping[str, str]) -> None:
        self._conventions = conventions
        self._languages = languages

    @property
    def conventions(self) -> Mapping[str, str | None]:
        """Language -> its convention: the same object for every map of one pipeline."""
        return self._conventions

    def _convention(self, path: str) -> str | None:
        """The convention of ``path``'s language (None: none known)."""
        language = self._languages.get(path)
        return self._conventions.get(language) if language is not None else None

    def private(self, path: str, symbols: Sequence[Symbol], index: int) -> bool:
        """Whether another file has less use for the definition: not public by its language's
        convention, except that in C and C++ (``header``) only a ``static`` definition is private
        (a function defined in a ``.c`` file is what some header declares)."""
        return _private(self._convention(path), path, symbols, index)

    def private_flags(self, path: str, symbols: Sequence[Symbol]) -> list[bool]:
        """:meth:`private` of each of a file's symbols (its language looked up once)."""
        convention = self._convention(path)
        return [_private(convention, path, symbols, i) for i in range(len(symbols))]

    def public(self, path: str, symbols: Sequence[Symbol], index: int) -> bool | None:
        return is_public(self._convention(path), symbols, index, path)


def _private(convention: str | None, path: str, symbols: Sequence[Symbol], index: int) -> bool:
    """:meth:`Visibility.private` under ``convention``."""
    if convention == "header":
        return is_static(symbols[index])
    return is_public(convention, symbols, index, path) is False
