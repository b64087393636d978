"""One sample, from fork to verdict: the processes it needs, watching them under one
deadline, and what their ends mean.

In judge mode a sample is two processes. At level full the driver gives each sample a
pid namespace of its own: the judge is forked first and becomes its init, then the
candidate. The kernel drops every signal sent to an init from inside its namespace
unless the init handles it (the judge handles none), the judge is non-dumpable like
the driver it was forked from, so its memory cannot be read or traced by a process
without privilege, and the driver, outside the namespace, cannot even be named. The
judge's record comes on a pipe only the judge holds.

In in-process mode a sample is one process that runs candidate and tests together and
proves its tests returned with a token-carrying record (see candidate.py).
"""

import fcntl
import gc
import os
import select
import signal
import time

from . import candidate, cgroup, cleanup, confine, forking, judge, plain, programs, resident, stdio, wire
from .judge_process import JudgeLost

READ_CHUNK = 65536
RECORD_CAP = 1 << 20
# How long the judge may take to compare one output (a checker has its own limit).
COMPARE_LIMIT = stdio.CHECKER_TIMEOUT + 30
# How long the judge may take to load a phase of calls, before its candidate starts (a
# suite may hold hundreds of megabytes of expected outputs).
PREPARE_LIMIT = 120
# Signals that the kernel sends when a limit is exceeded.
LIMIT_SIGNALS = {signal.SIGXCPU: "CPU time limit", signal.SIGXFSZ: "file size limit"}
# What the judging programs of compiled languages say when the candidate's process hung
# up on a call (its wire's channel ended): the driver says how it ended.
CANDIDATE_GONE = "the candidate's process ended before it answered"
# How long an ending the judge saw may take to reach the candidate's pidfd: its pipes
# close as it exits, a moment before it is a zombie.
GONE_SETTLING = 0.2
# What a record that a candidate's own process writes (in-process mode) may say: that
# it ran into a limit is for the driver to tell, from what the kernel saw.
CANDIDATE_STATUSES = ("passed", "failed", "error")


def clean(text):
    """`text` as valid Unicode: a lone surrogate becomes U+FFFD, so that the record the
    harness reads is always valid JSON."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class Capture:
    """Keeps the first `cap` bytes of a stream and counts the rest."""

    def __init__(self, cap):
        self.cap = cap
        self.head = bytearray()
        self.total = 0

    def feed(self, data):
        self.total += len(data)
        room = self.cap - len(self.head)
        if room > 0:
            self.head += data[:room]

    def text(self):
        return self.head.decode("utf-8", "replace")


class RecordReader:
    """The first record in what a record pipe carries: a frame of (status, detail,
    result), after the run's token where a candidate writes it (in-process mode), or
    from the start on the judge's own pipe, which no candidate holds."""

    def __init__(self, token):
        self.token = token
        self.buffer = b""
        self.record = None
        # A record too long to read: the rest of it is still in the pipe.
        self.oversize = False

    def feed(self, data):
        if self.record is not None:
            return
        self.buffer += data
        at = self.buffer.find(self.token)
        if at < 0:
            # Only a tail shorter than the token can still begin a match.
            self.buffer = self.buffer[len(self.buffer) - len(self.token) + 1:]
            return
        self.buffer = self.buffer[at:]
        frame = self.buffer[len(self.token):]
        if len(frame) < 4:
            return
        size = int.from_bytes(frame[:4], "big")
        if size > RECORD_CAP:
            self.record = ("error", "verdict record too long", "failed: ")
            self.oversize = True
        elif len(frame) >= 4 + size:
            self.record = self._read(frame[4:4 + size])

    @staticmethod
    def _read(payload):
        try:
            record = wire.decode(payload)
        except wire.Malformed:
            record = None
        if (type(record) is not tuple or len(record) not in (3, 4)
                or any(type(field) is not str for field in record[:3])
                or (len(record) == 4 and type(record[3]) is not dict)):
            return ("error", "unreadable verdict record", "failed: ")
        return record


class Child:
    """A process forked for the sample, watched through a pidfd."""

    def __init__(self, pid):
        self.pid = pid
        self.pidfd = os.pidfd_open(pid)
        self.status = None
        self.usage = None
        # Whether it ended before the driver killed it.
        self.ended_alone = False

    def reap(self):
        if self.status is None:
            _, self.status, self.usage = os.wait4(self.pid, 0)

    def settle(self, seconds):
        """Reaps it if it ends within `seconds`, on its own."""
        if self.status is None and select.select([self.pidfd], [], [], seconds)[0]:
            self.reap()
            self.ended_alone = True


class Processes:
    """What runs for one sample: the candidate, the judge that decides it (in judge mode),
    and the pipes the driver reads."""

    def __init__(self, candidate_child, out_r, err_r, record_fd, token, cap, judge=None):
        self.candidate = candidate_child
        self.judge = judge
        self.judge_status = None
        self.streams = {out_r: Capture(cap), err_r: Capture(cap)}
        self.record_fd = record_fd
        self.reader = RecordReader(token)

    def route(self, fd, data):
        if fd == self.record_fd:
            self.reader.feed(data)
        else:
            self.streams[fd].feed(data)

    def decided(self):
        """Whether the verdict can be told from what has come in."""
        record = self.reader.record
        if self.judge is None:
            return record is not None or self.candidate.status is not None
        if record is not None:
            # A candidate that hung up is judged by how it ended, once it has.
            return record[0] != judge.GONE or self.candidate.status is not None
        return self.judge_status is not None

    def drain(self):
        """Reads what is still waiting in the pipes (made non-blocking)."""
        fds = list(self.streams)
        if self.judge is None or self.judge_status is None:
            fds.append(self.record_fd)
        for fd in fds:
            os.set_blocking(fd, False)
            while True:
                try:
                    data = os.read(fd, READ_CHUNK)
                except BlockingIOError:
                    break
                if not data:
                    break
                self.route(fd, data)
            if fd == self.record_fd and self.judge is not None:
                os.set_blocking(fd, True)

    def release_judge(self):
        """Kills a judge that did not finish the sample, or whose record was too long to
        read, so that no later sample reads the rest of it; the next sample starts
        another."""
        unfinished = self.reader.record is None or self.reader.oversize
        if self.judge is not None and unfinished and self.judge_status is None:
            self.judge.stop()

    def finish(self):
        """Closes the pipes once the candidate is reaped."""
        os.close(self.candidate.pidfd)
        for fd in self.streams:
            os.close(fd)
        if self.judge is None:
            os.close(self.record_fd)


def _fork_candidate(request, context, scratch, descriptors, run):
    """Forks a candidate's process, which confines itself to `descriptors` and runs
    `run(code)` on the sample's code, which never returns; returns its pid."""
    pid = forking.fork_alone(context)
    if pid == 0:
        try:
            candidate.confine_candidate(request, context, scratch, descriptors)
            code = candidate.read_source()
            del request
        except BaseException:
            os._exit(candidate.EXIT_SETUP_FAILED)
        try:
            run(code)
        finally:
            os._exit(candidate.EXIT_SETUP_FAILED)
    return pid


def _start_in_process(request, context, scratch, cap):
    token = os.urandom(16).hex().encode() + b" "
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    record_r, record_w = os.pipe()
    pid = _fork_candidate(request, context, scratch, {1: out_w, 2: err_w, 3: record_w},
                          lambda program: candidate.run_in_process(program, token))
    for fd in (out_w, err_w, record_w):
        os.close(fd)
    return Processes(Child(pid), out_r, err_r, record_r, token, cap)


def _serve(source, entry_point):
    """The judged candidate's run: answers the judge's calls, then ends (0 once the judge
    hung up, 1 if serving failed). Never returns."""
    try:
        channel = wire.Channel(candidate.CHANNEL_IN, candidate.CHANNEL_OUT, large_heads=candidate.JUDGES_HEADS)
        candidate.serve(source, entry_point, channel)
    except BaseException:
        os._exit(1)
    os._exit(0)


def _start_judged(request, context, scratch, cap, problem, entry_point, build_rule=None, artifact=None):
    """A candidate process that answers calls of `entry_point`, and the judge's run of
    `problem` (see JudgeProcess.ask) against it; in another language than Python, the
    candidate's process runs that language's serving program (`build_rule`), or the
    program built from its code with the serving code (`artifact`)."""
    judge_process = context.judge
    judge_process.ensure(context, request)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    to_candidate_r, to_candidate_w = os.pipe()
    to_judge_r, to_judge_w = os.pipe()
    _widen(to_judge_w)
    judge_process.ask(problem, (to_judge_r, to_candidate_w))
    os.close(to_judge_r)
    os.close(to_candidate_w)
    channel_ends = {candidate.CHANNEL_IN: to_candidate_r, candidate.CHANNEL_OUT: to_judge_w}
    if build_rule is None:
        def serve(source):
            _serve(source, entry_point)
    elif artifact is not None:
        channel_ends[programs.ARTIFACT_FD] = artifact

        def serve(source):
            programs.serve_built(build_rule, source, entry_point)
    else:
        def serve(source):
            programs.serve(build_rule, source, entry_point)
    candidate_pid = _fork_candidate(request, context, scratch, {1: out_w, 2: err_w, **channel_ends}, serve)
    for fd in (out_w, err_w, to_candidate_r, to_judge_w):
        os.close(fd)
    return Processes(Child(candidate_pid), out_r, err_r, judge_process.control.fileno(), b"", cap, judge_process)


def _widen(pipe):
    """Lets `pipe` hold a part of a streamed answer whole (wire.STREAM_PART), where the
    host allows: through the default 64 KiB, an answer of a gigabyte (Mbpp/255's) wakes
    its reader, and switches the two processes, sixteen times per part."""
    try:
        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, wire.STREAM_PART)
    except OSError:
        pass


def _start_script(request, context, scratch, cap, stdin, exit_compared, does_not_compile):
    """A candidate process that runs the program as `__main__` on `stdin` (see
    candidate.run_script; `exit_compared` and `does_not_compile` as there). It writes no
    record: how it ended and what it printed are all there is."""
    return _start_run(request, context, scratch, cap, stdin, {},
                      lambda program: candidate.run_script(program, exit_compared, does_not_compile))


def _start_program(request, context, scratch, cap, stdin, build_rule, artifact):
    """A candidate process that runs a program in another language on `stdin`, from
    its build's artifact (see programs.run)."""
    return _start_run(request, context, scratch, cap, stdin, {programs.ARTIFACT_FD: artifact},
                      lambda source: programs.run(build_rule, source))


def _start_run(request, context, scratch, cap, stdin, descriptors, run):
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    # Never written: the run is decided by the program's ending.
    record_r, record_w = os.pipe()
    os.close(record_w)
    stdin_fd = programs.memory_file("stdin", stdin)
    pid = _fork_candidate(request, context, scratch, {0: stdin_fd, 1: out_w, 2: err_w, **descriptors}, run)
    for fd in (out_w, err_w, stdin_fd):
        os.close(fd)
    return Processes(Child(pid), out_r, err_r, record_r, b"\0", cap)


def _start_build(request, context, scratch, cap, build_rule, artifact, serving, line, serving_object):
    """The build's process (see programs.build): no input, its compiler's diagnostics
    on standard error; `serving` is the entry point a function completion's program
    serves (see programs.build), `line` the slot's resident compiler's, if it asks one,
    and `serving_object` the memory file of the problem's serving object, if its
    serving code is compiled apart."""
    descriptors = {programs.ARTIFACT_FD: artifact}
    if line is not None:
        descriptors[resident.COMPILER_FD] = line
    if serving_object is not None:
        descriptors[programs.SERVING_OBJECT_FD] = serving_object
    return _start_run(request, context, scratch, cap, b"", descriptors,
                      lambda source: programs.build(build_rule, source, serving))


def _build(request, context, cap, build_rule, artifact, serving=None, serving_object=None):
    """The build's run (None if the harness went away), by the slot's resident compiler
    where it keeps one: a build that did not come back stops that compiler, and one the
    compiler ended or hung up on is run again with the compiler executed afresh (see
    resident.py)."""
    limit = float(build_rule["compile_timeout"])
    compilers = context.compilers
    line = compilers.line(context, request, build_rule, resident.CANDIDATES)
    execution = _execute(request, context, limit, lambda scratch: _start_build(
        request, context, scratch, cap, build_rule, artifact, serving, line, serving_object))
    if line is None or execution.fields is None:
        return execution
    ended = execution.status
    exited = os.WEXITSTATUS(ended) if os.WIFEXITED(ended) else None
    if exited == programs.EXIT_COMPILER_LOST:
        compilers.lost(build_rule, resident.CANDIDATES)
        return _execute(request, context, limit, lambda scratch: _start_build(
            request, context, scratch, cap, build_rule, artifact, serving, None, serving_object))
    if exited not in (0, programs.EXIT_COMPILE_FAILED) or execution.fields[0] in ("timeout", "out-of-memory"):
        compilers.stop(build_rule, resident.CANDIDATES)
    else:
        compilers.retire_if_holding(build_rule, resident.CANDIDATES, request)
    return execution


class _Poller:
    """A poll set whose descriptors may be let go of more than once: a pipe's end and
    the death of the process that held it come in either order."""

    def __init__(self):
        self.poller = select.poll()
        self.registered = set()

    def register(self, fd):
        self.poller.register(fd, select.POLLIN)
        self.registered.add(fd)

    def unregister(self, fd):
        if fd in self.registered:
            self.registered.discard(fd)
            self.poller.unregister(fd)

    def poll(self, milliseconds):
        return self.poller.poll(milliseconds)


class Watch:
    """Waits for the verdict, the deadline, or the harness's going away."""

    def __init__(self, processes, harness_fd, deadline):
        self.processes = processes
        self.harness_fd = harness_fd
        self.deadline = deadline
        self.timed_out = False
        self.harness_gone = False

    def run(self):
        processes = self.processes
        candidate_pidfd = processes.candidate.pidfd
        judge_pidfd = processes.judge.pidfd if processes.judge is not None else None
        poller = _Poller()
        for fd in (*processes.streams, processes.record_fd, candidate_pidfd, self.harness_fd):
            poller.register(fd)
        if judge_pidfd is not None:
            poller.register(judge_pidfd)
        while not processes.decided():
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.timed_out = True
                return
            for fd, _ in poller.poll(remaining * 1000):
                if fd == candidate_pidfd:
                    processes.candidate.reap()
                    processes.candidate.ended_alone = True
                    poller.unregister(fd)
                elif fd == judge_pidfd:
                    poller.unregister(processes.record_fd)
                    processes.drain()
                    processes.judge_status = processes.judge.ended()
                    poller.unregister(fd)
                elif fd == self.harness_fd:
                    self.harness_gone = True
                else:
                    data = os.read(fd, READ_CHUNK)
                    if data:
                        processes.route(fd, data)
                    else:
                        poller.unregister(fd)
            if self.harness_gone:
                return


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _ended(status):
    if os.WIFSIGNALED(status):
        return f"killed by {_signal_name(os.WTERMSIG(status))}"
    return f"exited with status {os.WEXITSTATUS(status)}"


def _candidate_ending(request, child):
    """The verdict for a candidate that ended before its tests did."""
    status = child.status
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        name = _signal_name(number)
        cpu_limit = request.get("cpu_seconds")
        if number in LIMIT_SIGNALS:
            return "limit", f"{LIMIT_SIGNALS[number]} (killed by {name})", f"failed: killed by {name}"
        if number == signal.SIGKILL and cpu_limit and child.usage.ru_utime + child.usage.ru_stime >= cpu_limit:
            return "limit", f"CPU time limit (killed by {name})", f"failed: killed by {name}"
        return "killed", f"killed by {name}", f"failed: killed by {name}"
    code = os.WEXITSTATUS(status)
    detail = f"exited with status {code} before its tests finished"
    if code == candidate.EXIT_SETUP_FAILED:
        detail = "the candidate's process could not be set up"
    return "error", detail, f"failed: {detail}"


def _says_gone(record):
    """Whether a judging program's record says the candidate's process hung up on it."""
    return record is not None and len(record) > 1 and str(record[1]).startswith(CANDIDATE_GONE)


def _verdict(request, processes, watch, seen, timeout):
    """The sample's verdict. That it ran out of memory or processes is told from what the
    kernel saw, never from what the candidate said: it can raise MemoryError or an
    OSError of any errno by hand."""
    fields = _ending(request, processes, watch, timeout)
    if fields[0] == "passed":
        return fields
    if seen.out_of_memory:
        # The kernel killed a process of the sample for want of memory: that is why it
        # did not pass, whatever it did next (failed a test without its child, hung).
        limit = request.get("memory_bytes")
        limit = f" of {limit >> 20} MiB" if limit else ""
        detail = f"the sample's memory reached its limit{limit}, and the kernel killed one of its processes"
        return ("out-of-memory", f"{detail} ({fields[1]})", "failed: out of memory", *fields[3:])
    if seen.process_limit:
        limit = request.get("processes")
        limit = f" of {limit}" if limit else ""
        detail = f"process limit: the kernel refused the sample a process at its limit{limit}"
        return ("limit", f"{detail} ({fields[1]})", "failed: process limit", *fields[3:])
    return fields


def _ending(request, processes, watch, timeout):
    # Undecided at the deadline is a timeout, whatever came in after: killing the
    # candidate then ends its tests too, and a judge that saw its process end may still
    # have said so before the pipes were last read.
    if watch.timed_out:
        return "timeout", f"still running after {timeout:g} s", "timed out"
    record = processes.reader.record
    if record is not None and processes.judge is None and record[0] not in CANDIDATE_STATUSES:
        record = ("failed", *record[1:])
    if record is not None and record[0] == "failed" and _says_gone(record) and processes.candidate.ended_alone:
        status = processes.candidate.status
        if os.WIFSIGNALED(status):
            return (*_candidate_ending(request, processes.candidate), *record[3:])
        return (record[0], f"{record[1]} ({_ended(status)})", *record[2:])
    if record is not None and record[0] != judge.GONE:
        return record
    if processes.judge_status is not None and record is None:
        detail = f"the judge ended without a verdict ({_ended(processes.judge_status)})"
        return "error", detail, f"failed: {detail}"
    # What the judge counted before the candidate hung up stays with the verdict.
    return (*_candidate_ending(request, processes.candidate), *(record[3:] if record is not None else ()))


class Execution:
    """One candidate process's run, from fork to clean-up."""

    def __init__(self, fields, duration, out, err, peak, cpu, status):
        # None if the harness went away.
        self.fields = fields
        self.duration = duration
        self.out, self.err = out, err
        self.peak, self.cpu = peak, cpu
        # The candidate's wait status.
        self.status = status


def _execute(request, context, timeout, start, decided=None, written=None):
    """Runs one candidate process, started by `start(scratch)`, under `timeout`; kills
    what is left of it and clears up after it. `decided(execution)` is called as soon as
    the run is decided, before the clean-up, so that a verdict sent from it reaches the
    harness while the driver clears up. `written` names a file the candidate's process
    writes in its working directory, removed first: a directory left empty is cheaper to
    clear than one with anything in it."""
    scratch = os.path.join(context.scratch_root, "work")
    started = time.monotonic()
    os.mkdir(scratch, 0o700)
    if context.candidate_user is not None:
        os.chown(scratch, context.candidate_user, context.candidate_user)
    # Everything the driver holds is left out of the children's collections, which
    # would otherwise write to, and so copy, every page of it.
    gc.freeze()
    processes = start(scratch)
    watch = Watch(processes, context.harness_fd, started + timeout)
    watch.run()
    duration = time.monotonic() - started
    if _says_gone(processes.reader.record):
        processes.candidate.settle(GONE_SETTLING)
    # The verdict is decided; nothing the candidate left behind may change it. The
    # candidate is reaped before the driver does anything more: until then it shares
    # every page of the driver's, and each page the driver writes would be copied. It is
    # killed by its pidfd too: one that has not yet made its own session leads no group.
    cleanup.kill_group(processes.candidate.pid)
    try:
        signal.pidfd_send_signal(processes.candidate.pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass
    processes.candidate.reap()
    processes.drain()
    group = context.sample_group
    seen = group.figures() if group is not None else cgroup.UNSEEN
    fields = None
    if not watch.harness_gone:
        fields = _verdict(request, processes, watch, seen, timeout)
    # Before the verdict goes out, which says whether the judge was lost.
    processes.release_judge()
    out, err = processes.streams.values()
    execution = Execution(fields, duration, out, err, seen.peak, seen.cpu, processes.candidate.status)
    if decided is not None and fields is not None:
        decided(execution)
    processes.finish()
    cleanup.kill_strays(context.judge.pid, context.own_children, context.compilers.pids())
    if group is not None:
        group.empty(spared=context.judge.pid)
    if written is not None:
        # Through the directory itself, never a link the candidate put in its place.
        try:
            directory = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            directory = None
        if directory is not None:
            try:
                os.unlink(written, dir_fd=directory)
            except OSError:
                pass
            os.close(directory)
    fresh_mounts = context.fresh_mounts
    if fresh_mounts is not None and fresh_mounts.holds(context.scratch_root):
        # Most samples leave only their empty working directory, which is cheaper to
        # remove than a mount is to replace.
        try:
            os.rmdir(scratch)
        except OSError:
            pass
    else:
        cleanup.clear_scratch(scratch)
    if fresh_mounts is not None:
        fresh_mounts.renew()
    if context.socket_counts is not None and context.socket_counts.used():
        # A new network namespace for the next sample, where this one left sockets
        # (TIME_WAIT entries outlive their processes, with ports and addresses of their
        # choosing, for a later sample to read).
        confine.unshare(confine.CLONE_NEWNET)
        confine.loopback_up()
        context.socket_counts.reopen()
    if context.ipc_namespace_per_sample:
        # The next run's IPC namespace, made after this one's verdict is in: what it
        # left in its own (SysV shared memory, queues, semaphores, POSIX queues) goes
        # with the last of its processes, and no later run can reach it.
        cleanup.remove_shared_memory()
        confine.unshare(confine.CLONE_NEWIPC)
    if group is not None:
        group.settle()
    return execution


def run(request, context, send):
    """Runs one sample and sends its verdict with `send`; returns False if the harness
    went away instead."""
    def send_verdict(message):
        # Between samples, never between a sample's phases: the harness learns of a
        # judge lost only with a verdict, and until then believes it holds its suites.
        context.judge.retire_if_holding(request)
        # A judge lost in this sample held suites the harness must send again.
        message["judge_lost"] = context.judge.taken_loss()
        send(message)

    cap = int(request.get("output_cap", 65536))
    # The sample's code, unread: only the sample's own processes read it (see sources.py).
    context.source_fd = context.sources.take(request["seq"])
    try:
        return _run(request, context, cap, send_verdict)
    finally:
        os.close(context.source_fd)
        context.source_fd = None


def _run(request, context, cap, send_verdict):
    if "stdio" in request:
        message = _run_stdio(request, context, cap)
    elif "calls" in request:
        message = _run_calls(request, context, cap)
    else:
        if request.get("in_process"):
            def start(scratch):
                return _start_in_process(request, context, scratch, cap)
        else:
            # The test code went to the judge alone; this driver holds its entry point.
            suite_id, suite = context.suites.get(request["tests"])
            build_rule = request.get("build")
            if build_rule is None:
                problem = ("tests", request["seq"], suite_id)
            else:
                # Tests in another language, which the judge runs with that language's
                # judging program (see programs.py).
                problem = ("program", request["seq"], suite_id, build_rule)
                if build_rule.get("assembly"):
                    message = _run_built_function(request, context, cap, suite, problem)
                    if message is None:
                        return False
                    send_verdict(message)
                    return True

            def start(scratch):
                return _start_judged(request, context, scratch, cap, problem, suite["entry_point"], build_rule)

        def decided(execution):
            send_verdict(_message(request, execution.fields, execution))
        execution = _execute(request, context, float(request["timeout"]), start, decided)
        return execution.fields is not None
    if message is None:
        return False
    send_verdict(message)
    return True


def _run_built_function(request, context, cap, suite, problem):
    """A function completion in a compiled language: the candidate's code is built with
    the language's serving code after it, once, and its program answers the calls of
    the tests' program, which the judge builds once per problem (see programs.py)."""
    build_rule = problem[3]
    artifact = programs.artifact_file()
    try:
        limit = float(build_rule["compile_timeout"])
        entry_point = suite["entry_point"]
        serving = (entry_point, suite.get("declaration", ""), suite.get("prompt_helpers", ""))
        serving_object = context.serving_objects.lend(problem[2]) if build_rule.get("object_compile") else None
        try:
            execution = _build(request, context, cap, build_rule, artifact, serving, serving_object)
        finally:
            if serving_object is not None:
                context.serving_objects.give_back(problem[2], serving_object)
        if execution.fields is None:
            return None
        failure = _build_failure(execution, limit)
        if failure is not None:
            message = _message(request, failure[0], execution)
            message["failure"] = _capped(failure[1])
            return message
        programs.seal(artifact)
        # The tests' program is built before the candidate's time starts.
        context.judge.build_tests(context, request, problem, limit)
        served = _execute(request, context, float(request["timeout"]), lambda scratch: _start_judged(
            request, context, scratch, cap, problem, entry_point, build_rule, artifact))
        if served.fields is None:
            return None
        return _message(request, served.fields, _combined([served, execution]))
    finally:
        os.close(artifact)


def _run_stdio(request, context, cap):
    """A standard-input problem: one run of the program per test, its output compared by
    the judge (see stdio.py); a program in another language is built first, once for
    all its tests (see programs.py)."""
    suite_id, suite = context.suites.get(request["stdio"])
    build_rule = request.get("build")
    as_is = _AsIs(suite, context) if suite.get("plain") else None
    if build_rule is None:
        exit_compared = bool(suite.get("exit_compared"))
        # A program run as it is ends with Python's own status when it does not compile.
        does_not_compile = 1 if as_is is not None else candidate.EXIT_DOES_NOT_COMPILE

        def execute(stdin, timeout, output_cap):
            def start(scratch):
                if as_is is not None:
                    as_is.put(scratch)
                return _start_script(request, context, scratch, max(cap, output_cap), stdin, exit_compared,
                                     does_not_compile)
            return _execute(request, context, timeout, start, written=candidate.PROGRAM_FILE,
                            decided=as_is and as_is.fetch)
        if as_is is not None:
            return as_is.message(request, execute, [])
        return _test_stdio(request, context, cap, suite_id, suite, execute, [])
    artifact = programs.artifact_file()
    try:
        built = []
        if build_rule["compile"]:
            limit = float(build_rule["compile_timeout"])
            execution = _build(request, context, cap, build_rule, artifact)
            if execution.fields is None:
                return None
            failure = _build_failure(execution, limit)
            if failure is not None:
                message = _message(request, failure[0], execution)
                message["tests"] = {"passed": 0, "run": 0, "total": len(suite["tests"])}
                message["failure"] = _capped(failure[1])
                if as_is is not None:
                    message["runs"] = [plain.program_run("compile", execution)]
                return message
            programs.seal(artifact)
            built.append(execution)
        written = build_rule["source"] if build_rule["artifact"]["kind"] == "source" else None

        def execute(stdin, timeout, output_cap):
            def start(scratch):
                if as_is is not None:
                    as_is.put(scratch)
                return _start_program(request, context, scratch, max(cap, output_cap), stdin, build_rule, artifact)
            return _execute(request, context, timeout, start, written=written, decided=as_is and as_is.fetch)
        if as_is is not None:
            return as_is.message(request, execute, built)
        return _test_stdio(request, context, cap, suite_id, suite, execute, built, python=False)
    finally:
        os.close(artifact)


class _AsIs:
    """A program run as it is (see plain.py): its files put in place before it starts,
    those asked for read back once it has ended and before its directory is cleared."""

    def __init__(self, suite, context):
        self.suite = suite
        self.owner = context.candidate_user
        self.fetched = {}

    def put(self, scratch):
        plain.put_files(scratch, self.suite.get("files"), self.owner)
        self.scratch = scratch

    def fetch(self, execution):
        self.fetched = plain.fetch_files(self.scratch, self.suite.get("fetch"))

    def message(self, request, execute, built):
        """Runs the program once and says how it went, its build's run first."""
        test = self.suite["tests"][0]
        execution = execute(test["input"].encode("utf-8", "surrogateescape"), float(request["timeout"]),
                            self.suite["output_cap"])
        if execution.fields is None:
            return None
        runs = [plain.program_run("compile", build) for build in built] + [plain.program_run("run", execution)]
        message = _message(request, plain.verdict_fields(runs[-1]), _combined([execution] + built))
        # The whole output is in the runs: the verdict's own fields keep the usual cap.
        cap = int(request.get("output_cap", 65536))
        message["stdout"], message["stderr"] = message["stdout"][:cap], message["stderr"][:cap]
        message["runs"] = runs
        message["files"] = self.fetched
        return message


def _build_failure(execution, limit):
    """Why a build did not leave a program to run, as (fields, failure); None if it did.
    Its compiler's own words say why it failed: the first line that names an error, and
    what it printed as the failure's `output`."""
    status = execution.fields[0]
    if status == "timeout":
        why = f"the build was still running after {limit:g} s"
        return (("compile-timeout", why, "failed: compile timeout"),
                {"outcome": "compile timeout", "why": why, "output": execution.err.text()})
    ended = execution.status
    if status != "out-of-memory" and os.WIFEXITED(ended) and os.WEXITSTATUS(ended) == 0:
        return None
    if status == "out-of-memory":
        why = f"the build ran out of memory: {execution.fields[1]}"
    elif os.WIFEXITED(ended) and os.WEXITSTATUS(ended) == programs.EXIT_COMPILE_FAILED:
        # Not go's `# package` before its diagnostics.
        lines = [line.strip() for line in execution.err.text().splitlines()
                 if line.strip() and not line.startswith("# ")]
        named = [line for line in lines if "error" in line.lower()]
        why = "does not compile" + (f": {(named or lines)[0]}" if lines else "")
    elif os.WIFEXITED(ended) and os.WEXITSTATUS(ended) == programs.EXIT_NO_COMPILER:
        why = "the compiler could not be started in the sandbox"
    else:
        why = f"the build ended before it was done ({execution.fields[1]})"
    return (("compile-error", why, "failed: compile error"),
            {"outcome": "compile error", "why": why, "output": execution.err.text()})


def _test_stdio(request, context, cap, suite_id, suite, execute, built, python=True):
    """Runs the program on each test with `execute`, the judge comparing what it
    printed; `built` holds the build's run, if there was one."""
    seq = request["seq"]

    def judged(index, got, first):
        problem = ("compare", seq, suite_id, index, got, first)
        try:
            return context.judge.compare(context, request, problem, time.monotonic() + COMPARE_LIMIT)
        except JudgeLost as lost:
            return "error", str(lost), "failed: the output could not be compared"

    tested = stdio.run(suite, float(request["timeout"]), execute, judged, python)
    if tested is None:
        return None
    message = _message(request, tested.fields, _combined(tested.executions + built))
    message["tests"] = tested.counts
    if tested.failure is not None:
        message["failure"] = _capped(tested.failure)
    return message


def _run_calls(request, context, cap):
    """A suite of calls: one candidate process per phase, each judged by the judge's
    process; a failed phase ends the sample unless every input is to be run."""
    suite_id, suite = context.suites.get(request["calls"])
    if suite.get("unjudgeable"):
        return {**_message(request, ("unjudgeable", suite["unjudgeable"], "failed: cannot be judged"),
                           Execution(None, 0.0, Capture(0), Capture(0), None, None, None)), "phases": []}
    seq = request["seq"]
    phases = []
    executions = []
    verdict = None
    for index, phase in enumerate(suite["phases"]):
        prepared = time.monotonic() + PREPARE_LIMIT
        context.judge.prepare(context, request, ("calls", seq, suite_id, index, None), prepared)
        execution = _execute_phase(request, context, cap, suite, phase, ("calls", seq, suite_id, index, None))
        if execution is not None and execution.fields[0] == judge.RERUN:
            # Its answers' times could not be told apart from the calls sent ahead: the
            # verdict of a run that sends none stands, and of the first run only the
            # inputs it found wrong count (see calls.judge_phase).
            ahead_run = execution.fields[3]["ahead_run"]
            execution = _execute_phase(request, context, cap, suite, phase, ("calls", seq, suite_id, index, ahead_run))
        if execution is None:
            return None
        executions.append(execution)
        fields = execution.fields
        extra = fields[3] if len(fields) > 3 else {"phase": phase["name"], "passed": 0, "run": 0,
                                                   "total": phase.get("count", 0)}
        extra["status"] = fields[0]
        phases.append(extra)
        if verdict is None and fields[0] != "passed":
            verdict = fields
            # A judge lost in this phase took the sample's suite with it (the harness
            # sends it once per sample): the phases after it cannot be judged.
            if not suite.get("all") or context.judge.pid is None:
                break
    message = _message(request, (verdict or executions[-1].fields)[:3], _combined(executions))
    message["phases"] = [_plain_phase(extra) for extra in phases]
    # Every input of every phase is a test, run or not.
    message["tests"] = {"passed": sum(extra["passed"] for extra in phases), "run": sum(extra["run"] for extra in phases),
                        "total": sum(phase.get("count", 0) for phase in suite["phases"])}
    return message


def _execute_phase(request, context, cap, suite, phase, problem):
    """One phase's candidate process, judged by the judge's run of `problem`; None if the
    harness went away."""
    def start(scratch):
        return _start_judged(request, context, scratch, cap, problem, suite["entry_point"])
    execution = _execute(request, context, float(phase["timeout"]), start)
    return execution if execution.fields is not None else None


def _combined(executions):
    """One sample's figures over its runs: their time and CPU added, the most memory any
    held, and the first run's output."""
    peaks = [execution.peak for execution in executions if execution.peak is not None]
    cpus = [execution.cpu for execution in executions if execution.cpu is not None]
    first = executions[0]
    return Execution(None, sum(execution.duration for execution in executions), first.out, first.err,
                     max(peaks) if peaks else None, sum(cpus) if cpus else None, None)


def _plain_phase(extra):
    """A phase's counts as JSON."""
    phase = dict(extra)
    if "failure" in phase:
        phase["failure"] = _capped(phase["failure"])
    return phase


def _capped(failure):
    """A failure's fields, each string cut short: any of them may hold what the candidate
    wrote (its exception, the last line of its standard error)."""
    return {key: wire.shorten(value, judge.DETAIL_CAP) if type(value) is str else value
            for key, value in failure.items()}


def _message(request, fields, execution):
    status, detail, result = fields[:3]
    message = {
        "memory_peak_bytes": execution.peak,
        "cpu_seconds": execution.cpu,
        "status": status,
        "detail": wire.shorten(detail, judge.DETAIL_CAP),
        "result": wire.shorten(result, judge.RESULT_CAP),
        "id": request.get("id"),
        "duration": round(execution.duration, 6),
        "stdout": execution.out.text(),
        "stdout_bytes": execution.out.total,
        "stderr": execution.err.text(),
        "stderr_bytes": execution.err.total,
    }
    if len(fields) > 3:
        message["phases"] = [_plain_phase(fields[3])]
    return message
