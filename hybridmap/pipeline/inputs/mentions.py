"""What a request names, read against the repository: its mentions and its message.

A mention (``--mention``, ``mentioned_idents``) that is a listed file's path or file name is a
file, any other an identifier, respelled as the repository spells it; a message (``message=``)
is read by :class:`~.conversation.MessageIndex`. :class:`MentionReader` keeps what the reading
needs between requests: the listing's file names (per snapshot generation) and the message
index (per base tags).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ...settings import Settings
from ...sources.base import SourceView
from ...workspace.state import Snapshot
from .conversation import MessageIndex


@dataclass(frozen=True, slots=True)
class RequestMentions:
    """The files and identifiers a request names, in the repository's spelling."""

    files: tuple[str, ...]
    """Listed files, in the order named (the request's own mentioned files not included)."""
    idents: tuple[str, ...]
    by_stem: frozenset[str] = frozenset()
    """Those of :attr:`files` a message named only by a word equal to their stem
    (:attr:`.conversation.MessageMentions.by_stem`)."""

    def named(self, mentioned_files: Sequence[str]) -> list[str]:
        """The request's ``mentioned_files`` (named on purpose, whatever the message says) and
        those of :attr:`files` not named only by their stem."""
        return [*mentioned_files, *(f for f in self.files if f not in self.by_stem)]


class MentionReader:
    """Reads requests' mentions and messages for one repository (one owner: its map builder)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._basenames: tuple[int, dict[str, list[str]]] | None = None
        """The basename index of the paths of a snapshot ``generation``."""
        self._messages: tuple[object, MessageIndex] | None = None

    def read(
        self, mentioned_idents: Sequence[str], message: str, snapshot: Snapshot, base: SourceView
    ) -> RequestMentions:
        """The files and identifiers of ``mentioned_idents`` (a listed file's path or name is a
        file) and of ``message``, in the repository's spelling."""
        files, idents = self._split(mentioned_idents, snapshot)
        if idents:
            idents = self._message_index(base).respelled(idents)
        if not message:
            return RequestMentions(tuple(files), tuple(idents))
        said = self._message_index(base).extract(message)
        return RequestMentions(
            (*files, *said.files), (*idents, *said.idents), frozenset(said.by_stem.difference(files))
        )

    def _message_index(self, base: SourceView) -> MessageIndex:
        """The index of names a message is read against (the base's files and definitions),
        rebuilt only when the base tags moved."""
        key = (id(base.tags), base.version)
        if self._messages is None or self._messages[0] != key:
            self._messages = (key, MessageIndex.from_tags(base.tags, self._settings))
        return self._messages[1]

    def _split(self, words: Sequence[str], snapshot: Snapshot) -> tuple[list[str], list[str]]:
        """:func:`split_mentions` with the basename index built once per listing: a snapshot's
        ``generation`` moves whenever a file is added or removed (the change set is not empty)."""
        if not words:
            return [], []
        if self._basenames is None or self._basenames[0] != snapshot.generation:
            self._basenames = (snapshot.generation, basename_index(snapshot.languages))
        return split_mentions(words, snapshot.languages, self._basenames[1])


def basename_index(paths: Iterable[str]) -> dict[str, list[str]]:
    """File name -> the listed paths ending in it."""
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(path[path.rfind("/") + 1 :], []).append(path)
    return by_name


def split_mentions(
    words: Sequence[str], languages: Mapping[str, str], by_name: Mapping[str, list[str]] | None = None
) -> tuple[list[str], list[str]]:
    """A mention naming a listed file (its path, or its file name: every file of that name) is a
    file, any other an identifier. ``by_name`` is :func:`basename_index` of ``languages`` (made
    here when not given)."""
    if by_name is None:
        by_name = basename_index(languages)
    files: list[str] = []
    idents: list[str] = []
    for word in words:
        if word in languages:
            files.append(word)
            continue
        matches = by_name.get(word, [])
        if matches:
            files.extend(matches)
            continue
        idents.append(word)
    return files, idents
