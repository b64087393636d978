"""EvalPlus's comparison of an answer with the expected output
(sandbox/passk_driver/evalplus.py), for numpy values as EvalPlus 0.3.1's
`unsafe_execute` treats them: numpy.float64 is a float, numbers within the tolerance
pass whether numpy's or Python's, and an array compared with `==` decides nothing
unless it has one element. Needs numpy (Debian's python3-numpy):

    /usr/bin/python3 -m unittest discover -s tests/interpreter
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sandbox"))
from passk_driver import evalplus  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None


def matches(got, expected, atol=0.0, entry_point="f"):
    return evalplus.Comparison("humaneval", entry_point, atol).matches((), got, expected)


@unittest.skipIf(numpy is None, "numpy is not importable by this interpreter")
class NumpyAnswers(unittest.TestCase):
    # Regression: a candidate's numpy.float64 was refused where EvalPlus accepts it.
    def test_a_numpy_float_equal_to_the_expected_float_passes(self):
        self.assertTrue(matches(numpy.float64(2.5), 2.5))

    def test_numpy_floats_within_the_tolerance_pass_in_a_list(self):
        self.assertTrue(matches([numpy.float64(1.0 + 1e-9), numpy.float64(2.0)], [1.0, 2.0]))

    def test_numpy_floats_beyond_the_tolerance_fail(self):
        self.assertFalse(matches([numpy.float64(1.001), 2.0], [1.0, 2.0]))

    def test_a_close_numpy_scalar_fails_as_in_evalplus_for_its_type(self):
        # EvalPlus asserts type(out) == type(exp) once equality fails.
        self.assertFalse(matches(numpy.float64(2.5 + 1e-9), 2.5))

    def test_numpy_integers_equal_to_python_integers_pass(self):
        self.assertTrue(matches(numpy.int64(7), 7))
        self.assertFalse(matches(numpy.int64(8), 7))

    def test_a_numpy_float_expected_output_gets_the_float_tolerance(self):
        self.assertTrue(evalplus.is_floats(numpy.float64(1.0)))
        self.assertTrue(evalplus.is_floats(numpy.array([1.0, 2.0])))
        self.assertFalse(evalplus.is_floats(numpy.array([1, 2])))
        self.assertTrue(matches(numpy.float64(1.0 + 1e-9), numpy.float64(1.0)))

    def test_an_array_of_several_items_decides_nothing_by_equality(self):
        self.assertFalse(matches(numpy.array([1, 2]), [1, 2]))
        self.assertTrue(matches(numpy.array([3]), [3]))


class PlainAnswers(unittest.TestCase):
    def test_the_tolerance_holds_for_plain_floats(self):
        self.assertTrue(matches([1.0 + 1e-9], [1.0]))
        self.assertFalse(matches([1.001], [1.0]))
        self.assertFalse(matches((1.0,), [1.0]))


if __name__ == "__main__":
    unittest.main()
