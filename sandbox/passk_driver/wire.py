"""Plain data between the judge and the candidate, and the frames that carry it.

What crosses is data, rebuilt on the other side by this module alone, never objects: no
pickle or marshal, so no code of the sender's runs where a value is decoded.

- Plain values: None, bool, int (any size), float, complex, str, bytes, and list, tuple,
  dict, set and frozenset of what crosses.
- Standard-library values, rebuilt as the same types from their data: Counter,
  OrderedDict, defaultdict, deque, namedtuple instances, Fraction, Decimal, the datetime
  types, and numpy arrays and scalars where numpy is importable (never of object bytes).
- Builtin and standard-library types and functions, and standard-library modules, by
  name: the receiver looks the name up in its own interpreter.
- A value of a subclass (one the candidate wrote) of any of these crosses as the nearest
  such base, taken with that base's own methods: an int subclass whose __eq__ says yes
  to everything is just its int.
- Anything else crosses only where the sender keeps handles (see handles.py): as an
  opaque reference to the object, which stays in the candidate's process. Elsewhere it is
  refused with NotPlainData.

Encoding: one tag byte, then the value.
    N None      T True      F False
    I int       4-byte length, then the two's-complement bytes, big-endian
    D float     8 bytes, IEEE 754 big-endian (nan, inf and -0.0 survive)
    C complex   two such floats
    S str       4-byte length, then UTF-8 (lone surrogates survive, as surrogatepass)
    B bytes     4-byte length, then the bytes
    L list, U tuple, E set, Z frozenset     4-byte count, then the items
    M dict, K Counter, O OrderedDict        4-byte count, then key and value, in order
    Y defaultdict   4-byte count, the default factory, then keys and values
    Q deque         4-byte count, maxlen (N or I), then the items
    P namedtuple    4-byte count, the type's name (S), the field names (S each), the items
    R Fraction      numerator and denominator (I each)
    X Decimal       its text (S)
    W datetime      the type's name (S: date, time, datetime, timedelta, timezone), then
                    the arguments it is built from (U)
    A numpy array   4-byte length, the raw bytes in C order, the dtype (S), the shape (U);
                    an array of objects has no bytes, dtype "|O", and a list of its items
    G numpy scalar  4-byte length, the raw bytes, the dtype (S)
    J by name       the module (S) and qualified name (S) of a builtin or standard-library
                    type or function
    V module        a standard-library module's name (S)
    H handle        to the judge: the handle's number (I), what it is (S: class, module,
                    object, opaque), its type's name (S), then its type (J or H)
    h handle        back to the candidate: the handle's number (I)

A frame is a 4-byte length and one encoded value. An answer whose encoding outgrows
STREAM_PART is sent as it is made rather than built whole (see send_streamed): a frame
holding STREAMED, then frames of at most STREAM_PART bytes, each a part (`+` and the
next bytes of the encoding), ending with one that says the encoding is whole (`.`) or
was given up (`!`, and the frame after it is the answer instead).
"""

import array
import builtins
import collections
import datetime
import decimal
import fcntl
import fractions
import itertools
import os
import re
import select
import struct
import sys
import termios
import time
import types

MAX_DEPTH = 100
# A frame's length is four bytes; past that a value cannot be sent at all. What bounds
# the receiver's memory is its budget (see decode).
MAX_FRAME = (1 << 32) - 1
# An answer's encoding longer than this is streamed, in parts of this many bytes.
STREAM_PART = 1 << 20

_LENGTH = struct.Struct(">I")
_FLOAT = struct.Struct(">d")
_COMPLEX = struct.Struct(">dd")
# A count the kernel gives as a C int.
_COUNT = struct.Struct("i")


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
    return describe_name(kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}")


def describe_name(name):
    """A type's name with its article: "an int", "a Pair"."""
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name}"


def shorten(text, limit=120):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def encode(value, handles=None):
    """The bytes of `value`, or NotPlainData naming what cannot cross. `handles`, where
    given, turns what is not data into a handle (see handles.py)."""
    out = bytearray()
    _encode(value, out, 0, handles)
    if len(out) > MAX_FRAME - 16:
        raise NotPlainData(f"larger than {MAX_FRAME >> 20} MiB")
    return bytes(out)


# How many of a list's or tuple's items a miss of _Stream.repeated looks at to learn.
_LEARNED_PER_MISS = 1024
# How long an answer's encoding grows before _Stream.repeated is tried: learning a list's
# items costs about as much as encoding them, which pays only in a long answer; a short
# one (most are a few dozen bytes) would pay it on every call.
_LEARNS_AFTER = 1 << 16


class _Stream(bytearray):
    """The encoding of a value as it is made, sent in parts once it outgrows STREAM_PART:
    the sender then never holds more than a part of it besides the value.

    Most answers are a few bytes: what only a large one needs is made when first needed,
    the rest are the class's own until changed."""

    streaming = False
    sent = 0
    hits = misses = 0
    # Whether the value holds what may be unequal to a copy of itself: a NaN (or, told
    # from a column of bytes, an infinity), a numpy value or a Decimal.
    unequal = False
    # The encodings of small values met, by id, made at the first list or tuple of at
    # least eight items once the encoding is _LEARNS_AFTER long (None once given up);
    # the values are kept, so that no id is reused while this lives.
    known = ()

    def __init__(self, channel):
        self.channel = channel

    def repeated(self, items, iterate):
        """Appends the encoding of `items` (iterated by `iterate`) if each is a str, int or
        float this encoding met before: an answer of millions of tuples of a few strings
        repeats them. False, having appended nothing, otherwise."""
        known = self.known
        if known is None:
            return False
        if known == ():
            known = self.known = {}
            # Strings also by their value, which finds them in half the time: a string
            # equals only a string of the same characters, and so of the same encoding
            # (ints and floats, where 1 == 1.0 == True, go by identity alone).
            self.strings = {}
            self.kept = []
        try:
            self += b"".join(map(self.strings.__getitem__, iterate(items)))
            self.hits += 1
            return True
        except (KeyError, TypeError):
            pass
        try:
            self += b"".join(map(known.__getitem__, map(id, iterate(items))))
            self.hits += 1
            return True
        except KeyError:
            pass
        self.misses += 1
        if self.misses > 64 and self.misses > self.hits:
            # Not an answer of repeated values: no more time spent looking.
            self.known = None
            return False
        # Every item met is learned, not only the first few: in a list of combinations
        # (Mbpp/255's 1.7 million tuples of 77 strings) a tuple's new string comes last.
        for item in itertools.islice(iterate(items), _LEARNED_PER_MISS):
            if len(known) >= 4096:
                break
            if type(item) in (str, int, float) and id(item) not in known:
                encoded = bytearray()
                _encode(item, encoded, 0, None)
                if len(encoded) <= 64:
                    known[id(item)] = bytes(encoded)
                    self.kept.append(item)
                    if type(item) is str:
                        self.strings[item] = known[id(item)]
        return False

    def drain(self):
        if not self.streaming:
            self.channel.send(STREAMED)
            self.streaming = True
        view = memoryview(self)
        for start in range(0, len(view), STREAM_PART - 1):
            self.channel.send_parts(PART_MORE, view[start:start + STREAM_PART - 1])
        self.sent += len(view)
        view.release()
        del self[:]


def send_streamed(channel, value, handles=None):
    """Sends the frame of `value` on `channel`, streamed if its encoding outgrows
    STREAM_PART; NotPlainData, after the parts already sent are given up, if it cannot
    cross. Returns whether the value may be unequal to a copy of itself (see _Stream),
    which its encoder sees for nothing where reading its bytes again costs a pass over
    them."""
    return _send_streamed(channel, b"", value, 0, handles)


# What the encoding of `("return", value)` begins with.
_RETURNED_HEAD = b"U" + _LENGTH.pack(2) + b"S" + _LENGTH.pack(6) + b"return"


def send_returned(channel, value):
    """send_streamed of `("return", value)`, a call's answer of data alone, its head made
    once rather than for every answer (most are a few bytes, and a call a few
    microseconds)."""
    return _send_streamed(channel, _RETURNED_HEAD, value, 1, None)


def _send_streamed(channel, head, value, depth, handles):
    out = _Stream(channel)
    out += head
    try:
        _encode(value, out, depth, handles)
        if out.sent + len(out) > MAX_FRAME - 16:
            raise NotPlainData(f"larger than {MAX_FRAME >> 20} MiB")
        if len(out) >= STREAM_PART:
            # A value that outgrew a part is streamed, as a list or tuple that did is.
            out.drain()
    except BaseException:
        if out.streaming:
            channel.send(PART_GIVEN_UP)
        raise
    if out.streaming:
        out.drain()
        channel.send(PART_WHOLE)
    else:
        channel.send(out)
    return out.unequal


def _encode(value, out, depth, handles):
    kind = type(value)
    # The common scalars inline: a call's arguments and answer are mostly these.
    if kind is int:
        if -_SMALL <= value < _SMALL:
            out += _SMALL_INTS[value]
        else:
            _int(value, out)
        return
    if kind is str:
        _str(value, out)
        return
    if kind is float:
        out += b"D" + _FLOAT.pack(value)
        if value != value and type(out) is _Stream:
            out.unequal = True
        return
    if depth > MAX_DEPTH:
        raise NotPlainData(f"nested deeper than {MAX_DEPTH} levels")
    encoder = _ENCODERS.get(kind)
    if encoder is None:
        encoder = _encoder_of_other(value, handles)
    encoder(value, out, depth, handles)


def _int(value, out):
    data = int.to_bytes(value, (int.bit_length(value) + 8) // 8, "big", signed=True)
    out += b"I" + _LENGTH.pack(len(data)) + data


# The encodings of the ints from -_SMALL up to _SMALL, made once: an answer is mostly
# small numbers, whose encoding is otherwise most of its cost. Indexed by the int itself,
# the negative ones from the end.
_SMALL = 128


def _small_int(value):
    out = bytearray()
    _int(value, out)
    return bytes(out)


_SMALL_INTS = [_small_int(value) for value in (*range(_SMALL), *range(-_SMALL, 0))]


def _str(value, out):
    data = str.encode(value, "utf-8", "surrogatepass")
    out += b"S" + _LENGTH.pack(len(data)) + data


def _as_int(value, out, depth, handles):
    _int(value, out)


def _as_str(value, out, depth, handles):
    _str(value, out)


def _as_float(value, out, depth, handles):
    value = float.__float__(value)
    out += b"D" + _FLOAT.pack(value)
    if value != value and type(out) is _Stream:
        out.unequal = True


def _none(value, out, depth, handles):
    out += b"N"


def _bool(value, out, depth, handles):
    out += b"T" if value else b"F"


def _complex(value, out, depth, handles):
    value = complex.__complex__(value)
    out += b"C" + _COMPLEX.pack(value.real, value.imag)
    if value != value and type(out) is _Stream:
        out.unequal = True


def _bytes(value, out, depth, handles):
    value = bytes.__bytes__(value) if type(value) is not bytes else value
    out += b"B" + _LENGTH.pack(len(value)) + value


def _sequence(tag, base):
    length, iterate = base.__len__, base.__iter__

    def encode_items(value, out, depth, handles):
        count = length(value)
        out += tag + _LENGTH.pack(count)
        if type(out) is _Stream:
            if count < 8 or (out.sent == 0 and len(out) < _LEARNS_AFTER) or not out.repeated(value, iterate):
                _stream_items(iterate(value), out, depth, handles)
            if len(out) >= STREAM_PART:
                out.drain()
            return
        for item in iterate(value):
            _encode(item, out, depth + 1, handles)

    return encode_items


def _stream_items(items, out, depth, handles):
    """Encodes each of `items` into the stream `out`. A tuple of strings met before is
    encoded here, without the calls that encode one tuple: an answer may be millions of
    them (Mbpp/255's combinations), each encoded as the tuple's encoder would."""
    # The strings met so far, by value (see _Stream.repeated), which fills as it goes.
    strings = out.strings if type(out.known) is dict else None
    for item in items:
        if strings is not None and type(item) is tuple and len(item) >= 8:
            try:
                out += b"U" + _LENGTH.pack(len(item)) + b"".join(map(strings.__getitem__, item))
            except (KeyError, TypeError):
                pass
            else:
                out.hits += 1
                if len(out) >= STREAM_PART:
                    out.drain()
                continue
        _encode(item, out, depth + 1, handles)
        if strings is None:
            # Learning may have begun within the item, once the answer grew long enough.
            if type(out.known) is dict:
                strings = out.strings
        elif out.known is None:
            strings = None


# Lists and tuples of at least this many numbers are encoded and decoded a column of
# bytes at a time, as runs of floats and of ints of one width (see _numbers_first).
_RUN = 16
_BIG_ENDIAN = sys.byteorder == "big"


def _numbers_first(tag, encode_items):
    """A list's or tuple's encoder that makes the encoding of a long one of floats and
    ints whole columns at a time: an answer may be a million numbers. The bytes are those
    of encoding each item in turn."""

    def encode_numbers(value, out, depth, handles):
        # A subclass's own __len__ is the candidate's code: it is never asked.
        if type(value) in (list, tuple) and len(value) >= _RUN:
            runs = _number_runs(value)
            if runs is not None:
                encoded, may_hold_nan = runs
                out += tag + _LENGTH.pack(len(value))
                out += encoded
                if may_hold_nan and type(out) is _Stream:
                    out.unequal = True
                return
        encode_items(value, out, depth, handles)

    return encode_numbers


def _number_runs(items):
    """The encoding of `items` if every one is a float or an int, in long runs of floats
    and of ints, and whether a float among them may be a NaN (an infinity counts too);
    None otherwise."""
    runs = _runs_of_numbers(items)
    if runs is None:
        return None
    out = bytearray()
    may_hold_nan = False
    for floats, start, end in runs:
        run = items if end - start == len(items) else items[start:end]
        encoded = None
        if end - start >= _RUN:
            if floats:
                packed = _packed_floats(run)
                may_hold_nan = may_hold_nan or _may_hold_nan(packed)
                encoded = _columns(b"D", packed, 8, 8, len(run))
            else:
                encoded = _ints(run)
        if encoded is None:
            for item in run:
                _encode(item, out, 0, None)
            may_hold_nan = may_hold_nan or (floats and any(item != item for item in run))
        else:
            out += encoded
    return out, may_hold_nan


def _runs_of_numbers(items):
    """`items` as runs of floats and of ints, `(floats, start, end)` each, if every one is
    a float or an int (not a bool) and the runs are long (at least _RUN items on
    average); None otherwise. Each step is a pass in C over the items' types."""
    if type(items[0]) not in (float, int):
        return None
    types = list(map(type, items))
    count = len(types)
    if types.count(float) + types.count(int) != count:
        return None
    runs = []
    at = 0
    while at < count:
        kind = types[at]
        try:
            end = types.index(int if kind is float else float, at)
        except ValueError:
            end = count
        runs.append((kind is float, at, end))
        if len(runs) * _RUN > count:
            return None
        at = end
    return runs


# For each byte: whether it may be a big-endian double's first byte where its exponent is
# all ones (a NaN or an infinity), or its second.
_EXPONENT_FIRST = bytes(int(byte & 0x7F == 0x7F) for byte in range(256))
_EXPONENT_SECOND = bytes(int(byte >= 0xF0) for byte in range(256))


def _may_hold_nan(packed):
    """Whether big-endian doubles `packed` may hold a NaN (an infinity counts too), told
    from their bytes a column at a time."""
    first = packed[0::8].translate(_EXPONENT_FIRST)
    second = packed[1::8].translate(_EXPONENT_SECOND)
    return bool(int.from_bytes(first, "big") & int.from_bytes(second, "big"))


def _packed_floats(items):
    """Floats `items` as big-endian doubles, one after another."""
    values = array.array("d", items)
    if not _BIG_ENDIAN:
        values.byteswap()
    return values.tobytes()


def _ints(items):
    """The encoding of ints that all take the same number of bytes, up to 8; None if
    they do not."""
    bits = set(map(int.bit_length, items))
    width = (max(bits) + 8) // 8
    if (min(bits) + 8) // 8 != width or width > 8:
        return None
    values = array.array("q", items)
    if not _BIG_ENDIAN:
        values.byteswap()
    return _columns(b"I" + _LENGTH.pack(width), values.tobytes(), 8, width, len(items))


def _columns(head, packed, size, width, count):
    """`count` records of `head` and then the last `width` bytes of each `size`-byte value
    of `packed`, built a column of bytes at a time."""
    stride = len(head) + width
    out = bytearray(stride * count)
    for at, byte in enumerate(head):
        out[at::stride] = bytes((byte,)) * count
    for at in range(width):
        out[len(head) + at::stride] = packed[size - width + at::size]
    return out


def _pairs(tag):
    def encode_pairs(value, out, depth, handles):
        out += tag + _LENGTH.pack(dict.__len__(value))
        _items(value, out, depth, handles)

    return encode_pairs


def _items(value, out, depth, handles):
    for key, item in dict.items(value):
        _encode(key, out, depth + 1, handles)
        _encode(item, out, depth + 1, handles)


def _ordered_dict(value, out, depth, handles):
    # An OrderedDict's order is its own, kept apart from the dict's it is built on.
    out += b"O" + _LENGTH.pack(dict.__len__(value))
    for key in collections.OrderedDict.__iter__(value):
        _encode(key, out, depth + 1, handles)
        _encode(dict.__getitem__(value, key), out, depth + 1, handles)


def _default_dict(value, out, depth, handles):
    out += b"Y" + _LENGTH.pack(dict.__len__(value))
    _encode(value.default_factory, out, depth + 1, handles)
    _items(value, out, depth, handles)


def _deque(value, out, depth, handles):
    out += b"Q" + _LENGTH.pack(collections.deque.__len__(value))
    _encode(value.maxlen, out, depth + 1, handles)
    for item in collections.deque.__iter__(value):
        _encode(item, out, depth + 1, handles)


def _namedtuple(kind):
    fields = kind._fields
    name = kind.__name__

    def encode_fields(value, out, depth, handles):
        out += b"P" + _LENGTH.pack(tuple.__len__(value))
        _str(name, out)
        for field in fields:
            _str(field, out)
        for item in tuple.__iter__(value):
            _encode(item, out, depth + 1, handles)

    return encode_fields


def _fraction(value, out, depth, handles):
    out += b"R"
    _int(int(value.numerator), out)
    _int(int(value.denominator), out)


def _decimal(value, out, depth, handles):
    out += b"X"
    if type(out) is _Stream:
        out.unequal = True
    _str(decimal.Decimal.__str__(value), out)


def _when(name, fields):
    def encode_when(value, out, depth, handles):
        out += b"W"
        _str(name, out)
        _encode(tuple(getattr(value, field) for field in fields), out, depth + 1, handles)

    return encode_when


def _timezone(value, out, depth, handles):
    out += b"W"
    _str("timezone", out)
    offset = value.utcoffset(None)
    name = value.tzname(None)
    # A timezone made without a name says its offset for one; it is sent without.
    if name == datetime.timezone(offset).tzname(None):
        name = None
    _encode((offset, name), out, depth + 1, handles)


_WHEN = {
    datetime.date: ("date", ("year", "month", "day")),
    datetime.time: ("time", ("hour", "minute", "second", "microsecond", "tzinfo", "fold")),
    datetime.datetime: ("datetime", ("year", "month", "day", "hour", "minute", "second", "microsecond", "tzinfo",
                                     "fold")),
    datetime.timedelta: ("timedelta", ("days", "seconds", "microseconds")),
}


_ENCODERS = {
    int: _as_int,
    str: _as_str,
    float: _as_float,
    type(None): _none,
    bool: _bool,
    complex: _complex,
    bytes: _bytes,
    list: _numbers_first(b"L", _sequence(b"L", list)),
    tuple: _numbers_first(b"U", _sequence(b"U", tuple)),
    set: _sequence(b"E", set),
    frozenset: _sequence(b"Z", frozenset),
    dict: _pairs(b"M"),
    collections.Counter: _pairs(b"K"),
    collections.OrderedDict: _ordered_dict,
    collections.defaultdict: _default_dict,
    collections.deque: _deque,
    fractions.Fraction: _fraction,
    decimal.Decimal: _decimal,
    datetime.timezone: _timezone,
    **{kind: _when(name, fields) for kind, (name, fields) in _WHEN.items()},
}
# The types whose values cross by their data, for subclasses to be sent as.
_BASES = frozenset(_ENCODERS) - {type(None), bool}


def _is_namedtuple(kind):
    """A class made by collections.namedtuple: a direct subclass of tuple that lists its
    fields."""
    fields = kind.__dict__.get("_fields")
    return (kind.__bases__ == (tuple,) and type(fields) is tuple and all(type(f) is str for f in fields)
            and "_make" in kind.__dict__)


def _encoder_of_other(value, handles):
    """How a value of a type without an encoder of its own crosses: by its nearest base
    that crosses, as numpy data, by name, or as a handle."""
    kind = type(value)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, (numpy.ndarray, numpy.generic)):
        return _numpy_value
    if _crosses_by_name(value) and _name_of(value) is not None:
        return _by_name
    if kind is types.ModuleType and _is_standard(value.__name__):
        return _module
    for base in kind.__mro__:
        if base in _BASES:
            return _ENCODERS[base]
        if _is_namedtuple(base):
            return _namedtuple(base)
    if handles is not None:
        return handles.encoder(value)
    raise NotPlainData(describe(value))


def _crosses_by_name(value):
    """Whether `value` is of what may cross by name: a type or a function."""
    kind = type(value)
    return isinstance(value, type) or kind is types.BuiltinFunctionType or kind is types.FunctionType


def _by_name(value, out, depth, handles):
    module, name = _name_of(value)
    out += b"J"
    _str(module, out)
    _str(name, out)


def _module(value, out, depth, handles):
    out += b"V"
    _str(value.__name__, out)


def _name_of(value):
    """(module, qualified name) of a builtin or standard-library type or function that
    can be found again by those names; None for anything else."""
    module, name = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if type(module) is not str or type(name) is not str or not _by_name_allowed(module, name):
        return None
    try:
        return (module, name) if _resolve(module, name) is value else None
    except Exception:
        return None


def _numpy_value(value, out, depth, handles):
    numpy = sys.modules["numpy"]
    if type(out) is _Stream:
        out.unequal = True
    if isinstance(value, numpy.generic):
        dtype = value.dtype
        if dtype.hasobject or not _DTYPE.match(dtype.str):
            raise NotPlainData(describe(value))
        data = value.tobytes()
        out += b"G" + _LENGTH.pack(len(data)) + data
        _str(dtype.str, out)
        return
    array = numpy.ndarray.view(value, numpy.ndarray)
    if array.dtype.hasobject and array.dtype.fields is None and array.dtype.subdtype is None:
        out += b"A" + _LENGTH.pack(0)
        _str("|O", out)
        _encode(tuple(array.shape), out, depth + 1, handles)
        _encode(array.ravel().tolist(), out, depth + 1, handles)
        return
    if not _DTYPE.match(array.dtype.str):
        raise NotPlainData(f"a numpy array of dtype {shorten(str(array.dtype), 40)}")
    data = array.tobytes()
    out += b"A" + _LENGTH.pack(len(data)) + data
    _str(array.dtype.str, out)
    _encode(tuple(array.shape), out, depth + 1, handles)


# The dtypes whose raw bytes are data: numbers, booleans, times and text, never objects.
_DTYPE = re.compile(r"[<>|=][biufcmMSU][0-9]{1,5}(\[[0-9]*[a-zA-Z]{1,2}\])?\Z")


# Standard-library modules that do something when imported: never imported on a sender's word.
_NOT_IMPORTED = frozenset(("this", "antigravity", "__hello__", "__phello__", "idlelib", "turtledemo", "tkinter",
                           "turtle", "webbrowser", "pydoc", "ensurepip", "venv", "lib2to3"))


def _standard_names():
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return frozenset(names) | {"builtins"}
    # Python 3.9: the modules built in, and those in the standard library's directory.
    import sysconfig

    found = set(sys.builtin_module_names) | {"builtins"}
    for path in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}:
        for directory in (path, os.path.join(path, "lib-dynload")):
            try:
                entries = os.listdir(directory)
            except OSError:
                continue
            for entry in entries:
                if entry != "site-packages":
                    found.add(entry.split(".", 1)[0])
    return frozenset(found)


_STANDARD = _standard_names()


def _is_standard(module):
    top = module.split(".", 1)[0]
    return top in _STANDARD and top not in _NOT_IMPORTED


# What never crosses by name: the builtins and modules that run code, reach files,
# processes or the interpreter's state. Such an object of the candidate's stays a handle,
# called in its own process.
_NOT_BY_NAME = frozenset(("eval", "exec", "compile", "open", "__import__", "breakpoint", "input", "exit", "quit",
                          "help", "globals", "locals", "vars", "setattr", "delattr", "getattr", "__build_class__",
                          "memoryview"))
_NO_NAMES_FROM = frozenset(("os", "posix", "nt", "sys", "subprocess", "shutil", "ctypes", "_ctypes", "importlib",
                            "pickle", "_pickle", "marshal", "code", "codeop", "runpy", "pty", "signal", "_signal",
                            "socket", "_socket", "multiprocessing", "threading", "_thread", "io", "_io", "gc",
                            "inspect", "types", "pathlib", "tempfile", "resource", "faulthandler", "sysconfig", "site",
                            "atexit", "posixpath", "ntpath", "fcntl", "mmap", "select", "selectors", "asyncio",
                            "concurrent", "ssl", "urllib", "http", "ftplib", "smtplib", "sqlite3", "zipimport",
                            "pkgutil", "imp", "dbm", "shelve", "glob", "fnmatch", "linecache", "tracemalloc", "trace",
                            "bdb", "pdb", "cProfile", "profile", "timeit", "unittest", "doctest", "logging"))


def _by_name_allowed(module, qualname):
    top = module.split(".", 1)[0]
    if not _is_standard(module) or top in _NO_NAMES_FROM:
        return False
    return not (module == "builtins" and qualname in _NOT_BY_NAME)


def _resolve(module, qualname):
    """What `module.qualname` names here: a standard-library object, imported by this
    process itself."""
    if not _by_name_allowed(module, qualname):
        raise Malformed(f"{shorten(module, 60)}.{shorten(qualname, 60)} does not cross by name")
    value = import_named(module)
    for part in qualname.split("."):
        # Public names only: a private one or a dunder (`__globals__`) would reach the
        # receiver's own internals.
        if not part.isidentifier() or part.startswith("_"):
            raise Malformed("a name that is not a public qualified name")
        value = getattr(value, part)
    return value


def standard_module(name):
    """The standard-library module `name`, imported here; None if there is none by that
    name or it cannot be imported."""
    try:
        return _import_module(name)
    except Malformed:
        return None


def _import_module(name):
    """A standard-library module, imported here."""
    if not _is_standard(name):
        raise Malformed(f"{shorten(name, 60)} is not a standard-library module")
    return import_named(name)


def import_named(name):
    """Module `name`, imported here on the other side's word; Malformed if it may not be.
    A module already imported is given as it is. Any other must be public in every part:
    a private module or a package's `__main__` may run code on import, and
    `unittest.__main__` runs unittest's discovery from the working directory, which
    imports whatever test files the candidate left there. A private top-level module
    (`_heapq`, where `heapq.heappush` says it lives) is a library. Whatever the import
    raises, `SystemExit` included, refuses the name rather than ending this process."""
    import importlib

    parts = name.split(".")
    if not all(part.isidentifier() for part in parts) or name == "__main__":
        raise Malformed(f"{shorten(name, 60)} is not a module's name")
    if name in sys.modules:
        return sys.modules[name]
    if parts[0].startswith("__") or any(part.startswith("_") for part in parts[1:]):
        raise Malformed(f"module {shorten(name, 60)} is private and is not imported on the candidate's word")
    try:
        return importlib.import_module(name)
    except BaseException as error:
        raise Malformed(f"module {shorten(name, 60)} cannot be imported: {type(error).__name__}: {error}") from None


_N, _T, _F, _I, _D, _C, _S, _B = b"NTFIDCSB"
# The frames of a streamed answer (see send_streamed).
STREAMED = b"U\x00\x00\x00\x01S\x00\x00\x00\x08streamed"
PART_MORE, PART_WHOLE, PART_GIVEN_UP = b"+", b".", b"!"
_L, _U, _E, _Z, _M = b"LUEZM"
_K, _O, _Y, _Q, _P, _R, _X, _W, _A, _G, _J, _V, _H, _h = b"KOYQPRXWAGJVHh"
# How a message, a tuple, begins.
MESSAGE_HEAD = _U
_CONTAINERS = frozenset((_L, _U, _E, _Z, _M, _K, _O, _Y, _Q, _P))
_unpack_length = _LENGTH.unpack_from
_unpack_float = _FLOAT.unpack_from
_unpack_complex = _COMPLEX.unpack_from


def decode(data, budget=None, handles=None):
    """The value encoded in `data`, which must hold exactly one; Malformed otherwise, and
    TooLarge if building it would take more than `budget` bytes. Handles are refused
    unless `handles` is given (see handles.py)."""
    if type(data) is not bytes:
        data = memoryview(data).cast("B")
    if budget is not None and len(data) * _MOST_PER_BYTE > budget:
        _measure(data, budget)
    try:
        value, end = _Decoder(data, handles).value(0, 0)
    except (IndexError, struct.error):
        raise Malformed("cut short") from None
    if end != len(data):
        raise Malformed(f"{len(data) - end} bytes after the value")
    return value


# What each value costs to hold, about (CPython 3, 64-bit): the reference to it, the
# object, and per item of a container (sets and dicts keep spare room).
_REFERENCE = 8
_OBJECT = {_I: 36, _S: 57, _B: 41, _D: 24, _C: 32, _N: 0, _T: 0, _F: 0, _L: 56, _U: 40, _E: 216, _Z: 216, _M: 232,
           _K: 232, _O: 400, _Y: 240, _Q: 640, _P: 40, _R: 56, _X: 104, _W: 64, _A: 112, _G: 32, _J: 0, _V: 0,
           _H: 160, _h: 0}
_PER_ITEM = {_L: 8, _U: 8, _E: 32, _Z: 32, _M: 48, _K: 48, _O: 152, _Y: 48, _Q: 8, _P: 8}
_FIXED = {_D: 8, _C: 16, _N: 0, _T: 0, _F: 0, _R: 0, _X: 0, _W: 0, _J: 0, _V: 0, _H: 0, _h: 0}
# The most memory one byte of an encoding can cost: an empty deque is five bytes and a
# tag for its maxlen.
_MOST_PER_BYTE = (_REFERENCE + _OBJECT[_Q]) // 6 + 2


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


def _number_run(data, at, most):
    """The floats, or the ints of one width, encoded one after another from `at`, up to
    `most` of them, read a column of bytes at a time; and where they end."""
    if data[at] == _D:
        head, width, fill = b"D", 8, None
    else:
        if at + 5 > len(data):
            return [], at
        (width,) = _unpack_length(data, at + 1)
        if not 1 <= width <= 8:
            return [], at
        head, fill = b"I" + _LENGTH.pack(width), width < 8
    stride = len(head) + width
    count = min(most, (len(data) - at) // stride)
    end = at + stride * count
    for offset, byte in enumerate(head):
        column = bytes(data[at + offset:end:stride])
        count = min(count, len(column) - len(column.lstrip(bytes((byte,)))))
    end = at + stride * count
    packed = bytearray(8 * count)
    for offset in range(width):
        packed[8 - width + offset::8] = data[at + len(head) + offset:end:stride]
    if fill:
        # Two's complement: the bytes above the value's are its sign's.
        signs = bytes(data[at + len(head):end:stride]).translate(_SIGN_BYTES)
        for offset in range(8 - width):
            packed[offset::8] = signs
    values = array.array("d" if head == b"D" else "q", packed)
    if not _BIG_ENDIAN:
        values.byteswap()
    return values.tolist(), end


_SIGN_BYTES = bytes(0 if byte < 0x80 else 0xFF for byte in range(256))


# Namedtuple types rebuilt here, by name and fields, so that many values of one type
# make one class. Only small ones are kept: the judge outlives its samples, and a
# candidate's types of long names would pile up here.
_NAMEDTUPLES = {}
_NAMEDTUPLES_KEPT = 256
_NAMEDTUPLE_KEPT_CHARS = 1024


class _Decoder:
    def __init__(self, data, handles):
        self.data = data
        self.handles = handles

    def sized(self, at):
        """The field after a length at `at`, and where it ends."""
        data = self.data
        (size,) = _unpack_length(data, at)
        start = at + 4
        end = start + size
        if end > len(data):
            raise Malformed("cut short")
        return data[start:end], end

    def value(self, at, depth):
        data = self.data
        tag = data[at]
        at += 1
        if tag == _I:
            field, at = self.sized(at)
            return int.from_bytes(field, "big", signed=True), at
        if tag == _S:
            field, at = self.sized(at)
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
            field, at = self.sized(at)
            return bytes(field), at
        if tag == _C:
            real, imag = _unpack_complex(data, at)
            return complex(real, imag), at + 16
        if depth > MAX_DEPTH:
            raise Malformed(f"nested deeper than {MAX_DEPTH} levels")
        if tag in _CONTAINERS:
            (count,) = _unpack_length(data, at)
            at += 4
            # Every item takes at least one byte: a count beyond what is left is a lie,
            # caught before anything is built for it.
            if count > len(data) - at:
                raise Malformed("cut short")
            return _CONTAINER_DECODERS[tag](self, at, depth, count)
        decoder = _OTHER_DECODERS.get(tag)
        if decoder is None:
            raise Malformed(f"unknown tag {bytes([tag])!r}")
        return decoder(self, at, depth)

    def typed(self, at, depth, kind, what):
        value, at = self.value(at, depth + 1)
        if type(value) is not kind:
            raise Malformed(f"{what} that is not {describe(kind())[2:]}")
        return value, at

    def items(self, at, depth, count):
        items = []
        data = self.data
        # Where a run of numbers may start that is worth reading whole (see _number_run).
        retry = 0
        while len(items) < count:
            left = count - len(items)
            if left >= _RUN and len(items) >= retry and data[at] in (_D, _I):
                run, at = _number_run(data, at, left)
                items += run
                if len(run) >= _RUN:
                    continue
                retry = len(items) + _RUN
                if len(items) == count:
                    break
            item, at = self.value(at, depth + 1)
            items.append(item)
        return items, at

    def list(self, at, depth, count):
        return self.items(at, depth, count)

    def tuple(self, at, depth, count):
        items, at = self.items(at, depth, count)
        return tuple(items), at

    def set(self, at, depth, count, kind=set):
        items, at = self.items(at, depth, count)
        try:
            return kind(items), at
        except TypeError:
            raise Malformed("a set holding an unhashable item") from None

    def frozenset(self, at, depth, count):
        return self.set(at, depth, count, frozenset)

    def pairs(self, at, depth, count, result):
        for _ in range(count):
            key, at = self.value(at, depth + 1)
            value, at = self.value(at, depth + 1)
            try:
                result[key] = value
            except TypeError:
                raise Malformed("a dict with an unhashable key") from None
        return result, at

    def dict(self, at, depth, count):
        return self.pairs(at, depth, count, {})

    def counter(self, at, depth, count):
        return self.pairs(at, depth, count, collections.Counter())

    def ordered_dict(self, at, depth, count):
        return self.pairs(at, depth, count, collections.OrderedDict())

    def default_dict(self, at, depth, count):
        factory, at = self.value(at, depth + 1)
        if factory is not None and not callable(factory):
            raise Malformed("a defaultdict whose default factory cannot be called")
        return self.pairs(at, depth, count, collections.defaultdict(factory))

    def deque(self, at, depth, count):
        maxlen, at = self.value(at, depth + 1)
        if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
            raise Malformed("a deque whose maxlen is not a count")
        items, at = self.items(at, depth, count)
        return collections.deque(items, maxlen), at

    def namedtuple(self, at, depth, count):
        name, at = self.typed(at, depth, str, "a namedtuple's name")
        fields = []
        for _ in range(count):
            field, at = self.typed(at, depth, str, "a namedtuple's field name")
            fields.append(field)
        items, at = self.items(at, depth, count)
        key = (name, tuple(fields))
        kind = _NAMEDTUPLES.get(key)
        if kind is None:
            try:
                kind = collections.namedtuple(name, fields)
            except (ValueError, TypeError) as error:
                raise Malformed(f"a namedtuple that cannot be made: {shorten(str(error), 80)}") from None
            small = len(name) + sum(map(len, fields)) <= _NAMEDTUPLE_KEPT_CHARS
            if small and len(_NAMEDTUPLES) < _NAMEDTUPLES_KEPT:
                _NAMEDTUPLES[key] = kind
        return kind._make(items), at

    def fraction(self, at, depth):
        numerator, at = self.typed(at, depth, int, "a fraction's numerator")
        denominator, at = self.typed(at, depth, int, "a fraction's denominator")
        if denominator <= 0:
            raise Malformed("a fraction whose denominator is not positive")
        return fractions.Fraction(numerator, denominator), at

    def decimal(self, at, depth):
        text, at = self.typed(at, depth, str, "a decimal")
        try:
            return decimal.Decimal(text), at
        except (decimal.InvalidOperation, ValueError):
            raise Malformed("a decimal that is not a number") from None

    def when(self, at, depth):
        name, at = self.typed(at, depth, str, "a datetime type")
        arguments, at = self.typed(at, depth, tuple, "a datetime's data")
        kind = _WHEN_TYPES.get(name)
        if kind is None:
            raise Malformed(f"no datetime type {shorten(name, 40)!r}")
        try:
            if kind is datetime.timezone:
                return datetime.timezone(*arguments[:1]) if arguments[1] is None else kind(*arguments), at
            if kind is datetime.timedelta or kind is datetime.date:
                return kind(*arguments), at
            *fields, fold = arguments
            return kind(*fields, fold=fold), at
        except (TypeError, ValueError, OverflowError, IndexError) as error:
            raise Malformed(f"a {name} that cannot be made: {shorten(str(error), 80)}") from None

    def numpy_array(self, at, depth):
        field, at = self.sized(at)
        dtype, at = self.typed(at, depth, str, "a numpy dtype")
        shape, at = self.typed(at, depth, tuple, "a numpy shape")
        numpy = _numpy()
        if not all(type(n) is int and n >= 0 for n in shape) or len(shape) > 64:
            raise Malformed("a numpy shape that is not a tuple of sizes")
        size = 1
        for n in shape:
            size *= n
        if dtype == "|O":
            items, at = self.typed(at, depth, list, "a numpy array's items")
            if len(items) != size or field:
                raise Malformed("a numpy array whose items do not fill its shape")
            array = numpy.empty(len(items), dtype=object)
            for index, item in enumerate(items):
                array[index] = item
            return array.reshape(shape), at
        kind = _dtype(numpy, dtype)
        if len(field) != size * kind.itemsize:
            raise Malformed("a numpy array whose bytes do not fill its shape")
        return numpy.frombuffer(bytearray(field), dtype=kind).reshape(shape), at

    def numpy_scalar(self, at, depth):
        field, at = self.sized(at)
        dtype, at = self.typed(at, depth, str, "a numpy dtype")
        numpy = _numpy()
        kind = _dtype(numpy, dtype)
        if len(field) != kind.itemsize:
            raise Malformed("a numpy scalar of the wrong size")
        return numpy.frombuffer(field, dtype=kind)[0], at

    def by_name(self, at, depth):
        module, at = self.typed(at, depth, str, "a module name")
        name, at = self.typed(at, depth, str, "a qualified name")
        try:
            value = _resolve(module, name)
        except Malformed:
            raise
        except Exception as error:
            raise Malformed(f"{shorten(module, 60)}.{shorten(name, 60)} cannot be found: "
                            f"{type(error).__name__}") from None
        # Only a type or function found where it says it lives, as the sender's encoder
        # checks too: a path through another module's attributes (`reprlib.builtins.exec`,
        # `shlex.os.system`) would reach what never crosses by name.
        if not _crosses_by_name(value) or _name_of(value) != (module, name):
            raise Malformed(f"{shorten(module, 60)}.{shorten(name, 60)} is not a type or function of that name")
        return value, at

    def module(self, at, depth):
        name, at = self.typed(at, depth, str, "a module name")
        return _import_module(name), at

    def handle(self, at, depth):
        if self.handles is None:
            raise Malformed("a handle where none may be")
        number, at = self.typed(at, depth, int, "a handle's number")
        what, at = self.typed(at, depth, str, "what a handle is")
        name, at = self.typed(at, depth, str, "a handle's type name")
        kind, at = self.value(at, depth + 1)
        return self.handles.received(number, what, name, kind), at

    def handle_back(self, at, depth):
        if self.handles is None:
            raise Malformed("a handle where none may be")
        number, at = self.typed(at, depth, int, "a handle's number")
        return self.handles.returned(number), at


_CONTAINER_DECODERS = {
    _L: _Decoder.list, _U: _Decoder.tuple, _E: _Decoder.set, _Z: _Decoder.frozenset, _M: _Decoder.dict,
    _K: _Decoder.counter, _O: _Decoder.ordered_dict, _Y: _Decoder.default_dict, _Q: _Decoder.deque,
    _P: _Decoder.namedtuple,
}
_OTHER_DECODERS = {
    _R: _Decoder.fraction, _X: _Decoder.decimal, _W: _Decoder.when, _A: _Decoder.numpy_array,
    _G: _Decoder.numpy_scalar, _J: _Decoder.by_name, _V: _Decoder.module, _H: _Decoder.handle,
    _h: _Decoder.handle_back,
}
_WHEN_TYPES = {"date": datetime.date, "time": datetime.time, "datetime": datetime.datetime,
               "timedelta": datetime.timedelta, "timezone": datetime.timezone}


def _numpy():
    try:
        import numpy
    except ImportError:
        raise Malformed("a numpy value, and numpy cannot be imported here") from None
    return numpy


def _dtype(numpy, text):
    if not _DTYPE.match(text):
        raise Malformed(f"a numpy dtype that is not numbers or text: {shorten(text, 40)!r}")
    try:
        kind = numpy.dtype(text)
    except TypeError:
        raise Malformed(f"no numpy dtype {shorten(text, 40)!r}") from None
    if kind.hasobject or kind.fields is not None or kind.subdtype is not None:
        raise Malformed("a numpy dtype that is not numbers or text")
    return kind


def whole_answer(channel, first, deadline=None):
    """The answer that begins with frame `first`: `first` itself, or where it says the
    answer is streamed, the parts that follow joined into the encoding they make (or,
    were they given up, the frame sent instead). None if the sender hung up; TooLarge
    once the parts outgrow the channel's budget, Malformed for a frame that is not a part."""
    if first is None or first != STREAMED:
        return first
    whole = bytearray()
    while True:
        part = channel.receive(deadline)
        if part is None:
            return None
        marker = bytes(part[:1])
        if marker == PART_MORE:
            # A view: slicing a part (bytes, where it came with the next one's start) would
            # copy its megabyte first.
            whole += memoryview(part)[1:]
            if channel.budget is not None and len(whole) > channel.budget:
                raise TooLarge(channel.budget)
        elif marker == PART_WHOLE and len(part) == 1:
            return whole
        elif marker == PART_GIVEN_UP and len(part) == 1:
            return channel.receive(deadline)
        else:
            raise Malformed("a part of a streamed answer that is not one")


# Frames longer than this are checked to be messages before they are read.
_LARGE_FRAME = 1 << 20
# How long a reader awaiting the answer to a call, with more calls posted after it, sleeps
# once if it finds nothing come yet, before it waits on the pipe: the candidate, on the
# same CPU, answers a run of the calls posted meanwhile, where a reader that waited at
# once was woken, and the candidate put aside, by each answer. An answer's arrival is
# when it is read, so this much later.
_NAP = 0.0001
# Posted frames written by one system call, at most.
_WRITTEN_TOGETHER = 64


class Channel:
    """One end of the judge's line to the candidate: frames over a pair of pipes. Reads
    are buffered, so that a frame usually takes one system call.

    The judge may post frames (calls) ahead of the answers it waits for: they are written
    as the pipe takes them, while it waits, never in a write that blocks, so neither end
    can be left writing to the other while the other writes too (see calls.py)."""

    def __init__(self, read_fd, write_fd, budget=None, large_heads=(MESSAGE_HEAD,)):
        self.read_fd = read_fd
        self.write_fd = write_fd
        # The most memory a value received may take to build (see decode): a frame
        # longer than that is refused before it is read.
        self.budget = budget
        # The first bytes a frame longer than _LARGE_FRAME may begin with (see receive).
        self.large_heads = large_heads
        self.buffer = b""
        # The payload last received, when the read that brought its last byte was made
        # (time.monotonic()), and when the first byte of the frame it answers was
        # written, the first moment the other end could see any of that frame (see
        # receive's `after`).
        self.last = None
        self.last_arrived = None
        self.last_shown = None
        # How many bytes reads have brought in all, and for the reads whose bytes are not
        # all received yet, how many had come in all after each and when it was made.
        self.received = 0
        self.reads = collections.deque()
        # Frames posted and not yet written whole, as what is left of each; how many were
        # posted, and for each written whole and not yet answered, how many bytes had
        # come by then, read or waiting in the pipe (see receive); for each frame begun
        # and not yet answered, when its first byte was written.
        self.outgoing = collections.deque()
        self.posted = 0
        self.written = 0
        self.received_when_written = {}
        self.shown_at = {}
        # The other end stopped reading: what is posted is dropped.
        self.unread = False
        # Whether reads return at once rather than wait (see _before_read).
        self.reads_nonblocking = False
        # Whether a read that finds nothing sleeps a little before it waits (see _NAP).
        self.nap = False

    def send(self, payload):
        size = len(payload)
        if size > _LARGE_FRAME:
            self.send_parts(payload)
            return
        data = _LENGTH.pack(size) + payload
        written = os.write(self.write_fd, data)
        if written < len(data):
            self._write(memoryview(data)[written:])

    def send_parts(self, *parts):
        """Sends one frame made of `parts`, joined as they are written: a large payload is
        never copied to put its length before it."""
        size = sum(len(part) for part in parts)
        if size <= _LARGE_FRAME:
            self._write(_LENGTH.pack(size) + b"".join(parts))
            return
        self._write(_LENGTH.pack(size))
        for part in parts:
            self._write(part)

    def _write(self, data):
        view = memoryview(data)
        while view:
            view = view[os.write(self.write_fd, view):]

    def post(self, payload):
        """Queues a frame to be written as the other end reads, without blocking; returns
        its number (0 for the first posted), for `receive(after=...)`. What is posted is
        written when the poster next waits to receive, the frames posted since together:
        a write per frame would wake the other end for each."""
        if self.posted == 0:
            os.set_blocking(self.write_fd, False)
        self.outgoing.append(memoryview(_LENGTH.pack(len(payload)) + payload))
        self.posted += 1
        return self.posted - 1

    def push(self):
        """Writes what the pipe takes of the posted frames. What had come by then, read or
        still waiting in the pipe, answers no frame this write completes (see receive)."""
        while self.outgoing:
            came = self.received + self._unread()
            # Taken before the write: none of its bytes can be seen sooner.
            began = time.monotonic()
            try:
                count = os.writev(self.write_fd, list(itertools.islice(self.outgoing, _WRITTEN_TOGETHER)))
            except BlockingIOError:
                return
            except BrokenPipeError:
                self.unread = True
                self.outgoing.clear()
                return
            while count:
                head = self.outgoing[0]
                # A frame is shown from its first byte on, not once written whole: the
                # other end can read the head of a call whose tail the pipe has no room
                # for yet (or that it leaves unread to keep it out), and begin on it.
                self.shown_at.setdefault(self.written, began)
                if count < len(head):
                    self.outgoing[0] = head[count:]
                    return
                count -= len(head)
                self.outgoing.popleft()
                self.received_when_written[self.written] = came
                self.written += 1

    def _unread(self):
        """How many bytes have come and wait in the pipe, not yet read."""
        return _COUNT.unpack(fcntl.ioctl(self.read_fd, termios.FIONREAD, bytes(_COUNT.size)))[0]

    def receive(self, deadline=None, after=None):
        """The next frame's payload, or None if the other end closed its side; TimedOut
        if `deadline` (a time.monotonic() value) passes first, TooLarge for a frame
        longer than the budget.

        With `after`, the number of a posted frame, the frame returned is the answer to
        it: it is waited for only once that frame is written whole, and Malformed if any
        of it came before then, since the other end cannot have answered what it had not
        read (None if the other end stopped reading before it was written)."""
        # Napping pays only where the other end has calls after this one to answer.
        self.nap = after is not None and self.posted - 1 > after
        if after is not None:
            if not self._written_whole(after, deadline):
                return None
            if self.received - len(self.buffer) < self.received_when_written.pop(after):
                raise Malformed(_EARLY)
            self.last_shown = self.shown_at.pop(after)
        if len(self.buffer) < 4 and not self._fill(4, deadline):
            return None
        (size,) = _LENGTH.unpack_from(self.buffer)
        if self.budget is not None and size > self.budget:
            raise TooLarge(self.budget)
        if size > _LARGE_FRAME:
            # Every message is a tuple (or, from the judge, a call of marshal data): bytes
            # that say otherwise are refused before the reader waits for gigabytes that
            # may never come.
            if len(self.buffer) < 5 and not self._fill(5, deadline):
                raise Malformed("a frame cut short")
            if self.buffer[4] not in self.large_heads:
                raise Malformed(f"a frame of {size} bytes that is not a message")
        if len(self.buffer) < 4 + size and not self._fill(4 + size, deadline):
            raise Malformed("a frame cut short")
        if len(self.buffer) == 4 + size:
            payload, self.buffer = self.buffer, b""
            payload = memoryview(payload)[4:]
        else:
            payload = self.buffer[4:4 + size]
            self.buffer = self.buffer[4 + size:]
        self.last = payload
        self.last_arrived = self._arrival(self.received - len(self.buffer))
        return payload

    def _arrival(self, end):
        """When the read was made that brought byte `end` (counted from the first byte
        received): reads are kept until the bytes they brought are all received."""
        reads = self.reads
        while reads[0][0] < end:
            reads.popleft()
        return reads[0][1]

    def _fill(self, size, deadline):
        """Reads until the buffer holds `size` bytes; False if the other end closed first.
        A large frame is read into one buffer of its size, never copied whole again."""
        have = len(self.buffer)
        if size - have > (1 << 20):
            return self._fill_large(size, deadline)
        chunks = [self.buffer]
        napped = not self.nap
        while have < size:
            self._before_read(deadline, chunks)
            try:
                chunk = os.read(self.read_fd, max(size - have, 1 << 16))
            except BlockingIOError:
                if not napped:
                    napped = True
                    time.sleep(_NAP)
                    continue
                self._wait(deadline, chunks)
                continue
            if not chunk:
                self.buffer = b"".join(chunks)
                return False
            self._arrived(len(chunk))
            chunks.append(chunk)
            have += len(chunk)
        self.buffer = b"".join(chunks)
        return True

    def _fill_large(self, size, deadline):
        buffer = bytearray(size)
        have = len(self.buffer)
        buffer[:have] = self.buffer
        view = memoryview(buffer)
        while have < size:
            try:
                self._before_read(deadline, None)
                count = os.readv(self.read_fd, [view[have:]])
            except BlockingIOError:
                try:
                    self._wait(deadline, None)
                except TimedOut:
                    self.buffer = bytes(view[:have])
                    raise
                continue
            except TimedOut:
                self.buffer = bytes(view[:have])
                raise
            if not count:
                self.buffer = bytes(view[:have])
                return False
            self._arrived(count)
            have += count
        view.release()
        self.buffer = buffer
        return True

    def _before_read(self, deadline, chunks):
        """Writes what was posted; and where a deadline or frames still to be written are
        to be watched while waiting, makes reads return at once, so that what has come
        is read without a wait first (a read that finds nothing waits, then reads again).
        TimedOut once the deadline has passed, whatever has come, keeping what was read."""
        if deadline is not None and time.monotonic() >= deadline:
            if chunks is not None:
                self.buffer = b"".join(chunks)
            raise TimedOut()
        if self.outgoing:
            self.push()
        if (deadline is not None or self.outgoing) and not self.reads_nonblocking:
            os.set_blocking(self.read_fd, False)
            self.reads_nonblocking = True

    def _arrived(self, count):
        self.received += count
        self.reads.append((self.received, time.monotonic()))

    def _wait(self, deadline, chunks):
        """Waits until there is something to read (or, with no `deadline`, for ever),
        keeping what was read so far, and writing what was posted as the pipe takes it."""
        poller = select.poll()
        poller.register(self.read_fd, select.POLLIN)
        pushing = bool(self.outgoing)
        if pushing:
            poller.register(self.write_fd, select.POLLOUT)
        while True:
            try:
                ready = _poll(poller, deadline)
            except TimedOut:
                if chunks is not None:
                    self.buffer = b"".join(chunks)
                raise
            if any(fd == self.read_fd for fd, _ in ready):
                return
            if pushing and ready:
                self.push()
                if not self.outgoing:
                    poller.unregister(self.write_fd)
                    pushing = False

    def _written_whole(self, number, deadline):
        """Waits until posted frame `number` is written whole, writing the frames before
        it as the pipe takes them; False if the other end stopped reading first. Every
        frame before it was answered, so anything the other end sends meanwhile answers
        what it has not read yet: Malformed, and it is not kept."""
        if self.written <= number and not self.unread:
            # Mostly the pipe takes it at once, and no wait is needed.
            self.push()
        if self.written > number:
            return True
        poller = select.poll()
        poller.register(self.read_fd, select.POLLIN)
        poller.register(self.write_fd, select.POLLOUT)
        while self.written <= number:
            if self.unread:
                return False
            if self.buffer:
                raise Malformed(_EARLY)
            ready = _poll(poller, deadline)
            if any(fd == self.read_fd for fd, _ in ready):
                if not os.read(self.read_fd, 1 << 16):
                    return False
                raise Malformed(_EARLY)
            self.push()
        return True


_EARLY = "an answer that came before its call was made"


def _poll(poller, deadline):
    """What `poller` finds ready, waiting at most until `deadline` (for ever if None);
    TimedOut once it has passed with nothing ready."""
    if deadline is None:
        return poller.poll()
    remaining = deadline - time.monotonic()
    ready = poller.poll(remaining * 1000) if remaining > 0 else []
    if not ready and time.monotonic() >= deadline:
        raise TimedOut()
    return ready
