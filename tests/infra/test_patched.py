"""Which keys moved (infra/patched.py): read from the patches between two mappings, the
answer is the scan's, however many patches lie between them and whatever they set back."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap.infra.patched import MAX_STEPS, Patched, Projected, changed_keys, scanned
from hybridmap.model import FileTags

PATHS = [f"p{i}.py" for i in range(8)]
#: A few tags objects: a patch may set a path to the very object it had (no change).
OBJECTS = [FileTags(()) for _ in range(3)]
PATCH = st.dictionaries(st.sampled_from(PATHS), st.one_of(st.none(), st.sampled_from(OBJECTS)), max_size=4)


def _patched(base: dict[str, FileTags], patch: dict[str, FileTags | None]) -> Patched[FileTags]:
    items = dict(base)
    for path, tags in patch.items():
        if tags is None:
            items.pop(path, None)
        else:
            items[path] = tags
    return Patched(base, items, patch)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(PATHS), st.sampled_from(OBJECTS)),
    st.lists(PATCH, min_size=1, max_size=MAX_STEPS + 3),
    st.integers(min_value=0),
)
def test_the_patches_between_two_mappings_name_what_a_scan_finds(
    start: dict[str, FileTags], patches: list[dict[str, FileTags | None]], held: int
) -> None:
    chain: list[dict[str, FileTags]] = [start]
    for patch in patches:
        chain.append(_patched(chain[-1], patch))
    old = chain[held % len(chain)]
    new = chain[-1]
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
STATE_PATCH = st.dictionaries(st.sampled_from(PATHS), st.one_of(st.none(), st.sampled_from(STATES)), max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(PATHS), st.sampled_from(STATES)),
    st.lists(STATE_PATCH, min_size=1, max_size=MAX_STEPS + 3),
    st.integers(min_value=0),
)
def test_a_projection_reads_as_its_dict_and_moves_as_it(
    start: dict[str, _State], patches: list[dict[str, _State | None]], held: int
) -> None:
    """A projection of states' field reads as the dict of the non-empty fields, and what moved
    between two of them (following the states' patches) is what a scan of those dicts finds."""
    chain: list[dict[str, _State]] = [start]
    for patch in patches:
        chain.append(_patched(chain[-1], patch))  # type: ignore[arg-type]
    old, new = Projected(chain[held % len(chain)], "sha"), Projected(chain[-1], "sha")
    as_dict = {p: s.sha for p, s in chain[-1].items() if s.sha}
    assert dict(new) == as_dict and len(new) == len(as_dict)
    assert all((p in new) == (p in as_dict) and new.get(p) == as_dict.get(p) for p in PATHS)
    assert sorted(changed_keys(old, new)) == sorted(scanned(dict(old), dict(new)))
