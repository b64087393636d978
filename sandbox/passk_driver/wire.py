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
import select
import struct
import time

MAX_DEPTH = 100
MAX_BYTES = 64 << 20

_LENGTH = struct.Struct(">I")
_FLOAT = struct.Struct(">d")
_COMPLEX = struct.Struct(">dd")


class NotPlainData(ValueError):
    """A value that cannot cross: the message says what it was."""


class Malformed(ValueError):
    """Bytes that are not one well-formed encoded value."""


class TooLarge(Malformed):
    """A value that would take more memory to build than the reader may spend on it."""

    def __init__(self, budget):
        super().__init__(f"it would take more than {budget >> 20} MiB to hold")
        self.budget = budget


class TimedOut(Exception):
    """No whole frame came before the deadline."""


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
    kind = type(value)
    # The common scalars inline: a call's arguments and answer are mostly these.
    if kind is int:
        data = int.to_bytes(value, (int.bit_length(value) + 8) // 8, "big", signed=True)
        out += b"I" + _LENGTH.pack(len(data)) + data
        return
    if kind is str:
        data = str.encode(value, "utf-8", "surrogatepass")
        out += b"S" + _LENGTH.pack(len(data)) + data
        return
    if kind is float:
        out += b"D" + _FLOAT.pack(value)
        return
    if depth > MAX_DEPTH:
        raise NotPlainData(f"nested deeper than {MAX_DEPTH} levels")
    if len(out) > MAX_BYTES:
        raise NotPlainData(f"larger than {MAX_BYTES >> 20} MiB")
    encoder = _ENCODERS.get(kind)
    if encoder is None:
        raise NotPlainData(describe(value))
    encoder(value, out, depth)


def _none(value, out, depth):
    out += b"N"


def _bool(value, out, depth):
    out += b"T" if value else b"F"


def _complex(value, out, depth):
    out += b"C" + _COMPLEX.pack(value.real, value.imag)


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
    complex: _complex,
    bytes: _bytes,
    list: _sequence(b"L"),
    tuple: _sequence(b"U"),
    set: _sequence(b"E"),
    frozenset: _sequence(b"Z"),
    dict: _dict,
}

_N, _T, _F, _I, _D, _C, _S, _B = b"NTFIDCSB"
_L, _U, _E, _Z, _M = b"LUEZM"
_CONTAINERS = frozenset((_L, _U, _E, _Z, _M))
_unpack_length = _LENGTH.unpack_from
_unpack_float = _FLOAT.unpack_from
_unpack_complex = _COMPLEX.unpack_from


def decode(data, budget=None):
    """The value encoded in `data`, which must hold exactly one; Malformed otherwise, and
    TooLarge if building it would take more than `budget` bytes."""
    if len(data) > MAX_BYTES:
        raise Malformed(f"larger than {MAX_BYTES >> 20} MiB")
    data = bytes(data)
    if budget is not None and len(data) * _MOST_PER_BYTE > budget:
        _measure(data, budget)
    try:
        value, end = _decode(data, 0, 0)
    except (IndexError, struct.error):
        raise Malformed("cut short") from None
    if end != len(data):
        raise Malformed(f"{len(data) - end} bytes after the value")
    return value


# What each value costs to hold, about (CPython 3, 64-bit): the reference to it, the
# object, and per item of a container (sets and dicts keep spare room).
_REFERENCE = 8
_OBJECT = {_I: 36, _S: 57, _B: 41, _D: 24, _C: 32, _N: 0, _T: 0, _F: 0, _L: 56, _U: 40, _E: 216, _Z: 216, _M: 232}
_PER_ITEM = {_L: 8, _U: 8, _E: 32, _Z: 32, _M: 48}
_FIXED = {_D: 8, _C: 16, _N: 0, _T: 0, _F: 0}
# The most memory one byte of an encoding can cost: an empty set is five bytes.
_MOST_PER_BYTE = (_REFERENCE + _OBJECT[_E]) // 5 + 1


def _measure(data, budget):
    """Adds up what the value in `data` would cost to build, without building it: the
    encoding lists every value in order, so one pass over the tags is enough. TooLarge
    past `budget`; bytes that are not an encoding are left for the decoder to refuse."""
    at, total, end = 0, 0, len(data)
    while at < end:
        tag = data[at]
        at += 1
        cost = _OBJECT.get(tag)
        if cost is None:
            return
        total += _REFERENCE + cost
        if tag in _FIXED:
            at += _FIXED[tag]
        elif at + 4 > end:
            return
        else:
            (size,) = _unpack_length(data, at)
            at += 4
            if tag in _PER_ITEM:
                total += size * _PER_ITEM[tag]
            else:
                at += size
                total += size
        if total > budget:
            raise TooLarge(budget)


def _sized(data, at):
    """The field after a length at `at`, and where it ends."""
    (size,) = _unpack_length(data, at)
    start = at + 4
    end = start + size
    if end > len(data):
        raise Malformed("cut short")
    return data[start:end], end


def _decode(data, at, depth):
    tag = data[at]
    at += 1
    if tag == _I:
        field, at = _sized(data, at)
        return int.from_bytes(field, "big", signed=True), at
    if tag == _S:
        field, at = _sized(data, at)
        try:
            return str(field, "utf-8", "surrogatepass"), at
        except UnicodeDecodeError as error:
            raise Malformed(f"a string that is not UTF-8 ({error.reason})") from None
    if tag == _D:
        return _unpack_float(data, at)[0], at + 8
    if tag == _N:
        return None, at
    if tag == _T:
        return True, at
    if tag == _F:
        return False, at
    if tag == _B:
        return _sized(data, at)
    if tag == _C:
        real, imag = _unpack_complex(data, at)
        return complex(real, imag), at + 16
    if tag not in _CONTAINERS:
        raise Malformed(f"unknown tag {bytes([tag])!r}")
    if depth > MAX_DEPTH:
        raise Malformed(f"nested deeper than {MAX_DEPTH} levels")
    (count,) = _unpack_length(data, at)
    at += 4
    # Every item takes at least one byte: a count beyond what is left is a lie, caught
    # before anything is built for it.
    if count > len(data) - at:
        raise Malformed("cut short")
    if tag == _M:
        return _decode_dict(data, at, depth, count)
    items = []
    for _ in range(count):
        item, at = _decode(data, at, depth + 1)
        items.append(item)
    if tag == _L:
        return items, at
    if tag == _U:
        return tuple(items), at
    try:
        return (set(items) if tag == _E else frozenset(items)), at
    except TypeError:
        raise Malformed("a set holding an unhashable item") from None


def _decode_dict(data, at, depth, count):
    result = {}
    for _ in range(count):
        key, at = _decode(data, at, depth + 1)
        value, at = _decode(data, at, depth + 1)
        try:
            result[key] = value
        except TypeError:
            raise Malformed("a dict with an unhashable key") from None
    return result, at


class Channel:
    """One end of the judge's line to the candidate: frames over a pair of pipes. Reads
    are buffered, so that a frame usually takes one system call."""

    def __init__(self, read_fd, write_fd, budget=None):
        self.read_fd = read_fd
        self.write_fd = write_fd
        # The most memory a value received may take to build (see decode).
        self.budget = budget
        self.buffer = b""
        # The payload last received.
        self.last = None

    def send(self, payload):
        data = _LENGTH.pack(len(payload)) + payload
        view = memoryview(data)
        while view:
            view = view[os.write(self.write_fd, view):]

    def receive(self, deadline=None):
        """The next frame's payload, or None if the other end closed its side; TimedOut
        if `deadline` (a time.monotonic() value) passes first."""
        if len(self.buffer) < 4 and not self._fill(4, deadline):
            return None
        (size,) = _LENGTH.unpack_from(self.buffer)
        if size > MAX_BYTES + 16:
            raise Malformed(f"a frame of {size} bytes, over the {MAX_BYTES >> 20} MiB limit")
        if len(self.buffer) < 4 + size and not self._fill(4 + size, deadline):
            raise Malformed("a frame cut short")
        payload = self.buffer[4:4 + size]
        self.buffer = self.buffer[4 + size:]
        self.last = payload
        return payload

    def _fill(self, size, deadline):
        """Reads until the buffer holds `size` bytes; False if the other end closed first."""
        chunks, have = [self.buffer], len(self.buffer)
        while have < size:
            if deadline is not None:
                self._wait(deadline, chunks)
            chunk = os.read(self.read_fd, max(size - have, 1 << 16))
            if not chunk:
                self.buffer = b"".join(chunks)
                return False
            chunks.append(chunk)
            have += len(chunk)
        self.buffer = b"".join(chunks)
        return True

    def _wait(self, deadline, chunks):
        """Waits until there is something to read, keeping what was read so far."""
        poller = select.poll()
        poller.register(self.read_fd, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not poller.poll(remaining * 1000):
                if time.monotonic() >= deadline:
                    self.buffer = b"".join(chunks)
                    raise TimedOut()
                continue
            return
