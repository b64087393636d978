"""The sample's code, as the harness hands it over: a memory file per sample, whose
descriptor comes on a line of its own (descriptor 4), never its bytes.

Every candidate is forked from this driver, and could find in its memory whatever the
driver ever held, freed or not: were it to read each sample's code, a candidate could
take another sample's, one that passed the same problem a few samples before it. So
the driver passes each sample's memory file to that sample's processes, which read it
after the fork (candidate.read_source), and closes it.
"""

import os
import socket

# Where the harness hands the driver the source line (SOURCE_LINE_FD in source_line.rs).
SOURCE_LINE_FD = 4


class Sources:
    def __init__(self):
        os.set_inheritable(SOURCE_LINE_FD, False)
        self.line = socket.socket(fileno=SOURCE_LINE_FD)

    def take(self, seq):
        """The descriptor of sample `seq`'s code. The harness sends it before the sample's
        request; one left by a request the driver never got to is skipped."""
        while True:
            data, fds, _, _ = socket.recv_fds(self.line, 8, 1)
            if not data:
                raise EOFError("the harness closed the source line")
            if len(fds) == 1 and int.from_bytes(data, "big") == seq:
                return fds[0]
            for fd in fds:
                os.close(fd)
