"""Standard-input problems: each test is one run of the whole program, as `__main__`, on
the test's input, in a fresh process forked from the warm driver, under its own time
limit. What it printed is compared here, in the driver, after the program is dead: the
program never sees the expected output, and nothing it does can change the comparison.

The comparison is LiveCodeBench's unless the problem asks for another: strip both
outputs, split them into lines and strip each; the same number of lines, and each line
the same, or else a line of numbers equal as decimals ("2.50" is "2.5"). A float
tolerance, or a checker program for problems with many right answers, may replace it.
"""

import decimal
import os
import shutil
import subprocess
import sys
import tempfile

# How much of a test's expected output and of what came back a detail shows.
SHOWN = 120
# Output beyond this many bytes more than expected is not kept: it cannot be right.
OUTPUT_SLACK = 1 << 20
CHECKER_TIMEOUT = 30


def _shorten(text):
    text = text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."
    return repr(text)


def _lines(text):
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line):
    try:
        return [decimal.Decimal(token) for token in line.split()]
    except (decimal.InvalidOperation, ValueError):
        return None


def _same_decimals(got, expected):
    got_numbers, expected_numbers = _decimals(got), _decimals(expected)
    if got_numbers is None or expected_numbers is None:
        return False
    try:
        return got_numbers == expected_numbers
    except decimal.InvalidOperation:
        # A signalling NaN cannot be compared.
        return False


def _close_tokens(got, expected, tolerance):
    got_tokens, expected_tokens = got.split(), expected.split()
    if len(got_tokens) != len(expected_tokens):
        return False
    for a, b in zip(got_tokens, expected_tokens):
        if a == b:
            continue
        try:
            x, y = float(a), float(b)
        except ValueError:
            return False
        if not abs(x - y) <= tolerance * max(1.0, abs(y)):
            return False
    return True


def compare(got, expected, tolerance=None):
    """None if `got` is right, else what is wrong with it."""
    got_lines, expected_lines = _lines(got), _lines(expected)
    if len(got_lines) != len(expected_lines):
        return f"printed {len(got_lines)} lines, expected {len(expected_lines)}"
    for number, (a, b) in enumerate(zip(got_lines, expected_lines), 1):
        if a == b:
            continue
        same = _close_tokens(a, b, tolerance) if tolerance is not None else _same_decimals(a, b)
        if not same:
            return f"line {number} is {_shorten(a)}, expected {_shorten(b)}"
    return None


def check_with(checker, test_input, got, expected):
    """None if the checker program accepts `got`, else what it said. The checker runs
    as `checker INPUT OUTPUT ANSWER`, testlib's order, with the interpreter; exit
    status 0 accepts."""
    directory = tempfile.mkdtemp(prefix="checker-")
    try:
        paths = {}
        for name, text in (("checker.py", checker), ("input", test_input), ("output", got), ("answer", expected)):
            paths[name] = os.path.join(directory, name)
            with open(paths[name], "w", encoding="utf-8", errors="surrogateescape") as file:
                file.write(text)
        try:
            ended = subprocess.run(
                [sys.executable, paths["checker.py"], paths["input"], paths["output"], paths["answer"]],
                stdin=subprocess.DEVNULL, capture_output=True, timeout=CHECKER_TIMEOUT, cwd=directory,
            )
        except subprocess.TimeoutExpired:
            return f"the checker did not finish within {CHECKER_TIMEOUT} s"
        if ended.returncode == 0:
            return None
        said = (ended.stdout + ended.stderr).decode("utf-8", "replace").strip()
        return f"the checker rejected it (exit status {ended.returncode}){': ' + _shorten(said) if said else ''}"
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _ended(status, stderr):
    """What a program's ending says, unless it ran to its end: (status, detail)."""
    if os.WIFSIGNALED(status):
        return None
    code = os.WEXITSTATUS(status)
    if code == 0:
        return None
    last = [line for line in stderr.strip().splitlines() if line.strip()]
    why = f": {last[-1].strip()}" if last else ""
    return "failed", f"runtime error (exit status {code}){why}"


class Tested:
    """What a sample's runs came to: its verdict's fields, every run, the counts of
    tests, and the first failure."""

    def __init__(self, fields, executions, counts, failure):
        self.fields = fields
        self.executions = executions
        self.counts = counts
        self.failure = failure


def run(suite, timeout, execute):
    """Runs the program on each test with `execute(stdin, timeout, output_cap)`, stopping
    at the first that fails unless every test is to be run; None if the harness went
    away."""
    tests = suite["tests"]
    every_test = bool(suite.get("all"))
    tolerance = suite.get("float_tolerance")
    checker = suite.get("checker")
    executions = []
    passed = 0
    first = None
    for index, test in enumerate(tests):
        expected = test["output"]
        execution = execute(test["input"].encode("utf-8", "surrogateescape"), timeout,
                            2 * len(expected) + OUTPUT_SLACK)
        if execution.fields is None:
            return None
        executions.append(execution)
        where = f"test {index + 1} of {len(tests)}"
        status, detail, result = execution.fields[:3]
        if status == "error" and not os.WIFSIGNALED(execution.status):
            # The program ran to an exit of its own: its status says how it went.
            ending = _ended(execution.status, execution.err.text())
            if ending is None:
                got = execution.out.text()
                if execution.out.total > len(execution.out.head):
                    wrong = f"printed {execution.out.total} bytes, far more than expected"
                elif checker is not None:
                    wrong = check_with(checker, test["input"], got, expected)
                else:
                    wrong = compare(got, expected, tolerance)
                if wrong is None:
                    passed += 1
                    continue
                fields = ("failed", f"wrong answer on {where}: {wrong}", "failed: wrong answer")
                failure = {"test": index, "outcome": "wrong answer", "why": wrong,
                           "expected": _shorten(expected), "got": _shorten(got)}
            else:
                fields = (ending[0], f"{ending[1]} on {where}", f"failed: {ending[1]}")
                failure = {"test": index, "outcome": "runtime error", "why": ending[1]}
        elif status == "timeout":
            fields = ("timeout", f"time limit on {where}: {detail}", result)
            failure = {"test": index, "outcome": "time limit", "why": detail}
        else:
            fields = (status, f"{detail} on {where}", result)
            failure = {"test": index, "outcome": status, "why": detail}
        if first is None:
            first = (fields, failure)
        if not every_test:
            break
    fields, failure = first if first is not None else (("passed", "", "passed"), None)
    counts = {"passed": passed, "run": len(executions), "total": len(tests)}
    return Tested(fields, executions, counts, failure)
