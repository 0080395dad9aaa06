"""Summaries in the map: one line describing a shown definition, after its signature.

Where the text comes from, for each definition the map shows (best-ranked first, while the
budget left after packing allows: :func:`hybridmap.pipeline.pack.packer.add_summaries`):

1. the caller's **summarizer**, when one was given (``AsyncRepoMap(root, summarizer=...)``): any
   callable taking a :class:`SymbolText` and returning a ``str`` (``""``: no summary for this
   definition) or ``None`` (no opinion: the default below is used). It is the place for the
   user's own LLM; hybridmap itself never makes a network call. Its answers are cached in the
   project's cache (:mod:`hybridmap.store.cache`) by its declared ``name`` and ``version`` (attributes
   of the callable; by default its module and qualified name, version ``""``: bump ``version``
   when its answers change) and a hash of the definition's text (name, kind, signature, doc,
   server detail and source), so a later map, in this process or another, does not ask again.
   An exception (or an answer that is neither ``str`` nor ``None``) is reported once per map as a
   ``summarizer_failed`` diagnostic; that map goes on with the default summaries;
2. by default (:func:`default_summary`): the definition's documentation as the tree-sitter source
   read it when the file was parsed (:attr:`hybridmap.model.Symbol.doc`: the docstring, or the
   comment block right above), else the language server's ``detail`` (hover) when it says more
   than the signature (a word the signature does not have, such as an inferred return type).

The render makes the text one line, sanitizes it and cuts it at ``summary_max_chars``
(:meth:`hybridmap.pipeline.render.skeleton.Renderer.summary_text`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ...infra.sanitize import safe_line
from ...model import Diagnostic, FileTags, Symbol

if TYPE_CHECKING:
    from ...store.cache import Cache


@dataclass(frozen=True, slots=True)
class SymbolText:
    """What a summarizer is told about one definition (strings from the repository, raw)."""

    path: str
    """POSIX, relative to the repository root."""
    name: str
    kind: str
    signature: str
    doc: str
    """The first sentence of its docstring or of the comment above it; "" when none."""
    detail: str
    """The language server's one-line description (hover); "" when none."""
    source: str
    """The definition's source lines, from its first line to its last."""


class Summarizer(Protocol):
    """A caller's summarizer: ``str`` to show (``""``: none), or ``None`` for the default.

    Optional attributes ``name`` and ``version`` (strings) identify its answers in the cache. An
    optional ``batch(symbols) -> answers`` method (a sequence of ``str | None``, one per symbol,
    in order) is called once per map with every shown definition not cached yet, instead of one
    call each: one request to a remote model, not dozens."""

    def __call__(self, symbol: SymbolText, /) -> str | None: ...


#: Where a file's current bytes come from (None when it changed since the snapshot).
ReadFile = Callable[[str], "bytes | None"]
#: Cache key prefix of a summarizer's answers; bump when their meaning changes.
_KEY = "sum:1"
_WORD = re.compile(r"[^\W\d]\w*")
#: Characters of an exception's message kept in the diagnostic.
_MESSAGE_CHARS = 200


def default_summary(doc: str, detail: str, signature: str) -> str:
    """``doc``; else ``detail`` when it has a word ``signature`` lacks; else ""."""
    if doc:
        return doc
    if detail and not set(_WORD.findall(detail)) <= set(_WORD.findall(signature)):
        return detail
    return ""


def summarizer_identity(summarizer: object) -> tuple[str, str]:
    """The (name, version) a summarizer's answers are cached under."""
    name = getattr(summarizer, "name", None)
    if not isinstance(name, str) or not name:
        owner = summarizer if hasattr(summarizer, "__qualname__") else type(summarizer)
        name = f"{getattr(owner, '__module__', '')}.{getattr(owner, '__qualname__', type(owner).__name__)}"
    version = getattr(summarizer, "version", "")
    return name, version if isinstance(version, str) else repr(version)


class SummarySource:
    """Summaries for one repository's maps: the default, or a caller's summarizer cached."""

    def __init__(
        self, summarizer: Summarizer | None = None, cache: Cache | None = None, read: ReadFile | None = None
    ) -> None:
        self.summarizer = summarizer
        self.cache = cache
        self.read = read
        name, version = summarizer_identity(summarizer) if summarizer is not None else ("", "")
        self.name = name
        digest = hashlib.sha256(f"{name}\0{version}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
        self.prefix = f"{_KEY}:{digest}:"
        """Of every cache key of this summarizer's answers."""

    def begin(self, tags: Mapping[str, FileTags]) -> SummaryPass:
        """The summaries of one map over ``tags`` (asked lazily; :meth:`SummaryPass.flush` after)."""
        return SummaryPass(self, tags)


class SummaryPass:
    """One map's summaries: asked as the packer reaches each definition, best-ranked first."""

    def __init__(self, source: SummarySource, tags: Mapping[str, FileTags]) -> None:
        self._source = source
        self._tags = tags
        self._files: dict[str, list[str] | None] = {}
        self._unsaved: dict[str, str] = {}
        self._failed = False
        self.diagnostics: list[Diagnostic] = []
        self.stats = {"summarizer_calls": 0.0, "summary_cache_hits": 0.0}

    def __call__(self, path: str, index: int) -> str:
        symbol = self._tags[path].symbols[index]
        if self._source.summarizer is not None and not self._failed:
            text = self._ask(path, symbol)
            if text is not None:
                return text
        return default_summary(symbol.doc, symbol.detail, symbol.signature)

    def _lines(self, path: str) -> list[str] | None:
        if path not in self._files:
            data = self._source.read(path) if self._source.read is not None else None
            self._files[path] = data.decode("utf-8", "replace").split("\n") if data is not None else None
        return self._files[path]

    def _record(self, path: str, symbol: Symbol) -> SymbolText | None:
        lines = self._lines(path)
        if lines is None:  # changed since the snapshot: its text is not the one the tags describe
            return None
        span = symbol.span
        source = "\n".join(lines[span.start_line : span.end_line + 1])
        return SymbolText(path, symbol.name, symbol.kind, symbol.signature, symbol.doc, symbol.detail, source)

    def prefetch(self, wanted: Iterable[tuple[str, int]]) -> None:
        """With a summarizer that has ``batch``: ask it once for every definition of ``wanted``
        (path, symbol index) not answered yet; :meth:`__call__` then finds the answers. Without
        ``batch``, nothing: definitions are asked one by one as the packer reaches them."""
        batch = getattr(self._source.summarizer, "batch", None)
        if not callable(batch) or self._failed:
            return
        records: dict[str, SymbolText] = {}
        for path, index in wanted:
            record = self._record(path, self._tags[path].symbols[index])
            if record is not None:
                records.setdefault(self._source.prefix + _content_hash(record), record)
        keys = [key for key in records if key not in self._unsaved]
        cache = self._source.cache
        cached = cache.get_many(keys) if cache is not None and keys else {}
        asked = [key for key in keys if not _answer(cached.get(key))]
        if not asked:
            return
        self.stats["summarizer_calls"] += len(asked)
        self.stats["summarizer_batches"] = self.stats.get("summarizer_batches", 0.0) + 1
        try:
            answers = list(batch([records[key] for key in asked]))
            if len(answers) != len(asked):
                raise ValueError(f"batch returned {len(answers)} answers for {len(asked)} definitions")
            for answer in answers:
                if answer is not None and not isinstance(answer, str):
                    raise TypeError(f"batch returned {type(answer).__name__}, not str or None")
        except Exception as exc:  # noqa: BLE001 - the caller's code: said, never fatal to the map
            self._fail(records[asked[0]].name, exc)
            return
        for key, answer in zip(asked, answers, strict=True):
            self._unsaved[key] = "n" if answer is None else "s" + answer

    def _ask(self, path: str, symbol: Symbol) -> str | None:
        """The summarizer's answer (cached), None for "use the default"."""
        record = self._record(path, symbol)
        if record is None:
            return None
        key = self._source.prefix + _content_hash(record)
        cache = self._source.cache
        known = self._unsaved.get(key)
        if known is None and cache is not None:
            known = _answer(cache.get_many([key]).get(key))
            self.stats["summary_cache_hits"] += known is not None
        if known is None:
            known = self._call(record)
            if known is None:
                return None
            self._unsaved[key] = known
        return known[1:] if known.startswith("s") else None

    def _call(self, record: SymbolText) -> str | None:
        """``s`` + the answer, ``n`` for None; None (and a diagnostic) when the summarizer failed."""
        summarizer = self._source.summarizer
        if summarizer is None:
            return None
        self.stats["summarizer_calls"] += 1
        try:
            answer = summarizer(record)
            if answer is not None and not isinstance(answer, str):
                raise TypeError(f"returned {type(answer).__name__}, not str or None")
        except Exception as exc:  # noqa: BLE001 - the caller's code: said, never fatal to the map
            self._fail(record.name, exc)
            return None
        return "n" if answer is None else "s" + answer

    def _fail(self, name: str, exc: Exception) -> None:
        self._failed = True
        message = safe_line(f"{type(exc).__name__}: {exc}")[:_MESSAGE_CHARS]
        self.diagnostics.append(
            Diagnostic(
                ".",
                "summarizer_failed",
                f"summarizer {safe_line(self._source.name)!r} failed on {safe_line(name)!r} "
                f"({message}); this map shows docstring and hover summaries instead",
            )
        )

    def flush(self) -> None:
        """Store the answers got since the last flush (one transaction)."""
        if self._unsaved and self._source.cache is not None:
            self._source.cache.set_many(self._unsaved)
        self._unsaved = {}


def _answer(value: object) -> str | None:
    """A cached answer (``s`` + text, or ``n``), None when ``value`` is not one."""
    return value if isinstance(value, str) and value[:1] in ("s", "n") else None


def _content_hash(record: SymbolText) -> str:
    text = "\0".join((record.name, record.kind, record.signature, record.doc, record.detail, record.source))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
