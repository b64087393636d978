"""Forking a sample's process without the interpreter's at-fork hooks.

`os.fork` runs every hook that a module imported in the driver registered with
`os.register_at_fork`, in the child, before the child runs a line of its own. The
hooks exist to repair state that other threads held at the fork (locks, the thread
table), and `threading`'s alone touches about 150 pages, each of which the kernel then
copies: with the interpreter's own bookkeeping that was 40% of the cost of a fork, paid
by every sample. The driver runs no other thread and holds no lock when it forks, so
there is nothing for those hooks to repair, and the C library's `fork` is called
directly. The one hook whose work a sample needs is `random`'s, which gives each child
a seed of its own; it is done here.

`fork_alone` makes the child the init of a pid namespace of its own at level full: a
sample's process, the judge and a resident compiler each are.
"""

import _random
import _thread
import ctypes
import os
import random

from . import confine

# PyDLL: the call keeps the interpreter's lock, as os.fork does, so the child starts
# holding it.
_libc = ctypes.PyDLL(None, use_errno=True)
_fork = _libc.fork
_fork.restype = ctypes.c_int
_fork.argtypes = []
# The shared instance behind random's functions, seeded through the C method: the
# Python one costs four times the pages.
_random_instance = random.seed.__self__


def fork():
    """Like os.fork, without the at-fork hooks; falls back to os.fork should the
    process ever run another thread (whose locks the hooks would repair)."""
    if _thread._count():
        return os.fork()
    pid = _fork()
    if pid < 0:
        raise confine.errno_error()
    if pid == 0:
        _random.Random.seed(_random_instance)
    return pid


def fork_alone(context, fork=fork):
    """Forks a child that, at level full (context.nested), is the init of a pid
    namespace of its own, new for it, which dies with it: nothing it can see tells what
    ran before it (how many processes, for a later sample to read), and it sees nothing
    of the driver's. The caller stays in its own namespace, and so do its later children.
    `fork` is the fork to call (os.fork where the child runs threads)."""
    if not context.nested:
        return fork()
    confine.unshare(confine.CLONE_NEWPID)
    try:
        pid = fork()
    except BaseException:
        confine.setns(context.own_pid_namespace, confine.CLONE_NEWPID)
        raise
    if pid != 0:
        confine.setns(context.own_pid_namespace, confine.CLONE_NEWPID)
    return pid
