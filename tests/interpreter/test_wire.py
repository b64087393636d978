"""The wire format between judge and candidate (sandbox/passk_driver/wire.py): what
crosses comes back exactly, with its exact types, and what must not cross or is not
one well-formed value is refused.

    python3 -m unittest discover -s tests/interpreter
"""

import collections
import datetime
import decimal
import enum
import fractions
import math
import os
import sys
import unittest

import pipe_case

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sandbox"))
from passk_driver import handles, wire  # noqa: E402


def same(a, b):
    """Equal, with the same types all the way down, and nan equal to nan."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is complex:
        return same(a.real, b.real) and same(a.imag, b.imag)
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


class RoundTrips(unittest.TestCase):
    VALUES = [
        None, True, False, 0, 1, -1, 255, -256, 2**63, -(2**63) - 1, 10**400, -(10**400),
        0.0, -0.0, 1.5, float("inf"), float("-inf"), float("nan"), 5e-324, 1e308,
        complex(1, -2), complex(float("nan"), -0.0),
        "", "é", "日本", "\U0001F600", "\ud800", "a\udfffb", "\x00",
        b"", b"\x00\xff", bytes(range(256)),
        [], (), {}, set(), frozenset(),
        [1, [2, [3, []]]], (1, ("a", b"b")), {"a": 1, 2: [3], (4, 5): {6: None}, frozenset({7}): "x"},
        {1, "a", (2, 3), frozenset({4})}, frozenset({(1, 2), None}),
        [True, 1, 1.0], {True: "bool first", 2: "int"},
    ]

    def test_every_plain_value_comes_back_exactly(self):
        for value in self.VALUES:
            with self.subTest(value=value):
                self.assertTrue(same(wire.decode(wire.encode(value)), value))

    def test_small_ints_are_the_bytes_of_any_other_int(self):
        # Guards the table of small ints' encodings: an answer's bytes decide a pass, so
        # an int must take the same bytes whichever way it was encoded.
        for value in range(-300, 300):
            with self.subTest(value=value):
                data = value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)
                self.assertEqual(wire.encode(value), b"I" + len(data).to_bytes(4, "big") + data)
                self.assertEqual(wire.decode(wire.encode(value)), value)

    def test_bool_stays_bool_and_int_stays_int(self):
        back = wire.decode(wire.encode([True, 1, 0, False]))
        self.assertEqual([type(item) for item in back], [bool, int, int, bool])

    def test_order_of_dicts_is_kept(self):
        value = {"z": 1, "a": 2, "m": 3}
        self.assertEqual(list(wire.decode(wire.encode(value))), ["z", "a", "m"])

    def test_nesting_up_to_the_limit_crosses(self):
        value = []
        for _ in range(wire.MAX_DEPTH):
            value = [value]
        self.assertTrue(same(wire.decode(wire.encode(value)), value))


class NumberRuns(unittest.TestCase):
    """Long lists of numbers are encoded and decoded a column of bytes at a time; the
    bytes must be those of encoding each item in turn, and come back exactly."""

    @staticmethod
    def item_by_item(tag, items):
        return tag + len(items).to_bytes(4, "big") + b"".join(wire.encode(item) for item in items)

    def test_runs_of_floats_and_ints_of_every_width_are_the_items_bytes(self):
        floats = [0.0, -0.0, 1.5, float("inf"), float("-inf"), float("nan"), 5e-324, -1e308] * 4
        cases = [floats, [1, 3] + floats, floats + [7] * 20 + floats]
        for width in range(1, 10):
            top = 1 << (8 * width - 1)
            cases.append([top - 1, -top, 0, -1, top // 3] * 5)
        cases.append([0, 1, 255, 256, -129, 2**40, -(2**63), 2**63, 10**30] * 3)
        cases.append([1, 2.0, 3, 4.0] * 10)
        cases.append([1.0] * 20 + ["x", None, True] + [2**62] * 20)
        for items in cases:
            for value in (items, tuple(items)):
                with self.subTest(value=value[:6], kind=type(value)):
                    tag = b"L" if type(value) is list else b"U"
                    self.assertEqual(wire.encode(value), self.item_by_item(tag, value))
                    self.assertTrue(same(wire.decode(wire.encode(value)), value))
                    self.assertTrue(same(wire.decode(self.item_by_item(tag, value)), value))

    def test_bools_and_int_subclasses_are_not_read_as_ints(self):
        value = [True, False] * 10 + [1] * 20
        back = wire.decode(wire.encode(value))
        self.assertEqual([type(item) for item in back], [bool] * 20 + [int] * 20)

    def test_every_truncation_of_a_run_is_refused(self):
        data = wire.encode([1.5] * 20 + [7] * 20)
        for end in range(len(data)):
            with self.assertRaises(wire.Malformed):
                wire.decode(data[:end])


class NotPlain(unittest.TestCase):
    def test_objects_that_are_not_data_are_refused_without_a_handle_table(self):
        class Yes:
            def __eq__(self, other):
                return True

            def __hash__(self):
                return 0

        refused = [Yes(), (x for x in []), range(3), object(), bytearray(b"x"), memoryview(b"x"), iter([1]),
                   lambda: 1, [1, Yes()], {Yes(): 1}, {1: Yes()}, {Yes()}, (1, (2, Yes())), open, eval, exec,
                   collections.defaultdict(lambda: 1), os.system, sys.exit]
        for value in refused:
            with self.subTest(value=type(value)):
                with self.assertRaises(wire.NotPlainData):
                    wire.encode(value)

    def test_the_message_names_the_type_never_its_repr(self):
        class Loud:
            def __repr__(self):
                raise AssertionError("the candidate's __repr__ ran")

        with self.assertRaises(wire.NotPlainData) as caught:
            wire.encode([Loud()])
        self.assertEqual(str(caught.exception), "a test_wire.Loud")

    def test_too_deep_or_self_referential_is_refused(self):
        value = []
        for _ in range(wire.MAX_DEPTH + 1):
            value = [value]
        with self.assertRaisesRegex(wire.NotPlainData, "nested deeper"):
            wire.encode(value)
        loop = []
        loop.append(loop)
        with self.assertRaisesRegex(wire.NotPlainData, "nested deeper"):
            wire.encode(loop)

    def test_tens_of_megabytes_cross(self):
        # Guards against a size cap that turned honest output into an error.
        value = ["x" * (1 << 20)] * 70 + [b"y" * (10 << 20)]
        self.assertEqual(wire.decode(wire.encode(value)), value)


class StandardValues(unittest.TestCase):
    """Standard-library values cross as their own types, rebuilt from their data."""

    Point = collections.namedtuple("Point", "x y")
    VALUES = [
        collections.Counter("abracadabra"), collections.Counter(), collections.OrderedDict([("b", 1), ("a", 2)]),
        collections.defaultdict(list, {1: [2]}), collections.defaultdict(None, {"k": 0}),
        collections.deque([1, (2, 3)]), collections.deque([1, 2], maxlen=3), Point(1, [2]),
        fractions.Fraction(-3, 4), fractions.Fraction(10**30, 7), decimal.Decimal("1.10"), decimal.Decimal("-0"),
        decimal.Decimal("NaN"), decimal.Decimal("-Infinity"), datetime.date(2024, 2, 29),
        datetime.time(23, 59, 1, 5), datetime.datetime(2020, 1, 2, 3, 4, 5, 6),
        datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=-5), "EST"), fold=1),
        datetime.timedelta(days=-1, seconds=5, microseconds=7), datetime.timezone.utc,
        [collections.Counter({"x": 1}), {"nested": collections.deque([fractions.Fraction(1, 3)])}],
    ]

    def test_each_comes_back_as_its_own_type_and_equal(self):
        for value in self.VALUES:
            with self.subTest(value=value):
                back = wire.decode(wire.encode(value), budget=16 << 20)
                self.assertIs(type(back), type(value) if type(value) is not self.Point else type(back))
                if isinstance(value, decimal.Decimal) and value.is_nan():
                    self.assertTrue(back.is_nan())
                else:
                    self.assertEqual(back, value)
                    self.assertEqual(repr(back), repr(value))

    def test_what_orders_and_limits_them_survives(self):
        ordered = wire.decode(wire.encode(collections.OrderedDict([(2, "b"), (1, "a")])))
        self.assertEqual(list(ordered), [2, 1])
        self.assertEqual(wire.decode(wire.encode(collections.deque(range(5), maxlen=5))).maxlen, 5)
        self.assertIs(wire.decode(wire.encode(collections.defaultdict(set))).default_factory, set)
        point = wire.decode(wire.encode(self.Point(1, 2)))
        self.assertEqual((type(point).__name__, point._fields, point.x), ("Point", ("x", "y"), 1))

    def test_builtins_and_standard_types_and_modules_cross_by_name(self):
        for value in [int, str, len, sorted, ValueError, collections.Counter, math.sqrt, math, collections]:
            with self.subTest(value=value):
                self.assertIs(wire.decode(wire.encode(value)), value)


class Subclasses(unittest.TestCase):
    """A subclass the candidate wrote crosses as its nearest base that crosses, taken
    with that base's own methods: its own __eq__ never reaches the other side."""

    def test_an_always_equal_subclass_is_only_its_base_value(self):
        def always(self, other):
            return True

        def lying_iter(self):
            return iter(["lie"])

        subclasses = [
            (type("Int", (int,), {"__eq__": always, "__hash__": int.__hash__, "__int__": lambda s: 99}), 7, 7),
            (type("Float", (float,), {"__eq__": always, "__float__": lambda s: 9.0}), 1.5, 1.5),
            (type("Str", (str,), {"__eq__": always, "__str__": lambda s: "lie"}), "a", "a"),
            (type("List", (list,), {"__eq__": always, "__iter__": lying_iter, "__len__": lambda s: 1}), [1, 2], [1, 2]),
            (type("Tuple", (tuple,), {"__eq__": always, "__iter__": lying_iter}), (1,), (1,)),
            (type("Dict", (dict,), {"__eq__": always, "items": lambda s: [("lie", 1)]}), {"a": 1}, {"a": 1}),
            (type("Counter", (collections.Counter,), {"__eq__": always}), "aab", collections.Counter("aab")),
            (type("Default", (collections.defaultdict,), {"__eq__": always}), None, collections.defaultdict()),
        ]
        for kind, argument, plain in subclasses:
            with self.subTest(kind=kind.__name__):
                value = kind(argument) if argument is not None else kind()
                back = wire.decode(wire.encode(value))
                self.assertIs(type(back), type(plain))
                self.assertEqual(back, plain)
                self.assertNotEqual(back, object())

    def test_an_int_enum_is_its_int(self):
        class Colour(enum.IntEnum):
            RED = 3

        self.assertIs(type(wire.decode(wire.encode(Colour.RED))), int)

    def test_a_namedtuple_with_a_patched_eq_is_a_plain_namedtuple(self):
        Pair = collections.namedtuple("Pair", "a b")
        Pair.__eq__ = lambda self, other: True
        back = wire.decode(wire.encode(Pair(1, 2)))
        self.assertIsNot(type(back), Pair)
        self.assertNotEqual(back, (3, 4))
        self.assertEqual(back, (1, 2))

    def test_only_small_namedtuple_types_are_kept_for_later_values(self):
        # Guards against a candidate piling long-named types up in the judge, which
        # outlives its samples: each is made for its value and let go.
        long_field = "f" * 100_000
        Long = collections.namedtuple("Long", [long_field])
        before = len(wire._NAMEDTUPLES)
        back = wire.decode(wire.encode(Long(1)))
        self.assertEqual(back, (1,))
        self.assertEqual(type(back)._fields, (long_field,))
        self.assertEqual(len(wire._NAMEDTUPLES), before)
        Short = collections.namedtuple("Short", "a")
        wire.decode(wire.encode(Short(1)))
        self.assertEqual(len(wire._NAMEDTUPLES), before + 1, "a small type is kept")


class Handles(unittest.TestCase):
    """Handles between a candidate's table and a judge's Handles, in one process here:
    each operation crosses as bytes both ways, as over the channel."""

    def setUp(self):
        self.candidate = handles.CandidateHandles()

        def exchange(message):
            message = wire.decode(wire.encode(message, self.judge), handles=self.candidate)
            try:
                value = self.candidate.operate(*message[1:])
            except StopIteration:
                if message[2] == "next":
                    raise
                raise RuntimeError("StopIteration") from None
            return wire.decode(wire.encode(value, self.candidate), handles=self.judge)

        self.judge = handles.JudgeHandles(exchange)

    def send(self, value):
        return wire.decode(wire.encode(value, self.candidate), handles=self.judge)

    def test_a_class_of_the_candidates_is_built_called_and_read_through_its_handle(self):
        class Pair:
            def __init__(self, a, b):
                self.a, self.b = a, b

            def total(self):
                return self.a + self.b

        pair_class = self.send(Pair)
        pair = pair_class(2, 3)
        self.assertIs(type(pair), handles.Handle)
        self.assertEqual((pair.a, pair.total()), (2, 3 and 5))
        pair.a = 10
        self.assertEqual(pair.total(), 13)
        self.assertEqual(repr(pair), "<a Pair object>")
        self.assertEqual(repr(pair_class), "<class Pair>")

    def test_equality_is_identity_or_same_class_and_equal_data_never_the_objects_own(self):
        ran = []

        class Yes:
            def __init__(self, n):
                self.n = n

            def __eq__(self, other):
                ran.append("eq")
                return True

            def __hash__(self):
                ran.append("hash")
                return 0

        class Other:
            def __init__(self, n):
                self.n = n

        one, also_one, two, other = (self.send(v) for v in (Yes(1), Yes(1), Yes(2), Other(1)))
        self.assertEqual(one, one)
        self.assertEqual(one, also_one)
        self.assertNotEqual(one, two)
        self.assertNotEqual(one, other)
        self.assertNotEqual(one, 1)
        self.assertNotEqual(1, one)
        self.assertNotIn(one, [True, 1, "x", None])
        self.assertEqual(len({one, also_one}), 1)
        self.assertEqual(ran, [], "the object's own __eq__ and __hash__ never ran for a comparison")

    def test_iterators_and_generators_are_iterated_through_their_handles(self):
        self.assertEqual(tuple(self.send(iter([3, 1, 2]))), (3, 1, 2))
        self.assertEqual(sorted(self.send(n * n for n in range(4))), [0, 1, 4, 9])
        self.assertNotEqual(self.send(n for n in [1]), [1])

    def test_handles_go_back_to_the_same_object(self):
        marker = object()
        self.assertIs(wire.decode(wire.encode(self.send(marker), self.judge), handles=self.candidate), marker)

    def test_a_handle_is_refused_where_none_may_be(self):
        data = wire.encode(object(), self.candidate)
        with self.assertRaisesRegex(wire.Malformed, "handle"):
            wire.decode(data)
        with self.assertRaisesRegex(wire.Malformed, "handle"):
            wire.decode(data, handles=self.candidate)
        with self.assertRaisesRegex(wire.Malformed, "no handle 5"):
            wire.decode(b"h" + wire.encode(5), handles=self.judge)
        with self.assertRaisesRegex(wire.Malformed, "a handle to"):
            wire.decode(b"H" + wire.encode(9) + wire.encode("bomb") + wire.encode("X") + wire.encode(int),
                        handles=self.judge)


@unittest.skipUnless(any(os.path.isdir(os.path.join(p, "numpy")) for p in sys.path if p), "numpy is not installed")
class Numpy(unittest.TestCase):
    def test_arrays_and_scalars_cross_as_numpy_values(self):
        import numpy

        values = [numpy.float64(0.1), numpy.int64(-3), numpy.bool_(True), numpy.str_("é"),
                  numpy.arange(6, dtype=numpy.int32).reshape(2, 3), numpy.array([1.5, numpy.nan]),
                  numpy.array(["a", "bc"]), numpy.zeros((0, 3)), numpy.array([[1, "x"], [None, 2.0]], dtype=object),
                  numpy.array([1, 2]).view(type("Sub", (numpy.ndarray,), {}))]
        for value in values:
            with self.subTest(value=value):
                back = wire.decode(wire.encode(value), budget=16 << 20)
                self.assertIs(type(back), numpy.ndarray if isinstance(value, numpy.ndarray) else type(value))
                self.assertEqual(back.dtype, value.dtype)
                self.assertEqual(numpy.asarray(back).tobytes() if back.dtype != object else back.tolist(),
                                 numpy.asarray(value).tobytes() if value.dtype != object else value.tolist())
        array = wire.decode(wire.encode(numpy.arange(3)))
        array[0] = 7
        self.assertEqual(array[0], 7, "a received array can be written")

    def test_raw_bytes_are_never_read_as_objects(self):
        data = b"A" + wire.encode(b"\x00" * 8)[1:] + wire.encode("|O8") + wire.encode((1,))
        with self.assertRaisesRegex(wire.Malformed, "dtype"):
            wire.decode(data)
        data = b"G" + wire.encode(b"\x00" * 8)[1:] + wire.encode("|O")
        with self.assertRaisesRegex(wire.Malformed, "dtype"):
            wire.decode(data)


class Malformed(unittest.TestCase):
    def test_every_truncation_of_a_value_is_refused(self):
        data = wire.encode({"a": [1, 2.5, (b"x", None)], 3: {"s", frozenset({1})}, "c": complex(1, 2)})
        for cut in range(len(data)):
            with self.subTest(cut=cut):
                with self.assertRaises(wire.Malformed):
                    wire.decode(data[:cut])

    def test_bytes_after_the_value_are_refused(self):
        with self.assertRaisesRegex(wire.Malformed, "after the value"):
            wire.decode(wire.encode(1) + b"N")

    def test_unknown_tags_are_refused(self):
        for tag in b"agqxz\x00\xff":
            with self.subTest(tag=tag):
                with self.assertRaises(wire.Malformed):
                    wire.decode(bytes([tag]))

    def test_standard_values_that_cannot_be_made_are_refused(self):
        bad = [
            b"P" + wire._LENGTH.pack(1) + wire.encode("T") + wire.encode("not a name") + wire.encode(1),
            b"P" + wire._LENGTH.pack(1) + wire.encode("T") + wire.encode(1) + wire.encode(1),
            b"R" + wire.encode(1) + wire.encode(0),
            b"X" + wire.encode("one"),
            b"W" + wire.encode("date") + wire.encode((2020, 13, 1)),
            b"W" + wire.encode("Path") + wire.encode(("/",)),
            b"Y" + wire._LENGTH.pack(0) + wire.encode(5),
            b"Q" + wire._LENGTH.pack(0) + wire.encode(-1),
            b"J" + wire.encode("builtins") + wire.encode("eval"),
            b"J" + wire.encode("os") + wire.encode("system"),
            b"J" + wire.encode("builtins") + wire.encode("nothing"),
            b"J" + wire.encode("collections") + wire.encode("namedtuple.__globals__"),
            b"V" + wire.encode("antigravity"),
            b"V" + wire.encode("no_such_module_here"),
        ]
        for data in bad:
            with self.subTest(data=data):
                with self.assertRaises(wire.Malformed):
                    wire.decode(data)

    def test_a_name_is_found_only_where_its_object_says_it_lives(self):
        # Guards against a path through another module's attributes reaching, in the
        # receiver, what never crosses by name: `reprlib` imports `builtins`, `shlex`
        # imports `os`. A candidate that points reprlib.builtins at a namespace of its
        # own makes its own function encode as "reprlib" "builtins.eval".
        for module, name in [("reprlib", "builtins.exec"), ("shlex", "os.system"), ("collections", "abc"),
                             ("math", "pi")]:
            with self.subTest(name=f"{module}.{name}"):
                with self.assertRaisesRegex(wire.Malformed, "not a type or function of that name"):
                    wire.decode(b"J" + wire.encode(module) + wire.encode(name))

    def test_a_string_that_is_not_utf8_is_refused(self):
        with self.assertRaisesRegex(wire.Malformed, "not UTF-8"):
            wire.decode(b"S\x00\x00\x00\x02\xff\xfe")

    def test_a_count_beyond_the_data_is_refused_before_anything_is_built(self):
        with self.assertRaisesRegex(wire.Malformed, "cut short"):
            wire.decode(b"L\xff\xff\xff\xff")

    def test_unhashable_keys_and_items_are_refused(self):
        unhashable_key = b"M\x00\x00\x00\x01" + wire.encode([1]) + wire.encode(2)
        with self.assertRaisesRegex(wire.Malformed, "unhashable key"):
            wire.decode(unhashable_key)
        unhashable_item = b"E\x00\x00\x00\x01" + wire.encode({})
        with self.assertRaisesRegex(wire.Malformed, "unhashable item"):
            wire.decode(unhashable_item)

    def test_nesting_beyond_the_limit_is_refused(self):
        data = b"L\x00\x00\x00\x01" * (wire.MAX_DEPTH + 2) + b"N"
        with self.assertRaisesRegex(wire.Malformed, "nested deeper"):
            wire.decode(data)


class Frames(pipe_case.PipeCase):
    def setUp(self):
        super().setUp()
        self.receiving = wire.Channel(self.read_fd, -1)
        self.sending = wire.Channel(-1, self.write_fd)

    def test_frames_arrive_whole_and_in_order_and_end_at_hang_up(self):
        payloads = [wire.encode(i) for i in range(50)] + [b""]
        for payload in payloads:
            self.sending.send(payload)
        os.close(self.write_fd)
        self.assertEqual([self.receiving.receive() for _ in payloads], payloads)
        self.assertIsNone(self.receiving.receive())

    def test_a_frame_cut_short_is_refused(self):
        os.write(self.write_fd, b"\x00\x00\x00\x10abc")
        os.close(self.write_fd)
        with self.assertRaisesRegex(wire.Malformed, "cut short"):
            self.receiving.receive()

    def test_a_large_frame_that_is_not_a_message_is_refused_without_reading_it(self):
        # Guards against forged text read as the length of a frame of gigabytes, which
        # the reader then waited for.
        receiving = wire.Channel(self.read_fd, -1, budget=4 << 30)
        os.write(self.write_fd, b'{"status": "passed"}\n')
        with self.assertRaisesRegex(wire.Malformed, "not a message"):
            receiving.receive()

    def test_a_frame_over_the_budget_is_refused_without_reading_it(self):
        receiving = wire.Channel(self.read_fd, -1, budget=1 << 20)
        os.write(self.write_fd, b"\x7f\xff\xff\xff")
        with self.assertRaises(wire.TooLarge):
            receiving.receive()

    def test_a_frame_of_many_megabytes_arrives_whole(self):
        payload = wire.encode(("return", "z" * (40 << 20)))
        receiving = wire.Channel(self.read_fd, -1, budget=1 << 30)
        sender = os.fork()
        if sender == 0:
            os.close(self.read_fd)
            self.sending.send(payload)
            os._exit(0)
        os.close(self.write_fd)
        try:
            self.assertEqual(bytes(receiving.receive()), payload)
        finally:
            os.waitpid(sender, 0)


class Posted(unittest.TestCase):
    """Frames the judge posts ahead of the answers it waits for (calls.py)."""

    def setUp(self):
        # The judge's end reads `answers` and writes `calls`.
        self.answers_r, self.answers_w = os.pipe()
        self.calls_r, self.calls_w = os.pipe()
        self.judge = wire.Channel(self.answers_r, self.calls_w)
        self.candidate = wire.Channel(self.calls_r, self.answers_w)

    def tearDown(self):
        pipe_case.close_quietly(self.answers_r, self.answers_w, self.calls_r, self.calls_w)

    def test_posting_never_waits_for_a_reader_and_the_answer_awaited_times_out(self):
        import time
        payload = b"x" * (1 << 16)
        numbers = [self.judge.post(payload) for _ in range(8)]
        self.assertEqual(numbers, list(range(8)))
        started = time.monotonic()
        with self.assertRaises(wire.TimedOut):
            self.judge.receive(time.monotonic() + 0.2, after=7)
        self.assertLess(time.monotonic() - started, 2)

    def test_calls_larger_than_the_pipe_are_answered_in_turn(self):
        payloads = [bytes([number]) * 100_000 for number in range(6)]
        answerer = os.fork()
        if answerer == 0:
            # Answers each call with its length, reading it only once the last answer is out.
            for _ in payloads:
                self.candidate.send(wire.encode(len(self.candidate.receive())))
            os._exit(0)
        try:
            for payload in payloads:
                self.judge.post(payload)
            for number, payload in enumerate(payloads):
                self.assertEqual(wire.decode(self.judge.receive(after=number)), len(payload))
        finally:
            os.waitpid(answerer, 0)

    def test_frames_posted_together_are_written_together_when_the_judge_waits(self):
        import select
        import time
        numbers = [self.judge.post(wire.encode(f"call {number}")) for number in range(8)]
        # Nothing is written while the judge goes on posting...
        self.assertEqual(select.select([self.calls_r], [], [], 0)[0], [])
        with self.assertRaises(wire.TimedOut):
            self.judge.receive(time.monotonic() + 0.05, after=numbers[0])
        # ...and all of it, in one write, once it waits for an answer.
        self.assertEqual(len(os.read(self.calls_r, 1 << 16)), 8 * len(wire.encode("call 0")) + 8 * 4)

    def test_an_answer_that_came_before_its_call_was_made_is_refused(self):
        self.judge.post(wire.encode("call 0"))
        self.judge.push()
        self.candidate.receive()
        # Two answers for one call: the second answers a call not yet made.
        self.candidate.send(wire.encode(0))
        self.candidate.send(wire.encode(1))
        self.assertEqual(wire.decode(self.judge.receive(after=0)), 0)
        self.judge.post(wire.encode("call 1"))
        with self.assertRaisesRegex(wire.Malformed, "before its call was made"):
            self.judge.receive(after=1)

    def test_an_answer_left_unread_in_the_pipe_while_its_call_is_written_is_refused(self):
        # Guards the early-answer check against answers that wait in the pipe while the
        # judge writes their call: the judge writes what it posted just before it reads,
        # and counted as come before a call only what it had read by then.
        self.judge.post(wire.encode("call 0"))
        self.judge.push()
        self.candidate.receive()
        self.candidate.send(wire.encode(0))
        # The answer to a call posted but not yet written.
        self.candidate.send(wire.encode(1))
        self.judge.post(wire.encode("call 1"))
        self.assertEqual(wire.decode(self.judge.receive(after=0)), 0)
        with self.assertRaisesRegex(wire.Malformed, "before its call was made"):
            self.judge.receive(after=1)

    def test_an_answer_sent_while_its_call_waits_to_be_written_is_refused(self):
        self.judge.post(b"z" * (1 << 17))
        self.candidate.send(wire.encode("too soon"))
        with self.assertRaisesRegex(wire.Malformed, "before its call was made"):
            self.judge.receive(after=0)

    def test_a_call_the_other_end_can_no_longer_read_ends_as_a_hang_up(self):
        os.close(self.calls_r)
        self.judge.post(wire.encode("call 0"))
        self.assertIsNone(self.judge.receive(after=0))


class Budget(unittest.TestCase):
    """Guards the judge against frames that are small to send and huge to build."""

    def test_what_fits_the_budget_is_built(self):
        value = [set(), frozenset({1}), {"a": [1, 2.5, "x" * 1000]}, (None, True, b"b")]
        self.assertTrue(same(wire.decode(wire.encode(value), budget=1 << 20), value))

    def test_empty_sets_beyond_the_budget_are_refused_before_they_are_built(self):
        data = wire.encode([set()] * 200_000)
        with self.assertRaises(wire.TooLarge):
            wire.decode(data, budget=16 << 20)
        self.assertEqual(len(wire.decode(data)), 200_000)

    def test_a_long_list_of_nones_counts_its_references(self):
        data = wire.encode([None] * 3_000_000)
        with self.assertRaises(wire.TooLarge):
            wire.decode(data, budget=16 << 20)


if __name__ == "__main__":
    unittest.main()
