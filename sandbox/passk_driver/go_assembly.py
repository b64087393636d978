"""Go function completions (HumanEval-X's, MultiPL-E's), assembled for programs.py: the
candidate's code with go_serve.go after it, and the problem's helpers and tests around
a stand-in for the entry point (go_judge.go); values cross as go_wire.go writes them.

Each program is one file of package main. Go wants every import before the first
declaration and every import used, so the imports of the problem's code, of go_wire.go
and of go_serve.go or go_judge.go are gathered into one declaration at the top (the
driver's under names of their own), and the problem's are those its suite's harness
gives the program:
- MultiPL-E's harness runs the prompt, completion and tests as one test file: the
  prompt's imports ("testing", "fmt") are the tests' as much as the candidate's.
- CodeGeeX's, for HumanEval-X (its programs begin with the problem's test_setup, which
  imports testify), runs test_setup, then imports of the packages of its list that
  the completion names, then the prompt without its own imports, completion and tests.
Either way an import the tests use is never unused there; in the candidate's program,
which has no tests, a reference to each keeps it so (testify, which only tests use, is
left out: a candidate's build would compile it for every sample)."""

import re

from .programs import template

# The tests' program is the tests themselves: it passes by returning from their main.
VERDICT_BY_EXIT = True

_TESTIFY = "github.com/stretchr/testify/assert"
# CodeGeeX's IMPORT_HELPER["go"] (codegeex/benchmark/utils.py).
_CODEGEEX_IMPORTS = ("math", "strings", "fmt", "strconv", "time", "bytes", "regexp", "sort", "math/rand", "crypto/md5")
# MultiPL-E's tests use the prompt's imports of these.
_MULTIPL_E_TESTS_USE = ("testing", "fmt")
# A function of each package the suites' harnesses import, which a reference keeps used.
_USED_BY = {"testing": "Short", "fmt": "Sprint", "math": "Abs", "strings": "Contains", "strconv": "Itoa",
            "time": "Now", "bytes": "Equal", "regexp": "MustCompile", "sort": "Ints", "math/rand": "Intn",
            "crypto/md5": "Sum"}

_SPACE = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
_PACKAGE = re.compile(r"package\s+\w+[ \t]*;?")
_IMPORT = re.compile(r"import\b\s*")
_SPEC = re.compile(r'(?:([A-Za-z_]\w*|\.)\s+)?"([^"\\\n]*)"[ \t]*;?')
_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|`[^`]*`|\'(?:\\.|[^\'\\\n])*\'', re.S)
_TEST = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)
_MAIN = re.compile(r"^(func\s+)main(?=\s*\()", re.M)
# What a candidate's own func main is called in its program, whose main is go_serve.go's.
_CANDIDATES_MAIN = "passk_candidates_main"


def serving_source(code, entry, declaration, driver):
    declarations, rest, line = _split(code)
    harness = declarations[0] if declarations else []
    codegeex = any(path == _TESTIFY for _, path in harness)
    imports = [spec for spec in harness if spec[1] != _TESTIFY]
    # What the tests may use: test_setup's imports, or MultiPL-E's two.
    tests_use = [spec for spec in imports if codegeex or spec[1] in _MULTIPL_E_TESTS_USE]
    used = "".join(f"var _ = {_name(spec)}.{_USED_BY[spec[1]]}\n" for spec in tests_use
                   if spec[1] in _USED_BY and spec[0] not in ("_", "."))
    if codegeex:
        # The declarations after test_setup's are the prompt's, which CodeGeeX drops;
        # `pkg not in test_setup` is its test, on test_setup's text. CodeGeeX adds a
        # package where `name.` is anywhere in the completion's text, and so fails an
        # honest answer that says `runtime.` (time) or names a package in a comment
        # with "imported and not used"; here it is a package's name used in the code.
        test_setup = " ".join(path for _, path in harness)
        at = rest.find(declaration)
        completion = rest[at + len(declaration):] if at >= 0 else rest
        named = _qualifiers(completion)
        imports += [(None, path) for path in _CODEGEEX_IMPORTS
                    if path not in test_setup and path.rsplit("/", 1)[-1] in named]
        # And the imports after test_setup's that the code uses: every prompt's are of
        # CodeGeeX's list, which the line above adds where used; a solution's own may not be.
        words = _qualifiers(rest)
        imports += [spec for specs in declarations[1:] for spec in specs
                    if _name(spec) in words or spec[0] in ("_", ".")]
    else:
        imports += [spec for specs in declarations[1:] for spec in specs]
    # Without a type (a generic function's), the tests cannot be assembled either, and
    # the problem is unjudgeable (see tests_source).
    serve = template("go_serve.go", entry=entry, signature=_signature(declaration, entry) or "")
    rest = _rename_main(rest)
    # Compile errors name the lines of the code as the candidate wrote it.
    return _program(imports, f"//line main.go:{line}\n{rest}\n{used}",
                    [("go_wire.go", template("go_wire.go")), ("go_serve.go", serve)])


def tests_source(helpers, declaration, entry, tests, driver):
    signature = _signature(declaration, entry)
    if signature is None:
        raise ValueError(f"passk cannot take the type of {entry} from its declaration: {declaration}")
    names = _TEST.findall(tests)
    if not names:
        raise ValueError("the problem's tests declare no func TestX(t *testing.T)")
    declarations, code, _ = _split(helpers)
    # Every import of the helpers' code, test_setup's and the prompt's, that the helpers
    # or the tests use (Go refuses the others).
    words = _qualifiers(code + "\n" + tests)
    imports = [spec for specs in declarations for spec in specs if _name(spec) in words or spec[0] in ("_", ".")]
    judge = template("go_judge.go", helpers=code, entry=entry, signature=signature,
                     tests=f"//line tests:1\n{tests}", tests_list="".join(f'{{"{name}", {name}}}, ' for name in names))
    return _program(imports, "", [("go_wire.go", template("go_wire.go")), ("go_judge.go", judge)])


def failure(said):
    """What the tests' report says failed (`said`: its lines): the first test that
    failed, innermost, and what it logged; None if it names none."""
    for at, line in enumerate(said):
        found = re.match(r"\s*--- FAIL: (\S+)", line)
        if not found or (at + 1 < len(said) and said[at + 1].lstrip().startswith("--- FAIL: ")):
            continue
        logged = []
        for text in (later.strip() for later in said[at + 1:]):
            if text.startswith("--- ") or text in ("FAIL", "PASS") or (not text and logged):
                break
            if text and not text.startswith(("Error Trace:", "Test:")):
                logged.append(text)
        detail = " ".join(" ".join(text.split()) for text in logged)
        return f"{found.group(1)} failed" + (f": {detail[:400]}" if detail else "")
    return None


def _rename_main(code):
    """`code` with its own func main, if it has one, under another name. The suites'
    harnesses build the candidate's code into a test binary (MultiPL-E's package
    `x_test`, `go test` of CodeGeeX's package main), where a func main is a function
    nobody calls: it builds and the tests decide. Here the program's main is the serving
    one, which the candidate's would clash with."""
    noise = [found.span() for found in _NOISE.finditer(code)]

    def rename(found):
        inside = any(start <= found.start() < end for start, end in noise)
        return found.group(0) if inside else found.group(1) + _CANDIDATES_MAIN

    return _MAIN.sub(rename, code)


def _signature(declaration, entry):
    """The entry point's type, from its declaration (`func name(...) result {`): None for
    a generic function, which has none until instantiated."""
    found = re.match(r"\s*func\s+" + re.escape(entry) + r"\s*(\(.*)$", declaration)
    if found is None:
        return None
    return "func" + found.group(1).rstrip().removesuffix("{").rstrip()


def _qualifiers(code):
    """The names `code` qualifies another with (`name.`: a package's, where it is
    one), outside its comments and strings."""
    return set(re.findall(r"\b(\w+)\s*\.", _NOISE.sub(" ", code)))


def _name(spec):
    """The name an import spec declares: its own, or its path's last element."""
    name, path = spec
    return name or path.rsplit("/", 1)[-1]


def _split(source):
    """`source`'s import declarations (each a list of (name or None, path)), and the code
    after them, without its package clause, and the line that code starts on."""
    declarations = []
    at = _SPACE.match(source).end()
    found = _PACKAGE.match(source, at)
    if found:
        at = found.end()
    while True:
        found = _IMPORT.match(source, _SPACE.match(source, at).end())
        if not found:
            break
        specs, end = _specs(source, found.end())
        if specs is None:
            # Not an import the compiler would take: it says why, from the code after.
            break
        declarations.append(specs)
        at = end
    return declarations, source[at:], source.count("\n", 0, at) + 1


def _specs(source, at):
    """The import specs of a declaration whose keyword ends at `at`, and where it ends."""
    if not source.startswith("(", at):
        found = _SPEC.match(source, at)
        return ([found.groups()], found.end()) if found else (None, at)
    specs, at = [], at + 1
    while True:
        at = _SPACE.match(source, at).end()
        if source.startswith(")", at):
            return specs, at + 1
        found = _SPEC.match(source, at)
        if not found:
            return None, at
        specs.append(found.groups())
        at = found.end()


def _program(imports, code, parts):
    """One file of package main: `imports`, then `code`, then the driver's files `parts`
    (name and text), each after a //line directive naming it, their imports at the top."""
    body = [code]
    for name, text in parts:
        declarations, rest, line = _split(text)
        imports = imports + [spec for specs in declarations for spec in specs]
        body.append(f"//line {name}:{line}\n{rest}")
    unique = list(dict.fromkeys(imports))
    lines = "".join(f'\t{name + " " if name else ""}"{path}"\n' for name, path in unique)
    return f"package main\n\nimport (\n{lines})\n" + "\n".join(body)
