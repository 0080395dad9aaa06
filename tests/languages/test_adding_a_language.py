"""``docs/adding-a-language.md`` done as it says, by a user: one TOML and one query in the user's
config directory, no Python, and a language hybridmap has never heard of is mapped.

Fennel (a Lisp on Lua) is a grammar tree-sitter-language-pack ships and no built-in TOML names:
if that ever changes, the test says so rather than passing on the built-in files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hybridmap.languages.registry import BUILTIN_CONFIG_DIR

from ..helpers import repository, run_cli

TOML = """\
[language]
name = "fennel"
grammar = "fennel"
file-types = ["fnl"]
roots = ["fennel.toml"]
"""

QUERY = """\
(fn name: (symbol) @name.definition.function) @definition.function
(list . (symbol) @name.reference.call)
"""

SOURCE = {
    "greeting.fnl": '(fn greet [name]\n  (print (.. "hello " name)))\n',
    "main.fnl": '(greet "world")\n(greet "again")\n',
    "notes.txt": "not a source\n",
}


def test_a_new_language_is_one_toml_and_one_query_in_the_users_config(tmp_path: Path) -> None:
    assert not (BUILTIN_CONFIG_DIR / "fennel.toml").exists(), "fennel became built-in: pick another language"
    config = tmp_path / "config"
    (config / "hybridmap" / "lsp_configs").mkdir(parents=True)
    (config / "hybridmap" / "queries").mkdir(parents=True)
    (config / "hybridmap" / "lsp_configs" / "fennel.toml").write_text(TOML)
    (config / "hybridmap" / "queries" / "fennel-tags.scm").write_text(QUERY)
    root = repository(tmp_path, files=SOURCE)
    args = ("map", str(root), "--mode", "static", "--format", "json", "--no-cache", "--chat", "main.fnl")

    without = run_cli(*args, env={"XDG_CONFIG_HOME": str(tmp_path / "empty")})
    assert without.returncode == 1 and "no files in a supported language" in without.stderr  # not yet

    proc = run_cli(*args, env={"XDG_CONFIG_HOME": str(config), "HOME": os.environ.get("HOME", str(tmp_path))})
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    (greeting,) = [f for f in result["files"] if f["path"] == "greeting.fnl"]
    (greet,) = greeting["symbols"]
    assert (greet["name"], greet["kind"], greet["line"]) == ("greet", "function", 1)
    assert greet["signature"].startswith("(fn greet [name]")
    # main.fnl calls greet: the reference graph links the chat file to its definer.
    assert greeting["dependents"] == 1 and result["edges"]["name-match"] == 1
    assert "greeting.fnl" in result["text"] and "(fn greet [name]" in result["text"]
