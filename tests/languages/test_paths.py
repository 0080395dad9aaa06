"""What a path says of its file (languages/paths.py): the kinds read per directory and per name are
the whole path's, as each pattern searched over the whole path says."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap.languages import paths
from hybridmap.languages.paths import (
    ENTRY_POINT,
    FIXTURE,
    GENERATED,
    TEST,
    VENDOR,
    is_test_path,
    path_kinds,
    path_multiplier,
    path_multipliers,
)
from hybridmap.settings import Settings

#: Pieces that trip each pattern, alone and glued to others (a pattern's text split across a
#: directory and the name, a match at the start, names that are also directories).
PIECES = [
    "tests", "test", "Tests", "spec", "__tests__", "testing", "fixtures", "__snapshots__", "testdata",
    "golden", "vendor", "third_party", "deps", "gen", "generated", "src", "a", "x.generated", "foo_generated",
    "main.py", "lib.rs", "index.ts", "test_a.py", "a_test.go", "a.spec.ts", "ATests.java", "conftest.py",
    "a_pb2.py", "a.pb.go", "b.min.js", "x.g.dart", "mocks", "node.js", ".", "_", "/",
]  # fmt: skip
SEPARATORS = ["/", "", ".", "_", "-"]


def whole_path_kinds(path: str) -> int:
    """Each pattern searched over the whole path, as before the kinds were read per part."""
    name = path.rpartition("/")[2]
    return (
        (TEST if paths._TEST_DIR.search(path) or paths._TEST_FILE.match(name) else 0)
        | (FIXTURE if paths._FIXTURE_DIR.search(path) else 0)
        | (VENDOR if paths._VENDOR_DIR.search(path) else 0)
        | (GENERATED if paths._GENERATED.search(path) else 0)
        | (ENTRY_POINT if paths._ENTRY_POINT.match(name) else 0)
    )


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(SEPARATORS)), min_size=1, max_size=6).map(
            lambda parts: "".join(piece + sep for piece, sep in parts).strip("/") or "a"
        ),
        min_size=1,
        max_size=12,
    )
)
def test_kinds_read_per_directory_and_name_are_the_whole_paths(batch: list[str]) -> None:
    kinds = path_kinds(batch)
    assert [k & ~TEST for k in kinds] == [whole_path_kinds(p) & ~TEST for p in batch]
    assert [bool(k & TEST) for k in kinds] == [bool(whole_path_kinds(p) & TEST) for p in batch]
    assert [bool(k & TEST) for k in kinds] == [is_test_path(p) for p in batch]
    config = Settings()
    assert path_multipliers(batch, config) == [path_multiplier(p, config) for p in batch]


def test_the_kinds_of_some_paths() -> None:
    config = Settings()
    assert path_multiplier("src/app/main.py", config) == (
        config.entry_point_weight,
        (f"entry point x{config.entry_point_weight:g}",),
    )
    assert path_kinds(["tests/fixtures/vendor/a_pb2.py"]) == [paths.TEST_DIR | FIXTURE | VENDOR | GENERATED]
    assert path_kinds(["x.generated.d/y.py", "gen/a.py", "agen/a.py", "a_test.go", "a.py"]) == [
        GENERATED, GENERATED, 0, paths.TEST_NAME, 0,
    ]  # fmt: skip
    # The one rule for a test path (the patterns are compiled once, their text unchanged).
    assert all(isinstance(p, re.Pattern) for p in (paths._TEST_DIR, paths._TEST_FILE))
