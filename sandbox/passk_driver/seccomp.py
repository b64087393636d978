"""The system-call filter every candidate runs under.

A candidate may signal only itself and its own process group: it cannot kill the
driver, the judge or the harness, nor `kill(-1)` everything its user owns. It cannot
trace or read the memory of another process, nor have the kernel deliver a signal of
its choosing to another process through a descriptor it owns (F_SETOWN with F_SETSIG),
nor reach a kernel keyring.
Denied calls fail with EPERM, as a permission error would, rather than killing the
candidate. Where the sandbox separates the candidate from the judge by construction (a
pid namespace whose init is the judge, non-dumpable processes, another user id), this
filter is a second wall; where it cannot, this is the wall.
"""

import ctypes
import os
import struct

from . import confine

SYSCALLS = {
    # machine: (audit arch, {name: number})
    "x86_64": (0xC000003E, {
        "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
        "rt_tgsigqueueinfo": 297, "pidfd_send_signal": 424, "ptrace": 101,
        "process_vm_readv": 310, "process_vm_writev": 311, "fcntl": 72,
        "add_key": 248, "request_key": 249, "keyctl": 250,
    }),
    "aarch64": (0xC00000B7, {
        "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
        "rt_tgsigqueueinfo": 240, "pidfd_send_signal": 424, "ptrace": 117,
        "process_vm_readv": 270, "process_vm_writev": 271, "fcntl": 25,
        "add_key": 217, "request_key": 218, "keyctl": 219,
    }),
}
# Calls whose first argument names the target process, allowed only when it is the
# candidate itself (or, for kill, its own group or 0).
SIGNAL_SELF_ONLY = ("kill", "rt_sigqueueinfo", "tgkill", "rt_tgsigqueueinfo", "tkill")
# Kernel keyrings are keyed by user id, not by namespace, so a key one sample adds is
# one a later sample, or another run's, could read: no candidate reaches them.
ALWAYS_DENIED = ("pidfd_send_signal", "ptrace", "process_vm_readv", "process_vm_writev", "add_key", "request_key",
                 "keyctl")
# fcntl commands that choose who gets a descriptor's signals, and which signal.
_F_SETOWN, _F_SETSIG, _F_SETOWN_EX = 8, 10, 15
FCNTL_DENIED = (_F_SETOWN, _F_SETSIG, _F_SETOWN_EX)

_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JSET_K = 0x45
_BPF_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1
_X32_SYSCALL_BIT = 0x40000000
_SECCOMP_MODE_FILTER = 2
# Offsets in struct seccomp_data: the call's number, the ABI, and the low word of an
# argument.
_NR, _ARCH = 0, 4


def _arg(index):
    return 16 + 8 * index


def _insn(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k & 0xFFFFFFFF)


# Stands for the candidate's pid until a child writes its own in (see SignalFilter).
_PID_PLACEHOLDER = 0x7FFF_FFF0


def _one_of(call_number, argument, allowed, deny_listed):
    """If the call is `call_number`: EPERM unless its `argument` is one of `allowed`
    (or, with `deny_listed`, EPERM only if it is one of them)."""
    body = [_insn(_BPF_LD_W_ABS, 0, 0, _arg(argument))]
    for i, value in enumerate(allowed):
        remaining = len(allowed) - i - 1
        body.append(_insn(_BPF_JEQ_K, remaining + 1, 0, value))
    matched, unmatched = (_RET_EPERM, _RET_ALLOW) if deny_listed else (_RET_ALLOW, _RET_EPERM)
    body.append(_insn(_BPF_RET_K, 0, 0, unmatched))
    body.append(_insn(_BPF_RET_K, 0, 0, matched))
    return [_insn(_BPF_JEQ_K, 0, len(body), call_number)] + body


def signal_filter(own_pid):
    """The BPF program that confines signals and tracing to the candidate itself."""
    arch, numbers = SYSCALLS[os.uname().machine]
    prog = [
        _insn(_BPF_LD_W_ABS, 0, 0, _ARCH),
        _insn(_BPF_JEQ_K, 1, 0, arch),
        _insn(_BPF_RET_K, 0, 0, _RET_EPERM),       # a foreign ABI (i386 via int 0x80)
        _insn(_BPF_LD_W_ABS, 0, 0, _NR),
        _insn(_BPF_JSET_K, 0, 1, _X32_SYSCALL_BIT),
        _insn(_BPF_RET_K, 0, 0, _RET_EPERM),       # the x32 ABI
    ]
    for name in ALWAYS_DENIED:
        prog += [_insn(_BPF_JEQ_K, 0, 1, numbers[name]), _insn(_BPF_RET_K, 0, 0, _RET_EPERM)]
    for name in SIGNAL_SELF_ONLY:
        targets = [own_pid, 0, -own_pid] if name in ("kill", "rt_sigqueueinfo") else [own_pid]
        prog += _one_of(numbers[name], 0, targets, deny_listed=False)
    prog += _one_of(numbers["fcntl"], 1, FCNTL_DENIED, deny_listed=True)
    prog.append(_insn(_BPF_RET_K, 0, 0, _RET_ALLOW))
    return b"".join(prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


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
        confine.prctl(confine.PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, self.address)


def probe(signal_filter):
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


def available():
    """A filter for this machine, if the kernel takes it."""
    if os.uname().machine not in SYSCALLS:
        return None
    candidate_filter = SignalFilter()
    return candidate_filter if probe(candidate_filter) else None
