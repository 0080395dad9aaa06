"""Which keys' values moved between two mappings, without a pass over every key.

Every stage after the sources keeps something per file between maps (the policies' facts, the
graph, the lexical models, the private-name mask, the session's last content hashes) and, on the
next map, asks which files moved since the mapping it saw last. Unchanged files keep their value
objects (a source keeps an unchanged file's tags, a snapshot its state), so a scan of identities
answers; at 100,000 files each such scan was 25-150 ms of a map after a one-file edit, and an
edit's map made several. Whoever patches a mapping into the next (the base source's tags, the
workspace's file states) hands it out as :class:`Patched`: the mapping it was made from and
the keys it set or removed, and :func:`changed_keys` follows those patches back to the mapping
the caller holds (at most :data:`MAX_STEPS` of them: a watch may read several batches between
two maps) instead of scanning. A :class:`Projected` mapping (one field of each state: a
snapshot's content hashes) moves as the states it reads. Any other pair of mappings is scanned.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import compress
from operator import attrgetter, is_not
from typing import TypeVar

V = TypeVar("V")

#: Patches :func:`changed_keys` follows back; older mappings are let go (each is a dict of every
#: path: about 5 MB at 100,000 files) and a caller still holding one scans.
MAX_STEPS = 4


class Patched(dict[str, V]):
    """A mapping made from ``base`` by setting or removing ``keys`` (read-only by contract, as
    every mapping handed on between stages)."""

    __slots__ = ("base", "keys_set")

    def __init__(self, base: Mapping[str, V], items: Mapping[str, V], keys: Iterable[str]) -> None:
        super().__init__(items)
        self._link(base, keys)

    @classmethod
    def patch(cls, base: Mapping[str, V], changes: Mapping[str, V | None]) -> Patched[V]:
        """``base`` with each key of ``changes`` set to its value, or removed (None): one copy."""
        out: Patched[V] = cls.__new__(cls)
        dict.update(out, base)
        for key, value in changes.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = value
        out._link(base, changes)
        return out

    def _link(self, base: Mapping[str, V], keys: Iterable[str]) -> None:
        self.base: Mapping[str, V] | None = base
        self.keys_set = tuple(keys)
        # Keep the chain at MAX_STEPS patches: the oldest mapping is let go.
        step: Mapping[str, V] | None = self
        for _ in range(MAX_STEPS):
            step = step.base if isinstance(step, Patched) else None
        if isinstance(step, Patched):
            step.base = None


class Projected(Mapping[str, str]):
    """``base``'s values' ``field``, read through: key -> ``getattr(base[key], field)``, the keys
    whose field is empty left out (a snapshot's content hashes and languages from its file
    states: a dict of them copied per edit was ~8 ms each at 100,000 files). What moved between
    two projections of one field is what moved between their bases (:func:`changed_keys`)."""

    __slots__ = ("base", "field")

    def __init__(self, base: Mapping[str, object], field: str) -> None:
        self.base = base
        self.field = field

    def __getitem__(self, key: str) -> str:
        value: str = getattr(self.base[key], self.field)
        if not value:
            raise KeyError(key)
        return value

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        held = self.base.get(key)
        value: str = getattr(held, self.field) if held is not None else ""
        return value or default

    def __contains__(self, key: object) -> bool:
        held = self.base.get(key)  # type: ignore[call-overload]
        return held is not None and bool(getattr(held, self.field))

    def _fields(self) -> Iterator[str]:
        return map(attrgetter(self.field), self.base.values())

    def __iter__(self) -> Iterator[str]:
        return compress(self.base, self._fields())  # C-level: a map iterates it whole

    def values(self) -> Iterator[str]:  # type: ignore[override]
        return filter(None, self._fields())

    def items(self) -> Iterator[tuple[str, str]]:  # type: ignore[override]
        return compress(zip(self.base, self._fields(), strict=True), self._fields())

    def __len__(self) -> int:
        return sum(map(bool, self._fields()))


def changed_keys(old: Mapping[str, V], new: Mapping[str, V]) -> list[str]:
    """Keys whose values are not the same object in ``old`` and ``new`` (added and removed ones
    included): in ``new``'s order then the removed ones' when scanned, sorted when read from the
    patches between them. Callers must not rely on the order."""
    if old is new:
        return []
    if isinstance(old, Projected) and isinstance(new, Projected) and old.field == new.field:
        moved = changed_keys(old.base, new.base)
        return [key for key in moved if old.get(key) is not new.get(key)]
    keys: set[str] = set()
    step: Mapping[str, V] | None = new
    for _ in range(MAX_STEPS):
        if not isinstance(step, Patched):
            break
        keys.update(step.keys_set)
        step = step.base
        if step is old:  # a key set and later set back is not a change
            return sorted(k for k in keys if old.get(k) is not new.get(k))
    return scanned(old, new)


def changed_positions(old: Mapping[str, V], new: Mapping[str, V], index: Mapping[str, int]) -> list[int]:
    """:func:`changed_keys` as positions in ``index`` (a graph's file numbers), ascending; keys
    ``index`` does not hold are left out."""
    return sorted(index[key] for key in changed_keys(old, new) if key in index)


def scanned(old: Mapping[str, V], new: Mapping[str, V]) -> list[str]:
    """:func:`changed_keys` by a scan of every key (C-level: ``map`` and ``compress``)."""
    out = list(compress(new, map(is_not, map(old.get, new), new.values())))
    added = sum(1 for key in out if key not in old)
    if len(new) - added != len(old):  # some old key is not in new
        out.extend(key for key in old if key not in new)
    return out


def hinted_changes(
    now: Mapping[str, object],
    known: Mapping[str, object],
    keys: frozenset[str] | None,
    changed: Iterable[str] | None,
    since: object,
    seen: object,
) -> list[str] | None:
    """The keys of ``changed`` whose values in ``now`` are not ``known``'s (by identity): a
    caller's word that only those moved since the mapping ``since``, taken when ``since`` is
    ``seen`` (the mapping last read, whose keys were ``keys``) and no key came or went. None when
    the word cannot be taken: the caller scans ``now``. The one rule of the policies' kept rules
    (:mod:`hybridmap.pipeline.python_imports`, :mod:`hybridmap.pipeline.import_targets`)."""
    if changed is None or since is None or since is not seen or keys is None:
        return None
    moved = [key for key in changed if known.get(key) is not now.get(key)]
    return None if any((key in now) != (key in keys) for key in moved) else moved
