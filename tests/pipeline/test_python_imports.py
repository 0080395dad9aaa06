"""Names imported from outside the repository (pipeline/python_imports.py): the pairs kept up to
date between merges are, in the same order, the pairs read afresh from every file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap.pipeline.python_imports import ImportsOutside, PythonModules

NAME = st.sampled_from(["Any", "load", "dump", "Path", "run", "main"])
MODULE = st.sampled_from(["typing", "os.path", "pkg.util", "util", "json", "pkg", ".util", "..json"])
PATH = st.sampled_from(["pkg/util.py", "pkg/__init__.py", "app.py", "lib/run.py", "tool.go", "x/y/z.py"])


@dataclass(frozen=True)
class Facts:
    imports: Mapping[str, str] = field(default_factory=dict)
    names: tuple[str, ...] = ()


FACTS = st.builds(Facts, st.dictionaries(NAME, MODULE, max_size=4), st.frozensets(NAME, max_size=3).map(tuple))
FILES = st.dictionaries(PATH, FACTS, min_size=1, max_size=6)
Edits = list[tuple[str, Facts]]


def _read_afresh(facts: Mapping[str, Facts]) -> list[tuple[str, str]]:
    """The rule as stated, over every file: a Python file's import from a module that is not the
    repository's (an absolute one: a relative module always is), of a name some file defines."""
    modules = PythonModules(facts)
    defined = {name for f in facts.values() for name in f.names}
    return [
        (path, name)
        for path, f in facts.items()
        if path.endswith(".py")
        for name, module in f.imports.items()
        if not module.startswith(".") and module not in modules and name in defined
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(FILES, st.lists(st.tuples(PATH, FACTS), max_size=3)), min_size=1, max_size=5))
def test_pairs_kept_up_to_date_are_the_pairs_read_afresh(
    steps: list[tuple[dict[str, Facts], list[tuple[str, Facts]]]],
) -> None:
    """Each step is a new file set, then edits that keep it (a file's facts replaced, the same
    object kept for the rest, as the builder's memo does)."""
    outside = ImportsOutside()
    for files, edits in steps:
        assert outside.pairs(files) == _read_afresh(files)
        for path, facts in edits:
            if path in files:
                files = {**files, path: facts}
                assert outside.pairs(files) == _read_afresh(files)


@settings(max_examples=300, deadline=None)
@given(
    FILES,
    st.lists(st.lists(st.tuples(PATH, st.one_of(st.none(), FACTS)), max_size=3), max_size=6),
    st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_pairs_from_the_changed_paths_alone_are_the_pairs_read_afresh(
    files: dict[str, Facts], batches: list[list[tuple[str, Facts | None]]], told: list[bool]
) -> None:
    """Told which paths changed since the mapping it saw last (as the policies' memo tells it),
    only those are looked at: the answer is still the one read afresh, whether a batch edits,
    adds or removes files (None), and whether or not the caller gives the hint."""
    outside = ImportsOutside()
    assert outside.pairs(files) == _read_afresh(files)
    for batch, tell in zip(batches, told, strict=False):
        before, files = files, dict(files)
        for path, facts in dict(batch).items():  # one change per path, as a patch makes it
            if facts is None:
                files.pop(path, None)
            else:
                files[path] = facts
        changed = [path for path, _ in batch]
        got = outside.pairs(files, changed, before) if tell else outside.pairs(files)
        assert got == _read_afresh(files)


def test_a_hint_about_another_mapping_is_not_trusted() -> None:
    """A hint relative to a mapping this was not last asked about is ignored: it scans."""
    files = {"app.py": Facts({"Any": "typing"}), "lib/types.py": Facts()}
    outside = ImportsOutside()
    assert outside.pairs(files) == []
    edited = {**files, "lib/types.py": Facts(names=("Any",))}
    assert outside.pairs(edited, [], dict(files)) == [("app.py", "Any")]


def test_an_edit_that_defines_the_imported_name_brings_the_pair_and_takes_it_away() -> None:
    files = {"app.py": Facts({"Any": "typing"}), "lib/types.py": Facts()}
    outside = ImportsOutside()
    assert outside.pairs(files) == []
    files["lib/types.py"] = Facts(names=("Any",))
    assert outside.pairs(files) == [("app.py", "Any")]
    files["lib/types.py"] = Facts()
    assert outside.pairs(files) == []
