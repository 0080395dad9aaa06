"""The lexical models kept between processes (store/lexicon.py): what a process adopts scores as a
fresh build would, bit for bit, and a kept file that is not exactly ours is ignored whole."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.pipeline.rank import lexical as lexical_module
from hybridmap.pipeline.rank.lexical import LexicalModel, Vocabulary
from hybridmap.store import lexicon as lexicon_module
from hybridmap.store.lexicon import (
    KeptLexicon,
    KeptModel,
    decode_lexicon,
    encode_lexicon,
    lexicon_path,
    load_lexicon,
)

WORD = st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"])
ROOT = "/work/repo"


def _kept(files: list[tuple[str, str, Counter[str]]], whole_text: bool = False) -> tuple[KeptLexicon, LexicalModel]:
    """What a process with these (path, key, words) files keeps, and its model."""
    vocabulary = Vocabulary()
    model = LexicalModel.of([vocabulary.vector(words) for _, _, words in files], len(vocabulary))
    model.scores(vocabulary.known(["alpha", "beta"]), len(files))  # its postings made
    ids, counts, starts, order = model.compacted()
    kept = KeptModel(whole_text, tuple((p, k) for p, k, _ in files), ids, counts, starts, order)
    return KeptLexicon(vocabulary.words, (kept,)), model


def _decoded_again(lexicon: KeptLexicon) -> KeptLexicon:
    decoded = decode_lexicon(b"".join(encode_lexicon(ROOT, lexicon)), ROOT)
    assert decoded is not None
    return decoded


@settings(max_examples=150, deadline=None)
@given(
    docs=st.lists(st.lists(WORD, min_size=0, max_size=25), min_size=1, max_size=10),
    edits=st.lists(
        st.tuples(st.sampled_from(["change", "add", "remove"]), st.integers(0, 40), st.lists(WORD)), max_size=4
    ),
    query=st.lists(WORD, min_size=1, max_size=5),
)
def test_an_adopted_model_scores_as_a_fresh_process_would(
    docs: list[list[str]], edits: list[tuple[str, int, list[str]]], query: list[str]
) -> None:
    """Kept by one process, changed on disk (files edited, added, removed), adopted by the next
    through the file's bytes: the same scores, bit for bit, as a process that counts everything
    in its own word numbering."""
    files = [(f"f{i}.py", f"key{i}", Counter(d)) for i, d in enumerate(docs)]
    lexicon, _ = _kept(files)
    lexicon = _decoded_again(lexicon)
    serial = len(files)
    for kind, at, words in edits:
        serial += 1
        if kind == "change" and files:
            path, _, _ = files[at % len(files)]
            files[at % len(files)] = (path, f"key{serial}", Counter(words))
        elif kind == "add":
            files.insert(at % (len(files) + 1), (f"g{serial}.py", f"key{serial}", Counter(words)))
        elif kind == "remove" and len(files) > 1:
            del files[at % len(files)]
    # The next process: the kept words first, its own counted for what changed.
    vocabulary = Vocabulary(lexicon.words)
    (kept,) = lexicon.models
    slot_of = {pair: slot for slot, pair in enumerate(kept.files)}
    slots = np.array([slot_of.get((p, k), -1) for p, k, _ in files], np.int64)
    fresh = {fi: vocabulary.vector(files[fi][2]) for fi in np.flatnonzero(slots < 0).tolist()}
    adopted = LexicalModel.kept(kept, len(vocabulary)).updated(slots, fresh, len(vocabulary))
    # A process that counts everything, its ids numbered in another order.
    other = Vocabulary(sorted({w for _, _, c in files for w in c}, reverse=True))
    built = LexicalModel.of([other.vector(c) for _, _, c in files], len(other))
    expected = built.scores(other.known(query), len(files))
    if adopted is None:  # too much changed: the next process builds afresh, as `built`
        return
    assert adopted.scores(vocabulary.known(query), len(files)).tobytes() == expected.tobytes()
    assert adopted.average == built.average


def test_a_model_kept_after_edits_is_compacted_to_its_graph_order() -> None:
    """A model carried over edits holds dead slots and files out of slot order; what it keeps is
    its live files' entries in file order, which a later process scores as the live model does."""
    vocabulary = Vocabulary()
    docs = [Counter({"alpha": 2, "beta": 1}), Counter({"gamma": 3}), Counter({"alpha": 1, "delta": 4})]
    docs += [Counter({"eta": i + 1, "beta": 1}) for i in range(5)]  # few enough changed to carry over
    model = LexicalModel.of([vocabulary.vector(d) for d in docs], len(vocabulary))
    docs[0] = Counter({"zeta": 1, "alpha": 5})
    kept_slots = np.array([-1, *range(1, 8)])
    carried = model.updated(kept_slots, {0: vocabulary.vector(docs[0])}, len(vocabulary))
    assert carried is not None and carried.slot_of_file.tolist() == [8, *range(1, 8)]
    ids, counts, starts, order = carried.compacted()
    assert starts.tolist()[:4] == [0, 2, 3, 5] and np.array_equal(order, np.argsort(ids, kind="stable"))
    kept = KeptModel(False, tuple((f"f{i}", str(i)) for i in range(8)), ids, counts, starts, order)
    again = LexicalModel.kept(kept, len(vocabulary)).updated(np.arange(8), {}, len(vocabulary))
    assert again is not None
    query = vocabulary.known(["alpha", "zeta", "gamma", "eta"])
    assert again.scores(query, 8).tobytes() == carried.scores(query, 8).tobytes()


def _valid() -> tuple[KeptLexicon, bytes]:
    files = [("a.py", "k1", Counter({"alpha": 2, "beta": 1})), ("b.py", "k2", Counter({"beta": 3, "gamma": 1}))]
    lexicon, _ = _kept(files)
    return lexicon, b"".join(encode_lexicon(ROOT, lexicon))


def test_a_kept_lexicon_reads_back_as_written() -> None:
    lexicon, data = _valid()
    decoded = decode_lexicon(data, ROOT)
    assert decoded is not None and decoded.words == lexicon.words
    (model,) = decoded.models
    (written,) = lexicon.models
    assert model.files == written.files and model.order is not None and written.order is not None
    for a, b in ((model.ids, written.ids), (model.counts, written.counts), (model.starts, written.starts)):
        assert np.array_equal(a, b)
    assert np.array_equal(model.order, written.order)


def _with_array(data: bytes, lexicon: KeptLexicon, which: int, values: list[int]) -> bytes:
    """``data`` with array ``which`` (0 ids, 1 counts, 2 starts, 3 order) of the one model replaced."""
    (model,) = lexicon.models
    pieces = encode_lexicon(ROOT, lexicon)
    dtype = ["<i4", "<i4", "<i8", "<i4"][which]
    pieces[2 + which] = np.array(values, dtype).tobytes()
    replaced = [model.ids, model.counts, model.starts, model.order][which]
    assert replaced is not None and len(pieces[2 + which]) == len(replaced) * np.dtype(dtype).itemsize
    return b"".join(pieces)


@pytest.mark.parametrize(
    "damage",
    ["another root", "truncated", "longer", "id out of range", "count zero", "starts backwards", "order unstable"],
)
def test_a_kept_lexicon_that_is_not_exactly_ours_is_ignored(damage: str) -> None:
    lexicon, data = _valid()
    (model,) = lexicon.models
    n = len(model.ids)
    if damage == "another root":
        assert decode_lexicon(data, "/elsewhere") is None
        return
    if damage == "truncated":
        data = data[:-3]
    elif damage == "longer":
        data += b"\x00"
    elif damage == "id out of range":
        data = _with_array(data, lexicon, 0, [len(lexicon.words), *model.ids[1:].tolist()])
    elif damage == "count zero":
        data = _with_array(data, lexicon, 1, [0, *model.counts[1:].astype(int).tolist()])
    elif damage == "starts backwards":
        data = _with_array(data, lexicon, 2, [0, n + 1, n])  # ends where it should, a file's end before its start
    else:
        assert model.order is not None
        assert model.order.tolist() == [0, 1, 2, 3] and model.ids.tolist() == [0, 1, 1, 2]
        data = _with_array(data, lexicon, 3, [0, 2, 1, 3])  # sorted by id, but not stably
    assert decode_lexicon(data, ROOT) is None


def test_the_words_paths_and_keys_are_tables_checked_by_count() -> None:
    """Words, paths and keys are NUL-separated after the arrays: a string holding a NUL is never
    written (the lexicon is not kept), and a table that splits into another count is refused."""
    lexicon, data = _valid()
    (model,) = lexicon.models
    named = KeptModel(model.whole_text, (("a\0b.py", "k"), *model.files[1:]), model.ids, model.counts, model.starts)
    with pytest.raises(ValueError, match="NUL"):
        encode_lexicon(ROOT, KeptLexicon(lexicon.words, (named,)))
    first_path = model.files[0][0].encode()
    assert data.count(first_path + b"\0") == 1
    assert decode_lexicon(data.replace(first_path + b"\0", first_path[:-1] + b"\0\0"), ROOT) is None
    twice = KeptModel(model.whole_text, (model.files[1], *model.files[1:]), model.ids, model.counts, model.starts)
    assert decode_lexicon(b"".join(encode_lexicon(ROOT, KeptLexicon(lexicon.words, (twice,)))), ROOT) is None


@settings(max_examples=100, deadline=None)
@given(ids=st.lists(st.integers(0, 5), min_size=1, max_size=40), data=st.data(), chunk=st.integers(1, 7))
def test_the_order_is_checked_step_by_step_as_whole(ids: list[int], data: st.DataObject, chunk: int) -> None:
    """The postings order is checked in steps of ``ORDER_CHECK_CHUNK`` entries (its temporaries
    were 100 MB of the 100k one-shot map's peak): any step size accepts exactly the stable sort
    of the ids, whatever permutation is offered, across the steps' borders too."""
    array = np.array(ids, np.int32)
    stable = np.argsort(array, kind="stable").astype(np.int32)
    offered = np.array(data.draw(st.permutations(stable.tolist())), np.int32)
    saved = lexicon_module.ORDER_CHECK_CHUNK
    try:
        lexicon_module.ORDER_CHECK_CHUNK = chunk
        assert lexicon_module._stably_sorted(array, stable, len(ids))
        assert lexicon_module._stably_sorted(array, offered, len(ids)) == np.array_equal(offered, stable)
    finally:
        lexicon_module.ORDER_CHECK_CHUNK = saved


@settings(max_examples=300, deadline=None)
@given(at=st.integers(0, 10_000), value=st.integers(0, 255), cut=st.integers(0, 10_000))
def test_damaged_bytes_never_raise(at: int, value: int, cut: int) -> None:
    """Any byte changed or the file cut anywhere: None, or a lexicon whose every id is a word and
    every file's entries are in range (the checks hold, so nothing indexes out of bounds)."""
    _, data = _valid()
    damaged = bytearray(data)
    damaged[at % len(data)] = value
    for candidate in (bytes(damaged), data[: cut % len(data)]):
        decoded = decode_lexicon(candidate, ROOT)
        if decoded is not None:
            for model in decoded.models:
                assert (model.ids < len(decoded.words)).all() and model.starts[-1] == len(model.ids)


def test_a_lexicon_larger_than_the_settings_allow_is_not_read(tmp_path: Path) -> None:
    _, data = _valid()
    path = tmp_path / "kept.bin"
    path.write_bytes(data)
    assert load_lexicon(path, ROOT, max_files=1) is not None
    path.write_bytes(data + b"\x00" * 40_000)
    assert load_lexicon(path, ROOT, max_files=1) is None  # not read: 32 KiB per file at most


def test_a_loaded_lexicon_holds_its_arrays_not_its_json(tmp_path: Path) -> None:
    """The models' arrays are views of the bytes after the JSON, read apart: the JSON of words and
    files (40 MB at 100,000 files) is not held with them. Damaged or cut files read from disk are
    ignored as their bytes are."""
    lexicon, data = _valid()
    path = tmp_path / "kept.bin"
    path.write_bytes(data)
    loaded = load_lexicon(path, ROOT, max_files=10)
    assert loaded is not None and loaded.words == lexicon.words
    head = lexicon_module._HEAD.size + lexicon_module._HEAD.unpack_from(data)[2]  # the JSON's end
    for model in loaded.models:
        assert model.ids.base is not None and len(model.ids.base) == len(data) - head
    for at in range(0, len(data), 7):
        damaged = bytearray(data)
        damaged[at] ^= 0xFF
        for candidate in (bytes(damaged), data[:at]):
            path.write_bytes(candidate)
            loaded_again = load_lexicon(path, ROOT, max_files=10)
            assert (loaded_again is None) == (decode_lexicon(candidate, ROOT) is None), at


FILES = {
    "billing/invoice.py": "def invoice_total(lines, tax_rate):\n    return sum(lines) * tax_rate\n",
    "reports/tax_report.py": "def invoice_tax_report(lines, tax_rate):\n    return [x * tax_rate for x in lines]\n",
    "core/money.py": "def round_cents(value):\n    return round(value, 2)\n",
    **{f"shop/cart{i}.py": f"def cart_price_{i}(items):\n    return sum(items)\n" for i in range(6)},
}


def _chat_map(root: Path, cache: Path, **overrides: object) -> tuple[dict[str, float], str]:
    with RepoMap(root, overrides={"cache_dir": str(cache), **overrides}, start_servers=False) as repo:
        result = repo.map(mode="static", chat_files=["billing/invoice.py"], tokens=2000)
    return dict(result.stats), result.text


def test_a_later_process_counts_the_words_only_of_what_changed(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    first, text = _chat_map(root, cache)
    assert first["lexicon_files_kept"] == 0
    kept = lexicon_path(cache, str(root.resolve()))
    assert kept.exists() and kept.stat().st_mode & 0o077 == 0
    again, same = _chat_map(root, cache)
    assert again["lexicon_files_kept"] == len(FILES) and same == text
    written = kept.stat().st_mtime_ns
    _chat_map(root, cache)
    assert kept.stat().st_mtime_ns == written  # adopted whole: nothing new to keep
    (root / "reports/tax_report.py").write_text("def invoice_tax_summary(lines, tax_rate, rounding):\n    pass\n")
    edited, text = _chat_map(root, cache)
    assert edited["lexicon_files_kept"] == len(FILES) - 1
    _, control = _chat_map(root, tmp_path / "fresh", persist_lexicon=False)
    assert text == control and "invoice_tax_summary" in text
    assert not lexicon_path(tmp_path / "fresh", str(root.resolve())).exists()


@pytest.mark.parametrize("damage", ["garbage", "another root's", "empty"])
def test_a_planted_lexicon_changes_no_map(git_repo, tmp_path: Path, damage: str) -> None:  # type: ignore[no-untyped-def]
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    _, text = _chat_map(root, cache)
    kept = lexicon_path(cache, str(root.resolve()))
    if damage == "garbage":
        kept.write_bytes(b"HMLX\x01" + b"\xff" * 64)
    elif damage == "another root's":
        kept.write_bytes(kept.read_bytes().replace(str(root.resolve()).encode(), b"/" * len(str(root.resolve()))))
    else:
        kept.write_bytes(b"")
    stats, again = _chat_map(root, cache)
    assert stats["lexicon_files_kept"] == 0 and again == text


def test_a_process_that_made_one_kind_of_model_keeps_the_other(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A map with only a message makes only the whole-text model; after an edit it counts words and
    keeps its models: the names' model kept by the process before goes on, so the next chat map
    adopts both."""
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    _chat_map(root, cache)  # both kinds kept
    (root / "core/money.py").write_text("def round_cents(value, places):\n    return round(value, places)\n")
    with RepoMap(root, overrides={"cache_dir": str(cache)}, start_servers=False) as repo:
        result = repo.map(mode="static", message="where is the invoice tax computed", tokens=2000)
    assert result.stats["lexicon_files_kept"] == len(FILES) - 1
    lexicon = load_lexicon(lexicon_path(cache, str(root.resolve())), str(root.resolve()), 1000)
    assert lexicon is not None and sorted(m.whole_text for m in lexicon.models) == [False, True]
    stats, text = _chat_map(root, cache)
    assert stats["lexicon_files_kept"] >= len(FILES) - 1
    _, control = _chat_map(root, tmp_path / "fresh", persist_lexicon=False)
    assert text == control


def test_a_lexicon_a_few_files_away_is_not_written_again(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """After an edit of a file or two in a large repository the process does not keep its
    lexicon again (sorting and writing every entry: the high of a one-shot map after an edit at
    100,000 files): the next process adopts the older one and counts the edited files again, and
    its maps are the same. Past ``KEPT_DRIFT_SHARE`` of the files the lexicon is written again."""
    many = {**FILES, **{f"pkg/mod{i}.py": f"def helper_{i}(value):\n    return value + {i}\n" for i in range(120)}}
    root = git_repo(many)
    cache = tmp_path / "cache"
    _chat_map(root, cache)
    kept = lexicon_path(cache, str(root.resolve()))
    written = kept.read_bytes()
    (root / "reports/tax_report.py").write_text("def invoice_tax_summary(lines, tax_rate, rounding):\n    pass\n")
    for _ in range(2):  # each process counts the edited file again
        stats, text = _chat_map(root, cache)
        assert stats["lexicon_files_kept"] == len(many) - 1 and kept.read_bytes() == written
        _, control = _chat_map(root, tmp_path / "fresh", persist_lexicon=False)
        assert text == control and "invoice_tax_summary" in text
    assert lexical_module.KEPT_DRIFT_SHARE * len(many) < 3
    for i in range(3):
        (root / f"pkg/mod{i}.py").write_text(f"def renamed_helper_{i}(value):\n    return value\n")
    stats, text = _chat_map(root, cache)
    assert stats["lexicon_files_kept"] == len(many) - 4 and kept.read_bytes() != written
    stats, again = _chat_map(root, cache)
    assert stats["lexicon_files_kept"] == len(many) and again == text
