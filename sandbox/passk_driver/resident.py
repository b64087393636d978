"""Compilers kept running for a worker slot's builds (languages.toml's `resident`).

javac and tsc spend most of a build starting: a JVM and javac's warm-up, or parsing
TypeScript's standard library, twenty times the compile of a sample's file. Where a
language names a resident compiler, the slot starts it once and each build asks it to
compile one source: the build's process is still forked and confined for the sample
(programs.build), under the compile time limit, but sends its source to the compiler
and packs what comes back, where it would have executed the compiler itself.

The compiler reads the candidate's code as data and runs none of it (javac with no
annotation processing, tsc), and the requests and replies carry files' contents: it
neither reads a build's directory nor writes one, so no build finds another's files.
It is confined as a candidate is (its user, its own session, the filter, the limits on
file size, open files and address space, the sample's memory limit, since it is in no
sample's control group), in the driver's view of the file system, where it reads the
toolchain's libraries. It is
only kept at level full, where every candidate is in a pid namespace of its own and
cannot name it: below that a candidate runs as the same user and could reach its
memory through /proc, and so every build there runs its compiler afresh.

A build that did not come back (it ran out of its time, or was killed) stops the
compiler, which may be stuck on it; the next build starts another. A compiler that
ended or hung up answers no build: that build is run again with the compiler executed
afresh, so that a source that kills the compiler (its memory, its stack) fails or
passes as it would there, in the sample's control group. A compiler that ran out of
its stack or memory ends rather than answer, for the same reason: what a warm
compiler can hold differs from what one started for the build can.
"""

import os
import select
import signal
import socket
import time

from . import cleanup, confine, forking, programs

# Whose sources a resident compiler builds (see ResidentCompilers).
CANDIDATES, TESTS = "candidates", "tests"
# Where a build's process finds its line to the resident compiler (beside the
# artifact's, programs.ARTIFACT_FD, and the source's, candidate.SOURCE_FD).
COMPILER_FD = 6
# What a compiler may keep resident before it is replaced: a share of a sample's
# memory limit, as the judge's (judge_process._KEPT_SHARE), or without one, a fixed amount.
_KEPT_SHARE = 8
_KEPT_UNLIMITED = 1 << 30
_HEADER = 4
# How long a compiler may take to start (RESIDENT_START in the runner's driver.rs, which
# allows for it): outside any build's limit, which a loaded machine's start of node and
# TypeScript's library, seconds, would otherwise take from the first build.
RESIDENT_START = 30
# How many compilers in a row lost on their first build make a language's compiler
# unavailable to a slot (see ResidentCompilers.lost).
_LOST_FRESH = 3


class Resident:
    """One running compiler: its process and the driver's end of its line."""

    def __init__(self, pid, line):
        self.pid = pid
        self.pidfd = os.pidfd_open(pid)
        self.line = line
        # How many builds it was handed.
        self.builds = 0


class ResidentCompilers:
    """The slot's running compilers, by language and by whose sources they build: the
    candidates' (`CANDIDATES`) or the problems' tests' (`TESTS`, which the judge builds,
    see judge_process), never both, so that nothing of a problem's tests is ever in a
    process that compiles a candidate's code."""

    def __init__(self):
        self.running = {}
        # By language and role: how many compilers in a row were lost on their first
        # build, and those that are no longer started (see `lost`).
        self.lost_fresh = {}
        self.unavailable = set()

    def line(self, context, request, build_rule, role):
        """The descriptor a build's process asks `build_rule`'s resident compiler on,
        started if it is not running; None where the language has none or the level
        keeps none (see above)."""
        key = (build_rule["language"], role)
        if not build_rule.get("resident") or not context.nested or key in self.unavailable:
            return None
        resident = self.running.get(key)
        if resident is not None and select.select([resident.pidfd], [], [], 0)[0]:
            # It ended since its last build (one whose source it could not survive).
            self.lost(build_rule, role)
            resident = self.running.get(key)
        if key in self.unavailable:
            return None
        if resident is None:
            resident = self.running[key] = _start(context, request, build_rule)
            # Its start is not the build's time: a tight --compile-timeout would
            # otherwise fail the first build, stop it, and so fail every build after.
            if not _ready(resident, RESIDENT_START):
                resident.builds = 1
                self.lost(build_rule, role)
                return None
        resident.builds += 1
        return resident.line.fileno()

    def lost(self, build_rule, role):
        """Stops a compiler that ended or hung up on a build. One that does so on its first
        build three times in a row (it cannot start under the memory limit: node needs
        more than 512 MiB of address space) is not started again in this slot, whose
        builds then start their own compilers."""
        key = (build_rule["language"], role)
        resident = self.running.get(key)
        if resident is None:
            return
        self.stop(build_rule, role)
        if resident.builds > 1:
            self.lost_fresh[key] = 0
            return
        self.lost_fresh[key] = self.lost_fresh.get(key, 0) + 1
        if self.lost_fresh[key] >= _LOST_FRESH:
            self.unavailable.add(key)

    def pids(self):
        return [resident.pid for resident in self.running.values()]

    def stop(self, build_rule, role):
        """Kills `build_rule`'s compiler for `role`, which may be stuck on a build that
        did not come back; the next build starts another."""
        resident = self.running.pop((build_rule["language"], role), None)
        if resident is None:
            return
        cleanup.kill_kept(resident.pid)
        os.close(resident.pidfd)
        resident.line.close()

    def retire_if_holding(self, build_rule, role, request):
        """Stops a compiler that holds more memory than a share of a sample's limit: it
        lives outside the samples' control groups, and what one source made it hold is
        not kept for the next."""
        self.lost_fresh[(build_rule["language"], role)] = 0
        resident = self.running.get((build_rule["language"], role))
        if resident is None:
            return
        memory = request.get("memory_bytes")
        limit = memory // _KEPT_SHARE if memory else _KEPT_UNLIMITED
        held = cleanup.held_bytes(resident.pid)
        if held is not None and held > limit:
            self.stop(build_rule, role)


def _start(context, request, build_rule):
    ours, theirs = socket.socketpair()
    pid = forking.fork_alone(context)
    if pid == 0:
        try:
            _confine(context, request, theirs.fileno())
            argv, environment = programs.resident_process(build_rule)
            os.execve(argv[0], argv, environment)
        finally:
            os._exit(127)
    theirs.close()
    return Resident(pid, ours)


def _ready(resident, limit):
    """Whether a compiler just started says it is ready (an empty frame) within `limit`
    seconds."""
    deadline = time.monotonic() + limit
    got = b""
    while len(got) < _HEADER:
        remaining = deadline - time.monotonic()
        ready = select.select([resident.line, resident.pidfd], [], [], max(remaining, 0))[0] if remaining > 0 else []
        if resident.line not in ready:
            return False
        chunk = resident.line.recv(_HEADER - len(got))
        if not chunk:
            return False
        got += chunk
    return got == bytes(_HEADER)


def _confine(context, request, line_fd):
    """A candidate's confinement (candidate.confine_candidate) for a process that lives
    across samples: no sample's group or directory, no CPU time limit, which would add
    up over every build, and the line to the driver as its standard input and output."""
    confine.own_proc()
    os.setsid()
    if context.driver_pid != 1:
        confine.prctl(confine.PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != context.driver_pid:
            os._exit(127)
    confine.reset_signals()
    confine.drop_privileges(context.privileged, context.candidate_user)
    os.chdir("/")
    null = os.open(os.devnull, os.O_RDWR)
    confine.keep_descriptors({0: line_fd, 1: line_fd, 2: null})
    # The sample's memory limit bounds its address space, control groups or not: it
    # lives outside the samples' groups, and a source that makes it hold more than a
    # sample may ends it, and that build is run again by a compiler of its own, in the
    # sample's group (see above).
    limits = {key: request.get(key) for key in ("file_size_bytes", "open_files", "memory_bytes")}
    confine.set_limits(limits, processes=False)
    if context.syscall_filter:
        context.syscall_filter.install(os.getpid())


class Lost(Exception):
    """The compiler ended, or hung up, before it answered."""


def ask(fd, items):
    """In a build's process: sends the compiler one request (a list of strings) and
    returns its reply (a list of bytes)."""
    frame = [len(items).to_bytes(_HEADER, "big")]
    for item in items:
        data = item.encode("utf-8")
        frame += [len(data).to_bytes(_HEADER, "big"), data]
    data = b"".join(frame)
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError as error:
        raise Lost(str(error)) from error
    count = int.from_bytes(_read_exactly(fd, _HEADER), "big")
    return [_read_exactly(fd, int.from_bytes(_read_exactly(fd, _HEADER), "big")) for _ in range(count)]


def _read_exactly(fd, size):
    chunks, got = [], 0
    while got < size:
        try:
            chunk = os.read(fd, min(size - got, 1 << 20))
        except OSError as error:
            raise Lost(str(error)) from error
        if not chunk:
            raise Lost("the compiler hung up")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
