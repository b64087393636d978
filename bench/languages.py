"""passk's benchmark of function completions in other languages, beside a plain harness
that builds and runs each program as the suite's own harness does (MultiPL-E's, and
CodeGeeX's for HumanEval-X: prompt, completion and tests as one file, compiled, run,
passed when it exits 0), with the same number of workers, side by side in one run:

    cargo build --release -p passk-cli
    python3 bench/languages.py [--languages cpp,typescript] [--suites multipl-e,humaneval-x]
                               [--problems 40] [--samples 10] [--jobs 2] [--rounds 1]

Each row's samples are real-looking answers to the first --problems problems of a
released file in ../shared/benchmarks (or --benchmarks), --samples of each (n, 10 by
default, as a pass@1 estimate at a temperature takes: MultiPL-E's own runs take 20 or
200), two that compile for every one that does not. MultiPL-E's HumanEval files, in
every language, have no solutions: their answers are a wrong one (it compiles and
returns a default value, so that the tests run and fail) and one that does not compile.
HumanEval-X's C++, Java, Go, Rust and JavaScript have canonical solutions: their answers
are the canonical solution, a wrong one (its first comparison turned around) and one
that does not compile (the plain harness uses the Rust crates passk built).
Both harnesses use the same compilers: Debian's (a rustup toolchain on the PATH is not
passk's).
Every sample is distinct (--no-dedup for passk), so identical programs are no help to it
here. passk runs once before it is timed, so that the toolchains' one-time builds (C++'s
precompiled headers, Rust's crates) are not counted.

The report gives samples/s per row for each harness and their ratio. The machine is
noisy: compare ratios, not times.
"""

import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODEGEEX_CPP_INCLUDES = ["#include<stdlib.h>", "#include<algorithm>", "#include<math.h>", "#include<stdio.h>",
                         "#include<vector>", "#include<string>", "#include<climits>", "#include<cstring>",
                         "#include<iostream>"]
BROKEN = "\n@@ this does not compile @@\n"


def _cpp_program(record, completion):
    prefix = "".join(f"{include}\n" for include in CODEGEEX_CPP_INCLUDES if include not in record["prompt"])
    return prefix + record["prompt"] + completion + "\n" + record["test"]


def _go_program(record, completion):
    """CodeGeeX's assembly: test_setup, the listed packages the code names, the prompt
    without its import, the code, the tests."""
    listed = ["math", "strings", "fmt", "strconv", "time", "bytes", "regexp", "sort", "math/rand", "crypto/md5"]
    others = [f'"{name}"' for name in listed
              if name not in record["test_setup"] and name.split("/")[-1] + "." in completion]
    imports = "import (\n" + "".join(f"    {name}\n" for name in others) + ")\n" if others else ""
    prompt = record["prompt"].replace(record["import"], "")
    return record["test_setup"] + "\n" + imports + prompt + completion + "\n" + record["test"]


def _rust_program(record, completion):
    return "\nfn main(){ \n } \n" + record["declaration"] + record["prompt"] + completion + record["test"]


def _rust_crates():
    """The rlibs of rand, regex and md5 that passk built (its cache), for rustc."""
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "passk", "prebuilt")
    found = sorted(name for name in os.listdir(cache) if name.startswith("rust-")) if os.path.isdir(cache) else []
    if not found:
        return None
    built = os.path.join(cache, found[-1])
    return ["-L", f"dependency={built}"] + [argument for crate in ("rand", "regex", "md5")
                                            for argument in ("--extern", f"{crate}={built}/lib{crate}.rlib")]


def _multipl_e(record, completion):
    """MultiPL-E's assembly: the prompt, the completion, the tests."""
    return record["prompt"] + completion + "\n" + record["tests"]


# (language, suite) -> (suite file, how the plain harness assembles a program, its file
# name, how it builds it, how it runs it). Commands run in the program's own directory;
# MultiPL-E's are its own harness's (MultiPL-E/evaluation/src/eval_*.py).
SUITES = {
    ("cpp", "multipl-e"): ("multipl-e/humaneval-cpp.jsonl.gz", _multipl_e, "main.cpp",
                           ["g++", "-std=c++17", "-o", "main", "main.cpp"], ["./main"]),
    ("java", "multipl-e"): ("multipl-e/humaneval-java.jsonl.gz", _multipl_e, "Problem.java",
                            ["javac", "-cp", "/usr/share/java/javatuples.jar", "Problem.java"],
                            ["java", "-ea", "-cp", ".:/usr/share/java/javatuples.jar", "Problem"]),
    ("go", "multipl-e"): ("multipl-e/humaneval-go.jsonl.gz", _multipl_e, "main_test.go",
                          None, ["env", "GO111MODULE=off", "GOPATH=/usr/share/gocode", "go", "test", "main_test.go"]),
    ("rust", "multipl-e"): ("multipl-e/humaneval-rs.jsonl.gz", _multipl_e, "main.rs",
                            ["/usr/bin/rustc", "--edition=2021", "-o", "main", "main.rs"], ["./main"]),
    ("javascript", "multipl-e"): ("multipl-e/humaneval-js.jsonl.gz", _multipl_e, "main.js", None,
                                  ["node", "main.js"]),
    ("typescript", "multipl-e"): ("multipl-e/humaneval-ts.jsonl.gz", _multipl_e, "main.ts",
                                  ["tsc", "--target", "esnext", "main.ts"], ["node", "main.js"]),
    ("bash", "multipl-e"): ("multipl-e/humaneval-sh.jsonl.gz", _multipl_e, "main.sh", None, ["bash", "main.sh"]),
    ("cpp", "humaneval-x"): ("humaneval-x/humaneval_cpp.jsonl.gz", _cpp_program, "main.cpp",
                             ["g++", "-std=c++17", "-o", "main", "main.cpp", "-lcrypto"], ["./main"]),
    ("java", "humaneval-x"): ("humaneval-x/humaneval_java.jsonl.gz",
                              lambda record, completion: record["prompt"] + completion + "\n" + record["test"],
                              "Main.java", ["javac", "Main.java"], ["java", "-cp", ".", "Main"]),
    ("go", "humaneval-x"): ("humaneval-x/humaneval_go.jsonl.gz", _go_program, "main_test.go",
                            None, ["env", "GO111MODULE=off", "GOPATH=/usr/share/gocode", "go", "test", "main_test.go"]),
    ("rust", "humaneval-x"): ("humaneval-x/humaneval_rust.jsonl.gz", _rust_program, "main.rs",
                              ["/usr/bin/rustc", "--edition=2021", "--test", "-o", "main", "main.rs"], ["./main"]),
    ("javascript", "humaneval-x"): ("humaneval-x/humaneval_js.jsonl.gz",
                                    lambda record, completion: record["prompt"] + completion + "\n" + record["test"],
                                    "main.js", None, ["node", "main.js"]),
}

JAVA_DEFAULTS = {"long": "0l", "int": "0", "boolean": "false", "double": "0.0", "float": "0.0f", "String": '""'}


def wrong_answer(language, prompt):
    """An answer to a MultiPL-E prompt that compiles and returns what no test expects,
    closing the function where the suite's completions do (its stop tokens)."""
    declaration = prompt.rstrip().splitlines()[-1]
    if language == "cpp":
        return "    return {};\n"
    if language == "java":
        returned = re.search(r"static\s+(.+?)\s+\w+\s*\(", declaration).group(1)
        value = JAVA_DEFAULTS.get(returned, "Optional.empty()" if returned.startswith("Optional") else "null")
        return f"        return {value};\n"
    if language == "go":
        returned = re.search(r"\)\s*(.*?)\s*\{$", declaration).group(1)
        return f"    var zero {returned}\n    return zero\n}}\n"
    if language == "rust":
        return "    Default::default()\n"
    if language == "javascript":
        return "  return undefined;\n}\n"
    if language == "typescript":
        return "  return undefined as any;\n}\n"
    return "    echo wrong\n"


def records(path, count):
    with gzip.open(path, "rt") as lines:
        return [json.loads(line) for line in lines][:count]


def task_id(record):
    return record.get("task_id") or record["name"]


def wrong_of(canonical):
    """The canonical solution with its first comparison turned around."""
    for before, after in (("<=", ">"), (">=", "<"), ("==", "!="), ("<", ">="), (">", "<=")):
        if before in canonical:
            return canonical.replace(before, after, 1)
    return "\n" + canonical


def samples(language, suite, per_problem):
    """`per_problem` samples of each problem, taken in turn from its answers (two that
    compile to one that does not), each made distinct by a comment naming its place."""
    found = []
    comment = "#" if language == "bash" else "//"
    for record in suite:
        canonical = record.get("canonical_solution")
        if canonical:
            answers = [canonical, wrong_of(canonical)]
        else:
            answers = [wrong_answer(language, record["prompt"])] * 2
        answers.append(BROKEN + answers[-1])
        for index in range(per_problem):
            answer = answers[index % len(answers)]
            found.append({"task_id": task_id(record), "completion": f"\n{comment} sample {index}\n" + answer})
    return found


def plain(row, suite, items, jobs, timeout):
    """The suite's own harness's way: one file, built, run, passed on exit status 0; how
    many passed."""
    _, assemble, name, build, run = SUITES[row]
    by_id = {task_id(record): record for record in suite}
    if row[0] == "rust":
        # The crates passk built for its own run of the same samples, just before.
        build = build[:1] + (_rust_crates() or []) + build[1:]

    def one(item):
        with tempfile.TemporaryDirectory() as work:
            with open(os.path.join(work, name), "w") as program:
                program.write(assemble(by_id[item["task_id"]], item["completion"]))
            try:
                if build and subprocess.run(build, cwd=work, capture_output=True, timeout=timeout).returncode != 0:
                    return False
                return subprocess.run(run, cwd=work, capture_output=True, timeout=timeout).returncode == 0
            except subprocess.TimeoutExpired:
                return False

    with ThreadPoolExecutor(jobs) as pool:
        return sum(pool.map(one, items))


# passk's exit status when some problems cannot be judged (HumanEval-X's Rust/32, whose
# tests are commented out): their samples are `unjudgeable`, and the rest are judged.
EXIT_INVALID_PROBLEMS = 4


def _run_passk(argv):
    ran = subprocess.run(argv, capture_output=True, text=True)
    if ran.returncode not in (0, EXIT_INVALID_PROBLEMS):
        sys.exit(f"passk failed ({ran.returncode}): {ran.stderr[-2000:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passk", default=os.path.join(ROOT, "target", "release", "passk"))
    parser.add_argument("--benchmarks", default=os.path.join(os.path.dirname(ROOT), "shared", "benchmarks"))
    parser.add_argument("--languages", default=",".join(dict.fromkeys(language for language, _ in SUITES)))
    parser.add_argument("--suites", default="multipl-e,humaneval-x")
    parser.add_argument("--problems", type=int, default=40, help="the first N problems of each file")
    parser.add_argument("--samples", type=int, default=10, help="samples per problem (n)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    if not os.path.isdir(args.benchmarks):
        sys.exit(f"bench/languages.py needs the released benchmark files in {args.benchmarks} (--benchmarks)")
    wanted = [(language, suite) for suite in args.suites.split(",") for language in args.languages.split(",")]
    # Each row is printed as soon as it is measured: a run over every language is long.
    print(f"{'language (suite)':<26}{'samples':>8}{'passed (passk/plain)':>22}{'passk /s':>10}{'plain /s':>10}"
          f"{'ratio':>8}", flush=True)
    for row in [row for row in wanted if row in SUITES]:
        path = os.path.join(args.benchmarks, SUITES[row][0])
        suite = records(path, args.problems)
        items = samples(row[0], suite, args.samples)
        work = tempfile.mkdtemp(prefix=f"passk-bench-{row[0]}-")
        try:
            with open(os.path.join(work, "samples.jsonl"), "w") as out:
                out.writelines(json.dumps(item) + "\n" for item in items)
            passk = [args.passk, "evaluate", os.path.join(work, "samples.jsonl"), "--problems", path, "--partial",
                     "--jobs", str(args.jobs), "--timeout", str(args.timeout), "--no-dedup", "--k", "1", "--restart"]
            # Once before timing: the toolchain's one-time builds (Rust's crates, C++'s
            # headers) are not a run's cost, and the plain harness uses the crates.
            _run_passk(passk)
            times = {"passk": [], "plain": []}
            passed = {}
            for _ in range(args.rounds):
                started = time.perf_counter()
                _run_passk(passk)
                times["passk"].append(time.perf_counter() - started)
                with open(os.path.join(work, "samples.jsonl_results.jsonl")) as results:
                    passed["passk"] = sum(json.loads(line)["passed"] for line in results)
                started = time.perf_counter()
                passed["plain"] = plain(row, suite, items, args.jobs, args.timeout)
                times["plain"].append(time.perf_counter() - started)
            ratio = statistics.median(p / q for p, q in zip(times["plain"], times["passk"]))
            print(_row(f"{row[0]} ({row[1]})", len(items), passed["passk"], passed["plain"],
                       len(items) / statistics.median(times["passk"]), len(items) / statistics.median(times["plain"]),
                       ratio), flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _row(label, count, ours, theirs, ours_rate, theirs_rate, ratio):
    return f"{label:<26}{count:>8}{f'{ours}/{theirs}':>22}{ours_rate:>10.2f}{theirs_rate:>10.2f}{ratio:>7.2f}x"


if __name__ == "__main__":
    main()
