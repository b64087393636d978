"""What the wire format's tests share: a pipe of its own for each test, closed after it
whichever ends the test closed itself (closing one is how a test hangs up)."""

import os
import unittest


def close_quietly(*fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


class PipeCase(unittest.TestCase):
    def setUp(self):
        self.read_fd, self.write_fd = os.pipe()

    def tearDown(self):
        close_quietly(self.read_fd, self.write_fd)
