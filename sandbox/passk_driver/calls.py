"""The judge of a suite of calls: each input is one call of the candidate's function,
made from the judge's process, and its answer is compared here with the expected output
(EvalPlus's HumanEval+ and MBPP+, LeetCode-style problems, LiveCodeBench's functional
tests). Nothing of the candidate's runs here: the arguments cross as copies and the
answers as plain data, so a candidate can neither change an input for the next call nor
answer with an object that claims to equal anything.

Each call has its own time limit, watched here. A phase is one candidate process; the
driver starts another for the next phase (EvalPlus runs base and plus inputs apart).
To compute the expected outputs the judge runs the canonical solution the same way and
records what it returns and how long each call took, each output sent to the harness on
the judge's own line as it comes (an output may be megabytes, a phase's hundreds). The
suite, expected outputs and all, comes to the judge from the harness, never through the
driver (harness_link.py).
"""

import base64
import binascii
import collections
import json
import marshal
import sys
import time

from . import candidate, evalplus, judge, wire
from . import expected as expected_outputs
from .expected import ExpectedOutputs, stored

# Arguments and answers shown in a failure's detail are cut to this many characters.
SHOWN = 200
# The canonical solution's calls sent ahead of the answer awaited, at most, and the most
# bytes of them: enough that it answers a run of calls each time it is scheduled, rather
# than one per round trip between the two processes, which share a CPU.
AHEAD = 32
AHEAD_BYTES = 1 << 16
# What an answer's frame holds before the value: the encoding of ("return", value) ends
# with the value's.
_RETURN_PREFIX = wire.encode(("return", None))[:-len(wire.encode(None))]
# What a call's frame holds before its arguments: the encoding of ("call", arguments, {},
# view) is this, the arguments', then the last two items'.
_CALL_HEAD = wire.encode(("call", None, None, None))[:-3 * len(wire.encode(None))]
# The same of a call whose time the candidate's process reports (see _took).
_TIMED_CALL_HEAD = wire.encode(("timed-call", None, None, None))[:-3 * len(wire.encode(None))]


class Phase:
    """One phase's inputs, expected outputs and limits, parsed once per judge."""

    def __init__(self, spec):
        self.name = spec["name"]
        self.entry_point = spec["entry_point"]
        self.dataset = spec.get("dataset")
        self.record = bool(spec.get("record"))
        self.every_input = bool(spec.get("all"))
        self.limits = spec.get("limits")
        # How long the canonical solution took on each input, where it was recorded: what
        # sets how far ahead of the answers a candidate's calls may go (see _Ahead).
        self.times = spec.get("times")
        self.limit_rule = spec.get("limit_rule", "")
        self.atol = float(spec.get("atol") or 0)
        self.equality = spec.get("compare", "evalplus")
        # The data is the suite's own, and may hold integers of any size: the expected
        # outputs read below as much as the inputs read when first needed.
        sys.set_int_max_str_digits(0)
        self._spec = spec
        self._inputs = None
        expected = spec.get("expected")
        if type(expected) is str and spec.get("expected_form") == "base64":
            self.expected = ExpectedOutputs(wire.decode(base64.b64decode(expected)))
        elif type(expected) is list and spec.get("expected_form") == "base64-each":
            # binascii's own function: base64's wraps it in more than a call's work per item.
            self.expected = ExpectedOutputs.recorded(list(map(binascii.a2b_base64, expected)))
        elif type(expected) is str and spec.get("expected_form") == "json-texts":
            self.expected = ExpectedOutputs([json.loads(text) for text in json.loads(expected)])
        elif type(expected) is str:
            self.expected = ExpectedOutputs(json.loads(expected))
        else:
            self.expected = None
        if self.equality == "apps" and self.expected is not None:
            # Suites of this rule give their outputs as values, never as recordings.
            self.expected = self.expected.mapped(_apps_expected)
        arguments = spec.get("arguments")
        if type(arguments) is list:
            self.arguments = list(map(binascii.a2b_base64, arguments))
            self.count = len(self.arguments)
        else:
            self.arguments = None
            # Read now, so that inputs that cannot be read make the phase unjudgeable.
            self.count = len(self.inputs)
        # While recording, each input's arguments as encoded for its call, until the
        # harness is sent them with the output.
        self.encoded = {}
        candidate_view, canonical_view = evalplus.views(evalplus.oracle(self.dataset, self.entry_point))
        self.view = canonical_view if self.record else candidate_view
        self._call_tail = wire.encode({}) + wire.encode(self.view)
        kind = candidate.MARSHALLED_TIMED_CALL if self.record else candidate.MARSHALLED_CALL
        self._marshalled_head = bytes([kind, candidate.VIEW_CODES.index(self.view)])

    @property
    def inputs(self):
        """Each input's arguments, read when first needed: where the calls come encoded,
        only to show a failure or for an oracle that reads them."""
        if self._inputs is None:
            spec = self._spec
            inputs = json.loads(spec["inputs"])
            if spec.get("inputs_form") == "lines":
                inputs = [[json.loads(line) for line in text.split("\n")] for text in inputs]
            inputs = evalplus.rebuild_inputs(self.dataset, spec.get("task"), inputs)
            if self.equality == "apps" and self.expected is not None:
                inputs = [_apps_arguments(arguments) for arguments in inputs]
            self._inputs = inputs
        return self._inputs

    def call(self, index):
        """The frame of input `index`'s call: where its arguments are marshal data (see
        candidate.MARSHALLED_CALL), a marshalled call; otherwise the encoding of ("call",
        arguments, {}, view) (a "timed-call" where the phase records). NotPlainData if its
        arguments cannot cross."""
        if self.arguments is not None:
            arguments = self.arguments[index]
        else:
            arguments = _marshalled(list(self.inputs[index])) or wire.encode(list(self.inputs[index]))
            if self.record:
                self.encoded[index] = arguments
        if arguments[:1] == _MARSHALLED_LIST:
            return self._marshalled_head + arguments
        return (_TIMED_CALL_HEAD if self.record else _CALL_HEAD) + arguments + self._call_tail

    def comparison(self):
        if self.equality == "evalplus":
            return evalplus.Comparison(self.dataset, self.entry_point, self.atol)
        if self.equality == "apps":
            return _AppsCalls()
        return _ListsForTuples()


# How the marshal encoding of a list begins (version 2 marks no object as shared), where
# the wire encoding of one begins with "L".
_MARSHALLED_LIST = marshal.dumps([], 2)[:1]
# The types marshal rebuilds as they were, with nothing of another type inside.
_MARSHAL_ATOMS = frozenset((int, float, complex, str, bytes, bool, type(None)))
_MARSHAL_CONTAINERS = frozenset((list, tuple, set, frozenset))


def _marshalled(arguments):
    """The marshal encoding (version 2) of `arguments`, a list, where every value in it is
    of a type marshal rebuilds exactly; None otherwise (a Fraction, a subclass of int),
    for the wire to carry."""
    try:
        if not _marshal_exact(arguments):
            return None
        return marshal.dumps(arguments, 2)
    except (RecursionError, ValueError):
        return None


def _marshal_exact(value):
    kind = type(value)
    if kind in _MARSHAL_ATOMS:
        return True
    if kind in _MARSHAL_CONTAINERS:
        return all(map(_marshal_exact, value))
    if kind is dict:
        return all(map(_marshal_exact, value)) and all(map(_marshal_exact, value.values()))
    return False


def _int_keys(value):
    """`value`, a dict, with each key made an int; None if a key is no int's text."""
    try:
        return {int(key): item for key, item in value.items()}
    except (TypeError, ValueError):
        return None


def _apps_arguments(arguments):
    """A test's arguments as APPS's run_test (eval/testing_util.py) passes them: JSON
    makes a dict's keys text, so where the first argument is a dict whose keys are all
    integers' text, the call gets that dict alone, its keys made ints (the test's other
    arguments are dropped there too)."""
    if type(arguments) is list and arguments and type(arguments[0]) is dict:
        converted = _int_keys(arguments[0])
        if converted is not None:
            return [converted]
    return arguments


def _apps_expected(expected):
    """A test's expected output as APPS's run_test compares it: a dict, or a list whose
    first item is a dict, with keys that are all integers' text becomes a list of that
    dict with int keys (which an answer equals as the list's first item)."""
    if type(expected) is dict:
        converted = _int_keys(expected)
        if converted is not None:
            expected = [converted]
    if type(expected) is list and expected and type(expected[0]) is dict:
        converted = _int_keys(expected[0])
        if converted is not None:
            expected = [converted]
    return expected


class _ListsForTuples:
    """LiveCodeBench's functional comparison: a tuple answer counts as a list."""

    reads_arguments = False

    def matches(self, arguments, got, expected):
        if type(got) is tuple:
            got = list(got)
        try:
            return bool(got == expected)
        except Exception:
            return False


class _AppsCalls:
    """APPS's call-based comparison: a tuple counts as a list, and the expected output
    may come wrapped in a list of one."""

    reads_arguments = False

    def matches(self, arguments, got, expected):
        if type(got) is tuple:
            got = list(got)
        try:
            if got == expected:
                return True
            if type(expected) is list and expected:
                if got == expected[0]:
                    return True
                if type(got) is list and got and type(got[0]) is tuple:
                    return [list(item) for item in got] == expected[0]
        except Exception:
            pass
        return False


def _shown(value):
    return wire.shorten(judge.show(value), SHOWN)


class _Tally:
    def __init__(self, phase, seal, ahead_run):
        self.phase = phase
        self.seal = seal
        # Where the phase is judged again one call at a time, what the run with calls
        # sent ahead found wrong (see judge_phase).
        self.ahead_run = ahead_run
        self.failed_ahead = frozenset(ahead_run["failed"]) if ahead_run is not None else frozenset()
        self.passed = 0
        self.run = 0
        self.failure = None
        self.first_detail = ""
        # The inputs failed, in order.
        self.failed = []

    def extra(self):
        extra = {"phase": self.phase.name, "passed": self.passed, "run": self.run, "total": self.phase.count}
        if self.failure is not None:
            extra["failure"] = self.failure
        if self.phase.record:
            # How many outputs went to the harness, which waits for as many.
            extra["recorded"] = self.passed
        if self.ahead_run is not None:
            extra["one_at_a_time"] = True
        return extra

    def where(self, index):
        return f"{self.phase.name} input {index + 1} of {self.phase.count}"

    def fail(self, index, outcome, expected=None):
        """The detail of input `index`'s failure; the first failure is kept for the record,
        and what was expected of it (`expected()`, the value) is sealed for the harness
        (see harness_link.py)."""
        self.failed.append(index)
        arguments = self.phase.inputs[index]
        detail = f"{self.where(index)}: {self.phase.entry_point}({_shown(arguments)[1:-1]}) {outcome}"
        if self.failure is None:
            self.failure = {"phase": self.phase.name, "input": index, "arguments": _shown(arguments),
                            "outcome": outcome}
            if expected is not None:
                try:
                    shown = _shown(expected())
                except wire.TooLarge:
                    shown = "<an output too large to show>"
                self.seal(shown, f", expected {shown}")
                self.failure["sealed"] = True
            self.first_detail = detail
        return detail

    def passes(self, index, expected):
        """Counts input `index` as passed, unless it failed when the phase was judged with
        its calls sent ahead: that answer was given all the same, and only that run's times
        were in doubt (`expected` as for `fail`)."""
        if index not in self.failed_ahead:
            self.passed += 1
            return
        ahead_run = self.ahead_run
        outcome = ahead_run["outcome"] if index == ahead_run["failed"][0] else "failed"
        self.fail(index, f"{outcome} when its calls were sent ahead", expected)

    def judged_again(self):
        """The Record of a run whose phase must be judged again one call at a time, with
        what it found wrong for that run to keep (see judge_phase)."""
        outcome = self.failure["outcome"] if self.failure is not None else None
        return judge.Record(judge.RERUN, "", "", {**self.extra(), "ahead_run": {"failed": self.failed,
                                                                                 "outcome": outcome}})


def _record(tally, status, detail, result):
    return judge.Record(status, detail, result, tally.extra())


_TOO_LARGE = object()


def _returned(raw):
    """The encoding of the value in an answer's frame, without decoding it: the frame is
    the encoding of ("return", value), whose value's bytes come last. None for a frame
    that is not such an answer. (The frame may come as bytes, a bytearray or a memoryview.)"""
    view = memoryview(raw)
    if view[:len(_RETURN_PREFIX)] != _RETURN_PREFIX:
        return None
    return view[len(_RETURN_PREFIX):]


def _same_bytes(phase, comparison, budget):
    """A function of an input's number and its answer's frame that tells whether the
    answer passes for being its expected output's very bytes (see expected.py), setting
    EvalPlus's tolerance as comparing them by value would; None where no answer can."""
    if phase.record or phase.expected is None or not isinstance(comparison, evalplus.Comparison) \
            or comparison.oracle is not None:
        return None
    equal_bytes, is_floats = phase.expected.equal_bytes, phase.expected.is_floats

    def same(index, raw):
        returned = _returned(raw)
        if returned is None or not equal_bytes(index, returned, budget):
            return False
        if comparison.atol == 0:
            comparison.judged_unseen(is_floats(index, budget))
        return True
    return same


class _Ahead:
    """A phase's calls, posted on the channel ahead of the answers awaited (see
    wire.Channel.post): while the judge reads one answer, the candidate is already
    computing the next, and each process answers a run of calls each time it is
    scheduled rather than one per round trip (the two share a CPU).

    The canonical solution's calls go as far ahead as the window allows: its process
    reports each call's time (see _took). A candidate's input is charged from when the
    first byte of its call was written, the first moment any of it could be seen: one
    worked on ahead, in a thread, while the answers before it were held back within
    their own limits, gains nothing (see judge_phase), even begun from the head of a
    call whose tail the judge still held. Its calls go ahead only while the time the
    calls before them should take, at the canonical solution's pace or at the
    candidate's own if it is slower, is a small share of their limit: an honest
    candidate is then rarely charged more than its own time. No call goes ahead of one
    whose expected output is large (Mbpp/255's of 1.2 GB): the candidate would build the
    next answer while the judge still holds that one, and the two may not fit the
    sample's memory together. A phase judged `one_at_a_time` sends each call once the
    one before is answered. The candidate's process reads each call's arguments afresh
    from its bytes as it makes the call, so no call sees what another did to its own."""

    # The share of a call's limit that the calls posted before it, unanswered, may be
    # expected to take. A call is expected to take at least SHORTEST, and a candidate
    # is slower than that only by what it takes beyond a share of its limit that the
    # window could hold for every call, so that the time a call takes to cross, or a
    # moment the machine was busy, counts as neither work nor slowness.
    SHARE = 1 / 8
    SHORTEST = 0.001

    def __init__(self, phase, channel, one_at_a_time):
        self.phase = phase
        self.channel = channel
        if phase.record:
            self.ahead = AHEAD
        elif one_at_a_time or phase.times is None or phase.limits is None:
            self.ahead = 1
        else:
            self.ahead = AHEAD
        # Whether a candidate's calls go ahead, paced by its answers (see _in_time).
        self.paced = not phase.record and self.ahead > 1
        # How far ahead calls go now: a candidate's window starts small and doubles with
        # each answer, so that its pace is known before many calls are out.
        self.window = self.ahead if phase.record else min(2, self.ahead)
        # The canonical solution's time over the calls posted and not yet answered, and
        # how many times slower the candidate has been on any input, at least 1.
        self.expected = 0.0
        self.slowdown = 1.0
        # How many calls posted and not yet answered expect a large output.
        self.large = 0
        # For each input posted and not yet answered: its frame's number on the channel,
        # and its size.
        self.numbers = {}
        self.sizes = collections.deque()
        self.unanswered = 0
        self.next = 0
        # The next input's call, encoded, while the window has no room for it.
        self.waiting = None
        # The input that cannot cross, and why, once one is met: none after it is posted.
        self.refused = None

    def post_through(self, index):
        """Posts the calls from `index` on, as far ahead as the window allows; returns
        input `index`'s frame number. NotPlainData if that input
        cannot cross."""
        while self.refused is None and self.next < self.phase.count and self.next < index + self.window:
            if self.waiting is None:
                try:
                    self.waiting = self.phase.call(self.next)
                except wire.NotPlainData as error:
                    self.refused = (self.next, error)
                    break
            if self.next > index and (self.unanswered + len(self.waiting) > AHEAD_BYTES or not self._in_time()):
                break
            payload, self.waiting = self.waiting, None
            self.numbers[self.next] = self.channel.post(payload)
            self.sizes.append(len(payload))
            self.unanswered += len(payload)
            if self.paced:
                self.expected += max(self.phase.times[self.next], self.SHORTEST)
                self.large += self._large(self.next)
            self.next += 1
        if self.refused is not None and self.refused[0] == index:
            raise self.refused[1]
        return self.numbers.pop(index)

    def _in_time(self):
        """Whether the next call may go now, ahead of the answers before it."""
        if self.phase.record:
            return True
        return not self.large and self.slowdown * self.expected <= self.SHARE * self.phase.limits[self.next]

    def _large(self, index):
        expected = self.phase.expected
        return expected is not None and expected.large(index)

    def answered(self, index, took):
        """Input `index`'s call was answered, `took` seconds after the candidate could
        begin it: its bytes leave the window."""
        self.unanswered -= self.sizes.popleft()
        if self.paced:
            expected = max(self.phase.times[index], self.SHORTEST)
            self.expected -= expected
            self.large -= self._large(index)
            slowdown = (took - self.SHARE * self.phase.limits[index] / AHEAD) / expected
            if slowdown > self.slowdown:
                self.slowdown = slowdown
            if self.window < self.ahead:
                self.window = min(2 * self.window, self.ahead)


def _took(channel):
    """How long the canonical solution's process says the call just answered took, and
    whether its answer may be unequal to a copy of itself (see candidate.TOOK); or the
    Record of a phase that cannot be recorded."""
    try:
        frame = channel.receive()
    except (OSError, wire.Malformed) as error:
        return judge.unreadable(str(error))
    if frame is None or len(frame) != candidate.TOOK.size or frame[:1] != candidate.TOOK_TAG:
        return judge.unreadable("no time after a recorded answer")
    _, seconds, unequal = candidate.TOOK.unpack(frame)
    if seconds != seconds:
        return judge.unreadable("no time after a recorded answer")
    return max(0.0, seconds), bool(unequal)


def _record_output(phase, channel, record, index, encoding):
    """Has input `index`'s output `encoding` recorded, with the time the canonical
    solution's process reports and the call's arguments; the Record of a phase that cannot
    be recorded, or None."""
    took = _took(channel)
    if isinstance(took, judge.Record):
        return took
    seconds, unequal = took
    record(index, stored(encoding, channel.budget, unequal), seconds, phase.encoded.pop(index))
    return None


def judge_phase(phase, channel, seal, record=None, ahead_run=None):
    """Calls the candidate behind `channel` once per input; returns the Record of the
    phase (status GONE if the candidate hung up, RERUN if it must be judged again one
    call at a time). What the first failure expected goes to `seal(shown, suffix)`,
    never into the record; when the phase records, each output goes to
    `record(input, encoded, seconds, arguments)` as it comes, with the encoding of the
    call's arguments.

    A RERUN record's extra holds `ahead_run`, what that run found wrong before it stopped
    (with --all-tests a failure does not end a phase): the inputs that failed, in order,
    and the first's outcome. Given it, the phase is judged one call at a time, and those
    inputs fail whatever they are answered now: a wrong answer is wrong however soon its
    call was sent, and a candidate that found out (by the judge's time on a failure, say)
    could otherwise answer otherwise when judged again."""
    sealed = []
    result = _judge_phase(phase, channel, lambda *part: sealed.append(part), record, ahead_run)
    if result.status != judge.RERUN:
        for part in sealed:
            seal(*part)
    return result


def _judge_phase(phase, channel, seal, record, ahead_run):
    tally = _Tally(phase, seal, ahead_run)
    try:
        first = channel.receive()
    except wire.TooLarge as error:
        return _record(tally, *judge.too_large(error).fields()[:3])
    except (OSError, wire.Malformed) as error:
        return _record(tally, *judge.unreadable(str(error)).fields()[:3])
    if first is None:
        return _record(tally, judge.GONE, "", "")
    try:
        first = wire.decode(first, channel.budget)
    except wire.TooLarge as error:
        return _record(tally, *judge.too_large(error).fields()[:3])
    except wire.Malformed as error:
        return _record(tally, *judge.unreadable(str(error)).fields()[:3])
    if type(first) is not tuple or not first or first[0] != "ready" or not judge.shape(first, bool):
        failure = judge.load_failure(first) if type(first) is tuple and first else None
        failure = failure or judge.unreadable("not a ready message")
        return _record(tally, *failure.fields()[:3])
    if not first[1]:
        message = f"name '{phase.entry_point}' is not defined"
        return _record(tally, "failed", f"NameError: {message}", f"failed: {message}")
    comparison = phase.comparison()
    same_bytes = _same_bytes(phase, comparison, channel.budget)
    ahead = _Ahead(phase, channel, ahead_run is not None)
    # When the answer before came: the candidate could not begin a call before then.
    answered_at = None
    for index in range(phase.count):
        try:
            number = ahead.post_through(index)
        except wire.NotPlainData as error:
            detail = f"{tally.where(index)} holds {error}, which cannot cross to another process"
            return _record(tally, "unjudgeable", detail, "failed: cannot be judged out of process")
        limit = phase.limits[index] if phase.limits else None
        tally.run += 1
        try:
            # The wait for an input's answer ends one limit after the judge is done with
            # the answer before it, never sooner: comparing a large answer (HumanEval/130's
            # million floats) is the judge's time, not the next input's, and an honest
            # candidate given its calls one at a time would have had that long.
            deadline = time.monotonic() + limit if limit else None
            raw = wire.whole_answer(channel, channel.receive(deadline, after=number), deadline)
        except wire.TimedOut:
            detail = tally.fail(index, f"was still running after {limit:g} s{phase.limit_rule}")
            return _record(tally, "timeout", detail, "timed out")
        except wire.TooLarge as error:
            return _record(tally, *judge.too_large(error).fields()[:3])
        except (OSError, wire.Malformed) as error:
            return _record(tally, *judge.unreadable(str(error)).fields()[:3])
        if raw is None:
            return _record(tally, judge.GONE, "", "")
        begun = channel.last_shown if answered_at is None else max(channel.last_shown, answered_at)
        answered_at = channel.last_arrived
        ahead.answered(index, answered_at - begun)
        if limit and ahead.paced and answered_at - channel.last_shown > limit:
            # Its call went ahead, and it came later than one limit after the candidate
            # could first see any of it: whether it took that long itself or waited behind
            # the calls before it (or worked on it ahead, in a thread), only a run with no
            # call ahead can tell. (Where none goes ahead, each call is shown after its
            # deadline was set, and only the judge's being put aside between a read and
            # its time taken could make an answer seem so late: the deadline decides.)
            return tally.judged_again()
        returned = _returned(raw) if phase.record else None
        if returned is not None:
            # Recorded as it came, never decoded: the canonical solution's process encoded
            # it as this judge decodes, and an answer of a gigabyte is never built here.
            failure = _record_output(phase, channel, record, index, returned)
            if failure is not None:
                return _record(tally, *failure.fields()[:3])
            tally.passed += 1
            continue
        if same_bytes is not None and same_bytes(index, raw):
            tally.passes(index, lambda: phase.expected.value(index, channel.budget))
            continue
        try:
            answer = wire.decode(raw, channel.budget)
        except wire.TooLarge as error:
            return _record(tally, *judge.too_large(error).fields()[:3])
        except wire.Malformed as error:
            return _record(tally, *judge.unreadable(str(error)).fields()[:3])
        kind = answer[0] if type(answer) is tuple and answer else None
        if kind == "exit" and judge.shape(answer, str, str):
            return _record(tally, *judge.exit_record(answer[2]).fields()[:3])
        if kind == "raise" and judge.shape(answer, str, str, (tuple, type(None)), str):
            _, _, name, _, text = answer
            detail = tally.fail(index, judge.said(name, text))
            record = judge.exception_record(text, detail)
            if phase.record or not phase.every_input or record.status != "failed":
                return _record(tally, *record.fields()[:3])
            continue
        if kind == "not-plain" and judge.shape(answer, str):
            detail = tally.fail(index, f"returned {answer[1]}, which is not plain data")
            return _record(tally, "failed", detail, f"failed: returned {answer[1]}, which is not plain data")
        if kind != "return" or len(answer) != 2:
            return _record(tally, *judge.unreadable("not an answer").fields()[:3])
        got = answer[1]
        if phase.record:
            # A return whose frame begins otherwise than it is encoded here.
            failure = _record_output(phase, channel, record, index, wire.encode(got))
            if failure is not None:
                return _record(tally, *failure.fields()[:3])
            tally.passed += 1
            continue
        try:
            expected = phase.expected.value(index, channel.budget)
        except wire.TooLarge:
            # Only its bytes could be compared, and they differ: a failure.
            expected = _TOO_LARGE
            if isinstance(comparison, evalplus.Comparison):
                comparison.judged_unseen(phase.expected.is_floats(index, channel.budget))
        arguments = phase.inputs[index] if comparison.reads_arguments else None
        if expected is not _TOO_LARGE and comparison.matches(arguments, got, expected):
            tally.passes(index, lambda: phase.expected.value(index, channel.budget))
            continue
        detail = tally.fail(index, f"returned {_shown(got)}",
                            lambda: phase.expected.value(index, channel.budget))
        if not phase.every_input:
            return _record(tally, "failed", detail, "failed: wrong answer")
    if tally.passed < phase.count:
        return _record(tally, "failed", tally.first_detail, "failed: wrong answer")
    return _record(tally, "passed", "", "passed")
