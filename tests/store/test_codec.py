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


def test_a_lazily_decoded_outcome_says_its_problems_now_and_its_tags_when_read() -> None:
    problems = (("syntax_error", "2 syntax errors"),)
    data = codec.encode(ParseOutcome(_tags(1), problems))
    lazy = codec.decode(data, lazy_tags=True)
    assert lazy.problems == problems and isinstance(lazy.tags, codec.LazyFileTags)
    assert isinstance(lazy.tags, FileTags) and lazy.tags._tags is None  # nothing decoded yet
    tags = lazy.tags
    assert tags.symbols[1].name == "handler_1" and tags._tags is not None
    assert tags == _tags(1) and _tags(1) == tags and hash(tags) == hash(_tags(1)) and tags != _tags(2)
    assert tags.symbols is tags.symbols  # decoded once, the same values after
    assert codec.decode(data) == ParseOutcome(_tags(1), problems)  # eagerly, as before
    assert pickle.loads(pickle.dumps(tags)) == _tags(1)  # noqa: S301 (our own bytes)
    from dataclasses import replace

    assert replace(tags, line_count=99) == replace(_tags(1), line_count=99)
    # Other kinds decode as ever (only a parse outcome with tags is lazy).
    assert codec.decode(codec.encode(ParseOutcome(None, problems)), lazy_tags=True) == ParseOutcome(None, problems)


def test_threads_reading_lazy_tags_at_once_all_see_the_same_values() -> None:
    import threading

    lazies = [codec.decode(codec.encode(ParseOutcome(_tags(g))), lazy_tags=True).tags for g in range(200)]
    seen: list[list[str]] = [[], [], [], []]
    start = threading.Barrier(4)

    def read(into: list[str]) -> None:
        start.wait()
        into.extend(t.symbols[0].doc + t.ref_names[2] for t in lazies)

    threads = [threading.Thread(target=read, args=(out,)) for out in seen]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = [f"Gen {g}.local_{g}" for g in range(200)]
    assert all(out == expected for out in seen)


def test_a_lazy_record_damaged_after_it_was_read_reads_as_no_tags() -> None:
    data = codec.encode(ParseOutcome(_tags(1)))
    damaged = data[:-5] + b"?????"  # the tags' JSON broken, the problems before it whole
    lazy = codec.decode(damaged, lazy_tags=True)
    assert lazy.problems == ()
    assert lazy.tags.symbols == () and lazy.tags.ref_names == () and lazy.tags.complete is False
