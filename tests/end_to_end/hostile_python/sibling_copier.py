# A completion of basic/0 that implements nothing and takes another sample's code: any
# program the driver held as a request's code (in the collector's objects or in its
# pages), run to see whether it defines a working `running_max`. Follows memory.py.


def _passk_programs():
    for found in _passk_dicts():
        for key in ("candidate", "program"):
            if isinstance(found.get(key), str):
                yield found[key]
    for blob in _passk_pages():
        for key in (b"candidate", b"program"):
            yield from _passk_strings_after(key, blob)


for _text in _passk_programs():
    if "_passk_programs" in _text:
        continue
    _space = {}
    try:
        exec(_text, _space)
        if _space["running_max"]([1, 3, 2]) == [1, 3, 3]:
            running_max = _space["running_max"]
            break
    except BaseException:
        continue
