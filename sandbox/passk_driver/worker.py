"""The worker loop: one driver per worker slot, kept warm by the harness.

Protocol (one JSON object per line): the harness writes requests on the driver's stdin
and reads verdicts on its stdout. The first line the driver writes says it is ready and
what it could set up. A request holds one of:
- `in_process`: in-process mode, candidate and tests as one program;
- `tests`: judge mode, the problem's test code calls the candidate;
- `calls`: a suite of calls, each input one call, judged by the judge;
- `stdio`: a whole program, run once per test on its standard input;
with the limits and the sample's number (`seq`). `tests`, `calls` and `stdio` name a
suite by id, with the driver's part of it the first time: the entry point, inputs and
limits. Test code and expected outputs go from the harness to the judge alone (see
harness_link.py), on a line the harness hands the driver as descriptor 3, and each
sample's code comes as a memory file on descriptor 4, which only the sample's processes
read (see sources.py): every candidate is forked from this driver, and could find in
its memory whatever the driver ever held.

The driver runs nothing of any candidate's itself: every sample's processes are
forked from it, so each starts from the same warm interpreter and leaves nothing
behind for the next.
"""

import json
import os
import signal
import sys

from . import cgroup, cleanup, confine, programs, sample, seccomp
from .sources import Sources
from .judge_process import JudgeProcess
from .resident import ResidentCompilers
from .kept import Kept

# Where the harness hands the driver the judge's line to it (JUDGE_LINK_FD in driver.rs).
JUDGE_LINK_FD = 3
# Modules that problems and candidates commonly import, imported once here so that no
# forked sample pays for them; `traceback` (with linecache, tokenize and textwrap) is what
# every program run as a script needs to report its exception (candidate.run_script),
# and cost each standard-input run and each run_code program about 6 ms when imported
# after the fork.
WARM_MODULES = ("typing", "math", "random", "copy", "string", "collections", "re", "hashlib", "itertools",
                "functools", "heapq", "bisect", "reprlib", "traceback", "types")


class Context:
    """What every sample of this slot shares."""

    def __init__(self, scratch_root, harness_fd, judge_link_fd, isolate, candidate_user, sample_group):
        self.driver_pid = os.getpid()
        self.sample_group = sample_group
        self.scratch_root = scratch_root
        self.harness_fd = harness_fd
        self.candidate_user = candidate_user
        self.privileged = confine.holds_capabilities()
        if self.privileged:
            confine.clear_inheritable()
        self.own_pid_namespace = _own_pid_namespace() if isolate else None
        # Each candidate is the init of a pid namespace of its own where this driver
        # makes them (see forking.fork_alone), and gets the filter for that.
        self.syscall_filter = seccomp.available(self.nested) if isolate else None
        self.ipc_namespace_per_sample = self.nested and _fresh_ipc_namespace()
        self.network_namespace_per_sample = self.nested and _fresh_network_namespace()
        self.socket_counts = cleanup.SocketCounts() if self.network_namespace_per_sample else None
        self.own_children = cleanup.OwnChildren()
        self.judge = JudgeProcess(judge_link_fd)
        self.compilers = ResidentCompilers()
        self.suites = Suites()
        self.serving_objects = programs.ServingObjects()
        self.sources = Sources()
        # The memory file of the code of the sample being run (see sources.py).
        self.source_fd = None
        # Each sample's own /tmp and /dev/shm, where the level allows (see main).
        self.fresh_mounts = None

    @property
    def nested(self):
        return self.own_pid_namespace is not None


class Suites:
    """The driver's part of the suites of tests (call and standard-input problems) it
    holds, by id. The harness keeps the same list of ids and sends a suite's part only
    with the first request that needs it since it was last dropped."""

    KEPT = 8

    def __init__(self):
        self.kept = Kept(self.KEPT)

    def get(self, reference):
        """(id, suite) for a request's reference: its id, and its data if sent."""
        suite_id = reference["id"]
        suite = self.kept.touch(suite_id)
        if suite is None:
            if "suite" not in reference:
                raise KeyError(f"suite {suite_id} was neither sent nor kept")
            suite = reference["suite"]
            self.kept.keep(suite_id, suite)
        return suite_id, suite


def _own_pid_namespace():
    """A descriptor of this driver's pid namespace, to come back to after giving a
    sample a namespace of its own, if this driver may make them (level full)."""
    try:
        own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        confine.unshare(confine.CLONE_NEWPID)
        confine.setns(own, confine.CLONE_NEWPID)
    except OSError:
        os.close(own)
        return None
    return own


def _fresh_ipc_namespace():
    """Moves this driver to a new IPC namespace, if it may; the children it forks next
    are born there (see sample.run)."""
    try:
        confine.unshare(confine.CLONE_NEWIPC)
    except OSError:
        return False
    return True


def _fresh_network_namespace():
    """Whether this driver may give the next sample a new network namespace, with its
    own loopback (see sample._execute): tried once, here."""
    try:
        confine.unshare(confine.CLONE_NEWNET)
        confine.loopback_up()
    except OSError:
        return False
    return True


def _fresh_mounts(scratch_root, size):
    """A tmpfs of its own on /dev/shm for each sample, and on /tmp unless something is
    mounted below it (an interpreter installed there), if this driver may mount them
    (level full). Every sample gets a writable /dev/shm whatever the interpreter's path:
    the sandbox's root is read-only, and multiprocessing's locks live there."""
    points = ["/dev/shm"]
    if cleanup.FreshMounts.possible(scratch_root):
        points.append(scratch_root)
    try:
        return cleanup.FreshMounts(points, size)
    except OSError:
        return None


def _send(fd, message):
    # Any string in a message may hold what a candidate wrote, lone surrogates too, which
    # no JSON reader takes: each becomes U+FFFD, wherever in the message it is.
    text = json.dumps(message, ensure_ascii=False) + "\n"
    try:
        data = text.encode()
    except UnicodeEncodeError:
        data = sample.clean(text).encode()
    while data:
        data = data[os.write(fd, data):]


def main(argv):
    scratch_root = argv[0]
    isolate = "--no-isolation" not in argv[1:]
    candidate_user = int(argv[argv.index("--candidate-user") + 1]) if "--candidate-user" in argv else None
    sample_group = cgroup.SampleGroup(argv[argv.index("--cgroup") + 1]) if "--cgroup" in argv else None
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError) as exc:
        sys.exit(f"passk needs Linux 5.3 or later to watch candidates (pidfd_open: {exc})")
    # Keep the harness's pipes on private descriptors, so that nothing of ours that
    # prints to the standard streams can corrupt the protocol.
    requests_fd = os.dup(0)
    responses_fd = os.dup(1)
    judge_link_fd = JUDGE_LINK_FD
    os.set_inheritable(judge_link_fd, False)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    # Non-dumpable: no process without privilege may trace it or read its memory, and
    # every process forked from it starts so too (the judge stays so).
    confine.prctl(confine.PR_SET_DUMPABLE, 0)
    confine.prctl(confine.PR_SET_CHILD_SUBREAPER, 1)

    def stop(signum, frame):
        cleanup.kill_everything_below()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    # no_new_privs once, for the driver and so for every child: a filter needs it, and
    # nothing forked here gains privilege.
    confine.prctl(confine.PR_SET_NO_NEW_PRIVS, 1)
    for name in WARM_MODULES:
        __import__(name)
    context = Context(scratch_root, requests_fd, judge_link_fd, isolate, candidate_user, sample_group)
    # One working directory, made fresh for each sample, so that the variables that
    # name it are set once here rather than in every child. A driver that died may have
    # left one behind.
    cleanup.empty(scratch_root)
    if "--tmp-bytes" in argv and context.privileged:
        context.fresh_mounts = _fresh_mounts(scratch_root, int(argv[argv.index("--tmp-bytes") + 1]))
    fresh_mounts = context.fresh_mounts
    _send(responses_fd, {
        "ready": True,
        "fresh_tmp_per_sample": fresh_mounts is not None and fresh_mounts.holds(scratch_root),
        "fresh_shm_per_sample": fresh_mounts is not None,
        "syscall_filter": context.syscall_filter is not None,
        "pid_namespace_per_sample": context.nested,
        "ipc_namespace_per_sample": context.ipc_namespace_per_sample,
        "network_namespace_per_sample": context.network_namespace_per_sample,
        "python": sys.version.split()[0],
    })
    os.environ["HOME"] = os.environ["TMPDIR"] = os.path.join(scratch_root, "work")
    sys.argv = [""]
    requests = os.fdopen(requests_fd, "rb")
    while True:
        line = requests.readline()
        if not line or not sample.run(json.loads(line), context, lambda message: _send(responses_fd, message)):
            return
