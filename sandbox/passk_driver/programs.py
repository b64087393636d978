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
import json
import os
import re
import zipfile

from . import confine

# Where a run's or a build's process finds the artifact's memory file.
ARTIFACT_FD = 5
# A build whose compiler failed: its diagnostics are on standard error.
EXIT_COMPILE_FAILED = 122
# A build whose compiler could not be started at all.
EXIT_NO_COMPILER = 123
# The driver's own directory, where a language's serving and judging programs are.
_DRIVER = os.path.dirname(os.path.abspath(__file__))
# The descriptors of a judge program: the candidate's channel, its record, the
# problem's helpers and its tests (as text).
_JUDGE_TO_CANDIDATE, _JUDGE_FROM_CANDIDATE, _JUDGE_RECORD, _JUDGE_HELPERS, _JUDGE_TESTS = 3, 4, 5, 6, 7
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


def _environment():
    home = os.getcwd()
    return {"PATH": _PATH, "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


_JAVA_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_JAVA_TYPE = r"(?:class|record|interface|enum)\s+([A-Za-z_$][\w$]*)"


def _java_names(source):
    """The public class (None if there is none) and the class whose `main` starts the
    program, package-qualified, read from the source with its comments and strings
    left out."""
    code = _JAVA_NOISE.sub(" ", source)
    public = re.search(r"\bpublic\s+(?:(?:final|abstract|strictfp|sealed|non-sealed|static)\s+)*" + _JAVA_TYPE, code)
    package = re.search(r"^\s*package\s+([\w.]+)\s*;", code, re.M)
    main = re.search(r"\bstatic\s+(?:final\s+)?void\s+main\s*\(", code)
    declared = [(found.start(), found.group(1)) for found in re.finditer(r"\b" + _JAVA_TYPE, code)]
    enclosing = [name for at, name in declared if main is None or at < main.start()]
    name = enclosing[-1] if enclosing else (public.group(1) if public else "Main")
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


def build(build_rule, source):
    """In the build's confined process: writes the source, runs the compiler, and
    packs the artifact into ARTIFACT_FD. Never returns."""
    name = _source_name(build_rule, source)
    _write_source(name, source)
    environment = _environment()
    argv = _filled(build_rule["compile"], source=name)
    pid = os.fork()
    if pid == 0:
        try:
            os.execve(argv[0], argv, environment)
        finally:
            os._exit(EXIT_NO_COMPILER)
    _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        os._exit(EXIT_NO_COMPILER if os.WIFEXITED(status) and os.WEXITSTATUS(status) == EXIT_NO_COMPILER
                 else EXIT_COMPILE_FAILED)
    artifact = build_rule["artifact"]
    with open(ARTIFACT_FD, "wb", closefd=False) as out:
        if artifact["kind"] == "binary":
            with open(artifact["path"], "rb") as binary:
                while chunk := binary.read(1 << 20):
                    out.write(chunk)
        elif artifact["kind"] == "jar":
            classes = artifact["path"]
            _, main = _java_names(source)
            with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as jar:
                jar.writestr("META-INF/MANIFEST.MF", f"Manifest-Version: 1.0\nMain-Class: {main}\n\n")
                for directory, _, files in os.walk(classes):
                    for file in files:
                        path = os.path.join(directory, file)
                        jar.write(path, os.path.relpath(path, classes))
    os._exit(0)


def run(build_rule, source):
    """In a test's confined process: executes the artifact, with the test's input on
    standard input. Never returns."""
    environment = _environment()
    artifact = build_rule["artifact"]
    if artifact["kind"] == "source":
        path = _write_source(build_rule["source"], source)
    else:
        path = f"/proc/self/fd/{ARTIFACT_FD}"
    argv = _filled(build_rule["run"], artifact=path)
    try:
        if argv:
            os.execve(argv[0], argv, environment)
        else:
            # The binary itself, from its memory file.
            os.execve(ARTIFACT_FD, [os.path.basename(build_rule["source"]).rsplit(".", 1)[0]], environment)
    finally:
        os._exit(EXIT_NO_COMPILER)


def _filled(command, **values):
    """`command` with each `{name}` of `values` in place; other braces stay as they are."""
    return [re.sub(r"\{(\w+)\}", lambda found: values.get(found.group(1), found.group(0)), word) for word in command]


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


def judge(data, build_rule, channel_fds, record_type):
    """In the judge's process: runs the language's judging program on the problem's
    helpers and tests against the candidate behind `channel_fds` (the judge's reading
    end, then its writing end), and returns its verdict as `record_type(status, detail,
    result)`. The judging program writes the verdict on a pipe of its own, which the
    candidate's process never holds."""
    program = data["program"]
    from_candidate, to_candidate = channel_fds
    record_r, record_w = os.pipe()
    helpers_fd = memory_file("helpers", program.get("helpers", "").encode("utf-8", "surrogateescape"))
    tests_fd = memory_file("tests", program["test"].encode("utf-8", "surrogateescape"))
    stderr_fd = os.memfd_create("stderr", os.MFD_CLOEXEC)
    argv = _filled(build_rule["judge"], driver=_DRIVER, entry=data["entry_point"])
    pid = os.fork()
    if pid == 0:
        try:
            confine.keep_descriptors({2: stderr_fd, _JUDGE_TO_CANDIDATE: to_candidate,
                                      _JUDGE_FROM_CANDIDATE: from_candidate, _JUDGE_RECORD: record_w,
                                      _JUDGE_HELPERS: helpers_fd, _JUDGE_TESTS: tests_fd})
            os.execve(argv[0], argv, {"PATH": _PATH, "LANG": "C.UTF-8"})
        finally:
            os._exit(127)
    for fd in (record_w, helpers_fd, tests_fd):
        os.close(fd)
    received = bytearray()
    while len(received) < _RECORD_CAP:
        chunk = os.read(record_r, 65536)
        if not chunk:
            break
        received += chunk
    os.close(record_r)
    line = bytes(received).split(b"\n", 1)[0]
    try:
        status, detail = _verdict(line)
    except (ValueError, KeyError, TypeError):
        os.lseek(stderr_fd, 0, os.SEEK_SET)
        said = os.read(stderr_fd, 4096).decode("utf-8", "replace").strip().splitlines()
        os.close(stderr_fd)
        detail = f"the {build_rule['language']} judge ended without a verdict" + (f": {said[-1]}" if said else "")
        return record_type("error", detail, "failed: no verdict")
    os.close(stderr_fd)
    if status == "passed":
        return record_type("passed", "", "passed")
    return record_type(status, detail, f"failed: {detail}")
