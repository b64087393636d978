"""The candidate's side: what runs in the process forked for a candidate, which ends
up running model-written code and so is trusted with nothing.

In judge mode the process runs only the candidate's code (the prompt and completion,
or the solution) and then answers calls to its entry point, one frame per call, with
plain data (see wire.py). Whatever it sends is only an answer: the verdict is the
judge's, in another process this one cannot reach.

In in-process mode it runs the candidate and the tests as one program, as the reference
harness does, and proves that the tests returned by writing a record carrying a token
drawn for that run alone.
"""

import os
import signal
import sys

from . import confine, wire

EXIT_SETUP_FAILED = 120
CHANNEL_IN, CHANNEL_OUT = 3, 4
RESULT_FD = 3


def confine_candidate(request, context, scratch, descriptors):
    """Puts this freshly forked process where a candidate may run: the sample's control
    group, its own session, the sample's directory, only `descriptors`, its limits, no
    privileges, the filter."""
    if context.sample_group is not None:
        context.sample_group.join()
    os.setsid()
    if context.driver_pid != 1 and not context.nested:
        # Should the driver die, the candidate dies with it rather than run on
        # unwatched. (Under an init of a pid namespace, that init's death ends it.)
        confine.prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != context.driver_pid:
            os._exit(EXIT_SETUP_FAILED)
    confine.reset_signals()
    confine.drop_privileges(context.privileged, context.candidate_user)
    # Its own /proc/self must be readable to it, as for any program; the filter and its
    # lack of privilege still keep every other process from tracing it.
    confine.prctl(confine.PR_SET_DUMPABLE, 1)
    os.chdir(scratch)
    confine.keep_descriptors(descriptors)
    confine.set_limits(request)
    if context.syscall_filter:
        context.syscall_filter.install(os.getpid())


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
    code = exc.errno if isinstance(exc, OSError) and type(exc.errno) is int else None
    try:
        return wire.encode(("raise", kind, name, args, text, code))
    except wire.NotPlainData:
        return wire.encode(("raise", kind, name, None, text, code))


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
    _flush()
    function = namespace.get(entry_point)
    channel.send(wire.encode(("ready", entry_point in namespace)))
    while True:
        payload = channel.receive()
        if payload is None:
            return
        _, args, kwargs = wire.decode(payload)
        try:
            value = function(*args, **kwargs)
        except BaseException as exc:
            _flush()
            channel.send(_exception_frame("call", exc))
            continue
        _flush()
        try:
            answer = wire.encode(("return", value))
        except wire.NotPlainData as error:
            answer = wire.encode(("not-plain", str(error)))
        channel.send(answer)


def run_in_process(program, token):
    """In-process mode: runs candidate and tests together; the record goes to RESULT_FD
    only if the tests return. Never returns."""
    # Bound now: the candidate may replace anything it can reach by name later.
    write, exit_now, encode = os.write, os._exit, wire.encode

    def report(status, detail, result):
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
    try:
        exec(code, {})
    except MemoryError as exc:
        report("out-of-memory", "MemoryError", f"failed: {describe_exception(exc)[1]}")
    except OSError as exc:
        name, text = describe_exception(exc)
        limit = confine.LIMIT_ERRORS.get(exc.errno)
        if limit:
            report("limit", f"{limit} ({name}: {text})", f"failed: {text}")
        report("failed", f"{name}: {text}", f"failed: {text}")
    except SystemExit as exc:
        name, text = describe_exception(exc)
        report("error", f"exited before its tests finished ({name}: {text})", f"failed: {text}")
    except BaseException as exc:
        name, text = describe_exception(exc)
        report("failed", f"{name}: {text}" if text else name, f"failed: {text}")
    report("passed", "", "passed")

