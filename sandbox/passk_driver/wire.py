"""Plain data between the judge and the candidate, and the frames that carry it.

Only plain data crosses: None, bool, int (any size), float, complex, str, bytes, and
list, tuple, dict, set and frozenset of these. Types are checked exactly, so a subclass
of int whose __eq__ says yes to everything is not plain data, and neither is a generator
or any object of the candidate's own. The judge decodes what arrives with `decode`
below, which builds nothing but those types and rejects anything else, so no code of the
candidate's can run on the judge's side (there is no pickle or marshal here).

Encoding: one tag byte, then the value.
    N None      T True      F False
    I int       4-byte length, then the two's-complement bytes, big-endian
    D float     8 bytes, IEEE 754 big-endian (nan, inf and -0.0 survive)
    C complex   two such floats
    S str       4-byte length, then UTF-8 (lone surrogates survive, as surrogatepass)
    B bytes     4-byte length, then the bytes
    L list, U tuple, E set, Z frozenset     4-byte count, then the items
    M dict      4-byte count, then key and value, in order

A frame is a 4-byte length and one encoded value.
"""

import os
import struct

MAX_DEPTH = 100
MAX_BYTES = 64 << 20

_LENGTH = struct.Struct(">I")
_FLOAT = struct.Struct(">d")
_COMPLEX = struct.Struct(">dd")


class NotPlainData(ValueError):
    """A value that cannot cross: the message says what it was."""


class Malformed(ValueError):
    """Bytes that are not one well-formed encoded value."""


def describe(value):
    """What a value that cannot cross is, for a message: its type's name (never its
    repr, which may be the candidate's own code)."""
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name}"


def shorten(text, limit=120):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def encode(value):
    """The bytes of `value`, or NotPlainData naming what cannot cross."""
    out = bytearray()
    _encode(value, out, 0)
    if len(out) > MAX_BYTES:
        raise NotPlainData(f"larger than {MAX_BYTES >> 20} MiB")
    return bytes(out)


def _encode(value, out, depth):
    if depth > MAX_DEPTH:
        raise NotPlainData(f"nested deeper than {MAX_DEPTH} levels")
    if len(out) > MAX_BYTES:
        raise NotPlainData(f"larger than {MAX_BYTES >> 20} MiB")
    encoder = _ENCODERS.get(type(value))
    if encoder is None:
        raise NotPlainData(describe(value))
    encoder(value, out, depth)


def _none(value, out, depth):
    out += b"N"


def _bool(value, out, depth):
    out += b"T" if value else b"F"


def _int(value, out, depth):
    data = int.to_bytes(value, (int.bit_length(value) + 8) // 8, "big", signed=True)
    out += b"I" + _LENGTH.pack(len(data)) + data


def _float(value, out, depth):
    out += b"D" + _FLOAT.pack(value)


def _complex(value, out, depth):
    out += b"C" + _COMPLEX.pack(value.real, value.imag)


def _str(value, out, depth):
    data = str.encode(value, "utf-8", "surrogatepass")
    out += b"S" + _LENGTH.pack(len(data)) + data


def _bytes(value, out, depth):
    out += b"B" + _LENGTH.pack(len(value)) + value


def _sequence(tag):
    def encode_items(value, out, depth):
        out += tag + _LENGTH.pack(len(value))
        for item in value:
            _encode(item, out, depth + 1)

    return encode_items


def _dict(value, out, depth):
    out += b"M" + _LENGTH.pack(len(value))
    for key, item in dict.items(value):
        _encode(key, out, depth + 1)
        _encode(item, out, depth + 1)


_ENCODERS = {
    type(None): _none,
    bool: _bool,
    int: _int,
    float: _float,
    complex: _complex,
    str: _str,
    bytes: _bytes,
    list: _sequence(b"L"),
    tuple: _sequence(b"U"),
    set: _sequence(b"E"),
    frozenset: _sequence(b"Z"),
    dict: _dict,
}


def decode(data):
    """The value encoded in `data`, which must hold exactly one; Malformed otherwise."""
    if len(data) > MAX_BYTES:
        raise Malformed(f"larger than {MAX_BYTES >> 20} MiB")
    view = memoryview(data)
    value, end = _decode(view, 0, 0)
    if end != len(view):
        raise Malformed(f"{len(view) - end} bytes after the value")
    return value


def _take(view, at, size):
    end = at + size
    if end > len(view):
        raise Malformed("cut short")
    return view[at:end], end


def _length(view, at):
    field, at = _take(view, at, 4)
    return _LENGTH.unpack(field)[0], at


def _decode(view, at, depth):
    if depth > MAX_DEPTH:
        raise Malformed(f"nested deeper than {MAX_DEPTH} levels")
    tag, at = _take(view, at, 1)
    tag = tag.tobytes()
    if tag == b"N":
        return None, at
    if tag == b"T":
        return True, at
    if tag == b"F":
        return False, at
    if tag == b"I":
        size, at = _length(view, at)
        field, at = _take(view, at, size)
        return int.from_bytes(field, "big", signed=True), at
    if tag == b"D":
        field, at = _take(view, at, 8)
        return _FLOAT.unpack(field)[0], at
    if tag == b"C":
        field, at = _take(view, at, 16)
        real, imag = _COMPLEX.unpack(field)
        return complex(real, imag), at
    if tag in (b"S", b"B"):
        size, at = _length(view, at)
        field, at = _take(view, at, size)
        if tag == b"B":
            return field.tobytes(), at
        try:
            return str(field, "utf-8", "surrogatepass"), at
        except UnicodeDecodeError as error:
            raise Malformed(f"a string that is not UTF-8 ({error.reason})") from None
    if tag in (b"L", b"U", b"E", b"Z", b"M"):
        count, at = _length(view, at)
        # Every item takes at least one byte: a count beyond what is left is a lie,
        # caught before anything is built for it.
        if count > len(view) - at:
            raise Malformed("cut short")
        if tag == b"M":
            return _decode_dict(view, at, depth, count)
        items = []
        for _ in range(count):
            item, at = _decode(view, at, depth + 1)
            items.append(item)
        if tag == b"L":
            return items, at
        if tag == b"U":
            return tuple(items), at
        try:
            return (set(items) if tag == b"E" else frozenset(items)), at
        except TypeError:
            raise Malformed("a set holding an unhashable item") from None
    raise Malformed(f"unknown tag {tag!r}")


def _decode_dict(view, at, depth, count):
    result = {}
    for _ in range(count):
        key, at = _decode(view, at, depth + 1)
        value, at = _decode(view, at, depth + 1)
        try:
            result[key] = value
        except TypeError:
            raise Malformed("a dict with an unhashable key") from None
    return result, at


class Channel:
    """One end of the judge's line to the candidate: frames over a pair of pipes."""

    def __init__(self, read_fd, write_fd):
        self.read_fd = read_fd
        self.write_fd = write_fd

    def send(self, payload):
        data = _LENGTH.pack(len(payload)) + payload
        view = memoryview(data)
        while view:
            view = view[os.write(self.write_fd, view):]

    def receive(self):
        """The next frame's payload, or None if the other end closed its side."""
        header = self._read_exactly(4)
        if header is None:
            return None
        size = _LENGTH.unpack(header)[0]
        if size > MAX_BYTES + 16:
            raise Malformed(f"a frame of {size} bytes, over the {MAX_BYTES >> 20} MiB limit")
        payload = self._read_exactly(size)
        if payload is None:
            raise Malformed("a frame cut short")
        return payload

    def _read_exactly(self, size):
        chunks, wanted = [], size
        while wanted:
            chunk = os.read(self.read_fd, min(wanted, 1 << 20))
            if not chunk:
                return None
            chunks.append(chunk)
            wanted -= len(chunk)
        return b"".join(chunks)
