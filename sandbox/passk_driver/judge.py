"""The judge: decides a sample's verdict by running the problem's own code and tests,
in a process the candidate cannot reach.

The judge runs the prompt (its imports and helpers, which the tests may use) and the
tests. In place of the entry point it puts a stand-in, bound to the entry point's own
name too, because some tests call it by name. Each call of the stand-in sends its
arguments to the candidate's process as data (copies, see wire.py) and waits for the
answer: data, or an exception, raised here as the same built-in type with its message.
What the tests use that only the candidate defines (its classes, helpers and the
modules it imported) is asked for before the tests run, and comes as handles or, for a
standard-library module, by name (see handles.py); a name that stands for a module is
replaced by the judge's own import (modules_of_the_judge). Nothing of the candidate's runs
here, so it cannot patch the tests, their helpers, the builtins they use or the verdict
record; an object that claims to equal everything is a handle, compared by the judge.

Once the candidate does something that fails the sample whatever the tests make of it
(returns what is not plain data, exits, hangs up, sends garbage), the stand-in
remembers it and ends the tests with an exception a test cannot swallow.
"""

import ast
import bisect
import builtins
import importlib
import importlib.util
import os
import reprlib
import symtable
import sys

from . import handles, wire

PROMPT_FILE = "<prompt>"
TEST_FILE = "<test>"
DETAIL_CAP = 1000
RESULT_CAP = 65536
GONE = "gone"
# A phase of calls whose answers went ahead must be judged again, one call at a time (calls.py).
RERUN = "rerun"

# Never raised here on the candidate's word: an exit is reported as one, and the end of
# an iteration would end a test's loop over `map(candidate, ...)` early, as if passed.
_NOT_REBUILT = (SystemExit, GeneratorExit, StopIteration, StopAsyncIteration)

class _Shown(reprlib.Repr):
    def repr_int(self, value, level):
        # Python refuses to write an int of more than 4,300 digits as text, and a
        # candidate may answer one.
        try:
            return super().repr_int(value, level)
        except ValueError:
            return f"<an int of {value.bit_length()} bits>"


_REPR = _Shown()
_REPR.maxlevel = 4
_REPR.maxstring = _REPR.maxother = 80
_REPR.maxlong = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxset = _REPR.maxfrozenset = _REPR.maxdict = 10


def show(value):
    """A short repr of plain data (never the candidate's own __repr__)."""
    try:
        return wire.shorten(_REPR.repr(value))
    except Exception:
        return f"<{wire.describe(value)[2:]} that cannot be shown>"


def said(name, text):
    """What the candidate said of an exception of its own, capped: both its type's name
    and its message are the candidate's to choose, of any length."""
    name, text = wire.shorten(name, DETAIL_CAP), wire.shorten(text, DETAIL_CAP)
    return f"raised {name}: {text}" if text else f"raised {name}"


def text_of(exc):
    try:
        return str(exc)
    except Exception:
        return "<unprintable>"


class Record:
    """A verdict: status, detail and result, and for suites of calls, what the phase
    counted (`extra`, plain data)."""

    def __init__(self, status, detail, result, extra=None):
        self.status = status
        self.detail = wire.shorten(detail, DETAIL_CAP)
        self.result = wire.shorten(result, RESULT_CAP)
        self.extra = extra

    def fields(self):
        if self.extra is None:
            return (self.status, self.detail, self.result)
        return (self.status, self.detail, self.result, self.extra)


class _Stop(BaseException):
    """Ends the tests with a verdict already decided."""

    def __init__(self, record):
        super().__init__(record.detail)
        self.record = record


class CandidateError(Exception):
    """An exception of the candidate's of a type that is not built in: its message only."""


class _Call:
    """The last call made, for the detail of a failure. It keeps the bytes that crossed
    and shows them only if a failure needs them: most calls never do, and the tests may
    change what they passed or got back in the meantime."""

    def __init__(self, line, request, table):
        self.line = line
        self.request = request
        self.table = table
        self.answer = None
        self.outcome = None
        self.exception = None

    def describe(self, source_line):
        args, kwargs = wire.decode(self.request, handles=self.table)[1:3]
        arguments = ", ".join([show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()])
        shown = f"candidate({arguments})"
        if source_line and shown in source_line:
            shown = "candidate"
        outcome = self.outcome or f"returned {show(wire.decode(self.answer, handles=self.table)[1])}"
        return f"{shown} {outcome}"


def _line_of_caller():
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == TEST_FILE:
            return frame.f_lineno
        frame = frame.f_back
    return None


def _line_of(traceback):
    line = None
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == TEST_FILE:
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    return line


def compile_prompt(prompt):
    """The prompt's code for the judge, which needs its imports and helpers. A prompt
    usually ends in the entry point's signature and docstring, which compile alone;
    one that ends in a bare signature gets a body, indented one level below it."""
    try:
        return compile(prompt, PROMPT_FILE, "exec")
    except SyntaxError as error:
        lines = [line for line in prompt.splitlines() if line.strip()]
        if not lines or not lines[-1].rstrip().endswith(":"):
            raise
        indent = lines[-1][: len(lines[-1]) - len(lines[-1].lstrip())]
        try:
            return compile(prompt.rstrip("\n") + f"\n{indent}    pass\n", PROMPT_FILE, "exec")
        except SyntaxError:
            raise error from None


def rebuild_exception(name, args, text):
    """The candidate's exception as the same built-in type with its message, or a
    CandidateError carrying the message."""
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, BaseException) and not issubclass(kind, _NOT_REBUILT):
        try:
            return kind(*args) if args is not None else kind(text)
        except Exception:
            pass
    return CandidateError(text)


def load_failure(answer):
    """The record for a candidate that could not be loaded, from its first frame."""
    if answer[0] == "compile" and shape(answer, str, str):
        _, name, text = answer
        return Record("error", f"does not compile: {name}: {text}", f"failed: {text}")
    if answer[0] == "exit" and shape(answer, str, str):
        return exit_record(answer[2])
    if answer[0] == "raise" and shape(answer, str, str, (tuple, type(None)), str):
        _, _, name, _, text = answer
        return exception_record(text, said(name, text)[len("raised "):])
    return None


def exit_record(text):
    return Record("error", f"exited before its tests finished (SystemExit: {text})", f"failed: {text}")


def exception_record(text, detail):
    """A candidate's exception fails it, whatever it is: a MemoryError or an OSError of
    a limit's errno is only the candidate's word, which it can raise by hand. The
    driver makes it `out-of-memory` or `limit` where it saw the limit reached."""
    return Record("failed", detail, f"failed: {text}")


def shape(answer, *types):
    """Whether a decoded frame is a tuple of exactly these item types after its kind
    (a type, or a tuple of types; exact, so a bool is not an int)."""
    if type(answer) is not tuple or len(answer) != len(types) + 1:
        return False
    return all(type(item) in (kinds if type(kinds) is tuple else (kinds,)) for item, kinds in zip(answer[1:], types))


def too_large(error):
    """The record for an answer the judge would run out of memory to read: counted by
    the judge, so the sample's own memory limit was what it met."""
    return Record("out-of-memory", f"sent the judge an answer that {error}, half the sample's memory limit",
                  "failed: answer too large")


def unreadable(why):
    return Record("error", f"sent the judge an unreadable answer ({why})", "failed: unreadable answer")


def used_names(source):
    """The global names the test code reads but never binds at its top level: those the
    prompt or the candidate may define. Names local to a function are not among them."""
    table = symtable.symtable(source, TEST_FILE, "exec")
    bound = {symbol.get_name() for symbol in table.get_symbols()
             if symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()}
    used = set()

    def walk(scope, top):
        for symbol in scope.get_symbols():
            if symbol.is_referenced() and (top or symbol.is_global()):
                used.add(symbol.get_name())
        for child in scope.get_children():
            walk(child, False)

    walk(table, True)
    return frozenset(used - bound)


def statements_by_line(source):
    """Each line of the test code as the failure names it: the whole simple statement it
    is part of, its lines joined, so that an assert written over several lines
    (HumanEval/1's) is shown with its expected value rather than cut at its first line."""
    lines = source.splitlines()
    shown = [line.strip() for line in lines]
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return shown
    spans = [(node.lineno, node.end_lineno) for node in ast.walk(tree)
             if isinstance(node, ast.stmt) and not hasattr(node, "body") and node.end_lineno > node.lineno]
    for start, end in spans:
        text = " ".join(line.strip() for line in lines[start - 1:end])
        for index in range(start - 1, end):
            shown[index] = text
    return shown


def imported_names(source):
    """What the names the problem's own solution binds by import stand for: name ->
    (module, attribute or None). Parsed, never run; a solution that does not parse binds
    nothing."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = (alias.name, None)
                else:
                    top = alias.name.split(".", 1)[0]
                    bound[top] = (top, None)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = (node.module, alias.name)
    return bound


def _package_directories():
    """The interpreter's package directories, where what is installed lives: never the
    directories a candidate writes to."""
    import site
    import sysconfig

    found = set()
    try:
        found.update(site.getsitepackages())
        found.add(site.getusersitepackages())
    except AttributeError:
        pass
    paths = sysconfig.get_paths()
    found.update(paths[key] for key in ("purelib", "platlib") if key in paths)
    return tuple(sorted({os.path.realpath(path) + os.sep for path in found if path}))


_PACKAGE_DIRECTORIES = _package_directories()


def _installed(name):
    """Whether module `name` belongs to a package installed in the interpreter's package
    directories (found, not imported)."""
    if not all(part.isidentifier() for part in name.split(".")):
        return False
    try:
        spec = importlib.util.find_spec(name.split(".", 1)[0])
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    places = list(spec.submodule_search_locations or []) or [spec.origin]
    return all(type(place) is str and os.path.realpath(place).startswith(_PACKAGE_DIRECTORIES) for place in places)


def _problems_import(name, module, attribute):
    """What the problem's solution binds `name` to, imported here; a Record if it
    cannot be."""
    try:
        value = importlib.import_module(module)
        if attribute is not None:
            try:
                value = getattr(value, attribute)
            except AttributeError:
                value = importlib.import_module(f"{module}.{attribute}")
        return value
    except BaseException as exc:
        what = f"{attribute} from {module}" if attribute else module
        return Record("unjudgeable", f"the tests use {name}, which the problem's solution imports ({what}), and the "
                      f"judge cannot import it: {type(exc).__name__}: {text_of(exc)}",
                      "failed: the judge cannot import what the tests use")


def modules_of_the_judge(defined, problem_imports):
    """The judge's own objects for the names the tests use that the candidate defined and
    that stand for a module or what a module holds, so that the tests never call the
    candidate's code through them: a name the problem's solution binds by import, a name
    of a standard-library module, and a module of the candidate's, which the judge
    imports itself if it is standard or installed. A Record ends the sample instead."""
    own = {}
    for name, value in sorted(defined.items()):
        if name in problem_imports:
            found = _problems_import(name, *problem_imports[name])
            if isinstance(found, Record):
                return found
            own[name] = found
            continue
        module = wire.standard_module(name)
        if module is not None:
            own[name] = module
            continue
        if type(value) is handles.Handle and handles.what_of(value) == "module":
            module_name = handles.name_of(value)
            module = wire.standard_module(module_name)
            if module is None and _installed(module_name):
                try:
                    module = wire.import_named(module_name)
                except wire.Malformed:
                    module = None
            if module is None:
                shown = wire.shorten(module_name, 80)
                return Record("failed", f"the tests use {name}, the candidate's module {shown}, which the judge does "
                              "not import (only the standard library, the problem's own imports and installed "
                              "packages): the tests would call the candidate's own code through it",
                              "failed: the tests would call the candidate's module")
            own[name] = module
    return own


class StandIn:
    """Stands for the candidate's entry point in the tests, and carries every message to
    the candidate's process: calls of the entry point and operations on handles."""

    def __init__(self, channel, name, test_lines, asserts=()):
        self.channel = channel
        self.__name__ = self.__qualname__ = name
        self.test_lines = test_lines
        # Where each of the problem's own asserts begins, where the tests were written
        # here from a list of them (MBPP's): a failure is named by the assert, not by a
        # line of code the user never saw.
        self.asserts = asserts
        self.stopped = None
        self.last = None
        self.handles = handles.JudgeHandles(self.exchange)

    def stop(self, record):
        if self.stopped is None:
            self.stopped = record
        raise _Stop(self.stopped)

    def source(self, line):
        return self.test_lines[line - 1] if line and line <= len(self.test_lines) else ""

    def receive(self):
        """The candidate's next frame, decoded; any failure ends the tests."""
        try:
            payload = self.channel.receive()
        except wire.TooLarge as error:
            self.stop(too_large(error))
        except (OSError, wire.Malformed) as error:
            self.stop(unreadable(str(error)))
        if payload is None:
            self.stop(Record(GONE, "", ""))
        try:
            answer = wire.decode(payload, self.channel.budget, self.handles)
        except wire.TooLarge as error:
            self.stop(too_large(error))
        except wire.Malformed as error:
            self.stop(unreadable(str(error)))
        if type(answer) is not tuple or not answer or type(answer[0]) is not str:
            self.stop(unreadable("not a message"))
        return answer

    def _send(self, message, line):
        """Sends a message; what the tests pass that cannot cross ends them as unjudgeable."""
        if self.stopped is not None:
            raise _Stop(self.stopped)
        try:
            payload = wire.encode(message, self.handles)
        except wire.NotPlainData as error:
            where = f"{self._where(line)}: " if line else ""
            self.stop(Record(
                "unjudgeable",
                f"{where}the test passes {error} to the candidate, which cannot cross to another process; "
                "judge this problem with --verdicts in-process",
                "failed: cannot be judged out of process",
            ))
        try:
            self.channel.send(payload)
        except OSError:
            self.stop(Record(GONE, "", ""))
        return payload

    def exchange(self, message):
        """An operation on a handle: the candidate's answer, or its exception raised here."""
        operation = message[2] if message[0] == "op" else message[0]
        self._send(message, _line_of_caller())
        answer = self.receive()
        kind = answer[0]
        if kind == "return" and len(answer) == 2:
            return answer[1]
        if kind == "stop" and len(answer) == 1 and operation == "next":
            raise StopIteration
        if kind == "raise" and shape(answer, str, str, (tuple, type(None)), str):
            _, _, name, exception_args, text = answer
            raise rebuild_exception(name, exception_args, text)
        self._ended(answer, None, None)

    def _ended(self, answer, line, call):
        """An answer that ends the tests whatever they make of it."""
        kind = answer[0]
        if kind == "exit" and shape(answer, str, str):
            self.stop(exit_record(answer[2]))
        if kind == "not-plain" and shape(answer, str):
            outcome = f"returned {answer[1]}, which is not plain data"
            detail = outcome
            if call is not None:
                call.outcome = outcome
                detail = ": ".join(filter(None, [self._where(line), call.describe(self.source(line))]))
            self.stop(Record("failed", detail, f"failed: candidate {outcome}"))
        self.stop(unreadable(f"a {kind!r} message of {len(answer)} items"))

    def names(self, wanted):
        """What the candidate defines of `wanted`: data, handles, standard-library modules."""
        if not wanted:
            return {}
        self._send(("names", sorted(wanted)), None)
        answer = self.receive()
        if answer[0] == "names" and shape(answer, dict) and all(name in wanted for name in answer[1]):
            return answer[1]
        self._ended(answer, None, None)

    def __call__(self, *args, **kwargs):
        line = _line_of_caller()
        payload = self._send(("call", args, kwargs, None, True), line)
        call = self.last = _Call(line, payload, self.handles)
        answer = self.receive()
        kind = answer[0]
        if kind == "return" and len(answer) == 2:
            call.answer = self.channel.last
            return answer[1]
        if kind == "raise" and shape(answer, str, str, (tuple, type(None)), str):
            _, _, name, exception_args, text = answer
            call.outcome = said(name, text)
            call.exception = rebuild_exception(name, exception_args, text)
            raise call.exception
        self._ended(answer, line, call)

    def _where(self, line):
        if not line:
            return ""
        test = bisect.bisect_right(self.asserts, line)
        if test:
            return f"test {test} of {len(self.asserts)} ({self.source(line)})"
        return f"line {line}: {self.source(line)}"

    def failure(self, exc):
        """The record for tests that raised `exc`."""
        line = _line_of(exc.__traceback__)
        source = self.source(line)
        pieces = [self._where(line)]
        call = self.last
        if call is not None:
            pieces.append(call.describe(source))
        text = text_of(exc)
        name = type(exc).__name__
        if call is not None and call.exception is exc:
            return exception_record(text, ": ".join(filter(None, pieces)))
        if isinstance(exc, AssertionError):
            pieces.append(text)
        else:
            pieces.append(f"{name}: {text}" if text else name)
        return Record("failed", ": ".join(filter(None, pieces)) or name, f"failed: {text}")


def judge(problem, entry_point, channel):
    """Runs the problem's code and tests against the candidate behind `channel`; returns
    the Record of the verdict (status GONE if the candidate hung up)."""
    prompt_code, test_code, test_lines, asserts, used, call_name, problem_imports = problem
    namespace = {}
    try:
        exec(prompt_code, namespace)
    except BaseException as exc:
        return Record("unjudgeable", f"the problem's prompt raised {type(exc).__name__}: {text_of(exc)}",
                      "failed: the problem's prompt raised")
    stand_in = StandIn(channel, entry_point, test_lines, asserts)
    try:
        first = stand_in.receive()
        if first[0] != "ready" or not shape(first, bool):
            return load_failure(first) or unreadable(f"a {first[0]!r} message before the tests")
        if not first[1]:
            message = f"name '{entry_point}' is not defined"
            return Record("failed", f"NameError: {message}", f"failed: {message}")
        # What the tests use that neither they, the prompt nor Python define may be the
        # candidate's: its classes, helpers and imports, as the reference's tests see them.
        wanted = {name for name in used if name not in namespace and name != entry_point
                  and not hasattr(builtins, name)}
        defined = stand_in.names(wanted)
        # A name that stands for a module (MBPP/596's `sys`, the solution's `np`) is the
        # judge's own module wherever the candidate defines it: the tests compute what
        # they expect with it, and a class of the candidate's by that name would answer
        # for them.
        own = modules_of_the_judge(defined, problem_imports)
        if isinstance(own, Record):
            return own
        namespace.update(defined)
        namespace.update(own)
        namespace[entry_point] = stand_in
        exec(test_code, namespace)
        check = namespace.get(call_name)
        if check is None:
            raise NameError(f"name '{call_name}' is not defined")
        check(stand_in)
    except _Stop as stop:
        return stop.record
    except BaseException as exc:
        return stand_in.stopped or stand_in.failure(exc)
    return stand_in.stopped or Record("passed", "", "passed")
