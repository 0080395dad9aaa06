"""A chat file's tests and a chat test's subject, paired by name (signals/test_pairs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridmap import RepoMap
from hybridmap.languages.paths import subject_stem
from hybridmap.pipeline.rank.signals.test_pairs import WHY_FOLLOWS, WHY_SUBJECT, WHY_TEST, _closeness, _Stems


@pytest.mark.parametrize(
    ("test", "subject"),
    [
        ("tests/test_foo_bar.py", "pkg/foo_bar.py"),
        ("pkg/foo_bar_test.go", "pkg/foo_bar.go"),
        ("src/fooBar.spec.ts", "src/fooBar.ts"),
        ("src/lib/foo-bar.test.tsx", "src/lib/foo-bar.tsx"),
        ("src/test/java/org/x/FooBarTest.java", "src/main/java/org/x/FooBar.java"),
        ("src/test/java/org/x/FooBarTests.java", "src/main/java/org/x/FooBar.java"),
        ("tests/foo_bar.rs", "src/foo_bar.rs"),
        ("spec/foo_bar_spec.rb", "lib/foo_bar.rb"),
        ("tests/test_search.py", "pkg/search/__init__.py"),  # a package is named by its directory
    ],
)
def test_a_test_and_its_subject_share_a_stem(test: str, subject: str) -> None:
    assert subject_stem(test) == subject_stem(subject) != ""


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("tests/test_foo.py", "pkg/foobar.py"),  # a prefix is not a pair
        ("src/latest.py", "src/la.py"),  # "test" inside a word is no affix
        ("pkg/contest.go", "pkg/con.go"),
    ],
)
def test_different_names_do_not_pair(a: str, b: str) -> None:
    assert subject_stem(a) != subject_stem(b)


def test_a_test_package_and_other_repeated_names_have_no_stem() -> None:
    assert subject_stem("tests/search/__init__.py") == ""  # nobody's test
    assert subject_stem("pkg/search/__main__.py") == ""
    assert subject_stem("__init__.py") == ""


@pytest.mark.parametrize(
    ("test", "subject"),
    [
        ("tests/test_util/test_util_typing.py", "pkg/util/typing.py"),
        ("tests/test_ext_napoleon/test_ext_napoleon_docstring.py", "pkg/ext/napoleon/docstring.py"),
        ("tests/test_downloadermiddleware_retry.py", "pkg/downloadermiddlewares/retry.py"),  # abbreviated
        ("tests/test_builders/test_build_html.py", "pkg/builders/html/__init__.py"),
        ("tests/test_utils_url.py", "pkg/utils/url.py"),
    ],
)
def test_a_test_name_can_spell_its_subjects_directories(test: str, subject: str) -> None:
    files = (subject, test, "pkg/unrelated.py")
    stems = _Stems.of(files)
    assert stems.nearest(files, 0, 3) == [1]
    assert stems.nearest(files, 1, 3) == [0]


@pytest.mark.parametrize(
    ("test", "subject"),
    [
        ("tests/test_util_typing.py", "pkg/other/typing.py"),  # the directory is not the subject's
        ("tests/test_ext_napoleon_docstring.py", "pkg/napoleon/ext/docstring.py"),  # out of order
        ("tests/test_b_typing.py", "pkg/bar/typing.py"),  # a word of one letter names the whole directory
        ("tests/test_util_typing.py", "pkg/util/typingx.py"),
    ],
)
def test_directories_a_test_name_does_not_spell_pair_nothing(test: str, subject: str) -> None:
    files = (subject, test)
    stems = _Stems.of(files)
    assert stems.nearest(files, 0, 3) == []
    assert stems.nearest(files, 1, 3) == []


def test_a_test_spelling_the_directories_is_nearer_than_a_same_named_one() -> None:
    files = ("pkg/util/typing.py", "tests/test_typing.py", "tests/test_util/test_util_typing.py")
    stems = _Stems.of(files)
    assert stems.nearest(files, 0, 1) == [2]
    assert stems.nearest(files, 0, 3) == [2]
    assert stems.nearest(files, 1, 3) == [0]


def test_closeness_counts_shared_directories_at_both_ends() -> None:
    java_main, java_test = "src/main/java/org/x/Foo.java", "src/test/java/org/x/FooTest.java"
    elsewhere = "src/test/java/org/y/FooTest.java"
    assert _closeness(java_main, java_test) == 1 + 3  # src | java/org/x
    assert _closeness(java_main, elsewhere) == 1
    assert _closeness("a/b/foo.py", "a/b/test_foo.py") == 3  # same directory: all, plus one


def _repo(git_repo) -> Path:
    """Two modules of the same stem in two packages, each with its test; the tests reach their
    subject only through the package root (no name of the subject in the test), and many other
    modules share the helper the graph ranks first."""
    files = {
        "shop/__init__.py": "from .billing import charge\n",
        "shop/billing.py": "from shop.util import fmt\n\ndef charge(amount):\n    return fmt(amount)\n",
        "shop/util.py": "def fmt(x):\n    return str(x)\n",
        "tests/shop/test_billing.py": "import shop\n\ndef test_it():\n    assert shop\n",
        "admin/billing.py": "def audit():\n    return 1\n",
        "tests/admin/test_billing.py": "import admin\n\ndef test_audit():\n    assert admin\n",
    }
    view = "from shop.util import fmt\n\ndef show_{i}(x):\n    return fmt(x)\n"
    files |= {f"shop/view{i}.py": view.format(i=i) for i in range(6)}
    return git_repo(files)


def _order(root: Path, tmp_path: Path, chat: str, boost: float) -> tuple[list[str], dict[str, tuple[str, ...]]]:
    overrides = {"cache_dir": str(tmp_path / "c"), "test_pair_boost": boost, "text_similarity_boost": 0.0}
    with RepoMap(root, overrides=overrides) as repo:
        result = repo.map(mode="static", chat_files=[chat], tokens=2000)
    return [f.path for f in result.files], {f.path: tuple(f.why) for f in result.files}


def test_the_chat_files_own_test_comes_first(git_repo, tmp_path: Path) -> None:
    root = _repo(git_repo)
    plain, _ = _order(root, tmp_path, "shop/billing.py", 0.0)
    assert plain[0] != "tests/shop/test_billing.py", plain  # the control: the graph does not lift it
    order, why = _order(root, tmp_path, "shop/billing.py", 2.0)
    assert order[0] == "tests/shop/test_billing.py", order
    assert WHY_TEST in why[order[0]]
    # The other package's test of the same stem is farther away: not paired.
    assert WHY_TEST not in why.get("tests/admin/test_billing.py", ())


def test_a_chat_test_lifts_its_subject(git_repo, tmp_path: Path) -> None:
    root = _repo(git_repo)
    order, why = _order(root, tmp_path, "tests/admin/test_billing.py", 2.0)
    assert order[0] == "admin/billing.py", order
    assert WHY_SUBJECT in why[order[0]]
    assert WHY_SUBJECT not in why.get("shop/billing.py", ())


def _message_order(root: Path, tmp_path: Path, files: int, **request: object) -> tuple[list[str], dict]:
    overrides = {"cache_dir": str(tmp_path / "m"), "paired_follow_files": files}
    with RepoMap(root, overrides=overrides) as repo:
        result = repo.map(mode="static", tokens=2000, **request)  # type: ignore[arg-type]
    return [f.path for f in result.files], {f.path: tuple(f.why) for f in result.files}


def test_a_message_pulls_the_first_files_test_up_behind_it(git_repo, tmp_path: Path) -> None:
    root = _repo(git_repo)
    plain, _ = _message_order(root, tmp_path, 0, message="charge the amount")
    assert plain[0] == "shop/billing.py", plain  # the message names its code
    assert plain.index("tests/shop/test_billing.py") > 1, plain  # the control: tests weigh less
    order, why = _message_order(root, tmp_path, 1, message="charge the amount")
    assert order[:2] == ["shop/billing.py", "tests/shop/test_billing.py"], order
    assert WHY_FOLLOWS in why[order[1]]
    # The other package's test of the same stem is farther away: not pulled.
    assert WHY_FOLLOWS not in why.get("tests/admin/test_billing.py", ())


def test_a_chat_file_a_first_ranked_test_or_a_request_naming_nothing_pulls_no_pair(git_repo, tmp_path: Path) -> None:
    root = _repo(git_repo)
    first_test, _ = _message_order(root, tmp_path, 0, message="test_audit")
    assert first_test[0] == "tests/admin/test_billing.py", first_test  # its subject is not pulled
    requests = ({"chat_files": ["shop/view0.py"], "message": "charge the amount"}, {}, {"message": "test_audit"})
    for request in requests:
        off, _ = _message_order(root, tmp_path, 0, **request)
        on, why = _message_order(root, tmp_path, 3, **request)
        assert on == off, request
        assert not any(WHY_FOLLOWS in said for said in why.values()), request
