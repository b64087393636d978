"""The floor for passk's benchmark: each program compiled and run in a child forked from
an already-warm interpreter, with no isolation at all. WORKERS processes take programs
from a shared queue as they free up; a child still running at its time limit is killed.

    python3 floor.py PROBLEMS SAMPLES [--workers N] [--timeout S]

Prints how many programs passed (ran to the end without raising).
"""

import argparse
import gzip
import json
import os
import select
import signal
import struct


def read_jsonl(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def programs(problems_path, samples_path):
    problems = {p["task_id"]: p for p in read_jsonl(problems_path)}
    for sample in read_jsonl(samples_path):
        problem = problems[sample["task_id"]]
        body = sample["solution"] if "solution" in sample else problem["prompt"] + sample["completion"]
        yield body + "\n" + problem["test"] + "\n" + f"check({problem['entry_point']})"


def run(program, timeout):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            exec(compile(program, "<string>", "exec"), {})
            code = 0
        finally:
            os._exit(code)
    pidfd = os.pidfd_open(pid)
    if not select.select([pidfd], [], [], timeout)[0]:
        os.kill(pid, signal.SIGKILL)
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("problems")
    parser.add_argument("samples")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3.0)
    args = parser.parse_args()
    todo = list(programs(args.problems, args.samples))
    # Work is a queue of indices in a pipe: 4-byte reads are atomic, so each goes to one worker.
    queue_r, queue_w = os.pipe()
    results_r, results_w = os.pipe()
    workers = []
    for _ in range(args.workers):
        pid = os.fork()
        if pid == 0:
            os.close(queue_w)
            passed = 0
            while True:
                data = os.read(queue_r, 4)
                if not data:
                    break
                passed += run(todo[struct.unpack("I", data)[0]], args.timeout)
            os.write(results_w, struct.pack("I", passed))
            os._exit(0)
        workers.append(pid)
    os.close(queue_r)
    for index in range(len(todo)):
        os.write(queue_w, struct.pack("I", index))
    os.close(queue_w)
    for pid in workers:
        os.waitpid(pid, 0)
    os.close(results_w)
    passed = sum(struct.unpack("I", os.read(results_r, 4))[0] for _ in workers)
    print(json.dumps({"samples": len(todo), "passed": passed}))


if __name__ == "__main__":
    main()
