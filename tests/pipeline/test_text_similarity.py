"""The text-similarity signal: BM25 of files against the chat files' and the request's words."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.languages.lexical import Bm25Files
from hybridmap.pipeline.rank import lexical as lexical_module
from hybridmap.pipeline.rank.lexical import LexicalModel, Vocabulary, _postings


def _model_of(docs: list[list[str]]) -> tuple[LexicalModel, Vocabulary]:
    """A model over ``docs`` as its files' words (what ``model_for`` builds from a graph's tags)."""
    vocabulary = Vocabulary()
    vectors = [vocabulary.vector(Counter(d)) for d in docs]
    return LexicalModel.of(vectors, len(vocabulary)), vocabulary


WORD = st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(WORD, min_size=1, max_size=30), min_size=2, max_size=12),
    query=st.lists(WORD, min_size=1, max_size=5),
)
def test_numpy_bm25_equals_sqlite_fts5(docs: list[list[str]], query: list[str]) -> None:
    """The signal's own BM25 (numpy, for speed) gives SQLite FTS5's ``bm25()`` scores, for the
    query's words some file holds above FTS5's idf floor when it has any (``MIN_IDF``: the others
    are left out)."""
    model, vocabulary = _model_of(docs)
    ours = model.scores(vocabulary.known(query), len(docs))
    n = len(docs)
    held = {word: sum(word in d for d in docs) for word in query}
    above = [w for w in query if held[w] and np.log((n - held[w] + 0.5) / (held[w] + 0.5)) > lexical_module.MIN_IDF]
    index = Bm25Files()
    try:
        for i, words in enumerate(docs):
            index.put(f"f{i}", words)
        theirs = dict(index.scores(above or query, len(docs)))
    finally:
        index.close()
    for i in range(len(docs)):
        assert np.isclose(ours[i], theirs.get(f"f{i}", 0.0), rtol=1e-6, atol=1e-9), (i, ours[i], theirs)


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(WORD, min_size=1, max_size=30), min_size=2, max_size=12),
    query=st.lists(WORD, min_size=1, max_size=8),
)
def test_hits_marked_or_sorted_give_the_same_scores_bit_for_bit(docs: list[list[str]], query: list[str]) -> None:
    """A query's hits found by sorting them or by a mask over every entry: the same entries in
    the same order, so the same float sums."""
    model, vocabulary = _model_of(docs)
    ids = vocabulary.known(query)
    share = lexical_module.MASK_SHARE
    try:
        lexical_module.MASK_SHARE = 0  # always sorted
        sorted_hits = model.scores(ids, len(docs))
        lexical_module.MASK_SHARE = 10**9  # always marked
        marked = model.scores(ids, len(docs))
    finally:
        lexical_module.MASK_SHARE = share
    assert sorted_hits.tobytes() == marked.tobytes()


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.lists(WORD, min_size=1, max_size=30), min_size=2, max_size=12),
    query=st.lists(WORD, min_size=1, max_size=8),
    chunk=st.integers(1, 40),
)
def test_hits_scored_in_runs_give_the_same_scores_bit_for_bit(
    docs: list[list[str]], query: list[str], chunk: int
) -> None:
    """Hits scored a run of entries at a time (``HITS_CHUNK``, cut at slot starts) sum each
    file's terms as one pass over every hit does: the same floats."""
    share, size = lexical_module.MASK_SHARE, lexical_module.HITS_CHUNK
    try:
        lexical_module.MASK_SHARE = 10**9  # always marked: the path that runs in chunks
        whole, vocabulary = _model_of(docs)
        ids = vocabulary.known(query)
        at_once = whole.scores(ids, len(docs))
        lexical_module.HITS_CHUNK = chunk
        chunked, _ = _model_of(docs)
        in_runs = chunked.scores(ids, len(docs))
        assert len(chunked._cuts()) > 2 or len(chunked.ids) <= chunk + 8  # cut (a file holds <= 8 words)
    finally:
        lexical_module.MASK_SHARE, lexical_module.HITS_CHUNK = share, size
    assert at_once.tobytes() == in_runs.tobytes()


def _repo(git_repo) -> Path:  # type: ignore[no-untyped-def]
    files = {
        # The chat file: invoices, their tax and totals.
        "billing/invoice.py": (
            "from core.money import round_cents\n\n"
            "def invoice_total(invoice_lines, tax_rate):\n"
            "    subtotal = sum(line.amount for line in invoice_lines)\n"
            "    return round_cents(subtotal + invoice_tax(subtotal, tax_rate))\n\n"
            "def invoice_tax(subtotal, tax_rate):\n    return subtotal * tax_rate\n"
        ),
        # Unconnected to it, but about the same thing.
        "reports/tax_report.py": (
            "def summarize_invoice_tax(invoice_lines, tax_rate):\n"
            "    return [line.amount * tax_rate for line in invoice_lines]\n\n"
            "def invoice_tax_by_rate(invoice_lines):\n"
            "    return {line.tax_rate: line.amount for line in invoice_lines}\n"
        ),
        "core/money.py": "def round_cents(value):\n    return round(value, 2)\n",
    }
    # Many files that use the money helper: the graph's own favourites.
    for i in range(12):
        files[f"shop/cart{i}.py"] = (
            f"from core.money import round_cents\n\ndef cart_price_{i}(items):\n"
            f"    return round_cents(sum(item.price for item in items))\n"
        )
    return git_repo(files)


def test_a_file_that_reads_like_the_chat_file_comes_first(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = _repo(git_repo)
    order = {}
    for boost in (0.0, 1.5):
        overrides = {"cache_dir": str(tmp_path / "c"), "text_similarity_boost": boost, "co_change_boost": 0.0}
        with RepoMap(root, overrides=overrides) as repo:
            result = repo.map(mode="static", chat_files=["billing/invoice.py"], tokens=1024)
        order[boost] = [f.path for f in result.files]
    assert order[0.0][0] != "reports/tax_report.py", order[0.0]  # the control: the graph alone
    assert order[1.5][0] == "reports/tax_report.py", order[1.5]
    first = next(f for f in result.files if f.path == "reports/tax_report.py")
    assert "reads like the chat files or the request" in first.why


def test_named_words_find_the_file_that_reads_like_them(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = _repo(git_repo)
    overrides = {"cache_dir": str(tmp_path / "c"), "text_similarity_message_boost": 1.5}
    with RepoMap(root, overrides=overrides) as repo:
        result = repo.map(mode="static", mentioned_idents=["tax_rate"], tokens=1024)
    assert result.files[0].path in ("reports/tax_report.py", "billing/invoice.py"), [f.path for f in result.files]


def test_a_chat_file_and_a_message_reach_their_own_number_of_files(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``text_similarity_files`` is the reach of a request with chat files, and
    ``text_similarity_message_files`` of one without: each counted in the files the signal names."""
    words = ["ledger", "invoice", "subtotal", "voucher", "receipt", "rebate"]
    files = {"billing/chat.py": "".join(f"def {w}_entry({w}):\n    return {w}\n\n" for w in words)}
    # Each reads like the chat file by one word; as many others read like nothing in it.
    files |= {f"other/{w}_notes.py": f"def keep_{w}(x):\n    return x\n" for w in words}
    files |= {f"plain/thing{i}.py": f"def thing_{i}(y):\n    return y\n" for i in range(6)}
    root = git_repo(files)

    def lifted(reach: int, message_reach: int, **request: object) -> int:
        overrides = {
            "cache_dir": str(tmp_path / "c"),
            "text_similarity_files": reach,
            "text_similarity_message_files": message_reach,
            "text_similarity_min_share": 0.0,  # each file shares one word: all of them reachable
        }
        with RepoMap(root, overrides=overrides) as repo:
            result = repo.map(mode="static", tokens=4000, reasons=True, **request)  # type: ignore[arg-type]
        return sum("reads like the chat files or the request" in f.why for f in result.files)

    chat = {"chat_files": ["billing/chat.py"]}
    message = {"message": "a ledger, an invoice, a subtotal, a voucher, a receipt and a rebate"}
    assert lifted(1, 8, **chat) == 1 < lifted(8, 1, **chat)
    assert lifted(8, 1, **message) == 1 < lifted(1, 8, **message)


def test_files_reading_far_less_like_the_chat_file_than_the_best_are_not_lifted(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``text_similarity_min_share``: a file sharing one of the chat file's six words scores about a
    third of the one sharing three; a floor of a half leaves them out, none keeps them."""
    words = ["ledger", "invoice", "subtotal", "voucher", "receipt", "rebate"]
    files = {"billing/chat.py": "".join(f"def {w}_entry({w}):\n    return {w}\n\n" for w in words)}
    files["close/strong.py"] = "".join(f"def keep_{w}(x):\n    return x\n" for w in words[:3])
    files |= {f"other/{w}_notes.py": f"def keep_{w}(x):\n    return x\n" for w in words[3:]}
    files |= {f"plain/thing{i}.py": f"def thing_{i}(y):\n    return y\n" for i in range(6)}
    root = git_repo(files)

    def lifted(floor: float) -> list[str]:
        overrides = {"cache_dir": str(tmp_path / "c"), "text_similarity_min_share": floor}
        with RepoMap(root, overrides=overrides) as repo:
            result = repo.map(mode="static", tokens=4000, reasons=True, chat_files=["billing/chat.py"])
        return sorted(f.path for f in result.files if "reads like the chat files or the request" in f.why)

    assert lifted(0.5) == ["close/strong.py"]
    assert lifted(0.0) == sorted(["close/strong.py", *(f"other/{w}_notes.py" for w in words[3:])])


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("aZ_09 .-(\n\tÉé日本xHTTPServer")), max_size=80))
def test_word_counts_are_the_words_counted(text: str) -> None:
    """The fast path (cut at punctuation, split each distinct piece once) gives ``words``'s words."""
    from hybridmap.languages.lexical import word_counts, words

    assert word_counts(text) == Counter(words(text))


def test_file_words_are_the_words_of_its_names_signatures_and_docs() -> None:
    """Names are counted before they are split (the fast path); the same words as one pass over
    the path, the names, the used names, the signatures and the doc lines."""
    from hybridmap.frontends.evaluate.definitions import parse_source
    from hybridmap.languages.lexical import word_counts
    from hybridmap.languages.registry import LanguageRegistry
    from hybridmap.pipeline.rank.lexical import file_words
    from hybridmap.settings import Settings

    source = (
        b"from typing import Any\n\nclass HTTPServerConfig:\n    '''Where the server listens.'''\n\n"
        b"    def bind_address(self, host: str, port_number: int) -> Any:\n"
        b"        '''Bind to host:port.'''\n        return make_socket(host, port_number, self.bind_address)\n"
    )
    tags = parse_source(LanguageRegistry.load(), Settings(), "net/server_config.py", source)
    symbols = tags.symbols
    parts = ["net/server_config.py", *(s.name for s in symbols), *tags.ref_names]
    parts += [*(s.signature for s in symbols), *(s.doc for s in symbols)]
    joined = "\n".join(parts)
    assert file_words("net/server_config.py", tags) == word_counts(joined)
    assert file_words("net/server_config.py", tags)["bind"] >= 3


def test_a_message_finds_the_file_whose_comments_read_like_it(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A message is prose: with no chat file, each file's whole text is read (its comments and
    strings too, ``FileTags.words``), not only its names. Here only a comment of
    ``pay/retry.py`` says what the message says; by names alone, the files that share the
    message's words in their identifiers come first."""
    files = {
        "pay/retry.py": (
            "# When the card processor times out we back off exponentially and give up after\n"
            "# the gateway declines the charge twice.\n"
            "def again(f, n):\n    return [f() for _ in range(n)]\n"
        ),
        "pay/card.py": "def card_number(card):\n    return card.number\n",
        "pay/charge.py": "def charge_card(card, amount):\n    return (card, amount)\n",
        "pay/gateway.py": "def gateway_url(env):\n    return env\n",
    }
    root = git_repo(files)
    message = "Charges time out at the card processor; back off exponentially before the gateway declines"
    first = {}
    for whole_text in (False, True):
        overrides = {"cache_dir": str(tmp_path / "c"), "text_similarity_message_full_text": whole_text}
        with RepoMap(root, overrides=overrides) as repo:
            result = repo.map(mode="static", message=message, tokens=1024)
        first[whole_text] = result.files[0].path
    assert first == {False: first[False], True: "pay/retry.py"} and first[False] != "pay/retry.py", first


def test_file_words_survive_the_cache_and_the_parse_workers() -> None:
    """``FileTags.words`` is counted by the parse the map makes and goes through the codec the
    cache uses (and the parse workers' pickles, which keep every field)."""
    from hybridmap.languages.lexical import decode_words, word_counts
    from hybridmap.languages.registry import LanguageRegistry
    from hybridmap.settings import Settings
    from hybridmap.sources.treesitter import ParseOptions, parse_file
    from hybridmap.store.codec import decode, encode

    source = b"# Backs off exponentially.\ndef again(f):\n    return f()  # once more\n"
    python = LanguageRegistry.load().compiled("python")
    tags = parse_file(python, source, ParseOptions.from_settings(Settings())).tags
    assert tags is not None and decode_words(tags.words) == word_counts(source.decode())
    assert decode(encode(tags)) == tags
    options = ParseOptions.from_settings(Settings(text_similarity_message_full_text=False))
    off = parse_file(python, source, options).tags
    assert off is not None and off.words == "" and decode(encode(off)) == off
    assert options.key != ParseOptions.from_settings(Settings()).key  # cached apart


def test_the_chat_files_names_and_whole_text_are_mixed_by_share() -> None:
    """``text_similarity_chat_full_text_share``: each score over its best non-chat file's, mixed;
    a chat file reads like itself and counts for nothing in either."""
    from hybridmap.pipeline.rank.signals.text_similarity import _fused

    names = np.array([9.0, 4.0, 2.0, 0.0])  # file 0 is the chat file
    whole = np.array([50.0, 1.0, 5.0, 10.0])
    mixed = _fused(names.copy(), whole.copy(), 0.25, (0,))
    assert np.allclose(mixed, [0.0, 0.75 * 1.0 + 0.25 * 0.1, 0.75 * 0.5 + 0.25 * 0.5, 0.25 * 1.0])
    assert np.allclose(_fused(names.copy(), whole.copy(), 1.0, (0,)), [0.0, 0.1, 0.5, 1.0])
    assert np.allclose(_fused(names.copy(), np.zeros(4), 0.25, (0,)), [0.0, 0.75, 0.375, 0.0])


@settings(max_examples=80, deadline=None)
@given(
    docs=st.lists(st.lists(WORD, min_size=0, max_size=20), min_size=1, max_size=10),
    edits=st.lists(
        st.tuples(st.sampled_from(["change", "add", "remove"]), st.integers(0, 50), st.lists(WORD, max_size=12)),
        min_size=1,
        max_size=8,
    ),
    query=st.lists(WORD, min_size=1, max_size=6),
)
def test_a_model_carried_over_an_edit_scores_as_one_built_afresh(
    docs: list[list[str]], edits: list[tuple[str, int, list[str]]], query: list[str]
) -> None:
    """After any edits (files changed, added, removed), the model made from the last one gives
    the same scores, bit for bit, and the same words per file, as a model built from scratch."""
    vocabulary = Vocabulary()
    files = [Counter(d) for d in docs]
    model: LexicalModel | None = LexicalModel.of([vocabulary.vector(f) for f in files], len(vocabulary))
    model.scores(vocabulary.known(query), len(files))  # its postings made: an update carries them
    for kind, at, words in edits:
        assert model is not None
        kept = np.array(model.slot_of_file)
        fresh: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        if kind == "change" and files:
            fi = at % len(files)
            files[fi] = Counter(words)
            kept[fi] = -1
            fresh[fi] = vocabulary.vector(files[fi])
        elif kind == "add":
            fi = at % (len(files) + 1)
            files.insert(fi, Counter(words))
            kept = np.insert(kept, fi, -1)
            fresh = {(i + 1 if i >= fi else i): v for i, v in fresh.items()}
            fresh[fi] = vocabulary.vector(files[fi])
        elif kind == "remove" and len(files) > 1:
            fi = at % len(files)
            del files[fi]
            kept = np.delete(kept, fi)
        carried = model.updated(kept, fresh, len(vocabulary))
        fresh_model = LexicalModel.of([vocabulary.vector(f) for f in files], len(vocabulary))
        model = carried if carried is not None else fresh_model
        ids = vocabulary.known(query)
        assert np.array_equal(model.scores(ids, len(files)), fresh_model.scores(ids, len(files)))
        for fi in range(len(files)):
            assert np.array_equal(model.words_of(fi), fresh_model.words_of(fi))
        assert model.average == fresh_model.average


def test_edits_of_a_few_files_carry_the_model_over() -> None:
    """The carried path is the one taken for an edit (a few files of many), and stays exact; the
    tail's postings are merged edit by edit, not sorted whole again."""
    import random

    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    vocabulary = Vocabulary()
    files = [Counter(rng.choices(words, k=rng.randrange(1, 30))) for _ in range(60)]
    model = LexicalModel.of([vocabulary.vector(f) for f in files], len(vocabulary))
    query = vocabulary.known(["beta", "eta", "kappa"])
    model.scores(query, len(files))
    for step in range(12):
        fi = rng.randrange(len(files))
        files[fi] = Counter(rng.choices([*words, f"new{step}"], k=rng.randrange(1, 30)))
        kept = np.array(model.slot_of_file)
        kept[fi] = -1
        carried = model.updated(kept, {fi: vocabulary.vector(files[fi])}, len(vocabulary))
        assert carried is not None and "base" in carried._postings  # the kept entries are not sorted again
        # Each edit's entries merged into the last model's tail postings (the first edit starts it).
        assert ("tail before" in carried._postings) == (step > 0)
        model = carried
        rebuilt = LexicalModel.of([vocabulary.vector(f) for f in files], len(vocabulary))
        query = vocabulary.known(["beta", "eta", "kappa", f"new{step}"])
        assert np.array_equal(model.scores(query, len(files)), rebuilt.scores(query, len(files)))
        base, tail = model.postings()  # merged: the order and word starts of sorting the whole tail
        whole = _postings(model.ids[tail[2] :], tail[2], len(vocabulary))
        assert tail[2] == len(base[0]) and np.array_equal(tail[0], whole[0]) and np.array_equal(tail[1], whole[1])


def test_names_words_counted_at_parse_time_are_those_counted_from_the_symbols() -> None:
    """``FileTags.name_words`` (counted in the parse worker, kept in the cache) gives each file
    the very words, counts and order the ranker would count from its symbols, so BM25 sums add in
    the same order and scores are bit-identical; a server's extra symbols drop them."""
    import dataclasses

    from hybridmap.languages.registry import LanguageRegistry
    from hybridmap.model import Span, Symbol
    from hybridmap.pipeline.merge import merge_file
    from hybridmap.pipeline.rank.lexical import file_words
    from hybridmap.settings import Settings
    from hybridmap.sources.treesitter import ParseOptions, parse_file
    from hybridmap.store.codec import decode, encode

    registry = LanguageRegistry.load()
    options = ParseOptions.from_settings(Settings())
    package = Path(__file__).resolve().parents[2] / "hybridmap"
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "lsp"
    paths = [*sorted(package.rglob("*.py"))[:60], *(p for p in sorted(fixtures.rglob("*")) if p.is_file())]
    checked = 0
    for path in paths:
        language = registry.language_for(path.name)
        if language is None:
            continue
        tags = parse_file(registry.compiled(language), path.read_bytes(), options).tags
        if tags is None or not tags.symbols:
            continue
        rel = path.name
        assert tags.name_words, rel
        counted = file_words(rel, dataclasses.replace(tags, name_words=""))
        assert list(file_words(rel, tags).items()) == list(counted.items()), rel
        assert decode(encode(tags)) == tags
        checked += 1
    assert checked > 40
    extra = Symbol("server_only_name", "function", Span(0, 0, 0, 10), 0, 0, "def server_only_name():")
    server = dataclasses.replace(tags, symbols=(extra,), complete=True)
    merged = merge_file(tags, server)
    assert merged.name_words == "" and "server" in file_words(rel, merged)


def test_words_not_as_the_parse_writes_them_are_counted_again() -> None:
    """A damaged or planted cache entry's word counts (no count, a negative or a non-number) never
    stop a map: the ranker counts the file's words itself, as for a parse that did not."""
    import dataclasses

    from hybridmap.languages.lexical import decode_words
    from hybridmap.languages.registry import LanguageRegistry
    from hybridmap.pipeline.rank.lexical import file_text_words, file_words
    from hybridmap.settings import Settings
    from hybridmap.sources.treesitter import ParseOptions, parse_file

    source = b"# Backs off exponentially.\ndef retry_later(task):\n    return task()\n"
    python = LanguageRegistry.load().compiled("python")
    tags = parse_file(python, source, ParseOptions.from_settings(Settings())).tags
    assert tags is not None
    counted = file_words("pay/retry.py", dataclasses.replace(tags, name_words=""))
    for bad in ("garbage", "retry\t-3", "retry\t", "retry\tx\nlater\t1", "retry\t²"):
        with pytest.raises(ValueError):
            decode_words(bad)
        planted = dataclasses.replace(tags, name_words=bad, words=bad)
        assert list(file_words("pay/retry.py", planted).items()) == list(counted.items()), bad
        assert file_text_words("pay/retry.py", planted) == counted, bad


def test_models_made_from_one_model_keep_their_own_entries() -> None:
    """An edit's model writes its new entries into spare room after the last model's: two models
    made from the same one (or one made from an older model of a chain) must not see each other's."""
    vocabulary = Vocabulary()
    files = [Counter({"alpha": i + 1, "beta": 2, f"w{i}": 1}) for i in range(12)]
    first = LexicalModel.of([vocabulary.vector(f) for f in files], len(vocabulary))
    edits = {"x": Counter({"gamma": 3, "delta": 1}), "y": Counter({"zeta": 2}), "z": Counter({"eta": 4, "alpha": 1})}
    kept = np.array(first.slot_of_file)
    kept[0] = -1
    made = {}
    for name in ("x", "y"):  # both from `first`
        made[name] = first.updated(kept, {0: vocabulary.vector(edits[name])}, len(vocabulary))
    assert made["x"] is not None
    kept_x = np.array(made["x"].slot_of_file)
    kept_x[5] = -1
    made["z"] = made["x"].updated(kept_x, {5: vocabulary.vector(edits["z"])}, len(vocabulary))  # a chain
    again = made["x"].updated(kept_x, {5: vocabulary.vector(edits["y"])}, len(vocabulary))  # from x again
    expected = {
        "x": {0: edits["x"]},
        "y": {0: edits["y"]},
        "z": {0: edits["x"], 5: edits["z"]},
        "again": {0: edits["x"], 5: edits["y"]},
    }
    query = vocabulary.known(["alpha", "gamma", "zeta", "eta", "beta"])
    for name, model in {**made, "again": again}.items():
        assert model is not None
        now = [expected[name].get(i, f) for i, f in enumerate(files)]
        built = LexicalModel.of([vocabulary.vector(f) for f in now], len(vocabulary))
        assert model.scores(query, len(now)).tobytes() == built.scores(query, len(now)).tobytes(), name
        for fi in range(len(now)):
            assert np.array_equal(model.words_of(fi), built.words_of(fi)), (name, fi)
