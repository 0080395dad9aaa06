"""A definition's one-line documentation, read from its syntax tree when the file is parsed.

Stored in :attr:`hybridmap.model.Symbol.doc` (the render never reads the disk), it is the first
sentence of the first paragraph of:

1. for a grammar in :data:`DOCSTRING_GRAMMARS` (Python), the string that is the first statement
   of the definition's body (its docstring);
2. otherwise, or when there is none, the comment block directly above the definition: the
   comment nodes (any node type with ``comment`` in its name: ``comment``, ``line_comment``,
   ``block_comment``...) that end on the line before it, each starting its own line, with no
   blank line between them. Attributes and decorators between the comments and the definition
   (``#[derive(...)]``, ``@property``) are stepped over, and so are the nodes that wrap a
   definition on its first line (``export``, Go's ``type``, a decorated definition), so the rule
   is the same for JSDoc ``/** */``, Go and C ``//``, Rust ``///``, Javadoc, Ruby and shell ``#``,
   Lua and SQL ``--`` and the rest. A block that opens the file is the file's header, not the
   first definition's doc, unless it is written as a doc comment (``/**``, ``///``); a block
   naming a copyright or licence is never a doc.

Comment markers are stripped (``/**``, ``*``, ``*/``, ``///``, ``//``, ``#``, ``--``, ``;``...);
tool directives are not documentation and are dropped (``//go:noinline``, ``// eslint-disable``,
``# type: ignore``, ``#!``, Rust's inner ``//!`` docs, which describe the enclosing module); a
paragraph ends at a blank line or a tag line (``@param``); a sentence ends at ``.`` followed by
a space (Javadoc's summary rule). Bounded: at most :data:`DOC_NODES` comment nodes and
:data:`DOC_SCAN_BYTES` of each are read, and at most :data:`DOC_STORE_CHARS` characters kept.
The text is kept raw: the render sanitizes it (:func:`hybridmap.infra.sanitize.safe_line`).
"""

from __future__ import annotations

import re
from typing import Any

#: Grammars whose definitions carry their documentation as the first statement of their body.
DOCSTRING_GRAMMARS = frozenset({"python"})
#: Characters of a doc line kept in the tags: the upper bound of ``summary_max_chars``.
DOC_STORE_CHARS = 1_000
#: Bytes of one comment or docstring read (its first paragraph is all that is kept).
DOC_SCAN_BYTES = 4_096
#: Comment nodes walked up from a definition; a longer block gives no doc (its first line is
#: out of reach, and a line from its middle would not be a summary).
DOC_NODES = 64
#: Node types that sit between a definition and its doc comment.
_ATTRIBUTE_TYPES = frozenset(
    {"decorator", "attribute_item", "attribute_list", "attribute", "annotation", "marker_annotation"}
)
#: A comment line's opening marker (and a block comment's continuation ``*``).
_OPENER = re.compile(r"^\s*(?:/\*+!?|\*+(?!/)|//+|#\||#+:?|--+[ \t]?[|^]?|;+|%+|\(\*+|\{-+[ \t]?\|?|!+)[ \t]?")
_CLOSER = re.compile(r"\s*(?:\*+/|\*+\)|-+\}|\|#)\s*$")
#: Lines that are tool directives, not documentation (matched on the raw comment line).
_DIRECTIVE = re.compile(
    r"^\s*(?://!|/\*!|#!|--!|//go:|//\s*\+build|//\s*nolint|#\s*(?:type|pylint|pyright|mypy|noqa|fmt|isort):|"
    r"(?://|/\*|#)\s*(?:eslint|@ts-|prettier-|istanbul |jshint|tslint|NOLINT|clang-format|region\b|endregion\b|"
    r"#region|#endregion|noqa\b|pragma\b|-\*-|vim?:|TODO\b|FIXME\b|XXX\b))",
    re.IGNORECASE,
)
#: Openers that say "documentation" (JSDoc, Javadoc, Rust, C#): such a block documents the
#: definition below it even at the top of a file.
_DOC_MARKERS = ("/**", "///")
_LICENCE = re.compile(r"\b(?:copyright|licen[cs]ed?|SPDX-License-Identifier)\b", re.IGNORECASE)
#: Documentation markup around or inside a summary: C# XML doc tags, HTML in Javadoc.
_MARKUP = re.compile(r"</?(?:summary|remarks|para|p|br|b|i|em|strong|code|c|tt)\b[^>]*>", re.IGNORECASE)
#: Javadoc / JSDoc inline tags: ``{@code x}``, ``{@link Foo}`` -> their text.
_INLINE_TAG = re.compile(r"\{@\w+\s+([^{}]*)\}")
_STRING_PREFIX = re.compile(r"^[rRuUbB]{0,2}('''|\"\"\"|'|\")")
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)\.\s")


def doc_line(source: bytes, lines: list[bytes], node: Any, docstrings: bool) -> str:
    """The one-line documentation of the definition ``node`` (see the module doc), or ""."""
    if docstrings:
        text = _docstring(source, node)
        if text:
            return text
    return _comment_above(source, lines, node)


def _docstring(source: bytes, node: Any) -> str:
    body = node.child_by_field_name("body")
    # A body can have no named child (``def f(): {`` mid-edit); named_child(0) then raises.
    first = body.named_child(0) if body is not None and body.named_child_count else None
    if first is not None and first.type == "expression_statement" and first.named_child_count == 1:
        first = first.named_child(0)
    if first is None or first.type != "string":
        return ""
    raw = source[first.start_byte : min(first.end_byte, first.start_byte + DOC_SCAN_BYTES)]
    text = raw.decode("utf-8", "replace")
    opened = _STRING_PREFIX.match(text)
    if opened is None:  # an f-string, or not a literal we know
        return ""
    quote = opened.group(1)
    content = text[opened.end() :]
    end = content.find(quote)
    return summary_of(content if end < 0 else content[:end])


def _comment_above(source: bytes, lines: list[bytes], node: Any) -> str:
    prev, top = _before(node)
    if prev is not None and "comment" not in prev.type and _last_line(prev) >= top - 1:
        prev = _trailing_comment(prev)  # some grammars end the node before with the comments
    holder = prev.parent if prev is not None else None
    comments: list[str] = []
    while prev is not None and "comment" in prev.type and _last_line(prev) >= top - 1 and _starts_line(lines, prev):
        if len(comments) == DOC_NODES:
            return ""
        comments.append(
            source[prev.start_byte : min(prev.end_byte, prev.start_byte + DOC_SCAN_BYTES)].decode("utf-8", "replace")
        )
        top = prev.start_point[0]
        prev = prev.prev_named_sibling
    if not comments:
        return ""
    if prev is None and holder is not None and holder.parent is None and not comments[-1].startswith(_DOC_MARKERS):
        return ""  # the file's header (what the file is for), unless written as a doc comment
    text_lines: list[str] = []
    for comment in reversed(comments):
        for line in comment.splitlines():
            if _DIRECTIVE.match(line) is None:
                text_lines.append(_CLOSER.sub("", _OPENER.sub("", line, count=1)))
    text = "\n".join(text_lines)
    return "" if _LICENCE.search(text) else summary_of(text)


def _before(node: Any) -> tuple[Any, int]:
    """The named node before the definition, past its attributes and the nodes that wrap it on
    its first line, and the first line of what it precedes."""
    anchor, top = node, node.start_point[0]
    while True:
        prev = anchor.prev_named_sibling
        while prev is not None and prev.type in _ATTRIBUTE_TYPES and _last_line(prev) >= top - 1:
            top = prev.start_point[0]
            prev = prev.prev_named_sibling
        parent = anchor.parent
        if prev is not None or parent is None or parent.parent is None or parent.start_point[0] != top:
            return prev, top
        anchor = parent  # export_statement, type_declaration, decorated_definition...


def _trailing_comment(node: Any) -> Any:
    """The comment ``node`` ends with (Kotlin's ``package`` header keeps the comments after it), or None."""
    while node.named_child_count:
        node = node.named_child(node.named_child_count - 1)
        if "comment" in node.type:
            return node
    return None


def summary_of(text: str) -> str:
    """The first sentence of the first paragraph of ``text`` on one line (at most
    :data:`DOC_STORE_CHARS` characters); a paragraph ends at a blank line or an ``@tag`` line."""
    paragraph: list[str] = []
    for line in text.splitlines():
        stripped = _INLINE_TAG.sub(r"\1", _MARKUP.sub("", line)).strip()
        if not stripped or stripped.startswith("@"):
            if paragraph:
                break
            if stripped.startswith("@"):
                return ""  # tags only: no description
            continue
        paragraph.append(stripped)
        if sum(map(len, paragraph)) > DOC_STORE_CHARS:
            break
    joined = " ".join(paragraph)
    end = _SENTENCE_END.search(joined)
    if end is not None:
        joined = joined[: end.start() + 1]
    return joined[:DOC_STORE_CHARS]


def _last_line(node: Any) -> int:
    """The last line holding the node's text (a node may end at column 0 of the next line)."""
    start: int = node.start_point[0]
    end: int = node.end_point[0]
    return end - 1 if node.end_point[1] == 0 and end > start else end


def _starts_line(lines: list[bytes], node: Any) -> bool:
    """True when only blanks precede ``node`` on its line (not a comment trailing code)."""
    line, col = node.start_point
    return line < len(lines) and not lines[line][:col].strip()
