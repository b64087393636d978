"""passk's interpreter-side driver: runs candidates for one worker slot.

The harness starts one driver per worker slot and keeps it warm. For every candidate the
driver forks a fresh child, so each candidate runs in a new process with nothing left over
from the one before, while the interpreter's start-up is paid once per slot.

Protocol (one JSON object per line): the harness writes requests on the driver's stdin
and reads responses on its stdout. The first line the driver writes is a `ready` line.

Why a candidate cannot fake a pass: the child writes its verdict on a pipe of its own,
prefixed with a random token drawn by the driver for that one run. The token exists only in
the memory of the driver and of the child; it is never in the environment, the command
line or a file, and the output streams, the exit status and everything else the candidate
can write count for nothing. A candidate that exits early (sys.exit, os._exit, exit(), an
atexit hook) never reaches the line that writes the token, so it fails.

Why no process outlives its candidate: the child starts a new session, so its process
group is its own; the driver is a child subreaper, so descendants that double-fork or
call setsid are re-parented to the driver rather than escaping to init. After every
verdict the driver kills the group and then every process still below it.
"""

import ctypes
import errno
import json
import os
import resource
import select
import signal
import struct
import sys
import time

# --- signal and tracing filter ---------------------------------------------------------
#
# A candidate may signal only itself and its own process group: it cannot kill the
# driver, the harness, or `kill(-1)` everything the user owns. It cannot trace or read
# the memory of another process. Denied calls fail with EPERM, as a permission error
# would, rather than killing the candidate.

SYSCALLS = {
    # machine: (audit arch, {name: number})
    "x86_64": (0xC000003E, {
        "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
        "rt_tgsigqueueinfo": 297, "pidfd_send_signal": 424, "ptrace": 101,
        "process_vm_readv": 310, "process_vm_writev": 311,
    }),
    "aarch64": (0xC00000B7, {
        "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
        "rt_tgsigqueueinfo": 240, "pidfd_send_signal": 424, "ptrace": 117,
        "process_vm_readv": 270, "process_vm_writev": 271,
    }),
}
# Calls whose first argument names the target process, allowed only when it is the
# candidate itself (or, for kill, its own group or 0).
SIGNAL_SELF_ONLY = ("kill", "rt_sigqueueinfo", "tgkill", "rt_tgsigqueueinfo", "tkill")
ALWAYS_DENIED = ("pidfd_send_signal", "ptrace", "process_vm_readv", "process_vm_writev")

_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JSET_K = 0x45
_BPF_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1
_X32_SYSCALL_BIT = 0x40000000
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_SECCOMP = 22
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2


def _insn(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k & 0xFFFFFFFF)


# Stands for the candidate's pid until a child writes its own in (see SignalFilter).
_PID_PLACEHOLDER = 0x7FFF_FFF0


def signal_filter(own_pid):
    """The BPF program that confines signals and tracing to the candidate itself."""
    arch, numbers = SYSCALLS[os.uname().machine]
    prog = [
        _insn(_BPF_LD_W_ABS, 0, 0, 4),             # seccomp_data.arch
        _insn(_BPF_JEQ_K, 1, 0, arch),
        _insn(_BPF_RET_K, 0, 0, _RET_EPERM),       # a foreign ABI (i386 via int 0x80)
        _insn(_BPF_LD_W_ABS, 0, 0, 0),             # seccomp_data.nr
        _insn(_BPF_JSET_K, 0, 1, _X32_SYSCALL_BIT),
        _insn(_BPF_RET_K, 0, 0, _RET_EPERM),       # the x32 ABI
    ]
    for name in ALWAYS_DENIED:
        prog += [_insn(_BPF_JEQ_K, 0, 1, numbers[name]), _insn(_BPF_RET_K, 0, 0, _RET_EPERM)]
    for name in SIGNAL_SELF_ONLY:
        targets = [own_pid, 0, -own_pid] if name in ("kill", "rt_sigqueueinfo") else [own_pid]
        # if nr == name: load arg0 (low word) and compare it with each allowed target
        body = [_insn(_BPF_LD_W_ABS, 0, 0, 16)]
        for i, target in enumerate(targets):
            remaining = len(targets) - i - 1
            body.append(_insn(_BPF_JEQ_K, remaining + 1, 0, target))
        body.append(_insn(_BPF_RET_K, 0, 0, _RET_EPERM))
        body.append(_insn(_BPF_RET_K, 0, 0, _RET_ALLOW))
        prog.append(_insn(_BPF_JEQ_K, 0, len(body), numbers[name]))
        prog += body
    prog.append(_insn(_BPF_RET_K, 0, 0, _RET_ALLOW))
    return b"".join(prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def _prctl(option, arg2=0, arg3=0):
    if _libc.prctl(option, arg2, arg3, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class SignalFilter:
    """The filter, built once in the driver; each child writes its own pid in and
    installs it. Building it afresh in every child would cost more than the rest of
    the child's set-up together, since every page Python touches there is copied."""

    def __init__(self):
        program = signal_filter(_PID_PLACEHOLDER)
        self.buffer = ctypes.create_string_buffer(program, len(program))
        self.fprog = _SockFprog(len(program) // 8, ctypes.cast(self.buffer, ctypes.c_void_p))
        self.address = ctypes.addressof(self.fprog)
        # Each instruction is 8 bytes, with its constant in the last 4.
        constants = [struct.unpack_from("I", program, at + 4)[0] for at in range(0, len(program), 8)]
        self.own = [at * 8 + 4 for at, k in enumerate(constants) if k == _PID_PLACEHOLDER]
        self.negated = [at * 8 + 4 for at, k in enumerate(constants) if k == (-_PID_PLACEHOLDER) & 0xFFFFFFFF]

    def install(self, own_pid):
        """Confines this process; the caller must already have no_new_privs."""
        for at in self.own:
            struct.pack_into("I", self.buffer, at, own_pid)
        for at in self.negated:
            struct.pack_into("I", self.buffer, at, (-own_pid) & 0xFFFFFFFF)
        _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, self.address)


def probe_signal_filter(signal_filter):
    """Whether the filter installs and holds here: tried once, in a throwaway child."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal_filter.install(os.getpid())
            try:
                os.kill(os.getppid(), 0)
            except PermissionError:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


# --- running one candidate ----------------------------------------------------------------

RESULT_FD = 3
# Errors that mean the candidate ran into one of its limits.
LIMIT_ERRORS = {
    errno.EFBIG: "file size limit",
    errno.EMFILE: "open files limit",
    errno.EAGAIN: "process limit",
}
# Signals that the kernel sends when a limit is exceeded.
LIMIT_SIGNALS = {signal.SIGXCPU: "CPU time limit", signal.SIGXFSZ: "file size limit"}
READ_CHUNK = 65536
RECORD_CAP = 65536
EXIT_SETUP_FAILED = 120


def _describe(exc):
    try:
        text = str(exc)
    except BaseException:
        text = "<unprintable>"
    return type(exc).__name__, text


def _child(request, scratch, pipes, token, signal_filter, driver):
    """Runs in the forked child; never returns. Every step here costs more than it
    would in the driver, since each page it touches is copied: what can be done once
    is done in the driver."""
    _write, _exit = os.write, os._exit
    out_w, err_w, res_w = pipes
    try:
        os.setsid()
        if driver != 1:
            # Should the driver die, the candidate dies with it rather than run on
            # unwatched. (As the init of a pid namespace, its death ends everything.)
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != driver:
                _exit(EXIT_SETUP_FAILED)
        # Its own /proc/self must be readable to it, as for any program; the filter
        # still keeps every other process from tracing it.
        _prctl(_PR_SET_DUMPABLE, 1)
        os.chdir(scratch)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.dup2(res_w, RESULT_FD)
        os.closerange(RESULT_FD + 1, os.sysconf("SC_OPEN_MAX"))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        for limit, key, extra, hard_extra in (
            (resource.RLIMIT_AS, "memory_bytes", 0, 0),
            # SIGXCPU at the soft limit says why; SIGKILL a second later if it is ignored.
            (resource.RLIMIT_CPU, "cpu_seconds", 0, 1),
            (resource.RLIMIT_FSIZE, "file_size_bytes", 0, 0),
            (resource.RLIMIT_NOFILE, "open_files", 0, 0),
            # The driver runs as the same user and counts too.
            (resource.RLIMIT_NPROC, "processes", 1, 0),
        ):
            value = request.get(key)
            if value:
                resource.setrlimit(limit, (value + extra, value + extra + hard_extra))
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if signal_filter:
            signal_filter.install(os.getpid())
        program = request["program"]
        del request
    except BaseException:
        _exit(EXIT_SETUP_FAILED)

    def report(status, detail, result):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        record = json.dumps({"status": status, "detail": detail, "result": result})
        data = token + b" " + record.encode("utf-8", "replace") + b"\n"
        while data:
            data = data[_write(RESULT_FD, data):]
        _exit(0)

    try:
        code = compile(program, "<string>", "exec")
    except BaseException as exc:
        name, text = _describe(exc)
        report("error", f"does not compile: {name}: {text}", f"failed: {text}")
    try:
        exec(code, {})
    except MemoryError as exc:
        report("out-of-memory", "MemoryError", f"failed: {_describe(exc)[1]}")
    except OSError as exc:
        name, text = _describe(exc)
        limit = LIMIT_ERRORS.get(exc.errno)
        if limit:
            report("limit", f"{limit} ({name}: {text})", f"failed: {text}")
        report("failed", f"{name}: {text}", f"failed: {text}")
    except SystemExit as exc:
        name, text = _describe(exc)
        report("error", f"exited before its tests finished ({name}: {text})", f"failed: {text}")
    except BaseException as exc:
        name, text = _describe(exc)
        report("failed", f"{name}: {text}" if text else name, f"failed: {text}")
    report("passed", "", "passed")


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


class TokenScanner:
    """Finds the first line that starts with the run's token in what the child wrote."""

    def __init__(self, token):
        self.token = token
        self.buffer = b""
        self.record = None

    def feed(self, data):
        if self.record is not None:
            return
        self.buffer += data
        at = self.buffer.find(self.token + b" ")
        if at < 0:
            # Only a tail as long as the token can still begin a match.
            self.buffer = self.buffer[-len(self.token):]
            return
        rest = self.buffer[at + len(self.token) + 1:]
        end = rest.find(b"\n")
        if end >= 0:
            try:
                self.record = json.loads(rest[:end])
            except ValueError:
                self.record = {"status": "error", "detail": "unreadable verdict record", "result": "failed: "}
        elif len(rest) > RECORD_CAP:
            self.record = {"status": "error", "detail": "verdict record too long", "result": "failed: "}
        else:
            self.buffer = self.buffer[at:]


def _descendants():
    """Every process below this one, found by walking /proc (no children file needed)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        parents.setdefault(int(fields[1]), []).append(int(entry))
    found, frontier = [], [os.getpid()]
    while frontier:
        kids = parents.get(frontier.pop(), [])
        found += kids
        frontier += kids
    return found


def _kill_namespace():
    """From the init of a pid namespace, SIGKILL to everything else in it at once."""
    if os.getpid() == 1:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _kill_candidate(pid):
    """SIGKILL to the candidate's process group, and to all its namespace holds."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _kill_namespace()


def kill_everything_below():
    """Kills and reaps every descendant; returns once none is left."""
    _kill_namespace()
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid:
            continue
        for pid in _descendants():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _empty(directory):
    """Removes everything in `directory` that a candidate may have made, whatever it did
    to the permissions, and leaves alone what is mounted there (an interpreter
    installed below /tmp is bound read-only into the sandbox's /tmp)."""
    for entry in os.listdir(directory):
        path = os.path.join(directory, entry)
        if os.path.ismount(path):
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            try:
                os.chmod(path, 0o700)
            except OSError:
                pass
            _empty(path)
            try:
                os.rmdir(path)
            except OSError:
                pass
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def run(request, scratch, harness_fd, responses_fd, signal_filter):
    """Runs one candidate and sends its verdict; returns False if the harness is gone."""
    scratch_root = os.path.dirname(scratch)
    os.mkdir(scratch, 0o700)
    token = os.urandom(16).hex().encode()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()
    cap = int(request.get("output_cap", 65536))
    timeout = float(request["timeout"])
    started = time.monotonic()
    driver = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            _child(request, scratch, (out_w, err_w, res_w), token, signal_filter, driver)
        finally:
            os._exit(EXIT_SETUP_FAILED)
    for fd in (out_w, err_w, res_w):
        os.close(fd)
    streams = {out_r: Capture(cap), err_r: Capture(cap)}
    scanner = TokenScanner(token)
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    for fd in (out_r, err_r, res_r, pidfd, harness_fd):
        poller.register(fd, select.POLLIN)
    deadline = started + timeout
    exit_status = None
    usage = None
    timed_out = False
    harness_gone = False
    while scanner.record is None and exit_status is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        for fd, _ in poller.poll(remaining * 1000):
            if fd == pidfd:
                _, exit_status, usage = os.wait4(pid, 0)
                continue
            if fd == harness_fd:
                harness_gone = True
                continue
            data = os.read(fd, READ_CHUNK)
            if not data:
                poller.unregister(fd)
            elif fd == res_r:
                scanner.feed(data)
            else:
                streams[fd].feed(data)
        if harness_gone:
            break
    duration = time.monotonic() - started
    # The verdict is decided; nothing the candidate left behind may change it. Once
    # every process of the candidate has SIGKILL pending none runs another instruction,
    # so the verdict goes out before they are reaped, which overlaps with the harness.
    _kill_candidate(pid)
    for fd in (out_r, err_r, res_r):
        os.set_blocking(fd, False)
        _drain(fd, res_r, scanner, streams)
    if not harness_gone:
        _send(responses_fd, _verdict(request, scanner, timed_out, exit_status, usage, duration, streams[out_r], streams[err_r]))
    if exit_status is None:
        os.wait4(pid, 0)
    kill_everything_below()
    for fd in (pidfd, out_r, err_r, res_r):
        os.close(fd)
    # Candidates may write anywhere in the scratch root (at level full, all of /tmp);
    # most leave nothing, and an empty directory and root need no walk.
    try:
        os.rmdir(scratch)
        clean = not os.listdir(scratch_root)
    except OSError:
        clean = False
    if not clean:
        _empty(scratch_root)
    return not harness_gone


def _drain(fd, res_r, scanner, streams):
    """Reads what is waiting in a (non-blocking) pipe."""
    while True:
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        if not data:
            return
        if fd == res_r:
            scanner.feed(data)
        else:
            streams[fd].feed(data)


def _verdict(request, scanner, timed_out, exit_status, usage, duration, out, err):
    timeout = float(request["timeout"])
    if scanner.record is not None:
        verdict = scanner.record
    elif timed_out:
        verdict = {"status": "timeout", "detail": f"still running after {timeout:g} s", "result": "timed out"}
    elif os.WIFSIGNALED(exit_status):
        number = os.WTERMSIG(exit_status)
        name = _signal_name(number)
        status, detail = "killed", f"killed by {name}"
        cpu_limit = request.get("cpu_seconds")
        if number in LIMIT_SIGNALS:
            status, detail = "limit", f"{LIMIT_SIGNALS[number]} (killed by {name})"
        elif number == signal.SIGKILL and cpu_limit and usage.ru_utime + usage.ru_stime >= cpu_limit:
            status, detail = "limit", f"CPU time limit (killed by {name})"
        verdict = {"status": status, "detail": detail, "result": f"failed: killed by {name}"}
    else:
        code = os.WEXITSTATUS(exit_status)
        detail = f"exited with status {code} before its tests finished"
        if code == EXIT_SETUP_FAILED:
            detail = "the candidate's process could not be set up"
        verdict = {"status": "error", "detail": detail, "result": f"failed: {detail}"}
    verdict.update(
        id=request.get("id"),
        duration=round(duration, 6),
        stdout=out.text(), stdout_bytes=out.total,
        stderr=err.text(), stderr_bytes=err.total,
    )
    return verdict


def _send(fd, message):
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def main():
    scratch_root = sys.argv[1]
    filter_wanted = "--no-filter" not in sys.argv[2:]
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError) as exc:
        sys.exit(f"passk needs Linux 5.3 or later to watch candidates (pidfd_open: {exc})")
    # Keep the harness's pipes on private descriptors, so that nothing of ours that
    # prints to the standard streams can corrupt the protocol.
    requests_fd = os.dup(0)
    responses_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    _prctl(_PR_SET_DUMPABLE, 0)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)

    def stop(signum, frame):
        kill_everything_below()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    # no_new_privs once, for the driver and so for every child: a filter needs it, and
    # nothing here needs privilege.
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    signal_filter = SignalFilter() if filter_wanted and os.uname().machine in SYSCALLS else None
    if signal_filter and not probe_signal_filter(signal_filter):
        signal_filter = None
    _send(responses_fd, {"ready": True, "signal_filter": signal_filter is not None, "python": sys.version.split()[0]})
    # One working directory, made fresh for each candidate, so that the variables that
    # name it are set once here rather than in every child. A driver that died may have
    # left one behind.
    _empty(scratch_root)
    scratch = os.path.join(scratch_root, "work")
    os.environ["HOME"] = os.environ["TMPDIR"] = scratch
    sys.argv = [""]
    requests = os.fdopen(requests_fd, "rb")
    while True:
        line = requests.readline()
        if not line or not run(json.loads(line), scratch, requests_fd, responses_fd, signal_filter):
            return


if __name__ == "__main__":
    main()
