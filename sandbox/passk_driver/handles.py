"""Handles: what only the candidate defines, usable by the tests without leaving the
candidate's process.

Tests may use the candidate's classes (MBPP's `Pair(5, 24)`, a tree of `Node`s built by
the setup code), its helper functions, or what it returns that is not data (an iterator,
an object of its own class). None of these can cross as data, and none of the candidate's
code may run in the judge. So the object stays where it is, in a table of the
candidate's process, and crosses as its number in that table (wire tags H and h). In the
judge a `Handle` stands for it: calling it, reading, setting or deleting an attribute
or an item, its truth, its length, iterating it and `str` each go to the candidate
as a message, run there, and come back as data or as further handles. Each gives the
candidate no more than an answer of plain data would: `in` is not among them, since a
`__contains__` that says yes to everything would pass `assert "x" in answer` without
knowing the answer; it iterates the object instead, and the judge compares the items.

What the judge decides about a handle it decides with its own code alone:
- equality: the same object, or, for objects of a class the candidate wrote, the same
  class and equal attribute data (their `__dict__` and slots, fetched as data and
  compared here). The candidate's `__eq__` never runs for a comparison, nor its
  `__hash__`;
- its repr, which shows only its type's name.
"""

from . import wire

# What a handle stands for: a class, a module, an object of a class written in Python
# (whose data can be fetched and compared), or anything else (compared by identity).
KINDS = ("class", "module", "object", "opaque")
# Python's flag for a class made by a class statement rather than written in C.
_HEAP_TYPE = 1 << 9
TYPE_NAME_CAP = 200


class CandidateHandles:
    """The candidate's side: the objects it has sent as handles, by number. They are kept
    alive until the process ends, so a number always means the same object."""

    def __init__(self):
        self.objects = []
        self.numbers = {}

    def encoder(self, value):
        return self._encode

    def _encode(self, value, out, depth, handles):
        number = self.numbers.get(id(value))
        if number is None:
            number = self.numbers[id(value)] = len(self.objects)
            self.objects.append(value)
        kind = type(value)
        what = _what(value, kind)
        out += b"H"
        wire._int(number, out)
        wire._str(what, out)
        # Shown in the judge's messages: a class's or module's own name, else its type's.
        if what == "class":
            name = type.__dict__["__name__"].__get__(value)
        elif what == "module":
            name = object.__getattribute__(value, "__dict__").get("__name__")
            name = name if type(name) is str else "module"
        else:
            name = type.__dict__["__name__"].__get__(kind)
        wire._str(wire.shorten(name, TYPE_NAME_CAP), out)
        wire._encode(kind, out, depth + 1, self)

    def received(self, number, what, name, kind):
        raise wire.Malformed("a handle sent to the candidate")

    def returned(self, number):
        if not 0 <= number < len(self.objects):
            raise wire.Malformed(f"no handle {number}")
        return self.objects[number]

    def operate(self, number, operation, argument):
        """Runs one operation on an object of the table, here in the candidate's process;
        what it returns or raises is the candidate's answer."""
        target = self.returned(number)
        if operation == "call":
            args, kwargs = argument
            return target(*args, **kwargs)
        if operation == "getattr":
            return getattr(target, argument)
        if operation == "setattr":
            setattr(target, *argument)
            return None
        if operation == "delattr":
            delattr(target, argument)
            return None
        if operation == "getitem":
            return target[argument]
        if operation == "setitem":
            key, value = argument
            target[key] = value
            return None
        if operation == "delitem":
            del target[argument]
            return None
        if operation == "bool":
            return bool(target)
        if operation == "len":
            return len(target)
        if operation == "iter":
            return iter(target)
        if operation == "next":
            return next(target)
        if operation == "str":
            return str(target)
        if operation == "data":
            return _data(target)
        raise wire.Malformed(f"no operation {wire.shorten(str(operation), 40)!r}")


def _what(value, kind):
    if isinstance(value, type):
        return "class"
    if isinstance(value, type(wire)):
        return "module"
    if type.__dict__["__flags__"].__get__(kind) & _HEAP_TYPE:
        return "object"
    return "opaque"


def _data(target):
    """An object's attribute data, read without its own __getattribute__: its __dict__,
    then the slots of each class it is made from."""
    data = {}
    try:
        attributes = object.__getattribute__(target, "__dict__")
    except AttributeError:
        attributes = {}
    if type(attributes) is dict:
        data.update(attributes)
    for kind in type(target).__mro__:
        slots = kind.__dict__.get("__slots__", ())
        for slot in (slots,) if type(slots) is str else slots:
            if type(slot) is str and slot not in ("__dict__", "__weakref__"):
                try:
                    data[f"{kind.__name__}.{slot}"] = object.__getattribute__(target, slot)
                except AttributeError:
                    pass
    return data


class JudgeHandles:
    """The judge's side: one Handle per object of the candidate's, so that the same
    object is the same Handle here, and `exchange` to send the candidate an operation."""

    def __init__(self, exchange):
        self.exchange = exchange
        self.by_number = {}

    def encoder(self, value):
        if type(value) is Handle:
            return _encode_back
        raise wire.NotPlainData(wire.describe(value))

    def received(self, number, what, name, kind):
        handle = self.by_number.get(number)
        if handle is None:
            if what not in KINDS:
                raise wire.Malformed(f"a handle to {wire.shorten(what, 40)!r}")
            handle = Handle(self, number, what, name, kind)
            self.by_number[number] = handle
        return handle

    def returned(self, number):
        handle = self.by_number.get(number)
        if handle is None:
            raise wire.Malformed(f"no handle {number}")
        return handle


def _encode_back(value, out, depth, handles):
    out += b"h"
    wire._int(_state(value)[1], out)


def _state(handle):
    """A Handle's own state: its table, number, what it is, its type's name, its type."""
    return object.__getattribute__(handle, "_Handle__state")


def what_of(handle):
    """What a Handle stands for: one of KINDS."""
    return _state(handle)[2]


def name_of(handle):
    """The name a Handle's object gave: a class's or module's own, else its type's."""
    return _state(handle)[3]


class Handle:
    """Stands in the judge for an object of the candidate's. Its own state is one slot
    under a mangled name, so that every attribute name a test uses goes to the object."""

    __slots__ = ("__state",)

    def __init__(self, table, number, what, name, kind):
        object.__setattr__(self, "_Handle__state", (table, number, what, name, kind))

    def _ask(self, operation, argument=None):
        table, number = _state(self)[:2]
        return table.exchange(("op", number, operation, argument))

    def __call__(self, *args, **kwargs):
        return self._ask("call", (args, kwargs))

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            # Python's own probes (__length_hint__, __array__, ...) are answered here:
            # the object has none that the judge would use.
            raise AttributeError(name)
        return self._ask("getattr", name)

    def __setattr__(self, name, value):
        self._ask("setattr", (name, value))

    def __delattr__(self, name):
        self._ask("delattr", name)

    def __getitem__(self, key):
        return self._ask("getitem", key)

    def __setitem__(self, key, value):
        self._ask("setitem", (key, value))

    def __delitem__(self, key):
        self._ask("delitem", key)

    def __bool__(self):
        answer = self._ask("bool")
        if type(answer) is not bool:
            raise TypeError("__bool__ should return bool")
        return answer

    def __len__(self):
        answer = self._ask("len")
        if type(answer) is not int:
            raise TypeError("object cannot be interpreted as an integer")
        return answer

    def __iter__(self):
        answer = self._ask("iter")
        if type(answer) is Handle:
            return answer
        return iter(answer)

    def __next__(self):
        return self._ask("next")

    def __str__(self):
        answer = self._ask("str")
        if type(answer) is not str:
            raise TypeError("__str__ returned non-string")
        return answer

    def __repr__(self):
        _, _, what, name, _ = _state(self)
        return f"<{what} {name}>" if what in ("class", "module") else f"<{wire.describe_name(name)} object>"

    def __eq__(self, other):
        if other is self:
            return True
        if type(other) is not Handle:
            return NotImplemented
        _, _, what, _, kind = _state(self)
        _, _, other_what, _, other_kind = _state(other)
        if what != "object" or other_what != "object" or kind is not other_kind:
            return False
        return self._ask("data") == other._ask("data")

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        _, _, what, _, kind = _state(self)
        if what == "object":
            return hash(("object", kind))
        return object.__hash__(self)
