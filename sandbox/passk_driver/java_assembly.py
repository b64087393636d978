"""Java function completions (HumanEval-X's, MultiPL-E's), assembled for programs.py:
the candidate's code with java_serve.java after it, and the problem's helpers and tests
around a stand-in for the entry point (java_judge.java); values cross as java_wire.java,
compiled once onto both programs' classes' path (languages.toml's `prebuilt`), writes
them.

The suites place the entry point and their tests differently, and a static entry point is
taken for MultiPL-E's shape, an instance method for HumanEval-X's. MultiPL-E's is a static
method of `class Problem`, and its tests close the method, put their main in the same
class and close it; its harness runs them with assertions on (`java -ea`). HumanEval-X's
is an instance method of `class Solution`, whose class the completion closes, and its
tests are a `public class Main` of their own that call it on a `new Solution()`; its
harness runs them with assertions off. The tests' program runs with them on either way
(languages.toml's `judge_run`): an assertion in the tests is there to be checked."""

import re

from .programs import JAVA_NOISE, JAVA_TYPE, template, top_level_split

# The tests' program is the tests themselves: it passes by returning from their main.
VERDICT_BY_EXIT = True


def serving_source(code, entry, declaration, driver):
    head = _head(declaration)
    found = _named(head, entry)
    static = found is not None and re.search(r"\bstatic\b", head[:found.start()]) is not None
    # The class the prompt declares the entry point in (Java declares nothing outside one).
    at = _declared_at(code, declaration, entry)
    owner = ".".join(name for name in _open_blocks(code[:at if at >= 0 else len(code)]) if name) or "Main"
    signature = head if found is None else head[:found.start()] + "passkSignature_" + head[found.end() - 1:]
    # MultiPL-E's completion leaves its class open, which is closed here; an answer that
    # holds the whole class (a solution) closes it itself.
    close = "}\n" * len(_open_blocks(code)) if static else ""
    return code + "\n" + template("java_serve.java", close=close, owner=owner,
                                  assertions="true" if static else "false", entry=entry,
                                  signature=signature + " { throw null; }")


def tests_source(helpers, declaration, entry, tests, driver):
    head = _head(declaration)
    found = _named(head, entry)
    names = None if found is None else _parameter_names(head, found.end())
    if names is None:
        raise ValueError(f"passk cannot tell the names of the parameters of {entry} from its declaration: "
                         f"{declaration}")
    before = head[:found.start()]
    # HumanEval-X's tests are a class of their own, after the entry point's, which is closed
    # here; MultiPL-E's close it themselves.
    close = "" if re.search(r"\bstatic\b", before) else "}\n" * len(_open_blocks(helpers))
    call = ("PasskWire.call(new java.lang.Object() {}.getClass().getEnclosingMethod(), "
            f"new java.lang.Object[] {{{', '.join(names)}}});")
    returned = "" if re.search(r"\bvoid\s*$", before) else "return "
    lines = ", ".join(_java_string(line) for line in tests.split("\n"))
    # The tests begin after the static block's line and the closing braces.
    after = 1 + close.count("\n")
    stand_in = (f"{head} {{\n        {returned}{call}\n    }}\n"
                f"    static {{ PasskWire.judging({after}, new java.lang.String[] {{{lines}}}); }}\n")
    return template("java_judge.java", helpers=helpers, stand_in=stand_in, close=close, tests=tests)


def _declared_at(code, declaration, entry):
    """Where `code` declares the entry point: at the prompt's declaration where the code
    repeats it, else at the first method of that name that has a body (a solution's own
    line, written otherwise); -1 if none does."""
    at = code.find(declaration)
    if at >= 0:
        return at
    blanked = JAVA_NOISE.sub(lambda found: re.sub(r"[^\n]", " ", found.group(0)), code)
    for found in re.finditer(r"[\w>\]]\s+(" + re.escape(entry) + r")\s*\(", blanked):
        word = re.search(r"(\w+)\s+$", blanked[:found.start(1)])
        if word and word.group(1) in ("return", "new", "throw", "else", "case"):
            continue
        names = _parameter_names(blanked, found.end())
        depth, end = 1, found.end()
        while end < len(blanked) and depth:
            depth += {"(": 1, ")": -1}.get(blanked[end], 0)
            end += 1
        if names is not None and re.match(r"\s*(throws\s[^{;]*)?\{", blanked[end:]):
            return found.start(1)
    return -1


def _head(declaration):
    """The declaration without its body's opening brace."""
    return declaration.rstrip().removesuffix("{").rstrip()


def _named(head, entry):
    """Where the entry point's name and its opening parenthesis are in `head`."""
    return re.search(r"\b" + re.escape(entry) + r"\s*\(", head)


def _parameter_names(head, start):
    """The names of the parameters whose list begins at `start` in `head`; None if one
    has no name."""
    depth, end = 1, start
    while end < len(head) and depth:
        depth += {"(": 1, ")": -1}.get(head[end], 0)
        end += 1
    if depth:
        return None
    names = []
    for parameter in top_level_split(head[start:end - 1]):
        if not parameter.strip():
            continue
        words = re.findall(r"[A-Za-z_$][\w$]*", re.sub(r"@[\w.]+(\([^)]*\))?", " ", parameter))
        if len(words) < 2 or not re.search(r"[A-Za-z_$][\w$]*\s*(\[\s*\]\s*)*$", parameter):
            return None
        names.append(words[-1])
    return names


def _open_blocks(code):
    """The blocks still open at the end of `code`, outermost first: a class's name for a
    class's body, None for any other block."""
    blocks, named = [], None
    for found in re.finditer(r"\b" + JAVA_TYPE + "|[{}]", JAVA_NOISE.sub(" ", code)):
        if found.group(1):
            named = found.group(1)
        elif found.group(0) == "{":
            blocks.append(named)
            named = None
        elif found.group(0) == "}" and blocks:
            blocks.pop()
    return blocks


def _java_string(text):
    """`text` as a Java string literal. Control characters are octal escapes: a Unicode
    escape of a line break would end the literal, since javac reads those first."""
    escaped = "".join("\\" + char if char in '"\\' else f"\\{ord(char):03o}" if ord(char) < 0x20 else char
                      for char in text)
    return f'"{escaped}"'
