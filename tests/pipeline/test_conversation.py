"""The user's words as free text (hybridmap/pipeline/inputs/conversation.py): what a message names in a real,
parsed repository, in its spelling, and nothing else; bounded on hostile text."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridmap.errors import ConfigError
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.pipeline.inputs.conversation import MessageIndex, MessageMentions, clean_message, style_key
from hybridmap.settings import Settings, load_settings
from hybridmap.sources.treesitter import extract_tags

from ..conftest import write_files

FILES = {
    "src/app/config.py": (
        "MAX_RETRIES = 3\n\n\nclass ConfigError(Exception):\n    pass\n\n\n"
        "def load_config(path):\n    return _read(path)\n\n\ndef _read(path):\n    return open(path).read()\n\n\n"
        "def update(config):\n    return config\n"
    ),
    "src/app/loader.py": (
        "class HTTPServer:\n    def __init__(self, port):\n        self.port = port\n\n"
        "    def render(self):\n        return str(self.port)\n\n\ndef parse_args(argv):\n    return argv\n\n\n"
        "def route_table():\n    return None\n"
    ),
    "web/src/router.ts": (
        "export function createRouter() {\n  return new RouteTable()\n}\n\nexport class RouteTable {}\n"
    ),
    "web/src/index.ts": "export { createRouter } from './router'\n",
    "web/lib/index.ts": "export const version = '1'\n",
    "web/src/table.ts": "export class Table {}\nexport function table() {\n  return new Table()\n}\n",
    "cmd/server/main.go": "package main\n\nfunc StartServer() {}\n\nfunc main() {\n\tStartServer()\n}\n",
    "tests/test_config.py": "from app.config import load_config\n\n\ndef test_load_config():\n    load_config('x')\n",
    "README.md": "# app\n",
}


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], set[str]]:
    """The repository's listed source paths and every name it defines, parsed by tree-sitter."""
    root = tmp_path_factory.mktemp("repo")
    write_files(root, FILES)
    registry = LanguageRegistry.load()
    paths, names = [], set()
    for rel in sorted(FILES):
        language = registry.language_for(rel)
        if language is None:
            continue
        paths.append(rel)
        tags = extract_tags(registry.compiled(language), (root / rel).read_bytes())
        names.update(s.name for s in tags.symbols)
    return paths, names


def index(parsed: tuple[list[str], set[str]], **settings: object) -> MessageIndex:
    return MessageIndex(parsed[0], parsed[1], Settings(**settings))  # type: ignore[arg-type]


def test_the_fixture_is_parsed(parsed: tuple[list[str], set[str]]) -> None:
    paths, names = parsed
    assert "README.md" not in paths and "web/lib/index.ts" in paths
    assert {"load_config", "ConfigError", "HTTPServer", "__init__", "createRouter", "StartServer", "Table"} <= names


def test_identifiers_in_any_style_are_found_in_the_repository_spelling(parsed: tuple[list[str], set[str]]) -> None:
    found = index(parsed)
    for word in ("load_config", "loadConfig", "LoadConfig", "LOAD_CONFIG", "load-config", "Load_Config"):
        assert found.extract(f"The {word} call breaks on empty files") == MessageMentions((), ("load_config",)), word
    assert found.extract("httpServer and HTTP_SERVER, start_server").idents == ("HTTPServer", "StartServer")
    # Every spelling the repository has for the same words, in a stable order.
    assert found.extract("the routeTable").idents == ("RouteTable", "route_table")
    # A word of one part is matched as spelled: prose is full of words a definition has in capitals.
    assert found.extract("TABLE").idents == ()
    assert found.extract("Table and table").idents == ("Table", "table")
    # Exactly: only the spelling as defined.
    exact = index(parsed, message_style_insensitive=False)
    assert exact.extract("load_config loadConfig LoadConfig").idents == ("load_config", "loadConfig", "LoadConfig")
    assert exact.extract("loadConfig").idents == ("loadConfig",)  # passed as an unmatched camelCase word
    exact = index(parsed, message_style_insensitive=False, message_unmatched_words=False)
    assert exact.extract("load_config loadConfig LoadConfig").idents == ("load_config",)


def test_a_misspelt_compound_name_finds_the_definition_one_edit_away(parsed: tuple[list[str], set[str]]) -> None:
    """A typo (a letter swapped, missing, extra or wrong) in a long compound word still names the
    definition, in the repository's spelling; before message_typo_min_chars nothing was found."""
    found = index(parsed, message_unmatched_words=False)
    for typo in ("laod_config", "load_confg", "load_configg", "LoadConfgi", "LOAD_CONFIX", "createRoutre"):
        expected = "createRouter" if typo.startswith("create") else "load_config"
        assert found.extract(f"why does {typo} fail?").idents == (expected,), typo
    assert found.respelled(["loadConfgi"]) == ["loadConfgi", "load_config"]
    assert found.extract("parse_arg and routTable").idents == ("parse_args", "RouteTable", "route_table")
    # Two edits, fewer than 8 letters, a word of one part, or the setting off: nothing.
    assert found.extract("loda_confg LodaConfgi").idents == ()
    assert found.extract("prase_ags tsrt_servre").idents == ()  # 8 letters, but two edits away
    assert found.extract("Confgi Routetabel").idents == ()
    short = MessageIndex(["a.py"], ["get_user", "set_users"], Settings(message_unmatched_words=False))
    assert short.extract("get_usr setuser").idents == ()  # 6 and 7 letters
    off = index(parsed, message_unmatched_words=False, message_typo_min_chars=0)
    assert off.extract("laod_config").idents == ()


def test_underscores_around_a_name_are_part_of_it(parsed: tuple[list[str], set[str]]) -> None:
    found = index(parsed, message_unmatched_words=False)
    assert found.extract("init and read").idents == ()  # not __init__ nor _read
    assert found.extract("__init__ calls _read").idents == ("__init__", "_read")
    assert style_key("__init__") == "__init__" and style_key("_Load_Config_") == "_loadconfig_"
    assert style_key("LOAD-CONFIG") == style_key("loadConfig") == "loadconfig"


def test_paths_file_names_module_names_and_stems(parsed: tuple[list[str], set[str]]) -> None:
    found = index(parsed)
    config = ("src/app/config.py",)
    for text in (
        "see src/app/config.py",
        "see ./src/app/config.py.",
        "in (app/config.py),",
        "config.py: wrong default",
        "`config.py`",
        "src\\app\\config.py",
        "app.config reads it",
    ):
        assert found.extract(text).files == config, text
    # A file name that several files have names them all; a trailing part tells them apart.
    assert found.extract("index.ts").files == ("web/lib/index.ts", "web/src/index.ts")
    assert found.extract("index.ts").by_stem == frozenset()
    assert found.extract("src/index.ts").files == ("web/src/index.ts",)
    # A word that is one file's stem names it (in any style); a stem two files share names none.
    assert found.extract("the loader").files == ("src/app/loader.py",)
    assert found.extract("Router").files == ("web/src/router.ts",)
    assert found.extract("the index").files == ()
    # A file named by its stem is said so, unless the message also names it by path or name.
    assert found.extract("the loader").by_stem == frozenset({"src/app/loader.py"})
    assert found.extract("the loader in loader.py").by_stem == frozenset()
    # A directory's name is passed as an identifier in its spelling: the ranker lifts its files.
    assert found.extract("the WEB router") == MessageMentions(
        ("web/src/router.ts",), ("web",), by_stem=frozenset({"web/src/router.ts"})
    )
    assert found.extract("in cmd").idents == ("cmd",)
    # A path that is not listed names nothing, and is not cut into words either when its parts
    # name nothing; a file is not also an identifier.
    assert found.extract("docs/guide.md") == MessageMentions((), ())
    assert found.extract("table.ts").idents == ()


def test_dotted_names_give_their_parts(parsed: tuple[list[str], set[str]]) -> None:
    found = index(parsed, message_unmatched_words=False)
    assert found.extract("ConfigError.args is empty").idents == ("ConfigError",)
    # "router" is also the stem of router.ts; a qualified name's parts are words of their own.
    assert found.extract("HTTPServer::render and router.createRouter()") == MessageMentions(
        ("web/src/router.ts",), ("HTTPServer", "render", "createRouter"), by_stem=frozenset({"web/src/router.ts"})
    )


def test_stop_words_commit_ids_urls_addresses_and_trailers_are_dropped(parsed: tuple[list[str], set[str]]) -> None:
    found = index(parsed)
    # "update" is a stop word even though the repository defines update().
    assert found.extract("Update the docs; fix a bug in this code") == MessageMentions((), ())
    text = (
        "Revert 0123abcd and 4f5e6d7c8b9a (https://example.invalid/load_config, www.parse_args.invalid)\n"
        "asked by someone@loader.py.invalid\n\nSigned-off-by: Parse Args <parse_args@example.invalid>\n"
        "Co-authored-by: load_config <x@y.invalid>\nFixes: #12 createRouter\n"
    )
    assert found.extract(text) == MessageMentions((), ())
    assert clean_message("a\nSigned-off-by: b <c@d.e>\nsee www.x.y or z@w.io now").split() == ["a", "see", "or", "now"]


def test_backticks_and_unmatched_words(parsed: tuple[list[str], set[str]]) -> None:
    found = index(parsed)
    text = "call fetchRemoteData with MAX_SIZE, then `frobnicate` and Somewhere else; parse_args too"
    assert found.extract(text).idents == ("fetchRemoteData", "MAX_SIZE", "frobnicate", "parse_args")
    strict = index(parsed, message_unmatched_words=False)
    assert strict.extract(text).idents == ("parse_args",)
    # A backticked stop word is still a stop word; a backticked dotted name gives its parts.
    assert found.extract("`the` and `HTTPServer.portNumber`").idents == ("HTTPServer", "portNumber")


def test_plain_words(parsed: tuple[list[str], set[str]]) -> None:
    text = "the port does not render"
    assert index(parsed).extract(text).idents == ("render",)
    assert index(parsed, message_plain_words=False).extract(text).idents == ()
    # Backticked, a lowercase word is code: it counts either way.
    assert index(parsed, message_plain_words=False).extract("`render`").idents == ("render",)
    # A stem still names its file.
    assert index(parsed, message_plain_words=False).extract("loader").files == ("src/app/loader.py",)


def test_from_tags_indexes_a_parsed_repository(tmp_path: Path, registry: LanguageRegistry) -> None:
    write_files(tmp_path, {"pkg/store.py": "class Store:\n    def save_item(self):\n        pass\n"})
    tags = {"pkg/store.py": extract_tags(registry.compiled("python"), (tmp_path / "pkg/store.py").read_bytes())}
    found = MessageIndex.from_tags(tags, Settings())
    assert found.extract("Store.saveItem fails") == MessageMentions(
        ("pkg/store.py",), ("Store", "save_item"), by_stem=frozenset({"pkg/store.py"})
    )


# --- hostile text ------------------------------------------------------------------------------


def test_only_the_first_message_max_chars_are_read(parsed: tuple[list[str], set[str]]) -> None:
    text = "x " * 600_000 + "parse_args"  # 1.2 MB
    assert index(parsed).extract(text).idents == ()  # past the default 100,000
    assert index(parsed, message_max_chars=2_000_000).extract(text).idents == ("parse_args",)
    assert index(parsed, message_max_chars=0).extract("parse_args") == MessageMentions((), ())
    huge = "loadConfig " * 100_000
    assert index(parsed).extract(huge).idents == ("load_config",)


def test_control_characters_and_escapes_separate_words(parsed: tuple[list[str], set[str]]) -> None:
    found = index(parsed, message_unmatched_words=False)
    text = "load_config\x00parse_args\x1b[31mHTTPServer\x1b[0m\u202econfig.py\r\n\x85render\x7f"
    assert found.extract(text) == MessageMentions(
        ("src/app/config.py",), ("load_config", "parse_args", "HTTPServer", "render")
    )
    # What comes back is the repository's spelling, or word characters only.
    loose = index(parsed).extract("évaluer\u200bthe\x00weird_Name\u2028`x\x1by`")
    assert all(word.isidentifier() for word in loose.idents)


@pytest.mark.parametrize(
    "unit",
    ["a@", "a.", "`", "-", "/", "a/", "_", ":", "a-", "a_", "./", "@a.", "a@b", ".a", "Aa", "x" * 64 + "@", "\\"],
)
def test_pathological_text_is_read_in_linear_time(parsed: tuple[list[str], set[str]], unit: str) -> None:
    """A megabyte of one repeated pattern, with no space: each of the old regular expressions
    (``\\S+@\\S+\\.\\w+``, ``[\\w./-]*[\\w-]\\.[A-Za-z0-9]+\\b``) took quadratic time on some of these.
    Nothing here is timed: a quadratic step would not finish."""
    found = index(parsed, message_max_chars=2_000_000)
    text = unit * (1_000_000 // len(unit)) + " load_config"
    assert found.extract(text).idents[-1:] == ("load_config",)


def test_a_partial_path_that_hundreds_of_files_end_with_names_none(tmp_path: Path) -> None:
    paths = [f"packages/p{k}/src/index.ts" for k in range(300)] + ["packages/p1/src/util.ts"]
    found = MessageIndex(paths, (), Settings())
    assert found.extract("src/index.ts").files == ()  # 300 candidates: too ambiguous to scan
    assert found.extract("p7/src/index.ts").files == ()  # the same two last parts: not scanned
    assert found.extract("packages/p7/src/index.ts").files == ("packages/p7/src/index.ts",)  # listed as such
    assert found.extract("p1/src/util.ts").files == ("packages/p1/src/util.ts",)
    assert len(found.extract("index.ts").files) == 300  # a file name names every file of that name


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="message_max_chars"):
        load_settings(None, {"message_max_chars": -1})
    with pytest.raises(ConfigError, match="message_style_insensitive"):
        load_settings(None, {"message_style_insensitive": "yes"})
