"""A file parsed again from its last tree (``sources/reparse.py``) gives the tags a fresh parse
gives, after any sequence of edits, in every language tried; and what is kept stays bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridmap.languages.registry import LanguageRegistry
from hybridmap.settings import Settings
from hybridmap.sources.reparse import KeptTrees, text_edit
from hybridmap.sources.treesitter import ParseOptions, parse_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"
#: Real files of languages with and without an external scanner (Python's indentation, Rust's
#: raw strings, C's preprocessor), and one whose query backfills references (Go's).
SOURCES = (
    "python/app.py",
    "python/inventory.py",
    "typescript/app.ts",
    "go/main.go",
    "c/stack.c",
    "rust/src/geometry.rs",
)
#: What an edit inserts: code, half-finished code, indentation, brackets, quotes, a comment,
#: non-ASCII text (columns are counted in bytes).
SNIPPETS = (
    "\n\ndef added(value):\n    return value\n",
    "    x = call(y)\n",
    "function f(a: number) { return a; }\n",
    "func G() int { return 1 }\n",
    "int h(void) { return 0; }\n",
    "fn k() -> u8 { 0 }\n",
    "{",
    "}",
    "(",
    '"',
    "'''",
    "/* é */",
    "# ünïcode\n",
    "\t",
    "\n",
    "",
)

_registry = LanguageRegistry.load()
_options = ParseOptions.from_settings(Settings())


def _first_parse(rel: str) -> tuple[str, Any, bytes, KeptTrees]:
    """A fixture file's language, grammar, text and trees, after its first parse (checked against
    a fresh one)."""
    language = _registry.language_for(rel)
    assert language is not None
    compiled = _registry.compiled(language)
    text = (FIXTURES / rel).read_bytes()
    kept = KeptTrees(1_000_000)
    assert parse_file(compiled, text, _options, kept, rel) == parse_file(compiled, text, _options)
    return language, compiled, text, kept


edits = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 40), st.sampled_from(SNIPPETS)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SOURCES), edits)
def test_a_tree_parsed_from_the_last_one_gives_a_fresh_parse_tags(
    rel: str, steps: list[tuple[float, int, str]]
) -> None:
    _, compiled, text, kept = _first_parse(rel)
    for where, cut, snippet in steps:
        at = int(where * len(text))
        text = text[:at] + snippet.encode() + text[at + cut :]
        assert len(kept) == 1  # the last parse's tree is there to start from
        assert parse_file(compiled, text, _options, kept, rel) == parse_file(compiled, text, _options)


#: Edits that keep a file well formed, per language: what an agent's edit mostly is, and where a
#: kept tree is used (a tree with a syntax error is parsed afresh).
WELL_FORMED = {
    "python": ("\n\ndef g{n}(a):\n    return a\n", "\nx{n} = call{n}(1)\n", "\nclass K{n}:\n    pass\n", "\n# {n}\n"),
    "typescript": ("\nfunction g{n}(a: number) {{ return a; }}\n", "\nconst x{n} = call{n}(1);\n", "\n// {n}\n"),
    "go": ("\nfunc g{n}(a int) int {{ return a }}\n", "\nvar x{n} = 1\n", "\n// {n}\n"),
    "c": ("\nint g{n}(int a) {{ return a; }}\n", "\nstatic int x{n} = 1;\n", "\n/* {n} */\n"),
    "rust": ("\nfn g{n}(a: u8) -> u8 {{ a }}\n", "\nstruct K{n};\n", "\n// {n}\n"),
}
line_edits = st.lists(
    st.tuples(st.sampled_from(("insert", "delete", "repeat")), st.floats(0, 1), st.integers(0, 99)),
    min_size=1,
    max_size=10,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SOURCES), line_edits)
def test_well_formed_edits_parse_from_the_kept_tree_to_a_fresh_parse_tags(
    rel: str, steps: list[tuple[str, float, int]]
) -> None:
    """Whole lines inserted, deleted or repeated: the kept tree is used (while the file has no
    syntax error) and the tags are a fresh parse's."""
    language, compiled, text, kept = _first_parse(rel)
    for kind, where, n in steps:
        lines = text.split(b"\n")
        i = int(where * (len(lines) - 1))
        if kind == "insert":
            snippets = WELL_FORMED[language]
            lines.insert(i, snippets[n % len(snippets)].format(n=n).encode())
        elif kind == "delete" and len(lines) > 2:
            del lines[i]
        else:
            lines.insert(i, lines[i])
        text = b"\n".join(lines)
        assert parse_file(compiled, text, _options, kept, rel) == parse_file(compiled, text, _options)


def test_an_edit_of_a_well_formed_file_is_parsed_from_its_kept_tree() -> None:
    compiled = _registry.compiled("python")
    text = (FIXTURES / "python/app.py").read_bytes()
    kept = KeptTrees(1_000_000)
    first = parse_file(compiled, text, _options, kept, "app.py")
    assert kept.reused == 0
    edited = text + b"\n\ndef appended(value):\n    return value\n"
    again = parse_file(compiled, edited, _options, kept, "app.py")
    assert kept.reused == 1 and again == parse_file(compiled, edited, _options)
    assert again.tags is not None and first.tags is not None
    assert [s.name for s in again.tags.symbols] == [*(s.name for s in first.tags.symbols), "appended"]
    broken = edited + b"def (\n"  # a syntax error: parsed afresh, and its tree not used next
    parse_file(compiled, broken, _options, kept, "app.py")
    parse_file(compiled, edited, _options, kept, "app.py")
    assert kept.reused == 1


@given(st.binary(max_size=24), st.binary(max_size=24))
def test_the_edit_between_two_texts_spans_all_they_differ_in(old: bytes, new: bytes) -> None:
    edit = text_edit(old, new)
    assert old[: edit.start_byte] == new[: edit.start_byte]
    assert old[edit.old_end_byte :] == new[edit.new_end_byte :]
    assert edit.start_byte <= edit.old_end_byte and edit.start_byte <= edit.new_end_byte
    for text, offset, point in (
        (old, edit.start_byte, edit.start_point),
        (old, edit.old_end_byte, edit.old_end_point),
        (new, edit.new_end_byte, edit.new_end_point),
    ):
        lines = text[:offset].split(b"\n")
        assert point == (len(lines) - 1, len(lines[-1]))


def test_kept_trees_are_bounded_by_their_texts_bytes() -> None:
    compiled = _registry.compiled("python")
    kept = KeptTrees(100)
    for name in ("a.py", "b.py", "c.py"):
        parse_file(compiled, b"def f():\n    return 1\n" * 2, _options, kept, name)  # 44 bytes each
    assert len(kept) == 2  # a.py went first
    assert kept.take("a.py", "python") is None and kept.take("c.py", "python") is not None
    assert kept.take("b.py", "go") is None  # another language's tree is not used (and dropped)
    parse_file(compiled, b"x = 1\n" * 20, _options, kept, "big.py")  # 120 bytes: over the bound
    assert len(kept) == 0
    nothing = KeptTrees(0)
    parse_file(compiled, b"x = 1\n", _options, nothing, "a.py")
    assert len(nothing) == 0
