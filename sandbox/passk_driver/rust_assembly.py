"""Rust function completions (HumanEval-X's, MultiPL-E's), assembled for programs.py:
the candidate's code with rust_serve.rs after it, and the problem's helpers and tests
around a stand-in for each entry point (rust_judge.rs); values cross as rust_wire.rs
writes them.

A problem's `declaration` is one line per entry point: HumanEval-X's Rust tests call a
function or two that only its canonical solution declares (encode_cyclic beside
decode_cyclic), and each is served and stood in for."""

import re

from .programs import template, top_level_split

# The tests' program is the tests themselves (a test harness): it passes by ending with
# status 0.
VERDICT_BY_EXIT = True

# What the wire carries (rust_wire.rs): the words a parameter's or the result's type may
# be made of, the standard library's paths to them included.
_CARRIED = {
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32", "f64",
    "bool", "char", "str", "String", "Vec", "VecDeque", "HashMap", "HashSet", "BTreeMap", "BTreeSet", "Option",
    "Box", "dyn", "Any", "mut", "std", "collections", "string", "vec", "option", "boxed", "any",
}
_DECLARATION = re.compile(
    r"^(?:pub(?:\s*\([^)]*\))?\s+)?(?:(?:const|async|unsafe)\s+)*fn\s+(?P<name>[A-Za-z_]\w*)\s*(?P<generics><[^()]*>)?\s*\(")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def serving_source(code, entry, declaration, driver):
    """The candidate's code made a program that serves calls of each entry point."""
    try:
        entries = [_parsed(line) for line in declaration.splitlines() if line.strip()]
    except ValueError:
        # The tests cannot be judged (see tests_source); the code is still built, so
        # that a sample that does not compile says so.
        return code + "\nfn main() {}\n"
    arms = "".join(_arm(index, *parsed) for index, parsed in enumerate(entries))
    return code + "\n" + template("rust_serve.rs", driver=driver, arms=arms)


def tests_source(helpers, declaration, entry, tests, driver):
    """The tests' program: the helpers, a stand-in for each entry point, the tests."""
    entries = [_parsed(line) for line in declaration.splitlines() if line.strip()]
    if not entries:
        raise ValueError(f"passk found no declaration of {entry} to stand in for")
    code = _COMMENTS.sub(" ", tests)
    # MultiPL-E's tests are a main; HumanEval-X's are #[test] functions, which the test
    # harness runs (the tests' program is built with --test).
    if re.search(r"^\s*fn\s+main\s*\(", code, re.M):
        runs_main = "#[test]\nfn passk_main() {\n    main()\n}\n"
    elif "#[test]" in code:
        runs_main = ""
    else:
        raise ValueError("the problem's tests run nothing (they are commented out): every sample would pass them")
    stand_ins = "".join(_stand_in(index, *parsed) for index, parsed in enumerate(entries))
    return template("rust_judge.rs", driver=driver, helpers=helpers, stand_ins=stand_ins, tests=tests,
                    runs_main=runs_main)


def _parsed(line):
    """An entry point's name, generics, parameters' types and result type (None for
    none), from the line that declares it; ValueError where the wire cannot carry them."""
    head = line.strip().removesuffix("{").strip()
    found = _DECLARATION.match(head)
    close = _closing(head, found.end() - 1) if found else None
    rest = head[close + 1:].strip() if close else ""
    if close is None or not (rest == "" or rest.startswith("->")):
        raise ValueError(f"passk cannot read the entry point's declaration: {head}")
    name, generics = found.group("name"), found.group("generics") or ""
    result = rest.removeprefix("->").strip() or None
    types = []
    for parameter in top_level_split(head[found.end():close]):
        if parameter.strip():
            colon = re.search(r"(?<!:):(?!:)", parameter)
            if colon is None:
                raise ValueError(f"passk cannot read the parameter {parameter.strip()!r} of {name}")
            types.append(parameter[colon.end():].strip())
    for type_ in types + ([result] if result else []):
        _check_carried(name, type_)
    return name, generics, types, result


def _closing(text, opening):
    """Where the bracket at `opening` closes in `text`; None if it does not."""
    depth = 0
    for at in range(opening, len(text)):
        if text[at] in "<([{":
            depth += 1
        elif text[at] in ">)]}" and not (text[at] == ">" and text[at - 1] == "-"):
            depth -= 1
            if depth == 0:
                return at
    return None


def _check_carried(name, type_):
    """ValueError unless the wire carries values of `type_`, a type in `name`'s signature."""
    uncarried = [word for word in re.findall(r"(?<!')\b[A-Za-z_]\w*", type_) if word not in _CARRIED]
    if uncarried or re.search(r"[^\w\s&'<>,()\[\]:]", type_):
        raise ValueError(f"passk cannot pass values of type {type_} between processes ({name}'s signature)")


def _arm(index, name, generics, types, result):
    """The serving `match`'s arm for entry point `index`: its arguments read, then the
    call, through a pointer of the declared type, which the tests' program writes and
    reads (a candidate's function of another type is a compile error, as a C++ one is).
    Every name is passk's own or a path, so that none of the code's shadows it."""
    lifetimes = re.findall(r"'\w+", generics)
    bound = f"for<{', '.join(lifetimes)}> " if lifetimes else ""
    arguments = [f"passk_argument_{at}" for at in range(len(types))]
    takes = "".join(f"            let {argument} = passk_wire::Take::take(passk_input)?;\n" for argument in arguments)
    returns = f" -> {result}" if result else ""
    return (f"        {index} => {{\n"
            f"            let passk_entry: {bound}fn({', '.join(types)}){returns} = {name};\n"
            f"{takes}"
            f"            ::std::result::Result::Ok(passk_wire::answer(move || passk_entry({', '.join(arguments)})))\n"
            f"        }}\n")


def _stand_in(index, name, generics, types, result):
    """The entry point's stand-in in the tests' program: a function of its declared type
    (so that the tests call it as they would the candidate's) that passes its arguments
    to the candidate's process."""
    parameters = ", ".join(f"passk_argument_{at}: {type_}" for at, type_ in enumerate(types))
    puts = "".join(f"        passk_wire::Put::put(&passk_argument_{at}, passk_out)?;\n" for at in range(len(types)))
    returns = f" -> {result}" if result else ""
    return (f"fn {name}{generics}({parameters}){returns} {{\n"
            f"    passk_wire::call({index}, \"{name}\", |passk_out| {{\n"
            f"{puts}"
            f"        ::std::result::Result::Ok(())\n"
            f"    }})\n"
            f"}}\n")
