"""Programs in languages other than Python: built inside the sandbox, then run there.

A sample's build is a process forked and confined like any candidate's, under the
sample's limits and a compile time limit of its own: a compiler reads whatever its
source names (`#include "/etc/shadow"`), can loop in templates or eat memory, and so
is given nothing a candidate is not. That process writes the source, runs the
compiler, and puts what the build left that runs (the artifact) into a memory file the
driver made for the sample and holds without ever reading: a candidate forked from the
driver later finds no other sample's program in its memory. The driver seals the file
once the build has ended, so that no run of the sample can change it for the next.

Each test's run is a candidate's process like a Python program's, which executes the
artifact: the binary itself, `java -jar` on the jar, or the language's interpreter on
the source written into the run's directory.
"""

import fcntl
import importlib
import json
import os
import pathlib
import re
import resource
import select
import shutil
import signal
import tempfile
import zipfile

from . import confine, resident
from .kept import Kept

# Where a run's or a build's process finds the artifact's memory file.
ARTIFACT_FD = 5
# A build whose compiler failed: its diagnostics are on standard error.
EXIT_COMPILE_FAILED = 122
# A build whose compiler could not be started at all.
EXIT_NO_COMPILER = 123
# A build whose resident compiler ended or hung up before it answered (see resident.py).
EXIT_COMPILER_LOST = 124
# Where a function completion's build finds the problem's serving object (see
# _build_apart): a memory file the driver keeps sealed once a build filled it.
SERVING_OBJECT_FD = 7
# The serving object's first byte, written last: it compiled (the object follows), or
# it did not. A file that begins with neither was never completed.
_SERVING_BUILT, _SERVING_UNBUILT = b"Y", b"N"
# The driver's own directory, where a language's serving and judging programs are.
_DRIVER = os.path.dirname(os.path.abspath(__file__))
# The descriptors of a judge program: the candidate's channel, its record, the
# problem's helpers and its tests (as text).
_JUDGE_TO_CANDIDATE, _JUDGE_FROM_CANDIDATE, _JUDGE_RECORD, _JUDGE_HELPERS, _JUDGE_TESTS = 3, 4, 5, 6, 7
# Where a compiled tests' program is executed from (see tests_program).
_JUDGE_EXECUTABLE = 8
_RECORD_CAP = 1 << 20
_SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
# What every build and run is given, and nothing of the driver's environment.
_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def artifact_file():
    """A new memory file for a sample's artifact."""
    return os.memfd_create("artifact", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)


def seal(fd):
    """Makes the artifact read-only for good."""
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)


def _lift_address_limit():
    """In a child of the judge that executes the problem's tests' compiler or program:
    the judge's address-space limit lifted to its hard limit (see judge_process)."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def _environment():
    home = os.getcwd()
    return _allocator({"PATH": _PATH, "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})


def _allocator(environment):
    """`environment`, and under an address-space limit one arena for the C library's
    allocator, which would reserve 64 MiB of the limit for each thread that allocates
    (a JVM's dozen)."""
    if _address_limit() is not None:
        environment["MALLOC_ARENA_MAX"] = "1"
    return environment


def _address_limit():
    """This process's address-space limit, in bytes; None where it has none."""
    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if limit == resource.RLIM_INFINITY else limit


# Java's comments, strings and characters, where no code is (java_assembly's too); and a
# type's declaration, its name the group.
JAVA_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
JAVA_TYPE = r"(?:class|record|interface|enum)\s+([A-Za-z_$][\w$]*)"
_JAVA_MAIN = r"\bstatic\s+(?:(?:public|final|synchronized|strictfp)\s+)*void\s+main\s*\("


def _java_names(source):
    """The public class (None if there is none) and the class whose `main` starts the
    program, package-qualified, read from the source with its comments and strings
    left out: the public class where it has a `main`, else the first class with one
    (`Outer$Inner` for a nested one), else the last class declared."""
    code = JAVA_NOISE.sub(" ", source)
    public = re.search(r"\bpublic\s+(?:(?:final|abstract|strictfp|sealed|non-sealed|static)\s+)*" + JAVA_TYPE, code)
    package = re.search(r"^\s*package\s+([\w.]+)\s*;", code, re.M)
    # The blocks open at each point: a class's name for its body, None for other blocks.
    mains, blocks, named, last = [], [], None, None
    for found in re.finditer(r"\b" + JAVA_TYPE + r"|[{}]|" + _JAVA_MAIN, code):
        if found.group(1):
            named = last = found.group(1)
        elif found.group(0) == "{":
            blocks.append(named)
            named = None
        elif found.group(0) == "}":
            blocks = blocks[:-1]
        elif any(blocks):
            mains.append("$".join(name for name in blocks if name))
    if public and public.group(1) in mains:
        name = public.group(1)
    else:
        name = mains[0] if mains else last or (public.group(1) if public else "Main")
    prefix = package.group(1) + "." if package else ""
    return (public.group(1) if public else None), prefix + name


def _source_name(build, source):
    """The file the source goes to: for Java, its public class's name, which javac
    requires of it."""
    name = build["source"]
    if name.endswith(".java"):
        public, _ = _java_names(source)
        if public:
            return public + ".java"
    return name


def _write_source(name, source):
    """Writes the candidate's code to `name` in this process's directory; its path."""
    path = os.path.join(os.getcwd(), name)
    with open(path, "w", encoding="utf-8") as written:
        written.write(source)
    return path


def build(build_rule, source, serving=None):
    """In the build's confined process: writes the source, runs the compiler (or asks
    the slot's resident one, where the driver passed its line), and packs the artifact
    into ARTIFACT_FD. Never returns. A function completion's program (`serving`: its
    entry point's name and declaration, and the prompt's code before it) is built with
    the language's serving code after it, or apart from it (see _build_apart)."""
    command = None
    if serving is not None:
        entry, declaration, helpers = serving
        assembly = _assembly(build_rule)
        if build_rule.get("object_compile") and _holds(SERVING_OBJECT_FD):
            _build_apart(build_rule, source, assembly.serving_object(helpers, entry, declaration, _DRIVER))
        source = assembly.serving_source(source, entry, declaration, _DRIVER)
        command = build_rule.get("serve_compile") or None
    name = _source_name(build_rule, source)
    text = with_precompiled(build_rule, source)
    argv = _compile_command(build_rule, name, source, command)
    if _holds(resident.COMPILER_FD):
        _build_by_resident(build_rule, name, text, source, argv)
    _write_source(name, text)
    argv = _address_limited(build_rule, argv)
    _exit_if_failed(_compile(argv))
    _pack(build_rule["artifact"], source, ".", ARTIFACT_FD, argv)
    os._exit(0)


def _compile(argv, quiet=False):
    """Runs a compiler in this directory: its wait status. Its diagnostics go to standard
    error (where some compilers, tsc, print them to standard output), or nowhere if
    `quiet`."""
    pid = os.fork()
    if pid == 0:
        try:
            if quiet:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 2)
            os.dup2(2, 1)
            os.execve(argv[0], argv, _environment())
        finally:
            os._exit(EXIT_NO_COMPILER)
    return os.waitpid(pid, 0)[1]


def _exit_if_failed(status):
    """Ends the build as its compiler failed, if it did."""
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        os._exit(EXIT_NO_COMPILER if os.WIFEXITED(status) and os.WEXITSTATUS(status) == EXIT_NO_COMPILER
                 else EXIT_COMPILE_FAILED)


def _build_apart(build_rule, source, serving):
    """A function completion's build with its serving code (`serving`, a source of its
    own) compiled apart from the candidate's, by the object it was compiled to for the
    problem, on SERVING_OBJECT_FD: given, or compiled here first into that file, which
    the driver keeps for the problem's later builds. The serving source is the
    problem's alone, and is compiled before the candidate's code is written. Returns,
    for a build of one source, where the serving code does not compile alone or the
    objects do not link (the candidate's code does not define the entry point as
    declared); else never returns."""
    if os.fstat(SERVING_OBJECT_FD).st_size == 0:
        _write_source("serving.cpp", with_precompiled(build_rule, serving))
        argv = _filled(build_rule["object_compile"], source="serving.cpp", object="serving.o")
        compiled = _compile(_address_limited(build_rule, argv), quiet=True) == 0
        if compiled:
            with open("serving.o", "rb") as built:
                data, at = built.read(), 0
            while at < len(data):
                at += os.pwrite(SERVING_OBJECT_FD, data[at:], 1 + at)
        os.pwrite(SERVING_OBJECT_FD, _SERVING_BUILT if compiled else _SERVING_UNBUILT, 0)
    elif os.pread(SERVING_OBJECT_FD, 1, 0) == _SERVING_BUILT:
        with open("serving.o", "wb") as written:
            at = 1
            while chunk := os.pread(SERVING_OBJECT_FD, 1 << 20, at):
                written.write(chunk)
                at += len(chunk)
    # Nothing compiled from here on holds the problem's file.
    os.close(SERVING_OBJECT_FD)
    if not os.path.exists("serving.o"):
        return
    name = build_rule["source"]
    _write_source(name, with_precompiled(build_rule, source))
    argv = _filled(build_rule["object_compile"], source=name, object="candidate.o")
    _exit_if_failed(_compile(_address_limited(build_rule, argv)))
    # The libraries the candidate's code includes, as a build of one source links them.
    linked = _compile_command(build_rule, name, source, build_rule["link"] + ["candidate.o", "serving.o"])
    if _compile(_address_limited(build_rule, linked), quiet=True) != 0:
        return
    _pack(build_rule["artifact"], source, ".", ARTIFACT_FD, linked)
    os._exit(0)


class ServingObjects:
    """The driver's memory files of the serving objects of problems whose serving code is
    compiled apart (see _build_apart), by suite id, the most recent KEPT: lent to each
    build of the problem, and kept, sealed, once a build has completed one. A build
    sees only the problem's object, never another sample's code."""

    KEPT = 64

    def __init__(self):
        self.kept = Kept(self.KEPT)

    def lend(self, suite_id):
        """The problem's object, or a new file for its build to complete."""
        kept = self.kept.touch(suite_id)
        if kept is not None:
            return kept
        return os.memfd_create("serving", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)

    def give_back(self, suite_id, fd):
        """Keeps a file a build completed; closes one it did not (it was stopped)."""
        if self.kept.get(suite_id) == fd:
            return
        if os.pread(fd, 1, 0) not in (_SERVING_BUILT, _SERVING_UNBUILT):
            os.close(fd)
            return
        seal(fd)
        dropped = self.kept.keep(suite_id, fd)
        if dropped is not None:
            os.close(dropped)


def _holds(fd):
    try:
        fcntl.fcntl(fd, fcntl.F_GETFD)
    except OSError:
        return False
    return True


def _build_by_resident(build_rule, name, text, source, argv):
    """The build by the slot's resident compiler (resident.py): the files it wrote come
    back in its reply and are written here, where the compiler would have written them,
    before the artifact is packed from them. Never returns."""
    built = _built_by_resident(resident.COMPILER_FD, name, text, argv, ".")
    if built is None:
        os._exit(EXIT_COMPILER_LOST)
    status, said = built
    while said:
        said = said[os.write(2, said):]
    if status != 0:
        os._exit(EXIT_COMPILE_FAILED)
    _pack(build_rule["artifact"], source, ".", ARTIFACT_FD, argv)
    os._exit(0)


def resident_process(build_rule):
    """The command and environment that start `build_rule`'s resident compiler, in its
    confined process."""
    return _address_limited(build_rule, _filled(build_rule["resident"], driver=_DRIVER)), _environment()


def _pack(artifact, source, directory, fd, argv):
    """Writes what the build of `source` (by `argv`) left in `directory` that runs into
    `fd`: a jar's manifest names the classes' path the build was given, as the run's."""
    with open(fd, "wb", closefd=False) as out:
        if artifact["kind"] in ("binary", "file"):
            with open(os.path.join(directory, artifact["path"]), "rb") as binary:
                while chunk := binary.read(1 << 20):
                    out.write(chunk)
        elif artifact["kind"] == "jar":
            classes = os.path.join(directory, artifact["path"])
            _, main = _java_names(source)
            manifest = f"Manifest-Version: 1.0\nMain-Class: {main}\n"
            paths = [path for option, value in zip(argv, argv[1:]) if option in ("-cp", "-classpath", "--class-path")
                     for path in value.split(os.pathsep) if path]
            if paths:
                # Lines of 72 bytes at most, each further one after a space.
                # A directory's address ends in a slash, or the JVM takes it for a jar.
                line = "Class-Path: " + " ".join(pathlib.Path(path).absolute().as_uri() + ("/" if path.endswith("/")
                                                                                          else "") for path in paths)
                manifest += "\n ".join(line[at:at + 70] for at in range(0, len(line), 70)) + "\n"
            with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as jar:
                jar.writestr("META-INF/MANIFEST.MF", manifest + "\n")
                for below, _, files in os.walk(classes):
                    for file in files:
                        path = os.path.join(below, file)
                        jar.write(path, os.path.relpath(path, classes))


def run(build_rule, source):
    """In a test's confined process: executes the artifact, with the test's input on
    standard input. Never returns."""
    environment = _environment()
    argv = _address_limited(build_rule, _filled(build_rule["run"], artifact=_artifact_path(build_rule, source)))
    try:
        if argv:
            os.execve(argv[0], argv, environment)
        else:
            # The binary itself, from its memory file.
            os.execve(ARTIFACT_FD, [os.path.basename(build_rule["source"]).rsplit(".", 1)[0]], environment)
    finally:
        os._exit(EXIT_NO_COMPILER)


def _artifact_path(build_rule, source):
    """Where a run's command finds the artifact: the source written to the run's
    directory, the artifact's file put back there (an interpreter resolves its script's
    real path, which a memory file's is not), or its memory file."""
    artifact = build_rule["artifact"]
    if artifact["kind"] == "source":
        return _write_source(build_rule["source"], source)
    if artifact["kind"] == "file":
        path = os.path.join(os.getcwd(), artifact["path"])
        # Opened afresh: the descriptor's own offset is where the build left it.
        with open(f"/proc/self/fd/{ARTIFACT_FD}", "rb") as built, open(path, "wb") as written:
            shutil.copyfileobj(built, written)
        return path
    return f"/proc/self/fd/{ARTIFACT_FD}"


def serve_built(build_rule, source, entry_point):
    """Judge mode, in the candidate's confined process, for a language whose function
    completions are built (see _assembly): runs the built program, through the
    language's serving command where it has one. Never returns."""
    if not build_rule["serve"]:
        run(build_rule, source)
    argv = _address_limited(build_rule, _filled(build_rule["serve"], driver=_DRIVER,
                                                artifact=_artifact_path(build_rule, source), entry=entry_point))
    try:
        os.execve(argv[0], argv, _environment())
    finally:
        os._exit(EXIT_NO_COMPILER)


def top_level_split(text):
    """`text` split at the commas outside brackets of any kind (a declaration's
    parameters); the `>` of an arrow (`->`) closes none."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(text):
        if char in "<([{":
            depth += 1
        elif char in ">)]}" and not (char == ">" and text[at - 1] == "-"):
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:at])
            start = at + 1
    parts.append(text[start:])
    return parts


def with_precompiled(build_rule, source):
    """`source` with its first lines replaced by an include of the precompiled header
    (see languages.toml's `headers`) that holds them and every other header it includes:
    each of the header's lines is an include the source has, so the program includes the
    same standard headers, some of them sooner, which the standard allows ("standard
    library headers may be included in any order"). The lines replaced become blank, so
    that diagnostics keep their line numbers. Blank and `//` lines may come first, as
    they may before a precompiled header; anything else, and the source is as it was."""
    lines = source.split("\n")
    first = next((at for at, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("//")), None)
    if first is None:
        return source
    present = {_spaceless(line) for line in lines}
    for header in build_rule.get("precompiled", ()):
        wanted = {_spaceless(line) for line in header["lines"]}
        if not wanted <= present:
            continue
        end = first
        while end < len(lines) and _spaceless(lines[end]) in wanted:
            end += 1
        if end > first:
            replaced = [f'#include "{header["name"]}"'] + [""] * (end - first - 1)
            return "\n".join(lines[:first] + replaced + lines[end:])
    return source


def _spaceless(line):
    return "".join(line.split())


def _compile_command(build_rule, name, source, command=None):
    """The build's command (`command`, or the rule's) for `source`, written to `name`,
    with the libraries it includes (C, C++) or imports (Java) linked."""
    argv = _filled(command or build_rule["compile"], source=name)
    for library in build_rule.get("libraries", ()):
        named = r'^\s*(?:#\s*include\s*[<"]|import\s+(?:static\s+)?)' + re.escape(library["include"])
        if re.search(named, source, re.M):
            link = list(library["link"])
            # javac heeds its last classes' path alone: a library's joins the command's.
            if link[:1] == ["-cp"] and "-cp" in argv:
                at = argv.index("-cp") + 1
                argv[at] = argv[at] + os.pathsep + link[1]
                link = link[2:]
            argv += link
    return argv


def _address_limited(build_rule, argv):
    """`argv` with the options its command takes under this process's address-space
    limit (languages.toml's `address_limited`), where one is in force."""
    limit = _address_limit()
    if not argv or limit is None:
        return argv
    for rule in build_rule.get("address_limited", ()):
        if os.path.basename(argv[0]) == rule["command"]:
            mib = limit >> 20
            options = [re.sub(r"\{address_space/(\d+)\}", lambda found: str(mib // int(found.group(1))), option)
                       for option in rule["options"]]
            at = argv.index(rule["at"]) if rule.get("at") in argv[1:] else 1
            return argv[:at] + options + argv[at:]
    return argv


def _filled(command, **values):
    """`command` with each `{name}` of `values` in place; other braces stay as they are."""
    return [_fill(word, values) for word in command]


def _fill(text, values):
    return re.sub(r"\{(\w+)\}", lambda found: values.get(found.group(1), found.group(0)), text)


def template(name, **values):
    """The driver's file `name`, with each `{name}` of `values` in place."""
    with open(os.path.join(_DRIVER, name), encoding="utf-8") as read:
        return _fill(read.read(), values)


def _assembly(build_rule):
    """The module that assembles a compiled language's function completions: its
    `serving_source(code, entry, declaration, driver)` is the candidate's code made a
    program that serves calls of the entry point, and its `tests_source(helpers,
    declaration, entry, tests, driver)` the tests' program, with a stand-in for the entry
    point that passes each call to the candidate's process (ValueError where the
    problem cannot be assembled). Its VERDICT_BY_EXIT says whether the tests' program
    passes by ending with status 0 (it is the tests themselves), or writes its verdict
    like the judging programs of interpreted languages."""
    return importlib.import_module(f"{__package__}.{build_rule['assembly']}")


def memory_file(name, data):
    """A memory file holding the bytes `data`, to be read from its start."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


_STATUSES = ("passed", "failed", "error", "gone", "unjudgeable")


def _verdict(line):
    """A judging program's verdict line: JSON with `status` and `detail`, or the status,
    a tab and the detail."""
    if line.startswith(b"{"):
        verdict = json.loads(line)
        status, detail = verdict["status"], verdict["detail"]
    else:
        status, _, detail = line.decode("utf-8", "replace").partition("\t")
    if status not in _STATUSES or type(detail) is not str:
        raise ValueError(f"not a verdict: {line[:200]!r}")
    return status, detail


def serve(build_rule, source, entry_point):
    """Judge mode, in the candidate's confined process: runs the language's serving
    program on the candidate's code, which answers the judge's calls of `entry_point`
    on the channel's descriptors. Never returns."""
    path = _write_source(build_rule["source"], source)
    argv = _filled(build_rule["serve"], driver=_DRIVER, artifact=path, entry=entry_point)
    try:
        os.execve(argv[0], argv, _environment())
    finally:
        os._exit(EXIT_NO_COMPILER)


def judge(suite_id, data, build_rule, channel_fds, record_type):
    """In the judge's process: runs the language's judging program on the problem's
    helpers and tests against the candidate behind `channel_fds` (the judge's reading
    end, then its writing end), and returns its verdict as `record_type(status, detail,
    result)`. The judging program writes the verdict on a pipe of its own, which the
    candidate's process never holds; a compiled language's tests' program (see
    tests_program) passes by ending with status 0 once its own main returned."""
    program = data["program"]
    from_candidate, to_candidate = channel_fds
    record_r, record_w = os.pipe()
    stderr_fd = os.memfd_create("stderr", os.MFD_CLOEXEC)
    descriptors = {2: stderr_fd, _JUDGE_TO_CANDIDATE: to_candidate, _JUDGE_FROM_CANDIDATE: from_candidate,
                   _JUDGE_RECORD: record_w}
    if build_rule.get("assembly"):
        built = tests_program(suite_id, data, build_rule)
        if isinstance(built, str):
            os.close(record_r)
            os.close(record_w)
            os.close(stderr_fd)
            return record_type("unjudgeable", built, "failed: cannot be judged")
        descriptors[_JUDGE_EXECUTABLE] = built
        argv = _filled(build_rule.get("judge_run") or build_rule["run"], artifact=f"/proc/self/fd/{_JUDGE_EXECUTABLE}",
                       driver=_DRIVER, entry=data["entry_point"])
        argv, executable = (argv, argv[0]) if argv else ([build_rule["language"] + "-tests"], _JUDGE_EXECUTABLE)
    else:
        descriptors[_JUDGE_HELPERS] = memory_file("helpers", _encoded(program.get("helpers", "")))
        descriptors[_JUDGE_TESTS] = memory_file("tests", _encoded(program["test"]))
        argv = _filled(build_rule["judge"], driver=_DRIVER, entry=data["entry_point"])
        executable = argv[0]
    with _Children():
        pid = os.fork()
        if pid == 0:
            try:
                confine.keep_descriptors(descriptors)
                _lift_address_limit()
                os.execve(executable, argv, {"PATH": _PATH, "LANG": "C.UTF-8"})
            finally:
                os._exit(127)
        for fd, held in descriptors.items():
            if fd in (_JUDGE_RECORD, _JUDGE_HELPERS, _JUDGE_TESTS):
                os.close(held)
        received = bytearray()
        while len(received) < _RECORD_CAP:
            chunk = os.read(record_r, 65536)
            if not chunk:
                break
            received += chunk
        os.close(record_r)
        _, ended = os.waitpid(pid, 0)
    os.lseek(stderr_fd, 0, os.SEEK_SET)
    said = os.read(stderr_fd, 1 << 16).decode("utf-8", "replace").strip().splitlines()
    os.close(stderr_fd)
    line = bytes(received).split(b"\n", 1)[0]
    if line:
        try:
            status, detail = _verdict(line)
        except (ValueError, KeyError, TypeError):
            line = b""
    if not line and build_rule.get("assembly") and _assembly(build_rule).VERDICT_BY_EXIT:
        status, detail = _tests_ended(ended, said, build_rule)
    elif not line:
        detail = f"the {build_rule['language']} judge ended without a verdict" + (f": {said[-1]}" if said else "")
        return record_type("error", detail, "failed: no verdict")
    if status == "passed":
        return record_type("passed", "", "passed")
    return record_type(status, detail, f"failed: {detail}")


def _encoded(text):
    return text.encode("utf-8", "surrogateescape")


_ASSERTION = re.compile(r"Assertion `(.*)' failed\.$")


def _tests_ended(ended, said, build_rule):
    """The verdict of a compiled tests' program that wrote none: passed once its main
    returned (status 0), failed otherwise, naming the failed assertion (or test, where
    the language's assembly reads its report: its `failure(lines)`)."""
    if os.WIFEXITED(ended) and os.WEXITSTATUS(ended) == 0:
        return "passed", ""
    reported = getattr(_assembly(build_rule), "failure", None)
    named = reported(said) if reported else None
    if named:
        return "failed", named
    for line in said:
        found = _ASSERTION.search(line)
        if found:
            return "failed", f"assert failed: {found.group(1)}"
    how = (f"exited with status {os.WEXITSTATUS(ended)}" if os.WIFEXITED(ended)
           else f"was killed by signal {signal.Signals(os.WTERMSIG(ended)).name}")
    return "failed", f"the tests {how}" + (f": {said[-1]}" if said else "")


class _Children:
    """While held, this process's children are its own to wait for: the judge has the
    kernel reap them otherwise (see judge_process.serve)."""

    def __enter__(self):
        self.before = signal.signal(signal.SIGCHLD, signal.SIG_DFL)

    def __exit__(self, *_):
        signal.signal(signal.SIGCHLD, self.before)
        # Orphans reparented here meanwhile.
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass


# The tests' programs built in this judge, by suite: a memory file holding the
# executable, or why it could not be built.
_BUILT = {}
_BUILT_KEPT = 64


def tests_program(suite_id, data, build_rule, compiler=None):
    """The tests' program of a problem in a compiled language: its helpers and tests, with
    a stand-in for the entry point that passes each call to the candidate's process
    (see _assembly), built once per problem in the judge's process, where no candidate
    reaches its source, or by the resident compiler of tests on `compiler`; a memory
    file of the executable, or why it could not be built."""
    if suite_id in _BUILT:
        return _BUILT[suite_id]
    program = data["program"]
    try:
        source = _assembly(build_rule).tests_source(program.get("helpers", ""), data.get("declaration", ""),
                                                    data["entry_point"], program["test"], _DRIVER)
    except ValueError as unassembled:
        built = str(unassembled)
    else:
        built = _build_here(build_rule, source, compiler)
    while len(_BUILT) >= _BUILT_KEPT:
        dropped = _BUILT.pop(next(iter(_BUILT)))
        if not isinstance(dropped, str):
            os.close(dropped)
    _BUILT[suite_id] = built
    return built


def _build_here(build_rule, source, compiler=None):
    """Builds `source` in a directory of this process's own, removed after, by the
    resident compiler on `compiler` where there is one and it answers; the executable
    in a memory file, or why it did not build."""
    directory = tempfile.mkdtemp(prefix="passk-tests-")
    try:
        name = _source_name(build_rule, source)
        text = with_precompiled(build_rule, source)
        with open(os.path.join(directory, name), "w", encoding="utf-8") as written:
            written.write(text)
        argv = _compile_command(build_rule, name, source, build_rule.get("judge_compile") or build_rule["compile"])
        cache = None
        if any("{cache}" in word for word in argv):
            cache = _laid_cache(directory)
            argv = _filled(argv, cache=cache)
        built = _built_by_resident(compiler, name, text, argv, directory) if compiler is not None else None
        if built is not None:
            ended, said = built[0], _lines(built[1])
        else:
            ended, said = _compiled_here(build_rule, argv, directory)
        if ended is None:
            return f"the problem's tests did not build in {build_rule['compile_timeout']} s"
        if ended != 0:
            # Not go's `# package` before its diagnostics.
            said = [line for line in said if not line.startswith("# ")]
            named = [line for line in said if "error" in line.lower()]
            return "the problem's tests do not compile" + (f": {(named or said)[0]}" if said else "")
        if cache is not None:
            _keep_cache(cache)
        executable = artifact_file()
        _pack(build_rule["artifact"], source, directory, executable, argv)
        seal(executable)
        return executable
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _compiled_here(build_rule, argv, directory):
    """Runs the compiler in `directory`: its exit status (None if it ran out of its
    time, -1 if a signal ended it) and the lines it printed."""
    stderr_fd = os.memfd_create("stderr", os.MFD_CLOEXEC)
    environment = {"PATH": _PATH, "HOME": directory, "TMPDIR": directory, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    try:
        with _Children():
            pid = os.fork()
            if pid == 0:
                try:
                    os.chdir(directory)
                    confine.keep_descriptors({1: stderr_fd, 2: stderr_fd})
                    _lift_address_limit()
                    os.execve(argv[0], argv, environment)
                finally:
                    os._exit(127)
            pidfd = os.pidfd_open(pid)
            ready = select.select([pidfd], [], [], float(build_rule["compile_timeout"]))[0]
            os.close(pidfd)
            if not ready:
                os.kill(pid, signal.SIGKILL)
            _, ended = os.waitpid(pid, 0)
            if not ready:
                return None, []
        os.lseek(stderr_fd, 0, os.SEEK_SET)
        said = os.read(stderr_fd, 1 << 16)
    finally:
        os.close(stderr_fd)
    return (os.WEXITSTATUS(ended) if os.WIFEXITED(ended) else -1), _lines(said)


def _built_by_resident(compiler, name, text, argv, directory):
    """Has the resident compiler on `compiler` build `text`, and writes the files it
    wrote into `directory`: its exit status and what it printed, or None if it did not
    answer, or answered with what no build writes (a file outside the directory)."""
    try:
        reply = resident.ask(compiler, [name, text, *argv[1:]])
        status, said, written = int(reply[0]), reply[1], reply[2:]
    except (resident.Lost, ValueError, IndexError):
        return None
    if len(written) % 2:
        return None
    directory = os.path.abspath(directory)
    for path, data in zip(written[::2], written[1::2]):
        target = os.path.normpath(os.path.join(directory, path.decode("utf-8", "replace")))
        if os.path.relpath(target, directory).split(os.sep)[0] == "..":
            return None
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(data)
    return status, said


def _lines(said):
    return [line.strip() for line in said.decode("utf-8", "replace").splitlines() if line.strip()]


# The toolchain's cache of the tests' builds (a judging command's `{cache}`: Go's
# GOCACHE), held in this judge's memory as the files its first build left there, and
# laid out again for each build: the judge has no directory that outlives a sample (at
# level full its /tmp is the candidates', renewed after each), and the packages every
# problem's tests use (testify) are so compiled once per judge rather than per problem.
_CACHE = {}


def _laid_cache(directory):
    """A new cache directory in `directory`, holding what _CACHE holds."""
    cache = os.path.join(directory, "cache")
    os.mkdir(cache)
    for path, data in _CACHE.items():
        target = os.path.join(cache, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as written:
            written.write(data)
    return cache


def _keep_cache(cache):
    """Keeps what the judge's first build that succeeded left in its cache."""
    if _CACHE:
        return
    for below, _, files in os.walk(cache):
        for file in files:
            path = os.path.join(below, file)
            with open(path, "rb") as read:
                _CACHE[os.path.relpath(path, cache)] = read.read()
