"""C++ function completions (HumanEval-X's, MultiPL-E's), assembled for programs.py:
the candidate's code with cpp_serve.cpp after it, and the problem's helpers and tests
around a stand-in for the entry point (cpp_judge.cpp); values cross as cpp_wire.hpp
writes them.

The serving code can also be a source of its own (`serving_object`), compiled once per
problem and linked with each candidate's code compiled alone: the wire's templates,
instantiated for the entry point's types, are most of a build's time. It holds the
problem's includes (the `#include` and `using namespace` lines of the prompt's code,
never the candidate's), the entry point's declaration and the serving main; where
it does not compile (a type of the prompt's own in the declaration), or the candidate's
code does not define the entry point as declared, the two are built as one source."""

import re

from .programs import template, top_level_split

# The tests' program is the tests themselves: it passes by returning from their main.
VERDICT_BY_EXIT = True


def serving_source(code, entry, declaration, driver):
    return code + "\n" + template("cpp_serve.cpp", driver=driver, entry=entry, signature=_signature(declaration, entry))


_COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.S)
_USING = re.compile(r"using\s+namespace\s+[\w:]+\s*;")


def _blanked(found):
    """A comment as the lines it spans, empty; a string as it is."""
    text = found.group(0)
    return text if text.startswith('"') else "\n" * text.count("\n")


def serving_object(helpers, entry, declaration, driver):
    """The serving code as a source of its own, from the problem's `helpers` (the
    prompt's code before the entry point): its includes and `using namespace` lines
    (outside its comments), the entry point declared, and the serving main."""
    kept = [line for line in _COMMENT.sub(_blanked, helpers).split("\n")
            if line.strip().startswith("#include") or _USING.fullmatch(line.strip())]
    head = declaration.rstrip().removesuffix("{").rstrip()
    return "\n".join(kept) + f"\n{head};\n" + template("cpp_serve.cpp", driver=driver, entry=entry,
                                                        signature=_signature(declaration, entry))


def tests_source(helpers, declaration, entry, tests, driver):
    stand_in = _stand_in(declaration, entry)
    if stand_in is None:
        raise ValueError(f"passk cannot tell the names of the parameters of {entry} from its declaration: {declaration}")
    return template("cpp_judge.cpp", driver=driver, entry=entry, helpers=helpers,
                    signature=_signature(declaration, entry), stand_in=stand_in, tests=tests)


def _signature(declaration, entry):
    """The entry point's declaration, renamed `passk_signature_` and without its body,
    from which the stand-in takes its type."""
    head = declaration.rstrip().removesuffix("{").rstrip()
    return re.sub(r"\b" + re.escape(entry) + r"\b", "passk_signature_", head, count=1) + ";"


def _stand_in(declaration, entry):
    """The entry point's stand-in in the tests' program: a function of its declared type
    (so that the tests call it as they would the candidate's, overloads and all) that
    passes its arguments to the candidate's process. None if a parameter has no name."""
    head = declaration.rstrip().removesuffix("{").rstrip()
    found = re.search(r"\b" + re.escape(entry) + r"\s*\(", head)
    if found is None or not head.endswith(")"):
        return None
    parameters = head[found.end():-1]
    names = []
    for parameter in top_level_split(parameters):
        parameter = parameter.split("=", 1)[0].strip()
        words = re.findall(r"[A-Za-z_]\w*", parameter)
        if not parameter:
            continue
        if len(words) < 2 or not re.search(r"[A-Za-z_]\w*\s*(\[\s*\])?$", parameter):
            return None
        names.append(words[-1])
    arguments = "".join(", " + name for name in names)
    return (f'{head} {{ return passk_wire::call(static_cast<decltype(&passk_signature_)>(nullptr), '
            f'"{entry}"{arguments}); }}')
