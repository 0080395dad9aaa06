"""Gitignore-style patterns (``hybridmap/infra/ignore.py``): the same answers as pathspec's
GitIgnoreSpec where pathspec follows git, git's own where it does not, and polynomial time for
any pattern (the hostile repositories are in ``tests/hostile/test_gitignore.py``)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pathspec
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from hybridmap.infra.ignore import IgnoreSpec, compile_pattern, pattern_problem

# --- agreement with pathspec on random small patterns and paths --------------------------------

# pathspec departs from git on bracket expressions (a negated one matches '/', no escapes or
# POSIX classes inside, a reversed range raises): those are checked against git below.
_ATOMS = st.sampled_from(["a", "b", ".", "*", "?", "[ab]", "[a-b]", "[.b]", "\\*", "\\a", " "])
_SEGMENT = st.one_of(st.just("**"), st.lists(_ATOMS, min_size=0, max_size=4).map("".join))
_PATTERN = st.tuples(
    st.sampled_from(["", "!", "#", "\\!"]),
    st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join),
    st.sampled_from(["", " ", "\\ ", "  "]),
).map("".join)
_PART = (
    st.lists(st.sampled_from(["a", "b", ".", "*", " "]), min_size=1, max_size=3)
    .map("".join)
    .filter(lambda part: part not in (".", ".."))  # never in a listed path
)
_PATH = st.tuples(st.lists(_PART, min_size=1, max_size=4).map("/".join), st.sampled_from(["", "/"])).map("".join)


def _pathspec(lines: list[str]) -> pathspec.GitIgnoreSpec | None:
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:  # a trailing '\\' or a bare '!': pathspec raises, we skip the line
        return None


@hyp_settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_PATTERN, min_size=1, max_size=4), paths=st.lists(_PATH, min_size=1, max_size=6))
def test_agrees_with_pathspec_gitignorespec(lines: list[str], paths: list[str]) -> None:
    reference = _pathspec(lines)
    ours = IgnoreSpec.from_lines(lines)
    if reference is None:
        # The lines pathspec refuses are the ones we skip: the rest must still agree.
        kept = [line for line in lines if _pathspec([line]) is not None]
        reference = _pathspec(kept)
        assert reference is not None
        ours = IgnoreSpec.from_lines(kept)
    for path in paths:
        assert ours.match_file(path) == reference.match_file(path), (lines, path)


# --- where pathspec departs from git: git itself decides ----------------------------------------

# (pattern, names it must ignore, names it must not); every name is a file in one directory.
GIT_CASES = [
    ("a[!b]c", ["axc", "a.c"], ["abc", "ac"]),
    ("a[^b]c", ["axc"], ["abc"]),
    ("[[:digit:]]x", ["1x", "9x"], ["ax", "x"]),
    ("[[:alpha:][:digit:]]", ["q", "7"], ["-", "qq"]),
    ("[[:upper:]]*", ["Ab", "Z"], ["ab"]),
    ("a[\\]]b", ["a]b"], ["a\\b", "a\\]b"]),
    ("a[]]b", ["a]b"], ["ab"]),
    ("a[!]]b", ["axb"], ["a]b"]),
    ("a[z-a]b", ["azb"], ["aab", "a-b", "amb"]),  # the 'z' is a member before the '-' is read
    ("a[-x]b", ["a-b", "axb"], ["ayb"]),
    ("a[x-]b", ["a-b", "axb"], ["ayb"]),
    ("a[b-d-f]g", ["abg", "acg", "a-g", "afg"], ["aeg"]),
    ("a[\\a-c]d", ["aad", "abd"], ["add"]),
    ("[a", [], ["[a", "a"]),
    ("x[[:nope:]]", [], ["xa", "x["]),
    ("x\\", [], ["x", "x\\"]),
    ("\\#hash", ["#hash"], ["hash"]),
    ("\\!bang", ["!bang"], ["bang"]),
    ("trail\\ ", ["trail "], ["trail"]),
    ("*a*a*a*a*a*a*a*a*a*a*a*ab", ["aaaaaaaaaaaab", "xaxaxaxaxaxaxaxaxaxaxaxab"], ["a" * 40, "aaaaaaaaaaab"]),
]


def _git_ignored(root: Path, names: list[str]) -> set[str]:
    env = {"HOME": str(root), "PATH": "/usr/bin:/bin:/usr/local/bin", "GIT_CONFIG_NOSYSTEM": "1"}
    proc = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--no-index", "--stdin", "-z"],
        input="\0".join(names) + "\0",
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return set(filter(None, proc.stdout.split("\0")))


@pytest.mark.parametrize(("pattern", "ignored", "kept"), GIT_CASES, ids=[c[0] for c in GIT_CASES])
def test_bracket_escape_and_malformed_patterns_match_like_git(
    tmp_path: Path, pattern: str, ignored: list[str], kept: list[str]
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    (root / ".gitignore").write_text(pattern + "\n")
    for name in ignored + kept:
        (root / name).write_text("")
    by_git = _git_ignored(root, ignored + kept)
    spec = IgnoreSpec.from_lines([pattern])
    ours = {name for name in ignored + kept if spec.match_file(name)}
    assert by_git == set(ignored), f"the table is wrong about git for {pattern!r}"
    assert ours == by_git


# --- bounded: no pattern makes matching slow ----------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        "*a" * 12 + "b",
        "*a" * 400 + "b",
        "/".join(["**", "a"] * 40) + "/b",
        "*" + "?" * 30 + "*[ab]" * 30 + "c",
        "**/" + "*[[:alpha:]]" * 50 + "/x",
    ],
    ids=["issue-23", "400-stars", "40-double-stars", "questions-and-classes", "classes"],
)
def test_pathological_patterns_match_in_microseconds(pattern: str) -> None:
    spec = IgnoreSpec.from_lines([pattern])
    paths = ["a" * 40, "a/" * 40 + "a", "a" * 255, "/".join(["a" * 40] * 20), "ab" * 100 + "/" + "a" * 100]
    started = time.perf_counter()
    for path in paths:
        spec.match_file(path)
        spec.match_file(path + "/")
    assert time.perf_counter() - started < 0.5


def test_patterns_nothing_can_match_are_skipped_or_refused() -> None:
    for line in ("!", "x\\", "[abc", "[[:nope:]]", "/", "#comment", "", "   "):
        assert compile_pattern(line) is None, line
    assert pattern_problem("[abc")
    assert pattern_problem("x\\")
    assert pattern_problem("!")
    assert not pattern_problem("#comment")
    assert not pattern_problem("src/**/*.py")
    # A pattern needing more characters than any path has is dropped, not compiled.
    assert compile_pattern("a" * (os.pathconf("/", "PC_PATH_MAX") + 10)) is None
