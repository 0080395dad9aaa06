"""SCIP as a source: our protobuf wire reader on hand-built and hostile bytes, and real indexes
of the collision fixtures (built by ``hybridmap index`` with the installed scip-python and
scip-typescript) resolving the same right edges the live servers do, with edited files falling
back to the other sources."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.features.compare import Edge, graph_edges
from hybridmap.features.indexer import build_index, find_indexer, find_node, indexer_environment
from hybridmap.settings import Settings
from hybridmap.sources.base import SourceView
from hybridmap.sources.scip.index import ScipIndex
from hybridmap.sources.scip.loaded import checked_path, sidecar_path
from hybridmap.sources.scip.source import ScipSource
from hybridmap.sources.scip.symbols import parse_symbol, reference_name
from hybridmap.sources.scip.wire import WireError, fields, packed_int32, varint
from hybridmap.workspace.walk import read_source

from ..conftest import committed_copy, git
from ..helpers import CASES
from ..helpers import LSP_FIXTURES as FIXTURES

# --- hand-built protobuf -------------------------------------------------------------------


def enc_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(number: int, wire: int) -> bytes:
    return enc_varint(number << 3 | wire)


def length(number: int, payload: bytes) -> bytes:
    return key(number, 2) + enc_varint(len(payload)) + payload


def string(number: int, value: str) -> bytes:
    return length(number, value.encode())


def number(field_number: int, value: int) -> bytes:
    return key(field_number, 0) + enc_varint(value)


def packed(field_number: int, values: list[int]) -> bytes:
    return length(field_number, b"".join(enc_varint(v) for v in values))


def occurrence(rng: list[int], symbol: str, roles: int = 0, enclosing: list[int] | None = None) -> bytes:
    body = packed(1, rng) + string(2, symbol) + number(3, roles)
    return length(2, body + (packed(7, enclosing) if enclosing else b""))


def document(path: str, *occurrences: bytes, symbols: bytes = b"") -> bytes:
    return length(2, string(1, path) + string(4, "python") + b"".join(occurrences) + symbols)


def metadata(root: str = "file:///repo") -> bytes:
    return length(1, string(3, root) + number(4, 1) + length(2, string(1, "hand")))


def test_varints() -> None:
    for value in (0, 1, 127, 128, 300, 2**31, 2**63, 2**64 - 1):
        data = enc_varint(value)
        assert varint(data, 0, len(data)) == (value, len(data))
    with pytest.raises(WireError, match="longer than 10"):
        varint(b"\xff" * 11 + b"\x01", 0, 12)
    with pytest.raises(WireError, match="truncated"):
        varint(b"\x80\x80", 0, 2)
    with pytest.raises(WireError, match="truncated"):
        varint(b"", 0, 0)


def test_fields_nested_skipped_and_refused() -> None:
    inner = string(1, "x") + number(2, 5)
    message = length(3, inner) + key(9, 1) + b"\0" * 8 + key(10, 5) + b"\0" * 4 + number(4, 7)
    got = list(fields(message, 0, len(message)))
    assert [(n, w) for n, w, _, _ in got] == [(3, 2), (4, 0)]  # fixed-width fields skipped
    _, _, a, b = got[0]
    assert [(n, w) for n, w, _, _ in fields(message, a, b)] == [(1, 2), (2, 0)]
    assert got[1][2] == 7
    for bad, reason in (
        (key(1, 2) + enc_varint(50) + b"abc", "run past"),
        (key(1, 3), "wire type 3"),
        (key(1, 4), "wire type 4"),
        (key(1, 7), "wire type 7"),
        (b"\x00\x01", "field number 0"),
        (key(1, 1) + b"\0\0", "truncated fixed"),
        (key(1, 0), "truncated varint"),
    ):
        with pytest.raises(WireError, match=reason):
            list(fields(bad, 0, len(bad)))
    with pytest.raises(WireError, match="outside a buffer"):
        list(fields(b"", 0, 5))


def test_packed_int32_negative_and_capped() -> None:
    data = enc_varint(3) + enc_varint(-1) + enc_varint(9)
    assert packed_int32(data, 0, len(data), 5) == [3, -1, 9]
    assert packed_int32(data, 0, len(data), 2) is None
    with pytest.raises(WireError, match="int32"):
        big = enc_varint(2**40)
        packed_int32(big, 0, len(big), 5)


def test_decode_hand_built_index() -> None:
    info = length(3, string(1, "p m n v pkg/f().") + number(5, 17) + length(7, string(5, "def f() -> int")))
    data = (
        metadata()
        + document(
            "pkg/a.py",
            occurrence([1, 4, 5], "p m n v pkg/f().", 1, [1, 0, 2, 9]),
            occurrence([2, 4, 2, 5], "local 0"),
            occurrence([9], "p m n v broken."),  # a range of one number: skipped, not fatal
            symbols=info,
        )
        # A second Index message concatenated: its documents append, its metadata wins.
        + metadata("file:///other")
        + document("pkg/b.py")
    )
    index = ScipIndex.decode(data)
    assert index.project_root == "file:///other" and index.tool == "hand"
    assert [d.relative_path for d in index.documents] == ["pkg/a.py", "pkg/b.py"]
    first = index.documents[0]
    assert [(o.start_line, o.start_col, o.end_line, o.end_col) for o in first.occurrences] == [
        (1, 4, 1, 5),
        (2, 4, 2, 5),
    ]
    assert first.occurrences[0].enclosing == (1, 0, 2, 9) and first.occurrences[0].roles == 1
    assert first.symbols[0].kind == 17 and first.symbols[0].signature == "def f() -> int"


def test_truncated_and_hostile_indexes_are_refused_quickly() -> None:
    good = metadata() + document("a.py", occurrence([0, 0, 1], "p m n v a."))
    for cut in range(1, len(good)):
        with contextlib.suppress(WireError):
            ScipIndex.decode(good[:cut])
    started = time.perf_counter()
    # A length prefix of 2**62 bytes, a billion-deep claimed nesting, a 10 MB run of field keys.
    for hostile in (key(2, 2) + enc_varint(2**62), key(2, 2) * 1000 + b"\x01", key(15, 0) * 5_000_000 + b"\x80"):
        with pytest.raises(WireError):
            ScipIndex.decode(hostile)
    assert time.perf_counter() - started < 30


PROPERTY_EXAMPLES = int(os.environ.get("HYBRIDMAP_PROPERTY_EXAMPLES", "30"))


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.binary(max_size=4096),
        # Mutations of a valid index reach deeper than random bytes.
        st.tuples(st.integers(0, 200), st.binary(min_size=1, max_size=8)).map(
            lambda cut: (metadata() + document("a.py", occurrence([0, 0, 1], "p m n v a.", 1)))[: cut[0]] + cut[1]
        ),
    )
)
def test_property_arbitrary_bytes_decode_or_raise_our_error(data: bytes) -> None:
    started = time.perf_counter()
    with contextlib.suppress(WireError):
        ScipIndex.decode(data)
    assert time.perf_counter() - started < 5


def test_symbol_names() -> None:
    parsed = parse_symbol("scip-python python fixture 0 `store.disk`/Runner#run().")
    assert parsed is not None and reference_name(parsed) == "run"
    assert parsed.parent == "scip-python python fixture 0 `store.disk`/Runner#"
    module = parse_symbol("scip-python python fixture 0 `store.disk`/__init__:")
    assert module is not None and reference_name(module) == "disk"
    ts_module = parse_symbol("scip-typescript npm . . src/`disk.ts`/")
    assert ts_module is not None and reference_name(ts_module) == "disk"
    escaped = parse_symbol("a  b m n v `we``ird`#")
    assert escaped is not None and escaped.package == "a  b m n v" and escaped.name == "we`ird"
    for bad in ("local 3", "", "a b c", "a b c d `open", "a b c d name", "a b c d x(."):
        assert parse_symbol(bad) is None


def test_checked_paths(tmp_path: Path) -> None:
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.py").write_text("x = 1\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir(exist_ok=True)
    (tmp_path / "link").symlink_to(outside)
    assert checked_path(tmp_path, "ok/a.py") == "ok/a.py"
    for bad in ("../x.py", "/etc/passwd", "ok/../a.py", "ok//a.py", "./a.py", "", "link/a.py", "a\0.py"):
        assert checked_path(tmp_path, bad) is None, bad


# --- real indexes of the collision fixtures ---------------------------------------------------


@dataclass
class Snap:
    """What ScipSource.view reads of a workspace snapshot."""

    root: Path
    languages: dict[str, str] = field(default_factory=dict)
    shas: dict[str, str] = field(default_factory=dict)


def require_indexers() -> None:
    if find_node() is None:
        pytest.skip("node is not installed (the SCIP indexers run on it)")
    for indexer in ("scip-python", "scip-typescript"):
        if find_indexer(indexer) is None:
            pytest.skip(f"{indexer} is not installed (scripts/install-servers installs it into .servers/scip)")


def fixture_copy(tmp_path: Path, name: str) -> Path:
    return committed_copy(FIXTURES / name, tmp_path / name)


def static_view(root: Path, tmp_path: Path) -> tuple[SourceView, Snap]:
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(mode="static")
        tags = dict(repo.tags())
    settings_ = Settings()
    shas = {path: read_source(root, path, settings_).sha256 for path in tags}
    return SourceView("tree-sitter", tags), Snap(root, {}, shas)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """language -> (fixture copy, its index), built once for the module by ``hybridmap index``."""
    require_indexers()
    out: dict[str, tuple[Path, Path]] = {}
    for language in ("python", "typescript"):
        base = tmp_path_factory.mktemp(f"scip-{language}")
        root = fixture_copy(base, CASES[language][0])
        report = build_index(root, base / "index.scip", timeout=300)
        assert report.runs and report.runs[0].documents >= 3, report
        out[language] = (root, report.path)
    return out


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_index_resolves_the_collisions_like_the_servers(
    language: str, indexed: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    _, _, right, wrong = CASES[language]
    root, index = indexed[language]
    base, snap = static_view(root, tmp_path)
    view = ScipSource(root, Settings(), index).view(snap, base)
    for source, target, ident in right:
        assert target in view.resolved.get((source, ident), frozenset()), (source, ident, view.resolved)
    for source, target, ident in wrong:
        assert target not in view.resolved.get((source, ident), frozenset()), (source, ident)
    assert not any(d.kind == "scip_mtime" for d in view.diagnostics)  # the sidecar decides
    # Symbols: confirmations for the merge (never authoritative), UTF-8 columns, the index's detail.
    runner = next(s for s in view.tags[right[1][1]].symbols if s.name == "Runner")
    assert view.tags[right[1][1]].complete is False and runner.kind == "class" and runner.provenance == "scip"
    static_runner = next(s for s in base.tags[right[1][1]].symbols if s.name == "Runner")
    assert (runner.name_line, runner.name_col) == (static_runner.name_line, static_runner.name_col)
    assert "Runner" in runner.detail


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_an_edited_file_falls_back(language: str, indexed: dict[str, tuple[Path, Path]], tmp_path: Path) -> None:
    _, _, right, _ = CASES[language]
    built_root, index = indexed[language]
    root = tmp_path / "repo"
    shutil.copytree(built_root, root)  # the index's paths are relative: a copy is the same repository
    shutil.copy(index, tmp_path / "index.scip")
    shutil.copy(sidecar_path(index), sidecar_path(tmp_path / "index.scip"))
    source_file, memory_file = right[0][0], right[1][1]
    with (root / memory_file).open("a") as fh:
        fh.write("\n// edited\n" if language == "typescript" else "\n# edited\n")
    base, snap = static_view(root, tmp_path)
    view = ScipSource(root, Settings(), tmp_path / "index.scip").view(snap, base)
    assert memory_file not in view.tags and source_file in view.tags
    assert all(pair[0] != memory_file for pair in view.resolved)
    # load is defined in the unchanged disk file: still resolved; Runner and run are defined in the
    # edited file: left to name matching.
    assert view.resolved[(source_file, "load")] == {right[0][1]}
    assert (source_file, "Runner") not in view.resolved and (source_file, "run") not in view.resolved
    assert any(d.kind == "scip_stale" and memory_file in d.message for d in view.diagnostics)


def test_without_a_sidecar_staleness_is_judged_by_mtime(indexed: dict[str, tuple[Path, Path]], tmp_path: Path) -> None:
    built_root, index = indexed["python"]
    root = tmp_path / "repo"
    shutil.copytree(built_root, root)
    shutil.copy(index, tmp_path / "index.scip")  # no sidecar
    later = time.time() + 60
    os.utime(root / "store" / "memory.py", (later, later))  # newer than the index, same content
    base, snap = static_view(root, tmp_path)
    view = ScipSource(root, Settings(), tmp_path / "index.scip").view(snap, base)
    assert any(d.kind == "scip_mtime" for d in view.diagnostics)
    assert "store/memory.py" not in view.tags and "app.py" in view.tags
    assert view.resolved[("app.py", "load")] == {"store/disk.py"}


def test_index_paths_outside_the_root_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    pass\n")
    (tmp_path / "secret.py").write_text("def f():\n    pass\n")
    data = metadata() + b"".join(
        document(path, occurrence([0, 4, 5], "p m n v f().", 1)) for path in ("../secret.py", "/etc/passwd", "a.py")
    )
    (tmp_path / "index.scip").write_bytes(data)
    base, snap = static_view(root, tmp_path)
    view = ScipSource(root, Settings(), tmp_path / "index.scip").view(snap, base)
    assert set(view.tags) == {"a.py"} and [s.name for s in view.tags["a.py"].symbols] == ["f"]
    assert any(d.kind == "scip_path_refused" and "2 document paths" in d.message for d in view.diagnostics)


def test_a_broken_index_is_a_diagnostic(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    (tmp_path / "index.scip").write_bytes(b"\x0a\xff\xff\xff\xff\x0f")
    base, snap = static_view(root, tmp_path)
    source = ScipSource(root, Settings(), tmp_path / "index.scip")
    view = source.view(snap, base)
    assert not view.tags and not view.resolved
    assert [d.kind for d in view.diagnostics] == ["scip_index"] and "not a usable SCIP index" in view.diagnostics[
        0
    ].message
    missing = ScipSource(root, Settings(), tmp_path / "nothing.scip").view(snap, base)
    assert "hybridmap index" in missing.diagnostics[0].message


def test_utf16_columns_become_utf8_bytes(tmp_path: Path) -> None:
    require_indexers()
    root = tmp_path / "repo"
    root.mkdir()
    line = 's = "😀é"; value = 1\n'
    (root / "m.py").write_text(line + "def after():\n    return value\n", "utf-8")
    report = build_index(root, tmp_path / "index.scip", timeout=300)
    base, snap = static_view(root, tmp_path)
    view = ScipSource(root, Settings(), report.path).view(snap, base)
    value = next(s for s in view.tags["m.py"].symbols if s.name == "value")
    assert value.name_col == line.encode().index(b"value")


def test_indexers_run_nothing_the_repository_ships(tmp_path: Path) -> None:
    """Fake python3, pip, git, npm, yarn and node in the repository (and '.' and 'bin' first on
    PATH), a pyrightconfig naming a fake interpreter, a json.py shadowing the standard library:
    none of them runs while both indexers index the repository."""
    require_indexers()
    root = tmp_path / "repo"
    (root / "bin").mkdir(parents=True)
    (root / ".venv" / "bin").mkdir(parents=True)
    marker = tmp_path / "ran"
    script = f'#!/bin/sh\necho "$0" >> {marker}\n'
    for where in (root, root / "bin", root / ".venv" / "bin"):
        for name in ("python3", "python", "pip", "pip3", "git", "npm", "yarn", "pnpm", "node"):
            (where / name).write_text(script)
            (where / name).chmod(0o755)
    (root / "json.py").write_text(f"open({str(marker)!r}, 'a').write('json.py imported\\n')\n")
    (root / "pyrightconfig.json").write_text('{"venvPath": ".", "venv": ".venv", "pythonPath": ".venv/bin/python"}')
    (root / "package.json").write_text(
        '{"name": "x", "scripts": {"preinstall": "sh -c \'touch ' + str(marker) + "'\"}}"
    )
    (root / "app.py").write_text("import json\n\ndef main():\n    return json.dumps(1)\n")
    (root / "app.ts").write_text("export function main(): number {\n  return 1;\n}\n")
    (root / "tsconfig.json").write_text('{"compilerOptions": {"plugins": [{"name": "evil"}]}, "include": ["*.ts"]}')
    git(root, "init", "-q", "-b", "main")
    environ = {**os.environ, "PATH": f".:bin:{os.environ.get('PATH', '')}"}
    report = build_index(root, tmp_path / "index.scip", timeout=300, environ=environ)
    assert {run.indexer for run in report.runs} == {"scip-python", "scip-typescript"}
    assert not marker.exists(), marker.read_text()


def test_indexer_environment_holds_only_node(tmp_path: Path) -> None:
    env = indexer_environment(
        tmp_path, {"PATH": "/usr/bin:.", "AWS_SECRET_ACCESS_KEY": "x", "NODE_PATH": "/x", "HOME": "/h"}
    )
    assert env["PATH"] == str(tmp_path) and "AWS_SECRET_ACCESS_KEY" not in env and "NODE_PATH" not in env
    assert env["HOME"] == "/h" and env["PYTHONSAFEPATH"] == "1" and "GIT_CONFIG_COUNT" in env


def test_scip_index_setting_is_not_repository_tunable(tmp_path: Path) -> None:
    from hybridmap.settings import REPOSITORY_TUNABLE, load_settings_noting

    assert "scip_index" not in REPOSITORY_TUNABLE
    (tmp_path / "hybridmap.toml").write_text('scip_index = "/tmp/planted.scip"\n')
    loaded, problems = load_settings_noting(tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert loaded.scip_index == "" and any("scip_index" in p for p in problems)


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_a_map_with_an_index_resolves_through_scip(
    language: str, indexed: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    """End to end through the pipeline: ``--index`` adds the scip source; with scip alone in
    ``source_precedence`` (no server started) the wrong name matches are gone and the right edges
    carry ``scip``; with scip before lsp, scip decides the pairs it resolved."""
    _, _, right, wrong = CASES[language]
    root, index = indexed[language]
    overrides = {"cache_dir": str(tmp_path / "cache"), "scip_index": str(index), "source_precedence": ["scip"]}
    with RepoMap(root, overrides=overrides, start_servers=False) as repo:
        result = repo.map(mode="hybrid", tokens=1024)
        edges = graph_edges(repo.graph())  # type: ignore[arg-type]
    assert result.servers == {} and result.sources["scip"].resolved_pairs >= len(right)
    for src, dst, ident in right:
        assert edges.get(Edge(src, dst, ident)) == "scip", (src, dst, ident, edges)
    for src, dst, ident in wrong:
        assert Edge(src, dst, ident) not in edges, (src, dst, ident)
    assert result.edges["scip"] >= len(right)
    assert not [d for d in result.diagnostics if d.kind.startswith("scip")], result.diagnostics
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", "map", str(root), "--format", "json", "--index", str(index),
         "--cache-dir", str(tmp_path / "cli-cache"), "--tokens", "1024"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["edges"]["scip"] >= len(right) and "scip" in data["sources"]
