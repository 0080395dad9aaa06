"""Which files' tags moved between two tag mappings, without a pass over every file.

Every stage after the sources keeps something per file between maps (the policies' facts, the
graph, the lexical models, the private-name mask) and, on the next map, asks which files' tags
moved since the mapping it saw last. A source keeps an unchanged file's tags object, so a scan
of identities answers; at 100,000 files each such scan was 40-150 ms of a map after a one-file
edit, and an edit map made five of them. The base source knows what it set: it hands the next
mapping as :class:`PatchedTags`, the mapping it was patched from and the paths it set or
removed, and :func:`changed_paths` follows those patches back to the mapping the caller holds
(at most :data:`MAX_STEPS` of them: a watch may index several batches between two maps) instead
of scanning. Any other pair of mappings is scanned, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import compress
from operator import is_not

from ..model import FileTags

#: Patches :func:`changed_paths` follows back; older mappings are let go (each is a dict of every
#: path: about 5 MB at 100,000 files) and a caller still holding one scans.
MAX_STEPS = 4


class PatchedTags(dict[str, FileTags]):
    """A tag mapping made from ``base`` by setting or removing ``paths`` (read-only by contract,
    as every tag mapping a source hands out)."""

    __slots__ = ("base", "paths")

    def __init__(self, base: Mapping[str, FileTags], items: Mapping[str, FileTags], paths: Iterable[str]) -> None:
        super().__init__(items)
        self._link(base, paths)

    @classmethod
    def patch(cls, base: Mapping[str, FileTags], changes: Mapping[str, FileTags | None]) -> PatchedTags:
        """``base`` with each path of ``changes`` set to its tags, or removed (None): one copy."""
        out = cls.__new__(cls)
        dict.update(out, base)
        for path, tags in changes.items():
            if tags is None:
                out.pop(path, None)
            else:
                out[path] = tags
        out._link(base, changes)
        return out

    def _link(self, base: Mapping[str, FileTags], paths: Iterable[str]) -> None:
        self.base: Mapping[str, FileTags] | None = base
        self.paths = tuple(paths)
        # Keep the chain at MAX_STEPS patches: the oldest mapping is let go.
        step: Mapping[str, FileTags] | None = self
        for _ in range(MAX_STEPS):
            step = step.base if isinstance(step, PatchedTags) else None
        if isinstance(step, PatchedTags):
            step.base = None


def changed_paths(old: Mapping[str, FileTags], new: Mapping[str, FileTags]) -> list[str]:
    """Paths whose tags are not the same object in ``old`` and ``new`` (added and removed ones
    included): in ``new``'s order then the removed ones' when scanned, sorted when read from the
    patches between them. Callers must not rely on the order."""
    if old is new:
        return []
    paths: set[str] = set()
    step: Mapping[str, FileTags] | None = new
    for _ in range(MAX_STEPS):
        if not isinstance(step, PatchedTags):
            break
        paths.update(step.paths)
        step = step.base
        if step is old:  # a path set and later set back is not a change
            return sorted(p for p in paths if old.get(p) is not new.get(p))
    return scanned(old, new)


def scanned(old: Mapping[str, FileTags], new: Mapping[str, FileTags]) -> list[str]:
    """:func:`changed_paths` by a scan of every path (C-level: ``map`` and ``compress``)."""
    out = list(compress(new, map(is_not, map(old.get, new), new.values())))
    added = sum(1 for path in out if path not in old)
    if len(new) - added != len(old):  # some old path is not in new
        out.extend(path for path in old if path not in new)
    return out
