"""A small, bounded reader of the protobuf wire format (our own; no generated code).

A SCIP index is untrusted input: it comes from a file a user points at, written by an indexer
that read the repository. So every read is checked against the end of the enclosing message
before it happens: a length that runs past the buffer, a varint longer than ten bytes, a field
number of 0, a wire type we do not know (3 and 4, the deprecated groups; 6 and 7) are a
:class:`WireError`, never an ``IndexError`` or a hang. Nothing here recurses: callers decode a
fixed schema and hand nested messages back to :func:`fields` with the bounds of their bytes, so
nesting is as deep as the schema (four levels for SCIP) whatever the input says, and every loop
advances by at least one byte, so the work is linear in the input's size.

Only what the wire format itself defines is here; ``index.py`` knows SCIP's field numbers.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import HybridMapError

VARINT = 0
FIXED64 = 1
LENGTH = 2
FIXED32 = 5

_MAX_VARINT_BYTES = 10
"""A 64-bit value takes at most ten 7-bit groups; an eleventh continuation byte is garbage
(and would otherwise let a hostile file build a huge Python int)."""


class WireError(HybridMapError):
    """A SCIP index (or any protobuf message we read) is malformed or truncated."""


def varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """The varint at ``pos`` (which must end before ``end``) and the position after it."""
    if pos >= end:
        raise WireError(f"truncated varint at byte {pos}")
    byte = buf[pos]
    if byte < 0x80:  # the common case (small numbers, short lengths): one byte
        return byte, pos + 1
    result = byte & 0x7F
    shift = 7
    pos += 1
    while True:
        if pos >= end:
            raise WireError(f"truncated varint at byte {pos}")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift >= 7 * _MAX_VARINT_BYTES:
            raise WireError(f"varint longer than {_MAX_VARINT_BYTES} bytes at byte {pos}")


def signed32(value: int) -> int:
    """An ``int32`` field's value: negative numbers are sent as 64-bit two's complement."""
    value &= 0xFFFFFFFFFFFFFFFF
    if value >= 1 << 63:
        value -= 1 << 64
    if not -(1 << 31) <= value < 1 << 31:
        raise WireError(f"int32 value out of range: {value}")
    return value


def fields(buf: bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """The fields of the message in ``buf[start:end]``: ``(number, wire type, a, b)``.

    For a varint, ``a`` is the value (``b`` is 0); for a length-delimited field, ``buf[a:b]`` holds
    its bytes (a string, a nested message or a packed list), checked to lie inside the message.
    Fixed 32- and 64-bit fields are skipped (SCIP has none we read). Repeated calls on the same
    bytes give the same fields: protobuf's "last value wins" and "repeated fields append" are the
    caller's to apply.
    """
    if not 0 <= start <= end <= len(buf):
        raise WireError(f"message bounds {start}..{end} outside a buffer of {len(buf)} bytes")
    pos = start
    while pos < end:
        key, pos = varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError(f"field number 0 at byte {pos}")
        if wire == VARINT:
            value, pos = varint(buf, pos, end)
            yield number, wire, value, 0
        elif wire == LENGTH:
            length, pos = varint(buf, pos, end)
            stop = pos + length
            if stop > end:
                raise WireError(f"field {number}: {length} bytes at byte {pos} run past the message end ({end})")
            yield number, wire, pos, stop
            pos = stop
        elif wire in (FIXED64, FIXED32):
            pos += 8 if wire == FIXED64 else 4
            if pos > end:
                raise WireError(f"field {number}: truncated fixed-width value")
        else:
            raise WireError(f"field {number}: unsupported wire type {wire} at byte {pos}")


def packed_int32(buf: bytes, start: int, end: int, limit: int) -> list[int] | None:
    """A packed ``repeated int32`` in ``buf[start:end]``; None when it holds more than ``limit``
    values (the caller refuses it without decoding the rest: a range is 3 or 4 numbers)."""
    out: list[int] = []
    pos = start
    while pos < end:
        if len(out) >= limit:
            return None
        value, pos = varint(buf, pos, end)
        out.append(signed32(value) if value >= 1 << 31 else value)
    return out


def text(buf: bytes, start: int, end: int) -> str:
    """A ``string`` field. Invalid UTF-8 is kept reversibly (surrogate escapes), as file names
    that are not UTF-8 are elsewhere in hybridmap; callers compare, they never print it raw."""
    return buf[start:end].decode("utf-8", "surrogateescape")
