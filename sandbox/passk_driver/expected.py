"""A phase's expected outputs in the judge, kept as their wire encodings.

An output of up to LARGE bytes is decoded when the phase is loaded, and every answer is
compared with it by value, as EvalPlus compares. A larger one (HumanEval+'s of tens of
megabytes, MBPP+'s Mbpp/255 of more than a gigabyte, whose objects no sample's memory
holds) stays bytes, compressed when it was recorded (`stored`), and an answer whose
encoding is the same bytes passes without either being decoded, where that is what a
comparison by value would say (`equal_bytes`). Where the bytes differ, both are decoded
and compared by value as for a small output.
"""

import re
import zlib

from . import evalplus, wire

# Outputs whose encoding is longer are kept as bytes, and recorded compressed.
LARGE = 1 << 20
# A recorded output that begins with this byte is compressed (zlib's first byte at every
# level); the encoding of a value begins with its tag, never this.
_COMPRESSED = 0x78
_PIECE = 1 << 22
# Bytes without which an encoding holds no value that may be unequal to a copy of
# itself: the tags of numpy values and Decimals (NaN), and the first two bytes of a NaN
# (or an infinity) as a big-endian double. Finding one proves nothing: the value is
# then decoded to tell.
_TAGS_MAYBE_SELF_UNEQUAL = (b"A", b"G", b"X")
_NAN_STARTS = (b"\x7f", b"\xff")
_NAN = re.compile(rb"[\x7f\xff][\xf0-\xff]")


def _maybe_self_unequal(piece):
    # Searched byte by byte (memchr) first: a regular expression of classes is slow
    # over a gigabyte.
    if any(tag in piece for tag in _TAGS_MAYBE_SELF_UNEQUAL):
        return True
    return any(start in piece for start in _NAN_STARTS) and _NAN.search(piece) is not None


def stored(encoding):
    """What the harness keeps of an output: a large one compressed, if that makes it
    smaller (`encoding` may be a memoryview)."""
    if len(encoding) <= LARGE:
        return bytes(encoding)
    compressed = zlib.compress(encoding, 1)
    return compressed if len(compressed) < len(encoding) else bytes(encoding)


def _pieces(data):
    """The encoding of a kept output, in pieces of about _PIECE bytes."""
    if not data or data[0] != _COMPRESSED:
        view = memoryview(data)
        for start in range(0, len(view), _PIECE):
            yield bytes(view[start:start + _PIECE])
        return
    inflate = zlib.decompressobj()
    rest = data
    while rest:
        yield inflate.decompress(rest, _PIECE)
        rest = inflate.unconsumed_tail
    tail = inflate.flush()
    if tail:
        yield tail
    if not inflate.eof:
        raise wire.Malformed("a compressed expected output cut short")


class _Large:
    """An output kept as bytes, what was learned of it cached for the samples that follow."""

    def __init__(self, data):
        self.data = data
        self.size = sum(len(piece) for piece in _pieces(data)) if data[0] == _COMPRESSED else len(data)
        self.self_equal = None
        self.floats = None

    def encoding(self):
        return self.data if self.data[0] != _COMPRESSED else b"".join(_pieces(self.data))

    def equals(self, answer):
        """Whether `answer` (a memoryview) is the same bytes, read a piece at a time."""
        if len(answer) != self.size:
            return False
        at = 0
        for piece in _pieces(self.data):
            # As bytes: memoryviews compare item by item, a hundred times slower.
            if bytes(answer[at:at + len(piece)]) != piece:
                return False
            at += len(piece)
        return True


class ExpectedOutputs:
    """Each input's expected output: a value, or a large one's encoding."""

    def __init__(self, kept):
        self.kept = kept

    @classmethod
    def recorded(cls, encodings):
        """From the outputs as recorded (see `stored`)."""
        return cls([_Large(data) if len(data) > LARGE or data[:1] == bytes([_COMPRESSED]) else wire.decode(data)
                    for data in encodings])

    def __len__(self):
        return len(self.kept)

    def value(self, index, budget):
        """The output of input `index`; TooLarge if it would take more than `budget` to hold."""
        kept = self.kept[index]
        if type(kept) is not _Large:
            return kept
        return wire.decode(kept.encoding(), budget)

    def equal_bytes(self, index, answer, budget):
        """Whether the answer's encoding `answer` is the expected output's bytes, of a
        value that equals a copy of itself: so that comparing the two by value, as
        EvalPlus does, would say they are equal. False says nothing either way."""
        kept = self.kept[index]
        if type(kept) is not _Large or not kept.equals(memoryview(answer)):
            return False
        if kept.self_equal is None:
            kept.self_equal = _self_equal(kept, budget)
        return kept.self_equal

    def is_floats(self, index, budget):
        """EvalPlus's is_floats of the output of input `index`, mostly told from its
        bytes: only a list or tuple whose first item is a float is decoded."""
        kept = self.kept[index]
        if type(kept) is not _Large:
            return evalplus.is_floats(kept)
        if kept.floats is None:
            kept.floats = _is_floats(kept, budget)
        return kept.floats


def _self_equal(kept, budget):
    """Whether the output, decoded twice, makes two equal values. Where its bytes cannot
    hold a NaN, a numpy value or a Decimal, it does without decoding: every other value
    rebuilt from the same bytes equals its copy."""
    carried = b""
    for piece in _pieces(kept.data):
        if _maybe_self_unequal(carried + bytes(piece[:1])) or _maybe_self_unequal(piece):
            break
        carried = bytes(piece[-1:])
    else:
        return True
    data = kept.encoding()
    half = budget // 2 if budget is not None else None
    try:
        return bool(wire.decode(data, half) == wire.decode(data, half))
    except Exception:
        # Too large to decode twice, or equality that raises: compared by value, as
        # EvalPlus compares.
        return False


_FLOAT_ITEM = re.compile(rb"(?:D[\x00-\xff]{8})*\Z")


def _is_floats(kept, budget):
    head = next(_pieces(kept.data))
    tag = head[0]
    if tag == ord("D"):
        return True
    if tag in b"LU":
        # A float is a D, or a G (numpy.float64 is a float); any other first item
        # decides that not all items are floats.
        if len(head) < 6 or head[5] not in b"DG":
            return False
        data = kept.encoding()
        if _FLOAT_ITEM.match(data, 5) and len(data) > 5:
            return True
    if tag in b"LUPAG":
        return evalplus.is_floats(wire.decode(kept.encoding(), budget))
    return False
