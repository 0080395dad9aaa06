"""Whatever a repository holds, a map comes back, says what it left out, and never
reads or shows anything outside the root.

Every case runs on real files, in a real git repository (``git ls-files``) and in
a plain directory (the ignore-aware walk) where the two listings differ. Files
are made at run time: nothing big is committed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hybridmap import RepoMap
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.model import FileStatus, MapResult
from hybridmap.settings import Settings
from hybridmap.workspace.walk import read_source

from ..conftest import git, write_files
from ..helpers import PROJECT, map_with, needs_unprivileged, run_as_unprivileged

LISTINGS = ("git", "walk")
SECRET_NAME = "outside_secret_definition_q7z"


def make_root(tmp_path: Path, listing: str, build: Callable[[Path], None], name: str = "") -> Path:
    """A root built by ``build``: committed to a real git repository, or a plain directory."""
    root = tmp_path / (name or listing)
    root.mkdir()
    build(root)
    if listing == "git":
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "bad files")
    return root


def map_root(
    root: Path,
    registry: LanguageRegistry,
    cache: Path,
    progress: Callable[[str, int, int], None] | None = None,
    **overrides: object,
) -> MapResult:
    """A static map of 8,192 tokens (room for every bad file's entry)."""
    return map_with(root, cache, registry, progress, tokens=8192, **overrides)


def symbols(result: MapResult, path: str) -> dict[str, int]:
    """name -> 1-based line of the symbols the map shows for ``path``."""
    for ranked in result.files:
        if ranked.path == path:
            return {s.name: s.line for s in ranked.symbols}
    return {}


def signatures(result: MapResult, path: str) -> dict[str, str]:
    for ranked in result.files:
        if ranked.path == path:
            return {s.name: s.signature for s in ranked.symbols}
    return {}


def kinds(result: MapResult) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for d in result.diagnostics:
        out.setdefault(d.path, set()).add(d.kind)
    return out


def message(result: MapResult, path: str, kind: str) -> str:
    return next(d.message for d in result.diagnostics if d.path == path and d.kind == kind)


def real_binary() -> bytes:
    """A real executable's bytes (not made-up "binary")."""
    for candidate in (Path("/bin/true"), Path("/usr/bin/env"), Path(sys.executable).resolve()):
        if candidate.is_file():
            return candidate.read_bytes()[:200_000]
    pytest.skip("no executable to borrow bytes from")


# --- the zoo: files that are bad in their content ------------------------------------------


def build_zoo(root: Path) -> None:
    write_files(
        root,
        {
            "good.py": "def good_function():\n    return crlf_function(1, 2)\n",
            "tool.c": real_binary(),
            "bundle.js": "!function(e){var t={};function n(r){return t[r]}n.m=e}(["
            + "function(e,t){e.x=1}," * 20_000
            + "]);",
            "latin1.py": "# -*- coding: latin-1 -*-\ndef caf\u00e9_latin():\n    return '\u00e9t\u00e9'\n".encode(
                "latin-1"
            ),
            # What Windows Notepad writes: UTF-16 LE with a BOM and CRLF line ends.
            "utf16.py": (
                "class Utf16Class:\r\n    def utf16_method(self,\r\n                     arg):\r\n        pass\r\n"
            ).encode("utf-16"),
            "bom.py": b"\xef\xbb\xbfdef bom_function():\n    pass\n\n\nclass BomClass:\n    pass\n",
            "crlf.py": b"def crlf_function(a,\r\n                  b):\r\n    return a\r\n\r\n"
            b"class CrlfClass:\r\n    def crlf_method(self):\r\n        pass\r\n",
            "classic_mac.py": b"def mac_function():\r    pass\r\rdef mac_second():\r    pass\r",
            "nul.py": b"def before_nul():\n    return 1\n\nMARKER = 'a\x00b'\n\ndef after_nul():\n    return 2\n",
            # An unclosed call swallows what follows: the grammar cannot recover for 30 lines.
            "broken.py": "def before_error():\n    return 1\n\nbroken = call(\n"
            + "".join(f"def swallowed_{i}():\n    return {i}\n" for i in range(15))
            + "\n",
        },
    )


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory, registry: LanguageRegistry) -> dict[str, MapResult]:
    base = tmp_path_factory.mktemp("zoo")
    return {
        listing: map_root(make_root(base, listing, build_zoo), registry, base / f"cache-{listing}")
        for listing in LISTINGS
    }


@pytest.mark.parametrize("listing", LISTINGS)
def test_binary_minified_and_broken_files_are_named_and_the_rest_is_mapped(
    zoo: dict[str, MapResult], listing: str
) -> None:
    result = zoo[listing]
    found = kinds(result)
    assert found["tool.c"] == {"binary"}
    assert found["bundle.js"] == {"minified"}
    assert "longest line" in message(result, "bundle.js", "minified")
    assert {"tool.c", "bundle.js"}.isdisjoint(f.path for f in result.files)
    assert symbols(result, "good.py") == {"good_function": 1}
    # A grammar-breaking syntax error: what comes before it is still there, and the map says
    # which lines tree-sitter could not read.
    assert found["broken.py"] == {"syntax_error"}
    assert message(result, "broken.py", "syntax_error").startswith("tree-sitter could not parse lines 4-")
    assert symbols(result, "broken.py")["before_error"] == 1


@pytest.mark.parametrize("listing", LISTINGS)
def test_encodings_and_line_endings_keep_lines_and_signatures_right(zoo: dict[str, MapResult], listing: str) -> None:
    result = zoo[listing]
    found = kinds(result)
    assert found["latin1.py"] == {"transcoded"} and "Latin-1" in message(result, "latin1.py", "transcoded")
    assert symbols(result, "latin1.py") == {"caf\u00e9_latin": 2}
    assert found["utf16.py"] == {"transcoded"} and "UTF-16" in message(result, "utf16.py", "transcoded")
    assert symbols(result, "utf16.py") == {"Utf16Class": 1, "utf16_method": 2}
    assert signatures(result, "utf16.py")["utf16_method"] == "def utf16_method(self,\n                     arg):"
    # A BOM and CRLF lose nothing: no diagnostic, and no stray BOM or CR anywhere.
    assert "bom.py" not in found and "crlf.py" not in found
    assert symbols(result, "bom.py") == {"bom_function": 1, "BomClass": 5}
    assert symbols(result, "crlf.py") == {"crlf_function": 1, "CrlfClass": 5, "crlf_method": 6}
    assert signatures(result, "crlf.py")["crlf_function"] == "def crlf_function(a,\n                  b):"
    out = json.dumps(result.to_json())
    assert "\r" not in result.text and "\\r" not in out and "\ufeff" not in result.text
    # Old Mac line ends (CR only): read as lines, not as one minified line.
    assert found["classic_mac.py"] == {"transcoded"}
    assert symbols(result, "classic_mac.py") == {"mac_function": 1, "mac_second": 4}


@pytest.mark.parametrize("listing", LISTINGS)
def test_nul_bytes_in_a_text_file_do_not_end_it(zoo: dict[str, MapResult], listing: str) -> None:
    result = zoo[listing]
    assert kinds(result)["nul.py"] == {"nul_bytes"}
    assert message(result, "nul.py", "nul_bytes") == "1 NUL byte(s) read as spaces (first on line 4)"
    # Python's scanner takes NUL for the end of input: without the replacement after_nul is lost.
    assert symbols(result, "nul.py") == {"before_nul": 1, "MARKER": 4, "after_nul": 6}


# --- sizes and time -------------------------------------------------------------------------


def test_a_50_mb_source_file_is_skipped_without_being_read(tmp_path: Path) -> None:
    roots = {
        listing: make_root(
            tmp_path, listing, lambda r: write_files(r, {"small.py": "def small_function():\n    pass\n"})
        )
        for listing in LISTINGS
    }
    line = b"def generated_function_%07d(argument):\n    return argument\n"
    for root in roots.values():
        with (root / "huge.py").open("wb") as fh:  # untracked in the git root: git lists it as "other"
            for start in range(0, 900_000, 10_000):
                fh.write(b"".join(line % i for i in range(start, start + 10_000)))
    size = (roots["git"] / "huge.py").stat().st_size
    assert size > 50 * 2**20
    # One fresh process: its peak memory before and after mapping the roots with the big file.
    script = textwrap.dedent(f"""
        import json, resource, time
        from hybridmap import RepoMap
        def peak():
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        with RepoMap({str(tmp_path / "baseline")!r}, overrides={{"use_cache": False}}, start_servers=False) as repo:
            repo.map(tokens=2048, mode="static")
        out = {{"baseline": peak()}}
        for listing, root in { ({k: str(v) for k, v in roots.items()})!r}.items():
            started = time.monotonic()
            with RepoMap(root, overrides={{"use_cache": False}}, start_servers=False) as repo:
                out[listing] = repo.map(tokens=2048, mode="static").to_json()
            out[listing + "_seconds"] = time.monotonic() - started
        out["peak"] = peak()
        print(json.dumps(out))
    """)
    (tmp_path / "baseline").mkdir()
    write_files(tmp_path / "baseline", {"small.py": "def small_function():\n    pass\n"})
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=PROJECT, check=True
    )
    out = json.loads(proc.stdout)
    for listing in LISTINGS:
        result = out[listing]
        assert out[listing + "_seconds"] < 10
        diags = {d["path"]: d for d in result["diagnostics"]}
        assert diags["huge.py"]["kind"] == "too_large"
        assert diags["huge.py"]["message"].startswith(f"{size} bytes > max_file_bytes")  # fstat, no read
        assert "small_function" in result["text"]
    assert out["peak"] - out["baseline"] < 20, out  # the 50 MB never entered memory


def test_a_function_of_100000_lines_is_mapped_in_bounded_time(tmp_path: Path, registry: LanguageRegistry) -> None:
    listing = "git"  # parsing is the same whichever way the file was listed
    # 900 KB (under max_file_bytes) and one call per line: 100,000 references.
    body = "def huge_function(v):\n" + "    f(v)\n" * 100_000 + "    return v\n\n\ndef after_huge():\n    pass\n"
    root = make_root(
        tmp_path, listing, lambda r: write_files(r, {"huge.py": body, "other.py": "def other():\n    pass\n"})
    )
    timeout = Settings().parse_timeout_seconds
    started = time.monotonic()
    result = map_root(root, registry, tmp_path / "cache")
    assert time.monotonic() - started < timeout + 10
    assert "huge.py" not in kinds(result)  # complete: not partial
    assert symbols(result, "huge.py") == {"huge_function": 1, "after_huge": 100_005}
    # With a limit it cannot meet, the file is cut off and the map says so, on time.
    started = time.monotonic()
    limited = map_root(root, registry, tmp_path / "cache-limited", parse_timeout_seconds=0.05)
    assert time.monotonic() - started < 0.05 + 10
    assert kinds(limited)["huge.py"] <= {"parse_timeout", "partial_parse"}
    assert symbols(limited, "other.py") == {"other": 1}


def test_a_pathological_file_costs_its_time_limit_once(tmp_path: Path, registry: LanguageRegistry) -> None:
    # The Python tag query over 400 KB of nested parentheses ran 187 s unbounded (measured).
    root = make_root(
        tmp_path,
        "git",
        lambda r: write_files(r, {"nested.py": "x = " + "(\n" * 200_000, "fine.py": "def fine():\n    pass\n"}),
    )
    started = time.monotonic()
    first = map_root(root, registry, tmp_path / "cache", parse_timeout_seconds=1.0)
    assert time.monotonic() - started < 1.0 + 10
    assert kinds(first)["nested.py"] == {"syntax_error", "partial_parse"}
    assert "parse_timeout_seconds=1" in message(first, "nested.py", "partial_parse")
    assert symbols(first, "fine.py") == {"fine": 1}
    # The outcome is cached by content: the next process does not pay the second again.
    again = map_root(root, registry, tmp_path / "cache", parse_timeout_seconds=1.0)
    assert again.stats["files_parsed"] == 0
    assert kinds(again)["nested.py"] == {"syntax_error", "partial_parse"}


# --- links, depth, and files that cannot be read ---------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the root whose content must never be read."""
    out = tmp_path / "outside_place_x9"
    out.mkdir()
    (out / "secret.py").write_text(f"def {SECRET_NAME}():\n    return 'hunter2'\n")
    (out / "pkg").mkdir()
    (out / "pkg" / "inner.py").write_text(f"class {SECRET_NAME}_class:\n    pass\n")
    os.symlink("loop2", out / "loop1")
    os.symlink("loop1", out / "loop2")
    return out


@pytest.mark.parametrize("listing", LISTINGS)
def test_symlinks_never_lead_out_of_the_root(
    tmp_path: Path, registry: LanguageRegistry, outside: Path, listing: str
) -> None:
    def build(root: Path) -> None:
        write_files(root, {"main.py": f"from secret import {SECRET_NAME}\n\ndef main():\n    {SECRET_NAME}()\n"})
        os.symlink(outside / "secret.py", root / "secret.py")  # a file outside
        os.symlink("secret.py", root / "hop.py")  # inside -> inside -> outside
        os.symlink(outside / "pkg", root / "linked_pkg")  # a directory outside
        os.symlink(outside / "loop1", root / "outside_loop.py")  # a loop outside
        os.symlink("self_loop_b.py", root / "self_loop_a.py")  # a loop inside
        os.symlink("self_loop_a.py", root / "self_loop_b.py")
        os.symlink(".", root / "cycle_dir")  # a directory cycle
        os.symlink("missing.py", root / "dangling.py")

    root = make_root(tmp_path, listing, build)
    result = map_root(root, registry, tmp_path / "cache")
    with RepoMap(
        root, overrides={"cache_dir": str(tmp_path / "cache")}, registry=registry, start_servers=False
    ) as repo:
        as_chat = repo.map(chat_files=["secret.py"], mentioned_idents=[SECRET_NAME], tokens=4096, mode="static")
    found = kinds(result)
    assert found["secret.py"] == {"outside_root"} and found["hop.py"] == {"outside_root"}
    assert found["outside_loop.py"] == {"unreadable"} and found["self_loop_a.py"] == {"unreadable"}
    assert message(result, "outside_loop.py", "unreadable") == "cannot resolve: symlink loop"
    assert found["dangling.py"] == {"unreadable"}
    assert symbols(result, "main.py") == {"main": 3}
    for out in (result, as_chat):
        dumped = json.dumps(out.to_json())
        # Not the content (the unique name is only a reference in main.py, which the map does
        # not show as a definition), not the path, not the place.
        assert f"def {SECRET_NAME}" not in dumped and f"class {SECRET_NAME}" not in dumped
        assert f'"name": "{SECRET_NAME}' not in dumped and "hunter2" not in dumped
        assert str(outside) not in dumped and "outside_place_x9" not in dumped
        assert not any("inner.py" in f.path or f.path.startswith(("linked_pkg", "cycle_dir")) for f in out.files)


def test_a_directory_swapped_for_a_symlink_while_reading_is_caught(tmp_path: Path, outside: Path) -> None:
    """A real second process flips a directory inside the root with a symlink out of it.
    Between resolving a path and opening it the swap can land (measured before the fix:
    175 reads of the outside file in 4 s); the file actually opened is checked."""
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "secret.py").write_text("inside = 1\n")
    flipper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import os, time
        root, outside = {str(root)!r}, {str(outside)!r}
        os.symlink(outside, root + "/pkg_link")
        end = time.monotonic() + 20
        while time.monotonic() < end:
            os.rename(root + "/pkg", root + "/pkg_real")
            os.rename(root + "/pkg_link", root + "/pkg")
            os.rename(root + "/pkg", root + "/pkg_link")
            os.rename(root + "/pkg_real", root + "/pkg")
    """),
        ]
    )
    try:
        settings = Settings()
        caught = reads = 0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and caught < 3:
            result = read_source(root, "pkg/secret.py", settings)
            reads += 1
            assert SECRET_NAME.encode() not in result.data and b"hunter2" not in result.data
            assert str(outside) not in result.message
            if result.status is FileStatus.OUTSIDE_ROOT and "became a symlink" in result.message:
                caught += 1
    finally:
        flipper.kill()
        flipper.wait()
    assert caught >= 1, f"the swap never landed between resolve and open in {reads} reads"


@pytest.mark.parametrize("listing", LISTINGS)
def test_deep_trees_are_listed_without_recursion(tmp_path: Path, registry: LanguageRegistry, listing: str) -> None:
    def chain(root: Path, name: str, depth: int, leaf: str) -> None:
        fd = os.open(root, os.O_RDONLY)
        try:
            for _ in range(depth):  # by descriptor: the full path may exceed PATH_MAX
                os.mkdir(name, dir_fd=fd)
                inner = os.open(name, os.O_RDONLY, dir_fd=fd)
                os.close(fd)
                fd = inner
            leaf_fd = os.open(f"{leaf}.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(leaf_fd, f"def {leaf}():\n    pass\n".encode())
            os.close(leaf_fd)
        finally:
            os.close(fd)

    def build(root: Path) -> None:
        chain(root, "d", 200, "level_200")
        chain(root, "e", 1200, "level_1200")  # os.walk raised RecursionError here
        if listing == "walk":
            chain(root, "n" * 200, 25, "too_long")  # a path of 5000+ characters

    root = make_root(tmp_path, listing, build)
    try:
        result = map_root(root, registry, tmp_path / "cache")
        assert symbols(result, "d/" * 200 + "level_200.py") == {"level_200": 1}
        assert symbols(result, "e/" * 1200 + "level_1200.py") == {"level_1200": 1}
        if listing == "walk":
            too_long = [d for d in result.diagnostics if d.path.startswith("n" * 200)]
            assert [d.kind for d in too_long] == ["unreadable"]
            assert too_long[0].message == "cannot list directory: File name too long"
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=True)  # shutil.rmtree recurses too


@pytest.mark.parametrize("listing", LISTINGS)
def test_files_deleted_rewritten_or_replaced_between_listing_and_reading(
    tmp_path: Path, registry: LanguageRegistry, outside: Path, listing: str
) -> None:
    root = make_root(
        tmp_path,
        listing,
        lambda r: write_files(
            r,
            {
                "keep.py": "def keep():\n    pass\n",
                "deleted.py": "def deleted_soon():\n    pass\n",
                "rewritten.py": "def before_rewrite():\n    pass\n",
                "swapped.py": "def swapped_before():\n    pass\n",
            },
        ),
    )

    def after_listing(phase: str, done: int, total: int) -> None:
        if phase == "listing":  # listed, not yet read: the repository changes under the map
            (root / "deleted.py").unlink()
            (root / "rewritten.py").write_text("def after_rewrite():\n    pass\n")
            (root / "swapped.py").unlink()
            os.symlink(outside / "secret.py", root / "swapped.py")

    result = map_root(root, registry, tmp_path / "cache", progress=after_listing)
    found = kinds(result)
    assert found["deleted.py"] == {"vanished"}
    assert symbols(result, "rewritten.py") == {"after_rewrite": 1}
    assert found["swapped.py"] == {"outside_root"}
    dumped = json.dumps(result.to_json())
    assert SECRET_NAME not in dumped and str(outside) not in dumped
    assert symbols(result, "keep.py") == {"keep": 1}
    again = map_root(root, registry, tmp_path / "cache")
    # Still in git's index, a deleted file is named again; the walk no longer lists it.
    assert ("deleted.py" in kinds(again)) == (listing == "git")


@pytest.mark.parametrize("listing", LISTINGS)
def test_fifo_and_directory_named_like_source_files(tmp_path: Path, registry: LanguageRegistry, listing: str) -> None:
    def build(root: Path) -> None:
        write_files(root, {"ok.py": "def ok():\n    pass\n", "pkg.py/inner.py": "def inner():\n    pass\n"})
        os.mkfifo(root / "pipe.py")

    root = make_root(tmp_path, listing, build)
    result = map_root(root, registry, tmp_path / "cache")  # a FIFO must not block the read
    # git does not track FIFOs; the walk lists it and reading refuses it.
    assert kinds(result).get("pipe.py") == ({"unreadable"} if listing == "walk" else None)
    assert symbols(result, "pkg.py/inner.py") == {"inner": 1} and symbols(result, "ok.py") == {"ok": 1}


# --- permissions: tests run as root here, and root reads everything ---------------------------


@needs_unprivileged
@pytest.mark.parametrize("listing", [*LISTINGS, "git-other-owner"])
def test_unreadable_files_and_directories(public_tmp: Path, listing: str) -> None:
    """chmod 000 means nothing to root, so the map runs as 'nobody' (setpriv): a real
    unprivileged process meeting real permission errors."""

    def build(root: Path) -> None:
        write_files(
            root,
            {
                "readable.py": "def readable_function():\n    pass\n",
                "private.py": "def private_function():\n    pass\n",
                "locked/hidden.py": "def hidden_function():\n    pass\n",
            },
        )

    root = make_root(public_tmp, listing.split("-")[0], build, name=listing)
    for sub in root.rglob("*"):
        sub.chmod(0o755 if sub.is_dir() else 0o644)
    (root / "private.py").chmod(0o000)
    (root / "locked").chmod(0o000)
    # git refuses a repository another user owns unless told it is safe.
    env = (
        {}
        if listing != "git"
        else {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*"}
    )
    proc = run_as_unprivileged(["map", str(root), "--format", "json", "--mode", "static", "--no-cache"], env)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    diags = {(d["path"], d["kind"]): d["message"] for d in result["diagnostics"]}
    assert "readable_function" in result["text"] and "private_function" not in result["text"]
    assert diags[("private.py", "unreadable")] == "cannot open: Permission denied"
    if listing == "git":  # the index still lists the file inside the locked directory
        assert diags[("locked/hidden.py", "unreadable")] == "cannot resolve: Permission denied"
    else:
        assert diags[("locked", "unreadable")] == "cannot list directory: Permission denied"
    if listing == "git-other-owner":
        assert "dubious ownership" in diags[(".", "git_unavailable")]
        assert str(public_tmp) not in diags[(".", "git_unavailable")]
    else:
        assert (".", "git_unavailable") not in diags
