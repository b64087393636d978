"""The names the tests use that stand for a module (sandbox/passk_driver/judge.py): what
the problem's solution imports is read from its text, and a module of the candidate's is
the judge's own import, or refused, never imported on the candidate's word when it acts
on import or is not installed.

    python3 -m unittest discover -s tests/interpreter
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sandbox"))
from passk_driver import handles, judge, wire  # noqa: E402


def module_handle(name):
    """A handle, as the judge receives it, to a module of the candidate's named `name`."""
    return handles.Handle(handles.JudgeHandles(None), 0, "module", name, type(sys))


def module_named(name):
    """A module object of the candidate's that says it is `name`."""
    return type(sys)(name)


class ImportedNames(unittest.TestCase):
    def test_every_import_binds_its_name(self):
        solution = ("import numpy as np\nimport os.path\nfrom math import gcd as g, pi\nfrom . import local\n"
                    "def f():\n    import re\n    return re\n")
        self.assertEqual(judge.imported_names(solution), {
            "np": ("numpy", None), "os": ("os", None), "g": ("math", "gcd"), "pi": ("math", "pi"), "re": ("re", None),
        })

    def test_a_solution_that_does_not_parse_binds_nothing(self):
        self.assertEqual(judge.imported_names("def f(:\n"), {})
        self.assertEqual(judge.imported_names(""), {})


class StatementsByLine(unittest.TestCase):
    """Regression: a failure named only the first line of an assert written over several
    (HumanEval/1's), which cut it off before its expected value."""

    def test_each_line_of_a_statement_shows_the_whole_statement(self):
        test = ("def check(candidate):\n    assert candidate(1) == 2\n    assert candidate('x') == [\n"
                "        'a', 'b'\n    ]\n    for x in range(3):\n        assert candidate(x) == x\n")
        shown = judge.statements_by_line(test)
        whole = "assert candidate('x') == [ 'a', 'b' ]"
        self.assertEqual(shown[2:5], [whole] * 3)
        self.assertEqual(shown[1], "assert candidate(1) == 2")
        # A compound statement's lines stay their own: its body's statements are named.
        self.assertEqual(shown[5], "for x in range(3):")
        self.assertEqual(shown[6], "assert candidate(x) == x")

    def test_code_that_does_not_parse_is_shown_line_by_line(self):
        self.assertEqual(judge.statements_by_line("assert f(\n  1"), ["assert f(", "1"])


class ModulesOfTheJudge(unittest.TestCase):
    def test_the_problems_imports_and_standard_modules_are_the_judges_own(self):
        own = judge.modules_of_the_judge({"j": 1, "g": module_handle("x"), "math": 2}, {"j": ("json", None),
                                                                                     "g": ("math", "gcd")})
        self.assertIs(own["j"], json)
        self.assertIs(own["g"], sys.modules["math"].gcd)
        self.assertIs(own["math"], sys.modules["math"])

    def test_a_candidates_module_is_imported_only_if_standard(self):
        self.assertIs(judge.modules_of_the_judge({"m": module_handle("json")}, {})["m"], json)
        for name in ("antigravity", "this", "fake_numpy", "os.system"):
            record = judge.modules_of_the_judge({"np": module_handle(name)}, {})
            self.assertIsInstance(record, judge.Record, name)
            self.assertEqual(record.status, "failed")
            self.assertIn(name, record.detail)
        self.assertNotIn("antigravity", sys.modules)
        self.assertNotIn("this", sys.modules)

    def test_a_module_that_runs_code_on_import_is_never_imported(self):
        # Guards against `unittest.__main__`, which runs unittest's discovery from the
        # working directory on import: named as the candidate's module or sent as a
        # value, it imported test files the candidate wrote into the judge.
        for name in ("unittest.__main__", "json.__main__", "__main__", "__hello__", "email._parseaddr"):
            record = judge.modules_of_the_judge({"Pair": module_handle(name)}, {})
            self.assertIsInstance(record, judge.Record, name)
            self.assertEqual(record.status, "failed", name)
            try:
                frame = wire.encode(module_named(name))
            except wire.NotPlainData:
                continue
            with self.assertRaises(wire.Malformed, msg=name):
                wire.decode(frame)
        self.assertNotIn("unittest.__main__", sys.modules)
        self.assertNotIn("json.__main__", sys.modules)

    def test_a_class_or_object_of_the_candidates_stays_a_handle(self):
        handle = handles.Handle(handles.JudgeHandles(None), 1, "class", "Pair", type)
        self.assertEqual(judge.modules_of_the_judge({"Pair": handle}, {}), {})

    def test_a_module_the_judge_cannot_import_makes_the_problem_unjudgeable(self):
        record = judge.modules_of_the_judge({"np": 1}, {"np": ("no_such_module_here", None)})
        self.assertEqual(record.status, "unjudgeable")
        self.assertIn("no_such_module_here", record.detail)


if __name__ == "__main__":
    unittest.main()
