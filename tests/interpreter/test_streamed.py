"""Answers streamed in parts, and expected outputs compared as bytes
(sandbox/passk_driver/wire.py's send_streamed and whole_answer, expected.py): a large
answer arrives as the same bytes it would have been sent in one frame, and only the very
bytes of an expected output that equals a copy of itself pass without a comparison of
values.

    python3 -m unittest discover -s tests/interpreter
"""

import base64
import collections
import decimal
import fractions
import json
import itertools
import marshal
import os
import sys
import unittest

import pipe_case

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sandbox"))
from passk_driver import calls, expected, wire  # noqa: E402

# An answer of about 3 MiB, of a few strings repeated: it is streamed in parts.
LARGE = [("red", "green", "blue", f"{i % 7}") for i in range(120_000)]


class Streamed(pipe_case.PipeCase):
    def sent_by_child(self, send, budget=1 << 30):
        """What the judge's side makes of what `send(channel)` writes in a child process."""
        sender = os.fork()
        if sender == 0:
            os.close(self.read_fd)
            try:
                send(wire.Channel(-1, self.write_fd))
            finally:
                os._exit(0)
        os.close(self.write_fd)
        receiving = wire.Channel(self.read_fd, -1, budget=budget)
        try:
            return wire.whole_answer(receiving, receiving.receive())
        finally:
            # A sender refused midway may be writing still.
            os.close(self.read_fd)
            os.waitpid(sender, 0)

    def test_a_large_answer_arrives_as_the_bytes_of_its_one_frame(self):
        for send in (lambda channel: wire.send_streamed(channel, ("return", LARGE)),
                     lambda channel: wire.send_returned(channel, LARGE)):
            self.setUp()
            got = self.sent_by_child(send)
            self.assertGreater(len(got), 2 * wire.STREAM_PART)
            self.assertEqual(bytes(got), wire.encode(("return", LARGE)))

    def test_an_answer_sent_as_returned_is_the_bytes_of_its_message(self):
        # The candidate's answers go by send_returned, whose head is made once: the
        # judge compares their bytes with the expected outputs' encodings.
        for value in (None, 7, -300, "x" * 10, [1, 2.5, "x"] * 9, {"a": (1, [2])}, "y" * (wire.STREAM_PART + 5)):
            with self.subTest(value=repr(value)[:40]):
                self.setUp()
                got = self.sent_by_child(lambda channel: wire.send_returned(channel, value))
                self.assertEqual(bytes(got), wire.encode(("return", value)))

    def test_the_sender_tells_whether_the_value_may_be_unequal_to_a_copy_of_itself(self):
        # What lets the recording of a large output do without reading its bytes again:
        # HumanEval/15's 147 MB of strings, which hold "A", "G" and "X" bytes, took the
        # judge seconds to walk.
        nan = float("nan")
        for value, unequal in ((["AGX"] * 100_000, False), ([0.5] * 100, False), ([0.5] * 99 + [nan], True),
                               ([1] * 20 + [nan] * 20, True), ([float("inf")] * 100, True), ({"k": [nan]}, True),
                               (complex(0, nan), True), (decimal.Decimal("1"), True), ((1, "G", b"X"), False),
                               ([("a", nan)] * 100, True),
                               # A NaN in a run of floats after a run of ints, long or short.
                               ([1, 3] + [0.5] * 100 + [nan], True), ([1, 3] + [0.5] * 100, False),
                               ([1] * 40 + [0.5, nan] + [2] * 40, True), ([1] * 40 + [0.5, 2.5] + [2] * 40, False)):
            with self.subTest(value=repr(value)[:40]):
                read_fd, write_fd = os.pipe()
                sender = os.fork()
                if sender == 0:
                    os.close(read_fd)
                    told = wire.send_streamed(wire.Channel(-1, write_fd), ("return", value))
                    os._exit(10 + told)
                os.close(write_fd)
                receiving = wire.Channel(read_fd, -1, budget=1 << 30)
                self.assertEqual(bytes(wire.whole_answer(receiving, receiving.receive())),
                                 wire.encode(("return", value)))
                os.close(read_fd)
                self.assertEqual(os.waitstatus_to_exitcode(os.waitpid(sender, 0)[1]), 10 + unequal)

    def test_tuples_of_strings_met_before_arrive_as_the_bytes_of_their_encoding(self):
        # Encoded from the strings met before, by value and by identity (Mbpp/255's
        # combinations, whose tuples' new strings come last), among ints, bools, floats,
        # a subclass of str and unhashable items, which the values met must not stand for.
        class Tag(str):
            pass

        colours = ["Dog", "Cat", "Bird", "Fish"]
        combos = list(itertools.combinations_with_replacement(colours, 12))
        mixed = [(1, True, 1.0, "Dog") * 3, ("Dog",) * 7 + (Tag("Cat"),), ("Dog",) * 7 + ([1],), ("Dog", 1) * 4]
        # Values are learned only once an answer's encoding is long: this comes first.
        long_enough = [f"{index:08}" for index in range(wire._LEARNS_AFTER // 8)]
        for value in (combos * 2, combos + mixed + combos, [long_enough, combos],
                      [long_enough, [(True,) * 9, (1,) * 9, (1.0,) * 9] * 30]):
            with self.subTest(value=repr(value[-1])[:40]):
                read_fd, write_fd = os.pipe()
                sender = os.fork()
                if sender == 0:
                    os.close(read_fd)
                    wire.send_streamed(wire.Channel(-1, write_fd), ("return", value))
                    os._exit(0)
                os.close(write_fd)
                receiving = wire.Channel(read_fd, -1, budget=1 << 30)
                got = bytes(wire.whole_answer(receiving, receiving.receive()))
                os.close(read_fd)
                self.assertEqual(os.waitstatus_to_exitcode(os.waitpid(sender, 0)[1]), 0)
                self.assertEqual(got, wire.encode(("return", value)))
                self.assertEqual(repr(wire.decode(got)[1]), repr(value))

    def test_a_small_answer_is_one_frame(self):
        got = self.sent_by_child(lambda channel: wire.send_streamed(channel, ("return", [1, 2.5, "x"] * 9)))
        self.assertEqual(bytes(got), wire.encode(("return", [1, 2.5, "x"] * 9)))

    def test_what_cannot_cross_gives_up_the_parts_sent_and_the_frame_after_is_the_answer(self):
        def send(channel):
            try:
                wire.send_streamed(channel, ("return", LARGE + [object()]))
            except wire.NotPlainData as error:
                channel.send(wire.encode(("not-plain", str(error))))

        self.assertEqual(wire.decode(self.sent_by_child(send)), ("not-plain", "an object"))

    def test_a_stream_past_the_budget_is_refused(self):
        # A huge answer fails as too large; it is never built, nor read whole.
        with self.assertRaises(wire.TooLarge):
            self.sent_by_child(lambda channel: wire.send_streamed(channel, ("return", LARGE)), budget=1 << 20)

    def test_a_frame_in_a_stream_that_is_not_a_part_is_refused(self):
        for forged in (b"", b"?abc", b".junk", b"!more", wire.encode(("return", 1))):
            def send(channel, forged=forged):
                channel.send(wire.STREAMED)
                channel.send(wire.PART_MORE + b"U\x00\x00")
                channel.send(forged)

            with self.subTest(forged=forged), self.assertRaises(wire.Malformed):
                self.setUp()
                self.sent_by_child(send)

    def test_a_stream_cut_short_is_no_answer(self):
        def send(channel):
            channel.send(wire.STREAMED)
            channel.send(wire.PART_MORE + b"L\x00\x00\x00\x05")
            # A part that claims more than it sends, then the end of the line.
            os.write(self.write_fd, b"\x00\x01\x00\x00+abc")

        with self.assertRaisesRegex(wire.Malformed, "cut short"):
            self.sent_by_child(send)


def _phase(outputs, inputs, entry_point="f", dataset="mbpp", atol=0):
    """A phase of calls whose expected outputs are `outputs`, recorded as the judge
    records them (compressed where large)."""
    return calls.Phase({
        "name": "plus", "entry_point": entry_point, "dataset": dataset, "task": None, "atol": atol,
        "inputs": json.dumps(inputs), "limits": [60.0] * len(inputs),
        "expected": [base64.b64encode(expected.stored(wire.encode(output))).decode() for output in outputs],
        "expected_form": "base64-each",
    })


class Judged(unittest.TestCase):
    """A phase judged end to end against a child that answers each call with frames it
    writes itself: what a candidate that bypasses its side of the wire can send."""

    def judge(self, phase, answers):
        """The Record of `phase` against a candidate whose answer to call i is the frames
        `answers[i]`."""
        answers_read, answers_write = os.pipe()
        calls_read, calls_write = os.pipe()
        candidate = os.fork()
        if candidate == 0:
            try:
                os.close(answers_read)
                os.close(calls_write)
                sending, reading = wire.Channel(-1, answers_write), wire.Channel(calls_read, -1)
                sending.send(wire.encode(("ready", True)))
                for frames in answers:
                    if reading.receive() is None:
                        break
                    for frame in frames:
                        sending.send(frame)
                reading.receive()
            finally:
                os._exit(0)
        os.close(answers_write)
        os.close(calls_read)
        channel = wire.Channel(answers_read, calls_write, budget=1 << 30)
        try:
            return calls.judge_phase(phase, channel, lambda shown, suffix: None)
        finally:
            os.close(calls_write)
            os.close(answers_read)
            os.waitpid(candidate, 0)

    @staticmethod
    def streamed(value):
        """The frames of `value` sent as an answer streamed in parts of `size` bytes."""
        encoded = wire.encode(("return", value))
        return [wire.STREAMED] + [wire.PART_MORE + encoded[at:at + 65536] for at in range(0, len(encoded), 65536)] \
            + [wire.PART_WHOLE]

    def test_the_expected_bytes_pass_and_any_other_bytes_of_another_value_fail(self):
        phase = _phase([LARGE], [[1]])
        self.assertEqual(self.judge(phase, [self.streamed(LARGE)]).status, "passed")
        # The same prefix, a different tail.
        other = LARGE[:-1] + [("red", "green", "blue", "8")]
        self.assertEqual(self.judge(_phase([LARGE], [[1]]), [self.streamed(other)]).status, "failed")
        # The expected bytes and more after them.
        longer = self.streamed(LARGE)
        longer.insert(-1, wire.PART_MORE + wire.encode(None))
        self.assertEqual(self.judge(_phase([LARGE], [[1]]), [longer]).status, "error")
        # The expected bytes less their last.
        shorter = self.streamed(LARGE)
        shorter[-2] = shorter[-2][:-1]
        self.assertEqual(self.judge(_phase([LARGE], [[1]]), [shorter]).status, "error")

    def test_an_equal_value_in_other_bytes_passes_by_value(self):
        # A list of lists where tuples were expected fails; a namedtuple for a tuple is
        # equal to it, as in EvalPlus, though its bytes differ.
        Item = collections.namedtuple("Item", "a b c d")
        self.assertEqual(self.judge(_phase([LARGE], [[1]]), [self.streamed([Item(*t) for t in LARGE])]).status,
                         "passed")
        self.assertEqual(self.judge(_phase([LARGE], [[1]]), [self.streamed([list(t) for t in LARGE])]).status,
                         "failed")

    def test_a_nan_is_unequal_to_itself_in_the_same_bytes_as_in_evalplus(self):
        nans = [float("nan")] * 200_000
        self.assertEqual(self.judge(_phase([nans], [[1]]), [self.streamed(nans)]).status, "failed")
        with_nan = [("a", 1.5)] * 100_000 + [("b", float("nan"))]
        self.assertEqual(self.judge(_phase([with_nan], [[1]]), [self.streamed(with_nan)]).status, "failed")

    def test_a_nan_among_floats_whose_bytes_look_like_nans_by_chance_is_found(self):
        # A million floats' bytes hold a NaN's first two bytes somewhere by chance: those
        # must still pass by their bytes, and a real NaN among them must not.
        import random

        rng = random.Random(7)
        floats = [rng.uniform(-1e300, 1e300) for _ in range(200_000)]
        self.assertTrue(expected._NAN.search(wire.encode(floats)))
        self.assertEqual(self.judge(_phase([floats], [[1]]), [self.streamed(floats)]).status, "passed")
        floats[150_000] = float("nan")
        self.assertEqual(self.judge(_phase([floats], [[1]]), [self.streamed(floats)]).status, "failed")

    def test_an_answer_of_the_same_size_differing_in_one_byte_fails(self):
        floats = [0.5] * 200_000
        other = list(floats)
        other[100_000] = 0.75
        self.assertEqual(len(wire.encode(other)), len(wire.encode(floats)))
        self.assertEqual(self.judge(_phase([floats], [[1]]), [self.streamed(other)]).status, "failed")

    def test_small_outputs_pass_by_their_bytes_as_by_value(self):
        phase = _phase([[1, 2], "x", [0.5, 1.5], 3], [[1], [2], [3], [4]])
        answers = [[wire.encode(("return", value))] for value in ([1, 2], "x", [0.5, 1.5], 3)]
        self.assertEqual(self.judge(phase, answers).status, "passed")
        # A NaN is unequal to itself, in the same bytes too.
        self.assertEqual(self.judge(_phase([[float("nan")]], [[1]]), [[wire.encode(("return", [float("nan")]))]])
                         .status, "failed")
        # The float tolerance, once set by a float passed by its bytes, holds for the next.
        phase = _phase([0.5, 1.0], [[1], [2]])
        answers = [[wire.encode(("return", 0.5))], [wire.encode(("return", 1.0000001))]]
        self.assertEqual(self.judge(phase, answers).status, "passed")

    def test_equal_bytes_set_the_float_tolerance_for_the_inputs_after(self):
        # EvalPlus takes 1e-6 as the tolerance once an expected output is a float, for
        # every later input: a float list passed by its bytes sets it too.
        floats = [0.5] * 200_000
        phase = _phase([floats, 1.0], [[1], [2]])
        self.assertEqual(self.judge(phase, [self.streamed(floats), [wire.encode(("return", 1.0000001))]]).status,
                         "passed")
        phase = _phase([[("x", 0.5)] * 200_000, 1.0], [[1], [2]])
        self.assertEqual(
            self.judge(phase, [self.streamed([("x", 0.5)] * 200_000), [wire.encode(("return", 1.0000001))]]).status,
            "passed")
        phase = _phase([[("x", 1)] * 200_000, 1], [[1], [2]])
        self.assertEqual(
            self.judge(phase, [self.streamed([("x", 1)] * 200_000), [wire.encode(("return", 1.0000001))]]).status,
            "failed")

    def test_a_problem_with_an_oracle_compares_values(self):
        # MBPP+'s set-equality tasks compare set(answer) with set(expected): equal bytes
        # of unhashable items fail there, as in EvalPlus.
        lists = [[i % 5, 1] for i in range(300_000)]
        phase = _phase([lists], [[1]], entry_point="similar_elements")
        self.assertEqual(self.judge(phase, [self.streamed(lists)]).status, "failed")


class Kept(unittest.TestCase):
    def test_large_outputs_are_kept_compressed_and_every_output_decodes_to_its_value(self):
        small, large = wire.encode([1, 2]), wire.encode(LARGE)
        self.assertEqual(expected.stored(small), small)
        self.assertLess(len(expected.stored(large)), len(large) // 10)
        kept = expected.ExpectedOutputs.recorded([expected.stored(small), expected.stored(large)])
        self.assertEqual(kept.value(0, None), [1, 2])
        self.assertEqual(kept.value(1, None), LARGE)
        with self.assertRaises(wire.TooLarge):
            kept.value(1, 1 << 20)

    def test_a_small_output_its_encoder_saw_free_of_nans_is_never_searched_again(self):
        # The byte before it says so; an output whose encoder said nothing, or saw that it
        # may hold a NaN, is kept as it is and told from its bytes or its value.
        searched = []
        search = expected._maybe_self_unequal
        expected._maybe_self_unequal = lambda encoding: searched.append(encoding) or search(encoding)
        try:
            for value, maybe_unequal, passes in ((["AGX", 1.5], False, True), (["AGX", 1.5], None, True),
                                                 ([float("nan")], True, False), ([float("nan")], None, False)):
                with self.subTest(value=value, maybe_unequal=maybe_unequal):
                    searched.clear()
                    encoding = wire.encode(value)
                    record = expected.stored(encoding, None, maybe_unequal)
                    self.assertEqual(record[1:] == encoding, maybe_unequal is False)
                    kept = expected.ExpectedOutputs.recorded([record])
                    self.assertEqual(kept.equal_bytes(0, encoding, None), passes)
                    self.assertEqual(bool(searched), maybe_unequal is not False)
                    self.assertEqual(repr(kept.value(0, None)), repr(value))
        finally:
            expected._maybe_self_unequal = search

    def test_an_answer_of_the_expected_bytes_passes_without_reading_the_recorded_encoding(self):
        # A large output is recorded with its digest: judging an answer of its very bytes
        # never inflates the encoding, which a different answer needs.
        record = expected.stored(wire.encode(LARGE))
        cut = expected.ExpectedOutputs.recorded([record[:len(record) // 2]])
        budget = 1 << 30
        self.assertTrue(cut.equal_bytes(0, wire.encode(LARGE), budget))
        self.assertFalse(cut.equal_bytes(0, wire.encode(LARGE[:-1] + [("a", "b", "c", "d")]), budget))
        with self.assertRaises(wire.Malformed):
            cut.value(0, budget)

    def test_a_call_is_the_encoding_of_its_arguments_recorded_or_not(self):
        inputs = [[1, "a", [0.5] * 20], [[[1, 2]], {"k": None}], [10 ** 40]]
        spec = {"name": "plus", "entry_point": "f", "dataset": "mbpp", "task": None, "inputs": json.dumps(inputs)}
        encoding = calls.Phase(dict(spec, record=True))
        frames = [encoding.call(index) for index in range(len(inputs))]
        inputs = json.loads(spec["inputs"])
        # Plain arguments cross as marshal data, which the candidate's process reads as
        # they were.
        self.assertEqual(frames, [b"T\x00" + marshal.dumps(arguments, 2) for arguments in inputs])
        self.assertEqual([marshal.loads(frame[2:]) for frame in frames], inputs)
        # What the recording phase encoded is what a phase given those bytes sends, and
        # that phase reads its inputs only when it must show one.
        recorded = [base64.b64encode(encoding.encoded[index]).decode() for index in range(len(inputs))]
        given = calls.Phase(dict(spec, inputs="not json", arguments=recorded))
        self.assertEqual([given.call(index) for index in range(len(inputs))],
                         [b"M\x00" + marshal.dumps(arguments, 2) for arguments in inputs])
        self.assertEqual(given.count, 3)
        with self.assertRaises(ValueError):
            given.inputs

    def test_arguments_marshal_would_not_rebuild_as_they_were_cross_by_the_wire(self):
        class Number(int):
            pass

        nested = []
        for _ in range(5000):
            nested = [nested]
        for arguments in ([fractions.Fraction(1, 3)], [Number(3)], [collections.OrderedDict(a=1)], [nested]):
            with self.subTest(arguments=type(arguments[0])):
                self.assertIsNone(calls._marshalled(arguments))
        self.assertEqual(calls._marshalled([True, None, 1.5, (1, 2), {3}, frozenset(), b"x", 1j]),
                         marshal.dumps([True, None, 1.5, (1, 2), {3}, frozenset(), b"x", 1j], 2))

    def test_strings_holding_the_tags_of_numpy_values_and_decimals_pass_by_their_bytes(self):
        # Guards the bug where any A, G or X byte, a letter of "Green" too, took a large
        # output for one that may be unequal to itself: it was decoded twice to tell, which
        # a budget that holds it once did not allow, and the canonical solution's very
        # bytes then failed as out of memory.
        colors = [("Red", "Green", "Blue", "Xenon", "Amber", f"{i % 7}") for i in range(120_000)]
        encoding = wire.encode(colors)
        self.assertGreater(len(encoding), expected.LARGE)
        budget = 16 << 20
        with self.assertRaises(wire.TooLarge):
            wire.decode(encoding, budget // 2)
        kept = expected.ExpectedOutputs.recorded([expected.stored(encoding, budget)])
        self.assertTrue(kept.equal_bytes(0, encoding, budget))

    def test_only_values_that_may_be_unequal_to_themselves_are_decoded_to_tell(self):
        def walk_finds(value):
            return expected._walk_finds_self_unequal(wire.encode(value))

        for value in (["AGX", b"AGX\x7f\xff\xf8", 0x41_47_58, 1.5, 1.5j, ("A", {"G": ["X"]})],
                      [float("-0.0"), 10 ** 40, None, True, collections.deque("A", 3)]):
            with self.subTest(value=value):
                self.assertFalse(walk_finds(value))
        for value in ([float("nan")], ["G", float("nan")], [complex(1, float("nan"))], [decimal.Decimal("NaN")],
                      {"X": [decimal.Decimal(1)]}):
            with self.subTest(value=value):
                self.assertTrue(walk_finds(value))
        # A numpy scalar (numpy need not be installed to tell it from its tag): a
        # float64 NaN's bytes, then its dtype.
        scalar = b"G" + (8).to_bytes(4, "big") + b"\x00" * 6 + b"\xf8\x7f" + wire.encode("<f8")
        self.assertTrue(expected._walk_finds_self_unequal(b"L\x00\x00\x00\x02" + wire.encode("G") + scalar))
        # Bytes cut short are no proof of anything: they are decoded to tell.
        self.assertTrue(expected._walk_finds_self_unequal(b"L\x00\x00\x00\x02" + wire.encode("Green") + b"S\x00\x00"))

    def test_is_floats_from_the_bytes_is_evalplus_is_floats(self):
        for value in ([0.5] * 200_000, [("a", 0.5)] * 200_000, [0.5] * 200_000 + [1], [1] + [0.5] * 200_000,
                      tuple([0.25] * 200_000), "x" * (2 << 20), {i: 0.5 for i in range(100_000)}):
            with self.subTest(value=type(value)):
                kept = expected.ExpectedOutputs.recorded([expected.stored(wire.encode(value))])
                self.assertEqual(kept.is_floats(0, 1 << 30), calls.evalplus.is_floats(value))


if __name__ == "__main__":
    unittest.main()
