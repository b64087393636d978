"""The judge's process, kept for the life of its worker slot, and the driver's handle on it.

The driver forks the judge once, and again only after a sample it could not finish (a
time-out, or its death). Forking it for every sample would double the cost of a
sample: in judge mode every sample still gets a candidate process of its own, with
fresh pipes to the judge, whose ends the driver hands over with the problem's code on
a socket only the two of them hold.

At level full the judge is the init of a pid namespace of its own, and every
candidate the init of another, new for each sample (forking.fork_alone): no
candidate can name the judge or the driver, let alone signal them. The judge is
non-dumpable like the driver it was forked from, so its memory cannot be read or
traced by a process without privilege, and where a second user is mapped the
candidate runs as that user.
"""

import os
import resource
import select
import signal
import socket
import time

from . import calls, cleanup, confine, forking, judge, programs, resident, stdio, wire
from .harness_link import HarnessLink, Lost

_HEADER = 4
# What a judge may keep resident after a sample before it is replaced: a share of a
# sample's memory limit, or without one, a fixed amount.
_KEPT_SHARE = 8
_KEPT_UNLIMITED = 512 << 20
# A fresh judge's own: the interpreter, the driver and the suites it holds.
_KEPT_LEAST = 64 << 20
# The judge's descriptors: its socket to the driver, and its line to the harness.
CONTROL_FD = 3
LINK_FD = 4


def _receive(control):
    """The next request and the channel's two descriptors, or None once the driver is gone."""
    data, fds, _, _ = socket.recv_fds(control, 1 << 16, 2)
    if not data:
        return None
    size = int.from_bytes(data[:_HEADER], "big")
    while len(data) < _HEADER + size:
        more = control.recv(max(_HEADER + size - len(data), 1 << 16))
        if not more:
            return None
        data += more
    return wire.decode(data[_HEADER:_HEADER + size]), fds


def _frame(value):
    payload = wire.encode(value)
    return len(payload).to_bytes(_HEADER, "big") + payload


def serve(control_fd, link_fd, privileged, ipc_namespace_per_sample, sample_group, request):
    """The judge's process: judges one sample at a time, as the driver asks. Never returns."""
    try:
        if sample_group is not None:
            # What the judge holds for a sample (the answers it reads, what the tests
            # build from them) counts against that sample's memory, and a sample that
            # runs its group out of memory may take the judge with it.
            sample_group.join()
        confine.reset_signals()
        # Orphans of candidates are reparented to an init; let the kernel reap them.
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        if ipc_namespace_per_sample:
            # An IPC namespace no candidate shares: the one it was forked in would live
            # on with the judge, with whatever the sample before left in it.
            confine.unshare(confine.CLONE_NEWIPC)
        confine.drop_privileges(privileged, None)
        confine.keep_descriptors({CONTROL_FD: control_fd, LINK_FD: link_fd})
        # No CPU limit: it would add up over every sample; the driver's deadline covers each.
        confine.set_limits({key: request.get(key) for key in ("file_size_bytes", "open_files")})
        # The memory limit bounds the judge's own address space (what it builds from a
        # sample's answers) but not its hard limit: the tests' programs it builds and runs
        # (programs.py) are the problem's, and a compiler or a Go or Java runtime reserves
        # more address space than a sample's limit of memory (a Go program, 800 MiB);
        # there the sample's control group, where there is one, counts what they hold.
        memory = request.get("memory_bytes")
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, resource.getrlimit(resource.RLIMIT_AS)[1]))
        control = socket.socket(fileno=CONTROL_FD)
        link = HarnessLink(LINK_FD)
        # What one sample's answers may take to build here: half its memory limit, so
        # that the judge meets the budget before its own limit.
        budget = memory // 2 if memory else None
        while True:
            received = _receive(control)
            if received is None:
                break
            problem, fds = received
            try:
                record = _judge(link, problem, fds, budget)
            except Exception as exc:
                # Whatever went wrong judging this sample (an answer too large to hold),
                # the judge answers for it and goes on to the next.
                detail = f"the judge could not finish: {type(exc).__name__}: {judge.text_of(exc)}"
                record = judge.Record("error", detail, "failed: the judge could not finish")
            for fd in fds:
                os.close(fd)
            control.sendall(_frame(record.fields()))
    finally:
        os._exit(0)


def _judge(link, problem, fds, budget):
    if problem[0] == "compare":
        return _compare(link, problem)
    if problem[0] == "prepare":
        return _prepare(link, problem)
    if problem[0] == "program":
        return _judge_program(link, problem, fds)
    if problem[0] == "build":
        return _build_tests(link, problem, fds[0] if fds else None)
    channel = wire.Channel(*fds, budget=budget)
    if problem[0] == "calls":
        return _judge_calls(link, problem, channel)
    return _judge_tests(link, problem, channel)


def _judge_tests(link, problem, channel):
    _, seq, suite_id = problem
    try:
        held = link.suite(seq, suite_id)
    except Lost as error:
        return _lost(error)
    compiled = held.check()
    if isinstance(compiled, judge.Record):
        return compiled
    return judge.judge(compiled, held.data["entry_point"], channel)


def _judge_program(link, problem, fds):
    """Tests in another language, run by that language's judging program (programs.py)."""
    _, seq, suite_id, build_rule = problem
    try:
        held = link.suite(seq, suite_id)
    except Lost as error:
        return _lost(error)
    return programs.judge(suite_id, held.data, build_rule, fds, judge.Record)


def _build_tests(link, problem, compiler):
    """Builds the tests' program of a problem in a compiled language, for its samples to
    come (see programs.tests_program), by the resident compiler on `compiler` if the
    driver passed one. Whatever fails here is reported when it is judged."""
    _, seq, suite_id, build_rule = problem
    try:
        held = link.suite(seq, suite_id)
    except Lost:
        return judge.Record("passed", "", "")
    programs.tests_program(suite_id, held.data, build_rule, compiler)
    return judge.Record("passed", "", "")


def _lost(error):
    detail = f"the judge could not get the problem's tests from the harness: {error}"
    return judge.Record("error", detail, "failed: no tests")


def _judge_calls(link, problem, channel):
    _, seq, suite_id, index, ahead_run = problem
    try:
        phase = link.suite(seq, suite_id).phase(index)
    except Lost as error:
        return _lost(error)
    if isinstance(phase, judge.Record):
        return phase
    try:
        return calls.judge_phase(phase, channel, lambda expected, suffix: link.seal(seq, index, expected, suffix),
                                 lambda at, output, seconds, arguments: link.record(seq, index, at, output, seconds,
                                                                                    arguments),
                                 ahead_run)
    finally:
        # Before the record goes to the driver: the harness waits for every output.
        link.flush_recorded()


def _prepare(link, problem):
    """Reads and parses a phase of calls before its candidate starts, so that the time a
    large suite takes to load (hundreds of megabytes of expected outputs) is not counted
    against the candidate's limit. Whatever fails here is reported when it is judged."""
    _, seq, suite_id, index, _ = problem
    try:
        link.suite(seq, suite_id).phase(index)
    except Lost:
        pass
    return judge.Record("passed", "", "")


def _compare(link, problem):
    """Test `index`'s output, compared with what was expected: passed, or failed with
    what is wrong, its expected part sealed for the harness when `first`."""
    _, seq, suite_id, index, got, first = problem
    try:
        held = link.suite(seq, suite_id)
    except Lost as error:
        return _lost(error)
    wrong = stdio.judge_output(held.data, index, got)
    if wrong is None:
        return judge.Record("passed", "", "passed")
    public, expected, suffix = wrong
    if first:
        link.seal(seq, index, expected, suffix)
    return judge.Record("failed", public, "failed: wrong answer", {"sealed": first})


class JudgeLost(Exception):
    """The judge died, or did not answer in time, and was stopped."""


class JudgeProcess:
    """The driver's handle on its slot's judge."""

    def __init__(self, link_fd):
        # The judge's line to the harness, held for each judge started; never read here.
        self.link_fd = link_fd
        self.pid = None
        self.pidfd = None
        self.control = None
        # Whether a judge was lost since the harness was last told.
        self.lost = False

    def ensure(self, context, request):
        """Starts the judge if it is not running."""
        if self.pid is not None:
            return
        ours, theirs = socket.socketpair()
        pid = forking.fork_alone(context, os.fork)
        if pid == 0:
            serve(theirs.fileno(), self.link_fd, context.privileged, context.ipc_namespace_per_sample,
                  context.sample_group, request)
        theirs.close()
        self.pid, self.pidfd, self.control = pid, os.pidfd_open(pid), ours

    def ask(self, problem, channel_ends=()):
        """Hands the judge one problem: its code, and its ends of the channel to the
        candidate if it has one."""
        data = _frame(problem)
        sent = socket.send_fds(self.control, [data], list(channel_ends))
        self.control.sendall(data[sent:])

    def prepare(self, context, request, problem, deadline):
        """Has the judge load phase `problem` of calls before its candidate is forked (see
        _prepare). A judge lost doing so is replaced, and the phase then loads within
        the candidate's time."""
        try:
            self.compare(context, request, ("prepare", *problem[1:]), deadline, "loading the problem's data")
        except JudgeLost:
            pass

    def build_tests(self, context, request, problem, limit):
        """Has the judge build the tests' program of `problem` (a compiled language's,
        see programs.py) before its candidate is forked, so that the build is not
        counted against the candidate's time; by the slot's resident compiler of tests
        where it keeps one (resident.py). A judge lost doing so is replaced, and the
        tests are then built within the candidate's time. The build has `limit` seconds,
        from when its compiler is ready."""
        build_rule = problem[3]
        line = context.compilers.line(context, request, build_rule, resident.TESTS)
        deadline = time.monotonic() + limit
        try:
            self.compare(context, request, ("build", *problem[1:]), deadline, "building the tests",
                         () if line is None else (line,))
        except JudgeLost:
            # Its compiler may be stuck on the build the judge was stopped in.
            context.compilers.stop(build_rule, resident.TESTS)
        else:
            context.compilers.retire_if_holding(build_rule, resident.TESTS, request)

    def compare(self, context, request, problem, deadline, doing="comparing the output", fds=()):
        """The judge's Record of one output (see _compare); JudgeLost if the judge
        ended, or was still comparing at `deadline` and was stopped. `fds` go with the
        problem."""
        self.ensure(context, request)
        self.ask(problem, fds)
        reader = _Reply()
        poller = select.poll()
        poller.register(self.control.fileno(), select.POLLIN)
        poller.register(self.pidfd, select.POLLIN)
        while reader.fields is None:
            remaining = deadline - time.monotonic()
            ready = poller.poll(max(remaining, 0) * 1000) if remaining > 0 else []
            if not ready:
                self.stop()
                raise JudgeLost(f"the judge was still {doing} at its deadline")
            for fd, _ in ready:
                if fd == self.pidfd:
                    self.ended()
                    raise JudgeLost(f"the judge ended while {doing}")
                data = self.control.recv(1 << 16)
                if not data:
                    self.stop()
                    raise JudgeLost(f"the judge hung up while {doing}")
                reader.feed(data)
        return reader.fields

    def retire_if_holding(self, request):
        """Stops a judge that kept more memory after its sample than a fresh one would
        hold, so that the next sample starts another. The judge's memory counts against
        each sample it judges (see serve), and what a sample's answers took there may
        stay with the process after they are freed (the allocator keeps its heap): a
        candidate could so leave the next samples, honest ones, short of memory."""
        if self.pid is None:
            return
        memory = request.get("memory_bytes")
        limit = memory // _KEPT_SHARE if memory else _KEPT_UNLIMITED
        held = cleanup.held_bytes(self.pid)
        if held is not None and held > max(limit, _KEPT_LEAST):
            self.stop()

    def taken_loss(self):
        """Whether a judge was lost since the last call; the harness forgets what it
        believed that judge held."""
        lost, self.lost = self.lost, False
        return lost

    def ended(self):
        """Reaps a judge that has ended (its pidfd is readable); returns its wait status."""
        _, status = os.waitpid(self.pid, 0)
        self._forget()
        return status

    def stop(self):
        """Kills the judge, mid-sample or not; the next sample starts another."""
        if self.pid is None:
            return
        cleanup.kill_kept(self.pid)
        self._forget()

    def _forget(self):
        os.close(self.pidfd)
        self.control.close()
        self.pid = self.pidfd = self.control = None
        self.lost = True


class _Reply:
    """The judge's answer to the driver: one frame of Record fields."""

    def __init__(self):
        self.buffer = b""
        self.fields = None

    def feed(self, data):
        self.buffer += data
        if len(self.buffer) < _HEADER:
            return
        size = int.from_bytes(self.buffer[:_HEADER], "big")
        if len(self.buffer) >= _HEADER + size:
            self.fields = wire.decode(self.buffer[_HEADER:_HEADER + size])
