"""Leaving nothing of a sample behind: its processes and its files.

Every process forked for a sample starts a new session or is the init of a pid
namespace of its own, and the driver is a child subreaper, so descendants that
double-fork or call setsid are re-parented to the driver rather than escaping to init.
After every verdict the driver kills them all, and empties the scratch directory.
"""

import os
import signal


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


def kill(pid, group):
    """SIGKILL to `pid` (its process group with `group`), and to all the driver's
    namespace holds."""
    try:
        if group:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
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


def empty(directory):
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
            empty(path)
            try:
                os.rmdir(path)
            except OSError:
                pass
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


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
