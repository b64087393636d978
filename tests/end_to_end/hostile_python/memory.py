# What a hostile candidate can read of the process it was forked from: the objects the
# collector knows of (once the driver's freeze is undone), the frames above its own, and
# the pages of its memory, where freed buffers keep what they held. The hostile tests
# put this before their own code.
import gc as _gc, json as _json, re as _re, sys as _sys


def _passk_dicts():
    """Every dict the collector knows of, and the dicts directly inside its lists and
    dicts."""
    _gc.unfreeze()
    for obj in _gc.get_objects():
        if isinstance(obj, dict):
            yield obj
            yield from (v for v in obj.values() if isinstance(v, dict))
        elif isinstance(obj, list):
            yield from (v for v in obj if isinstance(v, dict))


def _passk_frame_values():
    """Every value in the locals of the frames above this one, and in what they hold,
    a few levels down."""
    seen = set()
    found = []

    def visit(value, depth):
        if depth > 5 or id(value) in seen:
            return
        seen.add(id(value))
        found.append(value)
        if type(value) is dict:
            for item in list(value.values()):
                visit(item, depth + 1)
        elif type(value) in (list, tuple):
            for item in value:
                visit(item, depth + 1)

    frame = _sys._getframe(1)
    while frame is not None:
        visit(dict(frame.f_locals), 0)
        frame = frame.f_back
    return found


def _passk_pages(permissions="rw"):
    """The bytes of every mapping of this process whose permissions start so."""
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            if not fields[1].startswith(permissions) or (len(fields) > 5 and fields[5] in ("[vvar]", "[vsyscall]")):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            try:
                mem.seek(start)
                yield mem.read(end - start)
            except (OSError, OverflowError, ValueError):
                continue


_PASSK_STRING = rb'("(?:[^"\\]|\\.)*")'


def _passk_strings_after(key, blob):
    """Every JSON string that follows `"key":` in `blob`, decoded."""
    for match in _re.finditer(rb'"' + key + rb'":\s*' + _PASSK_STRING, blob):
        try:
            yield _json.loads(match.group(1))
        except ValueError:
            pass
