"""The wire format between judge and candidate (sandbox/passk_driver/wire.py): what
crosses comes back exactly, with its exact types, and what must not cross or is not
one well-formed value is refused.

    python3 -m unittest discover -s tests/interpreter
"""

import collections
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sandbox"))
from passk_driver import wire  # noqa: E402


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


class NotPlain(unittest.TestCase):
    def test_subclasses_and_other_types_are_refused(self):
        class Int(int):
            def __eq__(self, other):
                return True

        class Str(str):
            pass

        class Yes:
            def __eq__(self, other):
                return True

            def __hash__(self):
                return 0

        refused = [Int(1), Str("a"), type("L", (list,), {})(), collections.OrderedDict(), collections.defaultdict(int),
                   Yes(), (x for x in []), range(3), object(), len, bytearray(b"x"), memoryview(b"x"),
                   [1, Yes()], {Yes(): 1}, {1: Yes()}, {Yes()}, (1, (2, Int(3)))]
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

    def test_too_large_is_refused(self):
        with self.assertRaisesRegex(wire.NotPlainData, "larger than"):
            wire.encode(b"x" * (wire.MAX_BYTES + 1))
        with self.assertRaisesRegex(wire.NotPlainData, "larger than"):
            wire.encode(["x" * (1 << 20)] * 70)


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
        for tag in b"AGHXYP\x00\xff":
            with self.subTest(tag=tag):
                with self.assertRaises(wire.Malformed):
                    wire.decode(bytes([tag]))

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


class Frames(unittest.TestCase):
    def setUp(self):
        self.read_fd, self.write_fd = os.pipe()
        self.receiving = wire.Channel(self.read_fd, -1)
        self.sending = wire.Channel(-1, self.write_fd)

    def tearDown(self):
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass

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

    def test_a_frame_over_the_limit_is_refused_without_reading_it(self):
        os.write(self.write_fd, b"\x7f\xff\xff\xff")
        with self.assertRaisesRegex(wire.Malformed, "over the"):
            self.receiving.receive()


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
