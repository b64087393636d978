"""The judge's own line to the harness, which only the judge reads and writes.

Every candidate is forked from the driver, so whatever the driver ever held may be
found in a candidate's memory, freed or not. So a suite's expected outputs never pass
through the driver: the harness sends each suite to the judge on this line, and what of
a verdict tells an expected output (the `expected` of a failure) goes back on it
sealed, for the harness to put into the verdict; so do the outputs a canonical solution
gives while its expected outputs are recorded, in frames of about a megabyte each. The
driver keeps the line open without reading it, to hand it to each judge it starts.

Each frame is one JSON object between a record separator (0x1E) and a newline. JSON
text holds neither raw, so a judge started after another was killed while reading can
skip what that one left half-read: anything up to a line's last separator.

The harness sends one frame per sample that has a suite: `{"seq", "id"}`, with the
suite's data (`"suite"`) unless the judge holds it. Both sides keep the same list of the
most recently used suites, touched once per frame in the order the frames were sent,
and the harness forgets its list whenever the driver reports the judge lost; a new
judge reads the frames its predecessor left, so it holds at least what the harness
believes it does.
"""

import binascii
import json
import os

from . import calls, judge
from .kept import Kept

MARK = b"\x1e"
READ_CHUNK = 1 << 20
# Bytes of recorded outputs sent together.
RECORD_BATCH = 1 << 20
# As many as the harness believes a judge holds (SUITES_KEPT in driver.rs).
SUITES_KEPT = 8


class Lost(Exception):
    """The harness is gone, or sent what cannot be read."""


class HeldSuite:
    """A suite's data as the harness sent it, and its phases of calls or its test code,
    parsed when first judged."""

    def __init__(self, data):
        self.data = data
        self.parsed = {}
        self.compiled = None

    def check(self):
        """HumanEval-style tests: the prompt's and the tests' code compiled once for all
        the samples that follow, or a Record if they do not compile."""
        if self.compiled is None:
            code = self.data["check"]
            try:
                self.compiled = (judge.compile_prompt(code["prompt"]), compile(code["test"], judge.TEST_FILE, "exec"),
                                 judge.statements_by_line(code["test"]), code.get("asserts", []),
                                 judge.used_names(code["test"]),
                                 code.get("call", "check"), judge.imported_names(code.get("solution", "")))
            except MemoryError:
                # The judge's state, not the problem's: never kept as the problem's verdict.
                raise
            except Exception as exc:
                detail = f"the problem's code does not compile: {type(exc).__name__}: {exc}"
                self.compiled = judge.Record("unjudgeable", detail, f"failed: {exc}")
        return self.compiled

    def phase(self, index):
        """Phase `index` of a suite of calls: a calls.Phase, or a Record if its data
        cannot be read."""
        phase = self.parsed.get(index)
        if phase is None:
            spec = {name: value for name, value in self.data.items() if name != "phases"}
            spec.update(self.data["phases"][index])
            try:
                phase = calls.Phase(spec)
            except MemoryError:
                raise
            except Exception as exc:
                detail = f"the problem's inputs or outputs cannot be read: {type(exc).__name__}: {exc}"
                phase = judge.Record("unjudgeable", detail, "failed: unreadable problem")
            self.parsed[index] = phase
        return phase


class HarnessLink:
    def __init__(self, fd):
        self.fd = fd
        self.buffer = b""
        # The last sample whose frame was read.
        self.seq = -1
        self.suites = Kept(SUITES_KEPT)
        # The recorded outputs not yet sent (see record).
        self.recorded = None
        self.recorded_bytes = 0

    def suite(self, seq, suite_id):
        """The HeldSuite of sample `seq`, reading the frames up to its own."""
        while self.seq < seq:
            frame = self._frame()
            self.seq = frame["seq"]
            if "suite" in frame:
                self.suites.keep(frame["id"], HeldSuite(frame["suite"]))
            else:
                self.suites.touch(frame["id"])
        held = self.suites.get(suite_id)
        if self.seq != seq or held is None:
            raise Lost(f"the harness sent no suite {suite_id} for sample {seq}")
        return held

    def seal(self, seq, run, expected, suffix):
        """Sends the harness what of run `run`'s failure tells its expected output:
        `expected` for the failure's record, `suffix` for the verdict's detail."""
        self._send({"seq": seq, "run": run, "expected": expected, "suffix": suffix})

    def record(self, seq, run, index, output, seconds, arguments):
        """Has the harness told what the canonical solution returned for input `index` of
        run `run` (the wire encoding `output`), how long the call took, and the encoding
        of the call's arguments, which the suites that judge candidates send as they are
        (see calls.Phase). Outputs go in
        frames of about RECORD_BATCH bytes, sent as they fill, so that none waits for the
        phase to end or is held with all the others; `flush_recorded` sends the last."""
        if self.recorded is not None and (self.recorded["seq"], self.recorded["run"]) != (seq, run):
            self.flush_recorded()
        if self.recorded is None:
            self.recorded = {"seq": seq, "run": run, "first": index, "outputs": [], "seconds": [], "arguments": []}
            self.recorded_bytes = 0
        # binascii's own function: base64's wraps it in more than a small output's work.
        self.recorded["outputs"].append(binascii.b2a_base64(output, newline=False).decode())
        self.recorded["seconds"].append(seconds)
        self.recorded["arguments"].append(binascii.b2a_base64(arguments, newline=False).decode())
        self.recorded_bytes += len(output) + len(arguments)
        if self.recorded_bytes >= RECORD_BATCH:
            self.flush_recorded()

    def flush_recorded(self):
        if self.recorded is not None:
            self._send(self.recorded)
            self.recorded = None

    def _send(self, frame):
        data = MARK + json.dumps(frame).encode() + b"\n"
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]

    def _frame(self):
        while True:
            line = self._line()
            start = line.rfind(MARK)
            if start < 0:
                continue
            try:
                frame = json.loads(line[start + 1:])
            except ValueError:
                continue
            if type(frame) is dict and type(frame.get("seq")) is int and type(frame.get("id")) is str:
                return frame

    def _line(self):
        """The next line, without its newline. A suite's frame may be hundreds of
        megabytes: its chunks are joined once, and each searched for the end once."""
        end = self.buffer.find(b"\n")
        if end >= 0:
            line, self.buffer = self.buffer[:end], self.buffer[end + 1:]
            return line
        chunks = [self.buffer]
        while True:
            data = os.read(self.fd, READ_CHUNK)
            if not data:
                raise Lost("the harness closed the judge's line")
            end = data.find(b"\n")
            if end >= 0:
                chunks.append(data[:end])
                self.buffer = data[end + 1:]
                return b"".join(chunks)
            chunks.append(data)
