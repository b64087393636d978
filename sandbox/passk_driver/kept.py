"""The most recently used keys, up to a bound, with a value each.

Two processes that must agree on what one of them holds (the harness and a driver on
the suites it was sent, the harness and a judge likewise) each keep one, touched in the
same order, so that data crosses once and never needs asking for."""

import collections


class Kept:
    def __init__(self, bound):
        self.bound = bound
        self.items = collections.OrderedDict()

    def touch(self, key):
        """The value kept for `key` (now the most recent), or None."""
        value = self.items.pop(key, None)
        if value is not None:
            self.items[key] = value
        return value

    def get(self, key):
        """The value kept for `key`, or None, leaving the order as it is."""
        return self.items.get(key)

    def keep(self, key, value):
        """Keeps `value` for `key`; the value it no longer keeps for that, if any."""
        self.items[key] = value
        if len(self.items) > self.bound:
            return self.items.popitem(last=False)[1]
        return None
