"""passk beside EvalPlus's own `evalplus.evaluate` (EvalPlus 0.3.1 from PyPI) on the real
HumanEval+ and MBPP+ files, in one run, with the same number of workers:

    cargo build --release -p passk-cli
    python3 bench/evalplus.py [--jobs 2] [--sets humaneval,mbpp] [--benchmarks DIR]

DIR holds HumanEvalPlus-v0.1.10.jsonl.gz and MbppPlus-v0.2.0.jsonl.gz (default: the
project's ../shared/benchmarks/evalplus, or what problems/fetch-benchmark leaves in
problems/released). EvalPlus is installed with pip into a virtual environment under
problems/evalplus/ on the first run.

For each set, two sample files: every canonical solution, and a degraded copy where a
third of them are wrong (every third problem's sample returns None or raises). Each is
evaluated on every input (base and plus) twice by each harness: first with an empty
cache, so that the run computes the expected outputs, then again with them cached. The
report gives each time, passk's share of EvalPlus's time, and how many samples each
harness passed, which must agree.

EvalPlus's wall time is the work rounded up: it exits only when a thread of its own that
looks for stuck samples wakes from a 20 s sleep. The report also gives when EvalPlus
wrote its report, the end of its work.

Beside them, the floor of any harness that runs each sample apart from the process that
computed the expected outputs: the canonical solutions' own work, every input called in
one `python3` process with nothing else done, spread over the workers. A first run
computes the expected outputs and then judges the samples, so its floor is that work
for every problem and again for the samples that are right answers, and never less than
the longest problem's two runs one after the other.
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = {"humaneval": "HumanEvalPlus-v0.1.10.jsonl.gz", "mbpp": "MbppPlus-v0.2.0.jsonl.gz"}
EVALPLUS = "evalplus==0.3.1"


def evalplus_python(venv):
    """The interpreter of a virtual environment holding EvalPlus 0.3.1, made if need be."""
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(os.path.join(venv, "installed")):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", EVALPLUS], check=True)
        open(os.path.join(venv, "installed"), "w").close()
    return python


def benchmarks_dir(given):
    for folder in ([given] if given else [os.path.join(ROOT, "..", "shared", "benchmarks", "evalplus"),
                                          os.path.join(ROOT, "problems", "released")]):
        if all(os.path.exists(os.path.join(folder, name)) for name in SETS.values()):
            return folder
    sys.exit("no HumanEval+ and MBPP+ files: fetch them with `problems/fetch-benchmark humaneval-plus mbpp-plus`, "
             "or name their folder with --benchmarks")


def write_samples(problems, path, degraded):
    """One sample per problem: its canonical solution, or in the degraded copy, for every
    third problem, a function that returns None or raises."""
    passing = 0
    with open(problems) as lines, open(path, "w") as out:
        for index, line in enumerate(lines):
            problem = json.loads(line)
            completion = problem["canonical_solution"]
            if degraded and index % 3 == 0:
                body = "    return None\n" if index % 2 == 0 else "    raise ValueError('degraded')\n"
                completion = f"\ndef {problem['entry_point']}(*args, **kwargs):\n{body}"
            out.write(json.dumps({"task_id": problem["task_id"], "completion": completion}) + "\n")
            passing += 1
    return passing


def timed(command, env=None):
    started = time.perf_counter()
    finished = subprocess.run(command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    return seconds, finished


def run_passk(args, problems, samples, cache, results):
    command = [args.passk, "evaluate", samples, "--problems", problems, "--jobs", str(args.jobs), "--k", "1",
               "--no-dedup", "--cache-dir", cache, "--restart", "--results", results]
    seconds, finished = timed(command)
    # Exit 0; or 4 when some problems cannot be judged, which the report counts.
    if finished.returncode not in (0, 4):
        sys.exit(f"passk exited {finished.returncode}: {finished.stderr[-2000:]}")
    lines = [json.loads(line) for line in open(results)]
    unjudgeable = sum(line["status"] == "unjudgeable" for line in lines)
    return seconds, sum(line["passed"] for line in lines), unjudgeable


def run_evalplus(args, python, dataset, problems, samples, cache):
    env = dict(os.environ, XDG_CACHE_HOME=cache, HUMANEVAL_OVERRIDE_PATH=problems, MBPP_OVERRIDE_PATH=problems)
    report_path = samples.replace(".jsonl", "_eval_results.json")
    # Otherwise EvalPlus asks on its standard input whether to overwrite it.
    if os.path.exists(report_path):
        os.remove(report_path)
    command = [python, "-m", "evalplus.evaluate", dataset, "--samples", samples, "--parallel", str(args.jobs),
               "--i_just_wanna_run"]
    began = time.time()
    seconds, finished = timed(command, env)
    if finished.returncode != 0:
        sys.exit(f"evalplus.evaluate exited {finished.returncode}: {finished.stderr[-2000:]}")
    # EvalPlus writes its report once every sample is judged, then exits only when a
    # thread of its own that checks for stuck samples wakes from its 20 s sleep: its wall
    # time is that work rounded up to the checker's next wake-up.
    written = os.stat(report_path).st_mtime - began
    with open(report_path) as report:
        results = json.load(report)["eval"]
    passed = sum(result["base_status"] == "pass" and result["plus_status"] == "pass"
                 for task in results.values() for result in task)
    return seconds, written, passed


def own_work(problems):
    """Each problem's canonical solution called on every input, in one child process (the
    interpreter that runs the benchmark, as passk's): its CPU seconds, by task id."""
    finished = subprocess.run([sys.executable, os.path.abspath(__file__), "--own-work", problems],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if finished.returncode != 0:
        sys.exit(f"timing the canonical solutions failed: {finished.stderr[-2000:]}")
    return json.loads(finished.stdout.splitlines()[-1])


def time_own_work(problems):
    """--own-work: prints the CPU seconds of each canonical solution's calls, as JSON."""
    import contextlib
    import io

    sys.path.insert(0, os.path.join(ROOT, "sandbox"))
    from passk_driver import evalplus

    sys.setrecursionlimit(10_000)
    seconds = {}
    with open(problems) as lines:
        for line in lines:
            problem = json.loads(line)
            task_id = problem["task_id"]
            dataset = "mbpp" if task_id.startswith("Mbpp/") else "humaneval"
            # Mbpp/793's plus_input is {}: no plus inputs, as EvalPlus reads it.
            plus = problem["plus_input"] if isinstance(problem["plus_input"], list) else []
            inputs = evalplus.rebuild_inputs(dataset, int(task_id.split("/")[1]), problem["base_input"] + plus)
            namespace = {}
            exec(problem["prompt"] + problem["canonical_solution"], namespace)
            function = namespace[problem["entry_point"]]
            started = time.process_time()
            with contextlib.redirect_stdout(io.StringIO()):
                for arguments in inputs:
                    try:
                        function(*arguments)
                    except Exception:
                        pass
            seconds[task_id] = time.process_time() - started
    print(json.dumps(seconds))


def floors(own, jobs):
    """The floor of each row (see the module's docs), by (samples, run), from `own`, the
    problems' times in the file's order."""
    task_ids = list(own)
    result = {}
    for kind in ("canonical", "degraded"):
        # The degraded copy's every third problem answers at once (see write_samples).
        judged = {task_id: 0.0 if kind == "degraded" and index % 3 == 0 else own[task_id]
                  for index, task_id in enumerate(task_ids)}
        result[(kind, "cached")] = max(sum(judged.values()) / jobs, max(judged.values()))
        result[(kind, "first")] = max((sum(own.values()) + sum(judged.values())) / jobs,
                                      max(own[task_id] + judged[task_id] for task_id in task_ids))
    return result


def measure(args, python, dataset, problems, work):
    rows = []
    floor = floors(own_work(problems), args.jobs)
    for kind in ("canonical", "degraded"):
        samples = os.path.join(work, f"{dataset}-{kind}.jsonl")
        count = write_samples(problems, samples, kind == "degraded")
        passk_cache, evalplus_cache = os.path.join(work, f"passk-cache-{kind}"), os.path.join(work, f"ep-{kind}")
        for run in ("first", "cached"):
            passk_seconds, passk_passed, unjudgeable = run_passk(args, problems, samples, passk_cache,
                                                    os.path.join(work, f"{dataset}-{kind}-results.jsonl"))
            evalplus_seconds, evalplus_written, evalplus_passed = run_evalplus(args, python, dataset, problems,
                                                                              samples, evalplus_cache)
            row = {"set": dataset, "samples": kind, "count": count, "run": run,
                   "passk_seconds": round(passk_seconds, 2), "evalplus_seconds": round(evalplus_seconds, 2),
                   "passk_share": round(passk_seconds / evalplus_seconds, 3),
                   "evalplus_report_seconds": round(evalplus_written, 2),
                   "floor_seconds": round(floor[(kind, run)], 2),
                   "floor_share": round(floor[(kind, run)] / evalplus_seconds, 3),
                   "passk_passed": passk_passed, "evalplus_passed": evalplus_passed,
                   "passk_unjudgeable": unjudgeable}
            print(f"  {dataset} {kind} {run}: passk {passk_seconds:.1f} s, EvalPlus {evalplus_seconds:.1f} s",
                  file=sys.stderr)
            rows.append(row)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sets", default="humaneval,mbpp")
    parser.add_argument("--benchmarks", help="the folder of the HumanEval+ and MBPP+ files")
    parser.add_argument("--passk", default=os.path.join(ROOT, "target", "release", "passk"))
    parser.add_argument("--venv", default=os.path.join(ROOT, "problems", "evalplus", "venv"))
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--own-work", metavar="PROBLEMS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.own_work:
        time_own_work(args.own_work)
        return
    if not os.path.exists(args.passk):
        sys.exit(f"no passk at {args.passk}: build it with `cargo build --release -p passk-cli`")
    folder = benchmarks_dir(args.benchmarks)
    python = evalplus_python(args.venv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="passk-bench-evalplus-") as work:
        for dataset in args.sets.split(","):
            problems = os.path.join(work, SETS[dataset].removesuffix(".gz"))
            with gzip.open(os.path.join(folder, SETS[dataset]), "rb") as packed, open(problems, "wb") as out:
                shutil.copyfileobj(packed, out)
            rows.extend(measure(args, python, dataset, problems, work))
    print(f"\n{args.jobs} workers each; every input of every sample")
    print(f"{'set':<10} {'samples':<10} {'run':<7} {'passk s':>8} {'EvalPlus s':>11} {'passk/EvalPlus':>15} "
          f"{'floor s':>8} {'floor/EvalPlus':>15} {'EvalPlus report s':>18} {'passed (passk, EvalPlus)':>25}")
    for row in rows:
        print(f"{row['set']:<10} {row['samples']:<10} {row['run']:<7} {row['passk_seconds']:>8.1f} "
              f"{row['evalplus_seconds']:>11.1f} {row['passk_share']:>15.2f} "
              f"{row['floor_seconds']:>8.1f} {row['floor_share']:>15.2f} {row['evalplus_report_seconds']:>18.1f} "
              f"{row['passk_passed']:>14}, {row['evalplus_passed']}"
              + (f"  ({row['passk_unjudgeable']} unjudgeable in passk)" if row["passk_unjudgeable"] else ""))
    machine = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "kernel": os.uname().release}
    print(f"\nmachine: {machine['cpus']} CPUs, Linux {machine['kernel']}, Python {machine['python']}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"machine": machine, "rows": rows}, out, indent=2)


if __name__ == "__main__":
    main()
