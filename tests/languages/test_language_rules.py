"""One rule per concept (issue 26): where two modules once held their own version of a rule and
disagreed, each case below is one the versions answered differently; now one rule answers both."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hybridmap import RepoMap
from hybridmap.errors import ConfigError
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry, load_language
from hybridmap.languages.visibility import is_public
from hybridmap.model import Symbol
from hybridmap.pipeline.policies import HEADER_DEFINITION

from ..helpers import FAULT_SERVER, derived, fixture_repo, tags_of, write_user_config

UPPER_CASE_HEADER = {
    "INC/LEXER.H": "int lex_next(int state);\n",
    "src/lexer.c": '#include "../INC/LEXER.H"\nint lex_next(int state) {\n    return state + 1;\n}\n',
    "src/parser.c": '#include "../INC/LEXER.H"\nint parse(void) {\n    return lex_next(2);\n}\n',
}


def _prototype(registry: LanguageRegistry) -> tuple[tuple[Symbol, ...], str]:
    tags = tags_of(registry, UPPER_CASE_HEADER)["INC/LEXER.H"]
    return tags.symbols, "INC/LEXER.H"


def test_an_upper_case_header_is_a_header_to_visibility_and_to_the_policies(registry: LanguageRegistry) -> None:
    """``.H`` was a header to the ``header`` visibility (it lowercased) but not to the C/C++
    policies (they did not): the prototype was public API, yet its uses never reached the
    definition. Both now follow :func:`hybridmap.languages.paths.is_c_header`."""
    symbols, path = _prototype(registry)
    index = next(i for i, s in enumerate(symbols) if s.name == "lex_next")
    assert is_public("header", symbols, index, path) is True
    pair = ("src/parser.c", "lex_next")
    out = derived(registry, UPPER_CASE_HEADER, {pair: {"INC/LEXER.H": "lsp"}})
    assert out[pair] == {"INC/LEXER.H": "lsp", "src/lexer.c": HEADER_DEFINITION}


def test_every_c_family_file_type_is_a_header_or_a_source(registry: LanguageRegistry) -> None:
    """The suffix lists cannot fall behind the languages' data: a file type added to a C-family
    language's TOML must be classified, or the policies would skip its files."""
    from hybridmap.languages.paths import is_c_family

    family = [registry.get(name) for name in ("c", "cpp", "cuda", "objc") if name in registry.names]
    assert len(family) >= 3
    for language in family:
        for extension in language.extensions:
            assert is_c_family(f"x.{extension}"), (language.name, extension)


def test_a_languages_lsp_language_id_is_data(tmp_path: Path) -> None:
    """``languageId`` was a table in the LSP session (tsx, bash); now it is ``lsp-language-id`` in
    a language's TOML, read by the registry: a user's config names it, and a real server process
    (the fault server, logging what it is sent) is told it when the file is opened."""
    registry = LanguageRegistry.load()
    assert registry.get("tsx").lsp_language_id == "typescriptreact"
    assert registry.get("bash").lsp_language_id == "shellscript"
    assert registry.get("python").lsp_language_id == "python"  # the name, when not given
    root = fixture_repo(tmp_path, "python")
    log = tmp_path / "log"
    user = write_user_config(tmp_path / "user", sys.executable, [str(FAULT_SERVER), "ok", "--log", str(log)])
    config = user / "python.toml"
    config.write_text(config.read_text().replace('name = "python"\n', 'name = "python"\nlsp-language-id = "py3"\n', 1))
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(mode="hybrid", server_wait=4, tokens=256)
    said = {line for line in log.read_text().split() if line.startswith("languageId:")}
    assert said == {"languageId:py3"}


def test_a_bad_lsp_language_id_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "x.toml"
    config.write_text('[language]\nname = "python"\nfile-types = ["py"]\nlsp-language-id = "a\\nb"\n')
    with pytest.raises(ConfigError, match="lsp-language-id"):
        load_language(config, [BUILTIN_QUERY_DIR])


EXPORTED = {
    "src/Tools.kt": "fun helper(): Int = 1\n\nprivate fun hidden(): Int = 2\n",
    "src/Api.java": "public class Api {\n    public void open() {}\n    void packageOnly() {}\n}\n",
    "pkg/__init__.py": "def face():\n    pass\n",
    "pkg/inner.py": "def inner_only():\n    pass\n",
    "include/api.h": "int declared(int x);\nstatic int local_helper(int x) { return x; }\n",
}


def test_dead_code_follows_the_languages_exported_rule(tmp_path: Path) -> None:
    """Dead code had its own table of what is exported, and it disagreed with the language: a
    Kotlin ``fun`` with no modifier is public (Kotlin's default), yet was reported dead; a C
    header's prototype is what other code includes, yet was never exported. It now reads each
    language's ``exported`` convention (its ``visibility`` unless the TOML says otherwise)."""
    root = tmp_path / "repo"
    for rel, text in EXPORTED.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        found = repo.dead_code(mode="static")
    dead = {d.name for d in found.definitions if d.status == "dead"}
    assert {"hidden", "packageOnly", "inner_only", "local_helper"} <= dead
    assert not {"helper", "open", "Api", "face", "declared"} & dead
    assert found.exported >= 5


def test_exported_is_visibility_unless_a_language_says_otherwise() -> None:
    registry = LanguageRegistry.load()
    visibility = registry.visibility_conventions()
    exported = registry.exported_conventions()
    differ = {name: (visibility[name], exported[name]) for name in registry.names if visibility[name] != exported[name]}
    assert differ == {
        "apex": ("modifiers", "public-keyword"),
        "haxe": ("modifiers", "public-keyword"),
        "java": ("modifiers", "public-keyword"),
        "python": ("underscore", "package-face"),
        "swift": ("modifiers", "public-keyword"),
    }
