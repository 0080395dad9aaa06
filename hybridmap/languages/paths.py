"""What a file's path alone says about it: tests, vendored or generated code, entry points, C
headers.

Read by the ranking signals: :mod:`hybridmap.pipeline.rank.signals.path_kinds` (each file's prior) and
the chat boosts (:func:`boost_scale`); :func:`is_test_path` is also the one rule the symbol
search (tests after the rest) and dead code (a definition only tests use) follow;
:func:`is_c_header` is the one rule the C/C++ policies and the ``header`` visibility follow."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..settings import Settings

_TEST_DIR = re.compile(r"(^|/)(tests?|testing|__tests__|spec|specs)/", re.I)
#: Data for tests rather than tests: inputs, expected outputs, snapshots, mocks. Many small files
#: that name-match everything (every language fixture defines a ``Point``).
_FIXTURE_DIR = re.compile(
    r"(^|/)(fixtures?|__fixtures__|__snapshots__|snapshots|__mocks__|mocks|test[_-]?data|"
    r"test[_-]?resources|testfixtures|golden|goldens|__golden__)/",
    re.I,
)
_TEST_FILE = re.compile(
    r"(^test_.*|.*_test\.[^.]+$|.*_tests?\.py$|.*\.(test|spec)\.[^.]+$|.*_spec\.rb$|.*Tests?\.(java|kt|cs|swift)$"
    r"|conftest\.py$)"
)
_VENDOR_DIR = re.compile(r"(^|/)(vendor|vendored|third_party|third-party|external|extern|deps|_vendor)/", re.I)
_GENERATED = re.compile(
    r"(_pb2(_grpc)?\.pyi?$|\.pb\.(go|cc|h)$|\.generated\.|\.g\.dart$|_generated\.|(^|/)(gen|generated)/|\.min\.js$)"
)
_ENTRY_POINT = re.compile(r"^((main|__main__|cli|app|index|server|manage)\.[^.]+|lib\.rs)$")


def is_test_path(path: str) -> bool:
    """Whether ``path`` (relative, POSIX) is a test: under a test directory (``tests/``,
    ``__tests__/``, ``spec/``...) or named as one (``test_x.py``, ``x_test.go``, ``x.test.ts``,
    ``x.spec.js``, ``x_spec.rb``, ``XTests.java``, ``conftest.py``)."""
    # The name by rpartition, not a second PurePosixPath: path_multiplier asks for every file
    # of every graph.
    return bool(_TEST_DIR.search(path) or _TEST_FILE.match(path.rpartition("/")[2]))


#: A test file's name around its subject's: ``test_x``, ``x_test``, ``x_tests``, ``x_spec``,
#: ``x.test``, ``x.spec``, ``XTest``, ``XTests`` (the stem, before its first dot but for
#: ``.test``/``.spec``).
_TEST_AFFIXES = re.compile(r"^(?:test_)?(.+?)(?:_tests?|_spec|\.test|\.spec|Tests?)?$")


def subject_stem(path: str, test: bool | None = None) -> str:
    """The stem a file pairs on with its tests or its subject (lowercase, ``_``/``-`` dropped: the
    conventions differ in case and separators, ``FooBar.java`` / ``foo_bar_test.go``): a
    test file's name without its test affixes (``tests/test_foo_bar.py``, ``foo_bar_test.go``,
    ``fooBar.spec.ts``, ``FooBarTest.java`` -> ``foobar``), any other file's stem
    (``src/foo_bar.py`` -> ``foobar``). A file under a test directory without an affix
    (``tests/foo.rs``) keeps its stem. A package's ``__init__.py`` is named by its directory
    (``pkg/search/__init__.py`` -> ``search``: its tests are ``test_search.py``); other names every
    package repeats (``__main__.py``), and a test package's ``__init__``, have none (""): they
    are nobody's test or subject. Only a test and a non-test pair: see
    :mod:`hybridmap.pipeline.rank.signals.test_pairs`. ``test``: :func:`is_test_path` of
    ``path`` when the caller has it (None: asked here)."""
    # Replaces, not a split into words: asked for every file of a graph (100,000 at scale).
    return _stem_name(path, is_test_path(path) if test is None else test).replace("_", "").replace("-", "").lower()


def _stem_name(path: str, test: bool) -> str:
    """:func:`subject_stem` before its case and separators are dropped."""
    directory, _, name = path.rpartition("/")
    if name.startswith("__"):
        if test or not name.startswith("__init__.") or not directory:
            return ""
        name = directory.rpartition("/")[2]
    head, _, rest = name.partition(".")
    if rest.startswith(("test.", "spec.")):
        head += "." + rest.split(".", 1)[0]
    if test:
        match = _TEST_AFFIXES.match(head)
        head = match.group(1) if match else head
    return head


def qualified_subjects(path: str) -> list[tuple[str, tuple[str, ...]]]:
    """The subjects a test's name can qualify with its subject's directories, as (stem,
    directory words): ``tests/test_util/test_util_typing.py`` tests ``typing`` in a directory
    starting ``util`` (``pkg/util/typing.py``), ``tests/test_ext_napoleon_docstring.py`` tests
    ``napoleondocstring`` in one starting ``ext`` or ``docstring`` under ``ext`` then
    ``napoleon``; ``test_downloadermiddleware_retry.py`` tests ``retry`` under
    ``downloadermiddlewares/``. Each split of the test's words after its first (the whole name is
    :func:`subject_stem`'s); whether a path's directories hold the words is
    :func:`directories_hold`."""
    words = [word for word in re.split(r"[_-]", _stem_name(path, True).lower()) if word]
    return [("".join(words[k:]), tuple(words[:k])) for k in range(1, len(words))]


def directories_hold(words: tuple[str, ...], path: str) -> bool:
    """Whether ``path``'s directories, in order, start with each of ``words`` (lowercase, ``_``
    and ``-`` dropped; a word of one or two letters must be the whole name): a test's name
    abbreviates them (``test_builder_`` for ``builders/``)."""
    directories = [d.replace("_", "").replace("-", "").lower() for d in path.split("/")[:-1]]
    at = 0
    for word in words:
        while at < len(directories) and not (
            directories[at] == word or (len(word) > 2 and directories[at].startswith(word))
        ):
            at += 1
        if at == len(directories):
            return False
        at += 1
    return True


def is_test_data_or_vendored(directory: str) -> bool:
    """Whether ``directory`` (relative, POSIX) is inside test data or vendored code: projects
    there (a fixture's ``go.mod``, a vendored ``package.json``) are not the repository's own."""
    probe = directory.rstrip("/") + "/"
    return bool(_FIXTURE_DIR.search(probe) or _VENDOR_DIR.search(probe))


def path_multiplier(path: str, settings: Settings) -> tuple[float, tuple[str, ...]]:
    """How much a file's path alone moves its rank, and why."""
    return path_multipliers([path], settings)[0]


#: The kinds a path can have, as bits (:func:`path_kinds`).
TEST_DIR, TEST_NAME, FIXTURE, VENDOR, GENERATED, ENTRY_POINT = 1, 2, 4, 8, 16, 32
TEST = TEST_DIR | TEST_NAME


def path_kinds(paths: Iterable[str]) -> list[int]:
    """Each path's kinds (bits), each directory and each file name read once: every pattern above
    either ends with ``/`` or holds none (a match lies within the directories, or within the
    name), so the whole path's search is its directory's (with its ``/``) or its name's. Asked for
    every file of a graph: at 100,000 files, six regular expressions per path were 1.3 s of a
    one-shot map (``tests/languages/test_paths.py`` checks it against the whole path's search)."""
    by_directory: dict[str, int] = {}
    by_name: dict[str, int] = {}
    out: list[int] = []
    for path in paths:
        directory, slash, name = path.rpartition("/")
        kinds = by_directory.get(directory)
        if kinds is None:
            kinds = by_directory[directory] = _directory_kinds(directory + slash)
        named = by_name.get(name)
        if named is None:
            named = by_name[name] = _name_kinds(name)
        out.append(kinds | named)
    return out


def _directory_kinds(directory: str) -> int:
    """The kinds a directory (with its trailing ``/``, or "" for the root) gives its files."""
    return (
        (TEST_DIR if _TEST_DIR.search(directory) else 0)
        | (FIXTURE if _FIXTURE_DIR.search(directory) else 0)
        | (VENDOR if _VENDOR_DIR.search(directory) else 0)
        | (GENERATED if _GENERATED.search(directory) else 0)
    )


def _name_kinds(name: str) -> int:
    return (
        (TEST_NAME if _TEST_FILE.match(name) else 0)
        | (GENERATED if _GENERATED.search(name) else 0)
        | (ENTRY_POINT if _ENTRY_POINT.match(name) else 0)
    )


def path_multipliers(paths: Iterable[str], settings: Settings) -> list[tuple[float, tuple[str, ...]]]:
    """:func:`path_multiplier` of each path (each kind's product and reasons made once)."""
    return kind_multipliers(path_kinds(paths), settings)


def kind_multipliers(each_kinds: Iterable[int], settings: Settings) -> list[tuple[float, tuple[str, ...]]]:
    """The multiplier and reasons of each of ``each_kinds`` (:func:`path_kinds`' bits)."""
    made: dict[int, tuple[float, tuple[str, ...]]] = {}
    out = []
    for kinds in each_kinds:
        held = made.get(kinds)
        if held is None:
            held = made[kinds] = _multiplier(kinds, settings)
        out.append(held)
    return out


def _multiplier(kinds: int, settings: Settings) -> tuple[float, tuple[str, ...]]:
    mult = 1.0
    why: list[str] = []
    if kinds & TEST:
        mult *= settings.test_path_weight
        why.append(f"test path x{settings.test_path_weight:g}")
    if kinds & FIXTURE:  # under tests/ too: test data of the tests, both apply
        mult *= settings.fixture_path_weight
        why.append(f"test data x{settings.fixture_path_weight:g}")
    if kinds & VENDOR:
        mult *= settings.vendor_path_weight
        why.append(f"vendored path x{settings.vendor_path_weight:g}")
    if kinds & GENERATED:
        mult *= settings.generated_path_weight
        why.append(f"generated code x{settings.generated_path_weight:g}")
    if kinds & ENTRY_POINT:
        mult *= settings.entry_point_weight
        why.append(f"entry point x{settings.entry_point_weight:g}")
    return mult, tuple(why)


def boost_scale(path: str, settings: Settings) -> float:
    """What scales the chat boosts a file gets (they are added to its multiplier, so a path weight
    alone would be swamped): test data keeps its weight next to a chat file, since name matching
    links a chat file to every fixture defining a common name. Tests keep the whole boost: the
    tests of an edited file are often edited with it (docs/evaluation.md)."""
    return settings.fixture_path_weight if _FIXTURE_DIR.search(path) else 1.0


#: C-family headers: a function found there is usually a declaration, defined in a source file;
#: what a header declares is the file's public API. Lowercase: a suffix matches in any case, as a
#: file's language does (``FOO.H`` is a C file, and a header).
C_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".h++", ".inc", ".cuh")
#: C-family sources: files that define what headers declare (C, C++, Objective-C, CUDA).
C_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".m", ".mm", ".cu")


def is_c_header(path: str) -> bool:
    return path.lower().endswith(C_HEADER_SUFFIXES)


def is_c_source(path: str) -> bool:
    return path.lower().endswith(C_SOURCE_SUFFIXES)


_C_FAMILY_SUFFIXES = C_HEADER_SUFFIXES + C_SOURCE_SUFFIXES


def is_c_family(path: str) -> bool:
    return path.lower().endswith(_C_FAMILY_SUFFIXES)  # one lowering: called per resolved pair
