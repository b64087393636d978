"""The judge's process, kept for the life of its worker slot, and the driver's handle on it.

The driver forks the judge once, and again only after a sample it could not finish (a
time-out, or its death). Forking it for every sample would double the cost of a
sample: in judge mode every sample still gets a candidate process of its own, with
fresh pipes to the judge, whose ends the driver hands over with the problem's code on
a socket only the two of them hold.

At level full the judge is the init of a pid namespace of its own, and every
candidate is forked into it: the kernel drops any signal sent to an init from inside
its namespace unless the init handles it (the judge handles none), the judge is
non-dumpable like the driver it was forked from, so its memory cannot be read or
traced by a process without privilege, and where a second user is mapped the
candidate runs as that user. The driver, outside the namespace, cannot even be named.
"""

import base64
import collections
import os
import signal
import socket

from . import calls, confine, judge, wire

# Compiled problems kept for the samples that follow (samples of a problem come together).
PROBLEMS_KEPT = 256
# Phases of call suites kept, parsed; the driver keeps the same list of their keys, and
# sends a phase's data only when the judge does not hold it.
PHASES_KEPT = 16
_HEADER = 4


class Kept:
    """The most recently used keys, up to a bound, with a value each. The driver and the
    judge each keep one, touched in the same order, so they agree on what is kept."""

    def __init__(self, bound):
        self.bound = bound
        self.items = collections.OrderedDict()

    def touch(self, key):
        """The value kept for `key` (now the most recent), or None."""
        value = self.items.pop(key, None)
        if value is not None:
            self.items[key] = value
        return value

    def keep(self, key, value):
        self.items[key] = value
        if len(self.items) > self.bound:
            self.items.popitem(last=False)


class _Problems:
    """Each problem's code, compiled once for all its samples."""

    def __init__(self):
        self._compiled = collections.OrderedDict()

    def get(self, prompt, test):
        key = (prompt, test)
        compiled = self._compiled.pop(key, None)
        if compiled is None:
            compiled = (judge.compile_prompt(prompt), compile(test, judge.TEST_FILE, "exec"), test.splitlines())
        self._compiled[key] = compiled
        if len(self._compiled) > PROBLEMS_KEPT:
            self._compiled.popitem(last=False)
        return compiled


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


def serve(control_fd, privileged, ipc_namespace_per_sample, request):
    """The judge's process: judges one sample at a time, as the driver asks. Never returns."""
    try:
        confine.reset_signals()
        # Orphans of candidates are reparented to an init; let the kernel reap them.
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        if ipc_namespace_per_sample:
            # An IPC namespace no candidate shares: the one it was forked in would live
            # on with the judge, with whatever the sample before left in it.
            confine.unshare(confine.CLONE_NEWIPC)
        confine.drop_privileges(privileged, None)
        confine.keep_descriptors({3: control_fd})
        # No CPU limit: it would add up over every sample; the driver's deadline covers each.
        confine.set_limits({key: request.get(key) for key in ("memory_bytes", "file_size_bytes", "open_files")})
        control = socket.socket(fileno=3)
        problems = _Problems()
        phases = Kept(PHASES_KEPT)
        while True:
            received = _receive(control)
            if received is None:
                break
            problem, (channel_in, channel_out) = received
            channel = wire.Channel(channel_in, channel_out)
            if problem[0] == "calls":
                record = _judge_calls(phases, problem, channel)
            else:
                _, prompt, test, entry_point = problem
                try:
                    compiled = problems.get(prompt, test)
                except Exception as exc:
                    detail = f"the problem's code does not compile: {type(exc).__name__}: {exc}"
                    record = judge.Record("unjudgeable", detail, f"failed: {exc}")
                else:
                    record = judge.judge(compiled, entry_point, channel)
            os.close(channel_in)
            os.close(channel_out)
            control.sendall(_frame(record.fields()))
    finally:
        os._exit(0)


def _judge_calls(phases, problem, channel):
    _, key, spec = problem
    phase = phases.touch(key)
    if phase is None:
        try:
            phase = calls.Phase(spec)
        except Exception as exc:
            detail = f"the problem's inputs or outputs cannot be read: {type(exc).__name__}: {exc}"
            # Kept all the same, so that the driver's list of what is held stays true.
            phase = judge.Record("unjudgeable", detail, "failed: unreadable problem")
        phases.keep(key, phase)
    if isinstance(phase, judge.Record):
        return phase
    return calls.judge_phase(phase, channel)


class JudgeProcess:
    """The driver's handle on its slot's judge."""

    def __init__(self):
        self.pid = None
        self.pidfd = None
        self.control = None
        # The judge's pid namespace, which candidates are forked into (level full).
        self.namespace = None
        # The call phases the judge holds, by key (its own list's twin).
        self.phases = Kept(PHASES_KEPT)

    def ensure(self, context, request):
        """Starts the judge if it is not running."""
        if self.pid is not None:
            return
        ours, theirs = socket.socketpair()
        if context.own_pid_namespace is not None:
            confine.unshare(confine.CLONE_NEWPID)
        try:
            pid = os.fork()
            if pid == 0:
                serve(theirs.fileno(), context.privileged, context.ipc_namespace_per_sample, request)
            if context.own_pid_namespace is not None:
                self.namespace = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            if context.own_pid_namespace is not None:
                confine.setns(context.own_pid_namespace, confine.CLONE_NEWPID)
        theirs.close()
        self.pid, self.pidfd, self.control = pid, os.pidfd_open(pid), ours

    def ask(self, problem_code, channel_ends):
        """Hands the judge one sample: the problem's code and its ends of the channel."""
        data = _frame(problem_code)
        sent = socket.send_fds(self.control, [data], list(channel_ends))
        self.control.sendall(data[sent:])

    def spec_unless_known(self, key, suite, phase):
        """The judge's spec of one phase of a call suite, or None if the judge holds it."""
        if self.phases.touch(key) is not None:
            return None
        self.phases.keep(key, True)
        spec = {name: value for name, value in suite.items() if name != "phases"}
        spec.update(phase)
        if type(spec.get("expected")) is str and spec.get("expected_form") == "base64":
            spec["expected"] = base64.b64decode(spec["expected"])
        return spec

    def ended(self):
        """Reaps a judge that has ended (its pidfd is readable); returns its wait status."""
        _, status = os.waitpid(self.pid, 0)
        self._forget()
        return status

    def stop(self):
        """Kills the judge, mid-sample or not; the next sample starts another."""
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        self._forget()

    def _forget(self):
        os.close(self.pidfd)
        self.control.close()
        if self.namespace is not None:
            os.close(self.namespace)
        self.pid = self.pidfd = self.control = self.namespace = None
        self.phases = Kept(PHASES_KEPT)
