"""Which keys moved (infra/patched.py): read from the patches between two mappings, the
answer is the scan's, however many patches lie between them and whatever they set back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap.infra.patched import MAX_STEPS, Patched, Projected, changed_keys, scanned
from hybridmap.model import FileTags

PATHS = [f"p{i}.py" for i in range(8)]
#: A few tags objects: a patch may set a path to the very object it had (no change).
OBJECTS = [FileTags(()) for _ in range(3)]


def _patched(base: dict[str, FileTags], patch: dict[str, FileTags | None]) -> Patched[FileTags]:
    items = dict(base)
    for path, tags in patch.items():
        if tags is None:
            items.pop(path, None)
        else:
            items[path] = tags
    return Patched(base, items, patch)


Pair = tuple[Mapping[str, Any], Mapping[str, Any]]


def _old_and_new(values: list[Any]) -> st.SearchStrategy[Pair]:
    """Two mappings of one chain of patches setting or removing ``values``: any one of them (the
    one a caller held), and the newest."""
    patch = st.dictionaries(st.sampled_from(PATHS), st.one_of(st.none(), st.sampled_from(values)), max_size=4)
    start = st.dictionaries(st.sampled_from(PATHS), st.sampled_from(values))

    def pick(drawn: tuple[dict[str, Any], list[dict[str, Any]], int]) -> Pair:
        first, patches, held = drawn
        chain = [first]
        for each in patches:
            chain.append(_patched(chain[-1], each))
        return chain[held % len(chain)], chain[-1]

    return st.tuples(start, st.lists(patch, min_size=1, max_size=MAX_STEPS + 3), st.integers(min_value=0)).map(pick)


@settings(max_examples=300, deadline=None)
@given(_old_and_new(OBJECTS))
def test_the_patches_between_two_mappings_name_what_a_scan_finds(
    pair: Pair,
) -> None:
    old, new = pair
    assert sorted(changed_keys(old, new)) == sorted(scanned(old, new))
    assert set(scanned(old, new)) == {p for p in set(old) | set(new) if old.get(p) is not new.get(p)}


def test_only_max_steps_patches_are_followed_and_older_mappings_are_let_go() -> None:
    chain: list[dict[str, FileTags]] = [dict.fromkeys(PATHS, OBJECTS[0])]
    for i in range(MAX_STEPS + 2):
        chain.append(_patched(chain[-1], {PATHS[i % len(PATHS)]: OBJECTS[1 + i % 2]}))
    newest = chain[-1]
    assert isinstance(newest, Patched)
    depth, step = 0, newest
    while isinstance(step, Patched) and step.base is not None:
        depth, step = depth + 1, step.base
    assert depth == MAX_STEPS  # the chain is cut: older mappings are not kept alive by it
    # A caller holding a mapping older than the chain still gets the right answer, by a scan.
    assert sorted(changed_keys(chain[0], newest)) == sorted(scanned(chain[0], newest))


@dataclass(frozen=True)
class _State:
    sha: str


#: States with a hash, one with none (left out of a projection), an equal hash in another string
#: object (the same content read again) and one in the same object.
STATES = [_State("aax"), _State("bb"), _State(""), _State("".join(["aa", "x"])), _State("bb")]


@settings(max_examples=300, deadline=None)
@given(_old_and_new(STATES))
def test_a_projection_reads_as_its_dict_and_moves_as_it(pair: Pair) -> None:
    """A projection of states' field reads as the dict of the non-empty fields, and what moved
    between two of them (following the states' patches) is what a scan of those dicts finds."""
    old, new = Projected(pair[0], "sha"), Projected(pair[1], "sha")
    as_dict = {p: s.sha for p, s in pair[1].items() if s.sha}
    assert dict(new) == as_dict and len(new) == len(as_dict)
    assert all((p in new) == (p in as_dict) and new.get(p) == as_dict.get(p) for p in PATHS)
    assert sorted(changed_keys(old, new)) == sorted(scanned(dict(old), dict(new)))
