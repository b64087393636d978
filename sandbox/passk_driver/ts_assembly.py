"""TypeScript function completions (MultiPL-E's), assembled for programs.py. tsc checks
and transpiles the candidate's code, as MultiPL-E's harness has it, and js_serve.js
serves calls of its entry point from the JavaScript; the problem's helpers and tests are
checked against the entry point's declared type and transpiled once per problem, and
js_judge.js runs them with a stand-in for the entry point, as for JavaScript."""

# js_judge.js writes its verdict.
VERDICT_BY_EXIT = False


# What MultiPL-E's tests begin with, which its harness puts in the one file with the
# candidate's code: an honest answer may use `require` (HumanEval_162's crypto) and
# type-checks there. Type-only: it changes nothing the program does.
_TESTS_DECLARE = "\ndeclare var require: any;\n"


def serving_source(code, entry, declaration, driver):
    return code + _TESTS_DECLARE


def tests_source(helpers, declaration, entry, tests, driver):
    head = declaration.rstrip().removesuffix("{").rstrip()
    if not head.startswith(("function ", "export function ")):
        raise ValueError(f"passk cannot take {entry}'s type from its declaration: {declaration}")
    # Declared, not defined: the tests type-check against it, and js_judge.js puts the
    # stand-in in its place.
    return f"{helpers}\ndeclare {head.removeprefix('export ')};\n{tests}"
