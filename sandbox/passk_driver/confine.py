"""What a process forked for a sample gives up before it runs anything: privileges,
descriptors, signal handlers it inherited from the driver, and resources beyond its
limits.

At level `full` the driver is root inside the slot's user namespace, which it needs to
give each sample a pid namespace of its own; nothing forked for a sample keeps any of
that. Every such process empties its capability sets and, where the sandbox maps a
second user for candidates, becomes that user. The driver set no_new_privs before
forking, so no program it executes can gain a capability back, whatever the bounding
set holds.
"""

import _signal
import ctypes
import fcntl
import os
import resource
import signal
import socket as _socket
import struct

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MNT_DETACH = 0x2
CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS = 0x8913, 0x8914
_IFF_UP, _IFF_RUNNING = 0x1, 0x40
_IFREQ = struct.Struct("16sH22x")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


# Built here, in the driver, so that a child only makes the call: every page Python
# touches in a child is copied, and building these there would cost more than the call.
_CAP_HEADER = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
_NO_CAPS = (_CapData * 2)()
_CAPSET_ARGS = (ctypes.byref(_CAP_HEADER), ctypes.byref(_NO_CAPS))
# The driver's handlers, by number, set with the C function: the `signal` module's
# wrapper converts to and from enums, which touches more pages than the rest of the
# reset.
_RESET_SIGNALS = (int(signal.SIGTERM), int(signal.SIGINT))


def errno_error():
    """The C library's error from the last call made through ctypes, as an OSError."""
    err = ctypes.get_errno()
    return OSError(err, os.strerror(err))


def _check(result):
    if result != 0:
        raise errno_error()


def prctl(option, arg2=0, arg3=0):
    _check(_libc.prctl(option, arg2, arg3, 0, 0))


def unshare(flags):
    _check(_libc.unshare(flags))


def setns(fd, flags):
    _check(_libc.setns(fd, flags))


def mount_tmpfs(target, options):
    _check(_libc.mount(b"tmpfs", target, b"tmpfs", MS_NOSUID | MS_NODEV, options))


def own_proc():
    """In a process that is the init of a new pid namespace: a mount namespace of its
    own, whose /proc shows that pid namespace alone, so that no process of the slot (the
    driver, the judge, what they have counted) can be seen from it."""
    unshare(CLONE_NEWNS)
    _check(_libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None))


def loopback_up():
    """Brings up the loopback of this process's network namespace, as honest code that
    serves on 127.0.0.1 expects."""
    with _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM) as probe:
        flags = _IFREQ.unpack(fcntl.ioctl(probe, _SIOCGIFFLAGS, _IFREQ.pack(b"lo", 0)))[1]
        fcntl.ioctl(probe, _SIOCSIFFLAGS, _IFREQ.pack(b"lo", flags | _IFF_UP | _IFF_RUNNING))


def detach(target):
    _check(_libc.umount2(target, MNT_DETACH))


def holds_capabilities():
    """Whether this process has any capability (the driver at level full); asked once,
    by the driver."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapPrm:"):
                return int(line.split()[1], 16) != 0
    return False


def clear_inheritable():
    """Empties the driver's inheritable capability set, which a change of user leaves
    alone, so that no child holds it (see drop_privileges)."""
    data = (_CapData * 2)()
    _check(_libc.capget(ctypes.byref(_CAP_HEADER), data))
    if data[0].inheritable or data[1].inheritable:
        data[0].inheritable = data[1].inheritable = 0
        _check(_libc.capset(ctypes.byref(_CAP_HEADER), data))


def drop_privileges(privileged, user):
    """If `privileged` (the driver holds capabilities), gives them all up and, if `user`
    is not None, becomes that user (an id inside the slot's user namespace)."""
    if not privileged:
        return
    if user is None:
        _check(_libc.capset(*_CAPSET_ARGS))
        return
    os.setgroups([])
    os.setresgid(user, user, user)
    # From root to ids that are all non-zero, the kernel clears the permitted,
    # effective and ambient sets itself, and the driver cleared the inheritable one.
    os.setresuid(user, user, user)


def reset_signals():
    """The driver's handlers are not the sample's; a pid namespace's init must not have
    any, or a signal from inside its namespace could reach it."""
    for number in _RESET_SIGNALS:
        _signal.signal(number, _signal.SIG_DFL)


def keep_descriptors(mapping):
    """Makes the descriptors exactly `mapping` (target: source), stdin from /dev/null
    where not given, and closes every other."""
    devnull = os.open(os.devnull, os.O_RDWR)
    wanted = {0: devnull, 1: devnull, 2: devnull}
    wanted.update(mapping)
    # Copies above every number involved first, so that no dup2 overwrites a source
    # still needed; the copies are closed with the rest.
    top = max(list(wanted) + list(wanted.values())) + 1
    copies = {}
    for source in set(wanted.values()):
        copies[source] = os.dup2(source, top + len(copies))
    for target, source in wanted.items():
        os.dup2(copies[source], target)
    # Every other descriptor, the gaps between the wanted ones too.
    for fd in range(max(wanted)):
        if fd not in wanted:
            try:
                os.close(fd)
            except OSError:
                pass
    os.closerange(max(wanted) + 1, os.sysconf("SC_OPEN_MAX"))


# (rlimit, request key, extra on the soft limit, extra on the hard limit)
_LIMITS = (
    (resource.RLIMIT_AS, "memory_bytes", 0, 0),
    # SIGXCPU at the soft limit says why; SIGKILL a second later if it is ignored.
    (resource.RLIMIT_CPU, "cpu_seconds", 0, 1),
    (resource.RLIMIT_FSIZE, "file_size_bytes", 0, 0),
    (resource.RLIMIT_NOFILE, "open_files", 0, 0),
    # The driver and the judge run as the same user where there is no second one, and
    # count too.
    (resource.RLIMIT_NPROC, "processes", 2, 0),
)


def set_limits(request, processes=True):
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for limit, key, extra, hard_extra in _LIMITS:
        value = request.get(key)
        if value and (processes or key != "processes"):
            resource.setrlimit(limit, (value + extra, value + extra + hard_extra))
