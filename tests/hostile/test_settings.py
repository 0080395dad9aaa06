"""Hostile repositories against settings: a repository's ``hybridmap.toml`` or
``[tool.hybridmap]`` that would hang every map, make the graph quadratic, crash it, fail it or put
NaN in its JSON, and settings files that are links, FIFOs, huge or nested too deeply.

Each case is a real git repository with real files, mapped through the real CLI (a subprocess with
a deadline: a map that hangs fails the test instead of hanging it) or the API. Each asserts that
the map came back in time, with the default value in force, and a ``repository_config``
diagnostic naming the key and why. Property tests run random values of every type through the
one validator for every key.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.errors import ConfigError
from hybridmap.pipeline.budget import budget_for
from hybridmap.settings import (
    REPOSITORY_BUDGETS,
    REPOSITORY_TUNABLE,
    RULES,
    Settings,
    apply_repository_settings,
    load_settings_noting,
    rule_for,
    settings_from_mapping,
)

from ..conftest import git

#: The budget of a request with no chat file and no budget: map_tokens x no_chat_budget_multiplier.
DEFAULT_BUDGET = budget_for(None, None, False, Settings())

DEADLINE = 60.0
SOURCE = (
    "def shared_helper_function(value):\n    return value\n\n\n"
    "def caller_{i}():\n    return shared_helper_function({i})\n"
)


def hostile_repo(root: Path, files: dict[str, str | bytes], commit: bool = True) -> Path:
    root.mkdir(parents=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    if commit:
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "hostile")
    return root


def sources(count: int) -> dict[str, str]:
    return {f"pkg/mod_{i:04d}.py": SOURCE.format(i=i) for i in range(count)}


def run_map(root: Path, cache: Path, env_home: Path) -> tuple[dict[str, Any], float]:
    """The real CLI on ``root``; (its JSON, seconds). Fails the test on a traceback or a hang."""
    started = time.monotonic()
    env = {**os.environ, "XDG_CONFIG_HOME": str(env_home)}
    proc = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "hybridmap",
            "map",
            str(root),
            "--mode",
            "static",
            "--format",
            "json",
            "--cache-dir",
            str(cache),
        ],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        env=env,
    )
    seconds = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout), seconds  # json.loads accepts NaN: checked by the callers


def config_notes(data: dict[str, Any]) -> list[str]:
    return [d["message"] for d in data["diagnostics"] if d["kind"] == "repository_config"]


def no_nan(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(no_nan(v) for v in value.values())
    if isinstance(value, list):
        return all(no_nan(v) for v in value)
    return True


# --- settings that hang, explode, crash or fail a map ----------------------------------------


def test_pagerank_limits_from_a_repository_cannot_hang_the_map(tmp_path: Path) -> None:
    root = hostile_repo(
        tmp_path / "repo",
        {
            **sources(30),
            "hybridmap.toml": "pagerank_max_iterations = 2000000000\npagerank_tolerance = -1.0\n",
        },
    )
    data, seconds = run_map(root, tmp_path / "cache", tmp_path / "home")
    assert seconds < DEADLINE
    notes = config_notes(data)
    assert any("'pagerank_max_iterations' cannot be set by a repository" in n for n in notes), notes
    assert any("'pagerank_tolerance' cannot be set by a repository" in n for n in notes), notes
    assert "shared_helper_function" in data["text"]


@pytest.mark.parametrize("literal", ["nan", "inf", "-inf", "1e400", "0", "-5", "1.5", "'lots'", "[1]"])
def test_a_repository_budget_that_would_crash_or_fail_the_map_is_left_out(tmp_path: Path, literal: str) -> None:
    root = hostile_repo(tmp_path / "repo", {**sources(5), "hybridmap.toml": f"map_tokens = {literal}\n"})
    data, seconds = run_map(root, tmp_path / "cache", tmp_path / "home")
    assert data["budget"] == DEFAULT_BUDGET and 0 < data["tokens"] <= data["budget"]
    notes = config_notes(data)
    assert len(notes) == 1 and "'map_tokens' must be an integer from 1 to 1_000_000" in notes[0], notes
    assert seconds < DEADLINE


def test_a_nan_damping_never_reaches_the_json(tmp_path: Path) -> None:
    root = hostile_repo(
        tmp_path / "repo",
        {
            **sources(20),
            "pyproject.toml": "[tool.hybridmap]\npagerank-damping = nan\nentry-point-weight = inf\n",
        },
    )
    data, _ = run_map(root, tmp_path / "cache", tmp_path / "home")
    assert no_nan(data), "NaN or infinity in the map's JSON"
    notes = config_notes(data)
    assert any("'pagerank_damping' must be a finite number from 0 to 1, got nan" in n for n in notes), notes
    assert any("'entry_point_weight' must be a finite number" in n for n in notes), notes


def test_a_repository_cannot_make_the_graph_quadratic(tmp_path: Path) -> None:
    # Every file defines and calls the same name: with the limit lifted, 300 files give 90,000 edges.
    files = 300
    root = hostile_repo(
        tmp_path / "repo", {**sources(files), "hybridmap.toml": "max_definers_per_ident = 1000000000\n"}
    )
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}, start_servers=False) as repo:
        result = repo.map(mode="static")
    assert result.stats["graph_edges"] < files * 4  # the shared name is over the limit: no edges
    notes = [d.message for d in result.diagnostics if d.kind == "repository_config"]
    assert any("'max_definers_per_ident' cannot be set by a repository" in n for n in notes), notes


def test_settings_that_are_not_a_table_do_not_crash(tmp_path: Path) -> None:
    for name, text in {
        "settings": "settings = 3\n",
        "tool": "tool = 1\n",
        "section": "[tool]\nhybridmap = 'x'\n",
    }.items():
        root = hostile_repo(
            tmp_path / name, {**sources(3), ("hybridmap.toml" if name == "settings" else "pyproject.toml"): text}
        )
        settings, problems = load_settings_noting(root, environ={"XDG_CONFIG_HOME": str(tmp_path / "home")})
        assert settings == Settings()
        assert (problems and "must be a table" in problems[0]) or (name == "tool" and not problems), (name, problems)


# --- settings files that are not plain small files -------------------------------------------


def _outside_link(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("map_tokens = 7\n")
    (root / "hybridmap.toml").symlink_to(outside)


def _dev_zero(root: Path, tmp_path: Path) -> None:
    (root / "hybridmap.toml").symlink_to("/dev/zero")


def _fifo(root: Path, tmp_path: Path) -> None:
    os.mkfifo(root / "hybridmap.toml")


def _huge(root: Path, tmp_path: Path) -> None:
    with (root / "hybridmap.toml").open("wb") as fh:  # sparse: costs no disk
        fh.write(b"map_tokens = 7\n")
        fh.truncate(2 * 2**30)


def _big_comments(root: Path, tmp_path: Path) -> None:
    (root / "pyproject.toml").write_text("[tool.hybridmap]\nmap_tokens = 7\n" + "# padding\n" * 400_000)


def _deep(root: Path, tmp_path: Path) -> None:
    (root / "hybridmap.toml").write_text("map_tokens = 7\nx = " + "[" * 50_000 + "]" * 50_000 + "\n")


def _deep_tables(root: Path, tmp_path: Path) -> None:
    (root / "hybridmap.toml").write_text("x = " + "{a = " * 20_000 + "1" + "}" * 20_000 + "\n")


FILES = {
    "link-outside": (_outside_link, "symbolic link"),
    "dev-zero": (_dev_zero, "symbolic link"),
    "fifo": (_fifo, "not a regular file"),
    "2GB": (_huge, "config_file_max_bytes"),
    "4MB-of-comments": (_big_comments, "config_file_max_bytes"),
    "nested-arrays": (_deep, "nested too deeply"),
    "nested-tables": (_deep_tables, "nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(FILES))
def test_a_settings_file_is_read_only_when_it_is_a_small_regular_file(tmp_path: Path, case: str) -> None:
    build, why = FILES[case]
    root = hostile_repo(tmp_path / "repo", sources(3), commit=False)
    build(root, tmp_path)
    started = time.monotonic()
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}, start_servers=False) as repo:
        result = repo.map(mode="static")
    assert time.monotonic() - started < DEADLINE
    assert result.budget == DEFAULT_BUDGET  # nothing from the file applied
    notes = [d.message for d in result.diagnostics if d.kind == "repository_config"]
    assert len(notes) == 1 and why in notes[0] and "ignored" in notes[0], notes


# --- the validator, for every key and random values -------------------------------------------

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=300),
    st.lists(st.text(max_size=20), max_size=5),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.binary(max_size=10),
)
KEYS = st.sampled_from(sorted(Settings.__dataclass_fields__))


def _in_range(name: str, value: Any) -> bool:
    rule = rule_for(name)
    if rule.kind in ("int", "float"):
        return (
            type(value) is (int if rule.kind == "int" else float)
            and math.isfinite(value)
            and rule.low <= value <= rule.high
        )
    if rule.kind == "bool":
        return isinstance(value, bool)
    if rule.kind == "choice":
        return value in rule.choices
    if rule.kind == "names":
        return isinstance(value, tuple) and len(value) <= rule.high and all(isinstance(v, str) for v in value)
    if rule.kind == "patterns":  # gitignore-style globs (include, exclude)
        return (
            isinstance(value, tuple)
            and len(value) <= rule.high
            and all(isinstance(v, str) and 0 < len(v) <= 1_024 and v.isprintable() for v in value)
        )
    return (value is None and rule.nullable) or (isinstance(value, str) and rule.low <= len(value) <= rule.high)


@given(key=KEYS, value=VALUES, kebab=st.booleans())
@hyp_settings(max_examples=600, deadline=None)
def test_user_and_argument_values_are_accepted_in_range_or_refused_in_one_line(
    key: str, value: Any, kebab: bool
) -> None:
    raw = key.replace("_", "-") if kebab else key
    try:
        settings = settings_from_mapping({raw: value}, "arguments")
    except ConfigError as exc:
        message = str(exc)
        assert "\n" not in message and f"'{key}'" in message
        assert rule_for(key).describe() in message  # names the allowed range
        return
    assert _in_range(key, getattr(settings, key)), (key, value, getattr(settings, key))


@given(key=KEYS, value=VALUES)
@example(key="map_tokens", value=32_769)  # a budget above the ceiling: lowered to it, said
@hyp_settings(max_examples=600, deadline=None)
def test_repository_values_never_raise_and_never_set_a_protective_limit(key: str, value: Any) -> None:
    base = Settings()
    settings, problems = apply_repository_settings({key: value}, "repo/hybridmap.toml", base)
    if problems:
        lowered = key in REPOSITORY_BUDGETS and getattr(settings, key) == base.max_tokens_ceiling
        assert getattr(settings, key) == getattr(base, key) or key not in REPOSITORY_TUNABLE or lowered
        assert len(problems) == 1 and "\n" not in problems[0]
        return
    assert key in REPOSITORY_TUNABLE and not rule_for(key).protective
    assert _in_range(key, getattr(settings, key))


@given(key=st.text(max_size=40), value=VALUES)
@hyp_settings(max_examples=200, deadline=None)
def test_unknown_keys_of_any_shape_are_refused(key: str, value: Any) -> None:
    if key.replace("-", "_") in Settings.__dataclass_fields__:
        return
    with pytest.raises(ConfigError, match="unknown setting"):
        settings_from_mapping({key: value}, "arguments")
    assert apply_repository_settings({key: value}, "r", Settings())[1]


@given(key=KEYS, value=VALUES)
@hyp_settings(max_examples=300, deadline=None)
def test_settings_made_directly_are_checked_too(key: str, value: Any) -> None:
    try:
        made = Settings(**{key: value})
    except ConfigError:
        return
    assert _in_range(key, getattr(made, key))


NUMBERS = st.one_of(st.integers(min_value=-(10**30), max_value=10**30), st.floats(allow_nan=True, allow_infinity=True))


@given(key=KEYS, number=NUMBERS)
@example(key="conversation_budget_long", number=32_769)  # above the ceiling: lowered to it, said
@hyp_settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_repository_file_of_any_number_gives_a_map_setting_in_range(key: str, number: float) -> None:
    literal = repr(number)  # Python's float repr is TOML: inf, -inf, nan, 1e+30
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "hybridmap.toml").write_text(f"{key} = {literal}\n")
        settings, problems = load_settings_noting(root, environ={"XDG_CONFIG_HOME": str(root / "none")})
    assert _in_range(key, getattr(settings, key))
    value, default = getattr(settings, key), getattr(Settings(), key)
    # A problem leaves the default, except a budget above the ceiling: lowered to the ceiling.
    lowered = key in REPOSITORY_BUDGETS and value == Settings().max_tokens_ceiling
    assert not problems or value == default or lowered


def test_every_setting_has_a_rule_and_no_protective_one_is_repository_tunable() -> None:
    assert set(RULES) == set(Settings.__dataclass_fields__)
    assert not {k for k in REPOSITORY_TUNABLE if RULES[k].protective}
    for name in (
        "max_definers_per_ident",
        "pagerank_max_iterations",
        "pagerank_tolerance",
        "parse_timeout_seconds",
        "parse_deadline_seconds",
        "config_file_max_bytes",
    ):
        assert RULES[name].protective and name not in REPOSITORY_TUNABLE
    for name in Settings.__dataclass_fields__:  # every default is within its own range
        assert _in_range(name, getattr(Settings(), name)), name
