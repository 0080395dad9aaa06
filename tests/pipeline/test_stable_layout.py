"""A stable layout keeps what stays in the map in its place and text (prompt caching); real
repositories, real maps through the API."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from hybridmap import MapResult, RepoMap

from ..conftest import GitRepoFactory, write_files

MODULES = 24


def _module(i: int) -> str:
    uses = "\n".join(f"from pkg.m{j} import work_{j}" for j in ((i + 1) % MODULES, (i + 5) % MODULES))
    return (
        f"{uses}\n\n\n"
        f"def work_{i}(value):\n"
        f'    """Step {i} of the pipeline."""\n'
        f"    return work_{(i + 1) % MODULES}(value) + work_{(i + 5) % MODULES}(value)\n\n\n"
        f"class Stage{i}:\n"
        f"    def run(self, value):\n"
        f"        return work_{i}(value)\n"
    )


def _repo(git_repo: GitRepoFactory) -> Path:
    return git_repo({f"pkg/m{i}.py": _module(i) for i in range(MODULES)} | {"pkg/__init__.py": ""})


def _common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))  # noqa: RUF071 - characters are meant


def _session(root: Path, tmp_path: Path, stable: bool, chats: list[str], **overrides: object) -> list[MapResult]:
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache"), **overrides}) as repo:
        return [repo.map(chat_files=[chat], mode="static", tokens=300, stable=stable) for chat in chats]


CHATS = ["pkg/m0.py", "pkg/m7.py", "pkg/m13.py", "pkg/m19.py"]


def test_the_kept_part_is_the_prefix_of_the_next_map(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _repo(git_repo)
    stable = _session(root, tmp_path, True, CHATS)
    plain = _session(root, tmp_path, False, CHATS)

    def shares(maps: list[MapResult]) -> list[float]:
        return [_common_prefix(a.text, b.text) / len(b.text) for a, b in itertools.pairwise(maps)]

    assert stable[0].text == plain[0].text  # nothing to keep yet: the rank order
    assert min(shares(stable)) >= 0.5, shares(stable)
    assert sum(shares(stable)) > 2 * sum(shares(plain)), (shares(stable), shares(plain))
    for result in stable:
        assert result.tokens <= 300
        ranks = [f.rank for f in result.files]
        assert ranks == sorted(ranks, reverse=True)  # the JSON's files stay in rank order


def test_new_entries_go_after_the_kept_part_and_a_chat_file_keeps_its_block(
    git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    root = _repo(git_repo)
    first, second = _session(root, tmp_path, True, ["pkg/m0.py", "pkg/m1.py"])
    assert "pkg/m1.py:" in first.text  # shown in the first map, then opened by the agent
    kept = first.text[: _common_prefix(first.text, second.text)]
    kept = kept[: kept.rfind("\n") + 1]  # whole lines
    assert "pkg/m1.py:" in kept  # its block stays where it was, though it is now a chat file
    chat = next(f for f in second.files if f.path == "pkg/m1.py")  # listed, as the text shows it,
    assert chat.rank == 0.0 and second.files[-1].path == "pkg/m1.py"  # but not ranked: last
    tail = second.text[len(kept) :]
    new_paths = {f.path for f in second.files} - {f.path for f in first.files}
    assert new_paths and all(f"{path}:" in tail for path in new_paths)


def test_too_little_kept_or_too_many_maps_re_ranks_in_full(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _repo(git_repo)
    plain = _session(root, tmp_path, False, CHATS)
    strict = _session(root, tmp_path, True, CHATS, stable_layout_min_kept=1.0, stable_layout_depth=1.0)
    assert [m.text for m in strict[1:]] == [m.text for m in plain[1:]]
    every_second = _session(root, tmp_path, True, CHATS, stable_layout_max_maps=2)
    assert every_second[2].text == plain[2].text  # the third map: a full re-rank
    assert every_second[1].text != plain[1].text


def test_a_budget_change_re_ranks_in_full(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _repo(git_repo)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(chat_files=["pkg/m0.py"], mode="static", tokens=300, stable=True)
        wider = repo.map(chat_files=["pkg/m7.py"], mode="static", tokens=400, stable=True)
        fresh = repo.map(chat_files=["pkg/m7.py"], mode="static", tokens=400, stable=False)
    assert wider.text == fresh.text


def test_an_edit_above_a_kept_definition_keeps_it(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _repo(git_repo)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        first = repo.map(chat_files=["pkg/m0.py"], mode="static", tokens=300, stable=True)
        shown = [f.path for f in first.files if f.symbols]
        edited = shown[0]
        source = (root / edited).read_text()
        write_files(root, {edited: "def added_first(value):\n    return value\n\n\n" + source})
        second = repo.map(chat_files=["pkg/m0.py"], mode="static", tokens=300, stable=True)
    before = {s.name for f in first.files if f.path == edited for s in f.symbols}
    after = {s.name for f in second.files if f.path == edited for s in f.symbols}
    assert before <= after  # followed by name, not by its old index


def test_kept_definitions_keep_their_summaries_and_get_no_new_ones(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _repo(git_repo)
    first, second = _session(root, tmp_path, True, ["pkg/m0.py", "pkg/m3.py"], summary_budget_share=0.1)
    kept = second.text[: _common_prefix(first.text, second.text)]
    kept_defs = [line for line in kept.splitlines()[:-1] if line.startswith("def work_")]
    summarized_before = {line for line in first.text.splitlines() if " # Step " in line}
    assert summarized_before and kept_defs
    assert any(" # Step " in line for line in kept_defs) and any(" # Step " not in line for line in kept_defs)
    for line in kept_defs:
        assert (line in summarized_before) == (" # Step " in line)


def test_summaries_follow_the_layout_not_the_leftover_budget() -> None:
    """Kept definitions that had no summary get none, even with room to spare; those that had one
    keep it; new entries may get one."""
    from hybridmap.languages.registry import LanguageRegistry
    from hybridmap.pipeline.inputs.session import Layout
    from hybridmap.pipeline.pack.packer import SummaryRules, add_summaries, pack
    from hybridmap.pipeline.pack.stable import stable_order
    from hybridmap.pipeline.pack.tokens import make_counter
    from hybridmap.pipeline.rank import RankItem
    from hybridmap.pipeline.render.skeleton import Renderer
    from hybridmap.settings import Settings

    from ..helpers import tags_of

    tags = tags_of(LanguageRegistry.load(), {f"pkg/m{i}.py": _module(i) for i in range(3)})
    ranked = [RankItem(1.0 - i / 10, f"pkg/m{i}.py", 0) for i in range(3)]  # work_0, work_1, work_2
    previous = Layout(
        (("pkg/m0.py", ((0, "work_0"),)), ("pkg/m1.py", ((0, "work_1"),))), frozenset({("pkg/m1.py", 0)}), 500
    )
    settings = Settings()
    order = stable_order(ranked, previous, 500, settings, tags)
    assert [(item.path, item.symbol) for item in order.items] == [("pkg/m0.py", 0), ("pkg/m1.py", 0), ("pkg/m2.py", 0)]
    assert order.kept == 2 and set(order.summaries_allowed or ()) == {("pkg/m1.py", 0)}
    renderer = Renderer(tags, settings, kept_blocks=order.kept_blocks)
    counter = make_counter(settings.encoding)
    packed = pack(order.items, renderer, counter, 500, 0)
    kept, allowed = order.kept_blocks, order.summaries_allowed or ()
    rules = SummaryRules(200, 8, may=lambda key: key not in kept or key in allowed)
    summarized = add_summaries(packed, renderer, counter, 500, rules, lambda path, i: "Step summary.")
    assert set(summarized.summaries) == {("pkg/m1.py", 0), ("pkg/m2.py", 0)}  # not work_0: it had none
    everything = add_summaries(packed, renderer, counter, 500, SummaryRules(200, 8), lambda path, i: "Step summary.")
    assert ("pkg/m0.py", 0) in everything.summaries  # the room was there


def test_kept_entries_cut_for_the_fresh_share_go_back_in_rank_order() -> None:
    from hybridmap.pipeline.pack.stable import StableOrder
    from hybridmap.pipeline.rank import RankItem

    a, b, c = RankItem(0.2, "a.py", 0), RankItem(0.9, "b.py", 0), RankItem(0.0, "c.py", 0)  # c: a chat file's
    d, e = RankItem(0.5, "d.py", 0), RankItem(0.1, "e.py", 0)
    order = StableOrder((a, b, c, d, e), {("a.py", 0): 0, ("b.py", 0): 1, ("c.py", 0): 2}, None, 1, 3)
    cut = order.keeping(1)
    assert cut.items == (a, b, d, e, c) and cut.kept == 1
    assert dict(cut.kept_blocks) == {("a.py", 0): 0}  # the others get blocks of their own again
    assert order.keeping(3) is order
