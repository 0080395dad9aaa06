"""The cache's codec: what it decodes equals what was encoded, and repeated strings are shared."""

from __future__ import annotations

import pickle

from hybridmap.model import FileTags, ParseOutcome, Span, Symbol
from hybridmap.store import codec


def _tags(generation: int) -> FileTags:
    symbols = tuple(
        Symbol(f"handler_{i}", "function", Span(i, 0, i + 1, 0), i, 4, f"def handler_{i}(x):", doc=f"Gen {generation}.")
        for i in range(3)
    )
    names = ("load_config", "self", f"local_{generation}")
    positions = bytes(8 * len(names))
    return FileTags(symbols, names, positions, bytes(len(names)), 10, imports=(("Path", "pathlib"),))


def test_decoded_records_equal_the_encoded_ones_and_share_repeated_strings() -> None:
    first, second = (codec.decode(codec.encode(ParseOutcome(_tags(g)))).tags for g in (1, 2))
    assert first == _tags(1) and second == _tags(2)
    # JSON makes a new object per occurrence; interned, two records hold the same one (4.7 M
    # reference names were 281 k distinct strings in the 100,000-file monorepo's warm map).
    assert first.ref_names[0] is second.ref_names[0] and first.ref_names[1] is second.ref_names[1]
    assert first.symbols[0].name is second.symbols[0].name
    assert first.symbols[0].kind is second.symbols[2].kind
    assert first.symbols[0].provenance is second.symbols[1].provenance
    assert first.imports[0][1] is second.imports[0][1]


def test_records_from_a_parse_worker_share_repeated_strings_too() -> None:
    # A cold map's records come from the parse workers by pickle, which shares a string only
    # within one frame: two files' records unpickled apart hold one object per name.

    first, second = (pickle.loads(pickle.dumps(_tags(g))) for g in (1, 2))  # noqa: S301 (our own bytes)
    assert first == _tags(1) and second == _tags(2)
    assert first.ref_names[0] is second.ref_names[0] and first.symbols[0].name is second.symbols[0].name
    assert first.symbols[0].kind is second.symbols[1].kind
