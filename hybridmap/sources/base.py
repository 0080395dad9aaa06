"""The symbol-source abstraction: what every source of symbols hands the merge step."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Diagnostic, FileTags


@dataclass(frozen=True, slots=True)
class SourceResult:
    """Per-file tags from one source, plus what went wrong.

    ``tags`` maps a relative path to its :class:`FileTags`; a file absent from it
    was not answered by this source. ``stats`` holds counters for timings and
    benchmarks (files parsed, cache hits...).
    """

    tags: dict[str, FileTags]
    languages: dict[str, str]
    diagnostics: tuple[Diagnostic, ...] = ()
    stats: dict[str, float] = field(default_factory=dict)
    special_files: tuple[str, ...] = ()
    shas: dict[str, str] = field(default_factory=dict)
    """sha256 of the content each path's tags were made from (cache keys for later sources)."""
