"""A phase's expected outputs in the judge, kept as their wire encodings.

Each output is kept as the bytes of its encoding and decoded only when an answer must be
compared with it by value. An answer whose encoding is the same bytes passes without
either being decoded, where that is what a comparison by value would say, as EvalPlus
compares (`equal_bytes`); most answers are, and an answer that is not is decoded and
compared by value. What the judge learns of an output is kept for the samples that
follow.

A small output whose encoder saw that it equals a copy of itself (no NaN, numpy value or
Decimal in it: see wire.send_streamed) is recorded after one byte that says so, so that
no judge searches its bytes to tell again.

An output whose encoding is larger than LARGE (HumanEval+'s of tens of megabytes, MBPP+'s
Mbpp/255 of more than a gigabyte, whose objects no sample's memory holds) is recorded
with what judging needs of it, so that the judge need not read it again (`stored`): its
size and digest, to tell an answer of the same bytes, whether it equals a copy of itself
and whether EvalPlus's is_floats holds, then the encoding itself, compressed where that
makes it smaller, read only where an answer's bytes differ.
"""

import hashlib
import re
import struct
import zlib

from . import evalplus, wire

# Outputs whose encoding is longer are recorded with their digest.
LARGE = 1 << 20
# A recorded large output begins with this byte; an encoding begins with its tag, a
# letter, never this.
_DIGESTED = 0x01
# A small recorded output known to equal a copy of itself begins with this byte.
_SELF_EQUAL_SMALL = 0x02
_HEADER = struct.Struct(">BQ32sB")
_SELF_EQUAL, _FLOATS, _COMPRESSED = 1, 2, 4
_PIECE = 1 << 22
# Bytes without which an encoding holds no value that may be unequal to a copy of
# itself: the tags of numpy values and Decimals (NaN), and the first two bytes of a NaN
# (or an infinity) as a big-endian double. Finding one proves nothing: the value is
# then decoded to tell.
_TAGS_MAYBE_SELF_UNEQUAL = (b"A", b"G", b"X")
_NAN_STARTS = (b"\x7f", b"\xff")
_NAN = re.compile(rb"[\x7f\xff][\xf0-\xff]")
# Encodings up to this long are searched with one expression.
_SEARCHED_WHOLE = 1 << 16
_MAYBE_SELF_UNEQUAL = re.compile(rb"[AGX]|[\x7f\xff][\xf0-\xff]")
# A list or tuple of floats: its tag and count, then D and eight bytes for each item.
_FLOAT_ITEMS = re.compile(rb"(?:D[\x00-\xff]{8})*\Z")
# For each byte: whether it may be a NaN's first byte, or its second.
_NAN_FIRST = bytes(int(byte & 0x7F == 0x7F) for byte in range(256))
_NAN_SECOND = bytes(int(byte >= 0xF0) for byte in range(256))


def _digest(encoding):
    # SHA-256, which CPUs with the SHA extensions hash at twice BLAKE2's pace.
    return hashlib.sha256(encoding).digest()


def stored(encoding, budget=None, maybe_unequal=None):
    """What the harness keeps of an output, from its encoding (which may be a memoryview):
    a small one as it is (after a byte that says it equals a copy of itself, where the
    encoder saw so), a large one with what judging needs of it (see the module's
    docs); deciding that may take `budget` to decode it. `maybe_unequal`, where the
    encoder told it (see wire.send_streamed), says whether the value may be unequal to a
    copy of itself: where it may not, nothing is read to tell."""
    if len(encoding) <= LARGE:
        if maybe_unequal is False:
            return bytes([_SELF_EQUAL_SMALL]) + encoding
        return bytes(encoding)
    self_equal = True if maybe_unequal is False else _self_equal(encoding, budget)
    flags = (_SELF_EQUAL if self_equal else 0) | (_FLOATS if _is_floats(encoding, budget) else 0)
    payload = zlib.compress(encoding, 1)
    if len(payload) < len(encoding):
        flags |= _COMPRESSED
    else:
        payload = encoding
    return _HEADER.pack(_DIGESTED, len(encoding), _digest(encoding), flags) + payload


class _Output:
    """One expected output as recorded, and what was learned of it."""

    __slots__ = ("data", "size", "digest", "self_equal", "floats", "decoded")

    def __init__(self, data):
        self.digest = self.decoded = None
        if data[:1] == bytes([_DIGESTED]):
            _, self.size, self.digest, flags = _HEADER.unpack_from(data)
            self.data = memoryview(data)[_HEADER.size:]
            if flags & _COMPRESSED:
                self.data = _Compressed(self.data)
            self.self_equal, self.floats = bool(flags & _SELF_EQUAL), bool(flags & _FLOATS)
        elif data[:1] == bytes([_SELF_EQUAL_SMALL]):
            self.data = data[1:]
            self.size = len(self.data)
            self.self_equal, self.floats = True, None
        else:
            self.data, self.size = data, len(data)
            self.self_equal = self.floats = None

    def encoding(self):
        if type(self.data) is _Compressed:
            return self.data.inflated()
        return bytes(self.data)

    def equals(self, answer):
        """Whether `answer` (a memoryview) is the same bytes."""
        if len(answer) != self.size:
            return False
        if self.digest is not None:
            return _digest(answer) == self.digest
        # As bytes: memoryviews compare item by item, a hundred times slower.
        return bytes(answer) == self.data

    def value(self, budget):
        if self.decoded is not None:
            return self.decoded[0]
        value = wire.decode(self.encoding(), budget)
        if self.digest is None:
            # Small: kept decoded for the samples that follow, as the comparison reads it
            # and never changes it.
            self.decoded = (value,)
        return value


class _Compressed:
    """A large output's encoding as recorded, compressed."""

    def __init__(self, data):
        self.data = data

    def inflated(self):
        inflate = zlib.decompressobj()
        pieces, rest = [], self.data
        while rest:
            pieces.append(inflate.decompress(rest, _PIECE))
            rest = inflate.unconsumed_tail
        pieces.append(inflate.flush())
        if not inflate.eof:
            raise wire.Malformed("a compressed expected output cut short")
        return b"".join(pieces)


class ExpectedOutputs:
    """Each input's expected output: a value, or a recorded output (see `recorded`)."""

    def __init__(self, kept):
        self.kept = kept

    @classmethod
    def recorded(cls, records):
        """From the outputs as recorded (see `stored`)."""
        return cls([_Output(data) for data in records])

    def __len__(self):
        return len(self.kept)

    def mapped(self, function):
        """Outputs kept as values, each made `function(value)`."""
        return ExpectedOutputs([function(self.value(index, None)) for index in range(len(self.kept))])

    def value(self, index, budget):
        """The output of input `index`; TooLarge if it would take more than `budget` to hold."""
        kept = self.kept[index]
        if type(kept) is not _Output:
            return kept
        return kept.value(budget)

    def large(self, index):
        """Whether the output of input `index` is a large one (see `stored`)."""
        kept = self.kept[index]
        return type(kept) is _Output and kept.size > LARGE

    def equal_bytes(self, index, answer, budget):
        """Whether the answer's encoding `answer` is the expected output's bytes, of a
        value that equals a copy of itself: so that comparing the two by value, as
        EvalPlus does, would say they are equal. False says nothing either way."""
        kept = self.kept[index]
        if type(kept) is not _Output or not kept.equals(memoryview(answer)):
            return False
        if kept.self_equal is None:
            kept.self_equal = _self_equal(kept.data, budget)
        return kept.self_equal

    def is_floats(self, index, budget):
        """EvalPlus's is_floats of the output of input `index`, mostly told from its
        bytes: only a list or tuple whose first item is a float is decoded."""
        kept = self.kept[index]
        if type(kept) is not _Output:
            return evalplus.is_floats(kept)
        if kept.floats is None:
            kept.floats = _is_floats(kept.data, budget)
        return kept.floats


def _maybe_self_unequal(encoding):
    """Whether `encoding` (bytes or a memoryview) holds a byte that may mean a value
    unequal to a copy of itself, read a piece at a time: a quick search that finds such
    bytes in strings too (see _walk_finds_self_unequal)."""
    if len(encoding) <= _SEARCHED_WHOLE:
        # Most outputs are a few bytes: one search, where the loop below costs more than
        # the call it judges.
        return _MAYBE_SELF_UNEQUAL.search(encoding) is not None
    view, carried = memoryview(encoding), b""
    for start in range(0, len(view), _PIECE):
        piece = bytes(view[start:start + _PIECE])
        # Searched byte by byte (memchr) first: a regular expression of classes is slow
        # over a gigabyte.
        if any(tag in piece for tag in _TAGS_MAYBE_SELF_UNEQUAL):
            return True
        if any(first in carried + piece for first in _NAN_STARTS) and _NAN.search(carried + piece) is not None:
            return True
        carried = piece[-1:]
    return False


_unpack_length = struct.Struct(">I").unpack_from
# Tags followed by a count of the items that follow, or by nothing of their own (their
# parts follow as values).
_COUNTED = frozenset(b"LUEZMKOYQP")
_BARE = frozenset(b"NTFRWJV")
_S, _I, _B, _D, _C = b"SIBDC"


def _walk_finds_self_unequal(encoding):
    """Whether the values of `encoding` include a NaN (of a float or a complex), a numpy
    value or a Decimal, told from their tags, skipping every string's, int's and bytes'
    payload by its length: the byte search finds a G in "Green" too, and an output of
    strings taken for one that may be unequal to itself was decoded twice to tell, which
    may not fit the budget that holds it once. A pass over the tags builds no value and
    takes a fraction of a decoding's time. Bytes that are not an encoding may hold
    anything."""
    view = memoryview(encoding)
    at, end, length = 0, len(view), _unpack_length
    try:
        while at < end:
            tag = view[at]
            if tag == _S or tag == _I or tag == _B:
                at += 5 + length(view, at + 1)[0]
            elif tag in _COUNTED:
                at += 5
            elif tag == _D:
                if _nan_at(view, at + 1):
                    return True
                at += 9
            elif tag in _BARE:
                at += 1
            elif tag == _C:
                if _nan_at(view, at + 1) or _nan_at(view, at + 9):
                    return True
                at += 17
            else:
                return True
    except (IndexError, struct.error):
        return True
    return False


def _nan_at(view, at):
    """Whether the big-endian double at `at` is a NaN or an infinity."""
    return view[at] & 0x7F == 0x7F and view[at + 1] >= 0xF0


def _floats_without_nan(encoding):
    """Whether `encoding` is a list or tuple of floats none of which is a NaN or an
    infinity, told a column of bytes at a time: a million floats' bytes hold the first
    two bytes of a NaN somewhere by chance."""
    if len(encoding) < 5 or encoding[0] not in b"LU" or not _FLOAT_ITEMS.match(encoding, 5):
        return False
    data = bytes(encoding)
    first, second = data[6::9].translate(_NAN_FIRST), data[7::9].translate(_NAN_SECOND)
    return not int.from_bytes(first, "big") & int.from_bytes(second, "big")


def _self_equal(encoding, budget):
    """Whether the value of `encoding`, decoded twice, makes two equal values. Where its
    bytes cannot hold a NaN, a numpy value or a Decimal, it does without decoding: every
    other value rebuilt from the same bytes equals its copy."""
    if not _maybe_self_unequal(encoding) or _floats_without_nan(encoding) or not _walk_finds_self_unequal(encoding):
        return True
    half = budget // 2 if budget is not None else None
    try:
        return bool(wire.decode(encoding, half) == wire.decode(encoding, half))
    except Exception:
        # Too large to decode twice, or equality that raises: compared by value, as
        # EvalPlus compares.
        return False


def _is_floats(encoding, budget):
    tag = encoding[0]
    if tag == ord("D"):
        return True
    if tag in b"LU":
        # A float is a D, or a G (numpy.float64 is a float); any other first item
        # decides that not all items are floats.
        if len(encoding) < 6 or encoding[5] not in b"DG":
            return False
        if _FLOAT_ITEMS.match(encoding, 5):
            return True
    if tag in b"LUPAG":
        return evalplus.is_floats(wire.decode(encoding, budget))
    return False
