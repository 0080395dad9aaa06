"""Settings: documented, layered, and a repository cannot raise what protects the user."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hybridmap.errors import ConfigError
from hybridmap.settings import Settings, load_settings, load_settings_noting

ROOT = Path(__file__).resolve().parent.parent


def test_every_setting_is_documented() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_settings_doc.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    doc = (ROOT / "docs" / "configuration.md").read_text()
    for name in Settings.__dataclass_fields__:
        assert f"`{name}`" in doc
    assert (
        "| `well_named_min_length` | `8` | an integer from 0 to 1_000; a repository may set it | Minimum length" in doc
    )
    assert "| `max_definers_per_ident` | `64` | an integer from 1 to 4_096; **protective**" in doc


def test_load_order_user_then_repo_then_arguments(tmp_path: Path) -> None:
    config = tmp_path / "config" / "hybridmap"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("map-tokens = 2000\ntest_path_weight = 0.2\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hybridmap.toml").write_text("map_tokens = 3000\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    settings = load_settings(repo, environ=env)
    assert settings.map_tokens == 3000 and settings.test_path_weight == 0.2
    assert load_settings(repo, {"map_tokens": 10}, environ=env).map_tokens == 10


def test_repository_cannot_set_protective_limits(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "none")}
    (tmp_path / "hybridmap.toml").write_text("max_file_bytes = 999999999\nmap_tokens = 3000\n")
    settings, problems = load_settings_noting(tmp_path, environ=env)
    assert settings.max_file_bytes == Settings().max_file_bytes  # left out...
    assert settings.map_tokens == 3000  # ...while the rest of the file applies
    assert len(problems) == 1 and "'max_file_bytes' cannot be set by a repository" in problems[0]
    (tmp_path / "hybridmap.toml").write_text("cache_dir = '/tmp/elsewhere'\n")
    settings, problems = load_settings_noting(tmp_path, environ=env)
    assert settings.cache_dir is None and "cannot be set by a repository" in problems[0]


def test_pyproject_section_and_bad_values(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.hybridmap]\nentry-point-weight = 3\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "none")}
    assert load_settings(tmp_path, environ=env).entry_point_weight == 3.0
    (tmp_path / "hybridmap.toml").write_text("map_tokens = 'lots'\n")
    assert (
        "'map_tokens' must be an integer from 1 to 1_000_000, got 'lots'"
        in load_settings_noting(tmp_path, environ=env)[1][0]
    )
    (tmp_path / "hybridmap.toml").write_text("no_such_knob = 1\n")
    assert "unknown setting" in load_settings_noting(tmp_path, environ=env)[1][0]
    (tmp_path / "hybridmap.toml").write_text("map_tokens = [\n")
    settings, problems = load_settings_noting(tmp_path, environ=env)
    assert "invalid TOML" in problems[0] and settings == Settings()


def test_user_config_problems_still_raise(tmp_path: Path) -> None:
    config = tmp_path / "config" / "hybridmap"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("no_such_knob = 1\n")
    with pytest.raises(ConfigError, match="unknown setting"):
        load_settings(None, environ={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    with pytest.raises(ConfigError, match="must be an integer from 1 to 1_000_000"):
        load_settings(None, {"map_tokens": "lots"}, environ={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    (config / "config.toml").write_text("pagerank_tolerance = nan\n")
    with pytest.raises(ConfigError, match=r"'pagerank_tolerance' must be a finite number from 0 to 1, got nan"):
        load_settings(None, environ={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    with pytest.raises(ConfigError, match="'max_definers_per_ident' must be an integer from 1 to 4_096"):
        load_settings(None, {"max_definers_per_ident": 10**9}, environ={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    with pytest.raises(ConfigError, match="'map_tokens' must be"):
        Settings(map_tokens=0)  # the API's own Settings(...) goes through the same validator


def test_a_bad_argument_fails_before_the_repository_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "hybridmap.toml").write_text("map_tokens = 3000\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "none")}
    with pytest.raises(ConfigError, match="arguments: 'parse_deadline_seconds'"):
        load_settings_noting(tmp_path, {"parse_deadline_seconds": -1}, environ=env)
    settings, problems = load_settings_noting(tmp_path, {"parse_deadline_seconds": 0}, environ=env)
    assert settings.map_tokens == 3000 and settings.parse_deadline_seconds == 0 and not problems


def test_user_config_may_be_a_link_but_a_repository_file_may_not(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "hybridmap.toml"
    real.parent.mkdir()
    real.write_text("map_tokens = 2000\n")
    config = tmp_path / "config" / "hybridmap"
    config.mkdir(parents=True)
    (config / "config.toml").symlink_to(real)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hybridmap.toml").symlink_to(real)
    settings, problems = load_settings_noting(repo, environ={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert settings.map_tokens == 2000  # the user's own, through their link
    assert len(problems) == 1 and "is a symbolic link; not read" in problems[0]


def test_public_api_is_exactly_all() -> None:
    import hybridmap

    for name in hybridmap.__all__:
        assert getattr(hybridmap, name) is not None
    assert sorted(hybridmap.__all__) == sorted(hybridmap._EXPORTS)


def test_parse_worker_imports_stay_light() -> None:
    code = (
        "import sys, hybridmap.sources.parse_worker; "
        "print(sorted(m for m in ('pygls', 'scipy', 'networkx', 'lsprotocol') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
