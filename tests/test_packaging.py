"""hybridmap as a package: its language data is package data, and the built wheel carries it.

The full proof (the wheel installed into a fresh venv maps a fixture exactly as the editable
install does) is ``scripts/check-wheel``, run by ``.ci/run``; these are the fast checks.
"""

from __future__ import annotations

import importlib.resources
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry, read_query
from hybridmap.sources.lsp import session

PROJECT = Path(__file__).resolve().parents[1]
PACKAGE = importlib.resources.files("hybridmap.languages")


def builtin_languages() -> dict[str, str]:
    """Each built-in config's file name → the query file it names, read through importlib.resources."""
    out = {}
    for entry in (PACKAGE / "lsp_configs").iterdir():
        if entry.name.endswith(".toml"):
            section = tomllib.loads(entry.read_text(encoding="utf-8"))["language"]
            out[entry.name] = section.get("query", f"{section.get('name', entry.name[:-5])}-tags.scm")
    return out


def test_every_language_config_and_query_is_package_data() -> None:
    languages = builtin_languages()
    assert len(languages) >= 54
    for config, query in languages.items():
        assert (PACKAGE / "queries" / query).is_file(), f"{config} names {query}, not in the package"
    # The registry's built-in directories are the package's, not a checkout's top level.
    assert Path(str(PACKAGE / "lsp_configs")).resolve() == BUILTIN_CONFIG_DIR
    assert Path(str(PACKAGE / "queries")).resolve() == BUILTIN_QUERY_DIR
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR], [BUILTIN_QUERY_DIR])
    assert len(registry.names) == len(languages)
    # Inherited queries (tsx → typescript...) resolve inside the package too.
    for name in registry.names:
        assert read_query(registry.get(name).query_path)


def test_no_language_data_left_outside_the_package() -> None:
    # A top-level copy would shadow nothing and ship nowhere: the kind of drift that made every
    # installed hybridmap map nothing.
    assert not (PROJECT / "queries").exists() and not (PROJECT / "lsp_configs").exists()


def test_install_dirs_of_a_checkout_and_of_the_user() -> None:
    assert session.FROM_SOURCE_TREE  # this test runs from the checkout
    dirs = [str(d) for d in session.INSTALL_DIRS]
    assert dirs[0] == str(Path(sys.prefix) / "bin")
    assert str(PROJECT / ".servers" / "bin") in dirs
    assert dirs.index(str(PROJECT / ".venv" / "bin")) < dirs.index(str(session.user_servers_dir() / "bin"))
    assert session.SERVERS_DIR == PROJECT / ".servers"
    assert all(Path(d).is_absolute() for d in dirs)


def test_user_servers_dir_follows_xdg_and_ignores_a_relative_value() -> None:
    home = Path("~").expanduser()
    assert session.user_servers_dir({"XDG_DATA_HOME": "/opt/data"}) == Path("/opt/data/hybridmap/servers")
    # A relative value would become a relative PATH entry, found from the repository a server runs in.
    for value in ("", "rel/data", "."):
        assert session.user_servers_dir({"XDG_DATA_HOME": value}) == home / ".local/share/hybridmap/servers"


@pytest.mark.timeout(120)
def test_the_built_wheel_carries_the_language_data(tmp_path: Path) -> None:
    # The real backend on the real tree, offline (the test extra has build and setuptools >= 77).
    # The sdist first, the wheel from it (build's default): what the sdist misses, the wheel misses;
    # and the wheel is built in a temp dir, never leaving build/ in the checkout.
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path), str(PROJECT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not (PROJECT / "build").exists()
    (wheel,) = tmp_path.glob("hybridmap-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for config, query in builtin_languages().items():
        assert f"hybridmap/languages/lsp_configs/{config}" in names
        assert f"hybridmap/languages/queries/{query}" in names
    json_files = {p.relative_to(PROJECT).as_posix() for p in (PROJECT / "hybridmap").rglob("*.json")}
    assert json_files <= names, json_files - names
    assert "hybridmap/py.typed" in names
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: MIT" in text and "Provides-Extra: mcp" in text
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    # Nothing from outside the package (tests, fixtures, benchmarks) rides along.
    assert all(n.startswith(("hybridmap/", "hybridmap-")) for n in names)


#: An install command naming hybridmap as an index package: it is not on PyPI, so ``pip install
#: 'hybridmap[mcp]'`` fails. A checkout's path (``'/path/to/hybridmap[mcp]'``) is how it installs.
_UNPUBLISHED = re.compile(r"""(?:pip|pipx|uv tool|uv pip) install\s+['"]?hybridmap\b|--with\s+['"]?hybridmap\b""")


def test_no_doc_or_message_names_an_install_that_fails() -> None:
    """hybridmap is installed from a checkout until it is published; docs, examples and error
    messages said ``pip install 'hybridmap[mcp]'`` and ``uv tool install hybridmap``."""
    texts = [PROJECT / "README.md", *(PROJECT / "docs").rglob("*.md"), *(PROJECT / "examples").rglob("*.py")]
    texts += (PROJECT / "hybridmap").rglob("*.py")
    found = [
        f"{path.relative_to(PROJECT)}:{number}: {line.strip()}"
        for path in texts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _UNPUBLISHED.search(line)
    ]
    assert not found, "\n".join(found)
    assert _UNPUBLISHED.search("pip install 'hybridmap[mcp]'") and _UNPUBLISHED.search(
        "uv tool install hybridmap --with ty"
    )
    assert not _UNPUBLISHED.search("pip install '/path/to/hybridmap[mcp]'")
