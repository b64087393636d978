"""Each standard-input suite's comparison rule (sandbox/passk_driver/stdio.py): what the
suite's own harness accepts passes, and what it fails, fails, so that no wrong token
passes under passk where the suite's harness would fail it.

    python3 -m unittest discover -s tests/interpreter
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sandbox"))
from passk_driver import stdio  # noqa: E402

IDEOGRAPHIC_SPACE = "\u3000"
FULLWIDTH_TEN = "\uff11\uff10"
ARABIC_INDIC_TEN = "\u0661\u0660"


class Rule(unittest.TestCase):
    rule = None

    def assert_accepts(self, expected, *outputs):
        for got in outputs:
            self.assertIsNone(stdio.compare(got, expected, self.rule), f"{got!r} for {expected!r}")

    def assert_rejects(self, expected, *outputs):
        for got in outputs:
            self.assertIsNotNone(stdio.compare(got, expected, self.rule), f"{got!r} for {expected!r}")


class LiveCodeBench(Rule):
    """LiveCodeBench's grade_stdio (lcb_runner/evaluation/testing_util.py): lines stripped,
    the same count, each line equal or, token by token, equal as Decimal."""

    rule = "livecodebench"

    def test_lines_equal_once_stripped_or_equal_as_decimals(self):
        self.assert_accepts("10\n", "10", "  10  \n\n", "10.0", "1e1", "+010.000", "1_0", FULLWIDTH_TEN,
                            ARABIC_INDIC_TEN, "10" + IDEOGRAPHIC_SPACE)
        self.assert_accepts("1 2\n3\n", "1.0 2.00\n3", "1  2\n3.0\n")
        self.assert_accepts("YES\nNO", "YES\r\nNO\r\n")

    def test_anything_else_fails(self):
        self.assert_rejects("10", "10.0000001", "ten", "0x10", "1 0", "10 10", "", "10\n10", "NaN", "sNaN")
        self.assert_rejects("YES", "yes", "Yes")
        self.assert_rejects("1 2\n3 4", "3 4\n1 2", "2 1\n4 3", "1 2\n\n3 4")
        # NaN equals no decimal, itself neither.
        self.assert_rejects("NaN", "nan", "NAN")


class CodeContests(Rule):
    """SandboxFusion's check_stdio_test_case (sandbox/datasets/common.py), which judges its
    CodeContests: lines lower-cased and stripped, the same count (one extra empty line
    dropped), each line equal or both one float within a relative 1e-5."""

    rule = "code-contests"

    def test_lines_equal_ignoring_case_or_floats_within_a_relative_1e_5(self):
        self.assert_accepts("10\n", "10", "  10  \n", "10.0", "10.00001", "9.99991", "1e1", "+010.000", "1_0",
                            FULLWIDTH_TEN, "10" + IDEOGRAPHIC_SPACE)
        self.assert_accepts("YES\nNO", "yes\nno", "Yes\r\nnO\n")
        self.assert_accepts("0", "-0", "0.0000000000000001")
        # Relative to the expected number, or to 1e-10 for 0.
        self.assert_rejects("0", "0.00000000001")

    def test_anything_else_fails(self):
        self.assert_rejects("10", "10.001", "9.9", "ten", "1 0", "10 10", "", "10\n10", "inf", "nan")
        # Tokens are not numbers on their own: a line of several is compared as text.
        self.assert_rejects("1 2", "1.0 2.0", "1  2", "2 1")
        self.assert_rejects("1 2\n3 4", "3 4\n1 2", "1 2\n\n3 4")
        self.assert_rejects("nan", "1")


class Apps(Rule):
    """APPS's run_test for standard input (eval/testing_util.py): the output joined or
    stripped equal to the expected one; the non-empty lines equal; every line one number,
    numpy.allclose; or the set of lines' token sets equal, as text or rounded to 3
    places."""

    rule = "apps"

    def test_its_checks_in_turn(self):
        self.assert_accepts("10\n", "10", " 10\n\n", "10.00001", "1e1", "+010.000", "1_0", FULLWIDTH_TEN)
        self.assert_accepts("1 2\n3 4\n", "1 2\n\n3 4", "3 4\n1 2", "2 1\n4 3", "1.0 2.0\n3 4", "1.0001 2\n3 4",
                            "4 3\n2 1\n1 2")
        self.assert_accepts("1 1 2", "2 1", "1 2 2")
        self.assert_accepts("12345678901234567890", "12345678901234567891")

    def test_anything_else_fails(self):
        self.assert_rejects("10", "10.001", "ten", "1 0", "")
        self.assert_rejects("YES\nNO", "yes\nno", "YES")
        self.assert_rejects("1 2\n3 4", "1 2\n3 5", "1 2", "1 2 3 4", "1.001 2\n3 4")
        # A whitespace-only line of the expected output is a line with no tokens, which
        # the program's output, whose empty lines are dropped, never has.
        self.assert_rejects("1\n \n2", "1\n2\n3")


class Overrides(unittest.TestCase):
    def test_a_float_tolerance_replaces_every_rule(self):
        for rule in stdio.RULES:
            self.assertIsNone(stdio.compare("0.333", "0.3333333", rule, 1e-3), rule)
            self.assertIsNotNone(stdio.compare("0.34", "0.3333333", rule, 1e-3), rule)

    def test_a_wrong_line_is_named(self):
        self.assertEqual(stdio.compare("1\n5\n3", "1\n2\n3", "livecodebench"), ("line 2 is '5'", ", expected '2'"))
        self.assertEqual(stdio.compare("1\n5\n3", "1\n2\n3", "code-contests"), ("line 2 is '5'", ", expected '2'"))
        self.assertEqual(stdio.compare("1\n2", "1\n2\n3", "apps"), ("printed 2 lines", ", expected 3 lines"))

    def test_a_count_of_lines_is_said_in_words(self):
        # Regression: a program that printed nothing was said to have "printed 1 lines",
        # the one empty line its stripped output splits into.
        for rule in stdio.RULES:
            self.assertEqual(stdio.compare("", "1\n2", rule), ("printed nothing", ", expected 2 lines"), rule)
            self.assertEqual(stdio.compare(" \n", "1\n2", rule), ("printed nothing", ", expected 2 lines"), rule)
            self.assertEqual(stdio.compare("1", "1\n2", rule), ("printed 1 line", ", expected 2 lines"), rule)
            self.assertEqual(stdio.compare("1\n2", "", rule), ("printed 2 lines", ", expected nothing"), rule)


if __name__ == "__main__":
    unittest.main()
