"""Every language is data (a TOML + a query) and is tested on a real fixture project."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry
from hybridmap.model import DEFINITION_KINDS, REFERENCE_KIND_CODES
from hybridmap.pipeline.graph.repo_graph import build_graph
from hybridmap.settings import Settings
from hybridmap.sources.treesitter import extract_tags

from ..helpers import TESTS, run_cli

FIXTURES = TESTS / "fixtures" / "languages"
LANGUAGES = sorted(p.stem for p in BUILTIN_CONFIG_DIR.glob("*.toml"))


def test_at_least_eighty_languages() -> None:
    assert len(LANGUAGES) >= 80, LANGUAGES


# The extensions Aider's repo map gives a tags query (grep-ast's map, for the languages with a
# query in aider/queries/), and the language each maps to here. Not ".mat" (MATLAB's binary data
# files) and ".m" goes to Objective-C, not MATLAB (docs/adding-a-language.md says why).
AIDER_EXTENSIONS = {
    "arduino": ["ino"],
    "bash": ["sh", "bash", "zsh"],
    "c": ["c", "h"],
    "chatito": ["chatito"],
    "clojure": ["clj", "cljs", "cljc", "edn"],
    "commonlisp": ["lisp", "cl"],
    "cpp": ["cpp", "cc", "cxx", "hpp", "hxx", "h++"],
    "csharp": ["cs"],
    "d": ["d"],
    "dart": ["dart"],
    "elisp": ["el"],
    "elixir": ["ex", "exs"],
    "elm": ["elm"],
    "fortran": ["f", "f90", "f95", "f03", "f08"],
    "gleam": ["gleam"],
    "go": ["go"],
    "haskell": ["hs"],
    "hcl": ["hcl", "tf", "tfvars"],
    "java": ["java"],
    "javascript": ["js", "jsx", "mjs"],
    "julia": ["jl"],
    "kotlin": ["kt", "kts"],
    "lua": ["lua"],
    "objc": ["m"],
    "ocaml": ["ml"],
    "ocaml_interface": ["mli"],
    "php": ["php"],
    "pony": ["pony"],
    "properties": ["properties"],
    "python": ["py"],
    "r": ["r", "R"],
    "racket": ["rkt"],
    "ruby": ["rb"],
    "rust": ["rs"],
    "scala": ["scala", "sc"],
    "solidity": ["sol"],
    "swift": ["swift"],
    "typescript": ["ts"],
    "tsx": ["tsx"],
    "udev": ["rules"],
    "zig": ["zig"],
}


def test_every_extension_aider_maps_is_mapped(registry: LanguageRegistry) -> None:
    wrong = {
        (ext, lang, registry.language_for(f"src/x.{ext}"))
        for lang, exts in AIDER_EXTENSIONS.items()
        for ext in exts
        if registry.language_for(f"src/x.{ext}") != lang
    }
    assert not wrong, sorted(wrong, key=str)
    # And the file names Aider maps by name.
    assert registry.language_for("CMakeLists.txt") == "cmake"
    assert registry.language_for("docker/Dockerfile") == "dockerfile"
    assert registry.language_for("Makefile") == "make"


def test_queries_compile_once_per_registry(registry: LanguageRegistry) -> None:
    assert registry.compiled("python") is registry.compiled("python")
    assert LanguageRegistry.load().compiled("python") is not registry.compiled("python")


def test_extensions_do_not_collide() -> None:
    seen: dict[str, str] = {}
    for name in LANGUAGES:
        with (BUILTIN_CONFIG_DIR / f"{name}.toml").open("rb") as fh:
            for ext in tomllib.load(fh)["language"]["file-types"]:
                if isinstance(ext, str):
                    owner = seen.setdefault(ext.lower(), name)
                    assert owner == name, f"{ext} claimed by {owner} and {name}"


def _fixture_root(language: str) -> Path:
    """The fixture project: its own directory, or another fixture named by ``fixture = "..."``."""
    with (FIXTURES / language / "expected.toml").open("rb") as fh:
        other = tomllib.load(fh).get("fixture")
    return (FIXTURES / language / other).resolve() if other else FIXTURES / language


def _fixture_tags(registry: LanguageRegistry, language: str) -> dict[str, object]:
    root = _fixture_root(language)
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and registry.language_for(rel) == language:
            out[rel] = extract_tags(registry.compiled(language), path.read_bytes())
    return out


@pytest.mark.parametrize("language", LANGUAGES)
def test_fixture_definitions_and_references(registry: LanguageRegistry, language: str) -> None:
    fixture = FIXTURES / language
    assert (fixture / "expected.toml").is_file(), f"missing fixture for {language}"
    with (fixture / "expected.toml").open("rb") as fh:
        expected = tomllib.load(fh)
    tags = _fixture_tags(registry, language)
    assert len(tags) >= 2, f"{language}: fixture needs at least two source files"
    defs = {(s.name, s.kind) for t in tags.values() for s in t.symbols}
    refs = {name for t in tags.values() for name in t.ref_names}
    assert len(expected["definitions"]) >= 3 and len(expected["references"]) >= 2
    for item in expected["definitions"]:
        assert (item["name"], item["kind"]) in defs, f"{language}: definition {item} not in {sorted(defs)}"
    for name in expected["references"]:
        assert name in refs, f"{language}: reference {name!r} not found"
    assert {k for _, k in defs} <= DEFINITION_KINDS
    for t in tags.values():
        assert all(code < len(REFERENCE_KIND_CODES) for code in t.ref_kinds)
        for sym in t.symbols:
            assert sym.signature.strip(), f"{language}: empty signature for {sym.name}"
            assert sym.name in sym.signature or sym.kind in {"implementation", "module"}, (language, sym)


@pytest.mark.parametrize("language", LANGUAGES)
def test_fixture_files_link_to_each_other(registry: LanguageRegistry, language: str) -> None:
    tags = _fixture_tags(registry, language)
    graph = build_graph(tags, Settings())
    cross = {(graph.files[s], graph.files[d]) for s, d in zip(graph.edge_src, graph.edge_dst, strict=True) if s != d}
    assert cross, f"{language}: no cross-file edge in the fixture"


def test_query_inheritance(tmp_path: Path) -> None:
    from hybridmap.errors import ConfigError
    from hybridmap.languages.registry import read_query

    (tmp_path / "base-tags.scm").write_text("(identifier) @name.reference.call\n")
    (tmp_path / "child-tags.scm").write_text("; inherits: base\n(call) @x\n")
    assert read_query(tmp_path / "child-tags.scm").startswith("(identifier) @name.reference.call\n")
    (tmp_path / "loop-tags.scm").write_text("; inherits: loop\n")
    with pytest.raises(ConfigError, match="loops"):
        read_query(tmp_path / "loop-tags.scm")
    (tmp_path / "orphan-tags.scm").write_text("; inherits: nowhere\n")
    with pytest.raises(ConfigError, match="does not exist"):
        read_query(tmp_path / "orphan-tags.scm")


def test_where_a_definition_counts_is_said_by_its_ancestors(registry: LanguageRegistry) -> None:
    """#hm-ancestors? (hybridmap/languages/query_predicates.py): module-level definitions, also in a
    module-level if / try / else / except; methods of module-level and nested classes; nothing
    local to a function body. C++: free functions at file, namespace and #ifdef level (templates
    too), not locals."""
    source = (
        b"import sys\n"
        b"def top():\n    def local():\n        pass\n    class Local:\n        def m_local(self): pass\n"
        b"@dec\ndef decorated(): pass\n"
        b"if sys.version_info > (3,):\n    def in_if(): pass\nelif True:\n    def in_elif(): pass\n"
        b"else:\n    class InElse:\n        def m_else(self): pass\n"
        b"try:\n    def in_try(): pass\nexcept ImportError:\n    def in_except(): pass\nfinally:\n    X = 1\n"
        b"class Outer:\n    def method(self):\n        def inner(): pass\n"
        b"    class Nested:\n        @property\n        def nested_method(self): pass\n"
        b"if True:\n    if True:\n        def in_if_in_if(): pass\n"
    )
    kinds = {s.name: s.kind for s in extract_tags(registry.compiled("python"), source).symbols}
    assert kinds == {
        "top": "function",
        "decorated": "function",
        "in_if": "function",
        "in_elif": "function",
        "InElse": "class",
        "m_else": "method",
        "in_try": "function",
        "in_except": "function",
        "Outer": "class",
        "method": "method",
        "Nested": "class",
        "nested_method": "method",
    }
    cpp = (
        b"int free_fn(int x) { struct L { int local_m() { return 1; } }; int local_v = 2; return x; }\n"
        b"namespace ns { int *in_ns(); template <typename T> T& tpl(T& t) { return t; } int ns_var = 3; }\n"
        b"#ifdef X\nstatic int in_ifdef(void) { return 0; }\n#endif\n"
        b"class C { int member() { return 0; } };\n"
    )
    found = {(s.name, s.kind) for s in extract_tags(registry.compiled("cpp"), cpp).symbols}
    assert {("free_fn", "function"), ("in_ns", "function"), ("tpl", "function"), ("ns_var", "variable")} <= found
    assert {("in_ifdef", "function"), ("member", "method")} <= found
    assert "local_v" not in {name for name, _ in found}


def test_a_query_with_an_unknown_predicate_or_a_bad_ancestors_regex_is_refused(tmp_path: Path) -> None:
    """A predicate tree-sitter does not know reaches hybridmap's callback, which would drop every
    match of its pattern: it is refused when the query is compiled, with the file named."""
    from hybridmap.errors import ConfigError

    for query, problem in (
        ('((identifier) @name.reference.call (#strip! @name.reference.call "x"))', "unknown predicate #strip!"),
        ('((identifier) @name.reference.call (#hm-ancestors? @name.reference.call "(module"))', "hm-ancestors"),
        ("((identifier) @name.reference.call (#hm-ancestors? @name.reference.call))", "one capture and one string"),
    ):
        (tmp_path / "python-tags.scm").write_text(query + "\n")
        registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR], [BUILTIN_QUERY_DIR, tmp_path])
        with pytest.raises(ConfigError, match=problem) as caught:
            registry.compiled("python")
        assert "python-tags.scm" in str(caught.value)


def test_signature_stops_at_the_body(registry: LanguageRegistry) -> None:
    source = (
        b"export const handler = async (event: Event): Promise<void> => {\n  await process(event);\n  return;\n};\n"
    )
    tags = extract_tags(registry.compiled("typescript"), source)
    handler = next(s for s in tags.symbols if s.name == "handler")
    assert handler.signature == "export const handler = async (event: Event): Promise<void> => {"
    source = b"class A:\n    def f(self,\n          x: int) -> int:  # trailing\n        return x\n"
    tags = extract_tags(registry.compiled("python"), source)
    f = next(s for s in tags.symbols if s.name == "f")
    assert f.signature == "    def f(self,\n          x: int) -> int:  # trailing"
    assert tags.symbols[f.parent].name == "A"
    # A C macro is its own lines only (preproc_def ends at column 0 of the next line).
    source = b"#define GUARD_H\n#define MAX_DEPTH 7\n#define SQUARE(x) \\\n  ((x) * (x))\nint after;\n"
    tags = extract_tags(registry.compiled("c"), source)
    signatures = {s.name: s.signature for s in tags.symbols}
    assert signatures["GUARD_H"] == "#define GUARD_H"
    assert signatures["MAX_DEPTH"] == "#define MAX_DEPTH 7"
    assert signatures["SQUARE"] == "#define SQUARE(x) \\\n  ((x) * (x))"


def test_embedded_blocks_parse_only_the_code_at_its_own_lines(registry: LanguageRegistry) -> None:
    source = (
        b"<template>\n  <p>function fromTemplate() {}</p>\n</template>\n"
        b'<script lang="ts">\nexport function inScript(x: number) {\n  return helper(x);\n}\n</script>\n'
        b"<style>\nconst fromStyle = 1;\n</style>\n"
        b"<script setup>\nconst second = inScript(2);\n</script>\n"
    )
    tags = extract_tags(registry.compiled("vue"), source)
    lines = {s.name: s.span.start_line for s in tags.symbols}
    assert set(lines) == {"inScript", "second"}, lines
    assert [lines["inScript"], lines["second"]] == [4, 12]  # 0-based, as in the file
    assert {"helper", "inScript"} <= set(tags.ref_names)
    signatures = {s.name: s.signature for s in tags.symbols}
    assert signatures["inScript"] == "export function inScript(x: number) {"
    # Astro: the frontmatter too; a "---" later in the template is not one.
    source = b"---\nconst title = make();\n---\n<h1>{title}</h1>\n---\nfunction notCode() {}\n---\n"
    tags = extract_tags(registry.compiled("astro"), source)
    assert [s.name for s in tags.symbols] == ["title"]


def test_embedded_blocks_are_part_of_the_cache_fingerprint(tmp_path: Path) -> None:
    """A cached parse of a .vue file made with other embedded blocks must not be reused."""
    user = tmp_path / "configs"
    user.mkdir()
    text = (BUILTIN_CONFIG_DIR / "vue.toml").read_text()
    assert "embedded-blocks" in text
    (user / "vue.toml").write_text(
        text.replace('embedded-blocks = ["script"]', 'embedded-blocks = ["script", "frontmatter"]')
    )
    builtin = LanguageRegistry.load([BUILTIN_CONFIG_DIR], [BUILTIN_QUERY_DIR])
    changed = LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])
    assert builtin.fingerprint("vue") != changed.fingerprint("vue")
    assert builtin.fingerprint("python") == changed.fingerprint("python")


def test_a_file_named_like_an_extension_is_decided_by_its_shebang(registry: LanguageRegistry, tmp_path: Path) -> None:
    """``docs/adding-a-language.md``, "File names without an extension": ``bin/elm`` is Elm only by
    a shebang (there is none for Elm), a shell script by ``#!/bin/sh``; a whole name declared as a
    glob (``Makefile``) needs nothing; the first line is read safely, and only for those names."""
    from hybridmap.languages.registry import shebang_interpreter
    from hybridmap.workspace.walk import head_reader

    outside = tmp_path / "outside.sh"
    outside.write_text("#!/bin/sh\n")
    root = tmp_path / "repo"
    (root / "bin").mkdir(parents=True)
    scripts = {
        "bin/elm": '#!/bin/sh\nexec elm "$@"\n',
        "bin/php": "#!/usr/bin/env -S php -d display_errors=1\n<?php\n",
        "bin/go": "#!/usr/bin/env bash\n",
        "bin/lua": "#!/usr/local/bin/lua5.4\n",
        "bin/c": "no shebang\n",
        "bin/d": "#!/usr/bin/env unknown-interpreter\n",
        "bin/Makefile": "all:\n\ttrue\n",
    }
    for rel, text in scripts.items():
        (root / rel).write_text(text)
    (root / "bin" / "sh").symlink_to(outside)  # a link out of the root: never read
    os.mkfifo(root / "bin" / "zsh")  # a FIFO: the read must not block
    head = head_reader(root.resolve())
    found = {rel: registry.language_for(rel, head) for rel in [*scripts, "bin/sh", "bin/zsh"]}
    assert found == {
        "bin/elm": "bash",
        "bin/php": "php",
        "bin/go": "bash",
        "bin/lua": "lua",
        "bin/c": None,
        "bin/d": None,
        "bin/Makefile": "make",
        "bin/sh": None,
        "bin/zsh": None,
    }
    assert registry.language_for("bin/elm") is None  # without a reader: not a source
    assert registry.language_for("src/Main.elm") == "elm" and registry.language_for("x.php") == "php"
    assert shebang_interpreter(b"#!/usr/bin/env python3.11 -u\n") == "python"
    assert shebang_interpreter(b"#! /bin/sh\n") == "sh"
    assert shebang_interpreter(b"#!\n") == shebang_interpreter(b"echo\n") == ""


def test_a_partial_user_config_merges_over_the_built_in_one(tmp_path: Path) -> None:
    """A user's python.toml that only picks a server and adds an argument: Python keeps its file
    types, roots and every other server table (on 93cd2d1 the file replaced the built-in one
    whole, and Python mapped no file without a word)."""
    from hybridmap.sources.lsp.config import servers_for_language

    user = tmp_path / "lsp_configs"
    user.mkdir()
    (user / "python.toml").write_text(
        '[language]\nlanguage-servers = ["pylsp", "ty"]\n\n[language-server.ty]\nargs = ["server", "--verbose"]\n'
    )
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])
    assert registry.language_for("pkg/app.py") == "python"
    language = registry.get("python")
    assert "pyproject.toml" in language.roots
    servers = {s.name: s for s in servers_for_language(language.raw, language.config_path)}
    assert list(servers) == ["pylsp", "ty"]
    assert servers["ty"].command == "ty" and servers["ty"].args == ("server", "--verbose")
    assert servers["pylsp"].command == "pylsp"


def _map_with_user_python_config(tmp_path: Path, toml: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``hybridmap map`` of a one-file Python repository with ``toml`` as the user's
    ``python.toml`` (in their XDG directory); the run and the config's path."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("def handle_request(x):\n    return x\n")
    config = tmp_path / "xdg" / "hybridmap" / "lsp_configs" / "python.toml"
    config.parent.mkdir(parents=True)
    config.write_text(toml)
    proc = run_cli(
        *("map", str(root), "--mode", "static", "--format", "json", "--cache-dir", str(tmp_path / "c")),
        env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")},
    )
    return proc, config


def test_a_partial_user_config_keeps_python_mapped_through_the_cli(tmp_path: Path) -> None:
    """The same through the command a user runs, the config in their XDG directory (on 93cd2d1:
    "no files in a supported language")."""
    proc, _ = _map_with_user_python_config(tmp_path, '[language]\nlanguage-servers = ["pylsp"]\n')
    assert proc.returncode == 0, proc.stderr
    assert "handle_request" in json.loads(proc.stdout)["text"]


def test_a_user_config_that_empties_file_types_is_named(tmp_path: Path) -> None:
    """A user ``python.toml`` whose ``file-types`` is empty (merged over the built-in one) made
    Python map no file, and the map said only "no files in a supported language": the CLI names
    the file and the key."""
    proc, config = _map_with_user_python_config(tmp_path, "[language]\nfile-types = []\n")
    assert proc.returncode != 0
    assert f"{config}: 'file-types' is empty" in proc.stderr, proc.stderr
