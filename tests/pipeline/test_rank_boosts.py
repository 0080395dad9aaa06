"""The task-aware boosts of issue 17: directory proximity, reference-name match, definition-token
match. Each is checked twice: its arithmetic on tags built in memory (what moves, by how much,
with which reason, and what stays put when it is off), and end to end on a real repository
written to disk and mapped by :class:`hybridmap.RepoMap` in static mode.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.model import FileTags, Span, Symbol
from hybridmap.pipeline.graph.repo_graph import build_graph
from hybridmap.pipeline.inputs.mentions import RequestMentions
from hybridmap.pipeline.rank import rank
from hybridmap.pipeline.rank.signals.definition_tokens import NameParts
from hybridmap.pipeline.rank.signals.directory_proximity import DirectoryTree
from hybridmap.settings import ConfigError, Settings, settings_from_mapping


def _tags(defs: list[str], refs: list[str]) -> FileTags:
    return FileTags(
        tuple(Symbol(n, "function", Span(i, 0, i + 1, 0), i, 0, "") for i, n in enumerate(defs)), tuple(refs)
    )


#: Each test here looks at one signal: the text-similarity lift (its own tests:
#: tests/pipeline/test_text_similarity.py) would move the scores it checks.
NO_TEXT = {"text_similarity_boost": 0.0, "text_similarity_message_boost": 0.0}


def _rank(tags: dict[str, FileTags], settings: Settings, chat: list[str] = [], idents: list[str] = []):  # noqa: B006
    settings = dataclasses.replace(settings, **NO_TEXT)
    graph = build_graph(tags, settings)
    return rank(graph, tags, chat_files=chat, mentioned_files=[], mentioned_idents=idents, settings=settings)


# --- directory proximity ----------------------------------------------------------------------


def test_directory_tree_distances() -> None:
    tree = DirectoryTree.of(("a/b/x.py", "a/b/y.py", "a/c/z.py", "a/b/d/w.py", "top.py", "e/f/g/v.py"))
    assert tree.files_in["a/b"] == (0, 1) and tree.files_in[""] == (4,)
    assert tree.within("a/b", 2) == {"a/b": 0, "a/b/d": 1, "a": 1, "a/c": 2, "": 2}
    assert tree.within("a/b", 0) == {"a/b": 0}
    # e/ and e/f hold no file directly but lead to e/f/g: the walk goes through them.
    assert tree.within("", 3) == {"": 0, "a": 1, "e": 1, "a/b": 2, "a/c": 2, "e/f": 2, "a/b/d": 3, "e/f/g": 3}


def _package_corpus() -> dict[str, FileTags]:
    # pkg/pr/create.go and its sibling view.go share nothing by name; util/ is used by both.
    return {
        "pkg/pr/create.go": _tags(["createRun"], ["FormatTitle", "Client"]),
        "pkg/pr/view.go": _tags(["viewRun"], ["FormatTitle"]),
        "pkg/pr/shared/state.go": _tags(["State"], []),
        "pkg/issue/list.go": _tags(["listRun"], ["FormatTitle", "Client"]),
        "util/text.go": _tags(["FormatTitle"], []),
        "api/client.go": _tags(["Client"], []),
    }


def test_directory_proximity_lifts_the_chat_files_neighbourhood() -> None:
    tags = _package_corpus()
    off = _rank(tags, Settings(directory_proximity_boost=0.0), chat=["pkg/pr/create.go"])
    on = _rank(tags, Settings(directory_proximity_boost=2.0, directory_proximity_decay=0.5), chat=["pkg/pr/create.go"])
    assert Settings().directory_proximity_boost == 2.0  # the default since docs/evaluation.md
    ratio = {path: on.file_scores[path] / off.file_scores[path] for path in tags}
    # Same directory: multiplier 1 -> 1 + 2; one step down (pkg/pr/shared): 1 + 2 * 0.5; the rest
    # (pkg/issue is a sibling of pkg/pr's parent's child: 2 steps) 1 + 2 * 0.25.
    assert ratio["pkg/pr/view.go"] == pytest.approx(3.0)
    assert ratio["pkg/pr/shared/state.go"] == pytest.approx(2.0)
    assert ratio["pkg/issue/list.go"] == pytest.approx(1.5)
    assert ratio["util/text.go"] == pytest.approx(1.0) and ratio["api/client.go"] == pytest.approx(1.0)
    assert "in a chat file's directory" in on.reasons["pkg/pr/view.go"]
    assert "1 directory from a chat file" in on.reasons["pkg/pr/shared/state.go"]
    assert "in a chat file's directory" not in off.reasons.get("pkg/pr/view.go", ())
    # Personalization instead: rank itself flows from the neighbourhood (view.go before util/).
    pers = _rank(
        tags,
        Settings(directory_proximity_boost=0.0, directory_proximity_personalization=5.0),
        chat=["pkg/pr/create.go"],
    )
    assert pers.file_scores["pkg/pr/view.go"] > off.file_scores["pkg/pr/view.go"] * 2
    # No chat file, no neighbourhood.
    plain = _rank(tags, Settings(directory_proximity_boost=0.0)).file_scores
    assert _rank(tags, Settings(directory_proximity_boost=2.0)).file_scores == plain


def test_a_crowded_directory_shares_the_proximity_boost() -> None:
    tags = {f"widgets/w{i}.py": _tags([f"Widget{i}"], []) for i in range(20)}
    tags["widgets/chat.py"] = _tags(["Chat"], [])
    tags["app/main.py"] = _tags(["main"], [])
    ask = {"chat": ["widgets/chat.py"]}
    off = _rank(tags, Settings(directory_proximity_boost=0.0), **ask)
    shared = _rank(tags, Settings(directory_proximity_boost=2.0, directory_proximity_crowd=7), **ask)
    whole = _rank(tags, Settings(directory_proximity_boost=2.0, directory_proximity_crowd=0), **ask)
    # 21 files in widgets/: each gets 7/21 of the boost; unshared, all of it.
    assert shared.file_scores["widgets/w3.py"] / off.file_scores["widgets/w3.py"] == pytest.approx(1 + 2 * 7 / 21)
    assert whole.file_scores["widgets/w3.py"] / off.file_scores["widgets/w3.py"] == pytest.approx(3.0)
    # app/ is two steps away (up to the root, down to app/) and holds one file: 2 x 0.5 ** 2 added
    # to its entry-point multiplier 1.5.
    assert shared.file_scores["app/main.py"] / off.file_scores["app/main.py"] == pytest.approx((1.5 + 0.5) / 1.5)


# --- reference-name match ---------------------------------------------------------------------


def test_reference_names_lift_the_users_of_a_mentioned_identifier() -> None:
    tags = {
        "billing/total.py": _tags(["compute_total"], []),
        "checkout/cart.py": _tags(["Cart"], ["compute_total"]),
        "checkout/receipt.py": _tags(["Receipt"], ["format_money"]),
        "money.py": _tags(["format_money"], []),
    }
    ask = {"idents": ["compute_total"]}
    off = _rank(tags, Settings(reference_name_boost=0.0), **ask)
    on = _rank(tags, Settings(reference_name_personalization=3.0, reference_name_boost=1.0), **ask)
    assert Settings().reference_name_boost == 1.0
    assert on.file_scores["checkout/cart.py"] > 2 * off.file_scores["checkout/cart.py"]
    assert "uses mentioned 'compute_total'" in on.reasons["checkout/cart.py"]
    # The definer is not its own user; a file that does not use the name is not lifted by it.
    assert "uses mentioned 'compute_total'" not in on.reasons.get("billing/total.py", ())
    assert "uses mentioned 'compute_total'" not in on.reasons.get("checkout/receipt.py", ())
    # A name used by more files than reference_name_max_files lifts none of them.
    capped = _rank(
        tags, Settings(reference_name_personalization=3.0, reference_name_boost=1.0, reference_name_max_files=0), **ask
    )
    assert capped.file_scores == off.file_scores


# --- definition-token match -------------------------------------------------------------------


def test_name_parts_match_words_as_prefixes_of_parts() -> None:
    index = NameParts.of(("compute_total", "ComputeTotal", "focus_next", "FocusChain", "tab_focus", "get", "x"))
    assert index.matching("focus", 3) == {"focus_next", "FocusChain", "tab_focus"}
    assert index.matching("tabFocus", 3) == {"tab_focus"}
    assert index.matching("comp", 3) == {"compute_total", "ComputeTotal"}
    assert index.matching("compute_total", 3) == {"ComputeTotal"}  # itself is the exact match's
    assert index.matching("TOTAL_COMPUTE", 3) == {"compute_total", "ComputeTotal"}  # parts, any order
    assert index.matching("ge", 3) == set()  # parts shorter than min_chars are ignored
    assert index.matching("zzz", 3) == set()


def test_definition_tokens_lift_names_containing_the_words() -> None:
    tags = {
        "widgets/keys.py": _tags(["focus_next", "render"], []),
        "widgets/tabs.py": _tags(["Tabs", "draw"], ["render"]),
        "app.py": _tags(["App"], ["focus_next", "Tabs", "draw"]),
    }
    ask = {"idents": ["focus"]}
    nothing = {"definition_token_boost": 1.0, "definition_token_personalization": 0.0}
    off = _rank(tags, Settings(**nothing), **ask)
    boosted = _rank(tags, Settings(**{**nothing, "definition_token_boost": 4.0}), **ask)
    plain = {(item.path, item.symbol): item.score for item in off.items}
    best = {(item.path, item.symbol): item.score for item in boosted.items}
    # focus_next was keys.py's second definition (x file_symbol_decay); boosted, it is the first.
    assert (off.items[0].path, off.items[0].symbol) == ("widgets/keys.py", 1)
    assert (boosted.items[0].path, boosted.items[0].symbol) == ("widgets/keys.py", 0)
    assert best[("widgets/keys.py", 0)] / plain[("widgets/keys.py", 0)] == pytest.approx(4.0 / 0.7)
    assert best[("widgets/tabs.py", 0)] == plain[("widgets/tabs.py", 0)]
    # Personalization: the teleport goes to the definer, whose share of the rank grows.
    on = _rank(tags, Settings(**{**nothing, "definition_token_personalization": 3.0}), **ask)
    before, after = (r.file_scores["widgets/keys.py"] / sum(r.file_scores.values()) for r in (off, on))
    assert after > before
    assert "defines a name containing 'focus'" in on.reasons["widgets/keys.py"]
    assert "defines a name containing 'focus'" not in off.reasons.get("widgets/keys.py", ())
    # A word that is part of names in too many files matches none.
    capped = _rank(tags, Settings(definition_token_boost=4.0, definition_token_max_files=0), **ask)
    assert (Settings().definition_token_boost, Settings().definition_token_personalization) == (3.0, 1.0)
    assert capped.file_scores == off.file_scores


def test_exact_mentions_stay_pinned_above_token_matches() -> None:
    tags = {
        "a.py": _tags(["focus", "focus_next", "focus_previous", "focus_chain"], []),
        "b.py": _tags(["other"], ["focus_next", "focus_previous", "focus_chain", "focus_next"]),
    }
    on = _rank(tags, Settings(definition_token_boost=1000.0), idents=["focus"])
    assert (on.items[0].path, on.items[0].symbol) == ("a.py", 0)


def test_boost_settings_are_range_checked() -> None:
    for key, bad in (
        ("directory_proximity_boost", -1),
        ("directory_proximity_decay", 1.5),
        ("directory_proximity_max_distance", 65),
        ("reference_name_max_files", -1),
        ("definition_token_min_chars", 0),
    ):
        with pytest.raises(ConfigError, match=key):
            settings_from_mapping({key: bad}, "test")


# --- files named by the user -------------------------------------------------------------------


def _first_files(ranking) -> list[str]:  # type: ignore[no-untyped-def]
    return list(dict.fromkeys(item.path for item in ranking.items))


def _named_corpus() -> dict[str, FileTags]:
    # chef.py uses two helpers and is used once: PageRank's mass given to it flows to them.
    return {
        "app/chef.py": _tags(["Chef", "prepare"], ["isolated_builder", "Pool", "Pool"]),
        "app/build.py": _tags(["isolated_builder"], ["Pool"]),
        "app/pool.py": _tags(["Pool"], []),
        "app/cli.py": _tags(["main"], ["Chef", "isolated_builder"]),
        "tests/test_chef.py": _tags(["test_prepare"], ["Chef"]),
    }


def _rank_named(settings: Settings, files: list[str], named: list[str] | None = None, idents: list[str] = []):  # noqa: B006
    tags = _named_corpus()
    settings = dataclasses.replace(settings, **NO_TEXT)
    graph = build_graph(tags, settings)
    return rank(
        graph, tags, chat_files=[], mentioned_files=files, named_files=named, mentioned_idents=idents, settings=settings
    )


def test_a_file_named_by_path_or_name_goes_first() -> None:
    assert Settings().pin_mentioned_files
    off = _rank_named(Settings(pin_mentioned_files=False), ["app/chef.py"])
    assert _first_files(off)[0] != "app/chef.py"  # what it uses comes first without the pin
    on = _rank_named(Settings(pin_mentioned_files=True), ["app/chef.py"])
    assert _first_files(on)[:2] == ["app/chef.py", "tests/test_chef.py"]  # its test follows it
    # Above the definitions of a named identifier too, which are pinned before it.
    with_ident = _rank_named(Settings(pin_mentioned_files=True), ["app/chef.py"], idents=["Pool"])
    assert _first_files(with_ident)[:2] == ["app/chef.py", "app/pool.py"]
    # A file named only by its stem (a message's word) is mentioned, not pinned (the stem's
    # own lift, path_stem_mention_boost, is off here).
    by_stem = _rank_named(Settings(pin_mentioned_files=True, path_stem_mention_boost=0.0), ["app/chef.py"], named=[])
    assert by_stem.file_scores == off.file_scores
    assert _first_files(by_stem)[0] != "app/chef.py"


def test_a_file_named_by_its_stem_is_lifted() -> None:
    tags = {
        "client/client.ts": _tags(["hc", "ClientRequest"], ["parse_query", "Types"]),
        "client/utils.ts": _tags(["parse_query"], ["Types"]),
        "client/types.ts": _tags(["Types"], []),
        "server/app.ts": _tags(["App"], ["hc"]),
    }
    assert Settings().path_stem_mention_boost == 1.0
    off = _rank(tags, Settings(path_stem_mention_boost=0.0), idents=["client"])
    assert _first_files(off)[0] != "client/client.ts"
    on = _rank(tags, Settings(path_stem_mention_boost=1.0), idents=["client"])
    assert _first_files(on)[0] == "client/client.ts"
    # The directory's other files keep their scores: only the stem names a file.
    score = {(i.path, i.symbol): i.score for i in on.items}
    assert all(score[(i.path, i.symbol)] == i.score for i in off.items if i.path != "client/client.ts")
    # A word naming two files' stems lifts each by half; a private module's stem is named
    # without its underscore.
    tags |= {"a/index.ts": _tags(["a"], []), "b/index.ts": _tags(["b"], []), "text/_wrap.py": _tags(["wrap"], [])}
    ask = {"idents": ["client", "index", "wrap"]}
    before = _rank(tags, Settings(path_stem_mention_boost=0.0), **ask)
    after = _rank(tags, Settings(path_stem_mention_boost=1.0), **ask)
    lift = {
        path: max(i.score for i in after.items if i.path == path) - max(i.score for i in before.items if i.path == path)
        for path in ("client/client.ts", "a/index.ts", "b/index.ts", "text/_wrap.py")
    }
    assert lift["client/client.ts"] > 0
    assert lift["a/index.ts"] == pytest.approx(lift["client/client.ts"] / 2) == lift["b/index.ts"]
    assert lift["text/_wrap.py"] == pytest.approx(lift["client/client.ts"])


# --- end to end -------------------------------------------------------------------------------


def _static_maps(git_repo, tmp_path: Path, files: dict[str, str]):  # type: ignore[no-untyped-def]
    """A function making a static map (2,048 tokens) of a git repository of ``files`` with the
    settings ``overrides`` and the request's keywords."""
    root = git_repo(files)
    cache = str(tmp_path / "cache")

    def mapped(overrides: dict[str, object], **request: object):  # type: ignore[no-untyped-def]
        with RepoMap(root, overrides={"cache_dir": cache, **overrides}, start_servers=False) as repo:
            return repo.map(mode="static", tokens=2048, **request)  # type: ignore[arg-type]

    return mapped


def test_a_real_repository_map_follows_the_boosts(git_repo, tmp_path: Path) -> None:
    files = {
        "shop/cart.py": "from billing.total import compute_total\n\n\nclass Cart:\n"
        "    def checkout(self):\n        return compute_total(self)\n",
        "shop/wishlist.py": "class Wishlist:\n    def add(self, item):\n        return item\n",
        "billing/total.py": "def compute_total(cart):\n    return 0\n\n\ndef compute_tax(cart):\n    return 1\n",
        "billing/refund.py": "def refund(order):\n    return order\n",
        "util/log.py": "from text.render import render_line\n\n\ndef log(message):\n    print(render_line(message))\n",
        "text/render.py": "def render_line(text):\n    return text\n",
    }
    maps = _static_maps(git_repo, tmp_path, files)

    def mapped(chat: str = "shop/cart.py", **overrides: object) -> dict[str, tuple[str, ...]]:
        result = maps(overrides, chat_files=[chat], mentioned_idents=["compute"])
        return {f.path: f.why for f in result.files}

    plain = list(mapped(directory_proximity_boost=0.0))
    near = list(mapped(directory_proximity_boost=10.0))
    # The chat file's sibling, used by nothing and using nothing, climbs above billing/refund.py.
    assert near.index("shop/wishlist.py") < near.index("billing/refund.py")
    assert plain.index("shop/wishlist.py") > near.index("shop/wishlist.py") or plain == near[: len(plain)]
    # "compute" names no definition: only the definition-token match links it to billing/total.py.
    without = mapped("util/log.py", definition_token_boost=1.0, definition_token_personalization=0.0)
    with_defaults = mapped("util/log.py")
    assert "defines a name containing 'compute'" in with_defaults["billing/total.py"]
    assert not any("compute" in why for whys in without.values() for why in whys), without


def test_a_real_map_shows_named_files_first(git_repo, tmp_path: Path) -> None:
    files = {
        "kitchen/chef.py": "from kitchen.build import isolated_builder\nfrom kitchen.pool import Pool\n\n\n"
        "class Chef:\n    def prepare(self):\n        return isolated_builder(Pool())\n",
        "kitchen/build.py": "from kitchen.pool import Pool\n\n\ndef isolated_builder(pool):\n    return Pool()\n",
        "kitchen/pool.py": "class Pool:\n    pass\n",
        "app/cli.py": "from kitchen.chef import Chef\n\n\ndef main():\n    return Chef().prepare()\n",
        "app/config.py": "from kitchen.pool import Pool\n\n\nclass Config:\n    pool = Pool\n",
    }
    maps = _static_maps(git_repo, tmp_path, files)

    def first(**request: object) -> str:
        return str(maps({"path_stem_mention_boost": 0.0}, **request).files[0].path)

    # Named by its file name, as a mention or in a message: first, ahead of what it uses.
    assert first(mentioned_idents=["chef.py"]) == "kitchen/chef.py"
    assert first(message="refactor chef.py to use a helper") == "kitchen/chef.py"
    # Named on purpose and by its stem in the message: still named (pinned).
    assert first(mentioned_files=["kitchen/chef.py"], message="the chef is slow") == "kitchen/chef.py"
    # A message's file named only by its stem is mentioned, not named; one the request names on
    # purpose stays named whatever the message says of it.
    read = RequestMentions(("app/config.py", "kitchen/chef.py"), (), frozenset({"app/config.py"}))
    assert read.named([]) == ["kitchen/chef.py"]
    assert read.named(["app/config.py"]) == ["app/config.py", "kitchen/chef.py"]


# --- private definitions ----------------------------------------------------------------------


def test_private_definitions_weigh_less_outside_their_directory() -> None:
    from hybridmap.languages.visibility import Visibility

    tags = {
        "store/store.go": _tags(["PublicThing", "privateThing"], []),
        "store/cache.go": _tags(["cacheEntry"], ["privateThing"]),
        "cmd/main.go": _tags(["main"], ["PublicThing", "privateThing"]),
    }
    visibility = Visibility({"go": "capitalized"}, dict.fromkeys(tags, "go"))

    def scores(weight: float, chat: list[str]) -> dict[tuple[str, int], float]:
        settings = Settings(private_definition_weight=weight, **NO_TEXT)
        graph = build_graph(tags, settings)
        ranking = rank(
            graph,
            tags,
            chat_files=chat,
            mentioned_files=[],
            mentioned_idents=[],
            settings=settings,
            visibility=visibility,
        )
        return {(item.path, item.symbol): item.score for item in ranking.items}

    off, on = scores(1.0, ["cmd/main.go"]), scores(0.25, ["cmd/main.go"])
    # privateThing was store.go's best definition; x 0.25 it is its second, so file_symbol_decay
    # (0.7) applies to it and no longer to PublicThing.
    assert on[("store/store.go", 1)] / off[("store/store.go", 1)] == pytest.approx(0.25 * 0.7)
    assert on[("store/store.go", 0)] / off[("store/store.go", 0)] == pytest.approx(1 / 0.7)
    assert on[("store/cache.go", 0)] < off[("store/cache.go", 0)]
    # Editing a file of the same package: its private names are the package's own, not lowered.
    same_off, same_on = scores(1.0, ["store/cache.go"]), scores(0.25, ["store/cache.go"])
    assert same_on[("store/store.go", 1)] == pytest.approx(same_off[("store/store.go", 1)])
    # Without a visibility (a caller of rank() that knows no conventions), nothing changes.
    settings = Settings(private_definition_weight=0.25, **NO_TEXT)
    graph = build_graph(tags, settings)
    plain = rank(graph, tags, chat_files=["cmd/main.go"], mentioned_files=[], mentioned_idents=[], settings=settings)
    assert {(i.path, i.symbol): i.score for i in plain.items} == off


def test_in_c_only_static_definitions_count_as_private_for_ranking() -> None:
    from hybridmap.languages.visibility import Visibility

    def sym(signature: str) -> Symbol:
        return Symbol(signature.split("(")[0].split()[-1], "function", Span(0, 0, 1, 0), 0, 0, signature)

    source = (sym("int jv_parse(const char *text)"), sym("static int skip_space(const char *p)"))
    visibility = Visibility({"c": "header"}, {"src/jv.c": "c", "src/jv.h": "c"})
    # The marks' convention: a .c file's definitions are not public (the header declares them)...
    assert visibility.public("src/jv.c", source, 0) is False
    # ...but another file calls jv_parse: for ranking only the static one is private.
    assert visibility.private("src/jv.c", source, 0) is False
    assert visibility.private("src/jv.c", source, 1) is True
    go = Visibility({"go": "capitalized"}, {"a.go": "go"})
    names = (sym("func Parse(s string)"), sym("func parse(s string)"))
    assert (go.private("a.go", names, 0), go.private("a.go", names, 1)) == (False, True)


def test_the_private_mask_after_an_edit_equals_a_fresh_one() -> None:
    from hybridmap.languages.visibility import Visibility
    from hybridmap.pipeline.rank.context import RankContext
    from hybridmap.pipeline.rank.signals import private_definitions

    tags = {f"pkg{i}/f{i}.go": _tags([f"Public{i}", f"private{i}"], [f"Public{(i + 1) % 5}"]) for i in range(5)}
    visibility = Visibility({"go": "capitalized"}, dict.fromkeys(tags, "go"))

    def mask(current: dict[str, FileTags]) -> list[bool]:
        graph = build_graph(current, Settings())
        ctx = RankContext(graph, current, Settings(), (), (), (), visibility=visibility)
        return private_definitions.private_mask(ctx).tolist()

    first = mask(tags)
    assert first == [False, True] * 5
    # An edit: pkg2's file now defines a third, private name first; the others are the same objects.
    edited = {**tags, "pkg2/f2.go": _tags(["helper", "Public2", "private2"], ["Public3"])}
    incremental = mask(edited)
    private_definitions._LAST.clear()  # nothing remembered: every file read again
    assert incremental == mask(edited)
    assert incremental.count(True) == 6
    # Files came and went: the kept runs are found by path (their places moved), new ones read.
    moved = {k: v for k, v in edited.items() if k != "pkg1/f1.go"}
    moved["pkg0/a_new.go"] = _tags(["newPrivate", "NewPublic"], [])
    visibility = Visibility({"go": "capitalized"}, dict.fromkeys(moved, "go"))
    kept = mask(moved)
    private_definitions._LAST.clear()
    assert kept == mask(moved) and kept.count(True) == 6


def test_the_private_mask_spliced_after_patches_equals_a_fresh_one() -> None:
    """Graphs of the same file list (the graph updater keeps it) and tags patched at a few paths
    (the base source's): each file whose tags moved has its run of flags replaced, whether its
    symbols grew or shrank; the mask equals one read afresh."""
    from hybridmap.infra.patched import Patched
    from hybridmap.languages.visibility import Visibility
    from hybridmap.pipeline.graph.update import GraphUpdater
    from hybridmap.pipeline.rank.context import RankContext
    from hybridmap.pipeline.rank.signals import private_definitions

    tags: dict[str, FileTags] = {
        f"pkg{i}/f{i}.go": _tags([f"Public{i}", f"private{i}"], [f"Public{(i + 1) % 60}"]) for i in range(60)
    }
    visibility = Visibility({"go": "capitalized"}, dict.fromkeys(tags, "go"))
    updater = GraphUpdater(Settings())

    def mask(current: dict[str, FileTags]) -> list[bool]:
        graph = updater.update(current)
        ctx = RankContext(graph, current, Settings(), (), (), (), visibility=visibility)
        return private_definitions.private_mask(ctx).tolist()

    mask(tags)
    edits = [
        {"pkg2/f2.go": _tags(["helper", "Public2", "private2", "other"], ["Public3"])},
        {"pkg0/f0.go": _tags(["Public0"], []), "pkg4/f4.go": _tags(["a", "B", "c"], ["Public0"])},
        {"pkg2/f2.go": _tags(["Public2"], [])},
    ]
    for edit in edits:
        files_before = updater.graph.files if updater.graph is not None else None
        tags = Patched(tags, {**tags, **edit}, edit)
        spliced = mask(tags)
        assert updater.graph is not None and updater.graph.files is files_before  # the splice's case
        private_definitions._LAST.clear()
        fresh_graph = build_graph(tags, Settings())
        ctx = RankContext(fresh_graph, tags, Settings(), (), (), (), visibility=visibility)
        assert spliced == private_definitions.private_mask(ctx).tolist()
        mask(tags)  # remembered again for the next edit


_NAMES = ("compute_total", "ComputeTotal", "focus_next", "FocusChain", "tab_focus", "get", "HTTPServer", "x", "parse2")


@given(before=st.frozensets(st.sampled_from(_NAMES)), after=st.frozensets(st.sampled_from(_NAMES)))
@hypothesis_settings(max_examples=200, deadline=None)
def test_an_updated_name_index_equals_a_fresh_one(before: frozenset[str], after: frozenset[str]) -> None:
    fresh, updated = NameParts.of(tuple(after)), NameParts.of(tuple(before)).updated(after)
    assert (updated.parts, dict(updated.names_of), updated.names) == (fresh.parts, dict(fresh.names_of), fresh.names)
    for word in ("focus", "comp", "http", "tab focus", "parse"):
        assert updated.matching(word, 3) == fresh.matching(word, 3)
