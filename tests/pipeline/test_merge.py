"""The merge of tree-sitter and server symbols, and the conversion of server answers (pure).

Server answers here are lsprotocol records shaped like what the real servers sent
(LSP-SERVERS.md and tests/sources/test_lsp_symbols.py check the real servers themselves).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types as T

from hybridmap.infra.patched import Patched
from hybridmap.model import FileTags, Provenance, Span, Symbol
from hybridmap.pipeline.merge import MemoEntry, MergeMemo, merge_file, merge_tags, merge_views
from hybridmap.sources.base import SourceView
from hybridmap.sources.lsp.symbols import (
    detail_from_hover,
    plain_name,
    symbols_from_answer,
    utf8_col,
    utf16_col,
)

SOURCE = b"""import os

class Runner:
    def run(self, key):
        helper = 1
        return key

    limit = 3

def load(path):
    return path
"""
LINES = SOURCE.split(b"\n")


def _static() -> FileTags:
    return FileTags(
        (
            Symbol("Runner", "class", Span(2, 0, 7, 13), 2, 6, "class Runner:"),
            Symbol("run", "method", Span(3, 4, 5, 18), 3, 8, "    def run(self, key):", parent=0),
            Symbol("load", "function", Span(9, 0, 10, 15), 9, 4, "def load(path):"),
        )
    )


def _range(l1: int, c1: int, l2: int, c2: int) -> T.Range:
    return T.Range(start=T.Position(line=l1, character=c1), end=T.Position(line=l2, character=c2))


def _hierarchical() -> list[T.DocumentSymbol]:
    return [
        T.DocumentSymbol(
            name="Runner",
            kind=T.SymbolKind.Class,
            range=_range(2, 0, 7, 13),
            selection_range=_range(2, 6, 2, 12),
            children=[
                T.DocumentSymbol(
                    name="run",
                    kind=T.SymbolKind.Method,
                    range=_range(3, 4, 5, 18),
                    selection_range=_range(3, 8, 3, 11),
                    detail="def run(self, key)",
                    children=[
                        T.DocumentSymbol(
                            name="helper",
                            kind=T.SymbolKind.Variable,
                            range=_range(4, 8, 4, 18),
                            selection_range=_range(4, 8, 4, 14),
                        )
                    ],
                ),
                T.DocumentSymbol(
                    name="limit",
                    kind=T.SymbolKind.Variable,
                    range=_range(7, 4, 7, 13),
                    selection_range=_range(7, 4, 7, 9),
                ),
            ],
        ),
        T.DocumentSymbol(
            name="load", kind=T.SymbolKind.Function, range=_range(9, 0, 10, 15), selection_range=_range(9, 4, 9, 8)
        ),
        T.DocumentSymbol(
            name="describe('x') callback",
            kind=T.SymbolKind.Function,
            range=_range(9, 0, 10, 15),
            selection_range=_range(9, 0, 9, 3),
        ),
    ]


def test_hierarchical_answer_becomes_symbols_without_locals() -> None:
    tags = symbols_from_answer(_hierarchical(), LINES, "utf-16", max_signature_lines=6, detail_chars=160)
    assert tags.complete
    assert [(s.name, s.kind, s.name_line, s.name_col) for s in tags.symbols] == [
        ("Runner", "class", 2, 6),
        ("run", "method", 3, 8),
        ("limit", "variable", 7, 4),
        ("load", "function", 9, 4),
    ]
    # 'helper' is a local of run(); the tsserver-style callback name is not an identifier.
    assert tags.symbols[1].parent == 0 and tags.symbols[2].parent == 0 and tags.symbols[3].parent == -1
    assert tags.symbols[1].detail == "def run(self, key)"
    assert tags.symbols[2].signature == "    limit = 3"
    assert all(s.provenance == Provenance.LSP for s in tags.symbols)


def test_merge_confirms_adds_and_keeps() -> None:
    server = symbols_from_answer(_hierarchical(), LINES, "utf-16", max_signature_lines=6, detail_chars=160)
    merged = merge_file(_static(), server)
    by_name = {s.name: s for s in merged.symbols}
    assert by_name["run"].provenance == Provenance.TREE_SITTER_AND_LSP
    assert by_name["run"].detail == "def run(self, key)"
    assert by_name["run"].signature == "    def run(self, key):"  # source text stays
    assert by_name["limit"].provenance == Provenance.LSP  # the query missed it; the server did not
    assert merged.symbols[by_name["limit"].parent].name == "Runner"
    # Static symbols come first, in their order, so static indices stay valid.
    assert [s.name for s in merged.symbols[:3]] == ["Runner", "run", "load"]


def test_static_symbols_the_server_omits_stay() -> None:
    server = FileTags(
        (Symbol("load", "function", Span(9, 0, 10, 15), 9, 4, "def load(path):", provenance=Provenance.LSP),)
    )
    merged = merge_file(_static(), server)
    assert [(s.name, s.provenance) for s in merged.symbols] == [
        ("Runner", Provenance.TREE_SITTER),
        ("run", Provenance.TREE_SITTER),
        ("load", Provenance.TREE_SITTER_AND_LSP),
    ]


def test_flat_answer_confirms_but_never_adds() -> None:
    # pylsp lists imports as if they were defined in the importing file.
    flat = [
        T.SymbolInformation(
            name="os", kind=T.SymbolKind.Module, location=T.Location(uri="file:///x.py", range=_range(0, 0, 0, 9))
        ),
        T.SymbolInformation(
            name="load", kind=T.SymbolKind.Function, location=T.Location(uri="file:///x.py", range=_range(9, 0, 10, 15))
        ),
    ]
    server = symbols_from_answer(flat, LINES, "utf-16", max_signature_lines=6, detail_chars=160)
    assert not server.complete
    assert [(s.name, s.name_line, s.name_col) for s in server.symbols] == [("os", 0, 7), ("load", 9, 4)]
    merged = merge_file(_static(), server)
    assert "os" not in {s.name for s in merged.symbols}
    assert merged.symbols[2].provenance == Provenance.TREE_SITTER_AND_LSP


def test_hover_details_fill_empty_details_only() -> None:
    merged = merge_file(
        _static(),
        None,
        "a.py",
        {("a.py", 9, 4): "def load(path: str) -> str", ("a.py", 3, 8): "def run(self, key: str)"},
    )
    assert merged.symbols[2].detail == "def load(path: str) -> str"
    assert merged.symbols[1].detail == "def run(self, key: str)"  # static symbols have none of their own
    server = symbols_from_answer(_hierarchical(), LINES, "utf-16", max_signature_lines=6, detail_chars=160)
    merged = merge_file(_static(), server, "a.py", {("a.py", 3, 8): "from hover"})
    assert merged.symbols[1].detail == "def run(self, key)"  # documentSymbol's detail wins


def test_merge_tags_reuses_unchanged_files() -> None:
    static = {"a.py": _static(), "b.py": _static()}
    server = {"a.py": symbols_from_answer(_hierarchical(), LINES, "utf-16", max_signature_lines=6, detail_chars=160)}
    memo: dict = {}
    first = merge_tags(static, server, None, memo)
    assert first["b.py"] is static["b.py"]
    second = merge_tags(static, server, None, memo)
    assert second["a.py"] is first["a.py"]


def test_names_and_columns() -> None:
    assert plain_name("(Runner).Run") == "Run"
    assert plain_name("(*Store).Load") == "Load"
    assert plain_name("Store::load") == "load"
    assert plain_name("operator+") == "operator+"
    line = "    s = '😀é'; load()".encode()
    col8 = line.index(b"load")
    col16 = utf16_col(line, col8)
    assert col16 == len("    s = '😀é'; ".encode("utf-16-le")) // 2
    assert utf8_col(line, col16, "utf-16") == col8
    assert utf8_col(line, col8, "utf-8") == col8


def test_hover_text_in_the_shapes_servers_send() -> None:
    def hover(value: str, kind: T.MarkupKind = T.MarkupKind.PlainText) -> T.Hover:
        return T.Hover(contents=T.MarkupContent(kind=kind, value=value))

    assert (
        detail_from_hover(hover("def run(\n    self,\n    key: str\n) -> int"), 160)
        == "def run( self, key: str ) -> int"
    )  # ty
    assert (
        detail_from_hover(hover("(function) def load(key: str) -> list[str]"), 160) == "def load(key: str) -> list[str]"
    )  # basedpyright
    assert (
        detail_from_hover(
            hover("\n```typescript\n(method) Runner.run(key: string): number\n```\n", T.MarkupKind.Markdown), 160
        )
        == "Runner.run(key: string): number"
    )
    assert (
        detail_from_hover(
            hover("function load\n\n→ int\n\nParameters:\n\n- const char * key\n\nstatic int load(const char *key)"),
            160,
        )
        == "static int load(const char *key)"
    )  # clangd
    assert detail_from_hover(None, 160) == ""
    assert len(detail_from_hover(hover("x" * 500), 160)) == 160


def test_imports_and_non_member_children_are_not_symbols() -> None:
    lines = b"""import { load } from "./disk";
export * from "./memory";
const handler = () => {
  const inner = 1;
};
export const config = { port: 3, host: "x" };
class Store {
  size = 0;
}
""".split(b"\n")

    def sym(name: str, kind: T.SymbolKind, line: int, children: list | None = None) -> T.DocumentSymbol:
        return T.DocumentSymbol(
            name=name,
            kind=kind,
            range=_range(line, 0, line, 5),
            selection_range=_range(line, 0, line, 5),
            children=children,
        )

    answer = [  # what tsgo sends for such a file
        sym("load", T.SymbolKind.Variable, 0),
        sym("handler", T.SymbolKind.Variable, 2, [sym("inner", T.SymbolKind.Variable, 3)]),
        sym(
            "config",
            T.SymbolKind.Variable,
            5,
            [sym("port", T.SymbolKind.Property, 5), sym("host", T.SymbolKind.Property, 5)],
        ),
        sym("Store", T.SymbolKind.Class, 6, [sym("size", T.SymbolKind.Property, 7)]),
    ]
    tags = symbols_from_answer(answer, lines, "utf-16", max_signature_lines=6, detail_chars=160)
    assert [s.name for s in tags.symbols] == ["handler", "config", "Store", "size"]


# --- merges kept up to date -------------------------------------------------------------------

PATHS = [f"m{i}.py" for i in range(6)]


def _file(names: tuple[str, ...], provenance: str = Provenance.TREE_SITTER) -> FileTags:
    return FileTags(
        tuple(
            Symbol(name, "function", Span(i * 2, 0, i * 2 + 1, 0), i * 2, 4, f"def {name}():", -1, provenance)
            for i, name in enumerate(names)
        )
    )


NAMES = st.sampled_from(["load", "save", "run", "Runner"])
FILE = st.lists(NAMES, max_size=3, unique=True).map(tuple)
#: One step: paths the base sets (None: removes), paths a server's view sets or drops, hovers.
STEP = st.tuples(
    st.dictionaries(st.sampled_from(PATHS), st.one_of(st.none(), FILE), max_size=2),
    st.dictionaries(st.sampled_from(PATHS), st.one_of(st.none(), FILE), max_size=2),
    st.sets(st.sampled_from(PATHS), max_size=2),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=6))
def test_a_merge_kept_up_to_date_is_the_merge_made_afresh(steps: list[tuple[dict, dict, set]]) -> None:
    """Views moving step by step (the base patched, as the base source hands it; a server's view
    anew each time; hovers coming and going): the merge of only the files whose inputs moved
    equals the merge of every file with a plain memo (a file's hover kept while its inputs stand,
    as that memo keeps it), at every step, and the two memos hold the same files."""
    base_tags: dict[str, FileTags] = {p: _file(("load",)) for p in PATHS}
    server: dict[str, FileTags] = {}
    memo, plain = MergeMemo(), dict[str, MemoEntry]()
    for base_change, server_change, hovered in steps:
        built = {p: _file(names) if names is not None else None for p, names in base_change.items()}
        base_tags = Patched.patch(base_tags, built)
        server = {**server}
        for path, names in server_change.items():
            if names is None:
                server.pop(path, None)
            else:
                server[path] = _file(names, Provenance.LSP)
        details = {(p, 0, 4): f"hover of {p}" for p in hovered}
        views = (SourceView(Provenance.LSP, server, details=details),)
        kept = merge_views(SourceView(Provenance.TREE_SITTER, base_tags), views, memo)
        every = merge_views(SourceView(Provenance.TREE_SITTER, base_tags), views, plain)
        assert dict(kept.tags) == dict(every.tags)
        assert set(memo) == set(plain)
