"""Visibility by language convention: every language whose TOML declares one, on a snippet with
known public and private definitions; and the ``+`` / ``[R:N]`` marks in a real map."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybridmap import RepoMap
from hybridmap.errors import ConfigError
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry, load_language
from hybridmap.languages.visibility import is_public
from hybridmap.sources.treesitter import extract_tags

from ..conftest import write_files

# language -> (file name, source, public names, private names)
CASES: dict[str, tuple[str, str, set[str], set[str]]] = {
    "python": ("m.py", "def shown():\n    pass\n\ndef _hidden():\n    pass\n", {"shown"}, {"_hidden"}),
    "dart": ("m.dart", "int shown() => 1;\nint _hidden() => 2;\n", {"shown"}, {"_hidden"}),
    "gdscript": ("m.gd", "func shown():\n\tpass\n\nfunc _hidden():\n\tpass\n", {"shown"}, {"_hidden"}),
    "go": ("m.go", "package m\n\nfunc Shown() {}\n\nfunc hidden() {}\n", {"Shown"}, {"hidden"}),
    "typescript": ("m.ts", "export function shown() {}\nfunction hidden() {}\n", {"shown"}, {"hidden"}),
    "tsx": ("m.tsx", "export function Shown() { return null; }\nfunction hidden() {}\n", {"Shown"}, {"hidden"}),
    "javascript": ("m.js", "export function shown() {}\nfunction hidden() {}\n", {"shown"}, {"hidden"}),
    "vue": (
        "m.vue",
        '<template><div/></template>\n<script lang="ts">\n'
        "export function shown() {}\nfunction hidden() {}\n</script>\n",
        {"shown"},
        {"hidden"},
    ),
    "svelte": (
        "m.svelte",
        '<script lang="ts">\nexport function shown() {}\nfunction hidden() {}\n</script>\n<p>x</p>\n',
        {"shown"},
        {"hidden"},
    ),
    "astro": (
        "m.astro",
        "---\nexport function shown() {}\nfunction hidden() {}\n---\n<p>x</p>\n",
        {"shown"},
        {"hidden"},
    ),
    "rust": ("m.rs", "pub fn shown() {}\nfn hidden() {}\n", {"shown"}, {"hidden"}),
    "zig": ("m.zig", "pub fn shown() void {}\nfn hidden() void {}\n", {"shown"}, {"hidden"}),
    "v": ("m.v", "module m\n\npub fn shown() {}\n\nfn hidden() {}\n", {"shown"}, {"hidden"}),
    "java": (
        "M.java",
        "public class M {\n    public void shown() {}\n    private void hidden() {}\n}\n",
        {"M", "shown"},
        {"hidden"},
    ),
    "csharp": (
        "M.cs",
        "public class M {\n    public void Shown() {}\n    void Hidden() {}\n}\n",
        {"M", "Shown"},
        {"Hidden"},
    ),
    "kotlin": ("m.kt", "fun shown() {}\nprivate fun hidden() {}\n", {"shown"}, {"hidden"}),
    "swift": ("m.swift", "func shown() {}\nprivate func hidden() {}\n", {"shown"}, {"hidden"}),
    "scala": (
        "m.scala",
        "object M {\n  def shown(): Int = 1\n  private def hidden(): Int = 2\n}\n",
        {"shown"},
        {"hidden"},
    ),
    "php": (
        "m.php",
        "<?php\nclass M {\n    public function shown() {}\n    private function hidden() {}\n}\n",
        {"shown"},
        {"hidden"},
    ),
    "apex": (
        "M.cls",
        "public class M {\n    public void shown() {}\n    private void hidden() {}\n}\n",
        {"shown"},
        {"hidden"},
    ),
    "groovy": (
        "m.groovy",
        "class M {\n    def shown() {}\n    private def hidden() {}\n}\n",
        {"shown"},
        {"hidden"},
    ),
    "haxe": (
        "M.hx",
        "class M {\n    public function shown() {}\n    private function hidden() {}\n}\n",
        {"shown"},
        {"hidden"},
    ),
    "elixir": (
        "m.ex",
        "defmodule M do\n  def shown(x) do\n    x\n  end\n\n  defp hidden(x) do\n    x\n  end\nend\n",
        {"shown"},
        {"hidden"},
    ),
    "c": ("m.h", "int shown(void);\nstatic int hidden(void) { return 0; }\n", {"shown"}, {"hidden"}),
    "cpp": ("m.hpp", "int shown();\nstatic int hidden() { return 0; }\n", {"shown"}, {"hidden"}),
    "cuda": ("m.cuh", "int shown();\nstatic int hidden() { return 0; }\n", {"shown"}, {"hidden"}),
    "objc": ("m.h", "int shown(void) { return 1; }\nstatic int hidden(void) { return 0; }\n", {"shown"}, {"hidden"}),
}


@pytest.fixture(scope="module")
def registry() -> LanguageRegistry:
    return LanguageRegistry.load()


def test_every_declared_convention_has_a_case(registry: LanguageRegistry) -> None:
    declared = {name for name, convention in registry.visibility_conventions().items() if convention}
    assert declared == set(CASES)


@pytest.mark.parametrize("language", sorted(CASES))
def test_public_and_private_by_convention(registry: LanguageRegistry, language: str) -> None:
    filename, source, public, private = CASES[language]
    convention = registry.visibility_conventions()[language]
    tags = extract_tags(registry.compiled(language), source.encode())
    seen = {s.name: is_public(convention, tags.symbols, i, filename) for i, s in enumerate(tags.symbols)}
    for name in public:
        assert seen.get(name) is True, (language, seen)
    for name in private:
        assert seen.get(name) is False, (language, seen)


def test_c_source_files_are_not_public_and_unknown_conventions_are_refused(tmp_path: Path) -> None:
    registry = LanguageRegistry.load()
    tags = extract_tags(registry.compiled("c"), b"int shown(void) { return 1; }\n")
    assert is_public("header", tags.symbols, 0, "src/m.c") is False
    assert is_public(None, tags.symbols, 0, "src/m.h") is None
    config = tmp_path / "odd.toml"
    config.write_text(
        '[language]\nname = "odd"\ngrammar = "python"\nvisibility = "shouting"\nquery = "python-tags.scm"\n'
    )
    with pytest.raises(ConfigError, match="'visibility' must be one of"):
        load_language(config, [BUILTIN_QUERY_DIR])
    assert BUILTIN_CONFIG_DIR.is_dir()


def test_marks_in_a_map_and_its_json(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    files = {"lib.py": "def shared_helper():\n    pass\n\ndef _internal():\n    pass\n"}
    files |= {f"use{i}.py": f"from lib import shared_helper\n\ndef use{i}():\n    shared_helper()\n" for i in range(3)}
    write_files(root, files)
    marks = {"render_public_marks": True, "render_dependents_marks": True}
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c"), **marks}) as repo:
        result = repo.map(mode="static", tokens=2_000)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}) as bare:  # the defaults: off
        plain = bare.map(mode="static", tokens=2_000)
    assert "lib.py: [R:3]\n+def shared_helper():\n" in result.text
    assert "use0.py:\n+def use0():" in result.text  # one dependent at most: no [R:N]
    assert "[R:" not in plain.text and "+def" not in plain.text
    assert {s.name: s.public for f in plain.files for s in f.symbols}["shared_helper"] is True  # JSON has it
    document = json.loads(json.dumps(result.to_json()))
    lib = next(f for f in document["files"] if f["path"] == "lib.py")
    assert (lib["dependents"], lib["dependents_resolved"]) == (3, 0)  # name matches: no server here
    assert {s["name"]: s["public"] for s in lib["symbols"]}["shared_helper"] is True
    assert result.tokens <= result.budget
