"""Leaving nothing of a sample behind: its processes and its files.

Every process forked for a sample starts a new session or is the init of a pid
namespace of its own, and the driver is a child subreaper, so descendants that
double-fork or call setsid are re-parented to the driver rather than escaping to init.
After every verdict the driver kills them all, and empties the scratch directory.
"""

import ctypes
import os
import signal
import stat
import time

from . import confine

_libc = ctypes.CDLL(None, use_errno=True)
_PAGE = os.sysconf("SC_PAGE_SIZE")
_IPC_RMID, _SHM_STAT, _SHM_INFO = 0, 13, 14


class _ShmInfo(ctypes.Structure):
    _fields_ = [("used_ids", ctypes.c_int)] + [(name, ctypes.c_ulong) for name in
                                               ("shm_tot", "shm_rss", "shm_swp", "swap_attempts", "swap_successes")]


_SHM_INFO_BUFFER = _ShmInfo()
# Room for a struct shmid_ds, which SHM_STAT fills in.
_SHM_STAT_BUFFER = ctypes.create_string_buffer(512)


def _stats():
    """Each living process's pid and its parent's, from /proc."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if fields[0] != b"Z":
            yield int(entry), int(fields[1])


def _living():
    return [pid for pid, _ in _stats()]


def _parents():
    """Each process's children, found by walking /proc (no children file needed)."""
    parents = {}
    for pid, parent in _stats():
        parents.setdefault(parent, []).append(pid)
    return parents


def _descendants(spared):
    """Every living process below this one but `spared` and what is below it."""
    parents = _parents()
    found, frontier = [], [os.getpid()]
    while frontier:
        kids = [kid for kid in parents.get(frontier.pop(), []) if kid != spared]
        found += kids
        frontier += kids
    return found


def _read_children(fd):
    """The pids in a list of children, read from its start."""
    data, at = b"", 0
    while chunk := os.pread(fd, 4096, at):
        data += chunk
        at += len(chunk)
    return [int(child) for child in data.split()]


def _children(pid):
    """A process's children, from the kernel's list, or None where the kernel keeps none."""
    # Unbuffered: this runs after every sample, and a file object costs several times
    # the reading.
    try:
        fd = os.open(f"/proc/{pid}/task/{pid}/children", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return _read_children(fd)
    except OSError:
        return None
    finally:
        os.close(fd)


class OwnChildren:
    """The driver's own list of children, read after every sample: kept open, since the
    driver's pid never changes, and read again from its start each time."""

    def __init__(self):
        pid = os.getpid()
        try:
            self.fd = os.open(f"/proc/{pid}/task/{pid}/children", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.fd = None

    def read(self):
        """The driver's children, or None where the kernel keeps no such list."""
        if self.fd is None:
            return None
        try:
            return _read_children(self.fd)
        except OSError:
            return None


def _sigkill(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def kill_group(pid):
    """SIGKILL to the process group `pid` leads (a candidate starts a session of its own)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _strays(spared, own_children):
    """What a sample may have left running: the driver's children but `spared` (the
    judge), and the judge's children, which are orphans of candidates where the judge
    is their namespace's init. Killing them sends their own children to the driver (a
    subreaper) or the judge, and so to the next look."""
    driver = os.getpid()
    children = own_children.read()
    if children is not None:
        strays = [child for child in children if child != spared]
        if spared is not None:
            strays += _children(spared) or []
        return strays
    if driver == 1:
        return [pid for pid in _living() if pid not in (1, spared)]
    return _descendants(spared)


def kill_strays(spared, own_children, kept=()):
    """Kills whatever a sample left running: every process below the driver but
    `spared` (the judge, kept across samples) and `kept` (the slot's resident compilers,
    which have no children), found from `own_children` (the driver's OwnChildren) where
    the kernel lists them. Returns once none is left."""
    while True:
        strays = [pid for pid in _strays(spared, own_children) if pid not in kept]
        if not strays:
            return
        _sigkill(strays)
        reap_ended()
        # The judge reaps the orphans among them, in its own time.
        time.sleep(0.0002)


def kill_kept(pid):
    """Kills a process kept across samples (the judge, a resident compiler) and returns
    once it is reaped. Not a wait on it alone: as the init of a pid namespace it ends
    only once every process there is reaped, some of them the driver's own children."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    while True:
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
        except ChildProcessError:
            return
        reap_ended()
        time.sleep(0.0002)


def held_bytes(pid):
    """The memory process `pid` holds (its resident set), or None if it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def reap_ended():
    """Reaps every child that has ended, waiting on none. Waiting on one pid can wait
    forever: a judge that is the init of a pid namespace does not end until every
    process of its namespace is reaped, and a candidate there is the driver's child."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_everything_below():
    """Kills and reaps every descendant, the judge included: the driver is stopping.
    Returns once it has no child left, living or not."""
    while True:
        if os.getpid() == 1:
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _sigkill(_descendants(None))
        reap_ended()
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        time.sleep(0.0002)


# What /proc/net/sockstat and sockstat6 count per network namespace.
_SOCKET_COUNTS = (b"inuse", b"tw")


class SocketCounts:
    """The counts of internet sockets of the driver's network namespace, read after every
    sample. The files are kept open, and read again from their start: an open file goes
    on counting the namespace it was opened in, so they are opened again in each new
    one (`reopen`)."""

    NAMES = ("/proc/net/sockstat", "/proc/net/sockstat6")

    def __init__(self):
        self.fds = ()
        self.reopen()

    def reopen(self):
        """Opens the files of the driver's present network namespace."""
        for fd in self.fds:
            if fd is not None:
                os.close(fd)
        self.fds = tuple(self._open(name) for name in self.NAMES)

    @staticmethod
    def _open(name):
        try:
            return os.open(name, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None

    def used(self):
        """Whether the namespace holds any internet socket (in use, or in TIME_WAIT after
        its process is gone); a count that cannot be read says yes."""
        for fd in self.fds:
            if fd is None:
                return True
            try:
                lines = os.pread(fd, 4096, 0).splitlines()
            except OSError:
                return True
            for line in lines:
                protocol, _, fields = line.partition(b":")
                if protocol == b"sockets":
                    continue
                words = fields.split()
                for key, value in zip(words[::2], words[1::2]):
                    if key in _SOCKET_COUNTS and value != b"0":
                        return True
        return False


def remove_shared_memory():
    """Removes every SysV shared memory segment of this IPC namespace, at once. A
    namespace that is left frees its segments only later, in the kernel's own time, and
    until then their pages still count against the sample group's limit; the next
    sample would start with less."""
    highest = _libc.shmctl(0, _SHM_INFO, ctypes.byref(_SHM_INFO_BUFFER))
    if highest < 0 or _SHM_INFO_BUFFER.used_ids == 0:
        return
    for index in range(highest + 1):
        segment = _libc.shmctl(index, _SHM_STAT, _SHM_STAT_BUFFER)
        if segment >= 0:
            _libc.shmctl(segment, _IPC_RMID, None)


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# The mode the sandbox makes the directories it creates with.
_TRAVERSABLE = 0o755


def _clear_files(fd, device):
    """Unlinks every entry of the directory `fd` but its subdirectories, and returns the
    names of those not mounted from elsewhere."""
    subdirectories = []
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                status = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(status.st_mode):
                if status.st_dev == device:
                    subdirectories.append(entry.name)
                continue
            try:
                os.unlink(entry.name, dir_fd=fd)
            except OSError:
                pass
    return subdirectories


def empty(directory):
    """Removes everything in `directory` that a candidate may have made, whatever it did
    to the permissions, and leaves alone what is mounted there (an interpreter
    installed below /tmp is bound read-only into the sandbox's /tmp).

    Every step is relative to a descriptor of the directory it is in, and one
    descriptor is open at a time, so neither a path longer than PATH_MAX nor nesting
    deeper than the interpreter's recursion or the open-file limit stops it."""
    fd = os.open(directory, _DIRECTORY)
    device = os.fstat(fd).st_dev
    # The way down: each directory's name in its parent, and its subdirectories left.
    path = [(None, _clear_files(fd, device))]
    while True:
        name, left = path[-1]
        if left:
            below = left.pop()
            try:
                os.chmod(below, 0o700, dir_fd=fd)
            except OSError:
                pass
            try:
                inner = os.open(below, _DIRECTORY, dir_fd=fd)
            except OSError:
                continue
            os.close(fd)
            fd = inner
            path.append((below, _clear_files(fd, device)))
            continue
        path.pop()
        if not path:
            os.close(fd)
            return
        parent = os.open("..", _DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = parent
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError:
            # What stays holds a mount (the parents of an interpreter installed below
            # /tmp are made in the sandbox's /tmp): every process must still get through
            # it, whatever mode the way down or a candidate left it with.
            try:
                os.chmod(name, _TRAVERSABLE, dir_fd=fd)
            except OSError:
                pass


class FreshMounts:
    """At level full, each sample's /dev/shm and, where nothing is mounted below the
    scratch root, its /tmp: tmpfs mounts over the slot's own, let go of after any sample
    that left something there, and replaced by new ones. Whatever a sample left (paths
    too long to name, directories nested too deep to walk, a full file system) goes with
    its mount, at once, and no later sample sees it."""

    def __init__(self, points, size):
        self.points = [point.encode() for point in points]
        self.options = f"size={size},mode=1777".encode()
        for point in self.points:
            confine.mount_tmpfs(point, self.options)

    @staticmethod
    def possible(scratch_root):
        """Whether nothing is mounted below the scratch root (an interpreter installed
        below /tmp is), which a new tmpfs over it would hide."""
        prefix = scratch_root.rstrip("/") + "/"
        with open("/proc/self/mountinfo") as mountinfo:
            return not any(line.split(" ")[4].startswith(prefix) for line in mountinfo)

    def holds(self, point):
        return point.encode() in self.points

    def renew(self):
        """After a sample: a new mount wherever the sample left anything. An empty
        tmpfs is as good as a new one, and most samples leave nothing, which is cheaper
        to see than a mount is to replace."""
        for point in self.points:
            if os.listdir(point):
                confine.detach(point)
                confine.mount_tmpfs(point, self.options)


def clear_scratch(scratch):
    """Removes the sample's directory; candidates may write anywhere in the scratch root
    (at level full, all of /tmp), but most leave nothing, and then there is no walk."""
    root = os.path.dirname(scratch)
    try:
        os.rmdir(scratch)
        clean = not os.listdir(root)
    except OSError:
        clean = False
    if not clean:
        empty(root)
