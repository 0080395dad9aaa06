"""Derivation policies (hybridmap/pipeline/policies.py): derived edges carry their own provenance and
respect linkage and the include relation. Pure tests on tags extracted from real source text,
then real clangd and tsgo / typescript-language-server on tests/fixtures/policies/."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap, ServerState
from hybridmap.infra.patched import Patched
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.model import FileTags, Span, Symbol
from hybridmap.pipeline.merge import Merged
from hybridmap.pipeline.policies import (
    HEADER_DEFINITION,
    OWN_HEADER,
    FactsMemo,
    FileFacts,
    apply_policies,
    file_facts,
    read_facts,
)
from hybridmap.settings import Settings
from hybridmap.sources.lsp.session import find_command
from hybridmap.sources.treesitter import extract_tags

from ..conftest import committed_copy
from ..helpers import TESTS, derived, require, tags_of

FIXTURES = TESTS / "fixtures" / "policies"


LEXER = {
    "lexer.h": '#ifndef LEXER_H\n#define LEXER_H\n#include "token.h"\nint lex_next(int state);\n#endif\n',
    "token.h": "int token_kind(int t);\n",
    "lexer.c": '#include "lexer.h"\nint lex_next(int state) {\n    return state + 1;\n}\n'
    "int lex_all(void) {\n    return lex_next(0) + token_kind(1);\n}\n",
    "token.c": '#include "token.h"\nint token_kind(int t)\n{\n    return t;\n}\n',
    "parser.c": '#include "lexer.h"\nint parse(void) {\n    return lex_next(2) + token_kind(3);\n}\n',
    "other.c": "static int lex_next(int s) {\n    return s;\n}\nint other(void) {\n    return lex_next(1);\n}\n",
}


def test_facts_read_linkage_bodies_and_includes(registry: LanguageRegistry) -> None:
    source = (
        '#include "alpha.h"\n#include <sys/types.h>\n#include "sub/dir.h" // why\n'
        "static int f(void);\nint g(const char *p,\n      int n);\nstatic int counter = 0;\n"
        "int h(int x) { return x; }\nstatic int k(int x)\n{\n    return x;\n}\n"
    )
    facts = read_facts("a.c", extract_tags(registry.compiled("c"), source.encode()))
    assert facts.includes == ("alpha.h", "<sys/types.h>", "sub/dir.h")
    assert {n: [(f.body, f.local) for f in fs] for n, fs in facts.functions.items()} == {
        "f": [(False, True)],
        "g": [(False, False)],
        "h": [(True, False)],  # a one-line body: `{` before the first `;`
        "k": [(True, True)],  # the brace on the next line
    }
    assert facts.local_names == {"f", "k", "counter"}
    cpp = (
        "using std::string;\nnamespace {\nint helper(int x) { return x; }\n}\n"
        "namespace alpha {\nint load(int x);\n}\nint alpha::load(int x) { return helper(x); }\n"
        "class K {\n  public:\n    static int make();\n};\nint K::make() { return 1; }\n"
    )
    facts = read_facts("a.cpp", extract_tags(registry.compiled("cpp"), cpp.encode()))
    assert facts.includes == ()  # `using std::string` is a module reference, not a path
    assert [(f.owner, f.body, f.local) for f in facts.functions["helper"]] == [("", True, True)]
    assert sorted((f.owner, f.body, f.local) for f in facts.functions["load"]) == [
        ("", False, False),
        ("alpha", True, False),
    ]
    # A static member belongs to its class: external linkage.
    assert sorted((f.owner, f.body, f.local) for f in facts.functions["make"]) == [
        ("K", False, False),
        ("K", True, False),
    ]
    assert "make" not in facts.local_names and "helper" in facts.local_names


def test_go_unexported_names_are_package_local() -> None:
    sym = Symbol("load", "function", Span(0, 0, 1, 0), 0, 5, "func load() {")
    exported = Symbol("Load", "function", Span(2, 0, 3, 0), 2, 5, "func Load() {")
    facts = read_facts("disk/disk.go", FileTags((sym, exported)))
    assert facts.local_names == {"load"} and sorted(facts.names) == ["Load", "load"]
    assert read_facts("disk/disk.py", FileTags((sym,))).local_names == frozenset()


def test_header_definition_goes_to_the_including_definer(registry: LanguageRegistry) -> None:
    out = derived(registry, LEXER, {("parser.c", "lex_next"): {"lexer.h": "lsp"}})
    # lexer.c includes lexer.h and defines it; other.c's static lex_next is never a target.
    assert out[("parser.c", "lex_next")] == {"lexer.h": "lsp", "lexer.c": HEADER_DEFINITION}


def test_header_definition_through_an_included_header(registry: LanguageRegistry) -> None:
    # token.h reaches parser.c through lexer.h; token.c includes token.h directly.
    out = derived(registry, LEXER, {("parser.c", "token_kind"): {"token.h": "lsp"}})
    assert out[("parser.c", "token_kind")] == {"token.h": "lsp", "token.c": HEADER_DEFINITION}


def test_a_prototype_can_yield_to_its_definition(registry: LanguageRegistry) -> None:
    """prototype_yields_to_definition: the header gives way to the derived definition, the only
    change being which files the edge reaches (nothing is labelled lsp that the server did not
    say); a header with no definer found keeps its edge."""
    settings = Settings(prototype_yields_to_definition=True)
    out = derived(registry, LEXER, {("parser.c", "lex_next"): {"lexer.h": "lsp"}}, settings)
    assert out[("parser.c", "lex_next")] == {"lexer.c": HEADER_DEFINITION}
    alone = {"api.h": "int external(void);\n", "main.c": '#include "api.h"\nint main(void) { return external(); }\n'}
    out = derived(registry, alone, {("main.c", "external"): {"api.h": "lsp"}}, settings)
    assert out[("main.c", "external")] == {"api.h": "lsp"}


def test_a_source_answer_is_never_overwritten(registry: LanguageRegistry) -> None:
    out = derived(registry, LEXER, {("parser.c", "lex_next"): {"lexer.h": "lsp", "lexer.c": "scip"}})
    assert out[("parser.c", "lex_next")] == {"lexer.h": "lsp", "lexer.c": "scip"}


def test_a_definer_that_does_not_include_the_header(registry: LanguageRegistry) -> None:
    files = {
        "api.h": "int run(void);\n",
        "app.c": '#include "api.h"\nint main(void) {\n    return run();\n}\n',
        "impl_a.c": "int run(void) {\n    return 1;\n}\n",
    }
    pair = ("app.c", "run")
    # The only externally linked definition: the one the program links.
    assert derived(registry, files, {pair: {"api.h": "lsp"}})[pair] == {"api.h": "lsp", "impl_a.c": HEADER_DEFINITION}
    # Two (platform variants, say), neither including the header: which one is the build's choice.
    files["impl_b.c"] = "int run(void) {\n    return 2;\n}\n"
    assert derived(registry, files, {pair: {"api.h": "lsp"}})[pair] == {"api.h": "lsp"}
    # One of them includes the header: that one.
    files["impl_b.c"] = '#include "api.h"\n' + files["impl_b.c"]
    assert derived(registry, files, {pair: {"api.h": "lsp"}})[pair] == {"api.h": "lsp", "impl_b.c": HEADER_DEFINITION}
    # A static definition is never a target, even the only one.
    files = {**files, "impl_a.c": "static int run(void) {\n    return 1;\n}\n"}
    del files["impl_b.c"]
    assert derived(registry, files, {pair: {"api.h": "lsp"}})[pair] == {"api.h": "lsp"}


def test_an_inline_body_in_the_header_is_the_definition(registry: LanguageRegistry) -> None:
    files = {
        "fast.h": "static inline int twice(int x) { return 2 * x; }\n",
        "fast.c": "int twice(int x) {\n    return x + x;\n}\n",
        "app.c": '#include "fast.h"\nint main(void) {\n    return twice(2);\n}\n',
    }
    pair = ("app.c", "twice")
    assert derived(registry, files, {pair: {"fast.h": "lsp"}})[pair] == {"fast.h": "lsp"}


def test_own_header_only_for_included_headers(registry: LanguageRegistry) -> None:
    files = {
        **LEXER,
        # Declares a lex_next too, but lexer.c does not include it.
        "legacy.h": "int lex_next(int state);\n",
    }
    out = derived(registry, files, {("lexer.c", "lex_next"): {"lexer.c": "lsp"}})
    assert out[("lexer.c", "lex_next")] == {"lexer.c": "lsp", "lexer.h": OWN_HEADER}
    # other.c's lex_next is static: a header cannot be its interface.
    out = derived(registry, files, {("other.c", "lex_next"): {"other.c": "lsp"}})
    assert out[("other.c", "lex_next")] == {"other.c": "lsp"}
    # Not for other languages: a Python file's own function and a header declaring the name.
    files = {"store.py": "def load():\n    return load()\n", "native/load.h": "int load(void);\n"}
    out = derived(registry, files, {("store.py", "load"): {"store.py": "lsp"}})
    assert out[("store.py", "load")] == {"store.py": "lsp"}


def test_include_resolution(registry: LanguageRegistry) -> None:
    files = {
        "src/main.c": '#include "util.h"\n#include "net/sock.h"\n#include <proj/api.h>\n'
        '#include "../third/x.h"\n#include "deep.h"\n#include "dup.h"\n',
        "src/util.h": "int util(void);\n",
        "include/net/sock.h": "int sock(void);\n",
        "include/proj/api.h": "int api(void);\n",
        "third/x.h": "int x(void);\n",
        "vendor/lib/deep.h": "int deep(void);\n",
        "a/dup.h": "int dup_a(void);\n",
        "b/dup.h": "int dup_b(void);\n",
    }
    merged = Merged(tags_of(registry, files), {}, {}, ("tree-sitter",))
    from hybridmap.pipeline.policies import _Repo

    repo = _Repo(merged.tags, file_facts(merged.tags))
    assert repo.closure("src/main.c") == {
        "src/util.h",  # beside the including file
        "include/net/sock.h",  # under a common include directory
        "include/proj/api.h",  # a system-style include there too
        "third/x.h",  # a relative path
        "vendor/lib/deep.h",  # the one file with that path suffix
    }  # dup.h: two candidates, neither taken


def test_name_matches_respect_linkage(registry: LanguageRegistry) -> None:
    files = {
        "alpha.h": "int load_records(const char *path);\nstatic inline int clamp(int x) { return x; }\n",
        "alpha.c": '#include "alpha.h"\nint load_records(const char *path) {\n    return clamp(1);\n}\n',
        "beta.c": "static int load_records(const char *path) {\n    return 0;\n}\n"
        "int beta(void) {\n    return load_records(0) + clamp(2);\n}\n",
        "app.c": '#include "alpha.h"\nint main(void) {\n    return load_records(0) + clamp(3);\n}\n',
    }
    on = Settings(name_match_linkage=True)
    out = derived(registry, files, {}, on)
    # Unresolved uses: beta.c's static load_records is no candidate for app.c; alpha.h's static
    # clamp is one for the files including alpha.h only.
    assert out[("app.c", "load_records")] == {"alpha.h": "name-match", "alpha.c": "name-match"}
    assert out[("beta.c", "clamp")] == {}
    assert ("alpha.c", "clamp") not in out and ("app.c", "clamp") not in out  # nothing to remove
    # beta.c's uses mean its own static load_records, which shadows the others.
    assert out[("beta.c", "load_records")] == {"beta.c": "name-match"}
    # A pair a source resolved is left to it.
    out = derived(registry, files, {("app.c", "load_records"): {"alpha.h": "lsp"}}, on)
    assert out[("app.c", "load_records")] == {"alpha.h": "lsp", "alpha.c": HEADER_DEFINITION}
    # Off (the default): name matching as before.
    assert derived(registry, files, {}) == {}


def test_go_name_matches_stay_in_the_package() -> None:
    def go(path: str, defs: list[str], refs: list[str]) -> FileTags:
        symbols = tuple(Symbol(n, "function", Span(i, 0, i, 9), i, 5, f"func {n}() {{") for i, n in enumerate(defs))
        return FileTags(symbols, tuple(refs), bytes(8 * len(refs)), bytes(len(refs)))

    tags = {
        "disk/disk.go": go("disk/disk.go", ["load", "Save"], []),
        "disk/util.go": go("disk/util.go", [], ["load", "Save"]),
        "memory/memory.go": go("memory/memory.go", ["load", "Save"], ["load", "Save"]),
    }
    out = apply_policies(Merged(tags, {}, {}, ("tree-sitter", "lsp")), Settings(name_match_linkage=True)).resolved
    assert out[("disk/util.go", "load")] == {"disk/disk.go": "name-match"}
    assert out[("memory/memory.go", "load")] == {"memory/memory.go": "name-match"}
    assert ("disk/util.go", "Save") not in out  # exported: every definer stays a candidate


def test_nothing_to_do_without_c_or_go(registry: LanguageRegistry) -> None:
    merged = Merged(tags_of(registry, {"a.py": "def f():\n    g()\n", "b.py": "def g():\n    pass\n"}), {}, {}, ("x",))
    assert apply_policies(merged, Settings()) is merged


def test_facts_are_memoized_by_tags_identity(registry: LanguageRegistry) -> None:
    tags = tags_of(registry, LEXER)
    memo = FactsMemo()
    first = file_facts(tags, memo)
    again = file_facts(tags, memo)
    assert all(again[p] is first[p] for p in tags)
    fewer = {p: t for p, t in tags.items() if p != "other.c"}
    file_facts(fewer, memo)
    assert set(memo.facts) == set(fewer)
    assert isinstance(first["lexer.c"], FileFacts)


def test_facts_after_a_patch_are_read_for_the_patched_paths_alone(registry: LanguageRegistry) -> None:
    """Tags patched at some paths (the base source's Patched after an edit): the facts equal
    a fresh read, in the tags' order, and every other file's facts are the objects kept."""
    tags = tags_of(registry, LEXER)
    memo = FactsMemo()
    first = file_facts(tags, memo)
    edited = tags_of(registry, {"lexer.c": LEXER["lexer.c"] + "\nstatic int extra(void) { return 1; }\n"})
    removed = next(p for p in tags if p != "lexer.c")
    patched = Patched(tags, {p: edited.get(p, t) for p, t in tags.items() if p != removed}, ["lexer.c", removed])
    second = file_facts(patched, memo)
    assert memo.changed == sorted(["lexer.c", removed])
    assert list(second) == list(patched)
    assert second == file_facts(patched)
    assert all(second[p] is first[p] for p in patched if p != "lexer.c")
    assert "extra" in second["lexer.c"].names


# --- real servers -------------------------------------------------------------------------


def fixture_repo(tmp_path: Path, name: str) -> Path:
    return committed_copy(FIXTURES / name, tmp_path / name)


#: Only the chat file's symbols are asked and nothing is hovered, so no defining file is opened
#: before the server answers the chat file's use: clangd, which knows definitions only in the
#: files it has open, then answers with the header's prototype (as on jq), deterministically.
QUIET = {"lsp_symbol_files": 0, "lsp_hover_per_map": 0}


def hybrid_edges(root: Path, tmp_path: Path, chat: str) -> tuple[dict[tuple[str, str, str], str], list[str], object]:
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache"), **QUIET}) as repo:
        result = repo.map(mode="hybrid", server_wait=60, tokens=1024, chat_files=[chat])
        graph = repo.graph()
    assert graph is not None
    found = {(u, v, k): d["provenance"] for u, v, k, d in graph.to_networkx().edges(keys=True, data=True)}
    return found, [f.path for f in result.files], result


@pytest.mark.parametrize(
    ("fixture", "ext", "header", "language"), [("c", "c", "alpha.h", "c"), ("cpp", "cpp", "alpha.hpp", "cpp")]
)
def test_static_duplicates_are_never_targets(
    fixture: str, ext: str, header: str, language: str, tmp_path: Path
) -> None:
    """alpha.h declares load_records, alpha.c defines it, beta and gamma each define a file-local
    one (`static`; in C++ one in an anonymous namespace), app includes alpha.h and calls it."""
    require("clangd")
    root = fixture_repo(tmp_path, fixture)
    app, alpha, beta, gamma = (f"{name}.{ext}" for name in ("app", "alpha", "beta", "gamma"))
    found, order, result = hybrid_edges(root, tmp_path, app)
    assert result.servers[language].state is ServerState.READY, result.servers  # type: ignore[attr-defined]
    assert found.get((app, header, "load_records")) == "lsp", found  # what clangd answered
    assert found.get((app, alpha, "load_records")) == HEADER_DEFINITION, found
    for local in (beta, gamma):
        assert not [e for e in found if e[0] == app and e[1] == local], found
        assert not [e for e in found if e[0] == local and e[1] in (header, alpha)], found
    assert max(order.index(header), order.index(alpha)) < min(order.index(beta), order.index(gamma)), order


def test_typescript_non_exported_duplicates_are_never_targets(tmp_path: Path) -> None:
    if find_command("tsgo") is None:
        require("typescript-language-server")
    root = fixture_repo(tmp_path, "typescript")
    found, order, result = hybrid_edges(root, tmp_path, "app.ts")
    assert result.servers["typescript"].state is ServerState.READY, result.servers  # type: ignore[attr-defined]
    assert found.get(("app.ts", "alpha.ts", "loadRecords")) == "lsp", found
    assert not [e for e in found if e[1] in ("beta.ts", "gamma.ts")], found
    assert order.index("alpha.ts") < min(order.index("beta.ts"), order.index("gamma.ts")), order


def test_own_header_with_clangd(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """clangd answers a file's call to its own function with the body in that file; the policy
    adds the header the file includes that declares it, and only that one."""
    require("clangd")
    root = git_repo(
        {
            "lexer.h": "#ifndef LEXER_H\n#define LEXER_H\nint lex_next(int state);\n#endif\n",
            "legacy.h": "int lex_next(int state);\n",
            "lexer.c": '#include "lexer.h"\nint lex_next(int state) {\n    return state + 1;\n}\n'
            "int lex_all(void) {\n    return lex_next(0) + lex_next(1);\n}\n",
        }
    )
    found, _, _ = hybrid_edges(root, tmp_path, "lexer.c")
    assert found.get(("lexer.c", "lexer.h", "lex_next")) == OWN_HEADER, found
    assert ("lexer.c", "legacy.h", "lex_next") not in found, found


# --- Python: names imported from outside the repository ------------------------------------


def test_a_name_imported_from_outside_is_not_matched_to_a_repository_definition(git_repo, tmp_path: Path) -> None:
    """``from typing import Any`` and a repository function named ``Any`` (seen on a 670-file
    repository: that module was in 30 of 30 co-edit maps). A use of the imported name points
    outside; a file importing the repository's own ``Any`` (absolutely or relatively) keeps its edge."""
    from hybridmap import RepoMap

    root = git_repo(
        {
            "pkg/__init__.py": "",
            "pkg/types.py": "def Any(value):\n    return value\n",
            "pkg/uses_typing.py": "from typing import Any\n\ndef f(x: Any) -> Any:\n    return x\n",
            "pkg/uses_ours.py": "from pkg.types import Any\n\ndef g():\n    return Any(1)\n",
            "pkg/relative.py": "from .types import Any\n\ndef h():\n    return Any(2)\n",
            "pkg/aliased.py": (
                "from typing import Any as Anything\nfrom pkg.types import Any\n\ndef k():\n    return Any(3)\n"
            ),
        }
    )
    found: dict[bool, set[tuple[str, str, str]]] = {}
    for rule in (False, True):
        overrides = {"cache_dir": str(tmp_path / "c"), "name_match_imports": rule}
        with RepoMap(root, overrides=overrides) as repo:
            repo.map(mode="static", tokens=512)
            graph = repo.graph()
            assert graph is not None
            found[rule] = {(u, v, k) for u, v, k in graph.to_networkx().edges(keys=True)}
    into = ("pkg/uses_typing.py", "pkg/types.py", "Any")
    assert into in found[False]  # the control: plain name matching links it
    assert into not in found[True]
    for kept in ("pkg/uses_ours.py", "pkg/relative.py", "pkg/aliased.py"):
        assert (kept, "pkg/types.py", "Any") in found[True], kept


def test_python_modules_are_every_suffix_of_a_module_path() -> None:
    from hybridmap.pipeline.python_imports import PythonModules

    modules = PythonModules(["src/pkg/sub/mod.py", "src/pkg/__init__.py", "tools/run.sh", "ns/part/x.pyi"])
    wanted = {"mod", "sub.mod", "pkg.sub.mod", "src.pkg.sub.mod", "pkg", "src.pkg", "pkg.sub", "x", "ns.part.x"}
    assert all(name in modules for name in wanted)
    assert not any(name in modules for name in ("typing", "run", "__init__", "ub.mod", "src.sub", "", "mod."))


def _every_suffix(paths: list[str]) -> set[str]:
    """The rule as a set, built the plain way: each suffix of each module path and of each
    directory above one."""
    out = set()
    for path in paths:
        if path.endswith((".py", ".pyi")):
            parts = path.rsplit(".", 1)[0].split("/")
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            for end in range(len(parts), 0, -1):
                out.update(".".join(parts[start:end]) for start in range(end))
    return out


_part = st.sampled_from(("a", "b", "pkg", "__init__", "mod", "x_y"))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(_part, min_size=1, max_size=4), st.sampled_from((".py", ".pyi", ".sh"))).map(
            lambda t: "/".join(t[0]) + t[1]
        ),
        max_size=8,
    ),
    st.lists(_part, min_size=1, max_size=4).map(".".join),
)
def test_python_modules_answer_as_every_suffix_would(paths: list[str], asked: str) -> None:
    from hybridmap.pipeline.python_imports import PythonModules

    assert (asked in PythonModules(paths)) == (asked in _every_suffix(paths))
