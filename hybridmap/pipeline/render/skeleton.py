"""Render ranked definitions as a skeleton a model can read.

Each file block is its path followed by the signature lines of the chosen
definitions, in file order, each preceded by the signature of its enclosing
class/scope, with original indentation; ``⋮`` marks elided code between
non-adjacent lines. Files chosen by name only are listed bare. Marks (:mod:`.marks`): ``+``
before a public definition, ``[R:N]`` after a path N other files depend on, ``[NEW]`` after a
file new since the session's previous map; in a map of a change, ``~`` before a changed
definition, ``[added]`` / ``[changed]`` / ``[renamed from OLD]`` after a changed file's path,
and a header naming the base and the deleted files. A summary (:mod:`.summaries`) follows a shown
definition's last signature line on the same line, after :data:`SUMMARY_SEPARATOR`, so it can
never start a line of its own (a header, an elision mark). In a notebook, the elision mark before
a cell's first shown line names the cell (``⋮ cell 3``: its 1-based number among all cells). Pure: the text
comes from the signatures stored in the tags, never from disk. Paths and lines
come from the repository: they pass through :mod:`.sanitize`, so no control,
bidi or invisible character reaches the text and a name cannot forge a header.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from ...infra.sanitize import escape_path, safe_line
from ...languages.notebooks import cell_position
from ...languages.visibility import Visibility
from ...model import FileTags
from ...settings import Settings
from ..graph.neighbourhood import Neighbourhood
from ..inputs.change import ChangeFocus
from ..rank import RankItem
from .marks import Dependents

#: Before a definition in a map of a symbol's neighbourhood, by its relation to the symbol.
_RELATION_MARKS = {"definition": "*", "caller": "<", "callee": ">"}
#: Definitions of an ambiguous name listed in the header, at most.
_HEADER_DEFINITIONS = 8
#: After a changed file's path in a map of a change, by how it changed.
_CHANGE_MARKS = {"added": " [added]", "modified": " [changed]"}

#: Between a signature line and its summary: ``def area(self) -> float: # Area in m².`` One
#: space before the ``#`` costs a token less than PEP 8's two (cl100k), and a comment reads as
#: a comment in every language the map shows.
SUMMARY_SEPARATOR = " # "
#: (path, symbol index) -> the summary shown after that symbol's signature.
Summaries = Mapping[tuple[str, int], str]


class Renderer:
    """Renders any subset of a request's ranked items; memoizes per-item lines."""

    def __init__(
        self,
        tags: Mapping[str, FileTags],
        settings: Settings,
        special_files: Sequence[str] = (),
        new_files: Collection[str] = (),
        visibility: Visibility | None = None,
        dependents: Mapping[str, Dependents] | None = None,
        reasons: Mapping[str, Sequence[str]] | None = None,
        focus: ChangeFocus | None = None,
        kept_blocks: Mapping[tuple[str, int], int] | None = None,
        neighbourhood: Neighbourhood | None = None,
    ) -> None:
        self._tags = tags
        self._settings = settings
        self._new = new_files
        """Files that appeared since the session's previous map: ``[NEW]`` after the path."""
        self._visibility = visibility if settings.render_public_marks else None
        self._dependents = (dependents or {}) if settings.render_dependents_marks else {}
        self._reasons = reasons or {}
        """Why each file is in the map, shown after its path (``render_reasons``)."""
        self._focus = focus
        self._kept_blocks = kept_blocks or {}
        """A stable layout's kept items -> the index of the block they keep (:mod:`..pack.stable`)."""
        self._changed = {path: frozenset(local) for path, local in focus.symbols.items()} if focus else {}
        self._lines: dict[tuple[str, int], tuple[tuple[int, str], ...]] = {}
        self._related = neighbourhood.related if neighbourhood is not None else {}
        self.header = _change_header(focus) if focus is not None else ""
        if neighbourhood is not None:
            self.header += _symbol_header(neighbourhood, tags)
        if special_files and settings.special_files_first:
            self.header += "Project files: " + ", ".join(map(escape_path, special_files)) + "\n"

    def _cut(self, text: str) -> str:
        limit = self._settings.max_line_chars
        return text if len(text) <= limit else text[:limit]

    def _why(self, path: str) -> str:
        """`` # reason; reason`` after a path, as a comment reads in every language; "" for none."""
        said = self._reasons.get(path)
        if not said:
            return ""
        shown = "; ".join(safe_line(why) for why in said[: self._settings.render_reasons_max])
        return SUMMARY_SEPARATOR + self._cut(shown)

    def item_lines(self, item: RankItem) -> tuple[tuple[int, str], ...]:
        key = (item.path, item.symbol)
        lines = self._lines.get(key)
        if lines is None:
            out: dict[int, str] = {}
            if item.symbol >= 0:
                symbols = self._tags[item.path].symbols
                changed = self._changed.get(item.path, frozenset())
                index = item.symbol
                while index >= 0:  # the symbol, then each enclosing scope
                    sym = symbols[index]
                    public = self._visibility is not None and self._visibility.public(item.path, symbols, index)
                    related = self._related.get((item.path, index))
                    marks = ("~" if index in changed else "") + (_RELATION_MARKS[related[0]] if related else "")
                    marks += "+" if public else ""
                    for offset, text in enumerate(sym.signature.split("\n")):
                        line = self._cut(safe_line(text))
                        if marks and offset == 0:
                            stripped = line.lstrip()
                            line = line[: len(line) - len(stripped)] + marks + stripped
                        out.setdefault(sym.span.start_line + offset, line)
                    index = sym.parent
            lines = self._lines[key] = tuple(sorted(out.items()))
        return lines

    def _change_mark(self, path: str) -> str:
        if self._focus is None or path not in self._focus.status:
            return ""
        status = self._focus.status[path]
        if status == "renamed":
            old = next((f.old_path for f in self._focus.change.files if f.path == path), "")
            return f" [renamed from {escape_path(old)}]"
        return _CHANGE_MARKS[status]

    def summary_line(self, path: str, index: int) -> int:
        """The line a summary of ``path``'s symbol ``index`` follows: its signature's last line."""
        symbol = self._tags[path].symbols[index]
        return symbol.span.start_line + symbol.signature.count("\n")

    @staticmethod
    def summary_text(raw: str, limit: int) -> str:
        """``raw`` as shown: one line (every run of white space one space), sanitized, cut at
        ``limit`` characters (``summary_max_chars``; an ellipsis ends a cut one); "" when empty."""
        text = safe_line(" ".join(raw.split()))
        return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

    def with_summary(self, line: str, summary: str) -> str:
        return f"{line}{SUMMARY_SEPARATOR}{summary}"

    def render(self, items: Sequence[RankItem], with_header: bool = True, summaries: Summaries | None = None) -> str:
        # One block per file, in the order of its first item; a stable layout's kept items keep
        # their own blocks (``kept_blocks``), so a file may have a second block after them.
        blocks: dict[tuple[str, int], dict[int, str]] = {}
        block_of: dict[tuple[str, int], tuple[str, int]] = {}
        for item in items:
            key = (item.path, self._kept_blocks.get((item.path, item.symbol), -1))
            block_of[(item.path, item.symbol)] = key
            block = blocks.setdefault(key, {})
            for line_no, text in self.item_lines(item):
                block[line_no] = text
        summarized: set[tuple[tuple[str, int], int]] = set()  # one summary per line, the first given
        for (path, index), summary in (summaries or {}).items():
            key = block_of.get((path, index), (path, -1))
            block = blocks.get(key, {})
            line_no = self.summary_line(path, index)
            if line_no in block and (key, line_no) not in summarized:
                summarized.add((key, line_no))
                block[line_no] = self.with_summary(block[line_no], summary)
        mark = self._settings.elision_mark
        parts: list[str] = [self.header] if with_header and self.header else []
        for (path, _), block in blocks.items():
            shown = escape_path(path)
            mark_new = self._change_mark(path) + (" [NEW]" if path in self._new else "")
            reach = self._dependents.get(path)
            if reach is not None and reach.total >= self._settings.dependents_mark_min:
                mark_new = f" [R:{reach.total}]" + mark_new
            why = self._why(path)
            if not block:
                parts.append(shown + mark_new + why + "\n")
                continue
            parts.append(shown + ":" + mark_new + why + "\n")
            cells = self._tags[path].cells if path in self._tags else ()
            previous = None
            in_cell = 0
            for line_no in sorted(block):
                cell = cell_position(cells, line_no)[0] if cells else 0
                if cell != in_cell:  # a notebook: each cell's first shown line says which cell
                    parts.append(f"{mark} cell {cell}\n")
                    in_cell = cell
                elif previous is not None and line_no != previous + 1:
                    parts.append(mark + "\n")
                parts.append(block[line_no] + "\n")
                previous = line_no
            parts.append(mark + "\n")
        return "".join(parts)


def _change_header(focus: ChangeFocus) -> str:
    """The first lines of a map of a change: its base, what ``~`` means, the deleted files."""
    change = focus.change
    if not change.files:
        return f"No changes since {change.base[:12]} ({safe_line(change.base_name)})\n"
    cut = "" if change.complete else " (cut short: more files changed than were read)"
    text = f"Changes since {change.base[:12]} ({safe_line(change.base_name)}){cut}; ~ marks a changed definition\n"
    if focus.deleted:
        text += "Deleted: " + ", ".join(map(escape_path, focus.deleted)) + "\n"
    return text


def _symbol_header(hood: Neighbourhood, tags: Mapping[str, FileTags]) -> str:
    """The first line of a map of a symbol's neighbourhood: where the name is defined (every
    place, when it is ambiguous), what the marks mean, how far the walk went."""
    name = safe_line(hood.query.name)
    if not hood.definitions:
        where = f" in {escape_path(hood.query.path)}" if hood.query.path else ""
        return f"No definition named '{name}'{where}\n"
    places = [f"{escape_path(p)}:{tags[p].symbols[i].name_line + 1}" for p, i in hood.definitions]
    more = len(places) - _HEADER_DEFINITIONS
    listed = ", ".join(places[:_HEADER_DEFINITIONS]) + (f" and {more} more" if more > 0 else "")
    count = f"{len(places)} definitions: " if len(places) > 1 else ""
    cut = "; stopped at symbol_neighbours_max" if not hood.complete else ""
    calls = "call" if hood.query.depth == 1 else "calls"
    return (
        f"Symbol '{name}' ({count}{listed}): * defines it, < calls it, > is called by it, "
        f"up to {hood.query.depth} {calls} away{cut}\n"
    )
