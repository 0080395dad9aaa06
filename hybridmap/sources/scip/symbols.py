"""SCIP symbol strings: the package they belong to and the name tree-sitter would see.

A global symbol is ``<scheme> <manager> <package> <version> <descriptor>+`` (a space inside one
of the first four is written twice); a descriptor is a name followed by its suffix: ``/``
namespace, ``#`` type, ``.`` term, ``:`` meta, ``!`` macro, ``(disambiguator).`` method,
``[name]`` type parameter, ``(name)`` parameter. A name that is not ``[A-Za-z0-9_+$-]+`` is in
backticks (a backtick inside doubled). ``local N`` symbols belong to one document.

The strings come from an untrusted file: parsing is linear, and anything that does not follow the
grammar is None (the occurrence is then ignored), never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass

NAMESPACE = "/"
TYPE = "#"
TERM = "."
META = ":"
MACRO = "!"
METHOD = "()."
TYPE_PARAMETER = "[]"
PARAMETER = "()"

_SIMPLE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-$")


@dataclass(frozen=True, slots=True)
class ParsedSymbol:
    package: str
    """``scheme manager name version`` as written: symbols of one project share it."""
    descriptors: tuple[tuple[str, str], ...]
    """(name, suffix) from the outermost to the symbol itself."""
    parent: str
    """The symbol string of the enclosing descriptor chain ("" at the top level)."""

    @property
    def name(self) -> str:
        return self.descriptors[-1][0]

    @property
    def suffix(self) -> str:
        return self.descriptors[-1][1]


def is_local(symbol: str) -> bool:
    return symbol.startswith("local ")


def parse_symbol(symbol: str) -> ParsedSymbol | None:
    """The package and descriptors of a global symbol; None for a local or malformed one."""
    if not symbol or is_local(symbol):
        return None
    pos = 0
    for _ in range(4):  # scheme, manager, package name, version
        pos = _skip_part(symbol, pos)
        if pos < 0:
            return None
    package = symbol[: pos - 1]
    descriptors: list[tuple[str, str]] = []
    starts: list[int] = []
    end = len(symbol)
    while pos < end:
        starts.append(pos)
        parsed = _descriptor(symbol, pos)
        if parsed is None:
            return None
        name, suffix, pos = parsed
        descriptors.append((name, suffix))
    if not descriptors:
        return None
    return ParsedSymbol(package, tuple(descriptors), symbol[: starts[-1]] if len(starts) > 1 else "")


def _skip_part(symbol: str, pos: int) -> int:
    """The position after one space-terminated part (``"  "`` is an escaped space), or -1."""
    end = len(symbol)
    while pos < end:
        if symbol[pos] == " ":
            if pos + 1 < end and symbol[pos + 1] == " ":
                pos += 2
                continue
            return pos + 1
        pos += 1
    return -1


def _name(symbol: str, pos: int) -> tuple[str, int] | None:
    end = len(symbol)
    if pos < end and symbol[pos] == "`":
        out: list[str] = []
        pos += 1
        while pos < end:
            char = symbol[pos]
            if char == "`":
                if pos + 1 < end and symbol[pos + 1] == "`":
                    out.append("`")
                    pos += 2
                    continue
                return "".join(out), pos + 1
            out.append(char)
            pos += 1
        return None
    start = pos
    while pos < end and symbol[pos] in _SIMPLE:
        pos += 1
    return (symbol[start:pos], pos) if pos > start else None


def _descriptor(symbol: str, pos: int) -> tuple[str, str, int] | None:
    end = len(symbol)
    if pos < end and symbol[pos] in "[(":  # type parameter or parameter: '[' name ']', '(' name ')'
        closing = "]" if symbol[pos] == "[" else ")"
        named = _name(symbol, pos + 1)
        if named is None or named[1] >= end or symbol[named[1]] != closing:
            return None
        return named[0], TYPE_PARAMETER if closing == "]" else PARAMETER, named[1] + 1
    named = _name(symbol, pos)
    if named is None or named[1] >= end:
        return None
    name, pos = named
    char = symbol[pos]
    if char in "/#.:!":
        return name, char, pos + 1
    if char == "(":  # method: '(' disambiguator ').'
        close = symbol.find(").", pos)
        if close < 0:
            return None
        return name, METHOD, close + 2
    return None


def reference_name(parsed: ParsedSymbol) -> str:
    """The identifier tree-sitter records for a use of this symbol: the last descriptor's name;
    for a module (``store.disk/__init__:``, ``src/`disk.ts`/``), the module's own last name
    (``disk``), as an ``import``'s identifier names it."""
    name, suffix = parsed.descriptors[-1]
    if suffix == META and name == "__init__" and len(parsed.descriptors) > 1:
        return parsed.descriptors[-2][0].rsplit(".", 1)[-1]  # Python's dotted module name
    if suffix == NAMESPACE:
        stem, dot, extension = name.rpartition(".")
        if dot and extension in _SCRIPT_EXTENSIONS:  # a TypeScript/JavaScript file as a module
            return stem
    return name


_SCRIPT_EXTENSIONS = frozenset({"ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"})
