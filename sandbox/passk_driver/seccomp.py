"""The system-call filter every candidate runs under.

The policy is `sandbox/syscalls.toml`; the harness compiles it into a BPF program for
this machine and writes it beside these modules. Among what it allows and denies: a
candidate may signal only itself and its own process group, never the driver, the judge
or the harness, nor `kill(-1)` everything its user owns (except where it is alone in a
pid namespace of its own, which holds only its sample's processes: there it may signal
any pid it can name, as honest code that stops its own workers by pid needs); it cannot
trace or read another process's memory, have the kernel deliver a signal to another process through
a descriptor (F_SETOWN, FIOSETOWN, O_ASYNC) or through its resource limits, reach a
kernel keyring, make a namespace or mount anything. Denied calls fail with EPERM, as a permission error would,
rather than killing the candidate. Where the sandbox separates the candidate from the
judge by construction (a pid namespace whose init is the judge, non-dumpable processes,
another user id), this filter is a second wall; where it cannot, this is the wall.
"""

import ctypes
import os
import struct

from . import confine

PROGRAM = os.path.join(os.path.dirname(__file__), "candidate.bpf")
# The program for a candidate alone in its own pid namespace (level full).
ALONE_PROGRAM = os.path.join(os.path.dirname(__file__), "candidate-alone.bpf")
# Where the program compares with the calling process's pid, it holds this, and its
# negation where it compares with the process's group (the harness's OWN_PID).
_PID_PLACEHOLDER = 0x7FFF_FFF0
_JEQ_K = 0x15
_SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class SyscallFilter:
    """The harness's program, loaded once in the driver; each child writes its own pid
    in and installs it. Loading it afresh in every child would cost more than the rest
    of the child's set-up together, since every page Python touches there is copied."""

    def __init__(self, program):
        self.buffer = ctypes.create_string_buffer(program, len(program))
        self.fprog = _SockFprog(len(program) // 8, ctypes.cast(self.buffer, ctypes.c_void_p))
        self.address = ctypes.addressof(self.fprog)
        # Each instruction is 8 bytes: its code in the first 2, its constant in the last 4.
        comparisons = [struct.unpack_from("HxxI", program, at) for at in range(0, len(program), 8)]
        self.own = [at * 8 + 4 for at, (code, k) in enumerate(comparisons) if (code, k) == (_JEQ_K, _PID_PLACEHOLDER)]
        negated = (-_PID_PLACEHOLDER) & 0xFFFFFFFF
        self.negated = [at * 8 + 4 for at, (code, k) in enumerate(comparisons) if (code, k) == (_JEQ_K, negated)]

    def install(self, own_pid):
        """Confines this process; the caller must already have no_new_privs."""
        for at in self.own:
            struct.pack_into("I", self.buffer, at, own_pid)
        for at in self.negated:
            struct.pack_into("I", self.buffer, at, (-own_pid) & 0xFFFFFFFF)
        confine.prctl(confine.PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, self.address)


def probe(syscall_filter):
    """Whether the filter installs and holds here: tried once, in a throwaway child."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            syscall_filter.install(os.getpid())
            try:
                os.kill(os.getppid(), 0)
            except PermissionError:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _read(path):
    with open(path, "rb") as f:
        return SyscallFilter(f.read())


def available(alone_in_pid_namespace):
    """The filter for this driver's candidates, if the harness has one for this machine
    and the kernel takes it: with `alone_in_pid_namespace`, the one for candidates each
    the init of a pid namespace of their own. The probe runs the other, which differs only
    in what it lets a process signal, since this driver is in no such namespace."""
    try:
        candidate_filter = _read(PROGRAM)
        if not probe(candidate_filter):
            return None
        return _read(ALONE_PROGRAM) if alone_in_pid_namespace else candidate_filter
    except FileNotFoundError:
        return None
