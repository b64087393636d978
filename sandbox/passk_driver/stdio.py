"""Standard-input problems: each test is one run of the whole program, as `__main__`, on
the test's input, in a fresh process forked from the warm driver, under its own time
limit (`run`, in the driver). What it printed is compared by the judge, after the
program is dead (`judge_output`): the expected outputs reach the judge from the harness
and never the driver, whose memory every candidate is forked from, so no program can
find them, and nothing it does can change the comparison.

The comparison is the suite's own harness's (`RULES`, by the suite's `compare`), so that
no output passes that the suite's harness would fail. A float tolerance, or a checker
program for problems with many right answers, may replace it.
"""

import decimal
import math
import os
import re
import signal
import subprocess
import sys

from . import candidate

# How much of a test's expected output and of what came back a detail shows.
SHOWN = 120
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


def _first_difference(got_lines, expected_lines):
    """What is wrong, as `compare` says it, of lines that do not match: their count, or
    the first line that differs."""
    if len(got_lines) != len(expected_lines):
        return f"printed {_printed(got_lines)}", f", expected {_printed(expected_lines)}"
    for number, (a, b) in enumerate(zip(got_lines, expected_lines), 1):
        if a != b:
            return _wrong_line(number, a, b)
    return "printed what the rule does not match", ""


def _empty(lines):
    # An output of nothing but blank space is one empty line once stripped and split, or
    # where a rule keeps lines unstripped (APPS), lines of blanks.
    return not any(line.strip() for line in lines)


def _printed(lines):
    if _empty(lines):
        return "nothing"
    return "1 line" if len(lines) == 1 else f"{len(lines)} lines"


def _wrong_line(number, got, expected):
    return f"line {number} is {_shorten(got)}", f", expected {_shorten(expected)}"


def livecodebench(got, expected):
    """LiveCodeBench's rule (lcb_runner/evaluation/testing_util.py, grade_stdio): strip
    both outputs, split them at newlines and strip each line; the same number of lines,
    and each line the same, or else both lines of tokens that all parse as Decimal and
    are equal as lists of decimals ("2.50" is "2.5")."""
    got_lines, expected_lines = _lines(got), _lines(expected)
    if len(got_lines) != len(expected_lines):
        return _first_difference(got_lines, expected_lines)
    for number, (a, b) in enumerate(zip(got_lines, expected_lines), 1):
        if a != b and not _same_decimals(a, b):
            return _wrong_line(number, a, b)
    return None


def _float(text):
    try:
        return float(text)
    except ValueError:
        return None


def code_contests(got, expected):
    """CodeContests' rule, as SandboxFusion judges the suite (sandbox/datasets/common.py,
    check_stdio_test_case with its default lower_cmp=True): strip both outputs and split
    them at newlines, dropping one extra empty line on either side; the same number of
    lines, and each line, lower-cased, the same once stripped, or else both lines numbers
    (Python's float) within a relative 1e-5 of the expected one."""
    got_lines, expected_lines = got.strip().split("\n"), expected.strip().split("\n")
    if len(got_lines) - len(expected_lines) == 1 and got_lines[-1] == "":
        got_lines = got_lines[:-1]
    if len(expected_lines) - len(got_lines) == 1 and expected_lines[-1] == "":
        expected_lines = expected_lines[:-1]
    if len(got_lines) != len(expected_lines):
        return _first_difference(got_lines, expected_lines)
    for number, (a, b) in enumerate(zip(got_lines, expected_lines), 1):
        low_a, low_b = a.lower(), b.lower()
        if low_a.strip() == low_b.strip():
            continue
        x, y = _float(low_a), _float(low_b)
        if x is not None and y is not None and abs(x - y) / max(abs(y), 1e-10) < 1e-5:
            continue
        return _wrong_line(number, a.strip(), b.strip())
    return None


def _close(x, y):
    """numpy.isclose with its defaults (rtol 1e-5, atol 1e-8): infinities only equal to
    themselves, NaN to nothing."""
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= 1e-8 + 1e-5 * abs(y)


def _rounded_sets(token_sets):
    return {frozenset(round(float(token), 3) for token in tokens) for tokens in token_sets}


def apps(got, expected):
    """APPS's rule (eval/testing_util.py, run_test for standard input), its checks in
    order, any of which passes: the output's lines (str.splitlines), joined again,
    equal the expected output once both are stripped, or with each line stripped; the
    output's lines, or its non-empty ones, equal the expected output's non-empty lines,
    stripped; each non-empty line one number, all numpy.allclose to the expected ones;
    the set of the lines' sets of tokens equal to the expected one's, or of their
    numbers rounded to 3 places."""
    out = got.splitlines()
    if "\n".join(out).strip() == expected.strip():
        return None
    if "\n".join(line.strip() for line in out).strip() == expected.strip():
        return None
    expected_lines = [line.strip() for line in expected.split("\n") if line]
    out_lines = [line for line in out if line]
    if out == expected_lines or out_lines == expected_lines:
        return None
    try:
        out_numbers = [float(line) for line in out_lines]
        expected_numbers = [float(line) for line in expected_lines]
        if len(out_numbers) == len(expected_numbers) and all(map(_close, out_numbers, expected_numbers)):
            return None
    except ValueError:
        pass
    expected_sets = [set(line.split()) for line in expected_lines]
    out_sets = [set(tokens) for tokens in (line.split() for line in out_lines) if tokens]
    if {frozenset(tokens) for tokens in out_sets} == {frozenset(tokens) for tokens in expected_sets}:
        return None
    try:
        if _rounded_sets(out_sets) == _rounded_sets(expected_sets):
            return None
    except ValueError:
        pass
    return _first_difference(out_lines, expected_lines)


# Each suite's rule, by the name its problems give; LiveCodeBench's where none is given.
RULES = {"livecodebench": livecodebench, "code-contests": code_contests, "apps": apps}


def compare(got, expected, rule="livecodebench", tolerance=None):
    """None if `got` is right by `rule` (or, with a tolerance, if each token is the same
    or a number within it), else what is wrong with it: (what the output did, the rest,
    which tells the expected output)."""
    if tolerance is None:
        return RULES[rule](got, expected)
    got_lines, expected_lines = _lines(got), _lines(expected)
    if len(got_lines) != len(expected_lines):
        return _first_difference(got_lines, expected_lines)
    for number, (a, b) in enumerate(zip(got_lines, expected_lines), 1):
        if a != b and not _close_tokens(a, b, tolerance):
            return _wrong_line(number, a, b)
    return None


def check_with(checker, test_input, got, expected):
    """None if the checker program accepts `got`, else what is wrong, as `compare` says
    it (what the checker said may tell the answer). The checker runs as `checker INPUT
    OUTPUT ANSWER`, testlib's order, with the interpreter; exit status 0 accepts. Its
    files are memory files that only the judge and the checker hold: the answer is never
    on a disk a candidate could read."""
    fds = []
    try:
        for text in (checker, test_input, got, expected):
            fd = os.memfd_create("checker", os.MFD_CLOEXEC)
            fds.append(fd)
            view = memoryview(text.encode("utf-8", "surrogateescape"))
            while view:
                view = view[os.write(fd, view):]
        paths = [f"/proc/self/fd/{fd}" for fd in fds]
        # The judge ignores SIGCHLD, so that the kernel reaps candidates' orphans; a
        # child it waits for would be reaped before it could see how the child ended.
        ignoring = signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        try:
            ended = subprocess.run(
                [sys.executable, *paths], pass_fds=fds, stdin=subprocess.DEVNULL, capture_output=True,
                timeout=CHECKER_TIMEOUT, cwd="/",
            )
        except subprocess.TimeoutExpired:
            return f"the checker did not finish within {CHECKER_TIMEOUT} s", ""
        finally:
            signal.signal(signal.SIGCHLD, ignoring)
            _reap_orphans()
        if ended.returncode == 0:
            return None
        said = (ended.stdout + ended.stderr).decode("utf-8", "replace").strip()
        return f"the checker rejected it (exit status {ended.returncode})", f": {_shorten(said)}" if said else ""
    finally:
        for fd in fds:
            os.close(fd)


def _reap_orphans():
    """Reaps whatever ended while the judge was waiting for its checker."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def judge_output(suite, index, got):
    """None if `got` is right for test `index` of `suite` (the judge's whole suite), else
    (what is wrong, the expected output shortened, the rest of what is wrong)."""
    test = suite["tests"][index]
    expected = test["output"]
    checker = suite.get("checker")
    if checker is not None:
        wrong = check_with(checker, test["input"], got, expected)
    else:
        wrong = compare(got, expected, suite.get("compare") or "livecodebench", suite.get("float_tolerance"))
    if wrong is None:
        return None
    public, suffix = wrong
    return public, _shorten(expected), suffix


def _ended(status, stderr, python):
    """What a program's ending says, unless it ran to its end: (status, detail). Only
    a Python program's process tells a compile error by its exit status."""
    if os.WIFSIGNALED(status):
        return None
    code = os.WEXITSTATUS(status)
    if code == 0:
        return None
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    # Python ends its traceback with the exception; Node and the JVM print it first and
    # a stack (and Node its version) after.
    named = [] if python else [line for line in lines if re.search(r"(Error|Exception)\b", line)]
    shown = named[:1] or lines[-1:]
    why = f": {shown[0]}" if shown else ""
    if python and code == candidate.EXIT_DOES_NOT_COMPILE:
        return "error", f"does not compile{why}"
    return "failed", f"runtime error (exit status {code}){why}"


class Tested:
    """What a sample's runs came to: its verdict's fields, every run, the counts of
    tests, and the first failure."""

    def __init__(self, fields, executions, counts, failure):
        self.fields = fields
        self.executions = executions
        self.counts = counts
        self.failure = failure


def run(suite, timeout, execute, judged, python=True):
    """Runs the program on each test with `execute(stdin, timeout, output_cap)` and has
    the judge compare what it printed with `judged(index, got, first)` (Record fields);
    stops at the first test that fails unless every test is to be run, and at a judge
    that could not compare. `suite` is the driver's part: inputs, no outputs. None if
    the harness went away."""
    tests = suite["tests"]
    every_test = bool(suite.get("all"))
    output_cap = suite["output_cap"]
    executions = []
    passed = 0
    first = None
    for index, test in enumerate(tests):
        execution = execute(test["input"].encode("utf-8", "surrogateescape"), timeout, output_cap)
        if execution.fields is None:
            return None
        executions.append(execution)
        where = f"test {index + 1} of {len(tests)}"
        status, detail, result = execution.fields[:3]
        halt = False
        if status == "error" and not os.WIFSIGNALED(execution.status):
            # The program ran to an exit of its own: its status says how it went.
            ending = _ended(execution.status, execution.err.text(), python)
            if ending is None:
                got = execution.out.text()
                if execution.out.total > len(execution.out.head):
                    judged_fields = ("failed", f"printed {execution.out.total} bytes, more than any right answer",
                                     "failed: wrong answer", {})
                else:
                    judged_fields = judged(index, got, first is None)
                if judged_fields[0] == "passed":
                    passed += 1
                    continue
                wrong = judged_fields[1]
                if judged_fields[0] == "failed":
                    fields = ("failed", f"wrong answer on {where}: {wrong}", "failed: wrong answer")
                    failure = {"test": index, "outcome": "wrong answer", "why": wrong, "got": _shorten(got)}
                    if judged_fields[3].get("sealed"):
                        failure["sealed"] = True
                else:
                    fields = (judged_fields[0], f"{wrong} on {where}", judged_fields[2])
                    failure = {"test": index, "outcome": judged_fields[0], "why": wrong}
                    halt = True
            else:
                fields = (ending[0], f"{ending[1]} on {where}", f"failed: {ending[1]}")
                outcome = "compile error" if ending[0] == "error" else "runtime error"
                failure = {"test": index, "outcome": outcome, "why": ending[1]}
        elif status == "timeout":
            fields = ("timeout", f"time limit on {where}: {detail}", result)
            failure = {"test": index, "outcome": "time limit", "why": detail}
        else:
            fields = (status, f"{detail} on {where}", result)
            failure = {"test": index, "outcome": status, "why": detail}
        if first is None:
            first = (fields, failure)
        if halt or not every_test:
            break
    fields, failure = first if first is not None else (("passed", "", "passed"), None)
    counts = {"passed": passed, "run": len(executions), "total": len(tests)}
    return Tested(fields, executions, counts, failure)
