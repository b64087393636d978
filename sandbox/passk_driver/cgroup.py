"""The sample's control group, where the run has one (see the runner's cgroup module).

The set-up helper opened the group's files before the sandbox hid them, on descriptors
this driver inherits: every process forked for a sample joins the group before it runs
anything, and after each sample the driver reads what the kernel counted there, its
peak memory, its CPU time and any out-of-memory kill, for the results line, and kills
whatever of the sample is still in the group. Only the driver holds these descriptors;
every process it forks closes them.
"""

import json
import os
import signal
import time

_READ = 4096


def _read(fd):
    return os.pread(fd, _READ, 0)


def _field(data, name):
    """The number after `name` in a flat-keyed file (memory.events, cpu.stat, ...)."""
    for line in data.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == name:
            return int(value)
    return 0


class Seen:
    """What the kernel counted for one sample."""

    def __init__(self, peak, cpu, out_of_memory, process_limit):
        self.peak = peak
        self.cpu = cpu
        self.out_of_memory = out_of_memory
        self.process_limit = process_limit


# Where a sample has no group: nothing seen.
UNSEEN = Seen(None, None, False, False)


class SampleGroup:
    """The sample group's descriptors, and its counters as they stood when the last
    sample's processes were gone."""

    def __init__(self, description):
        spec = json.loads(description)
        self.version = spec["version"]
        self.join_fds = tuple(spec["join"])
        self.peak_fd = spec["peak"]
        # Socket buffers, where they are counted apart (v1): their peak adds to the rest.
        self.socket_peak_fd = spec["socket_peak"]
        self.events_fd = spec["events"]
        self.cpu_fd = spec["cpu"]
        self.members_fd = spec["members"]
        self.count_fd = spec["count"]
        self.kill_fd = spec["kill"]
        # Peak memory is per sample only where it can be reset; v2 kernels before 6.12
        # cannot.
        self.peak_per_sample = self._reset_peak()
        self.cpu_base = self._cpu()
        self.oom_base = self._oom_kills()
        # Kept open, as the other counters are: read after every sample.
        try:
            self.pids_events_fd = os.open("pids.events", os.O_RDONLY | os.O_CLOEXEC, dir_fd=self.members_fd)
        except OSError:
            self.pids_events_fd = None
        self.refused_forks_base = self._refused_forks()

    def join(self):
        """In a process just forked for a sample, or the slot's judge: moves it into the
        sample's group."""
        for fd in self.join_fds:
            os.write(fd, b"0")

    def figures(self):
        """What the kernel saw of the sample: its peak memory in bytes (None where it
        cannot be told) and CPU seconds (None where not accounted), whether it killed any
        of its processes for want of memory, and whether it refused the sample a process
        at its limit. Read once every process of the sample has SIGKILL pending, so none
        of them runs again: the next sample counts from here."""
        peak = None
        if self.peak_per_sample:
            peak = int(_read(self.peak_fd))
            if self.socket_peak_fd is not None:
                # The two peaks may have come at different times: their sum bounds the
                # sample's true peak from above.
                peak += int(_read(self.socket_peak_fd))
        cpu, self.cpu_base = self._difference(self._cpu(), self.cpu_base)
        oom_kills = self._oom_kills()
        killed, self.oom_base = oom_kills > self.oom_base, oom_kills
        refused_forks = self._refused_forks()
        refused, self.refused_forks_base = refused_forks > self.refused_forks_base, refused_forks
        return Seen(peak, cpu, killed, refused)

    def empty(self, spared):
        """Kills every process left in the sample's group but `spared` (the slot's judge,
        which lives there too), and returns once none is: the group, not the process tree
        the driver walks, is what says which processes are the sample's. Zombies are left
        to their parents, which reap them."""
        while int(_read(self.count_fd)) > 0:
            # Listed afresh each time: a kept descriptor would list what it listed first.
            fd = os.open("cgroup.procs", os.O_RDONLY, dir_fd=self.members_fd)
            listing = b""
            try:
                while chunk := os.read(fd, 1 << 16):
                    listing += chunk
            finally:
                os.close(fd)
            members = [pid for pid in map(int, listing.split()) if pid != spared]
            if not members:
                return
            if self.kill_fd is not None and spared is None:
                os.write(self.kill_fd, b"1")
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.0002)

    def settle(self):
        """After the sample's processes are gone, and what they held with them: the
        next sample's peak counts from here."""
        if self.peak_per_sample:
            self._reset_peak()

    @staticmethod
    def _difference(now, base):
        if now is None:
            return None, None
        return round(now - base, 6), now

    def _reset_peak(self):
        # v1 sets the mark to the current usage on any write; v2 (6.12 and later) does
        # so for reads through the same descriptor.
        try:
            os.write(self.peak_fd, b"0" if self.version == 1 else b"reset")
            if self.socket_peak_fd is not None:
                os.write(self.socket_peak_fd, b"0")
        except OSError:
            return False
        return True

    def _cpu(self):
        if self.cpu_fd is None:
            return None
        data = _read(self.cpu_fd)
        if self.version == 1:
            return int(data) / 1e9
        return _field(data, b"usage_usec") / 1e6

    def _oom_kills(self):
        return _field(_read(self.events_fd), b"oom_kill")

    def _refused_forks(self):
        """How often the pids controller refused the sample's group a process (the `max`
        of `pids.events`, in v1 and v2 alike; 0 where the kernel has no such file)."""
        if self.pids_events_fd is None:
            return 0
        return _field(_read(self.pids_events_fd), b"max")
