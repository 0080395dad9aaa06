"""The one sanitizer for strings that came from a repository (or a server reading it).

File names, signature lines, server details and messages are attacker-controlled.
Printed raw they can drive the terminal (OSC 0 sets the title, OSC 52 writes the
clipboard, CSI moves the cursor; the OSC ones survive a pipe into a log or an
agent), reorder what a reader sees (bidi overrides: "Trojan Source"), hide text
from a person while a model still reads it (zero-width and Unicode tag characters)
or forge map structure (a newline in a file name makes a fake file header). And a
name that is not UTF-8 (kept by Python as surrogate escapes) cannot be encoded at all.

Every such character is made visible as a backslash escape:

* ``\\xNN`` for a control character below U+0080, and for a byte that is not
  UTF-8 (NN >= 80, from a surrogate escape);
* ``\\uNNNN`` / ``\\UNNNNNNNN`` for every other character of the Unicode
  categories Cc, Cf, Zl and Zp (C1 controls, bidi controls, zero-width and tag
  characters, line and paragraph separators) and any other lone surrogate.

:func:`escape_path` also escapes the backslash itself, so that a path is
reversible (:func:`unescape_path`); :func:`safe_line` leaves backslashes alone (code
is full of them). Tab is kept in both. The character class below is generated from
``unicodedata`` (Unicode 14, Python 3.11); a test checks it against the running
interpreter's tables.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Every character of categories Cc, Cf, Zl and Zp except TAB, plus all surrogates.
_UNSAFE_CLASS = (
    "\x00-\x08\x0a-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
    "\ud800-\udfff"
)
_UNSAFE = re.compile(f"[{_UNSAFE_CLASS}]")
_UNSAFE_OR_BACKSLASH = re.compile(f"[{_UNSAFE_CLASS}\\\\]")
_SURROGATES = re.compile("[\ud800-\udfff]")
#: In JSON text, newlines outside strings are layout (json escapes every C0 inside strings).
_UNSAFE_IN_JSON = re.compile("[" + _UNSAFE_CLASS.replace("\x0a-\x1f", "\x0b-\x1f", 1) + "]")
_ESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})")


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char == "\\":
        return "\\\\"
    if code < 0x80:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def safe_line(text: str) -> str:
    """``text`` with every unsafe character escaped (newlines too: one line in, one out)."""
    return _UNSAFE.sub(_escape_char, text)


def safe_block(text: str) -> str:
    """Each line of ``text`` made safe; the line breaks themselves are kept."""
    return "\n".join(safe_line(line) for line in text.split("\n"))


def escape_path(path: str) -> str:
    """A file name as shown in text and JSON: unsafe characters and backslashes escaped,
    reversible with :func:`unescape_path`. The common case (nothing to escape) is the name."""
    return _UNSAFE_OR_BACKSLASH.sub(_escape_char, path)


def _unescape_one(match: re.Match[str]) -> str:
    body = match.group(1)
    if body == "\\":
        return "\\"
    code = int(body[1:], 16)
    if body[0] == "x" and code >= 0x80:
        return chr(0xDC00 + code)  # back to the surrogate escape of the original byte
    return chr(code)


def unescape_path(text: str) -> str:
    """The path :func:`escape_path` was given (with surrogate escapes for non-UTF-8 bytes:
    ``os.fsencode`` of the result gives the file name's bytes)."""
    return _ESCAPE.sub(_unescape_one, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a surrogate pair, as JSON spells characters beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_dumps(value: Any, indent: int | None = 2) -> str:
    """JSON text of ``value`` that parses to the same value (after :func:`json_safe`) but
    carries no unsafe character raw: DEL, C1, bidi, invisible and separator characters are
    written as ``\\uXXXX`` escapes (json itself escapes C0), so printing it is harmless."""
    text = json.dumps(json_safe(value), indent=indent, ensure_ascii=False)
    return _UNSAFE_IN_JSON.sub(_json_escape, text)


def json_safe(value: Any) -> Any:
    """``value`` with lone surrogates in any string escaped, so that it encodes as UTF-8.

    JSON itself escapes control characters; only text that is not Unicode at all (a file
    name that is not UTF-8, carried as surrogate escapes) needs this. Paths are escaped
    by the records' own ``to_json`` with :func:`escape_path`, which is reversible.
    """
    if isinstance(value, str):
        return _SURROGATES.sub(_escape_char, value) if _SURROGATES.search(value) else value
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
