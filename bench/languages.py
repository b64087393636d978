"""passk's benchmark of function completions in other languages, beside a plain harness
that builds and runs each program as MultiPL-E's and CodeGeeX's do (prompt, completion
and tests as one file, compiled, run, passed when it exits 0), with the same number of
workers, side by side in one run:

    cargo build --release -p passk-cli
    python3 bench/languages.py [--languages cpp,typescript] [--problems 40] [--jobs 2] [--rounds 1]

Each language's samples are real-looking answers to the released files in
../shared/benchmarks (or --benchmarks): where the suite has canonical solutions
(HumanEval-X's C++, Java, Go, Rust and JavaScript; the plain harness assembles them as
CodeGeeX's does, and uses the Rust crates passk built) each problem gets its canonical
solution, a wrong one (the canonical with its first comparison turned around) and one
that does not compile; MultiPL-E's TypeScript and Bash have no solutions, so their
problems get a wrong answer and one that does not compile. Every sample is distinct
(--no-dedup for passk), so identical programs are no help to it here.

The report gives samples/s per language for each harness and their ratio. The machine
is noisy: compare ratios, not times.
"""

import argparse
import gzip
import json
import os
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


# language -> (suite file, how the plain harness assembles a program, its file name, how it
# builds it, how it runs it). Commands run in the program's own directory.
LANGUAGES = {
    "cpp": ("humaneval-x/humaneval_cpp.jsonl.gz", _cpp_program, "main.cpp",
            ["g++", "-std=c++17", "-o", "main", "main.cpp", "-lcrypto"], ["./main"]),
    "java": ("humaneval-x/humaneval_java.jsonl.gz",
             lambda record, completion: record["prompt"] + completion + "\n" + record["test"], "Main.java",
             ["javac", "Main.java"], ["java", "-cp", ".", "Main"]),
    "go": ("humaneval-x/humaneval_go.jsonl.gz", _go_program, "main_test.go",
           None, ["env", "GO111MODULE=off", "GOPATH=/usr/share/gocode", "go", "test", "main_test.go"]),
    "rust": ("humaneval-x/humaneval_rust.jsonl.gz", _rust_program, "main.rs",
             ["rustc", "--edition=2021", "--test", "-o", "main", "main.rs"], ["./main"]),
    "javascript": ("humaneval-x/humaneval_js.jsonl.gz",
                   lambda record, completion: record["prompt"] + completion + "\n" + record["test"], "main.js",
                   None, ["node", "main.js"]),
    "typescript": ("multipl-e/humaneval-ts.jsonl.gz",
                   lambda record, completion: record["prompt"] + completion + "\n" + record["tests"], "main.ts",
                   ["tsc", "--target", "esnext", "main.ts"], ["node", "main.js"]),
    "bash": ("multipl-e/humaneval-sh.jsonl.gz",
             lambda record, completion: record["prompt"] + completion + "\n" + record["tests"], "main.sh",
             None, ["bash", "main.sh"]),
}

# A wrong answer per language, for suites without solutions: it compiles and returns
# what no test expects.
WRONG = {"typescript": "  return undefined as any;\n}\n", "bash": "    echo wrong\n"}


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


def samples(language, suite):
    found = []
    for record in suite:
        canonical = record.get("canonical_solution")
        answers = [canonical, wrong_of(canonical)] if canonical else [WRONG[language]]
        answers.append(BROKEN + (canonical or WRONG[language]))
        for answer in answers:
            found.append({"task_id": task_id(record), "completion": answer})
    return found


def plain(language, suite, items, jobs, timeout):
    """MultiPL-E's way: one file, built, run, passed on exit status 0; how many passed."""
    _, assemble, name, build, run = LANGUAGES[language]
    by_id = {task_id(record): record for record in suite}
    if language == "rust":
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


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passk", default=os.path.join(ROOT, "target", "release", "passk"))
    parser.add_argument("--benchmarks", default=os.path.join(os.path.dirname(ROOT), "shared", "benchmarks"))
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument("--problems", type=int, default=40, help="the first N problems of each file")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    if not os.path.isdir(args.benchmarks):
        sys.exit(f"bench/languages.py needs the released benchmark files in {args.benchmarks} (--benchmarks)")
    rows = []
    for language in args.languages.split(","):
        path = os.path.join(args.benchmarks, LANGUAGES[language][0])
        suite = records(path, args.problems)
        items = samples(language, suite)
        work = tempfile.mkdtemp(prefix=f"passk-bench-{language}-")
        try:
            with open(os.path.join(work, "samples.jsonl"), "w") as out:
                out.writelines(json.dumps(item) + "\n" for item in items)
            passk = [args.passk, "evaluate", os.path.join(work, "samples.jsonl"), "--problems", path, "--partial",
                     "--jobs", str(args.jobs), "--timeout", str(args.timeout), "--no-dedup", "--k", "1", "--restart"]
            times = {"passk": [], "plain": []}
            passed = {}
            for _ in range(args.rounds):
                started = time.perf_counter()
                subprocess.run(passk, check=True, capture_output=True)
                times["passk"].append(time.perf_counter() - started)
                with open(os.path.join(work, "samples.jsonl_results.jsonl")) as results:
                    passed["passk"] = sum(json.loads(line)["passed"] for line in results)
                started = time.perf_counter()
                passed["plain"] = plain(language, suite, items, args.jobs, args.timeout)
                times["plain"].append(time.perf_counter() - started)
            ratio = statistics.median(p / q for p, q in zip(times["plain"], times["passk"]))
            rows.append((language, len(items), passed["passk"], passed["plain"],
                         len(items) / statistics.median(times["passk"]), len(items) / statistics.median(times["plain"]),
                         ratio))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{'language':<12}{'samples':>8}{'passed (passk/plain)':>22}{'passk /s':>10}{'plain /s':>10}{'ratio':>8}")
    for language, count, ours, theirs, ours_rate, theirs_rate, ratio in rows:
        print(f"{language:<12}{count:>8}{f'{ours}/{theirs}':>22}{ours_rate:>10.2f}{theirs_rate:>10.2f}{ratio:>7.2f}x")


if __name__ == "__main__":
    main()
