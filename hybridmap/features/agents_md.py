"""The AGENTS.md hierarchy: the notes a repository leaves for coding agents, from the root down to
a working directory (Codex's rule).

In each directory from the root to ``cwd``, the first of ``AGENTS.override.md`` and ``AGENTS.md``
that exists is taken (an override replaces that directory's ``AGENTS.md``); the files are joined
root first, so the notes nearest the working directory come last and read as the most specific,
under a byte budget (``agents_md_max_bytes``): a file that does not fit is cut at a line
boundary and the rest left out, said in the result.

Their content is **untrusted text**: hybridmap never acts on it (it is not configuration, and no
word of it changes what hybridmap does), it is read only through :func:`.walk.read_source` (never
outside the root, size-checked, binary refused), a file or directory that is a symbolic link is
refused outright (a repository could point its notes at anything), and every line is made safe
(:func:`.sanitize.safe_block`: control, bidi and invisible characters shown as escapes) before it
is handed out. Only the agent reading the result decides what to make of it.

The map itself names only the root ``AGENTS.md`` among its project files (``walk.SPECIAL_FILE_NAMES``):
a nested one concerns its directory, and :func:`agent_notes` serves the chain for the directory
an agent works in instead of spending the map's budget on every directory's notes.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from typing_extensions import TypedDict  # what pydantic reads MCP output schemas from (Python < 3.12)

from ..infra.sanitize import escape_path, safe_block, safe_line
from ..model import Diagnostic, FileStatus
from ..settings import Settings
from ..workspace.walk import read_source

NAMES = ("AGENTS.override.md", "AGENTS.md")


class NoteFileJson(TypedDict):
    path: str
    bytes: int
    truncated: bool


class AgentNotesJson(TypedDict):
    cwd: str
    files: list[NoteFileJson]
    text: str
    budget: int
    truncated: bool
    skipped: list[str]


@dataclass(frozen=True, slots=True)
class NoteFile:
    path: str
    bytes: int
    """Bytes of it in :attr:`AgentNotes.text` (all of it unless ``truncated``)."""
    truncated: bool


@dataclass(frozen=True, slots=True)
class AgentNotes:
    """The notes for ``cwd``: the files used, root first, and their text joined and made safe."""

    cwd: str
    files: tuple[NoteFile, ...]
    text: str
    budget: int
    truncated: bool
    """A file was cut, or files were left out, by the budget."""
    skipped: tuple[Diagnostic, ...] = ()
    """Notes files not read: links, unreadable, binary, too large."""

    def to_json(self) -> AgentNotesJson:
        return {
            "cwd": escape_path(self.cwd),
            "files": [{"path": escape_path(f.path), "bytes": f.bytes, "truncated": f.truncated} for f in self.files],
            "text": self.text,
            "budget": self.budget,
            "truncated": self.truncated,
            "skipped": [f"{escape_path(d.path)}: {safe_line(d.kind)}: {safe_line(d.message)}" for d in self.skipped],
        }


def directories(cwd: str) -> list[str]:
    """The root (``""``) and each directory down to ``cwd`` (relative, POSIX)."""
    parts = [p for p in PurePosixPath(cwd).parts if p not in ("", ".")]
    return [""] + ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _is_link(root: Path, rel: str) -> bool:
    """Whether ``rel`` or a directory on its way from ``root`` is a symbolic link."""
    current = root
    for part in PurePosixPath(rel).parts:
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return True
        except OSError:
            return False
    return False


def _chain(root: Path, cwd: str, settings: Settings) -> tuple[list[tuple[str, str]], list[Diagnostic]]:
    """(path, safe text) of the notes file of each directory, root first, and what was skipped."""
    found: list[tuple[str, str]] = []
    skipped: list[Diagnostic] = []
    for directory in directories(cwd):
        for name in NAMES:
            rel = f"{directory}/{name}" if directory else name
            if not os.path.lexists(root / rel):
                continue
            if _is_link(root, rel):
                skipped.append(Diagnostic(rel, "symlink", "a symbolic link: notes are read only from real files"))
                break
            read = read_source(root, rel, settings)
            if read.status is not FileStatus.OK:
                skipped.append(Diagnostic(rel, str(read.status), read.message))
                break
            found.append((rel, safe_block(read.data.decode("utf-8", errors="replace"))))
            break  # one file per directory: an override replaces AGENTS.md
    return found, skipped


def agent_notes(root: Path, cwd: str, settings: Settings) -> AgentNotes:
    """The AGENTS.md chain from ``root`` down to ``cwd`` (a directory or a file in it, relative
    to the root and inside it: the caller checks), within ``agents_md_max_bytes``."""
    if (root / cwd).is_file():
        cwd = str(PurePosixPath(cwd).parent)
    found, skipped = _chain(root, cwd, settings)
    budget = settings.agents_md_max_bytes
    files: list[NoteFile] = []
    parts: list[str] = []
    used, truncated = 0, False
    for rel, text in found:
        header = f"--- {escape_path(rel)} ---\n"
        body = text if text.endswith("\n") else text + "\n"
        room = budget - used - len(header.encode())
        if room <= 0:
            truncated = True
            break
        encoded = body.encode()
        cut = len(encoded) > room
        if cut:
            kept = encoded[:room].decode("utf-8", errors="ignore")
            body = kept[: kept.rfind("\n") + 1] if "\n" in kept else ""
            truncated = True
        parts.append(header + body)
        used += len(header.encode()) + len(body.encode())
        files.append(NoteFile(rel, len(body.encode()), cut))
        if cut:
            break
    shown_cwd = str(PurePosixPath(cwd)) if cwd not in ("", ".") else "."
    return AgentNotes(shown_cwd, tuple(files), "".join(parts), budget, truncated, tuple(skipped))
