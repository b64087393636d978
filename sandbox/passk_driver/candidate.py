"""The candidate's side: what runs in the process forked for a candidate, which ends
up running model-written code and so is trusted with nothing.

In judge mode the process runs only the candidate's code (the prompt and completion,
or the solution) and then answers the judge, one frame per message: calls of its entry
point, the names the tests want of it, and operations on the objects it sent as
handles, each answered with data (see wire.py and handles.py). Whatever it sends is only
an answer: the verdict is the judge's, in another process this one cannot reach.

In in-process mode it runs the candidate and the tests as one program, as the reference
harness does, and proves that the tests returned by writing a record carrying a token
drawn for that run alone.
"""

import marshal
import os
import signal
import struct
import sys
import time

from . import confine, handles, wire

EXIT_SETUP_FAILED = 120
# A standard-input program that does not compile, before any of its code ran: an `error`,
# as in the other modes, rather than a runtime error. A program that exits with it by
# hand only moves its failure from one status that does not pass to another.
EXIT_DOES_NOT_COMPILE = 121
# Where a candidate's process finds the sample's code, which it reads once confined.
SOURCE_FD = 9
# As much of an exception's message as a record carries (judge.DETAIL_CAP).
DETAIL_CAP = 1000
CHANNEL_IN, CHANNEL_OUT = 3, 4
RESULT_FD = 3
# The file a standard-input program is written to and run from, in the sample's working
# directory.
PROGRAM_FILE = "program.py"


def confine_candidate(request, context, scratch, descriptors):
    """Puts this freshly forked process where a candidate may run: the sample's control
    group, its own session, the sample's directory, only `descriptors`, its limits, no
    privileges, the filter."""
    if context.sample_group is not None:
        context.sample_group.join()
    if context.nested:
        confine.own_proc()
    os.setsid()
    if context.driver_pid != 1 and not context.nested:
        # Should the driver die, the candidate dies with it rather than run on
        # unwatched. (Under an init of a pid namespace, that init's death ends it.)
        confine.prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != context.driver_pid:
            os._exit(EXIT_SETUP_FAILED)
    confine.reset_signals()
    # Python ignores SIGXFSZ; at its default a write past the file size limit kills the
    # process, which the driver sees, where an EFBIG could be raised by hand.
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    confine.drop_privileges(context.privileged, context.candidate_user)
    # Its own /proc/self must be readable to it, as for any program; the filter and its
    # lack of privilege still keep every other process from tracing it.
    confine.prctl(confine.PR_SET_DUMPABLE, 1)
    os.chdir(scratch)
    confine.keep_descriptors({**descriptors, SOURCE_FD: context.source_fd})
    if context.sample_group is not None:
        # The group's memory and pids limits count all the sample holds, and the kernel
        # says when they are reached; an address-space or process limit would only raise
        # a MemoryError or an EAGAIN that the candidate could as well have raised by hand.
        # A job that asked for less memory than the group holds (a run_code request's
        # memory_limit_MB) keeps its address-space limit: the group would not hold it.
        dropped = ("processes",) if request.get("memory_below_group") else ("memory_bytes", "processes")
        request = {key: value for key, value in request.items() if key not in dropped}
    if request.get("memory_below_group") and request.get("memory_bytes"):
        # The candidate was forked from the driver, whose interpreter it shares: the
        # limit is on what it maps beyond that, so that a small limit still lets an
        # honest program start.
        request = {**request, "memory_bytes": request["memory_bytes"] + _mapped_bytes()}
    confine.set_limits(request)
    if context.syscall_filter:
        context.syscall_filter.install(os.getpid())


def _mapped_bytes():
    """The address space this process has mapped now; 0 where it cannot be told."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def read_source():
    """The sample's code, from the memory file the harness made for it, which this
    process alone reads (the driver only passed it on); the descriptor is closed."""
    chunks, at = [], 0
    while chunk := os.pread(SOURCE_FD, 1 << 20, at):
        chunks.append(chunk)
        at += len(chunk)
    os.close(SOURCE_FD)
    return b"".join(chunks).decode("utf-8")


def describe_exception(exc):
    """The type's name and the text of a candidate's exception; its __str__ is the
    candidate's own code and may raise."""
    try:
        text = str(exc)
    except BaseException:
        text = "<unprintable>"
    return type(exc).__name__, text


def _exception_frame(kind, exc):
    """A frame describing `exc` (raised at `kind`: "load" or "call")."""
    name, text = describe_exception(exc)
    if isinstance(exc, SystemExit):
        return wire.encode(("exit", kind, text))
    args = exc.args if type(exc).__module__ == "builtins" else None
    try:
        return wire.encode(("raise", kind, name, args, text))
    except wire.NotPlainData:
        return wire.encode(("raise", kind, name, None, text))


def _flush():
    """What the candidate printed reaches its pipe before the driver may kill it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def serve(source, entry_point, channel):
    """Judge mode: loads the candidate and answers calls until the judge hangs up."""
    try:
        code = compile(source, "<string>", "exec")
    except BaseException as exc:
        name, text = describe_exception(exc)
        channel.send(wire.encode(("compile", name, text)))
        return
    namespace = {}
    try:
        exec(code, namespace)
    except BaseException as exc:
        _flush()
        channel.send(_exception_frame("load", exc))
        return
    try:
        function = _resolve(namespace, entry_point)
    except BaseException as exc:
        _flush()
        channel.send(_exception_frame("load", exc))
        return
    _flush()
    channel.send(wire.encode(("ready", function is not None)))
    table = handles.CandidateHandles()
    while True:
        payload = channel.receive()
        if payload is None:
            return
        if payload[0] in MARSHALLED_CALLS:
            message = (_MARSHALLED_KINDS[payload[0]], marshal.loads(payload[2:]), {}, VIEW_CODES[payload[1]])
        else:
            message = wire.decode(payload, handles=table)
        started = time.perf_counter()
        unequal = _send(channel, _answer(message, function, namespace, table))
        if message[0] == "timed-call":
            _report(channel, started, unequal)


# A call of a suite whose arguments cross as marshal data (version 2, which shares no
# object between two places): its kind, the code of its view (VIEW_CODES), then the
# marshal encoding of the list of arguments. marshal reads them here at C speed; the
# judge wrote them, from the suite's own inputs, so nothing of a candidate's is read so.
# A "timed" call is the canonical solution's, which reports each call's time.
MARSHALLED_CALL, MARSHALLED_TIMED_CALL = b"M"[0], b"T"[0]
MARSHALLED_CALLS = (MARSHALLED_CALL, MARSHALLED_TIMED_CALL)
# What a frame from the judge may begin with, however long: a message, or a call of
# marshal data, whose arguments may take more than a mebibyte.
JUDGES_HEADS = (wire.MESSAGE_HEAD, *MARSHALLED_CALLS)
# The message each stands for, answered as `_answer` answers it.
_MARSHALLED_KINDS = {MARSHALLED_CALL: "call", MARSHALLED_TIMED_CALL: "timed-call"}


# The frame that follows the answer to one of the canonical solution's calls: its tag,
# seconds and whether the answer may be unequal to a copy of itself. Read only where it is
# due, and no message of the wire (a tuple) is its size.
TOOK_TAG = b"K"
TOOK = struct.Struct(">cd?")


def _report(channel, started, unequal):
    """After the answer to one of the canonical solution's calls, which are recorded and
    sent ahead like any others: how long it took, from the call to its answer written,
    since the judge cannot tell when it began; and whether the answer may be unequal to a
    copy of itself, which its encoding saw (see wire.send_streamed)."""
    channel.send(TOOK.pack(TOOK_TAG, time.perf_counter() - started, unequal))


class _Returned:
    """A call's answer of data alone, sent as it is encoded (wire.send_streamed): an answer
    of a gigabyte is never held twice, as a value and as its encoding."""

    def __init__(self, value):
        self.value = value


def _send(channel, answer):
    """Sends `answer`; whether the value it returns may be unequal to a copy of itself."""
    if type(answer) is not _Returned:
        channel.send(answer)
        return False
    try:
        return wire.send_returned(channel, answer.value)
    except wire.NotPlainData as error:
        channel.send(wire.encode(("not-plain", str(error))))
        return False


def _answer(message, function, namespace, table):
    """The frame that answers one message of the judge's."""
    kind = message[0]
    # Calls of a suite of inputs are answered with data alone (calls.py); the tests of
    # a HumanEval-style problem take handles too.
    answer_handles = table
    try:
        if kind in ("call", "timed-call"):
            args, kwargs = message[1], message[2]
            view = message[3] if len(message) > 3 else None
            if len(message) < 5 or not message[4]:
                answer_handles = None
            value = function(*args, **kwargs)
            if view is not None:
                value = VIEWS[view](value)
        elif kind == "names":
            value = {}
            for name in message[1]:
                if name in namespace:
                    try:
                        wire.encode(namespace[name], table)
                    except wire.NotPlainData:
                        continue
                    value[name] = namespace[name]
            _flush()
            return wire.encode(("names", value), table)
        else:
            value = table.operate(message[1], message[2], message[3])
    except StopIteration:
        if kind == "op" and message[2] == "next":
            _flush()
            return wire.encode(("stop",))
        _flush()
        return _exception_frame("call", sys.exc_info()[1])
    except BaseException as exc:
        _flush()
        return _exception_frame("call", exc)
    _flush()
    if answer_handles is None:
        return _Returned(value)
    try:
        return wire.encode(("return", value), answer_handles)
    except wire.NotPlainData as error:
        return wire.encode(("not-plain", str(error)))


# What the judge may ask to see of a value instead of the value itself, for answers that
# are not plain data but whose meaning is (a match object stands for "found").
VIEWS = {
    "not-none": lambda value: value is not None,
    "bool-or-not-none": lambda value: value if type(value) is bool else value is not None,
}
# The views by the byte that names them in a marshalled call.
VIEW_CODES = (None, "not-none", "bool-or-not-none")


def _resolve(namespace, entry_point):
    """The callable the judge calls, or None. `Solution.method` is a LeetCode-style
    method: one instance of the candidate's class `Solution` answers every call, and a
    program without that class may define `method` as a plain function instead."""
    if "." not in entry_point:
        return namespace.get(entry_point) if entry_point in namespace else None
    class_name, method = entry_point.split(".", 1)
    kind = namespace.get(class_name)
    if isinstance(kind, type):
        return getattr(kind(), method, None)
    return namespace.get(method)


def run_script(program, exit_compared=False, does_not_compile=EXIT_DOES_NOT_COMPILE):
    """Standard-input mode: runs the program as `python3 program.py` would, on the test's
    input (descriptor 0); the exit status says how it ended. Never returns.

    With `exit_compared`, a program that ends by `sys.exit` or `exit`, whatever their
    code, ends as one that ran to its end (status 0), and what it printed is compared:
    LiveCodeBench's and APPS's harnesses run the program in their own process, catch
    SystemExit and compare the output (call_method in each testing_util.py). A program
    gains nothing by ending so that it could not by catching its own exception.

    A program that does not compile ends with `does_not_compile`: by default a status
    of passk's own, which tells it from a program that raised.

    The program is written to PROGRAM_FILE in the sample's working directory and run
    there as the real `__main__` module: `__file__` and `sys.argv[0]` are its path, its
    directory leads `sys.path`, and so what pickle and multiprocessing look up in
    `__main__` (the program's own classes and functions) is there, for a forked worker
    and for a spawned one that runs the file again. It runs in this process, forked from
    the warm driver, rather than in an interpreter started afresh for every test. At its
    end, as at an interpreter's, the threads it left are joined and its exit handlers run
    (concurrent.futures and multiprocessing shut their workers down in them)."""
    import atexit
    import builtins
    import threading
    import traceback
    import types

    exit_now = os._exit
    # Handlers the driver's modules registered are not the program's.
    atexit._clear()
    status = 0
    try:
        path = os.path.join(os.getcwd(), PROGRAM_FILE)
        with open(path, "w", encoding="utf-8") as written:
            written.write(program)
        main = types.ModuleType("__main__")
        main.__file__ = path
        main.__builtins__ = builtins
        main.__spec__ = None
        sys.modules["__main__"] = main
        sys.argv[:] = [path]
        # Where the driver's package was: no program sees it on its path.
        sys.path[0] = os.path.dirname(path)
        try:
            code = compile(program, path, "exec")
        except (SyntaxError, ValueError):
            traceback.print_exc(limit=0)
            _flush()
            exit_now(does_not_compile)
        exec(code, main.__dict__)
    except SystemExit as exc:
        status = 0 if exit_compared else _exit_status(exc.code)
    except BaseException:
        try:
            traceback.print_exc()
        except BaseException:
            pass
        status = 1
    # What goes wrong here leaves the status as it was, as at an interpreter's exit (an
    # exit handler's exception is printed by atexit itself).
    for finish in (threading._shutdown, atexit._run_exitfuncs):
        try:
            finish()
        except BaseException:
            pass
    _flush()
    exit_now(status)


def _exit_status(code):
    """The status `sys.exit(code)` ends a program with."""
    if code is None:
        return 0
    if isinstance(code, int):
        # As CPython takes it: any int, an IntEnum's (pytest.main's ExitCode) too, by
        # its value, whatever the subclass says its operators do.
        return int.__and__(code, 0xFF)
    try:
        print(code, file=sys.stderr)
    except BaseException:
        pass
    return 1


def run_in_process(program, token):
    """In-process mode: runs candidate and tests together; the record goes to RESULT_FD
    only if the tests return. Never returns."""
    # Bound now: the candidate may replace anything it can reach by name later.
    write, exit_now, encode, shorten = os.write, os._exit, wire.encode, wire.shorten

    def report(status, detail, result):
        # The program's exception may carry a message of any length.
        detail, result = shorten(detail, DETAIL_CAP), shorten(result, DETAIL_CAP)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        payload = encode((status, detail, result))
        data = token + len(payload).to_bytes(4, "big") + payload
        while data:
            data = data[write(RESULT_FD, data):]
        exit_now(0)

    try:
        code = compile(program, "<string>", "exec")
    except BaseException as exc:
        name, text = describe_exception(exc)
        report("error", f"does not compile: {name}: {text}", f"failed: {text}")
    # A MemoryError or a limit's OSError is only the program's word: it fails, and the
    # driver says `out-of-memory` or `limit` where it saw the limit reached.
    try:
        exec(code, {})
    except SystemExit as exc:
        name, text = describe_exception(exc)
        report("error", f"exited before its tests finished ({name}: {text})", f"failed: {text}")
    except BaseException as exc:
        name, text = describe_exception(exc)
        report("failed", f"{name}: {text}" if text else name, f"failed: {text}")
    report("passed", "", "passed")

