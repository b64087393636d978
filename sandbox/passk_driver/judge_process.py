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

import collections
import os
import signal
import socket

from . import confine, judge, wire

# Compiled problems kept for the samples that follow (samples of a problem come together).
PROBLEMS_KEPT = 256
_HEADER = 4


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
        while True:
            received = _receive(control)
            if received is None:
                break
            (prompt, test, entry_point), (channel_in, channel_out) = received
            try:
                problem = problems.get(prompt, test)
            except Exception as exc:
                detail = f"the problem's code does not compile: {type(exc).__name__}: {exc}"
                record = judge.Record("unjudgeable", detail, f"failed: {exc}")
            else:
                record = judge.judge(problem, entry_point, wire.Channel(channel_in, channel_out))
            os.close(channel_in)
            os.close(channel_out)
            control.sendall(_frame(record.fields()))
    finally:
        os._exit(0)


class JudgeProcess:
    """The driver's handle on its slot's judge."""

    def __init__(self):
        self.pid = None
        self.pidfd = None
        self.control = None
        # The judge's pid namespace, which candidates are forked into (level full).
        self.namespace = None

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
