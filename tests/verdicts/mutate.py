"""Makes honest-but-wrong samples for a HumanEval-format problem set.

For each problem: its canonical solution, an empty completion, a completion that returns
None, and up to MUTANTS_PER_PROBLEM mutants of the canonical solution (a comparison or
operator swapped, a constant moved by one, a condition negated, a return emptied, `and`
and `or` swapped). Mutants are whole programs (`solution`), the rest are completions, so
both of passk's input forms are exercised.

Every mutant is run once here, briefly, and dropped if it has not finished within
SCREEN_SECONDS: the comparison is about verdicts, and a sample that runs near the time
limit would make any two harnesses disagree by chance.

    python3 mutate.py PROBLEMS OUT [--seed N]
"""

import argparse
import ast
import copy
import gzip
import json
import os
import random
import resource
import select
import signal

MUTANTS_PER_PROBLEM = 6
SCREEN_SECONDS = 1.0

COMPARE_SWAPS = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
BINOP_SWAPS = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult,
}


def read_jsonl(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def sites(tree, first_line):
    """(position in ast.walk order, mutation) for every mutable spot in the solution."""
    found = []
    for index, node in enumerate(ast.walk(tree)):
        if getattr(node, "lineno", 0) < first_line:
            continue
        if isinstance(node, ast.Compare):
            found += [(index, ("compare", i)) for i, op in enumerate(node.ops) if type(op) in COMPARE_SWAPS]
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in BINOP_SWAPS:
            found.append((index, ("binop",)))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            found += [(index, ("constant", 1)), (index, ("constant", -1))]
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            found.append((index, ("bool",)))
        elif isinstance(node, ast.BoolOp):
            found.append((index, ("boolop",)))
        elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
            found.append((index, ("negate",)))
        elif isinstance(node, ast.Return) and node.value is not None:
            found.append((index, ("return-none",)))
    return found


def apply(tree, index, mutation):
    tree = copy.deepcopy(tree)
    node = list(ast.walk(tree))[index]
    kind = mutation[0]
    if kind == "compare":
        node.ops[mutation[1]] = COMPARE_SWAPS[type(node.ops[mutation[1]])]()
    elif kind == "binop":
        node.op = BINOP_SWAPS[type(node.op)]()
    elif kind == "constant":
        node.value += mutation[1]
    elif kind == "bool":
        node.value = not node.value
    elif kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "negate":
        node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
    elif kind == "return-none":
        node.value = None
    return ast.unparse(ast.fix_missing_locations(tree)), f"{kind} at line {node.lineno}"


def finishes_quickly(program):
    """Runs `program` in a throwaway child; True if it ends within SCREEN_SECONDS."""
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
            os.setsid()
            exec(program, {})
        finally:
            os._exit(0)
    pidfd = os.pidfd_open(pid)
    ready, _, _ = select.select([pidfd], [], [], SCREEN_SECONDS)
    if not ready:
        os.killpg(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(pidfd)
    return bool(ready)


def samples_for(problem, rng):
    task_id = problem["task_id"]
    yield {"task_id": task_id, "completion": problem["canonical_solution"], "kind": "canonical"}
    yield {"task_id": task_id, "completion": "", "kind": "empty"}
    yield {"task_id": task_id, "completion": "    return None\n", "kind": "wrong: returns None"}
    source = problem["prompt"] + problem["canonical_solution"]
    tree = ast.parse(source)
    first_line = problem["prompt"].count("\n") + 1
    original = ast.unparse(tree)
    candidates = sites(tree, first_line)
    rng.shuffle(candidates)
    seen = {original}
    made = 0
    for index, mutation in candidates:
        if made == MUTANTS_PER_PROBLEM:
            break
        solution, description = apply(tree, index, mutation)
        if solution in seen:
            continue
        seen.add(solution)
        program = solution + "\n" + problem["test"] + "\n" + f"check({problem['entry_point']})"
        if finishes_quickly(program):
            made += 1
            yield {"task_id": task_id, "solution": solution, "kind": "mutant: " + description}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("problems")
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=2021)
    args = parser.parse_args()
    count = 0
    with open(args.out, "w") as out:
        for number, problem in enumerate(read_jsonl(args.problems)):
            for sample in samples_for(problem, random.Random(args.seed * 100003 + number)):
                out.write(json.dumps(sample) + "\n")
                count += 1
    print(count)


if __name__ == "__main__":
    main()
