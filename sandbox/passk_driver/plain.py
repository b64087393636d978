"""Programs run as they are, with no tests: a code-execution service's `run_code`. The
program runs once on its input; how it ended and all it printed are the answer. Files
the caller gives are put in its working directory before it starts, and the files the
caller names are read back from there once it has ended.

Both stay inside the working directory: a path is relative and has no `..`, and every
directory on the way is opened without following a link, so that a program that put a
link where a file was asked for, to reach the driver's files or anyone's, gets nothing
read back through it. Only regular files are read, and only up to FETCH_CAP bytes in
all: a program cannot hold the driver on a pipe, a device or an endless file."""

import base64
import os
import stat

from . import programs

# Bytes read back in all, over every fetched file.
FETCH_CAP = 16 << 20


def safe_parts(path):
    """The components of `path`, a relative path inside the working directory; None if
    it is absolute, empty, or climbs out."""
    if not path or path.startswith("/") or "\0" in path:
        return None
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if not parts or any(part == ".." for part in parts):
        return None
    return parts


def _open_directory(name, dir_fd):
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)


def put_files(scratch, files, owner):
    """Writes `files` (path to base64 content) below `scratch`, which the program has not
    yet run in, owned by `owner` (the candidates' user) where there is one."""
    if not files:
        return
    root = _open_directory(scratch, None)
    try:
        for path, content in files.items():
            parts = safe_parts(path)
            if parts is None:
                continue
            directory = root
            opened = []
            try:
                for part in parts[:-1]:
                    try:
                        os.mkdir(part, 0o700, dir_fd=directory)
                        if owner is not None:
                            os.chown(part, owner, owner, dir_fd=directory, follow_symlinks=False)
                    except FileExistsError:
                        pass
                    directory = _open_directory(part, directory)
                    opened.append(directory)
                fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=directory)
                try:
                    view = memoryview(base64.b64decode(content or ""))
                    while view:
                        view = view[os.write(fd, view):]
                    if owner is not None:
                        os.fchown(fd, owner, owner)
                finally:
                    os.close(fd)
            finally:
                for fd in opened:
                    os.close(fd)
    finally:
        os.close(root)


def fetch_files(scratch, paths):
    """The regular files of `paths` found below `scratch`, in base64 by path, reached
    without following a link; those that are not there, or not regular files, are left
    out, and so is what would go past FETCH_CAP."""
    found = {}
    if not paths:
        return found
    left = FETCH_CAP
    try:
        root = _open_directory(scratch, None)
    except OSError:
        return found
    try:
        for path in paths:
            parts = safe_parts(path)
            if parts is None or path in found:
                continue
            content = _read_below(root, parts, left)
            if content is not None:
                left -= len(content)
                found[path] = base64.b64encode(content).decode("ascii")
    finally:
        os.close(root)
    return found


def _read_below(root, parts, cap):
    opened = []
    directory = root
    try:
        for part in parts[:-1]:
            directory = _open_directory(part, directory)
            opened.append(directory)
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=directory)
    except OSError:
        return None
    finally:
        for fd_opened in opened:
            os.close(fd_opened)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size > cap:
            return None
        chunks = []
        total = 0
        while total <= status.st_size:
            chunk = os.read(fd, min(1 << 20, cap - total + 1))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def return_code(wait_status):
    """A process's exit status as a shell gives it: 128 plus the signal that killed it."""
    if os.WIFSIGNALED(wait_status):
        return 128 + os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)


def program_run(stage, execution):
    """One process's run as the verdict's `runs` give it."""
    status = execution.fields[0]
    timed_out = status in ("timeout", "compile-timeout")
    ended = "timeout" if timed_out else "finished" if status in ("error", "passed") else status
    code = None if timed_out or execution.status is None else return_code(execution.status)
    if stage == "compile" and code == programs.EXIT_COMPILE_FAILED:
        # The compiler's own failure, which a build tells by a status of passk's.
        code = 1
    return {
        "stage": stage,
        "ended": ended,
        "return_code": code,
        "duration": round(execution.duration, 6),
        "stdout": execution.out.text(),
        "stderr": execution.err.text(),
    }


def verdict_fields(run):
    """The verdict of a program run as it is: passed where it ran to an exit status of
    0, else how it ended."""
    if run["ended"] == "timeout":
        return "timeout", f"still running at its limit ({run['duration']:g} s)", "timed out"
    code = run["return_code"]
    if run["ended"] == "finished" and code == 0:
        return "passed", "", "passed"
    if run["ended"] == "finished":
        return "failed", f"exit status {code}", f"failed: exit status {code}"
    return run["ended"], f"ended by the sandbox ({run['ended']})", f"failed: {run['ended']}"
