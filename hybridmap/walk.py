"""Find the repository's files and read them safely.

Listing: in a git work tree, ``git ls-files`` (tracked + untracked-but-not-ignored);
otherwise an ignore-aware walk (``.gitignore`` and ``.ignore`` at every level,
matched with pathspec's gitignore semantics). Reading: every file is resolved
and must stay inside the root (symlinks are never followed out), then classified
as ok / binary / too large / minified / undecodable / unreadable / vanished.
Nothing here raises for a bad file: it becomes a :class:`Diagnostic`.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pathspec

from .errors import RootError
from .model import Diagnostic, FileStatus
from .settings import Settings

#: Files listed first in a map when present: they tell a model what the project is.
SPECIAL_FILE_NAMES = frozenset(
    {
        "README", "README.md", "README.rst", "README.txt", "AGENTS.md", "CLAUDE.md",
        "CONTRIBUTING.md", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt",
        "package.json", "tsconfig.json", "go.mod", "Cargo.toml", "Gemfile", "pom.xml",
        "build.gradle", "build.gradle.kts", "CMakeLists.txt", "Makefile", "meson.build",
        "composer.json", "mix.exs", "Dockerfile", "docker-compose.yml", ".gitlab-ci.yml",
        ".travis.yml", "Jenkinsfile", "deno.json", "pubspec.yaml", "Package.swift",
    }
)


def is_special_file(rel: str) -> bool:
    """Root-level READMEs, manifests and agent notes, and CI workflow files."""
    if rel.startswith(".github/workflows/") and rel.endswith((".yml", ".yaml")):
        return True
    return "/" not in rel and rel in SPECIAL_FILE_NAMES


@dataclass(frozen=True, slots=True)
class Listing:
    """Relative POSIX paths under the root, and how they were found."""

    paths: tuple[str, ...]
    source: str  # "git" or "walk"
    diagnostics: tuple[Diagnostic, ...] = ()


@dataclass(frozen=True, slots=True)
class ReadResult:
    status: FileStatus
    data: bytes = b""
    sha256: str = ""
    message: str = ""
    size: int = 0


def resolve_root(root: str | os.PathLike[str]) -> Path:
    path = Path(root).expanduser()
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise RootError(f"root '{root}' does not exist or cannot be resolved") from exc
    if not resolved.is_dir():
        raise RootError(f"root '{root}' is not a directory")
    if not os.access(resolved, os.R_OK | os.X_OK):
        raise RootError(f"root '{root}' is not readable")
    return resolved


def _git_ls_files(root: Path) -> list[str] | None:
    """Paths from git, relative to ``root``; None when root is not in a git work tree."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"],
            capture_output=True, timeout=60, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    seen: set[str] = set()
    out: list[str] = []
    for raw in proc.stdout.split(b"\0"):
        if not raw:
            continue
        rel = os.fsdecode(raw)
        if rel not in seen:  # a conflicted file is listed once per stage
            seen.add(rel)
            out.append(rel)
    return out


def _ignore_spec(directory: Path) -> pathspec.PathSpec | None:
    lines: list[str] = []
    for name in (".gitignore", ".ignore"):
        try:
            lines.extend((directory / name).read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            continue
    if not lines:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _walk(root: Path, settings: Settings) -> tuple[list[str], list[Diagnostic]]:
    out: list[str] = []
    diagnostics: list[Diagnostic] = []
    specs: list[tuple[str, pathspec.PathSpec]] = []  # (dir prefix relative to root, spec)
    excluded = set(settings.walk_exclude_dirs)

    def ignored(rel: str, is_dir: bool) -> bool:
        for prefix, spec in specs:
            if prefix and not rel.startswith(prefix + "/"):
                continue
            sub = rel[len(prefix) + 1 :] if prefix else rel
            if spec.match_file(sub + "/" if is_dir else sub):
                return True
        return False

    def onerror(exc: OSError) -> None:
        path = Path(exc.filename) if exc.filename else root
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            rel = str(path)
        diagnostics.append(Diagnostic(rel, "unreadable", f"cannot list directory: {exc.strerror}"))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        # Specs of directories we have left no longer apply.
        specs[:] = [(p, s) for p, s in specs if not p or rel_dir == p or rel_dir.startswith(p + "/")]
        spec = _ignore_spec(Path(dirpath))
        if spec is not None:
            specs.append((rel_dir, spec))
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d in excluded or ignored(rel, True):
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            rel = f"{rel_dir}/{f}" if rel_dir else f
            if not ignored(rel, False):
                out.append(rel)
                if len(out) >= settings.max_files:
                    diagnostics.append(Diagnostic(".", "too_many_files",
                                                  f"stopped listing at max_files={settings.max_files}"))
                    return out, diagnostics
    return out, diagnostics


def list_files(root: Path, settings: Settings) -> Listing:
    """List candidate files under an already-resolved ``root``."""
    git_paths = _git_ls_files(root)
    # A root that git ignores (e.g. a directory inside an ignored tree) lists nothing: walk it.
    if git_paths:
        diagnostics: list[Diagnostic] = []
        if len(git_paths) > settings.max_files:
            diagnostics.append(Diagnostic(".", "too_many_files",
                                          f"stopped listing at max_files={settings.max_files}"))
            git_paths = git_paths[: settings.max_files]
        return Listing(tuple(git_paths), "git", tuple(diagnostics))
    paths, diagnostics = _walk(root, settings)
    return Listing(tuple(paths), "walk", tuple(diagnostics))


def stat_signature(root: Path, rel: str) -> tuple[int, int, int] | None:
    """(mtime_ns, size, inode) of the file itself, or None if it cannot be stat'ed.

    Used only as an in-memory shortcut between calls of one long-lived map: the
    persistent cache is keyed by content hash.
    """
    try:
        st = os.stat(root / rel, follow_symlinks=True)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _inside(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def read_source(root: Path, rel: str, settings: Settings) -> ReadResult:
    """Read one listed file, refusing anything that resolves outside ``root``."""
    full = root / rel
    try:
        real = full.resolve(strict=True)
    except FileNotFoundError:
        if full.is_symlink():
            return ReadResult(FileStatus.UNREADABLE, message="dangling symlink")
        return ReadResult(FileStatus.VANISHED, message="file disappeared after listing")
    except (OSError, RuntimeError) as exc:  # symlink loop (ELOOP) and friends
        return ReadResult(FileStatus.UNREADABLE, message=f"cannot resolve: {exc}")
    if not _inside(root, real):
        return ReadResult(FileStatus.OUTSIDE_ROOT, message="symlink points outside the root; not read")
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return ReadResult(FileStatus.VANISHED, message="file disappeared after listing")
    except OSError as exc:
        return ReadResult(FileStatus.UNREADABLE, message=f"cannot open: {exc.strerror}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ReadResult(FileStatus.UNREADABLE, message="not a regular file")
        if st.st_size > settings.max_file_bytes:
            return ReadResult(FileStatus.TOO_LARGE, size=st.st_size,
                              message=f"{st.st_size} bytes > max_file_bytes={settings.max_file_bytes}")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(settings.max_file_bytes + 1)
    except OSError as exc:
        return ReadResult(FileStatus.UNREADABLE, message=f"cannot read: {exc.strerror}")
    finally:
        os.close(fd)
    if len(data) > settings.max_file_bytes:  # grew while we read it
        return ReadResult(FileStatus.TOO_LARGE, size=len(data),
                          message=f"more than max_file_bytes={settings.max_file_bytes}")
    return classify(data, settings)


def classify(data: bytes, settings: Settings) -> ReadResult:
    """Decide whether bytes are parseable source; transcode UTF-16 and Latin-1 to UTF-8."""
    message = ""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            data = data.decode("utf-16").encode("utf-8")
            message = "UTF-16 file transcoded to UTF-8"
        except UnicodeDecodeError:
            return ReadResult(FileStatus.UNDECODABLE, size=len(data), message="invalid UTF-16")
    elif data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a BOM is not code; tree-sitter would see it as an error token
    if b"\0" in data[: settings.binary_sniff_bytes]:
        return ReadResult(FileStatus.BINARY, size=len(data), message="binary content (NUL bytes)")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            # Latin-1 decodes any byte string; only accept it when it is mostly text.
            text = data.decode("latin-1")
        except UnicodeDecodeError:  # pragma: no cover - latin-1 never fails
            return ReadResult(FileStatus.UNDECODABLE, size=len(data), message="not valid text")
        printable = sum(1 for ch in text[:4096] if ch.isprintable() or ch in "\r\n\t")
        if printable < 0.95 * min(len(text), 4096):
            return ReadResult(FileStatus.UNDECODABLE, size=len(data), message="not UTF-8 and not text-like")
        data = text.encode("utf-8")
        message = "not UTF-8; decoded as Latin-1"
    if data:
        line_count = data.count(b"\n") + 1
        longest = max(len(line) for line in data.split(b"\n")) if len(data) > settings.minified_avg_line_chars else 0
        if len(data) / line_count > settings.minified_avg_line_chars or longest > settings.minified_max_line_chars:
            return ReadResult(FileStatus.MINIFIED, size=len(data),
                              message=f"looks minified (longest line {longest} chars)")
    return ReadResult(FileStatus.OK, data=data, sha256=hashlib.sha256(data).hexdigest(),
                      message=message, size=len(data))

