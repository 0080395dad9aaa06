"""The static edge pass in numpy (``name_edges.name_matched_rows``) against the rule it stands in
for (``EdgeRows.add`` one (file, name) at a time, then ``canonical``): the same rows, in the same
order, bit for bit, on generated repositories and settings."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridmap.pipeline.graph.name_edges import name_matched_rows
from hybridmap.pipeline.graph.repo_graph import EdgeRows
from hybridmap.settings import Settings

NAMES = ("run", "_helper", "parse_config", "x", "Widget", "__init__", "loadAll", "id", "render_page", "_z")


@st.composite
def repositories(draw: st.DrawFn) -> tuple[list[Counter[str]], dict[str, tuple[int, ...]]]:
    n = draw(st.integers(0, 12))
    refs = [Counter(draw(st.lists(st.sampled_from(NAMES), max_size=15))) for _ in range(n)]
    definers: dict[str, tuple[int, ...]] = {}
    for name in NAMES:
        files = draw(st.sets(st.integers(0, max(0, n - 1)), max_size=n)) if n else set()
        if files:
            definers[name] = tuple(sorted(files))
    return refs, definers


_settings = st.builds(
    lambda srw, limit, common, private, well: Settings().replace(
        self_reference_weight=srw,
        max_definers_per_ident=limit,
        common_ident_definers=common,
        private_ident_weight=private,
        well_named_ident_weight=well,
    ),
    st.sampled_from((0.0, 0.5, 1.0)),
    st.integers(1, 6),
    st.integers(0, 4),
    st.sampled_from((0.0, 0.1, 1.0)),
    st.sampled_from((0.0, 10.0)),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(repositories(), _settings)
def test_the_numpy_pass_gives_the_rows_one_name_at_a_time_gives(
    repository: tuple[list[Counter[str]], dict[str, tuple[int, ...]]], config: Settings
) -> None:
    refs, definers = repository
    index = {f"f{i}.py": i for i in range(len(refs))}
    one_by_one = EdgeRows(config, definers, index)
    for si, counts in enumerate(refs):
        for at, (name, count) in enumerate(counts.items()):
            one_by_one.add(si, name, count, None, at)
    want_idents, want = one_by_one.canonical()
    idents, rows, pos = name_matched_rows(refs, definers, config)
    assert idents == want_idents
    for got, expected in zip((*rows, pos), (*want.columns()[:5], np.asarray(one_by_one.pos, np.int32)), strict=True):
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(repositories(), _settings)
def test_a_name_added_for_many_files_at_once_gives_the_rows_of_one_file_at_a_time(
    repository: tuple[list[Counter[str]], dict[str, tuple[int, ...]]], config: Settings
) -> None:
    """``EdgeRows.add_uses`` (an edit's re-derived name, every file using it at once) makes, for
    each name, the rows ``add`` makes file by file: same rows, same floats, same dtypes."""
    refs, definers = repository
    index = {f"f{i}.py": i for i in range(len(refs))}
    one_by_one, batched = EdgeRows(config, definers, index), EdgeRows(config, definers, index)
    for name in NAMES:
        users = [si for si, counts in enumerate(refs) if name in counts]
        for si in users:
            one_by_one.add(si, name, refs[si][name], None, list(refs[si]).index(name))
        batched.add_uses(
            name,
            np.asarray(users, np.int32),
            np.asarray([refs[si][name] for si in users], np.int64),
            np.asarray([list(refs[si]).index(name) for si in users], np.int32),
        )
    assert batched.ident_ids == one_by_one.ident_ids
    for got, expected in zip(
        (*batched.columns().columns(), batched.positions()),
        (*one_by_one.columns().columns(), np.asarray(one_by_one.pos, np.int32)),
        strict=True,
    ):
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
