"""Random hostile repositories against the CLI and the API (hypothesis): random file names
(control, bidi and invisible characters, bytes that are not UTF-8), random contents (code-like
text, binary, huge lines) and random repository settings (any key, any type, NaN, huge
numbers, broken TOML). Whatever comes, the documented contract holds: exit status in the
documented set, output valid UTF-8 (JSON that parses) without raw control characters, no
traceback, the deadline held, and the files that were mapped are files that exist."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.errors import HybridMapError
from hybridmap.infra.sanitize import unescape_path
from hybridmap.settings import Settings
from tests.conftest import git
from tests.helpers import FORBIDDEN

#: Exit statuses the CLI documents: 0 a map (maybe degraded), 1 no map could be made, 2 usage.
DOCUMENTED_EXITS = {0, 1, 2}
#: Wall-clock limit for one CLI call on a repository of a few small files.
DEADLINE_SECONDS = 60

NAME_PIECES = st.sampled_from(
    [
        b"a",
        b"mod",
        b"x_y",
        b"-",
        b" ",
        b".",
        b"\xc3\xa9",
        b"\xff",
        b"\xfe\xfe",
        b"\x1b]0;t\x07",
        b"\x1b[2J",
        b"\n",
        b"\r",
        b"\t",
        b"\x7f",
        b"\xe2\x80\xae",
        b"\xe2\x80\x8b",
        b"\xf3\xa0\x81\x81",
        b"\\",
        b":",
        b"%",
        b"\xed\xa0\x80",
        b"\xc2\x85",
        b"$(touch x)",
        b"'",
        b'"',
        b"*",
        b"?",
        b"[",
        b"~",
    ]
)
EXTENSIONS = st.sampled_from([b".py", b".js", b".ts", b".c", b".h", b".go", b".rs", b".md", b".toml", b""])
CODE_PIECES = st.sampled_from(
    [
        "def f(x):\n    return g(x)\n",
        "class C:\n    def m(self): pass\n",
        "function h() { return f(); }\n",
        "int main(void) { return 0; }\n",
        "package main\nfunc F() {}\n",
        "fn r() -> u8 { 0 }\n",
        "\x1b]52;c;ZXZpbA==\x07",
        "\u202e",
        "\U000e0041",
        "\x00",
        "\r",
        "\ud800",
        "é",
        "x" * 5000,
        "def " + "a" * 300 + "(): pass\n",
        "(" * 500,
        "\n" * 50,
    ]
)


@st.composite
def file_names(draw: st.DrawFn) -> bytes:
    stem = b"".join(draw(st.lists(NAME_PIECES, min_size=1, max_size=4)))
    name = stem + draw(EXTENSIONS)
    if name in (b".", b"..") or b"/" in name or b"\0" in name or len(name) > 200:
        name = b"fallback.py"
    if draw(st.booleans()):
        name = b"sub" + draw(st.sampled_from([b"", b"\xff", b"\x1b"])) + b"/" + name
    return name


@st.composite
def contents(draw: st.DrawFn) -> bytes:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=2000))
    text = "".join(draw(st.lists(CODE_PIECES, max_size=8)))
    return text.encode("utf-8", "surrogatepass")


SETTING_NAMES = [f.name for f in fields(Settings)] + ["unknown_key", "map-tokens", ""]
SETTING_VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=20),
    st.lists(st.integers(-5, 5), max_size=3),
    st.just({"nested": 1}),
)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string accepts JSON's escapes
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"


@st.composite
def repository_settings(draw: st.DrawFn) -> bytes | None:
    choice = draw(st.integers(0, 4))
    if choice == 0:
        return None
    if choice == 1:
        return draw(st.binary(max_size=200))  # not TOML at all
    items = draw(st.dictionaries(st.sampled_from(SETTING_NAMES), SETTING_VALUES, max_size=6))
    return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in items.items()).encode()


@dataclass(frozen=True)
class Hostile:
    files: dict[bytes, bytes]
    config: bytes | None
    use_git: bool


@st.composite
def hostile_repositories(draw: st.DrawFn) -> Hostile:
    files = draw(st.dictionaries(file_names(), contents(), min_size=1, max_size=6))
    return Hostile(files, draw(repository_settings()), draw(st.booleans()))


def build(directory: Path, hostile: Hostile) -> Path:
    root = Path(tempfile.mkdtemp(dir=directory))
    raw_root = os.fsencode(root)
    for name, data in hostile.files.items():
        path = raw_root + b"/" + name
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.isdir(path):
            continue
        with open(path, "wb") as fh:
            fh.write(data)
    if hostile.config is not None:
        (root / "hybridmap.toml").write_bytes(hostile.config)
    if hostile.use_git:
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "random")
    return root


def check_output(stdout: bytes, stderr: bytes) -> None:
    for stream in (stdout, stderr):
        stream.decode("utf-8")  # strictly valid UTF-8
        assert not FORBIDDEN.search(stream), FORBIDDEN.search(stream)
    assert b"Traceback" not in stderr, stderr.decode()


def check_paths(root: Path, paths: list[str]) -> None:
    for shown in paths:
        assert os.path.lexists(os.fsencode(root) + b"/" + os.fsencode(unescape_path(shown))), shown


@settings(
    max_examples=int(os.environ.get("HYBRIDMAP_PROPERTY_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(hostile=hostile_repositories(), tokens=st.integers(1, 3000), as_json=st.booleans())
def test_cli_keeps_its_contract_on_random_hostile_repositories(
    tmp_path: Path, hostile: Hostile, tokens: int, as_json: bool
) -> None:
    root = build(tmp_path, hostile)
    args = [
        sys.executable,
        "-m",
        "hybridmap",
        "map",
        str(root),
        "--mode",
        "static",
        "--tokens",
        str(tokens),
        "--cache-dir",
        str(tmp_path / "cache"),
        *(["--format", "json"] if as_json else []),
    ]
    proc = subprocess.run(args, capture_output=True, timeout=DEADLINE_SECONDS)
    assert proc.returncode in DOCUMENTED_EXITS, proc.stderr.decode(errors="replace")
    check_output(proc.stdout, proc.stderr)
    if proc.returncode == 0 and as_json:
        data = json.loads(proc.stdout)
        assert data["tokens"] <= data["budget"] == tokens
        check_paths(root, [f["path"] for f in data["files"]])
        assert not FORBIDDEN.search(data["text"].encode("utf-8"))


@settings(
    max_examples=int(os.environ.get("HYBRIDMAP_PROPERTY_EXAMPLES", "30")) * 3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    hostile=hostile_repositories(),
    tokens=st.integers(-5, 3000),
    chat=st.lists(st.sampled_from(["app.py", "../outside.py", "/etc/passwd", "sub", "\x1b.py", ""]), max_size=2),
    mentions=st.lists(st.text(max_size=12), max_size=3),
)
def test_api_keeps_its_contract_on_random_hostile_repositories(
    tmp_path: Path, hostile: Hostile, tokens: int, chat: list[str], mentions: list[str]
) -> None:
    root = build(tmp_path, hostile)
    try:
        with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
            result = repo.map(tokens=tokens, chat_files=chat, mentioned_idents=mentions, mode="static")
    except HybridMapError as exc:  # the documented tree, with a one-line reason
        assert "\n" not in str(exc)
        assert tokens <= 0 or chat, exc  # only a bad request raises; a bad repository never does
        return
    assert result.tokens <= result.budget == tokens
    result.text.encode("utf-8")
    assert not FORBIDDEN.search(result.text.encode("utf-8"))
    check_paths(root, [f["path"] for f in result.to_json()["files"]])  # type: ignore[index]
    json.dumps(result.to_json(), ensure_ascii=False).encode("utf-8")
